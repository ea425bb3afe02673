//! One measured particle engine on one input ([`Record`]), the point orders the engines run
//! in ([`Order`]), and how the records of a run are checked against their group's reference.

use std::fmt;
use std::str::FromStr;

use hhg_core::ListPass;

use crate::pairs::PairStats;
use crate::particles::engines::Engine;
use crate::suite::Agreement;

/// The order in which a scene's points are handed to an engine.
///
/// Every order but [`Order::Drift`] and [`Order::Step`] hands over the same points, so their
/// pairs and checksums (taken in the input's numbering) are the same; the drift and the step
/// move the points, so the cases of each are compared among themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Order {
    /// The generator's shuffled order (for a point file, a seeded shuffle of its points).
    Random,
    /// hhg's cell order (`Grid::order`) applied to the points before the timed run.
    Sorted,
    /// hhg's cell order, then every point moved by a seeded uniform offset of up to
    /// [`crate::orders::DRIFT_FRACTION`] times the radius per axis: an SPH solver's particles
    /// some ten steps after it reordered them.
    Drift,
    /// hhg's cell order, then every point moved by a seeded uniform offset of up to
    /// [`crate::orders::STEP_FRACTION`] times the radius per axis: an SPH solver's particles
    /// about one step after it reordered them.
    Step,
    /// The points (not moved) stably sorted by the Morton code of their cell of edge `r`,
    /// counted from the bounding box's minimum ([`crate::orders::morton_order`]).
    Zorder,
    /// The generator's own numbering of a scene that has one ([`crate::scenes::SceneData::solver_order`]):
    /// the `sph` frame as hhg-sph's solver numbers its particles. Not one of [`Order::ALL`]
    /// (nor parsed): only such a scene runs it, after the other orders.
    Solver,
}

impl Order {
    /// Every order of every input, in the order the runner measures them ([`Order::Solver`]
    /// comes after them on the scenes that have it).
    pub const ALL: [Order; 5] = [
        Order::Random,
        Order::Sorted,
        Order::Drift,
        Order::Step,
        Order::Zorder,
    ];

    /// The suffix of the case name.
    pub fn name(self) -> &'static str {
        match self {
            Order::Random => "random",
            Order::Sorted => "sorted",
            Order::Drift => "drift",
            Order::Step => "step",
            Order::Zorder => "zorder",
            Order::Solver => "solver",
        }
    }

    /// Whether the order moves the points, which makes a point cloud of its own.
    pub fn moves_points(self) -> bool {
        self.reach().is_some()
    }

    /// How far the order moves each point per axis at most, as a fraction of the radius.
    pub fn reach(self) -> Option<f32> {
        match self {
            Order::Drift => Some(crate::orders::DRIFT_FRACTION),
            Order::Step => Some(crate::orders::STEP_FRACTION),
            Order::Random | Order::Sorted | Order::Zorder | Order::Solver => None,
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Order {
    type Err = String;

    /// Parses an order by its case suffix; `cell` is another name for `sorted`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // `solver` is left out: a point file has its own order (`file`) instead.
        match s {
            "cell" => Ok(Order::Sorted),
            _ => Order::ALL
                .into_iter()
                .find(|order| order.name() == s)
                .ok_or_else(|| {
                    format!(
                        "unknown order `{s}` (expected random, cell, drift, step, zorder or file)"
                    )
                }),
        }
    }
}

/// One measured engine on one input.
#[derive(Clone, Debug)]
pub struct Record {
    /// The engine.
    pub engine: Engine,
    /// The input's name: the scene name, or the point file's stem.
    pub input: String,
    /// The point order for generated scenes; `None` for point files.
    pub order: Option<Order>,
    /// The number of points.
    pub n: usize,
    /// Worker threads.
    pub threads: usize,
    /// Runs the best was taken from.
    pub reps: usize,
    /// Build seconds of the best run.
    pub build_s: f64,
    /// Query seconds of the best run.
    pub query_s: f64,
    /// The pair count and checksum.
    pub stats: PairStats,
    /// kiddo's total over this record's total on the same case, when kiddo ran on it.
    pub vs_kiddo: Option<f64>,
    /// This record's total over the same engine's total on the `-sorted` case of the same
    /// input, size and thread count, when that ran (filled in by [`annotate`]).
    pub over_sorted: Option<f64>,
    /// Which list pass hhg's `Grid` took (`Grid::list_pass`); `None` for the other engines.
    pub list_pass: Option<ListPass>,
    /// The floor of the case: seconds to read the input once and write CSR lists of this
    /// size (offsets and entries), measured in the same run (see [`crate::particles::runner::measure_floor`]).
    pub floor_s: Option<f64>,
    /// The most heap bytes the measurement held at once above what was in use before it
    /// (structure and lists; `None` where not measured, as for the Python peers).
    pub peak_bytes: Option<u64>,
    /// The comparison with the group's reference (filled in by [`annotate`]).
    pub agree: Agreement,
}

impl Record {
    /// The case name: the input name, with its order's suffix (`-random`, `-sorted`,
    /// `-drift`, `-step`, `-zorder`, `-solver`) unless it is a point file in the file's order.
    pub fn case(&self) -> String {
        case_name(&self.input, self.order)
    }

    /// The order that moved the record's points (the drift or the step), if one did: a point
    /// cloud of its own.
    pub fn moved(&self) -> Option<Order> {
        self.order.filter(|order| order.moves_points())
    }

    /// Whether `other` ran on the same points as this record, perhaps in another order (so its
    /// pairs and checksum must be the same): the same input and size, both moved by the same
    /// order or neither.
    pub fn same_cloud(&self, other: &Record) -> bool {
        self.input == other.input && self.n == other.n && self.moved() == other.moved()
    }

    /// Build plus query seconds.
    pub fn total_s(&self) -> f64 {
        self.build_s + self.query_s
    }

    /// Nanoseconds of total time per unordered pair found, if any pair was found.
    pub fn ns_per_pair(&self) -> Option<f64> {
        (self.stats.pairs > 0).then(|| self.total_s() * 1e9 / self.stats.pairs as f64)
    }

    /// Nanoseconds of total time per point.
    pub fn ns_per_point(&self) -> f64 {
        self.total_s() * 1e9 / self.n.max(1) as f64
    }
}

/// The case name of `input` in `order` (`None`: a point file in the file's order).
pub fn case_name(input: &str, order: Option<Order>) -> String {
    match order {
        Some(order) => format!("{input}-{}", order.name()),
        None => input.to_owned(),
    }
}

/// Fills in `vs_kiddo`, `over_sorted` and `agree` for every record.
///
/// Records are grouped by point cloud ([`Record::same_cloud`]: input and point count, and
/// which order, if any, moved the points); the reference of a group is its brute-force
/// record if there is one, else kiddo's, else rstar's, else hhg's (else a Python peer's), the
/// file's order first, then random, sorted, drift, step and Z order, fewest threads first.
/// The pair count and checksum depend neither on the point order nor on the thread count, so
/// a cloud's records all share one reference; the drifted points and the stepped points are
/// two more clouds, each with a reference of its own.
pub fn annotate(records: &mut [Record]) {
    let snapshot: Vec<Record> = records.to_vec();
    for record in records.iter_mut() {
        let same_case = |other: &&Record| {
            other.input == record.input && other.n == record.n && other.order == record.order
        };
        record.vs_kiddo = snapshot
            .iter()
            .filter(same_case)
            .find(|other| other.engine == Engine::Kiddo)
            .map(|kiddo| kiddo.total_s() / record.total_s());
        record.over_sorted = snapshot
            .iter()
            .find(|other| {
                other.engine == record.engine
                    && other.input == record.input
                    && other.n == record.n
                    && other.threads == record.threads
                    && other.order == Some(Order::Sorted)
            })
            .map(|sorted| record.total_s() / sorted.total_s());

        let reference = snapshot
            .iter()
            .filter(|other| other.same_cloud(record))
            .min_by_key(|other| {
                (
                    other.engine.reference_priority(),
                    other.order,
                    other.threads,
                )
            });
        record.agree = match reference {
            _ if !record.stats.is_consistent() => Agreement::Differs,
            Some(r)
                if r.engine == record.engine
                    && r.order == record.order
                    && r.threads == record.threads =>
            {
                Agreement::Reference
            }
            Some(r)
                if r.stats.pairs == record.stats.pairs
                    && r.stats.checksum == record.stats.checksum =>
            {
                Agreement::Agrees
            }
            _ => Agreement::Differs,
        };
    }
}

/// One line per record that does not agree with its reference, saying what differs.
pub fn disagreements(records: &[Record]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.agree == Agreement::Differs)
        .map(|r| {
            let reference = records
                .iter()
                .find(|other| other.same_cloud(r) && other.agree == Agreement::Reference);
            let mut line = format!(
                "{} on {} (n = {}): {} pairs, checksum {}",
                r.engine,
                r.case(),
                r.n,
                r.stats.pairs,
                r.stats.checksum
            );
            if let Some(reference) = reference {
                line.push_str(&format!(
                    "; reference {} on {}: {} pairs, checksum {}",
                    reference.engine,
                    reference.case(),
                    reference.stats.pairs,
                    reference.stats.checksum
                ));
            }
            if r.stats.self_refs > 0 {
                line.push_str(&format!("; {} self entries", r.stats.self_refs));
            }
            if r.stats.directed != 2 * r.stats.pairs {
                line.push_str(&format!(
                    "; {} list entries for {} pairs (lists not symmetric)",
                    r.stats.directed, r.stats.pairs
                ));
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::particles::runner::{REORDERED, later_orders};
    use crate::scenes::Scene;

    fn stats(pairs: u64, checksum: u64) -> PairStats {
        PairStats {
            pairs,
            checksum,
            directed: 2 * pairs,
            self_refs: 0,
        }
    }

    fn record(engine: Engine, order: Order, total: f64, s: PairStats) -> Record {
        Record {
            engine,
            input: "uniform".into(),
            order: Some(order),
            n: 10,
            threads: 2,
            reps: 1,
            build_s: total / 2.0,
            query_s: total / 2.0,
            stats: s,
            vs_kiddo: None,
            over_sorted: None,
            list_pass: None,
            floor_s: None,
            peak_bytes: None,
            agree: Agreement::Reference,
        }
    }

    #[test]
    fn annotate_picks_references_and_ratios() {
        let good = stats(5, 17);
        let mut records = vec![
            record(Engine::Hhg, Order::Random, 1.0, good),
            record(Engine::Kiddo, Order::Random, 4.0, good),
            record(Engine::Brute, Order::Random, 8.0, good),
            record(Engine::Hhg, Order::Sorted, 0.5, stats(5, 18)),
            record(Engine::Kiddo, Order::Sorted, 3.0, good),
        ];
        annotate(&mut records);
        let agree: Vec<Agreement> = records.iter().map(|r| r.agree).collect();
        assert_eq!(
            agree,
            [
                Agreement::Agrees,
                Agreement::Agrees,
                Agreement::Reference,
                Agreement::Differs,
                Agreement::Agrees
            ]
        );
        assert_eq!(records[0].vs_kiddo, Some(4.0));
        assert_eq!(records[2].vs_kiddo, Some(0.5));
        assert_eq!(records[3].vs_kiddo, Some(6.0));
        assert_eq!(records[3].case(), "uniform-sorted");
        let lines = disagreements(&records);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("hhg on uniform-sorted") && lines[0].contains("brute"));
        assert_eq!(records[0].over_sorted, Some(2.0));
        assert_eq!(records[3].over_sorted, Some(1.0));
        assert_eq!(
            records[2].over_sorted, None,
            "brute force has no sorted case"
        );
    }

    #[test]
    fn drifted_points_are_a_cloud_of_their_own() {
        let good = stats(5, 17);
        let moved = stats(6, 40);
        let mut records = vec![
            record(Engine::Hhg, Order::Random, 1.0, good),
            record(Engine::Kiddo, Order::Random, 4.0, good),
            record(Engine::Hhg, Order::Sorted, 0.5, good),
            record(Engine::Kiddo, Order::Sorted, 2.0, good),
            record(Engine::Hhg, Order::Drift, 0.6, moved),
            record(Engine::HhgCellOrder, Order::Drift, 0.55, moved),
            record(Engine::Kiddo, Order::Drift, 2.2, moved),
            record(Engine::Hhg, Order::Zorder, 0.75, good),
            record(Engine::Kiddo, Order::Zorder, 3.0, stats(5, 19)),
        ];
        annotate(&mut records);
        let agree: Vec<Agreement> = records.iter().map(|r| r.agree).collect();
        assert_eq!(
            agree,
            [
                Agreement::Agrees,
                Agreement::Reference,
                Agreement::Agrees,
                Agreement::Agrees,
                Agreement::Agrees,
                Agreement::Agrees,
                Agreement::Reference,
                Agreement::Agrees,
                Agreement::Differs,
            ]
        );
        assert!(records[4].moved().is_some() && records[7].moved().is_none());
        assert!(records[4].same_cloud(&records[6]) && !records[4].same_cloud(&records[2]));
        assert_eq!(records[4].case(), "uniform-drift");
        assert_eq!(records[7].case(), "uniform-zorder");
        assert_eq!(records[4].over_sorted, Some(1.2));
        assert_eq!(records[7].over_sorted, Some(1.5));
        assert_eq!(records[6].over_sorted, Some(1.1));
        assert_eq!(
            records[5].over_sorted, None,
            "hhg-cellorder has no sorted case here"
        );
        assert_eq!(records[6].vs_kiddo, Some(1.0));
        assert_eq!(records[4].vs_kiddo, Some(2.2 / 0.6));
        // The Z-order case is checked against the unmoved reference, not the drift's.
        let lines = disagreements(&records);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("kiddo on uniform-zorder")
                && lines[0].contains("reference kiddo on uniform-random"),
            "{}",
            lines[0]
        );

        // A drift that differs from the other drift records is caught too.
        records[5].stats = good;
        annotate(&mut records);
        assert_eq!(records[5].agree, Agreement::Differs);
        assert!(disagreements(&records)[0].contains("reference kiddo on uniform-drift"));
    }

    #[test]
    fn orders_parse_and_name_their_cases() {
        for order in Order::ALL {
            assert_eq!(order.name().parse::<Order>(), Ok(order));
        }
        assert!(
            "solver".parse::<Order>().is_err(),
            "a point file has no solver order"
        );
        assert_eq!(case_name("sph", Some(Order::Solver)), "sph-solver");
        assert_eq!(later_orders(Scene::Uniform).collect::<Vec<_>>(), REORDERED);
        assert_eq!(later_orders(Scene::Sph).last(), Some(Order::Solver));
        assert_eq!("cell".parse::<Order>(), Ok(Order::Sorted));
        assert!("file".parse::<Order>().is_err() && "hilbert".parse::<Order>().is_err());
        assert_eq!(case_name("cloud", None), "cloud");
        assert_eq!(case_name("cloud", Some(Order::Zorder)), "cloud-zorder");
        assert_eq!(Order::ALL[1..], REORDERED);
        assert!(Order::Drift.moves_points() && !Order::Zorder.moves_points());
        assert!(Order::Step.reach() < Order::Drift.reach());
    }

    #[test]
    fn other_thread_counts_share_the_reference() {
        let good = stats(5, 17);
        let mut python = record(
            Engine::Python(crate::particles::engines::PyPeer::Scipy),
            Order::Random,
            2.0,
            stats(5, 99),
        );
        python.threads = 1;
        let mut kiddo_one = record(Engine::Kiddo, Order::Random, 6.0, good);
        kiddo_one.threads = 1;
        let mut records = vec![
            record(Engine::Kiddo, Order::Random, 4.0, good),
            python,
            kiddo_one,
        ];
        annotate(&mut records);
        // The one-thread kiddo is the reference; the two-thread one agrees with it, and the
        // single-threaded Python peer with the wrong checksum is caught.
        assert_eq!(records[2].agree, Agreement::Reference);
        assert_eq!(records[0].agree, Agreement::Agrees);
        assert_eq!(records[1].agree, Agreement::Differs);
        assert!(disagreements(&records)[0].contains("scipy"));
    }

    #[test]
    fn inconsistent_lists_never_agree() {
        let mut bad = stats(5, 17);
        bad.directed = 9;
        let mut records = vec![record(Engine::Kiddo, Order::Random, 1.0, bad)];
        annotate(&mut records);
        assert_eq!(records[0].agree, Agreement::Differs);
        assert!(disagreements(&records)[0].contains("not symmetric"));
    }
}
