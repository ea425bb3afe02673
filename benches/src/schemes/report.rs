//! Output of the scheme suite: its console and Markdown tables, JSON objects and its section of
//! the Markdown report.

use serde::Serialize;

use crate::json::seconds;
use crate::memory::mib;
use crate::schemes::SchemeRecord;
use crate::table::{align_table, markdown_rows};

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

/// The JSON object of a scheme record, as the `schemes` list of `results.json` has it.
#[derive(Serialize)]
pub struct JsonScheme {
    /// The scheme, under the key the other suites give their engines.
    engine: &'static str,
    case: String,
    n: usize,
    threads: usize,
    reps: usize,
    #[serde(serialize_with = "seconds")]
    build_s: f64,
    #[serde(serialize_with = "seconds")]
    search_s: f64,
    #[serde(serialize_with = "seconds")]
    total_s: f64,
    pairs: u64,
    checksum: u64,
    pair_candidates: u64,
    candidates_per_pair: Option<f64>,
    max_load: usize,
    buckets: usize,
    occupied: usize,
    peak_bytes: Option<u64>,
    agree: String,
}

impl From<&SchemeRecord> for JsonScheme {
    fn from(r: &SchemeRecord) -> Self {
        Self {
            engine: r.scheme.name(),
            case: r.case(),
            n: r.n,
            threads: r.threads,
            reps: r.reps,
            build_s: r.build_s,
            search_s: r.search_s,
            total_s: r.total_s(),
            pairs: r.stats.pairs,
            checksum: r.stats.checksum,
            pair_candidates: r.scheme_stats.pair_candidates,
            candidates_per_pair: r.candidates_per_pair(),
            max_load: r.scheme_stats.max_load,
            buckets: r.scheme_stats.buckets,
            occupied: r.scheme_stats.occupied,
            peak_bytes: r.peak_bytes,
            agree: r.agree.to_string(),
        }
    }
}

/// The scheme suite's part of the Markdown report.
pub fn scheme_section(out: &mut String, records: &[SchemeRecord]) {
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
