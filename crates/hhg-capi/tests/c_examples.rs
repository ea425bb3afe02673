//! C and C++ examples test: compiles `examples/example.c`, `examples/example_2d.c` (the 2-D search) and `examples/example.cpp` against `include/hhg.h`, links each against the static and the shared library this test run built, and runs all six.
//!
//! The test reuses the `libhhg.a` and `libhhg.so` that cargo builds next to the test binary, so
//! `cargo test --workspace` checks the C API from C and C++ without a second build of the
//! library. `CC` and `CXX` choose the compilers (`cc` and `c++` by default). A missing compiler
//! fails the test with its name; `HHG_SKIP_C_EXAMPLES=1` skips it on purpose and says so.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable that skips this test on a machine without C and C++ compilers.
const SKIP: &str = "HHG_SKIP_C_EXAMPLES";

/// The directory that holds this test binary and, beside it, the libraries cargo built for it.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its own path");
    exe.parent()
        .expect("the test binary lies in a directory")
        .to_path_buf()
}

/// Runs `command`, failing the test with its command line and output if it does not succeed.
fn run(mut command: Command, what: &str) {
    let line = format!("{command:?}");
    let output = command.output().unwrap_or_else(|error| {
        panic!("{what}: could not start `{line}`: {error} (set {SKIP}=1 to skip the C examples)")
    });
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{line}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// One example build: a compiler, its language flags, the source file and how it links.
struct ExampleBuild<'a> {
    compiler: &'a str,
    standard: &'a str,
    source: &'a Path,
    linking: Linking,
}

/// Whether an example links the static or the shared library.
#[derive(Clone, Copy, Debug)]
enum Linking {
    Static,
    Shared,
}

impl ExampleBuild<'_> {
    /// Compiles and links the example into `output`.
    fn compile(&self, include: &Path, libraries: &Path, output: &Path) {
        let mut command = Command::new(self.compiler);
        command
            .arg(self.standard)
            .args(["-O1", "-Wall", "-Wextra", "-Wpedantic", "-Werror"])
            .arg("-I")
            .arg(include)
            .arg(self.source);
        match self.linking {
            Linking::Static => {
                command
                    .arg(libraries.join("libhhg.a"))
                    .args(["-lpthread", "-ldl", "-lm"]);
            }
            Linking::Shared => {
                command
                    .arg("-L")
                    .arg(libraries)
                    .arg("-lhhg")
                    .arg(format!("-Wl,-rpath,{}", libraries.display()))
                    .arg("-lm");
            }
        }
        command.arg("-o").arg(output);
        run(
            command,
            &format!("compiling {} ({:?})", self.source.display(), self.linking),
        );
    }
}

#[test]
fn c_and_cpp_examples_build_link_and_run() {
    if std::env::var_os(SKIP).is_some_and(|value| value == "1") {
        eprintln!("{SKIP}=1: the C and C++ examples are skipped");
        return;
    }
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = crate_dir.join("include");
    let examples = crate_dir.join("examples");
    let libraries = library_dir();
    for library in ["libhhg.a", "libhhg.so"] {
        assert!(
            libraries.join(library).is_file(),
            "{library} is missing beside the test binary in {}",
            libraries.display()
        );
    }
    let out = libraries.join(format!("hhg-capi-examples-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("the examples' output directory can be made");

    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    let languages = [
        (
            "example_c",
            cc.as_str(),
            "-std=c11",
            examples.join("example.c"),
        ),
        (
            "example_2d_c",
            cc.as_str(),
            "-std=c11",
            examples.join("example_2d.c"),
        ),
        (
            "example_cpp",
            cxx.as_str(),
            "-std=c++17",
            examples.join("example.cpp"),
        ),
    ];
    for (stem, compiler, standard, source) in &languages {
        for linking in [Linking::Static, Linking::Shared] {
            let name = format!("{stem}_{linking:?}").to_lowercase();
            let binary = out.join(&name);
            ExampleBuild {
                compiler,
                standard,
                source,
                linking,
            }
            .compile(&include, &libraries, &binary);
            // `cargo test` puts its target directories on `LD_LIBRARY_PATH`, which the loader
            // searches before the binary's run path: a `libhhg.so` left there by another
            // build would be loaded instead of the one this test linked.
            let mut example = Command::new(&binary);
            example.env("LD_LIBRARY_PATH", &libraries);
            run(example, &format!("running {name}"));
        }
    }
    std::fs::remove_dir_all(&out).expect("the examples' output directory can be removed");
}
