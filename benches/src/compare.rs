//! `--compare OLD_RESULTS.json`: the time of every case measured in both runs, old against
//! new, as a table of ratios.
//!
//! Entries are matched by section (`results`, `schemes`, `broadphase`, `scaling`,
//! `broadphase_scaling`), engine, case, size and thread count. The time compared is
//! `total_s` (build plus query or search), or the median `step_s` of the broad phase; files
//! written before those sections existed are read as far as they go.

use std::fmt::Write as _;

use serde::Deserialize;

use crate::table::{align_table, markdown_rows};

/// The sections of `results.json` that hold timed records.
pub const SECTIONS: [&str; 5] = [
    "results",
    "schemes",
    "broadphase",
    "scaling",
    "broadphase_scaling",
];

/// One timed record of a results file.
#[derive(Clone, Debug, PartialEq)]
pub struct Timed {
    /// The section it came from.
    pub section: String,
    /// The engine or scheme.
    pub engine: String,
    /// The case.
    pub case: String,
    /// The size.
    pub n: u64,
    /// Threads.
    pub threads: u64,
    /// Seconds: `total_s`, else `step_s`.
    pub seconds: f64,
}

/// What `--compare` reads of `results.json`: the tool's name and the timed sections, each
/// missing from files older than it.
#[derive(Deserialize)]
struct ResultsFile {
    tool: Option<String>,
    #[serde(default)]
    results: Vec<Entry>,
    #[serde(default)]
    schemes: Vec<Entry>,
    #[serde(default)]
    broadphase: Vec<Entry>,
    #[serde(default)]
    scaling: Vec<Entry>,
    #[serde(default)]
    broadphase_scaling: Vec<Entry>,
}

/// What `--compare` reads of a record; a record without one of these is left out.
#[derive(Deserialize)]
struct Entry {
    engine: Option<String>,
    case: Option<String>,
    n: Option<u64>,
    threads: Option<u64>,
    total_s: Option<f64>,
    step_s: Option<f64>,
}

/// Reads the timed records of a `results.json` text.
pub fn timed_records(json: &str) -> Result<Vec<Timed>, String> {
    let file: ResultsFile =
        serde_json::from_str(json).map_err(|e| format!("not a results.json of hhg-bench: {e}"))?;
    if file.tool.as_deref() != Some("hhg-bench") {
        return Err("not a results.json of hhg-bench (no \"tool\": \"hhg-bench\")".into());
    }
    let sections = [
        file.results,
        file.schemes,
        file.broadphase,
        file.scaling,
        file.broadphase_scaling,
    ];
    let mut out = Vec::new();
    for (section, entries) in SECTIONS.into_iter().zip(sections) {
        for entry in entries {
            if let (Some(engine), Some(case), Some(n), Some(threads), Some(seconds)) = (
                entry.engine,
                entry.case,
                entry.n,
                entry.threads,
                entry.total_s.or(entry.step_s),
            ) {
                out.push(Timed {
                    section: section.to_owned(),
                    engine,
                    case,
                    n,
                    threads,
                    seconds,
                });
            }
        }
    }
    Ok(out)
}

/// A case measured in both runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    /// The new run's record (its seconds are the new time).
    pub new: Timed,
    /// The old run's seconds.
    pub old_seconds: f64,
}

impl Ratio {
    /// New time over old time: below 1 is faster now.
    pub fn ratio(&self) -> f64 {
        self.new.seconds / self.old_seconds
    }
}

/// The cases of `new` that `old` measured too, in `new`'s order.
pub fn ratios(old: &[Timed], new: &[Timed]) -> Vec<Ratio> {
    new.iter()
        .filter_map(|n| {
            old.iter()
                .find(|o| {
                    o.section == n.section
                        && o.engine == n.engine
                        && o.case == n.case
                        && o.n == n.n
                        && o.threads == n.threads
                })
                .map(|o| Ratio {
                    new: n.clone(),
                    old_seconds: o.seconds,
                })
        })
        .collect()
}

/// The geometric mean of the ratios, if there are any.
pub fn geometric_mean(ratios: &[Ratio]) -> Option<f64> {
    let logs: Vec<f64> = ratios
        .iter()
        .map(Ratio::ratio)
        .filter(|r| r.is_finite() && *r > 0.0)
        .map(f64::ln)
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

/// The ratio table (text or Markdown), with a line for the geometric mean.
pub fn table(ratios: &[Ratio], markdown: bool) -> String {
    let header: Vec<String> = [
        "section", "engine", "case", "n", "threads", "old ms", "new ms", "new/old",
    ]
    .map(str::to_owned)
    .to_vec();
    let rows: Vec<Vec<String>> = ratios
        .iter()
        .map(|r| {
            vec![
                r.new.section.clone(),
                r.new.engine.clone(),
                r.new.case.clone(),
                r.new.n.to_string(),
                r.new.threads.to_string(),
                format!("{:.3}", r.old_seconds * 1e3),
                format!("{:.3}", r.new.seconds * 1e3),
                format!("{:.2}", r.ratio()),
            ]
        })
        .collect();
    let left = |c: usize| c <= 2;
    let mut out = if markdown {
        markdown_rows(&header, &rows, left)
    } else {
        align_table(&header, &rows, left)
    };
    match geometric_mean(ratios) {
        Some(mean) => {
            let _ = writeln!(
                out,
                "\n{} cases in both runs; geometric mean of new/old: {mean:.3} (below 1: faster now)",
                ratios.len()
            );
        }
        None => out.push_str("\nNo case was measured in both runs.\n"),
    }
    out
}

/// The Markdown section of the report comparing with `old_name`.
pub fn markdown_section(old_name: &str, ratios: &[Ratio]) -> String {
    format!(
        "## Compared with {old_name}\n\nTimes of the cases measured in both runs (same engine, \
         case, size and threads); `new/old` below 1 means faster now.\n\n{}",
        table(ratios, true)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A results.json written by the bench before its JSON went through serde (two records
    /// of each section kept), so that `--compare` keeps reading the files of earlier runs.
    const RESULTS_BEFORE_SERDE: &str = include_str!("../testdata/results-before-serde.json");

    #[test]
    fn results_of_earlier_versions_are_read() {
        let old = timed_records(RESULTS_BEFORE_SERDE).unwrap();
        assert_eq!(old.len(), 10);
        for section in SECTIONS {
            assert_eq!(old.iter().filter(|t| t.section == section).count(), 2);
        }
        let same = ratios(&old, &old);
        assert_eq!(same.len(), 10);
        assert!(same.iter().all(|r| r.ratio() == 1.0));
    }

    const OLD: &str = r#"{
      "tool": "hhg-bench",
      "results": [
        {"engine":"hhg","case":"uniform-random","n":1000,"threads":2,"total_s":0.004,"pairs":1},
        {"engine":"kiddo","case":"uniform-random","n":1000,"threads":2,"total_s":0.010}
      ],
      "broadphase": [
        {"engine":"sap","case":"cuboids","n":1000,"threads":2,"step_s":0.002}
      ]
    }"#;

    const NEW: &str = r#"{
      "tool": "hhg-bench",
      "results": [
        {"engine":"hhg","case":"uniform-random","n":1000,"threads":2,"total_s":0.002},
        {"engine":"hhg","case":"uniform-random","n":1000,"threads":1,"total_s":0.003},
        {"engine":"rstar","case":"uniform-random","n":1000,"threads":2,"total_s":0.020}
      ],
      "schemes": [],
      "broadphase": [
        {"engine":"sap","case":"cuboids","n":1000,"threads":2,"step_s":0.003,"total_s":0.003}
      ]
    }"#;

    #[test]
    fn ratios_of_matching_cases() {
        let old = timed_records(OLD).unwrap();
        let new = timed_records(NEW).unwrap();
        assert_eq!(old.len(), 3);
        assert_eq!(new.len(), 4);
        let r = ratios(&old, &new);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].new.engine, "hhg");
        assert!((r[0].ratio() - 0.5).abs() < 1e-12);
        assert!((r[1].ratio() - 1.5).abs() < 1e-12);
        let mean = geometric_mean(&r).unwrap();
        assert!((mean - 0.75f64.sqrt()).abs() < 1e-12);
        let text = table(&r, false);
        assert!(text.contains("new/old") && text.contains("0.50") && text.contains("1.50"));
        assert!(text.contains("2 cases in both runs"));
        let md = markdown_section("old.json", &r);
        assert!(md.starts_with("## Compared with old.json") && md.contains("| results |"));
        assert!(table(&[], false).contains("No case"));
    }

    #[test]
    fn foreign_files_are_refused() {
        assert!(timed_records("{\"tool\":\"other\"}").is_err());
        assert!(timed_records("not json").is_err());
    }
}
