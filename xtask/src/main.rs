//! `cargo xtask`: project automation written in Rust, with no dependencies beyond std.
//!
//! `cargo xtask bench [ARGS...]` builds the `hhg-bench` binary with the `bench-fast` profile
//! (release optimisations without LTO; `--lto` for the fat-LTO `release` profile) for the native
//! CPU (in its own target directory, so the flags never invalidate the normal build) and runs
//! it, timing the build and the run separately.
//!
//! `cargo xtask sanitize [ARGS...]` runs hhg-core's tests built with AddressSanitizer.
//!
//! `cargo xtask install --prefix DIR` installs the C library, its headers, a CMake package and a
//! pkg-config file into a prefix (the module `install`).
//!
//! `cargo xtask fuzz TARGET [--time SECONDS] [-- LIBFUZZER_ARGS...]` runs a cargo-fuzz target
//! of `fuzz/` under libFuzzer, seeded with the target's seed inputs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

mod install;

/// The usage text.
const USAGE: &str = "\
cargo xtask: project automation for hhg

USAGE:
    cargo xtask bench [--portable] [--lto] [ARGS...]
        Builds hhg-bench with the cargo profile `bench-fast` (release optimisations, no LTO)
        and RUSTFLAGS=\"-C target-cpu=native\" (added to any RUSTFLAGS already set) into
        target/native and runs it with ARGS; the report records the flags and the profile
        (HHG_BENCH_RUSTFLAGS, HHG_BENCH_PROFILE). The quick default leaves out the parry3d
        and parry2d peers (half of a cold build); --full, or an argument naming parry or the broadphase
        suite, builds it in. With --lto, builds with the `release` profile (fat LTO, one
        codegen unit: about ten more minutes of build, measured no faster here). With
        --portable, builds without target-cpu=native into target/portable instead. A set
        CARGO_TARGET_DIR replaces target/ as the parent of native/ and portable/. Results go
        to target/bench/<timestamp>/ (results.json, report.md, SVG plots) and the latest
        results.json and report.md to target/bench/.
        The build and the run are timed separately (the report records the build time).
        The exit code is hhg-bench's: non-zero when engines disagree.
        `cargo xtask bench --help` lists hhg-bench's own options: `--full` for the whole
        matrix, `--suite particles|schemes|broadphase`, `--scheme NAME`, `--peers python`,
        `--compare OLD_RESULTS.json`, `--points FILE --radius R` (.xyz, .ply or raw f32).

    cargo xtask sanitize [ARGS...]
        Runs hhg-core's tests (the library's and every integration test, or what ARGS select,
        e.g. `--test suite differential::`) built with AddressSanitizer, into target/asan:
        every read and write of the kernels' unchecked paths (SIMD, run-time AVX2/AVX-512 builds and
        scalar) is checked. The sanitizer is an unstable rustc option; the pinned stable
        toolchain ships its runtime, and RUSTC_BOOTSTRAP=1 lets its rustc accept the flag
        for this build only. Takes about half an hour on two cores.

    cargo xtask install --prefix DIR [--profile NAME] [--no-build]
        Builds hhg-capi (cargo profile `release` unless --profile names another; --no-build
        takes the libraries an earlier build left, e.g. `--profile test --no-build` what
        `cargo test` built) and installs lib/libhhg.so and lib/libhhg.a, include/hhg.h,
        include/hhg/*.hpp (the C++ layer), lib/cmake/hhg/ (find_package(hhg): targets
        hhg::hhg and hhg::hhg_static) and lib/pkgconfig/hhg.pc into DIR.

    cargo xtask fuzz TARGET [--time SECONDS] [-- LIBFUZZER_ARGS...]
        Runs the libFuzzer target TARGET (point_files, capi_calls or search_coordinates) of
        the cargo-fuzz project in fuzz/ for SECONDS (default 60; 0 runs until a finding or
        Ctrl-C), with AddressSanitizer and debug assertions, starting from the target's seed
        inputs (written to fuzz/corpus/TARGET; the corpus grows there between runs). Findings
        land in fuzz/artifacts/TARGET/. Needs cargo-fuzz (`cargo install cargo-fuzz`); the
        sanitizer and libFuzzer's flags are unstable rustc options, accepted from the pinned
        stable toolchain with RUSTC_BOOTSTRAP=1 for this build only. The same targets run
        without libFuzzer in `cargo test -p hhg-fuzz` (HHG_FUZZ_CASES=N for more cases).

    cargo xtask help
        Prints this help.
";

/// The targets of the cargo-fuzz project in `fuzz/`.
const FUZZ_TARGETS: [&str; 3] = ["point_files", "capi_calls", "search_coordinates"];

/// The default length of a `cargo xtask fuzz` run, in seconds.
const FUZZ_DEFAULT_SECONDS: u64 = 60;

/// A planned `cargo xtask fuzz` run.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FuzzPlan {
    target: String,
    seconds: u64,
    /// Arguments after `--`, for libFuzzer.
    extra: Vec<OsString>,
}

/// Reads `TARGET [--time SECONDS] [-- ARGS...]`, or says what is wrong.
fn plan_fuzz(args: Vec<OsString>) -> Result<FuzzPlan, String> {
    let mut args = args.into_iter();
    let mut target = None;
    let mut seconds = FUZZ_DEFAULT_SECONDS;
    let mut extra = Vec::new();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        match text.as_str() {
            "--" => {
                extra.extend(args.by_ref());
            }
            "--time" => {
                let value = args.next().ok_or("--time needs a number of seconds")?;
                let value = value.to_string_lossy();
                seconds = value
                    .parse()
                    .map_err(|_| format!("--time {value}: not a whole number of seconds"))?;
            }
            _ if text.starts_with('-') => return Err(format!("unknown option `{text}`")),
            _ if target.is_some() => return Err(format!("a second target `{text}`")),
            _ if FUZZ_TARGETS.contains(&text.as_str()) => target = Some(text),
            _ => {
                return Err(format!(
                    "unknown target `{text}` (targets: {})",
                    FUZZ_TARGETS.join(", ")
                ));
            }
        }
    }
    let target =
        target.ok_or_else(|| format!("no target (targets: {})", FUZZ_TARGETS.join(", ")))?;
    Ok(FuzzPlan {
        target,
        seconds,
        extra,
    })
}

/// The command that writes the target's seeds into its corpus directory.
fn seeds_command(plan: &FuzzPlan, root: &Path, cargo: &OsString) -> Command {
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args([
            "run",
            "--quiet",
            "--locked",
            "-p",
            "hhg-fuzz",
            "--bin",
            "hhg-fuzz-seeds",
            "--",
        ])
        .arg(&plan.target)
        .arg(root.join("fuzz").join("corpus").join(&plan.target));
    command
}

/// The `cargo fuzz run` command of a plan.
fn fuzz_command(plan: &FuzzPlan, root: &Path, cargo: &OsString) -> Command {
    let mut command = Command::new(cargo);
    command
        .current_dir(root.join("fuzz"))
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["fuzz", "run", "--debug-assertions"])
        .arg(&plan.target)
        .arg("--")
        .arg(format!("-max_total_time={}", plan.seconds))
        // A case slower than this, or an allocation past the limit, is a finding.
        .arg("-timeout=10")
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .args(&plan.extra);
    command
}

/// Runs a libFuzzer target of `fuzz/`.
fn fuzz(args: Vec<OsString>) -> ExitCode {
    let plan = match plan_fuzz(args) {
        Ok(plan) => plan,
        Err(message) => {
            eprintln!("xtask fuzz: {message}\n");
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let root = workspace_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    match seeds_command(&plan, &root, &cargo).status() {
        Ok(status) if status.success() => {}
        Ok(status) => {
            eprintln!("xtask fuzz: writing the seeds failed ({status})");
            return exit_code(status);
        }
        Err(error) => {
            eprintln!("xtask fuzz: could not run cargo: {error}");
            return ExitCode::FAILURE;
        }
    }
    match fuzz_command(&plan, &root, &cargo).status() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => {
            eprintln!(
                "xtask fuzz: {} stopped with {status}: a finding is in fuzz/artifacts/{}/, or \
                 cargo-fuzz is missing (`cargo install cargo-fuzz`)",
                plan.target, plan.target
            );
            exit_code(status)
        }
        Err(error) => {
            eprintln!("xtask fuzz: could not run cargo fuzz: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The flag that `cargo xtask bench` adds for a native build.
const NATIVE_FLAG: &str = "-C target-cpu=native";

/// The cargo profile of a default bench build.
const FAST_PROFILE: &str = "bench-fast";

/// The cargo profile of a `--lto` bench build.
const LTO_PROFILE: &str = "release";

/// How `cargo xtask bench` invokes cargo.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BenchPlan {
    /// The target directory name under `target/`.
    target_subdir: &'static str,
    /// The cargo profile (also the name of its output directory).
    profile: &'static str,
    /// The RUSTFLAGS for the build, also handed to the binary as HHG_BENCH_RUSTFLAGS.
    rustflags: String,
    /// Whether to build the bench's `parry` feature (the parry3d and parry2d BVH peers), which
    /// about doubles a cold build: for `--full`, and when an argument names parry or the
    /// broad-phase suite.
    with_parry: bool,
    /// The arguments for hhg-bench.
    forwarded: Vec<OsString>,
}

/// Plans a bench run from its arguments and the RUSTFLAGS already in the environment.
fn plan_bench(args: Vec<OsString>, existing_rustflags: Option<&str>) -> BenchPlan {
    let portable = args.iter().any(|a| a == "--portable");
    let lto = args.iter().any(|a| a == "--lto");
    let forwarded: Vec<OsString> = args
        .into_iter()
        .filter(|a| a != "--portable" && a != "--lto")
        .collect();
    let with_parry = forwarded.iter().any(|a| {
        let a = a.to_string_lossy();
        a == "--full" || a.contains("parry") || a.contains("broadphase")
    });
    let existing = existing_rustflags.unwrap_or("").trim();
    let rustflags = if portable {
        existing.to_owned()
    } else if existing.is_empty() {
        NATIVE_FLAG.to_owned()
    } else {
        format!("{existing} {NATIVE_FLAG}")
    };
    BenchPlan {
        target_subdir: if portable { "portable" } else { "native" },
        profile: if lto { LTO_PROFILE } else { FAST_PROFILE },
        rustflags,
        with_parry,
        forwarded,
    }
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// The directory that holds `native/` and `portable/`: `$CARGO_TARGET_DIR` when set, else the
/// workspace's `target/`.
fn target_root(root: &Path, cargo_target_dir: Option<OsString>) -> PathBuf {
    match cargo_target_dir {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        }
        _ => root.join("target"),
    }
}

/// Builds the cargo command that compiles hhg-bench for a plan.
fn build_command(plan: &BenchPlan, root: &Path, target: &Path, cargo: OsString) -> Command {
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .args(["--profile", plan.profile])
        .args(["--package", "hhg-benches", "--bin", "hhg-bench"]);
    if !plan.with_parry {
        command.arg("--no-default-features");
    }
    command
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target.join(plan.target_subdir))
        .env("RUSTFLAGS", &plan.rustflags);
    // Encoded flags would take precedence over RUSTFLAGS and silently drop the native flag.
    command.env_remove("CARGO_ENCODED_RUSTFLAGS");
    command
}

/// The path of the built binary.
fn binary_path(plan: &BenchPlan, target: &Path) -> PathBuf {
    target
        .join(plan.target_subdir)
        .join(plan.profile)
        .join(format!("hhg-bench{}", std::env::consts::EXE_SUFFIX))
}

/// Builds the command that runs the built binary with the forwarded arguments.
fn run_command(plan: &BenchPlan, root: &Path, target: &Path, build_s: f64) -> Command {
    let mut command = Command::new(binary_path(plan, target));
    command
        .args(&plan.forwarded)
        .env("HHG_BENCH_RUSTFLAGS", &plan.rustflags)
        .env("HHG_BENCH_PROFILE", plan.profile)
        .env("HHG_BENCH_BUILD_SECONDS", format!("{build_s:.1}"));
    // Results land in the workspace's target/bench wherever cargo xtask is started from,
    // unless the caller chose a directory.
    if std::env::var_os("HHG_BENCH_OUT_DIR").is_none() {
        command.env("HHG_BENCH_OUT_DIR", root.join("target").join("bench"));
    }
    command
}

/// The exit code of a finished child: its own, or a failure when a signal killed it.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    match status.code() {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    }
}

/// Runs `cargo xtask bench`: builds hhg-bench, runs it, and returns its exit code.
fn bench(args: Vec<OsString>) -> ExitCode {
    let existing = std::env::var("RUSTFLAGS").ok();
    let plan = plan_bench(args, existing.as_deref());
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let root = workspace_root();
    let target = target_root(&root, std::env::var_os("CARGO_TARGET_DIR"));
    eprintln!(
        "xtask: building hhg-bench (profile {}, RUSTFLAGS=\"{}\", {}, {})",
        plan.profile,
        plan.rustflags,
        if plan.with_parry {
            "with the parry peer"
        } else {
            "without the parry peer: --full or --engine parry adds it"
        },
        target.join(plan.target_subdir).display()
    );
    let started = Instant::now();
    match build_command(&plan, &root, &target, cargo).status() {
        Ok(status) if status.success() => {}
        Ok(status) => {
            eprintln!("xtask: the build failed");
            return exit_code(status);
        }
        Err(e) => {
            eprintln!("xtask: cannot run cargo: {e}");
            return ExitCode::FAILURE;
        }
    }
    let build_s = started.elapsed().as_secs_f64();
    eprintln!("xtask: build took {build_s:.1} s");
    let started = Instant::now();
    let status = run_command(&plan, &root, &target, build_s).status();
    let run_s = started.elapsed().as_secs_f64();
    match status {
        Ok(status) => {
            eprintln!(
                "xtask: build {build_s:.1} s, run {run_s:.1} s, total {:.1} s",
                build_s + run_s
            );
            exit_code(status)
        }
        Err(e) => {
            eprintln!(
                "xtask: cannot run {}: {e}",
                binary_path(&plan, &target).display()
            );
            ExitCode::FAILURE
        }
    }
}

/// The host target that `cargo xtask sanitize` builds for: naming it keeps the sanitizer out
/// of build scripts and procedural macros.
const SANITIZE_TARGET: &str = "x86_64-unknown-linux-gnu";

/// The command `cargo xtask sanitize` runs: hhg-core's tests with AddressSanitizer.
fn sanitize_command(root: &Path, cargo: &OsString, forwarded: Vec<OsString>) -> Command {
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTFLAGS", "-Zsanitizer=address")
        .env("RUSTDOCFLAGS", "-Zsanitizer=address")
        .env("CARGO_TARGET_DIR", root.join("target").join("asan"))
        .args([
            "test",
            "-p",
            "hhg-core",
            "--locked",
            "--target",
            SANITIZE_TARGET,
        ]);
    if forwarded.is_empty() {
        command.args(["--lib", "--tests"]);
    }
    command.args(forwarded);
    command
}

/// Runs hhg-core's tests built with AddressSanitizer.
fn sanitize(forwarded: Vec<OsString>) -> ExitCode {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        eprintln!("xtask: sanitize runs on x86_64 Linux only (the sanitizer runtime's target)");
        return ExitCode::FAILURE;
    }
    let root = workspace_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    match sanitize_command(&root, &cargo, forwarded).status() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => {
            eprintln!("xtask: the sanitized tests failed ({status})");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("xtask: could not run cargo: {error}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let task = args.next();
    match task.as_ref().and_then(|t| t.to_str()) {
        Some("bench") => bench(args.collect()),
        Some("sanitize") => sanitize(args.collect()),
        Some("install") => {
            let root = workspace_root();
            let target = target_root(&root, std::env::var_os("CARGO_TARGET_DIR"));
            install::install(args.collect(), &root, &target)
        }
        Some("fuzz") => fuzz(args.collect()),
        Some("help" | "--help" | "-h") => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => {
            match other {
                Some(name) => eprintln!("xtask: unknown task `{name}`\n"),
                None if task.is_some() => eprintln!("xtask: the task name is not valid UTF-8\n"),
                None => eprintln!("xtask: no task given\n"),
            }
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn sanitize_builds_the_core_tests_with_address_sanitizer_into_its_own_directory() {
        let root = Path::new("/repo");
        let command = sanitize_command(root, &OsString::from("cargo"), args(&["--test", "broad"]));
        let env: Vec<(String, String)> = command
            .get_envs()
            .map(|(k, v)| {
                let v = v
                    .map(|v| v.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (k.to_string_lossy().into_owned(), v)
            })
            .collect();
        assert!(env.contains(&("RUSTFLAGS".into(), "-Zsanitizer=address".into())));
        assert!(env.contains(&("RUSTC_BOOTSTRAP".into(), "1".into())));
        let target_dir = root.join("target").join("asan");
        assert!(env.contains(&(
            "CARGO_TARGET_DIR".into(),
            target_dir.to_string_lossy().into()
        )));
        let command_args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let expected_head = [
            "test",
            "-p",
            "hhg-core",
            "--locked",
            "--target",
            SANITIZE_TARGET,
        ];
        assert_eq!(command_args[..6], expected_head);
        assert_eq!(command_args[6..], ["--test", "broad"]);
        let everything = sanitize_command(root, &OsString::from("cargo"), Vec::new());
        let tail: Vec<_> = everything.get_args().skip(6).collect();
        assert_eq!(tail, ["--lib", "--tests"]);
    }

    #[test]
    fn fuzz_runs_a_known_target_for_the_time_asked() {
        let plan = plan_fuzz(args(&["capi_calls", "--time", "120", "--", "-jobs=2"])).unwrap();
        assert_eq!(plan.target, "capi_calls");
        assert_eq!(plan.seconds, 120);
        assert_eq!(plan.extra, args(&["-jobs=2"]));
        assert_eq!(plan_fuzz(args(&["point_files"])).unwrap().seconds, 60);
        assert!(
            plan_fuzz(args(&["nope"]))
                .unwrap_err()
                .contains("unknown target")
        );
        assert!(plan_fuzz(args(&[])).unwrap_err().contains("no target"));
        assert!(
            plan_fuzz(args(&["point_files", "--time", "soon"]))
                .unwrap_err()
                .contains("not a whole number")
        );
        let root = Path::new("/repo");
        let command = fuzz_command(&plan, root, &OsString::from("cargo"));
        let argv: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            argv[..4],
            ["fuzz", "run", "--debug-assertions", "capi_calls"]
        );
        assert!(argv.contains(&"-max_total_time=120".to_owned()));
        assert_eq!(argv.last().map(String::as_str), Some("-jobs=2"));
        assert_eq!(command.get_current_dir(), Some(root.join("fuzz").as_path()));
        let seeds = seeds_command(&plan, root, &OsString::from("cargo"));
        let seed_args: Vec<_> = seeds.get_args().collect();
        let [.., target, corpus] = seed_args.as_slice() else {
            panic!("the seeds command has a target and a directory: {seed_args:?}");
        };
        assert_eq!(*target, "capi_calls");
        assert_eq!(
            Path::new(corpus),
            root.join("fuzz").join("corpus").join("capi_calls")
        );
    }

    #[test]
    fn native_is_the_default_and_appends_to_existing_flags() {
        let plan = plan_bench(args(&["--max-n", "100000"]), None);
        assert_eq!(plan.target_subdir, "native");
        assert_eq!(plan.profile, "bench-fast");
        assert_eq!(plan.rustflags, "-C target-cpu=native");
        assert_eq!(plan.forwarded, args(&["--max-n", "100000"]));

        assert!(!plan.with_parry);

        let plan = plan_bench(args(&["--lto", "--full"]), None);
        assert_eq!(plan.profile, "release");
        assert_eq!(plan.forwarded, args(&["--full"]));
        assert!(plan.with_parry);
        assert!(plan_bench(args(&["--engine=sap,parry"]), None).with_parry);
        assert!(plan_bench(args(&["--suite", "broadphase"]), None).with_parry);

        let plan = plan_bench(vec![], Some("-C debuginfo=1 "));
        assert_eq!(plan.rustflags, "-C debuginfo=1 -C target-cpu=native");
    }

    #[test]
    fn portable_keeps_existing_flags_and_is_not_forwarded() {
        let plan = plan_bench(
            args(&["--scene", "uniform", "--portable"]),
            Some("-C debuginfo=1"),
        );
        assert_eq!(plan.target_subdir, "portable");
        assert_eq!(plan.rustflags, "-C debuginfo=1");
        assert_eq!(plan.forwarded, args(&["--scene", "uniform"]));
        assert_eq!(plan_bench(args(&["--portable"]), None).rustflags, "");
    }

    #[test]
    fn commands_build_then_run_in_the_chosen_target_dir() {
        let plan = plan_bench(args(&["--n", "10k"]), None);
        let root = Path::new("ws");
        let target = target_root(root, None);
        assert_eq!(target, root.join("target"));
        let command = build_command(&plan, root, &target, OsString::from("cargo"));
        let argv: Vec<OsString> = command.get_args().map(OsString::from).collect();
        let expected_target = root.join("target").join("native");
        assert!(
            argv.windows(2)
                .any(|w| w[0] == "--target-dir" && w[1] == expected_target.as_os_str())
        );
        assert!(
            argv.windows(2)
                .any(|w| w[0] == "--bin" && w[1] == "hhg-bench")
        );
        assert_eq!(argv[0], "build");
        assert!(argv.iter().any(|a| a == "--no-default-features"));
        let full = build_command(
            &plan_bench(args(&["--full"]), None),
            root,
            &target,
            OsString::from("cargo"),
        );
        assert!(!full.get_args().any(|a| a == "--no-default-features"));
        assert!(
            argv.windows(2)
                .any(|w| w[0] == "--profile" && w[1] == "bench-fast")
        );
        let rustflags = command
            .get_envs()
            .find(|(k, _)| *k == "RUSTFLAGS")
            .and_then(|(_, v)| v);
        assert_eq!(
            rustflags,
            Some(std::ffi::OsStr::new("-C target-cpu=native"))
        );

        let run = run_command(&plan, root, &target, 12.5);
        assert_eq!(
            Path::new(run.get_program()),
            expected_target
                .join("bench-fast")
                .join(format!("hhg-bench{}", std::env::consts::EXE_SUFFIX))
        );
        let run_args: Vec<OsString> = run.get_args().map(OsString::from).collect();
        assert_eq!(run_args, args(&["--n", "10k"]));
        let env = |key: &str| {
            run.get_envs()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| v)
                .map(|v| v.to_string_lossy().into_owned())
        };
        assert_eq!(
            env("HHG_BENCH_RUSTFLAGS").as_deref(),
            Some("-C target-cpu=native")
        );
        assert_eq!(env("HHG_BENCH_BUILD_SECONDS").as_deref(), Some("12.5"));
        assert_eq!(env("HHG_BENCH_PROFILE").as_deref(), Some("bench-fast"));

        // A CARGO_TARGET_DIR replaces target/ as the parent of native/ and portable/.
        assert_eq!(
            target_root(root, Some(OsString::from("elsewhere"))),
            root.join("elsewhere")
        );
    }
}
