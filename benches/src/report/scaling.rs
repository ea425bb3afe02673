//! The thread-scaling table: each scaled case and engine at every thread count, with its
//! speedup over one thread and its efficiency.

use crate::broadphase::runner::BroadRecord;
use crate::particles::engines::Engine;
use crate::particles::record::{Order, Record};
use crate::report::results::Results;
use crate::table::{align_table, markdown_rows};

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
