//! The `hhg-bench` binary: runs hhg and its peers on generated scenes, the broad-phase scenario or
//! a point file.
//!
//! See `hhg-bench --help`, or run it as `cargo xtask bench` for a native-CPU release build.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hhg_benches::broadphase::report as broad_report;
use hhg_benches::broadphase::runner::{self as broad_runner, BroadRecord, BroadRun};
use hhg_benches::cli::{self, Command, DEFAULT_OUT_DIR, OUT_DIR_VAR, USAGE};
use hhg_benches::engines::Engine;
use hhg_benches::io::read_points;
use hhg_benches::report::{self, Environment};
use hhg_benches::runner::{self, Record};

fn main() -> ExitCode {
    let command = match cli::parse(std::env::args().skip(1)) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("hhg-bench: {message}\nRun `hhg-bench --help` for the options.");
            return ExitCode::from(2);
        }
    };
    let result = match command {
        Command::Help => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Command::Scenes {
            run,
            broad,
            out,
            json,
        } => scenes(run.as_ref(), broad.as_ref(), out, json),
        Command::Points {
            file,
            radius,
            engines,
            threads,
            reps,
            json,
        } => points(&file, radius, &engines, threads, reps, json),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("hhg-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Progress goes to standard error so that standard output stays a clean table or JSON.
fn progress(line: &str) {
    eprintln!("{line}");
}

/// Prints the records and any disagreement; returns whether all engines agree.
fn print_results(records: &[Record], json_lines: bool, table: bool) -> bool {
    if json_lines {
        for record in records {
            println!("{}", report::json_line(record));
        }
    }
    if table {
        print!("{}", report::text_table(records));
    }
    let problems = runner::disagreements(records);
    if !problems.is_empty() {
        eprintln!();
        eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
        eprintln!("!!! ENGINES DISAGREE: the neighbour pairs differ from the reference engine");
        for problem in &problems {
            eprintln!("!!!   {problem}");
        }
        eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
    }
    problems.is_empty()
}

/// Prints the broad-phase records and any disagreement; returns whether all engines agree.
fn print_broad_results(records: &[BroadRecord], json_lines: bool) -> bool {
    if json_lines {
        for record in records {
            println!("{}", broad_report::json_line(record));
        }
    } else {
        print!("{}", broad_report::text_table(records));
    }
    let problems = broad_runner::disagreements(records);
    if !problems.is_empty() {
        eprintln!();
        eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
        eprintln!(
            "!!! BROAD-PHASE ENGINES DISAGREE: the overlapping pairs differ from the reference"
        );
        for problem in &problems {
            eprintln!("!!!   {problem}");
        }
        eprintln!("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!");
    }
    problems.is_empty()
}

/// Runs the selected suites on generated inputs and writes `results.json` and `report.md`.
fn scenes(
    run: Option<&runner::SceneRun>,
    broad: Option<&BroadRun>,
    out: Option<PathBuf>,
    json: bool,
) -> Result<bool, String> {
    let (threads, seed) = match (run, broad) {
        (Some(run), _) => (run.threads, run.seed),
        (None, Some(broad)) => (broad.threads, broad.seed),
        (None, None) => return Err("no suite selected".into()),
    };
    let env = Environment::current(threads, seed);
    if env.debug_assertions {
        eprintln!("hhg-bench: warning: this is a debug build; use `cargo xtask bench` for timings");
    }
    eprintln!(
        "hhg-bench: {threads} thread(s), RUSTFLAGS {}",
        env.rustflags_text()
    );
    let pool = runner::thread_pool(threads)?;
    let mut log = progress;
    let mut agree = true;
    let records = match run {
        Some(run) => {
            let records = pool.install(|| runner::run_scenes(run, &mut log))?;
            agree &= print_results(&records, json, !json);
            records
        }
        None => Vec::new(),
    };
    let broad_records = match broad {
        Some(broad) => {
            let broad_records = pool.install(|| broad_runner::run_broadphase(broad, &mut log))?;
            if !records.is_empty() && !json {
                println!();
            }
            agree &= print_broad_results(&broad_records, json);
            broad_records
        }
        None => Vec::new(),
    };

    let dir = out
        .or_else(|| std::env::var_os(OUT_DIR_VAR).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_OUT_DIR));
    let problems = runner::disagreements(&records);
    let broad_problems = broad_runner::disagreements(&broad_records);
    write_file(
        &dir,
        "results.json",
        &report::results_json(&env, &records, &broad_records),
    )?;
    write_file(
        &dir,
        "report.md",
        &report::markdown_report(
            &env,
            &records,
            &problems,
            report::BroadSection {
                records: &broad_records,
                problems: &broad_problems,
            },
        ),
    )?;
    Ok(agree)
}

/// Writes one result file, creating its directory, and says where it went.
fn write_file(dir: &Path, name: &str, contents: &str) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(name);
    fs::write(&path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("hhg-bench: wrote {}", path.display());
    Ok(())
}

/// Benchmarks the points of one file.
fn points(
    file: &Path,
    radius: f32,
    engines: &[Engine],
    threads: usize,
    reps: Option<usize>,
    json: bool,
) -> Result<bool, String> {
    let points = read_points(file).map_err(|e| e.to_string())?;
    let name = file
        .file_stem()
        .map_or_else(|| "points".to_owned(), |s| s.to_string_lossy().into_owned());
    let pool = runner::thread_pool(threads)?;
    let mut log = progress;
    let records = pool
        .install(|| runner::run_points(&name, &points, radius, engines, threads, reps, &mut log))?;
    Ok(print_results(&records, true, !json))
}
