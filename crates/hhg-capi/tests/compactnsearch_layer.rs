//! C++ layer test: compiles `tests/cpp/compactnsearch_sph.cpp` (an SPH code using `include/hhg/compactnsearch.hpp` as it would use CompactNSearch) in float and in double, links it against the static library this test run built, and runs it; every result is checked against brute force inside the program.
//!
//! Like `tests/c_examples.rs`, the test reuses the `libhhg.a` that cargo builds next to the test
//! binary. `CXX` chooses the compiler (`c++` by default); `HHG_SKIP_C_EXAMPLES=1` skips the test
//! on a machine without one and says so. The program's report is printed (`--nocapture`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable that skips this test on a machine without a C++ compiler.
const SKIP: &str = "HHG_SKIP_C_EXAMPLES";

/// The directory that holds this test binary and, beside it, the libraries cargo built for it.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its own path");
    exe.parent()
        .expect("the test binary lies in a directory")
        .to_path_buf()
}

/// Runs `command`, failing the test with its command line and output if it does not succeed;
/// returns its standard output.
fn run(mut command: Command, what: &str) -> String {
    let line = format!("{command:?}");
    let output = command.output().unwrap_or_else(|error| {
        panic!("{what}: could not start `{line}`: {error} (set {SKIP}=1 to skip the C++ test)")
    });
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{line}\n--- stdout\n{stdout}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Compiles the program with `defines`, links it statically and runs it, returning its report.
fn build_and_run(
    source: &Path,
    include: &Path,
    libraries: &Path,
    name: &str,
    defines: &[&str],
) -> String {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    let binary = libraries.join(format!("{name}-{}", std::process::id()));
    let mut compile = Command::new(&cxx);
    compile
        .args([
            "-std=c++17",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
        ])
        .args(defines)
        .arg("-I")
        .arg(include)
        .arg(source)
        .arg(libraries.join("libhhg.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&binary);
    run(compile, &format!("compiling {} ({name})", source.display()));
    let report = run(Command::new(&binary), &format!("running {name}"));
    std::fs::remove_file(&binary).expect("the test program can be removed");
    report
}

#[test]
fn compactnsearch_layer_matches_brute_force_in_float_and_double() {
    if std::env::var_os(SKIP).is_some_and(|value| value == "1") {
        eprintln!("{SKIP}=1: the C++ layer test is skipped");
        return;
    }
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = crate_dir.join("include");
    let source = crate_dir
        .join("tests")
        .join("cpp")
        .join("compactnsearch_sph.cpp");
    let libraries = library_dir();
    assert!(
        libraries.join("libhhg.a").is_file(),
        "libhhg.a is missing beside the test binary in {}",
        libraries.display()
    );
    for (name, defines) in [
        ("compactnsearch_sph_float", &[][..]),
        ("compactnsearch_sph_double", &["-DHHG_CNS_USE_DOUBLE"][..]),
    ] {
        let report = build_and_run(&source, &include, &libraries, name, defines);
        println!("{report}");
        assert!(
            report.contains("ALL PASSED"),
            "{name} did not report ALL PASSED:\n{report}"
        );
    }
}
