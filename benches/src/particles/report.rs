//! Output of the particle suite: its console and Markdown tables, JSON lines and objects, the
//! point-order table and its section of the Markdown report.

use hhg_core::ListPass;
use serde::Serialize;

use crate::json::seconds;
use crate::memory::mib;
use crate::particles::engines::{Engine, list_pass_name};
use crate::particles::record::{Order, Record};
use crate::table::{align_table, markdown_rows};

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

/// The one-line JSON summary of a record, with exactly the documented keys (the contract of
/// `--points FILE --json`, which the Python peers answer in too).
#[derive(Serialize)]
struct JsonLine {
    engine: &'static str,
    case: String,
    n: usize,
    threads: usize,
    #[serde(serialize_with = "seconds")]
    build_s: f64,
    #[serde(serialize_with = "seconds")]
    query_s: f64,
    #[serde(serialize_with = "seconds")]
    total_s: f64,
    pairs: u64,
    checksum: u64,
}

/// The one-line JSON summary of a record, with exactly the documented keys.
pub fn json_line(record: &Record) -> String {
    let line = JsonLine {
        engine: record.engine.name(),
        case: record.case(),
        n: record.n,
        threads: record.threads,
        build_s: record.build_s,
        query_s: record.query_s,
        total_s: record.total_s(),
        pairs: record.stats.pairs,
        checksum: record.stats.checksum,
    };
    serde_json::to_string(&line).expect("serde_json writes any struct of strings and numbers")
}

/// The full JSON object of a record, as the `results` and `scaling` lists of `results.json`
/// have it.
#[derive(Serialize)]
pub struct JsonRecord<'a> {
    engine: &'static str,
    case: String,
    /// The scene's name or the point file's stem.
    input: &'a str,
    order: Option<&'static str>,
    n: usize,
    threads: usize,
    reps: usize,
    #[serde(serialize_with = "seconds")]
    build_s: f64,
    #[serde(serialize_with = "seconds")]
    query_s: f64,
    #[serde(serialize_with = "seconds")]
    total_s: f64,
    ns_per_point: f64,
    pairs: u64,
    checksum: u64,
    ns_per_pair: Option<f64>,
    peak_bytes: Option<u64>,
    vs_kiddo: Option<f64>,
    over_sorted: Option<f64>,
    list_pass: Option<&'static str>,
    floor_s: Option<f64>,
    /// The total time over the floor.
    vs_floor: Option<f64>,
    agree: String,
}

impl<'a> From<&'a Record> for JsonRecord<'a> {
    fn from(record: &'a Record) -> Self {
        Self {
            engine: record.engine.name(),
            case: record.case(),
            input: &record.input,
            order: record.order.map(Order::name),
            n: record.n,
            threads: record.threads,
            reps: record.reps,
            build_s: record.build_s,
            query_s: record.query_s,
            total_s: record.total_s(),
            ns_per_point: record.ns_per_point(),
            pairs: record.stats.pairs,
            checksum: record.stats.checksum,
            ns_per_pair: record.ns_per_pair(),
            peak_bytes: record.peak_bytes,
            vs_kiddo: record.vs_kiddo,
            over_sorted: record.over_sorted,
            list_pass: record.list_pass.map(list_pass_name),
            floor_s: record.floor_s,
            vs_floor: record.floor_s.map(|floor| record.total_s() / floor),
            agree: record.agree.to_string(),
        }
    }
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

/// The particle suite's part of the Markdown report: the method, the table.
pub fn particle_section(out: &mut String, records: &[Record]) {
    out.push_str("## Particles\n\n");
    out.push_str(
        "Each time is the best of several complete runs (structure build plus neighbour lists \
         of all points); hhg rebuilds the previous run's grid and lists in place, as a solver \
         does every time step (its buffers only grow, so a repeated run allocates nothing), \
         while the peers' APIs allocate afresh. `build` is the search structure, `query` the \
         lists. Cases ending in `-random` get the points in shuffled order, `-sorted` in hhg's \
         cell order, `-drift` in hhg's cell order with every point then moved by a seeded \
         uniform offset of up to 0.1 r per axis (an SPH solver some ten steps after it \
         reordered; other points, so other pairs), `-step` the same with offsets of up to \
         0.005 r (about one solver step after a reorder), `-zorder` sorted by the Morton code of \
         their cell of edge r (stable, cells counted from the bounding box's minimum), \
         `sph-solver` in hhg-sph's own numbering of its frame (nearly cell order). \
         `vs kiddo` is kiddo's total over the engine's total on the same case; `x sorted` the \
         engine's total over its own total on the `-sorted` case. `hhg-cellorder` is hhg with \
         `ListOrder::CellOrder`: the same lists, each in the grid's cell order instead of \
         ascending (one radius in open space only). `agree` compares the unordered pair count \
         and a checksum of the pairs with the reference engine of the scene (brute force where \
         it ran, else kiddo; on `-drift` and `-step`, kiddo on the same case). `floor ms` is \
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
         scipy and matscipy use one thread. hhg-python is hhg's own Python package: in open \
         space the Rust engine's calls (`Grid.build`, `neighbor_lists`) through the binding on \
         the same float32 points, without a re-check (its time beside hhg's is the binding's \
         cost); in a periodic box its vesin-compatible `NeighborList` in float64, re-checked \
         like vesin.\n\n",
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
         re-check; its sorted order is hhg's cell order for the largest radius); `variable100`, \
         the same with radii over [0.02, 2] (100x); `sph`, a \
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
