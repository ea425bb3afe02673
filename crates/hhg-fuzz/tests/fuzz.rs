//! The fuzz targets under the seeded mutation driver, a few seconds each in a debug build:
//! `HHG_FUZZ_CASES=N` runs N cases per target instead (the libFuzzer runs of `fuzz/` go
//! further, see docs/fuzzing.md).

use hhg_fuzz::TARGETS;
use hhg_fuzz::driver::{cases_from_env, run};

/// Runs the target called `name` for its default number of cases (or `HHG_FUZZ_CASES`).
fn fuzz(name: &str, default_cases: usize, seed: u64) {
    let (_, target, seeds) = TARGETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .expect("a known target");
    let cases = cases_from_env(default_cases);
    let ran = run(*target, &seeds(), cases, seed);
    eprintln!("{name}: {ran} inputs");
}

#[test]
fn point_files() {
    fuzz("point_files", 100_000, 1);
}

#[test]
fn capi_calls() {
    fuzz("capi_calls", 20_000, 2);
}

#[test]
fn search_coordinates() {
    fuzz("search_coordinates", 20_000, 3);
}
