//! Output: the console tables, JSON lines, `results.json`, the summary, the thread-scaling
//! table and the Markdown report.
//!
//! The JSON is written by hand: the records are flat, and the writer keeps the key order of
//! the documented contract.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use hhg_core::ListPass;

use crate::broadphase::report as broad_report;
use crate::broadphase::runner::{self as broad_runner, BroadRecord};
use crate::engines::{Engine, list_pass_name};
use crate::memory::mib;
use crate::runner::{self, Agreement, Order, Record};
use crate::schemes::{self, SchemeRecord};

/// The environment variable through which `cargo xtask bench` passes the build flags it used.
pub const RUSTFLAGS_VAR: &str = "HHG_BENCH_RUSTFLAGS";

/// The environment variable through which `cargo xtask bench` passes the cargo profile it
/// built with.
pub const PROFILE_VAR: &str = "HHG_BENCH_PROFILE";

/// Facts about the machine and build that a result depends on.
#[derive(Clone, Debug)]
pub struct Environment {
    /// The CPU model as the kernel names it.
    pub cpu: String,
    /// Logical CPUs the process may use.
    pub logical_cpus: usize,
    /// Worker threads of the run.
    pub threads: usize,
    /// The build flags reported by `cargo xtask bench`, if the binary was started that way.
    pub rustflags: Option<String>,
    /// The cargo profile reported by `cargo xtask bench` (`bench-fast` or `release`), if the
    /// binary was started that way.
    pub profile: Option<String>,
    /// Whether this is a build with debug assertions (numbers from it mean little).
    pub debug_assertions: bool,
    /// The base seed of the generated scenes.
    pub seed: u64,
    /// Seconds since the Unix epoch when the report was made.
    pub unix_time: u64,
    /// The SIMD extensions the CPU exposes that matter here, e.g. `AVX2, FMA; no AVX-512`.
    pub simd: String,
    /// Physical memory in GiB, if known.
    pub memory_gib: Option<f64>,
    /// Seconds `cargo xtask bench` spent building the binary, if it said so.
    pub build_s: Option<f64>,
    /// Whether the counting allocator measured peak memory.
    pub peak_memory: bool,
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
fn profile_text(profile: Option<&str>) -> String {
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

/// The column headers of the result table.
pub const COLUMNS: [&str; 17] = [
    "engine", "case", "n", "threads", "build ms", "query ms", "total ms", "ns/pt", "pairs",
    "ns/pair", "checksum", "peak MiB", "vs kiddo", "x sorted", "floor ms", "x floor", "agree",
];

/// A ratio as a table cell: `1.23x`, or `-` when there is none.
fn ratio_cell(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}x"))
}

/// The cells of one table row, formatted.
fn row(record: &Record) -> Vec<String> {
    let ms = |s: f64| format!("{:.3}", s * 1e3);
    vec![
        record.engine.name().to_owned(),
        record.case(),
        record.n.to_string(),
        record.threads.to_string(),
        ms(record.build_s),
        ms(record.query_s),
        ms(record.total_s()),
        format!("{:.1}", record.ns_per_point()),
        record.stats.pairs.to_string(),
        record
            .ns_per_pair()
            .map_or_else(|| "-".to_owned(), |ns| format!("{ns:.2}")),
        record.stats.checksum.to_string(),
        mib(record.peak_bytes),
        ratio_cell(record.vs_kiddo),
        ratio_cell(record.over_sorted),
        record.floor_s.map_or_else(|| "-".to_owned(), ms),
        record.floor_s.map_or_else(
            || "-".to_owned(),
            |floor| format!("{:.1}x", record.total_s() / floor),
        ),
        record.agree.to_string(),
    ]
}

/// Lays out rows of cells as aligned text columns: `left(c)` says which columns are text
/// (left-aligned); the rest are numbers (right-aligned).
pub fn align_table(
    header: &[String],
    rows: &[Vec<String>],
    left: impl Fn(usize) -> bool,
) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for cells in rows {
        for (w, cell) in widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if left(c) {
                    format!("{cell:<w$}", w = widths[c])
                } else {
                    format!("{cell:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(&mut out, header);
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&mut out, &rule);
    for cells in rows {
        line(&mut out, cells);
    }
    out
}

/// Lays out rows of cells as a Markdown table; `left(c)` as for [`align_table`].
pub fn markdown_rows(
    header: &[String],
    rows: &[Vec<String>],
    left: impl Fn(usize) -> bool,
) -> String {
    let mut out = format!("| {} |\n", header.join(" | "));
    let align: Vec<&str> = (0..header.len())
        .map(|c| if left(c) { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for cells in rows {
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// Whether a column of the result table is text.
fn left_column(c: usize) -> bool {
    c <= 1 || c == COLUMNS.len() - 1
}

/// The result table with aligned columns, for the terminal.
pub fn text_table(records: &[Record]) -> String {
    let header: Vec<String> = COLUMNS.map(str::to_owned).to_vec();
    let rows: Vec<Vec<String>> = records.iter().map(row).collect();
    align_table(&header, &rows, left_column)
}

/// The result table in Markdown.
pub fn markdown_table(records: &[Record]) -> String {
    let header: Vec<String> = COLUMNS.map(str::to_owned).to_vec();
    let rows: Vec<Vec<String>> = records.iter().map(row).collect();
    markdown_rows(&header, &rows, left_column)
}

/// The column headers of the scheme table.
pub const SCHEME_COLUMNS: [&str; 12] = [
    "scheme",
    "case",
    "n",
    "threads",
    "build ms",
    "search ms",
    "total ms",
    "pairs",
    "cand/pair",
    "max load",
    "peak MiB",
    "agree",
];

/// The cells of one scheme row.
fn scheme_row(r: &SchemeRecord) -> Vec<String> {
    let ms = |s: f64| format!("{:.3}", s * 1e3);
    vec![
        r.scheme.name().to_owned(),
        r.case(),
        r.n.to_string(),
        r.threads.to_string(),
        ms(r.build_s),
        ms(r.search_s),
        ms(r.total_s()),
        r.stats.pairs.to_string(),
        r.candidates_per_pair()
            .map_or_else(|| "-".to_owned(), |c| format!("{c:.2}")),
        r.scheme_stats.max_load.to_string(),
        mib(r.peak_bytes),
        r.agree.to_string(),
    ]
}

/// Whether a column of the scheme table is text.
fn scheme_left(c: usize) -> bool {
    c <= 1 || c == SCHEME_COLUMNS.len() - 1
}

/// The scheme table for the terminal.
pub fn scheme_text_table(records: &[SchemeRecord]) -> String {
    let header: Vec<String> = SCHEME_COLUMNS.map(str::to_owned).to_vec();
    let rows: Vec<Vec<String>> = records.iter().map(scheme_row).collect();
    align_table(&header, &rows, scheme_left)
}

/// The scheme table in Markdown.
pub fn scheme_markdown_table(records: &[SchemeRecord]) -> String {
    let header: Vec<String> = SCHEME_COLUMNS.map(str::to_owned).to_vec();
    let rows: Vec<Vec<String>> = records.iter().map(scheme_row).collect();
    markdown_rows(&header, &rows, scheme_left)
}

/// Escapes a string as a JSON string literal, quotes included.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Seconds as a JSON number with nanosecond resolution, the resolution of the clock.
pub fn json_seconds(s: f64) -> String {
    if s.is_finite() {
        format!("{s:.9}")
    } else {
        "null".to_owned()
    }
}

/// A JSON number, or `null` for values JSON cannot represent.
pub fn json_f64(x: f64) -> String {
    if x.is_finite() {
        format!("{x:?}")
    } else {
        "null".to_owned()
    }
}

/// The one-line JSON summary of a record, with exactly the documented keys.
pub fn json_line(record: &Record) -> String {
    format!(
        "{{\"engine\":{},\"case\":{},\"n\":{},\"threads\":{},\"build_s\":{},\"query_s\":{},\"total_s\":{},\"pairs\":{},\"checksum\":{}}}",
        json_string(record.engine.name()),
        json_string(&record.case()),
        record.n,
        record.threads,
        json_seconds(record.build_s),
        json_seconds(record.query_s),
        json_seconds(record.total_s()),
        record.stats.pairs,
        record.stats.checksum
    )
}

/// The full JSON object of a record, as `results.json` lists it.
fn json_record(record: &Record) -> String {
    let opt = |x: Option<f64>| x.map_or_else(|| "null".to_owned(), json_f64);
    format!(
        "{{\"engine\":{},\"case\":{},\"input\":{},\"order\":{},\"n\":{},\"threads\":{},\"reps\":{},\"build_s\":{},\"query_s\":{},\"total_s\":{},\"ns_per_point\":{},\"pairs\":{},\"checksum\":{},\"ns_per_pair\":{},\"peak_bytes\":{},\"vs_kiddo\":{},\"over_sorted\":{},\"list_pass\":{},\"floor_s\":{},\"vs_floor\":{},\"agree\":{}}}",
        json_string(record.engine.name()),
        json_string(&record.case()),
        json_string(&record.input),
        record
            .order
            .map_or_else(|| "null".to_owned(), |o| json_string(o.name())),
        record.n,
        record.threads,
        record.reps,
        json_seconds(record.build_s),
        json_seconds(record.query_s),
        json_seconds(record.total_s()),
        json_f64(record.ns_per_point()),
        record.stats.pairs,
        record.stats.checksum,
        opt(record.ns_per_pair()),
        record
            .peak_bytes
            .map_or_else(|| "null".to_owned(), |b| b.to_string()),
        opt(record.vs_kiddo),
        opt(record.over_sorted),
        record.list_pass.map_or_else(
            || "null".to_owned(),
            |pass| json_string(list_pass_name(pass))
        ),
        opt(record.floor_s),
        opt(record.floor_s.map(|floor| record.total_s() / floor)),
        json_string(&record.agree.to_string())
    )
}

/// The JSON object of a scheme record.
fn json_scheme(r: &SchemeRecord) -> String {
    format!(
        "{{\"engine\":{},\"case\":{},\"n\":{},\"threads\":{},\"reps\":{},\"build_s\":{},\"search_s\":{},\"total_s\":{},\"pairs\":{},\"checksum\":{},\"pair_candidates\":{},\"candidates_per_pair\":{},\"max_load\":{},\"buckets\":{},\"occupied\":{},\"peak_bytes\":{},\"agree\":{}}}",
        json_string(r.scheme.name()),
        json_string(&r.case()),
        r.n,
        r.threads,
        r.reps,
        json_seconds(r.build_s),
        json_seconds(r.search_s),
        json_seconds(r.total_s()),
        r.stats.pairs,
        r.stats.checksum,
        r.scheme_stats.pair_candidates,
        r.candidates_per_pair()
            .map_or_else(|| "null".to_owned(), json_f64),
        r.scheme_stats.max_load,
        r.scheme_stats.buckets,
        r.scheme_stats.occupied,
        r.peak_bytes
            .map_or_else(|| "null".to_owned(), |b| b.to_string()),
        json_string(&r.agree.to_string())
    )
}

/// Everything one run measured.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// The particle suite (Python peers included).
    pub particles: Vec<Record>,
    /// The scheme suite.
    pub schemes: Vec<SchemeRecord>,
    /// The broad-phase suite.
    pub broad: Vec<BroadRecord>,
    /// Particle records of the thread-scaling measurement at thread counts other than the
    /// main run's.
    pub scaling: Vec<Record>,
    /// Broad-phase records of the thread-scaling measurement at other thread counts.
    pub broad_scaling: Vec<BroadRecord>,
}

impl Results {
    /// Every disagreement of every section, one line each.
    pub fn problems(&self) -> Vec<String> {
        let mut lines = runner::disagreements(&self.particles);
        lines.extend(schemes::disagreements(&self.schemes));
        lines.extend(broad_runner::disagreements(&self.broad));
        lines.extend(
            runner::disagreements(&self.scaling)
                .into_iter()
                .map(|l| format!("thread scaling: {l}")),
        );
        lines.extend(
            broad_runner::disagreements(&self.broad_scaling)
                .into_iter()
                .map(|l| format!("thread scaling: {l}")),
        );
        lines
    }
}

/// The exit code of a finished run: 0 when every engine agrees with its reference, 1 when any
/// disagreement was found (a run that fails outright also exits with 1, a usage error with 2).
pub fn exit_code(problems: &[String]) -> u8 {
    u8::from(!problems.is_empty())
}

/// Writes `name` and its items as an array member of `results.json`.
fn json_section(out: &mut String, name: &str, items: &[String], last: bool) {
    let _ = writeln!(out, "  \"{name}\": [");
    for (i, item) in items.iter().enumerate() {
        let comma = if i + 1 < items.len() { "," } else { "" };
        let _ = writeln!(out, "    {item}{comma}");
    }
    let _ = writeln!(out, "  ]{}", if last { "" } else { "," });
}

/// The contents of `results.json`: the environment, then every record: the particle suite
/// under `results`, then `schemes`, `broadphase`, `scaling` and `broadphase_scaling`.
pub fn results_json(env: &Environment, results: &Results) -> String {
    let mut out = String::from("{\n");
    let _ = writeln!(out, "  \"tool\": \"hhg-bench\",");
    let _ = writeln!(out, "  \"unix_time\": {},", env.unix_time);
    let _ = writeln!(out, "  \"cpu\": {},", json_string(&env.cpu));
    let _ = writeln!(out, "  \"simd\": {},", json_string(&env.simd));
    let _ = writeln!(
        out,
        "  \"memory_gib\": {},",
        env.memory_gib.map_or_else(|| "null".to_owned(), json_f64)
    );
    let _ = writeln!(out, "  \"logical_cpus\": {},", env.logical_cpus);
    let _ = writeln!(out, "  \"threads\": {},", env.threads);
    let _ = writeln!(
        out,
        "  \"rustflags\": {},",
        env.rustflags
            .as_deref()
            .map_or_else(|| "null".to_owned(), json_string)
    );
    let _ = writeln!(
        out,
        "  \"profile\": {},",
        env.profile
            .as_deref()
            .map_or_else(|| "null".to_owned(), json_string)
    );
    let _ = writeln!(
        out,
        "  \"build_s\": {},",
        env.build_s.map_or_else(|| "null".to_owned(), json_f64)
    );
    let _ = writeln!(out, "  \"debug_assertions\": {},", env.debug_assertions);
    let _ = writeln!(out, "  \"peak_memory\": {},", env.peak_memory);
    let _ = writeln!(out, "  \"seed\": {},", env.seed);
    let particles: Vec<String> = results.particles.iter().map(json_record).collect();
    let schemes: Vec<String> = results.schemes.iter().map(json_scheme).collect();
    let broad: Vec<String> = results
        .broad
        .iter()
        .map(broad_report::json_record)
        .collect();
    let scaling: Vec<String> = results.scaling.iter().map(json_record).collect();
    let broad_scaling: Vec<String> = results
        .broad_scaling
        .iter()
        .map(broad_report::json_record)
        .collect();
    json_section(&mut out, "results", &particles, false);
    json_section(&mut out, "schemes", &schemes, false);
    json_section(&mut out, "broadphase", &broad, false);
    json_section(&mut out, "scaling", &scaling, false);
    json_section(&mut out, "broadphase_scaling", &broad_scaling, true);
    out.push_str("}\n");
    out
}

/// One row of a summary: a case at its largest size, the time of every engine on it.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    /// The case.
    pub case: String,
    /// The size.
    pub n: usize,
    /// Seconds per engine, in the order the engines were listed.
    pub times: Vec<(String, f64)>,
    /// Whether every engine agreed on this case.
    pub agree: bool,
}

/// Adds one engine's time to the summary row of `case` at `n`, creating the row if needed.
fn add_to_summary(
    rows: &mut Vec<SummaryRow>,
    case: String,
    n: usize,
    engine: &str,
    seconds: f64,
    agree: bool,
) {
    match rows.iter_mut().find(|row| row.case == case && row.n == n) {
        Some(row) => {
            row.times.push((engine.to_owned(), seconds));
            row.agree &= agree;
        }
        None => rows.push(SummaryRow {
            case,
            n,
            times: vec![(engine.to_owned(), seconds)],
            agree,
        }),
    }
}

/// One entry of a summary: case, n, engine, seconds, and whether it agreed.
type SummaryEntry = (String, usize, &'static str, f64, bool);

/// The summary rows of a suite: for each case, the entries of its largest size.
fn summary_of<R>(records: &[R], entry: impl Fn(&R) -> SummaryEntry) -> Vec<SummaryRow> {
    let entries: Vec<SummaryEntry> = records.iter().map(entry).collect();
    let mut rows = Vec::new();
    for (case, n, engine, seconds, agree) in &entries {
        let largest = entries.iter().filter(|o| o.0 == *case).map(|o| o.1).max();
        if Some(*n) == largest {
            add_to_summary(&mut rows, case.clone(), *n, engine, *seconds, *agree);
        }
    }
    rows
}

/// The summary of the particle suite: each case (scene and order) at its largest size.
pub fn particle_summary(records: &[Record]) -> Vec<SummaryRow> {
    summary_of(records, |r| {
        let agree = r.agree != Agreement::Differs;
        (r.case(), r.n, r.engine.name(), r.total_s(), agree)
    })
}

/// The summary of the scheme suite: each scene at its largest size, build plus search.
pub fn scheme_summary(records: &[SchemeRecord]) -> Vec<SummaryRow> {
    summary_of(records, |r| {
        let agree = r.agree != Agreement::Differs;
        (r.input.clone(), r.n, r.scheme.name(), r.total_s(), agree)
    })
}

/// The summary of the broad-phase suite: each scene at its largest size, the median step.
pub fn broad_summary(records: &[BroadRecord]) -> Vec<SummaryRow> {
    summary_of(records, |r| {
        let agree = r.agree != Agreement::Differs;
        let case = r.scene.name().to_owned();
        (case, r.n, r.engine.name(), r.step_s, agree)
    })
}

/// The header and cells of a summary table: case, n, one column of milliseconds per engine
/// (`-` where it did not run), the named engine's speedup over the fastest other one, agree.
fn summary_cells(rows: &[SummaryRow], ours: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut engines: Vec<String> = Vec::new();
    for row in rows {
        for (engine, _) in &row.times {
            if !engines.contains(engine) {
                engines.push(engine.clone());
            }
        }
    }
    let mut header = vec!["case".to_owned(), "n".to_owned()];
    header.extend(engines.iter().map(|e| format!("{e} ms")));
    header.push(format!("{ours} vs best other"));
    // Variants of our engine (`hhg-cellorder` for `hhg`) are not the others it is compared with.
    let variant = format!("{ours}-");
    let other = |engine: &str| engine != ours && !engine.starts_with(&variant);
    header.push("agree".to_owned());
    let cells = rows
        .iter()
        .map(|row| {
            let mut cells = vec![row.case.clone(), row.n.to_string()];
            for engine in &engines {
                cells.push(
                    row.times
                        .iter()
                        .find(|(e, _)| e == engine)
                        .map_or_else(|| "-".to_owned(), |(_, s)| format!("{:.3}", s * 1e3)),
                );
            }
            let mine = row.times.iter().find(|(e, _)| e == ours).map(|(_, s)| *s);
            let best = row
                .times
                .iter()
                .filter(|(e, _)| other(e))
                .map(|(_, s)| *s)
                .fold(f64::INFINITY, f64::min);
            cells.push(match mine {
                Some(m) if best.is_finite() && m > 0.0 => format!("{:.2}x", best / m),
                _ => "-".to_owned(),
            });
            cells.push(if row.agree { "yes" } else { "NO" }.to_owned());
            cells
        })
        .collect();
    (header, cells)
}

/// A summary table for the terminal; `ours` is the engine compared with the fastest other.
pub fn summary_text(rows: &[SummaryRow], ours: &str) -> String {
    let (header, cells) = summary_cells(rows, ours);
    let last = header.len() - 1;
    align_table(&header, &cells, |c| c == 0 || c == last)
}

/// A summary table in Markdown.
pub fn summary_markdown(rows: &[SummaryRow], ours: &str) -> String {
    let (header, cells) = summary_cells(rows, ours);
    let last = header.len() - 1;
    markdown_rows(&header, &cells, |c| c == 0 || c == last)
}

/// The whole summary: one table per suite that ran, each headed by a line.
pub fn summary(results: &Results, markdown: bool) -> String {
    let mut out = String::new();
    let mut section = |title: &str, rows: Vec<SummaryRow>, ours: &str| {
        if markdown {
            let _ = writeln!(out, "**{title}**\n");
            out.push_str(&summary_markdown(&rows, ours));
        } else {
            let _ = writeln!(out, "{title}");
            out.push_str(&summary_text(&rows, ours));
        }
        out.push('\n');
    };
    if !results.particles.is_empty() {
        section(
            "Particles: build + neighbour lists of all points, ms, at the largest size",
            particle_summary(&results.particles),
            "hhg",
        );
    }
    if !results.schemes.is_empty() {
        section(
            "Hashing schemes: build + unique pairs, ms, at the largest size",
            scheme_summary(&results.schemes),
            "core",
        );
    }
    if !results.broad.is_empty() {
        section(
            "Broad phase: median step (update + detection), ms, at the largest size",
            broad_summary(&results.broad),
            "hhg",
        );
    }
    out
}

/// One row of the point-order table: an engine on one input and size, its time in hhg's cell
/// order, and the time of every other order it ran in over that.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderRow {
    /// The engine.
    pub engine: String,
    /// The scene's name or the point file's stem.
    pub input: String,
    /// The size.
    pub n: usize,
    /// Seconds in cell order (the `-sorted` case).
    pub sorted_s: f64,
    /// hhg's list pass in cell order, for hhg's engines.
    pub sorted_pass: Option<ListPass>,
    /// Every other order that ran (`None`: a point file's own order): its time over the
    /// sorted time and, for hhg's engines, the list pass it took.
    pub others: Vec<(Option<Order>, f64, Option<ListPass>)>,
}

/// The point-order rows of `records` (one thread count, as the main run's): one per record on
/// a `-sorted` case, in the records' order.
pub fn order_rows(records: &[Record]) -> Vec<OrderRow> {
    records
        .iter()
        .filter(|r| r.order == Some(Order::Sorted))
        .map(|sorted| {
            let mut others: Vec<(Option<Order>, f64, Option<ListPass>)> = records
                .iter()
                .filter(|r| {
                    r.engine == sorted.engine
                        && r.input == sorted.input
                        && r.n == sorted.n
                        && r.threads == sorted.threads
                        && r.order != Some(Order::Sorted)
                })
                .map(|r| (r.order, r.total_s() / sorted.total_s(), r.list_pass))
                .collect();
            others.sort_by_key(|other| other.0);
            OrderRow {
                engine: sorted.engine.name().to_owned(),
                input: sorted.input.clone(),
                n: sorted.n,
                sorted_s: sorted.total_s(),
                sorted_pass: sorted.list_pass,
                others,
            }
        })
        .collect()
}

/// The point-order table (text or Markdown): engine, input, n, the time in cell order, then
/// one column per other order with its time over the cell order's (`order / sorted`), hhg's
/// list pass in parentheses.
pub fn order_table(rows: &[OrderRow], markdown: bool) -> String {
    let mut orders: Vec<Option<Order>> = rows
        .iter()
        .flat_map(|row| row.others.iter().map(|other| other.0))
        .collect();
    orders.sort();
    orders.dedup();
    let mut header: Vec<String> = ["engine", "input", "n", "sorted ms"]
        .map(str::to_owned)
        .to_vec();
    header.extend(
        orders
            .iter()
            .map(|order| format!("{} / sorted", order.map_or("file", Order::name))),
    );
    let with_pass = |text: String, pass: Option<ListPass>| match pass {
        Some(pass) => format!("{text} ({})", list_pass_name(pass)),
        None => text,
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                row.engine.clone(),
                row.input.clone(),
                row.n.to_string(),
                with_pass(format!("{:.3}", row.sorted_s * 1e3), row.sorted_pass),
            ];
            for order in &orders {
                cells.push(
                    row.others
                        .iter()
                        .find(|other| other.0 == *order)
                        .map_or_else(
                            || "-".to_owned(),
                            |&(_, ratio, pass)| with_pass(format!("{ratio:.2}x"), pass),
                        ),
                );
            }
            cells
        })
        .collect();
    let left = |c: usize| c <= 1;
    if markdown {
        markdown_rows(&header, &cells, left)
    } else {
        align_table(&header, &cells, left)
    }
}

/// One line of the thread-scaling table.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalingRow {
    /// The suite: `particles` or `broadphase`.
    pub suite: &'static str,
    /// The engine.
    pub engine: String,
    /// The case.
    pub case: String,
    /// The size.
    pub n: usize,
    /// Threads.
    pub threads: usize,
    /// Seconds (total, or the median step).
    pub seconds: f64,
    /// The one-thread time over this time, when one thread was measured.
    pub speedup: Option<f64>,
}

impl ScalingRow {
    /// Speedup over threads.
    pub fn efficiency(&self) -> Option<f64> {
        self.speedup.map(|s| s / self.threads as f64)
    }

    /// Whether `other` measures the same engine on the same case.
    fn same_case(&self, other: &ScalingRow) -> bool {
        self.suite == other.suite
            && self.engine == other.engine
            && self.case == other.case
            && self.n == other.n
    }
}

/// The thread-scaling rows: for each scaled case and engine, its time at every thread count
/// (the main run's records supply the main thread count), with speedup over one thread.
pub fn scaling_rows(results: &Results) -> Vec<ScalingRow> {
    let particle = |r: &Record| ScalingRow {
        suite: "particles",
        engine: r.engine.name().to_owned(),
        case: r.case(),
        n: r.n,
        threads: r.threads,
        seconds: r.total_s(),
        speedup: None,
    };
    let broad = |r: &BroadRecord| ScalingRow {
        suite: "broadphase",
        engine: r.engine.name().to_owned(),
        case: r.scene.name().to_owned(),
        n: r.n,
        threads: r.threads,
        seconds: r.step_s,
        speedup: None,
    };
    let mut rows: Vec<ScalingRow> = results.scaling.iter().map(particle).collect();
    rows.extend(results.broad_scaling.iter().map(broad));
    let main: Vec<ScalingRow> = results
        .particles
        .iter()
        .filter(|r| r.order == Some(Order::Random) && !matches!(r.engine, Engine::Python(_)))
        .map(particle)
        .chain(results.broad.iter().map(broad))
        .collect();
    let mut from_main: Vec<ScalingRow> = main
        .into_iter()
        .filter(|m| {
            rows.iter()
                .any(|r| r.same_case(m) && r.threads != m.threads)
        })
        .collect();
    rows.append(&mut from_main);
    rows.sort_by(|a, b| {
        (a.suite, &a.case, a.n, &a.engine, a.threads)
            .cmp(&(b.suite, &b.case, b.n, &b.engine, b.threads))
    });
    rows.dedup_by(|a, b| a.same_case(b) && a.threads == b.threads);
    let snapshot = rows.clone();
    for row in &mut rows {
        row.speedup = snapshot
            .iter()
            .find(|o| o.same_case(row) && o.threads == 1)
            .map(|one| one.seconds / row.seconds);
    }
    rows
}

/// The thread-scaling table (text or Markdown).
pub fn scaling_table(rows: &[ScalingRow], markdown: bool) -> String {
    let header: Vec<String> = [
        "suite",
        "engine",
        "case",
        "n",
        "threads",
        "ms",
        "speedup",
        "efficiency",
    ]
    .map(str::to_owned)
    .to_vec();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.suite.to_owned(),
                r.engine.clone(),
                r.case.clone(),
                r.n.to_string(),
                r.threads.to_string(),
                format!("{:.3}", r.seconds * 1e3),
                r.speedup
                    .map_or_else(|| "-".to_owned(), |s| format!("{s:.2}x")),
                r.efficiency()
                    .map_or_else(|| "-".to_owned(), |e| format!("{:.0} %", e * 100.0)),
            ]
        })
        .collect();
    let left = |c: usize| c <= 2;
    if markdown {
        markdown_rows(&header, &cells, left)
    } else {
        align_table(&header, &cells, left)
    }
}

/// What the report says besides the records: how the run was made and what goes with it.
#[derive(Clone, Debug, Default)]
pub struct ReportExtras {
    /// `quick` or `full`.
    pub mode: String,
    /// Wall-clock seconds of the run (generation, measurements and checks).
    pub run_s: f64,
    /// The SVG plots written next to the report, by file name.
    pub plots: Vec<String>,
    /// The comparison with an earlier run, as a Markdown section, if asked for.
    pub compare: Option<String>,
}

/// The Markdown report: how the numbers were made, the summary, any disagreement, then the
/// section of every suite that ran, the thread scaling, the plots and the comparison.
pub fn markdown_report(env: &Environment, results: &Results, extras: &ReportExtras) -> String {
    let mut out = String::from("# hhg benchmark report\n\n");
    let _ = writeln!(out, "- When: {}", utc_timestamp(env.unix_time));
    let _ = writeln!(
        out,
        "- CPU: {} ({} logical CPUs; {})",
        env.cpu, env.logical_cpus, env.simd
    );
    if let Some(gib) = env.memory_gib {
        let _ = writeln!(out, "- Memory: {gib:.1} GiB");
    }
    let _ = writeln!(out, "- Worker threads: {}", env.threads);
    let flags = match env.rustflags.as_deref().map(str::trim) {
        Some("") => "none (portable build)".to_owned(),
        Some(flags) if flags.contains("target-cpu=native") => {
            format!("`{flags}` (native build)")
        }
        Some(flags) => format!("`{flags}`"),
        None => env.rustflags_text(),
    };
    let _ = writeln!(out, "- Build flags (RUSTFLAGS): {flags}");
    let _ = writeln!(
        out,
        "- Build: {}",
        if env.debug_assertions {
            "with debug assertions (not a release build: the timings are not meaningful)".to_owned()
        } else {
            profile_text(env.profile.as_deref())
        }
    );
    if let Some(build_s) = env.build_s {
        let _ = writeln!(out, "- Build time of the bench binary: {build_s:.0} s");
    }
    if !extras.mode.is_empty() {
        let _ = writeln!(
            out,
            "- Run: {} ({:.0} s wall clock)",
            extras.mode, extras.run_s
        );
    }
    let _ = writeln!(
        out,
        "- Peak memory: {}",
        if env.peak_memory {
            "measured by a counting global allocator in the bench binary (heap only: the most \
             bytes allocated at once during an engine's measurement, above what was allocated \
             before it; memory that bypasses Rust's allocator is not seen)"
        } else {
            "not measured (the counting allocator is not installed)"
        }
    );
    let _ = writeln!(out, "- Scene seed: {:#x}", env.seed);
    out.push('\n');

    let problems = results.problems();
    if problems.is_empty() {
        out.push_str("All engines agree on every case (pair counts and checksums).\n\n");
    } else {
        out.push_str("**THE ENGINES DISAGREE:**\n\n");
        for problem in &problems {
            let _ = writeln!(out, "- {problem}");
        }
        out.push('\n');
    }
    if !results.particles.is_empty() || !results.schemes.is_empty() || !results.broad.is_empty() {
        out.push_str("## Summary\n\n");
        out.push_str(&summary(results, true));
    }
    if !results.particles.is_empty() {
        particle_section(&mut out, &results.particles);
    }
    if !results.schemes.is_empty() {
        scheme_section(&mut out, &results.schemes);
    }
    if !results.broad.is_empty() {
        out.push('\n');
        out.push_str(&broad_report::markdown_section(
            &results.broad,
            &broad_runner::disagreements(&results.broad),
        ));
    }
    let scaling = scaling_rows(results);
    if !scaling.is_empty() {
        out.push_str("\n## Thread scaling\n\n");
        out.push_str(
            "The same case with every thread count, each in a rayon pool of its own (the main \
             run's records give its thread count). `ms` is the total (particles) or the median \
             step (broad phase); `speedup` is the one-thread time over this time, `efficiency` \
             the speedup over the thread count. Brute force and the Python peers are not \
             scaled.\n\n",
        );
        out.push_str(&scaling_table(&scaling, true));
    }
    if !extras.plots.is_empty() {
        out.push_str("\n## Plots\n\n");
        for plot in &extras.plots {
            let _ = writeln!(out, "![{plot}]({plot})\n");
        }
    }
    if let Some(compare) = &extras.compare {
        out.push('\n');
        out.push_str(compare);
    }
    out
}

/// The particle suite's part of the Markdown report: the method, the table.
fn particle_section(out: &mut String, records: &[Record]) {
    out.push_str("## Particles\n\n");
    out.push_str(
        "Each time is the best of several complete runs (structure build plus neighbour lists \
         of all points); hhg rebuilds the previous run's grid and lists in place, as a solver \
         does every time step (its buffers only grow, so a repeated run allocates nothing), \
         while the peers' APIs allocate afresh. `build` is the search structure, `query` the \
         lists. Cases ending in `-random` get the points in shuffled order, `-sorted` in hhg's \
         cell order, `-drift` in hhg's cell order with every point then moved by a seeded \
         uniform offset of up to 0.1 r per axis (an SPH solver some ten steps after it \
         reordered; other points, so other pairs), `-zorder` sorted by the Morton code of \
         their cell of edge r (stable, cells counted from the bounding box's minimum), \
         `sph-solver` in hhg-sph's own numbering of its frame (nearly cell order). \
         `vs kiddo` is kiddo's total over the engine's total on the same case; `x sorted` the \
         engine's total over its own total on the `-sorted` case. `hhg-cellorder` is hhg with \
         `ListOrder::CellOrder`: the same lists, each in the grid's cell order instead of \
         ascending (one radius in open space only). `agree` compares the unordered pair count \
         and a checksum of the pairs with the reference engine of the scene (brute force where \
         it ran, else kiddo; on `-drift`, kiddo on `-drift`). `floor ms` is \
         the time, in the same run and thread pool, to read the input once and write CSR lists \
         of the case's size (offsets and 4-byte entries) into touched buffers; `x floor` is the \
         engine's total over it. `ns/pt` and `ns/pair` divide the total by the points and by \
         the unordered pairs; `peak MiB` is the most heap the measurement held at once (lists \
         included). kiddo's and rstar's lists are left unsorted; hhg's are ascending, \
         hhg-cellorder's in cell order. The tree \
         peers search within the (largest) radius widened by 1e-5 and re-check every candidate \
         with the exact predicate. The Python peers (vesin, freud, scipy's cKDTree, matscipy) \
         run in their own process on the same points, re-check their candidates with the same \
         float32 predicate (in numpy, inside the query time) and report unique pairs; vesin, \
         scipy and matscipy use one thread.\n\n",
    );
    if !records.iter().any(|r| r.engine == Engine::Rstar) {
        out.push_str(
            "rstar did not run: the quick default leaves the R*-tree out (it is two to three \
             times slower than kiddo on every scene); `--full` and `--engine rstar` run it.\n\n",
        );
    }
    out.push_str(
        "Scenes: `uniform`, points uniform in a cube at a density of 40 expected neighbours \
         within radius 1 (fewer near the faces); `dambreak`, an SPH fluid block (1 : 2 : 1) on \
         a cubic lattice of spacing 0.5 jittered by 5 %, about 28 neighbours inside, radius 1; \
         `clustered`, 50 Gaussian clusters whose widths span 30x and populations three orders \
         of magnitude, in a mostly empty box of side 10^4, about 30 neighbours on average, \
         radius 1; `sheet`, points uniform in a slab 1024 times wider than thick, about 40 \
         neighbours within radius 1; `outlier`, the uniform cube plus one point 10^6 away on \
         every axis; `variable`, points uniform in a cube with radii log-uniform over \
         [0.25, 2] (8x), neighbours iff `|xi - xj| <= max(ri, rj)`, about 40 on average (hhg \
         runs its `VariableRadiusSearch`; the tree peers search within the largest radius and \
         re-check; its sorted order is hhg's cell order for the largest radius); `sph`, a \
         frame of hhg-sph's dam break after 25 solver steps, fluid then the three layers of \
         wall, floor and lid particles (the walls are most points below 1M), in metres, \
         radius the kernel support 2h = 2.6 spacings, about 75 neighbours per fluid particle; \
         its size is the closest that whole lattice layers allow to the one asked for.\n\n",
    );
    out.push_str(&markdown_table(records));
    let orders = order_rows(records);
    if !orders.is_empty() {
        out.push_str(
            "\n### Point orders\n\nEach engine's total in every order over its total in hhg's \
             cell order (`-sorted`), with the list pass hhg's `Grid` took (`Grid::list_pass`: in \
             cell order, near cell order, or general).\n\n",
        );
        out.push_str(&order_table(&orders, true));
    }
}

/// The scheme suite's part of the Markdown report.
fn scheme_section(out: &mut String, records: &[SchemeRecord]) {
    out.push_str("\n## Hashing schemes\n\n");
    out.push_str(
        "Every scheme behind `hhg_core::FixedRadiusScheme` builds its table and lists the \
         unique pairs of the same points (random order; best of several runs, buffers reused). \
         `cand/pair` is the scheme's candidate pair tests per true pair \
         (`stats().pair_candidates / pairs`), `max load` its fullest bucket \
         (`stats().max_load`); `agree` compares pairs and checksum with the particle suite's \
         reference on the same scene and size.\n\n",
    );
    out.push_str(&scheme_markdown_table(records));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::PairStats;

    fn sample() -> Record {
        Record {
            engine: Engine::Hhg,
            input: "uniform".into(),
            order: Some(Order::Sorted),
            n: 10_000,
            threads: 2,
            reps: 3,
            build_s: 0.001,
            query_s: 0.002,
            stats: PairStats {
                pairs: 200_000,
                checksum: 123,
                directed: 400_000,
                self_refs: 0,
            },
            vs_kiddo: Some(4.5),
            over_sorted: Some(1.0),
            list_pass: Some(ListPass::InCellOrder),
            floor_s: Some(0.01),
            peak_bytes: Some(7 << 20),
            agree: Agreement::Agrees,
        }
    }

    #[test]
    fn json_line_has_the_documented_keys() {
        let line = json_line(&sample());
        assert_eq!(
            line,
            "{\"engine\":\"hhg\",\"case\":\"uniform-sorted\",\"n\":10000,\"threads\":2,\
             \"build_s\":0.001000000,\"query_s\":0.002000000,\"total_s\":0.003000000,\"pairs\":200000,\"checksum\":123}"
        );
        assert_eq!(json_string("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
        assert_eq!(json_f64(f64::NAN), "null");
    }

    #[test]
    fn tables_have_every_column() {
        let records = [sample()];
        let text = text_table(&records);
        assert!(text.lines().next().unwrap().starts_with("engine"));
        assert!(
            text.contains("uniform-sorted") && text.contains("4.50x") && text.contains("15.00")
        );
        assert!(text.contains("7.00") && text.contains("300.0"), "{text}");
        let md = markdown_table(&records);
        assert_eq!(md.lines().count(), 3);
        assert_eq!(
            md.lines().next().unwrap().matches('|').count(),
            COLUMNS.len() + 1
        );
        let env = Environment::current(2, 1);
        let results = Results {
            particles: records.to_vec(),
            ..Results::default()
        };
        let json = results_json(&env, &results);
        assert!(json.ends_with("  \"broadphase_scaling\": [\n  ]\n}\n"));
        assert!(json.contains("\"agree\":\"yes\"") && json.contains("\"order\":\"sorted\""));
        assert!(
            json.contains("\"over_sorted\":1.0,\"list_pass\":\"in cell order\""),
            "{json}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed["results"][0]["peak_bytes"], 7 << 20);
        let report = markdown_report(&env, &results, &ReportExtras::default());
        assert!(!report.contains("Broad phase"));
        assert!(report.contains("Worker threads: 2") && report.contains("## Summary"));
    }

    #[test]
    fn disagreements_decide_the_exit_code() {
        let mut results = Results {
            particles: vec![sample()],
            ..Results::default()
        };
        assert_eq!(exit_code(&results.problems()), 0);
        results.particles[0].agree = Agreement::Differs;
        let problems = results.problems();
        assert_eq!(problems.len(), 1);
        assert_eq!(exit_code(&problems), 1);
        let env = Environment::current(2, 1);
        let report = markdown_report(&env, &results, &ReportExtras::default());
        assert!(
            report.contains("THE ENGINES DISAGREE") && report.contains("hhg on uniform-sorted")
        );
    }

    #[test]
    fn summary_and_scaling() {
        let mut kiddo = sample();
        kiddo.engine = Engine::Kiddo;
        kiddo.build_s = 0.01;
        kiddo.query_s = 0.02;
        let mut small = sample();
        small.n = 1000;
        let rows = particle_summary(&[sample(), kiddo.clone(), small]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].n, 10_000);
        let text = summary_text(&rows, "hhg");
        assert!(text.contains("hhg ms") && text.contains("kiddo ms") && text.contains("10.00x"));

        let mut main = sample();
        main.order = Some(Order::Random);
        let mut one = main.clone();
        one.threads = 1;
        one.build_s = 0.002;
        one.query_s = 0.004;
        let results = Results {
            particles: vec![main],
            scaling: vec![one],
            ..Results::default()
        };
        let rows = scaling_rows(&results);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].threads, rows[1].threads), (1, 2));
        assert!((rows[1].speedup.unwrap() - 2.0).abs() < 1e-9);
        assert!((rows[1].efficiency().unwrap() - 1.0).abs() < 1e-9);
        assert!(scaling_table(&rows, false).contains("2.00x"));
    }

    #[test]
    fn order_table_divides_by_the_sorted_time() {
        let sorted = sample();
        let at = |engine: Engine, order: Option<Order>, total: f64, pass: Option<ListPass>| {
            let mut r = sample();
            (r.engine, r.order, r.list_pass) = (engine, order, pass);
            (r.build_s, r.query_s) = (0.0, total);
            r
        };
        let records = [
            at(
                Engine::Hhg,
                Some(Order::Random),
                0.006,
                Some(ListPass::General),
            ),
            sorted.clone(),
            at(
                Engine::Hhg,
                Some(Order::Drift),
                0.0045,
                Some(ListPass::NearCellOrder),
            ),
            at(Engine::Kiddo, Some(Order::Random), 0.05, None),
            at(Engine::Kiddo, Some(Order::Sorted), 0.02, None),
            at(Engine::Kiddo, Some(Order::Zorder), 0.025, None),
        ];
        let rows = order_rows(&records);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].engine, "hhg");
        assert_eq!(rows[0].others.len(), 2);
        assert!((rows[0].others[0].1 - 2.0).abs() < 1e-9);
        assert_eq!(rows[0].others[1].0, Some(Order::Drift));
        assert_eq!(rows[1].others[1].0, Some(Order::Zorder));
        let text = order_table(&rows, false);
        let header = text.lines().next().unwrap();
        assert!(
            header.contains("random / sorted")
                && header.contains("drift / sorted")
                && header.contains("zorder / sorted"),
            "{text}"
        );
        assert!(text.contains("2.00x (general)") && text.contains("1.50x (near cell order)"));
        assert!(
            text.contains("3.000 (in cell order)") && text.contains("1.25x"),
            "{text}"
        );
        let kiddo = text.lines().nth(3).unwrap();
        assert!(kiddo.starts_with("kiddo") && kiddo.contains("2.50x") && kiddo.contains(" - "));
        assert_eq!(order_table(&rows, true).lines().count(), 4);
        // A point file's own order gets a column of its own.
        let file = at(Engine::Hhg, None, 0.009, Some(ListPass::General));
        let rows = order_rows(&[file, sorted]);
        assert!(order_table(&rows, false).contains("file / sorted"));

        let env = Environment::current(2, 1);
        let results = Results {
            particles: records.to_vec(),
            ..Results::default()
        };
        let report = markdown_report(&env, &results, &ReportExtras::default());
        assert!(report.contains("### Point orders") && report.contains("| drift / sorted |"));
    }

    #[test]
    fn variants_of_our_engine_are_not_the_best_other() {
        let mut cellorder = sample();
        cellorder.engine = Engine::HhgCellOrder;
        cellorder.query_s = 0.0001;
        let mut kiddo = sample();
        kiddo.engine = Engine::Kiddo;
        kiddo.query_s = 0.029;
        let rows = particle_summary(&[sample(), cellorder, kiddo]);
        let text = summary_text(&rows, "hhg");
        assert!(
            text.contains("hhg-cellorder ms") && text.contains("10.00x"),
            "{text}"
        );
    }

    #[test]
    fn timestamps_are_civil_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            utc_timestamp(951_782_400 + 3_661),
            "2000-02-29 01:01:01 UTC"
        );
        assert_eq!(utc_timestamp(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }
}
