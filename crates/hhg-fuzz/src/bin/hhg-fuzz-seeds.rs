//! Writes the seed inputs of a fuzz target into a directory, as a starting corpus for
//! libFuzzer (`cargo xtask fuzz` runs it before `cargo fuzz run`):
//! `hhg-fuzz-seeds TARGET DIRECTORY`.

use std::path::PathBuf;
use std::process::ExitCode;

use hhg_fuzz::TARGETS;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, directory] = args.as_slice() else {
        eprintln!("usage: hhg-fuzz-seeds TARGET DIRECTORY");
        return ExitCode::from(2);
    };
    let Some((_, _, seeds)) = TARGETS.iter().find(|(n, _, _)| n == name) else {
        let names: Vec<&str> = TARGETS.iter().map(|(n, _, _)| *n).collect();
        eprintln!("hhg-fuzz-seeds: unknown target `{name}` (targets: {names:?})");
        return ExitCode::from(2);
    };
    let directory = PathBuf::from(directory);
    if let Err(error) = std::fs::create_dir_all(&directory) {
        eprintln!(
            "hhg-fuzz-seeds: cannot create {}: {error}",
            directory.display()
        );
        return ExitCode::FAILURE;
    }
    for (k, seed) in seeds().iter().enumerate() {
        let path = directory.join(format!("seed-{k:02}"));
        if let Err(error) = std::fs::write(&path, seed) {
            eprintln!("hhg-fuzz-seeds: cannot write {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
