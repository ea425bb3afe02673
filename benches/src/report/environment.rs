//! The machine and build a result depends on: CPU model and SIMD extensions, memory, the build
//! flags and profile `cargo xtask bench` passes in, and the run's time stamp.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// The environment variable through which `cargo xtask bench` passes the build flags it used.
pub const RUSTFLAGS_VAR: &str = "HHG_BENCH_RUSTFLAGS";

/// The environment variable through which `cargo xtask bench` passes the cargo profile it
/// built with.
pub const PROFILE_VAR: &str = "HHG_BENCH_PROFILE";

/// Facts about the machine and build that a result depends on; they open `results.json`, under
/// their field names and in this order.
#[derive(Clone, Debug, Serialize)]
pub struct Environment {
    /// Seconds since the Unix epoch when the report was made.
    pub unix_time: u64,
    /// The CPU model as the kernel names it.
    pub cpu: String,
    /// The SIMD extensions the CPU exposes that matter here, e.g. `AVX2, FMA; no AVX-512`.
    pub simd: String,
    /// Physical memory in GiB, if known.
    pub memory_gib: Option<f64>,
    /// Logical CPUs the process may use.
    pub logical_cpus: usize,
    /// Worker threads of the run.
    pub threads: usize,
    /// The build flags reported by `cargo xtask bench`, if the binary was started that way.
    pub rustflags: Option<String>,
    /// The cargo profile reported by `cargo xtask bench` (`bench-fast` or `release`), if the
    /// binary was started that way.
    pub profile: Option<String>,
    /// Seconds `cargo xtask bench` spent building the binary, if it said so.
    pub build_s: Option<f64>,
    /// Whether this is a build with debug assertions (numbers from it mean little).
    pub debug_assertions: bool,
    /// Whether the counting allocator measured peak memory.
    pub peak_memory: bool,
    /// The base seed of the generated scenes.
    pub seed: u64,
}

impl Environment {
    /// Collects the environment of this process.
    pub fn current(threads: usize, seed: u64) -> Self {
        Self {
            cpu: cpu_model(),
            logical_cpus: std::thread::available_parallelism().map_or(1, usize::from),
            threads,
            rustflags: std::env::var(RUSTFLAGS_VAR).ok(),
            profile: std::env::var(PROFILE_VAR).ok(),
            debug_assertions: cfg!(debug_assertions),
            seed,
            unix_time: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            simd: simd_features(),
            memory_gib: memory_gib(),
            build_s: std::env::var(BUILD_SECONDS_VAR)
                .ok()
                .and_then(|s| s.parse().ok()),
            peak_memory: crate::memory::is_installed(),
        }
    }

    /// The build flags for people: `(none)` for an empty string, a hint when unknown.
    pub fn rustflags_text(&self) -> String {
        match self.rustflags.as_deref().map(str::trim) {
            Some("") => "(none)".to_owned(),
            Some(flags) => flags.to_owned(),
            None => format!("unknown ({RUSTFLAGS_VAR} not set; run through `cargo xtask bench`)"),
        }
    }
}

/// The cargo profile of the build for people.
pub fn profile_text(profile: Option<&str>) -> String {
    match profile {
        Some("bench-fast") => {
            "cargo profile `bench-fast` (release optimisations, no LTO, 16 codegen units)"
                .to_owned()
        }
        Some("release") => "cargo profile `release` (fat LTO, one codegen unit)".to_owned(),
        Some(other) => format!("cargo profile `{other}`"),
        None => format!("optimised; profile unknown ({PROFILE_VAR} not set)"),
    }
}

/// The environment variable through which `cargo xtask bench` passes its build time (seconds).
pub const BUILD_SECONDS_VAR: &str = "HHG_BENCH_BUILD_SECONDS";

/// The SIMD extensions of the first CPU in `/proc/cpuinfo` that matter for these engines.
pub fn simd_features() -> String {
    let Some(flags) = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("flags"))
                .map(|line| {
                    line.split_whitespace()
                        .map(str::to_owned)
                        .collect::<Vec<_>>()
                })
        })
    else {
        return "unknown".to_owned();
    };
    let has = |f: &str| flags.iter().any(|x| x == f);
    let mut out: Vec<&str> = Vec::new();
    for (flag, name) in [("avx2", "AVX2"), ("fma", "FMA"), ("avx512f", "AVX-512F")] {
        if has(flag) {
            out.push(name);
        }
    }
    let mut text = if out.is_empty() {
        "no AVX2".to_owned()
    } else {
        out.join(", ")
    };
    if !has("avx512f") {
        text.push_str("; no AVX-512");
    }
    text
}

/// The machine's memory from `/proc/meminfo`, in GiB.
pub fn memory_gib() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / f64::from(1 << 20))
}

/// The CPU model from `/proc/cpuinfo`, or `unknown` where there is none.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Formats a Unix time as `YYYY-MM-DD hh:mm:ss UTC`.
pub fn utc_timestamp(unix_time: u64) -> String {
    let days = (unix_time / 86_400) as i64;
    let secs = unix_time % 86_400;
    // Howard Hinnant's days-to-civil conversion.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}
