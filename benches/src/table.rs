//! Tables of formatted cells, aligned for the terminal or written as Markdown; every suite's
//! report lays out its rows with these.

use std::fmt::Write as _;

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
