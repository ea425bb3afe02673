//! `cargo xtask`: project automation written in Rust, with no dependencies beyond std.
//!
//! `cargo xtask bench [ARGS...]` builds the `hhg-bench` binary in release mode for the native CPU
//! (in its own target directory, so the flags never invalidate the normal build) and runs it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The usage text.
const USAGE: &str = "\
cargo xtask: project automation for hhg

USAGE:
    cargo xtask bench [--portable] [ARGS...]
        Builds hhg-bench in release mode with RUSTFLAGS=\"-C target-cpu=native\" (added to any
        RUSTFLAGS already set) into target/native and runs it with ARGS; the report records the
        flags (HHG_BENCH_RUSTFLAGS). With --portable, builds without target-cpu=native into
        target/portable instead. Results go to target/bench. The exit code is hhg-bench's.
        `cargo xtask bench --help` lists hhg-bench's own options; `--suite particles` or
        `--suite broadphase` runs one of its two suites (default: both).

    cargo xtask help
        Prints this help.
";

/// The flag that `cargo xtask bench` adds for a native build.
const NATIVE_FLAG: &str = "-C target-cpu=native";

/// How `cargo xtask bench` invokes cargo.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BenchPlan {
    /// The target directory name under `target/`.
    target_subdir: &'static str,
    /// The RUSTFLAGS for the build, also handed to the binary as HHG_BENCH_RUSTFLAGS.
    rustflags: String,
    /// The arguments for hhg-bench.
    forwarded: Vec<OsString>,
}

/// Plans a bench run from its arguments and the RUSTFLAGS already in the environment.
fn plan_bench(args: Vec<OsString>, existing_rustflags: Option<&str>) -> BenchPlan {
    let portable = args.iter().any(|a| a == "--portable");
    let forwarded: Vec<OsString> = args.into_iter().filter(|a| a != "--portable").collect();
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
        rustflags,
        forwarded,
    }
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}

/// Builds the cargo command for a plan.
fn bench_command(plan: &BenchPlan, root: &Path, cargo: OsString) -> Command {
    let target = root.join("target");
    let mut command = Command::new(cargo);
    command
        .arg("run")
        .arg("--release")
        .args(["--package", "hhg-benches", "--bin", "hhg-bench"])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target.join(plan.target_subdir))
        .arg("--")
        .args(&plan.forwarded)
        .env("RUSTFLAGS", &plan.rustflags)
        .env("HHG_BENCH_RUSTFLAGS", &plan.rustflags);
    // Results land in the workspace's target/bench wherever cargo xtask is started from,
    // unless the caller chose a directory.
    if std::env::var_os("HHG_BENCH_OUT_DIR").is_none() {
        command.env("HHG_BENCH_OUT_DIR", target.join("bench"));
    }
    // Encoded flags would take precedence over RUSTFLAGS and silently drop the native flag.
    command.env_remove("CARGO_ENCODED_RUSTFLAGS");
    command
}

/// Runs `cargo xtask bench` and returns hhg-bench's exit code.
fn bench(args: Vec<OsString>) -> ExitCode {
    let existing = std::env::var("RUSTFLAGS").ok();
    let plan = plan_bench(args, existing.as_deref());
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let root = workspace_root();
    eprintln!(
        "xtask: building hhg-bench (release, RUSTFLAGS=\"{}\", target/{})",
        plan.rustflags, plan.target_subdir
    );
    match bench_command(&plan, &root, cargo).status() {
        Ok(status) => match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            // Killed by a signal: no code to forward, so report a failure.
            None => ExitCode::FAILURE,
        },
        Err(e) => {
            eprintln!("xtask: cannot run cargo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let task = args.next();
    match task.as_ref().and_then(|t| t.to_str()) {
        Some("bench") => bench(args.collect()),
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
    fn native_is_the_default_and_appends_to_existing_flags() {
        let plan = plan_bench(args(&["--max-n", "100000"]), None);
        assert_eq!(plan.target_subdir, "native");
        assert_eq!(plan.rustflags, "-C target-cpu=native");
        assert_eq!(plan.forwarded, args(&["--max-n", "100000"]));

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
    fn command_runs_hhg_bench_in_the_chosen_target_dir() {
        let plan = plan_bench(args(&["--n", "10k"]), None);
        let root = Path::new("ws");
        let command = bench_command(&plan, root, OsString::from("cargo"));
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
        let tail: Vec<&OsString> = argv.iter().skip_while(|a| *a != "--").collect();
        assert_eq!(
            tail,
            [
                &OsString::from("--"),
                &OsString::from("--n"),
                &OsString::from("10k")
            ]
        );
        let rustflags = command
            .get_envs()
            .find(|(k, _)| *k == "HHG_BENCH_RUSTFLAGS")
            .and_then(|(_, v)| v);
        assert_eq!(
            rustflags,
            Some(std::ffi::OsStr::new("-C target-cpu=native"))
        );
    }
}
