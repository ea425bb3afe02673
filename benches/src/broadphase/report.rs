//! Output of the broad-phase suite: its console table, JSON lines and objects, and Markdown.

use std::fmt::Write as _;

use serde::Serialize;

use crate::broadphase::engines::BroadEngine;
use crate::broadphase::runner::BroadRecord;
use crate::broadphase::scenario::{
    EDGE_MAX, EDGE_MIN, HUGE_FINITE, HUGE_INFINITE, LONG_EDGE, MAX_STEP_FRACTION,
    OVERLAPS_PER_OBJECT, STATIC_FRACTION,
};
use crate::json::seconds;
use crate::memory::mib;
use crate::table::{align_table, markdown_rows};

/// The column headers of the broad-phase table.
pub const COLUMNS: [&str; 17] = [
    "engine",
    "case",
    "n",
    "threads",
    "steps",
    "setup ms",
    "update ms",
    "detect ms",
    "step ms",
    "ns/box",
    "pairs",
    "pairs/box",
    "checksum",
    "memory MiB",
    "peak MiB",
    "vs hhg",
    "agree",
];

/// Whether column `c` is text (left-aligned) rather than a number.
fn is_text(c: usize) -> bool {
    c <= 1 || c == COLUMNS.len() - 1
}

/// The cells of one table row, formatted.
fn row(record: &BroadRecord) -> [String; 17] {
    let ms = |s: f64| format!("{:.3}", s * 1e3);
    [
        record.engine.name().to_owned(),
        record.scene.name().to_owned(),
        record.n.to_string(),
        record.threads.to_string(),
        record.steps.to_string(),
        ms(record.setup_s),
        ms(record.update_s),
        ms(record.detect_s),
        ms(record.step_s),
        format!("{:.1}", record.ns_per_box()),
        record.stats.pairs.to_string(),
        format!("{:.3}", record.pairs_per_box()),
        record.stats.checksum.to_string(),
        format!("{:.2}", record.heap_bytes as f64 / (1 << 20) as f64),
        mib(record.peak_bytes),
        record
            .vs_hhg
            .map_or_else(|| "-".to_owned(), |x| format!("{x:.2}x")),
        record.agree.to_string(),
    ]
}

/// The header and the formatted rows of the broad-phase table.
fn header_and_rows(records: &[BroadRecord]) -> (Vec<String>, Vec<Vec<String>>) {
    let header = COLUMNS.map(str::to_owned).to_vec();
    let rows = records.iter().map(|r| row(r).to_vec()).collect();
    (header, rows)
}

/// The broad-phase table with aligned columns, for the terminal.
pub fn text_table(records: &[BroadRecord]) -> String {
    let (header, rows) = header_and_rows(records);
    align_table(&header, &rows, is_text)
}

/// The broad-phase table in Markdown.
pub fn markdown_table(records: &[BroadRecord]) -> String {
    let (header, rows) = header_and_rows(records);
    markdown_rows(&header, &rows, is_text)
}

/// The one-line JSON summary of a record.
#[derive(Serialize)]
struct JsonLine {
    suite: &'static str,
    engine: &'static str,
    case: &'static str,
    n: usize,
    threads: usize,
    #[serde(serialize_with = "seconds")]
    setup_s: f64,
    #[serde(serialize_with = "seconds")]
    update_s: f64,
    #[serde(serialize_with = "seconds")]
    detect_s: f64,
    #[serde(serialize_with = "seconds")]
    step_s: f64,
    pairs: u64,
    checksum: u64,
}

/// The one-line JSON summary of a record.
pub fn json_line(record: &BroadRecord) -> String {
    let line = JsonLine {
        suite: "broadphase",
        engine: record.engine.name(),
        case: record.scene.name(),
        n: record.n,
        threads: record.threads,
        setup_s: record.setup_s,
        update_s: record.update_s,
        detect_s: record.detect_s,
        step_s: record.step_s,
        pairs: record.stats.pairs,
        checksum: record.stats.checksum,
    };
    serde_json::to_string(&line).expect("serde_json writes any struct of strings and numbers")
}

/// The full JSON object of a record, as the `broadphase` and `broadphase_scaling` lists of
/// `results.json` have it.
#[derive(Serialize)]
pub struct JsonRecord {
    engine: &'static str,
    case: &'static str,
    n: usize,
    threads: usize,
    steps: usize,
    #[serde(serialize_with = "seconds")]
    setup_s: f64,
    #[serde(serialize_with = "seconds")]
    update_s: f64,
    #[serde(serialize_with = "seconds")]
    detect_s: f64,
    /// The median step.
    #[serde(serialize_with = "seconds")]
    step_s: f64,
    /// The median step again, under the name that `--compare` reads for every suite.
    #[serde(serialize_with = "seconds")]
    total_s: f64,
    ns_per_box: f64,
    pairs: u64,
    pairs_per_box: f64,
    checksum: u64,
    /// The pairs of every step, the setup and the warm-up step included.
    step_pairs: Vec<u64>,
    heap_bytes: usize,
    peak_bytes: Option<u64>,
    vs_hhg: Option<f64>,
    agree: String,
}

impl From<&BroadRecord> for JsonRecord {
    fn from(record: &BroadRecord) -> Self {
        Self {
            engine: record.engine.name(),
            case: record.scene.name(),
            n: record.n,
            threads: record.threads,
            steps: record.steps,
            setup_s: record.setup_s,
            update_s: record.update_s,
            detect_s: record.detect_s,
            step_s: record.step_s,
            total_s: record.step_s,
            ns_per_box: record.ns_per_box(),
            pairs: record.stats.pairs,
            pairs_per_box: record.pairs_per_box(),
            checksum: record.stats.checksum,
            step_pairs: record.step_stats.iter().map(|s| s.pairs).collect(),
            heap_bytes: record.heap_bytes,
            peak_bytes: record.peak_bytes,
            vs_hhg: record.vs_hhg,
            agree: record.agree.to_string(),
        }
    }
}

/// The broad-phase section of the Markdown report: the method, any disagreement, the table.
pub fn markdown_section(records: &[BroadRecord], problems: &[String]) -> String {
    let mut out = String::from("## Broad phase\n\n");
    let _ = write!(
        out,
        "`cuboids` is the scenario of Schornbaum's thesis (§4): random axis-aligned cuboids with \
         every edge uniform in [{EDGE_MIN}, {EDGE_MAX}] (sizes differ by up to 12x), lower \
         corners uniform in a cube sized for {OVERLAPS_PER_OBJECT} overlapping pairs per box, \
         each box moving at a constant velocity of up to {:.0} % of its longest edge per step. \
         The motion wraps around the cube; detection does not (pairs across the periodic \
         boundary are not counted). Overlap is closed on every axis: touching boxes overlap. \
         `long`: {LONG_EDGE} x 1 x 1 objects along a random axis each, the cube sized for the \
         same density. `static`: the cuboids, {:.0} % of them static (never moving, never paired \
         with each other: hhg runs its persistent `Scene` with `Motion::Static`, parry updates \
         only the moving leaves, sap and brute force drop static-static pairs while writing \
         them out). `huge`: the cuboids plus {HUGE_FINITE} motionless boxes a quarter to half \
         the cube's edge wide and {HUGE_INFINITE} infinite slabs (a floor and a wall); parry, \
         whose BVH takes finite boxes only, skips it.\n\n",
        MAX_STEP_FRACTION * 100.0,
        STATIC_FRACTION * 100.0
    );
    out.push_str(
        "Each engine replays the same scenario: `setup` builds its structure on the first \
         step's boxes; after one untimed warm-up step, each measured step moves the boxes \
         (untimed), brings the structure up to date (`update`) and writes every pair once as \
         `[i, j]`, `i < j` (`detect`). The times are medians over the measured steps; `step` is \
         the median of update plus detection. hhg rebuilds its hierarchical hash grid in place \
         every step; `sap` is Terdiman's box pruning (radix sort on `min.x`, then a parallel \
         sweep with an 8-lane SIMD `y`/`z` test); `parry` is parry3d's dynamic BVH, updated as \
         rapier does (leaves written in place, parallel refit, incremental optimisation) and \
         traversed against itself in parallel, its candidates re-checked with the exact rule; \
         `brute` tests all pairs (up to 20000 boxes). `ns/box` is the median step over the \
         boxes. `memory` is the heap held by the structure after the last step, the pair output \
         excluded, as each engine counts it (parry's private workspace is not counted); `peak` \
         is the most heap the whole run held at once above what was in use before it \
         (scenario, structure and pairs), measured by the bench's counting allocator. `vs hhg` \
         is hhg's step time over the engine's (below 1: slower than hhg). `agree` compares the \
         pair count and checksum of every step, setup included, with the reference (brute force where it ran, else sap).\n\n",
    );
    if !BroadEngine::Parry.built() {
        out.push_str(
            "parry did not run: this build of the bench leaves parry3d out (the quick default \
             does, to halve a cold build); `cargo xtask bench --full`, `--engine parry` or \
             `--suite broadphase` builds it in.\n\n",
        );
    }
    if problems.is_empty() {
        out.push_str("All broad-phase engines agree on every step.\n\n");
    } else {
        out.push_str("**The broad-phase engines disagree:**\n\n");
        for problem in problems {
            let _ = writeln!(out, "- {problem}");
        }
        out.push('\n');
    }
    out.push_str(&markdown_table(records));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::PairListStats;
    use crate::broadphase::engines::BroadEngine;
    use crate::suite::Agreement;

    fn sample() -> BroadRecord {
        let stats = PairListStats {
            pairs: 2000,
            checksum: 42,
            misordered: 0,
        };
        BroadRecord {
            engine: BroadEngine::Sap,
            scene: crate::broadphase::scenario::BroadScene::Cuboids,
            n: 1000,
            threads: 2,
            steps: 5,
            setup_s: 0.004,
            update_s: 0.001,
            detect_s: 0.002,
            step_s: 0.003,
            stats,
            step_stats: vec![stats; 3],
            heap_bytes: 3 << 20,
            peak_bytes: Some(5 << 20),
            vs_hhg: Some(0.5),
            agree: Agreement::Agrees,
        }
    }

    #[test]
    fn tables_and_json_have_every_column() {
        let records = [sample()];
        let text = text_table(&records);
        assert!(text.lines().next().unwrap().starts_with("engine"));
        assert!(text.contains("0.50x") && text.contains("3.00") && text.contains("2.000"));
        assert!(text.contains("cuboids") && text.contains("5.00") && text.contains("3000.0"));
        let md = markdown_table(&records);
        assert_eq!(md.lines().count(), 3);
        assert_eq!(
            md.lines().next().unwrap().matches('|').count(),
            COLUMNS.len() + 1
        );
        assert_eq!(
            json_line(&records[0]),
            "{\"suite\":\"broadphase\",\"engine\":\"sap\",\"case\":\"cuboids\",\"n\":1000,\
             \"threads\":2,\"setup_s\":0.004,\"update_s\":0.001,\"detect_s\":0.002,\
             \"step_s\":0.003,\"pairs\":2000,\"checksum\":42}"
        );
        let full = serde_json::to_string(&JsonRecord::from(&records[0])).unwrap();
        assert!(
            full.contains("\"step_pairs\":[2000,2000,2000]") && full.contains("\"agree\":\"yes\"")
        );
        let section = markdown_section(&records, &["x differs".into()]);
        assert!(section.starts_with("## Broad phase") && section.contains("- x differs"));
    }

    #[test]
    fn the_suite_joins_the_result_files() {
        let records = vec![sample(), sample()];
        let env = crate::report::Environment::current(2, 1);
        let results = crate::report::Results {
            broad: records,
            ..crate::report::Results::default()
        };
        let json = crate::report::results_json(&env, &results);
        assert!(json.contains("\"results\": [],\n  \"schemes\": [],\n  \"broadphase\": [\n"));
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        let broad = parsed["broadphase"].as_array().unwrap();
        assert_eq!(broad.len(), 2);
        assert!(
            broad
                .iter()
                .all(|r| r["engine"] == "sap" && r["total_s"] == 0.003)
        );
        let report =
            crate::report::markdown_report(&env, &results, &crate::report::ReportExtras::default());
        assert!(report.contains("## Broad phase") && !report.contains("kiddo"));
        assert!(report.contains("All broad-phase engines agree"));
    }
}
