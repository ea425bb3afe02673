//! The summary at the end of a run: for each suite, every case at its largest size with the
//! time of every engine, and our engine's speedup over the fastest other one.

use std::fmt::Write as _;

use crate::broadphase::runner::BroadRecord;
use crate::particles::record::Record;
use crate::report::results::Results;
use crate::schemes::SchemeRecord;
use crate::suite::Agreement;
use crate::table::{align_table, markdown_rows};

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
