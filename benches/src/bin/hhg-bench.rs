//! The `hhg-bench` binary: runs hhg and its peers on generated scenes, the hashing schemes, the
//! broad-phase scenes or a point file, and writes the report.
//!
//! See `hhg-bench --help`, or run it as `cargo xtask bench` for a native-CPU release build.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use hhg_benches::broadphase::report as broad_report;
use hhg_benches::broadphase::runner::{self as broad_runner, BroadRun};
use hhg_benches::cli::{self, Command, DEFAULT_OUT_DIR, OUT_DIR_VAR, ScenePlan};
use hhg_benches::compare;
use hhg_benches::io::read_points;
use hhg_benches::memory::CountingAllocator;
use hhg_benches::particles::record::{self as particle_record, Record};
use hhg_benches::particles::report as particle_report;
use hhg_benches::particles::runner::{self, SceneRun};
use hhg_benches::plots;
use hhg_benches::points::{self as point_files, PointRun};
use hhg_benches::progress::{Bar, Progress};
use hhg_benches::report::{self, Environment, ReportExtras, Results};
use hhg_benches::schemes::report as scheme_report;
use hhg_benches::schemes::{self, SchemeRecord, SchemeRun};
use hhg_benches::suite;

/// Every heap allocation of the bench is counted, so that each engine's peak can be reported.
#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn main() -> ExitCode {
    let command = match cli::parse(std::env::args().skip(1)) {
        Ok(command) => command,
        // Prints the help (exit code 0) or the usage error (exit code 2).
        Err(error) => error.exit(),
    };
    let result = match command {
        Command::Scenes(plan) => scenes(plan),
        Command::Points { file, run, json } => points(&file, &run, json),
        Command::Stream {
            sizes,
            reps,
            threads,
            seed,
        } => stream(&sizes, reps, threads, seed),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("hhg-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the stream suite and prints its table.
fn stream(sizes: &[usize], reps: usize, threads: usize, seed: u64) -> Result<u8, String> {
    let env = Environment::current(threads, seed);
    eprintln!(
        "hhg-bench: stream suite, {threads} thread(s), CPU {} ({}), RUSTFLAGS {}",
        env.cpu,
        env.simd,
        env.rustflags_text()
    );
    let pool = suite::thread_pool(threads)?;
    let mut records = Vec::new();
    for &n in sizes {
        eprintln!("hhg-bench: stream: {n} points");
        records.extend(pool.install(|| hhg_benches::stream::run(n, reps, seed))?);
        println!("{}", hhg_benches::stream::table(&records));
    }
    Ok(0)
}

/// Prints the disagreements in a banner that cannot be missed.
fn shout(problems: &[String]) {
    if problems.is_empty() {
        return;
    }
    let rule = "!".repeat(78);
    eprintln!();
    eprintln!("{rule}");
    eprintln!("!!! ENGINES DISAGREE: the pairs differ from the reference engine's");
    for problem in problems {
        eprintln!("!!!   {problem}");
    }
    eprintln!("{rule}");
}

/// A directory name for the time `unix_time`: `YYYY-MM-DD_hh-mm-ss`.
fn stamp(unix_time: u64) -> String {
    report::utc_timestamp(unix_time)
        .trim_end_matches(" UTC")
        .replace(' ', "_")
        .replace(':', "-")
}

/// Runs the selected suites on generated inputs and writes the result files; returns the exit
/// code.
fn scenes(plan: ScenePlan) -> Result<u8, String> {
    let threads = plan
        .run
        .as_ref()
        .map(|r| r.threads)
        .or(plan.schemes.as_ref().map(|s| s.threads))
        .or(plan.broad.as_ref().map(|b| b.threads))
        .ok_or("no suite selected")?;
    let seed = plan
        .run
        .as_ref()
        .map(|r| r.seed)
        .or(plan.schemes.as_ref().map(|s| s.seed))
        .or(plan.broad.as_ref().map(|b| b.seed))
        .unwrap_or(suite::DEFAULT_SEED);
    let env = Environment::current(threads, seed);
    if env.debug_assertions {
        eprintln!("hhg-bench: warning: this is a debug build; use `cargo xtask bench` for timings");
    }
    let mode = if plan.full { "full" } else { "quick" };
    eprintln!(
        "hhg-bench: {mode} run, {threads} thread(s), CPU {} ({}), RUSTFLAGS {}",
        env.cpu,
        env.simd,
        env.rustflags_text()
    );

    let scaling = plan.scaling.clone().unwrap_or_default();
    let planned = plan.run.as_ref().map_or(0, SceneRun::planned)
        + plan.schemes.as_ref().map_or(0, SchemeRun::planned)
        + plan.broad.as_ref().map_or(0, BroadRun::planned)
        + plan.run.as_ref().map_or(0, |r| {
            runner::planned_scaling(r, scaling.particles.len(), &scaling.threads)
        })
        + plan.broad.as_ref().map_or(0, |b| {
            broad_runner::planned_scaling(b, scaling.broad.len(), &scaling.threads)
        });
    let mut bar = Bar::new(planned);
    let started = Instant::now();
    let pool = suite::thread_pool(threads)?;
    let mut results = Results::default();
    let outcome = (|| -> Result<(), String> {
        if let Some(run) = &plan.run {
            results.particles = pool.install(|| runner::run_scenes(run, &mut bar))?;
        }
        if let Some(config) = &plan.schemes {
            results.schemes = pool.install(|| schemes::run_schemes(config, &mut bar))?;
        }
        if let Some(broad) = &plan.broad {
            results.broad = pool.install(|| broad_runner::run_broadphase(broad, &mut bar))?;
        }
        if let Some(run) = &plan.run {
            results.scaling =
                runner::run_scaling(run, &scaling.particles, &scaling.threads, &mut bar)?;
        }
        if let Some(broad) = &plan.broad {
            results.broad_scaling =
                broad_runner::run_scaling(broad, &scaling.broad, &scaling.threads, &mut bar)?;
        }
        Ok(())
    })();
    bar.finish();
    outcome?;
    schemes::annotate(&mut results.schemes, &results.particles);
    let run_s = started.elapsed().as_secs_f64();

    if plan.json {
        for record in &results.particles {
            println!("{}", particle_report::json_line(record));
        }
        for record in &results.broad {
            println!("{}", broad_report::json_line(record));
        }
    } else {
        if !results.particles.is_empty() {
            println!("Particles\n");
            print!("{}", particle_report::text_table(&results.particles));
            println!();
            print_order_table(&results.particles);
        }
        if !results.schemes.is_empty() {
            println!("Hashing schemes\n");
            print!("{}", scheme_report::scheme_text_table(&results.schemes));
            println!();
        }
        if !results.broad.is_empty() {
            println!("Broad phase\n");
            print!("{}", broad_report::text_table(&results.broad));
            println!();
        }
        let rows = report::scaling_rows(&results);
        if !rows.is_empty() {
            println!("Thread scaling\n");
            print!("{}", report::scaling_table(&rows, false));
            println!();
        }
        println!("SUMMARY ({mode} run, {run_s:.0} s)\n");
        print!("{}", report::summary(&results, false));
    }

    let compare_section = match &plan.compare {
        Some(path) => {
            let old = fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let old =
                compare::timed_records(&old).map_err(|e| format!("{}: {e}", path.display()))?;
            let new = compare::timed_records(&report::results_json(&env, &results))?;
            let ratios = compare::ratios(&old, &new);
            if !plan.json {
                println!("Compared with {}\n", path.display());
                print!("{}", compare::table(&ratios, false));
                println!();
            }
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            Some(compare::markdown_section(&name, &ratios))
        }
        None => None,
    };

    let base = plan
        .out
        .clone()
        .or_else(|| std::env::var_os(OUT_DIR_VAR).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_OUT_DIR));
    let stamp = stamp(env.unix_time);
    let dir = base.join(&stamp);
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let plots = match plots::write_plots(&dir, &results) {
        Ok(plots) => plots,
        Err(e) => {
            eprintln!("hhg-bench: warning: {e}");
            Vec::new()
        }
    };
    let json = report::results_json(&env, &results);
    let mut extras = ReportExtras {
        mode: mode.to_owned(),
        run_s,
        plots: plots.clone(),
        compare: compare_section,
    };
    write_file(&dir, "results.json", &json)?;
    write_file(
        &dir,
        "report.md",
        &report::markdown_report(&env, &results, &extras),
    )?;
    // The latest run's copies in the base directory link to the plots in the run's directory.
    extras.plots = plots.iter().map(|p| format!("{stamp}/{p}")).collect();
    write_file(&base, "results.json", &json)?;
    write_file(
        &base,
        "report.md",
        &report::markdown_report(&env, &results, &extras),
    )?;
    eprintln!(
        "hhg-bench: {} plot(s) in {}: {}",
        plots.len(),
        dir.display(),
        plots.join(", ")
    );

    let problems = results.problems();
    shout(&problems);
    Ok(report::exit_code(&problems))
}

/// Writes one result file, creating its directory, and says where it went.
fn write_file(dir: &Path, name: &str, contents: &str) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(name);
    fs::write(&path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("hhg-bench: wrote {}", path.display());
    Ok(())
}

/// Prints the point-order table of particle records, headed, if any engine ran in cell order.
fn print_order_table(records: &[Record]) {
    let rows = particle_report::order_rows(records);
    if !rows.is_empty() {
        println!("Point orders: each order's total over the same engine's total in cell order\n");
        print!("{}", particle_report::order_table(&rows, false));
        println!();
    }
}

/// Prints a point file's records (JSON lines of the engines, and the tables unless `json`);
/// returns the exit code.
fn print_points(records: &[Record], scheme_records: &[SchemeRecord], json: bool) -> u8 {
    for record in records {
        println!("{}", particle_report::json_line(record));
    }
    if !json {
        if !records.is_empty() {
            print!("{}", particle_report::text_table(records));
            println!();
            print_order_table(records);
        }
        if !scheme_records.is_empty() {
            println!("Hashing schemes\n");
            print!("{}", scheme_report::scheme_text_table(scheme_records));
        }
    }
    let mut problems = particle_record::disagreements(records);
    problems.extend(schemes::disagreements(scheme_records));
    shout(&problems);
    report::exit_code(&problems)
}

/// Benchmarks the points of one file.
fn points(file: &Path, run: &PointRun, json: bool) -> Result<u8, String> {
    let points = read_points(file).map_err(|e| e.to_string())?;
    let name = file
        .file_stem()
        .map_or_else(|| "points".to_owned(), |s| s.to_string_lossy().into_owned());
    let pool = suite::thread_pool(run.threads)?;
    let mut log = |line: &str| eprintln!("{line}");
    let progress: &mut dyn Progress = &mut log;
    let (records, scheme_records) =
        pool.install(|| point_files::run_points(&name, &points, run, progress))?;
    Ok(print_points(&records, &scheme_records, json))
}
