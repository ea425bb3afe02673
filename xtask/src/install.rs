//! `cargo xtask install --prefix DIR`: builds the C library and installs it with `hhg.h`, the C++
//! headers, a CMake package (`find_package(hhg)`, targets `hhg::hhg` and `hhg::hhg_static`) and
//! a pkg-config file (`hhg.pc`) into a prefix that C and C++ projects can find.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The version written into the CMake package and the pkg-config file: the workspace's.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The cargo profile of a default install.
const DEFAULT_PROFILE: &str = "release";

/// What `cargo xtask install` was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstallPlan {
    /// The installation prefix (`lib/`, `include/` below it).
    pub prefix: PathBuf,
    /// The cargo profile whose libraries are installed.
    pub profile: String,
    /// Whether to install the libraries an earlier build left in the profile's directory
    /// instead of building them (`--no-build`).
    pub no_build: bool,
}

/// Parses `--prefix DIR [--profile NAME] [--no-build]`, or says what is wrong.
pub fn plan_install(args: Vec<OsString>, current_dir: &Path) -> Result<InstallPlan, String> {
    let mut prefix = None;
    let mut profile = DEFAULT_PROFILE.to_owned();
    let mut no_build = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value"))
                .map(PathBuf::from)
        };
        match arg.as_str() {
            "--prefix" => prefix = Some(value("--prefix")?),
            "--profile" => profile = value("--profile")?.to_string_lossy().into_owned(),
            "--no-build" => no_build = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let prefix = prefix.ok_or("--prefix DIR is required")?;
    let prefix = if prefix.is_absolute() {
        prefix
    } else {
        current_dir.join(prefix)
    };
    Ok(InstallPlan {
        prefix,
        profile,
        no_build,
    })
}

/// The directory cargo writes a profile's artifacts to (`dev` and `test` write to `debug`).
fn profile_dir(target: &Path, profile: &str) -> PathBuf {
    match profile {
        "dev" | "test" => target.join("debug"),
        "bench" => target.join("release"),
        other => target.join(other),
    }
}

/// Where the plan's libraries are: the profile's directory, or for `--no-build` its `deps/`
/// when only that holds them (`cargo test` leaves the libraries it builds for the tests there,
/// next to the test binaries, and does not copy them up).
fn built_dir(plan: &InstallPlan, target: &Path) -> PathBuf {
    let dir = profile_dir(target, &plan.profile);
    let (shared, _) = library_names();
    let deps = dir.join("deps");
    if plan.no_build && !dir.join(&shared).exists() && deps.join(&shared).exists() {
        deps
    } else {
        dir
    }
}

/// The file names of the shared and the static library on this platform.
fn library_names() -> (String, &'static str) {
    let shared = format!(
        "{}hhg{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let static_lib = if cfg!(target_env = "msvc") {
        "hhg.lib"
    } else {
        "libhhg.a"
    };
    (shared, static_lib)
}

/// The system libraries a static libhhg needs on this platform (Rust's standard library's).
fn static_dependencies() -> &'static [&'static str] {
    if cfg!(target_os = "linux") {
        &["pthread", "dl", "m"]
    } else if cfg!(target_os = "macos") {
        &["pthread", "m"]
    } else {
        &[]
    }
}

/// The CMake package file: relocatable (the prefix is found from the file's own place), with an
/// imported target for each library.
pub fn cmake_config(shared: &str, static_lib: &str) -> String {
    let dependencies = static_dependencies().join(";");
    format!(
        r#"# hhgConfig.cmake: the CMake package of hhg (fixed-radius neighbour search), written by
# `cargo xtask install`. find_package(hhg) defines hhg::hhg (the shared library) and
# hhg::hhg_static (the static library and the system libraries it needs); both carry the include
# directory with hhg.h and hhg/compactnsearch.hpp.

get_filename_component(_hhg_prefix "${{CMAKE_CURRENT_LIST_DIR}}/../../.." ABSOLUTE)
set(hhg_VERSION "{VERSION}")
set(hhg_INCLUDE_DIRS "${{_hhg_prefix}}/include")

if(NOT TARGET hhg::hhg)
  add_library(hhg::hhg SHARED IMPORTED)
  set_target_properties(hhg::hhg PROPERTIES
    IMPORTED_LOCATION "${{_hhg_prefix}}/lib/{shared}"
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${{_hhg_prefix}}/include")
endif()

if(NOT TARGET hhg::hhg_static)
  add_library(hhg::hhg_static STATIC IMPORTED)
  set_target_properties(hhg::hhg_static PROPERTIES
    IMPORTED_LOCATION "${{_hhg_prefix}}/lib/{static_lib}"
    INTERFACE_INCLUDE_DIRECTORIES "${{_hhg_prefix}}/include"
    INTERFACE_LINK_LIBRARIES "{dependencies}")
endif()

unset(_hhg_prefix)
"#
    )
}

/// The CMake version file: any version up to this one with the same major version (and, before
/// 1.0, the same minor version) is compatible.
pub fn cmake_version() -> String {
    format!(
        r#"# hhgConfigVersion.cmake: which versions find_package(hhg VERSION) accepts, written by
# `cargo xtask install`: this one and earlier ones of the same major version (the same minor
# version before 1.0).

set(PACKAGE_VERSION "{VERSION}")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(PACKAGE_VERSION MATCHES "^0\\.")
  if(PACKAGE_FIND_VERSION_MAJOR EQUAL 0 AND PACKAGE_FIND_VERSION_MINOR EQUAL "{minor}")
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  else()
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  endif()
elseif(PACKAGE_FIND_VERSION_MAJOR EQUAL "{major}")
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
else()
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
"#,
        major = env!("CARGO_PKG_VERSION_MAJOR"),
        minor = env!("CARGO_PKG_VERSION_MINOR"),
    )
}

/// The pkg-config file: relocatable through `${pcfiledir}`; `--static` adds the system libraries.
pub fn pkg_config() -> String {
    let private: Vec<String> = static_dependencies()
        .iter()
        .map(|lib| format!("-l{lib}"))
        .collect();
    format!(
        "# hhg.pc: the pkg-config file of hhg, written by `cargo xtask install`.\n\
         prefix=${{pcfiledir}}/../..\n\
         libdir=${{prefix}}/lib\n\
         includedir=${{prefix}}/include\n\
         \n\
         Name: hhg\n\
         Description: Fixed-radius neighbour search for particle simulations (C API and C++ layer)\n\
         Version: {VERSION}\n\
         Libs: -L${{libdir}} -lhhg\n\
         Libs.private: {}\n\
         Cflags: -I${{includedir}}\n",
        private.join(" ")
    )
}

/// Copies `from` to `to`, naming both in the error.
fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// Writes `text` to `path`, naming it in the error.
fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Creates a directory and its parents, naming it in the error.
fn create_dir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

/// Copies the libraries, the headers and writes the package files into the prefix.
fn install_files(plan: &InstallPlan, root: &Path, built: &Path) -> Result<(), String> {
    let lib = plan.prefix.join("lib");
    let include = plan.prefix.join("include");
    let cmake = lib.join("cmake").join("hhg");
    let pkgconfig = lib.join("pkgconfig");
    for dir in [&lib, &include.join("hhg"), &cmake, &pkgconfig] {
        create_dir(dir)?;
    }
    let (shared, static_lib) = library_names();
    copy(&built.join(&shared), &lib.join(&shared))?;
    copy(&built.join(static_lib), &lib.join(static_lib))?;
    let headers = root.join("crates").join("hhg-capi").join("include");
    copy(&headers.join("hhg.h"), &include.join("hhg.h"))?;
    let cpp_headers = headers.join("hhg");
    let entries = std::fs::read_dir(&cpp_headers)
        .map_err(|e| format!("cannot list {}: {e}", cpp_headers.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", cpp_headers.display()))?
            .path();
        if path.extension().is_some_and(|ext| ext == "hpp") {
            let name = path.file_name().unwrap_or_default();
            copy(&path, &include.join("hhg").join(name))?;
        }
    }
    write(
        &cmake.join("hhgConfig.cmake"),
        &cmake_config(&shared, static_lib),
    )?;
    write(&cmake.join("hhgConfigVersion.cmake"), &cmake_version())?;
    write(&pkgconfig.join("hhg.pc"), &pkg_config())?;
    Ok(())
}

/// Runs `cargo xtask install`: builds hhg-capi with the plan's profile and installs it; with
/// `--no-build`, installs the libraries already in the profile's directory.
///
/// `cargo test --workspace` leaves `libhhg.so` and `libhhg.a` in `target/debug` (the C examples
/// link them), but `cargo build -p hhg-capi --profile dev` cannot reuse that build: the test
/// profile is another profile, and the features of the dependencies are unified over the whole
/// workspace there. CI therefore installs the test build with `--profile test --no-build`.
pub fn install(args: Vec<OsString>, root: &Path, target: &Path) -> ExitCode {
    let current_dir = std::env::current_dir().unwrap_or_else(|_| root.to_path_buf());
    let plan = match plan_install(args, &current_dir) {
        Ok(plan) => plan,
        Err(message) => {
            eprintln!(
                "xtask install: {message}\nusage: cargo xtask install --prefix DIR [--profile NAME] \
                 [--no-build]"
            );
            return ExitCode::from(2);
        }
    };
    if !plan.no_build && !build_library(&plan, root, target) {
        return ExitCode::FAILURE;
    }
    match install_files(&plan, root, &built_dir(&plan, target)) {
        Ok(()) => {
            let (profile, prefix) = (&plan.profile, plan.prefix.display());
            eprintln!(
                "xtask install: hhg {VERSION} ({profile} profile) installed into {prefix}\n  \
                 CMake: find_package(hhg) with -DCMAKE_PREFIX_PATH={prefix}, target hhg::hhg\n  \
                 pkg-config: PKG_CONFIG_PATH={prefix}/lib/pkgconfig pkg-config --cflags --libs hhg"
            );
            ExitCode::SUCCESS
        }
        Err(message) if plan.no_build => {
            eprintln!(
                "xtask install: {message}\n  --no-build installs an earlier build of the {} \
                 profile: build it first (`cargo test` builds the `test` profile's)",
                plan.profile
            );
            ExitCode::FAILURE
        }
        Err(message) => {
            eprintln!("xtask install: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Builds hhg-capi's libraries with the plan's profile into `target`; says why on failure.
fn build_library(plan: &InstallPlan, root: &Path, target: &Path) -> bool {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        .args(["build", "--locked", "-p", "hhg-capi", "--lib", "--profile"])
        .arg(&plan.profile)
        .arg("--target-dir")
        .arg(target)
        .status();
    match status {
        Ok(status) if status.success() => true,
        Ok(status) => {
            eprintln!("xtask install: building hhg-capi failed ({status})");
            false
        }
        Err(error) => {
            eprintln!("xtask install: could not run cargo: {error}");
            false
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
    fn the_prefix_is_required_and_made_absolute() {
        let here = Path::new("/somewhere");
        assert_eq!(
            plan_install(args(&["--prefix", "out"]), here),
            Ok(InstallPlan {
                prefix: here.join("out"),
                profile: "release".into(),
                no_build: false
            })
        );
        assert_eq!(
            plan_install(args(&["--profile", "dev", "--prefix", "/p"]), here),
            Ok(InstallPlan {
                prefix: PathBuf::from("/p"),
                profile: "dev".into(),
                no_build: false
            })
        );
        assert_eq!(
            plan_install(
                args(&["--prefix", "/p", "--no-build", "--profile", "test"]),
                here
            ),
            Ok(InstallPlan {
                prefix: PathBuf::from("/p"),
                profile: "test".into(),
                no_build: true
            })
        );
        assert_eq!(
            plan_install(args(&[]), here),
            Err("--prefix DIR is required".into())
        );
        assert_eq!(
            plan_install(args(&["--prefix"]), here),
            Err("--prefix needs a value".into())
        );
        assert_eq!(
            plan_install(args(&["--lib"]), here),
            Err("unknown argument `--lib`".into())
        );
    }

    #[test]
    fn no_build_finds_the_libraries_cargo_test_left_in_deps() {
        let target = std::env::temp_dir().join(format!("hhg-xtask-built-{}", std::process::id()));
        let deps = target.join("debug").join("deps");
        std::fs::create_dir_all(&deps).unwrap();
        let plan = |no_build| InstallPlan {
            prefix: PathBuf::from("/p"),
            profile: "test".into(),
            no_build,
        };
        // Nothing built yet: the profile's directory, where the copy then fails naming the file.
        assert_eq!(built_dir(&plan(true), &target), target.join("debug"));
        std::fs::write(deps.join(library_names().0), b"").unwrap();
        assert_eq!(built_dir(&plan(true), &target), deps);
        // A build copies its libraries up: installs after a build never look into deps/.
        assert_eq!(built_dir(&plan(false), &target), target.join("debug"));
        std::fs::remove_dir_all(&target).unwrap();
    }

    #[test]
    fn dev_profiles_install_from_the_debug_directory() {
        let target = Path::new("t");
        assert_eq!(profile_dir(target, "dev"), target.join("debug"));
        assert_eq!(profile_dir(target, "release"), target.join("release"));
        assert_eq!(profile_dir(target, "bench-fast"), target.join("bench-fast"));
    }

    #[test]
    fn package_files_name_the_libraries_and_the_version() {
        let config = cmake_config("libhhg.so", "libhhg.a");
        assert!(config.contains("add_library(hhg::hhg SHARED IMPORTED)"));
        assert!(config.contains("/lib/libhhg.so\""));
        assert!(config.contains("/lib/libhhg.a\""));
        assert!(cmake_version().contains(&format!("set(PACKAGE_VERSION \"{VERSION}\")")));
        let pc = pkg_config();
        assert!(pc.contains(&format!("Version: {VERSION}\n")));
        assert!(pc.contains("Libs: -L${libdir} -lhhg\n"));
        assert!(pc.contains("Cflags: -I${includedir}\n"));
    }
}
