//! Output of the scheme suite: its console and Markdown tables, JSON objects and its section of
//! the Markdown report.

use crate::json::{json_f64, json_seconds, json_string};
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

/// The JSON object of a scheme record.
pub fn json_scheme(r: &SchemeRecord) -> String {
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
