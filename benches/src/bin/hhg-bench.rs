//! The `hhg-bench` binary: runs hhg, kiddo and brute force on generated scenes or a point file.
//!
//! See `hhg-bench --help`, or run it as `cargo xtask bench` for a native-CPU release build.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
        Command::Scenes { run, out, json } => scenes(&run, out, json),
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

/// Benchmarks generated scenes and writes `results.json` and `report.md`.
fn scenes(run: &runner::SceneRun, out: Option<PathBuf>, json: bool) -> Result<bool, String> {
    let env = Environment::current(run.threads, run.seed);
    if env.debug_assertions {
        eprintln!("hhg-bench: warning: this is a debug build; use `cargo xtask bench` for timings");
    }
    eprintln!(
        "hhg-bench: {} thread(s), RUSTFLAGS {}",
        run.threads,
        env.rustflags_text()
    );
    let pool = runner::thread_pool(run.threads)?;
    let mut log = progress;
    let records = pool.install(|| runner::run_scenes(run, &mut log))?;
    let agree = print_results(&records, json, !json);

    let dir = out
        .or_else(|| std::env::var_os(OUT_DIR_VAR).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_OUT_DIR));
    let problems = runner::disagreements(&records);
    write_file(&dir, "results.json", &report::results_json(&env, &records))?;
    write_file(
        &dir,
        "report.md",
        &report::markdown_report(&env, &records, &problems),
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
