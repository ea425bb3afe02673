//! Output: the console table, JSON lines, `results.json` and the Markdown report.
//!
//! The JSON is written by hand: the records are flat and a serialiser would add compile time
//! for nothing.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::broadphase::report as broad_report;
use crate::broadphase::runner::BroadRecord;
use crate::runner::Record;

/// The environment variable through which `cargo xtask bench` passes the build flags it used.
pub const RUSTFLAGS_VAR: &str = "HHG_BENCH_RUSTFLAGS";

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
    /// Whether this is a build with debug assertions (numbers from it mean little).
    pub debug_assertions: bool,
    /// The base seed of the generated scenes.
    pub seed: u64,
    /// Seconds since the Unix epoch when the report was made.
    pub unix_time: u64,
}

impl Environment {
    /// Collects the environment of this process.
    pub fn current(threads: usize, seed: u64) -> Self {
        Self {
            cpu: cpu_model(),
            logical_cpus: std::thread::available_parallelism().map_or(1, usize::from),
            threads,
            rustflags: std::env::var(RUSTFLAGS_VAR).ok(),
            debug_assertions: cfg!(debug_assertions),
            seed,
            unix_time: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
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
pub const COLUMNS: [&str; 14] = [
    "engine", "case", "n", "threads", "build ms", "query ms", "total ms", "pairs", "ns/pair",
    "checksum", "vs kiddo", "floor ms", "x floor", "agree",
];

/// The cells of one table row, formatted.
fn row(record: &Record) -> [String; 14] {
    let ms = |s: f64| format!("{:.3}", s * 1e3);
    [
        record.engine.name().to_owned(),
        record.case(),
        record.n.to_string(),
        record.threads.to_string(),
        ms(record.build_s),
        ms(record.query_s),
        ms(record.total_s()),
        record.stats.pairs.to_string(),
        record
            .ns_per_pair()
            .map_or_else(|| "-".to_owned(), |ns| format!("{ns:.2}")),
        record.stats.checksum.to_string(),
        record
            .vs_kiddo
            .map_or_else(|| "-".to_owned(), |x| format!("{x:.2}x")),
        record.floor_s.map_or_else(|| "-".to_owned(), ms),
        record.floor_s.map_or_else(
            || "-".to_owned(),
            |floor| format!("{:.1}x", record.total_s() / floor),
        ),
        record.agree.to_string(),
    ]
}

/// The result table with aligned columns, for the terminal.
pub fn text_table(records: &[Record]) -> String {
    let rows: Vec<[String; 14]> = records.iter().map(row).collect();
    let mut widths = COLUMNS.map(str::len);
    for cells in &rows {
        for (w, cell) in widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.len());
        }
    }
    // Text columns are left-aligned, numbers right-aligned.
    let left = |c: usize| c <= 1 || c == COLUMNS.len() - 1;
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
    line(&mut out, &COLUMNS.map(str::to_owned));
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(&mut out, &rule);
    for cells in &rows {
        line(&mut out, cells);
    }
    out
}

/// The result table in Markdown.
pub fn markdown_table(records: &[Record]) -> String {
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", COLUMNS.join(" | ")));
    let align: Vec<&str> = (0..COLUMNS.len())
        .map(|c| {
            if c <= 1 || c == COLUMNS.len() - 1 {
                "---"
            } else {
                "---:"
            }
        })
        .collect();
    out.push_str(&format!("| {} |\n", align.join(" | ")));
    for record in records {
        out.push_str(&format!("| {} |\n", row(record).join(" | ")));
    }
    out
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
        "{{\"engine\":{},\"case\":{},\"input\":{},\"order\":{},\"n\":{},\"threads\":{},\"reps\":{},\"build_s\":{},\"query_s\":{},\"total_s\":{},\"pairs\":{},\"checksum\":{},\"ns_per_pair\":{},\"vs_kiddo\":{},\"floor_s\":{},\"vs_floor\":{},\"agree\":{}}}",
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
        record.stats.pairs,
        record.stats.checksum,
        opt(record.ns_per_pair()),
        opt(record.vs_kiddo),
        opt(record.floor_s),
        opt(record.floor_s.map(|floor| record.total_s() / floor)),
        json_string(&record.agree.to_string())
    )
}

/// The contents of `results.json`: the environment, every record of the particle suite under
/// `results` and, when the broad-phase suite ran, its records under `broadphase`.
pub fn results_json(env: &Environment, records: &[Record], broad: &[BroadRecord]) -> String {
    let mut out = String::from("{\n");
    let _ = writeln!(out, "  \"tool\": \"hhg-bench\",");
    let _ = writeln!(out, "  \"unix_time\": {},", env.unix_time);
    let _ = writeln!(out, "  \"cpu\": {},", json_string(&env.cpu));
    let _ = writeln!(out, "  \"logical_cpus\": {},", env.logical_cpus);
    let _ = writeln!(out, "  \"threads\": {},", env.threads);
    let _ = writeln!(
        out,
        "  \"rustflags\": {},",
        env.rustflags
            .as_deref()
            .map_or_else(|| "null".to_owned(), json_string)
    );
    let _ = writeln!(out, "  \"debug_assertions\": {},", env.debug_assertions);
    let _ = writeln!(out, "  \"seed\": {},", env.seed);
    out.push_str("  \"results\": [\n");
    for (i, record) in records.iter().enumerate() {
        let comma = if i + 1 < records.len() { "," } else { "" };
        let _ = writeln!(out, "    {}{comma}", json_record(record));
    }
    if broad.is_empty() {
        out.push_str("  ]\n}\n");
        return out;
    }
    out.push_str("  ],\n  \"broadphase\": [\n");
    for (i, record) in broad.iter().enumerate() {
        let comma = if i + 1 < broad.len() { "," } else { "" };
        let _ = writeln!(out, "    {}{comma}", broad_report::json_record(record));
    }
    out.push_str("  ]\n}\n");
    out
}

/// What the broad-phase suite contributes to the Markdown report.
#[derive(Clone, Copy, Debug, Default)]
pub struct BroadSection<'a> {
    /// The suite's records; none when it did not run.
    pub records: &'a [BroadRecord],
    /// Its disagreements, one line each.
    pub problems: &'a [String],
}

/// The Markdown report: how the numbers were made, then the table of the particle suite (when
/// it ran) and the section of the broad-phase suite (when it ran).
pub fn markdown_report(
    env: &Environment,
    records: &[Record],
    problems: &[String],
    broad: BroadSection<'_>,
) -> String {
    let mut out = String::from("# hhg benchmark report\n\n");
    let _ = writeln!(out, "- When: {}", utc_timestamp(env.unix_time));
    let _ = writeln!(
        out,
        "- CPU: {} ({} logical CPUs)",
        env.cpu, env.logical_cpus
    );
    let _ = writeln!(out, "- Worker threads: {}", env.threads);
    let flags = match env.rustflags.as_deref().map(str::trim) {
        Some("") => "none".to_owned(),
        Some(flags) => format!("`{flags}`"),
        None => env.rustflags_text(),
    };
    let _ = writeln!(out, "- Build flags (RUSTFLAGS): {flags}");
    let _ = writeln!(
        out,
        "- Build: {}",
        if env.debug_assertions {
            "with debug assertions (not a release build: the timings are not meaningful)"
        } else {
            "release profile"
        }
    );
    let _ = writeln!(out, "- Scene seed: {:#x}", env.seed);
    out.push('\n');
    if !records.is_empty() {
        particle_section(&mut out, records, problems);
    }
    if !broad.records.is_empty() {
        if !records.is_empty() {
            out.push('\n');
        }
        out.push_str(&broad_report::markdown_section(
            broad.records,
            broad.problems,
        ));
    }
    out
}

/// The particle suite's part of the Markdown report: the method, any disagreement, the table.
fn particle_section(out: &mut String, records: &[Record], problems: &[String]) {
    out.push_str(
        "Each time is the best of several complete runs (structure build plus neighbour lists of \
         all points); hhg rebuilds the previous run's grid and lists in place, as a solver does \
         every time step (its buffers only grow, so a repeated run allocates nothing), while the \
         peers' APIs allocate afresh. `build` is the search structure, `query` the lists. Cases ending in `-random` get the points in shuffled order, `-sorted` in hhg's \
         cell order. `vs kiddo` is kiddo's total over the engine's total on the same case; \
         `agree` compares the unordered pair count and a checksum of the pairs with the \
         reference engine of the scene (brute force where it ran, else kiddo). `floor ms` is the \
         time, in the same run and thread pool, to read the input once and write CSR lists of \
         the case's size (offsets and 4-byte entries) into touched buffers; `x floor` is the \
         engine's total over it. kiddo's lists are left unsorted; hhg's are ascending.\n\n",
    );
    out.push_str(
        "Scenes (radius 1): `uniform`, points uniform in a cube at a density of 40 expected \
         neighbours (fewer near the faces); `dambreak`, an SPH fluid block (1 : 2 : 1) on a \
         cubic lattice of spacing 0.5 jittered by 5 %, about 28 neighbours inside; `clustered`, \
         50 Gaussian clusters whose widths span 30x and populations three orders of magnitude, \
         in a mostly empty box of side 10^4, about 30 neighbours on average.\n\n",
    );
    if problems.is_empty() {
        out.push_str("All engines agree on every case.\n\n");
    } else {
        out.push_str("**The engines disagree:**\n\n");
        for problem in problems {
            let _ = writeln!(out, "- {problem}");
        }
        out.push('\n');
    }
    out.push_str(&markdown_table(records));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::Engine;
    use crate::pairs::PairStats;
    use crate::runner::{Agreement, Order};

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
            floor_s: Some(0.01),
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
        let md = markdown_table(&records);
        assert_eq!(md.lines().count(), 3);
        assert_eq!(
            md.lines().next().unwrap().matches('|').count(),
            COLUMNS.len() + 1
        );
        let env = Environment::current(2, 1);
        let json = results_json(&env, &records, &[]);
        assert!(json.ends_with("  ]\n}\n") && !json.contains("broadphase"));
        assert!(json.contains("\"agree\":\"yes\"") && json.contains("\"order\":\"sorted\""));
        let report = markdown_report(
            &env,
            &records,
            &["x differs".into()],
            BroadSection::default(),
        );
        assert!(!report.contains("Broad phase"));
        assert!(report.contains("- x differs") && report.contains("Worker threads: 2"));
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
