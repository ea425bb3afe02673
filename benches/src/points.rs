//! `--points FILE --radius R`: the particle engines and the hashing schemes on the points of a
//! file, in every order asked for, checked against each other.

use crate::particles::engines::Engine;
use crate::particles::record::{Order, Record, annotate};
use crate::particles::runner::{arrange, input_of, measure, nothing_ran, set_floor};
use crate::progress::Progress;
use crate::scenes::SceneData;
use crate::schemes::{self, SchemeInput, SchemeKind, SchemeRecord};
use crate::suite::{DEFAULT_SEED, default_reps, default_threads};

/// What a run on the points of a file covers (`--points FILE --radius R`).
#[derive(Clone, Debug, PartialEq)]
pub struct PointRun {
    /// The search radius.
    pub radius: f32,
    /// Engines; brute force is skipped above [`crate::particles::engines::BRUTE_MAX_N`] points, and the
    /// Python peers run on the file's order only.
    pub engines: Vec<Engine>,
    /// Hashing schemes, run on the same points in every order.
    pub schemes: Vec<SchemeKind>,
    /// The point orders: `None` is the file's own, `Some` an [`Order`] made from it as for the
    /// generated scenes (`Random` a seeded shuffle). Measured in ascending order, the file's
    /// first; an empty list means the file's order alone.
    pub orders: Vec<Option<Order>>,
    /// Worker threads.
    pub threads: usize,
    /// Runs per measurement; `None` means [`default_reps`].
    pub reps: Option<usize>,
    /// The seed of the shuffle and the drift.
    pub seed: u64,
}

impl PointRun {
    /// hhg and kiddo within `radius`, on the file's order, with the default seed.
    pub fn new(radius: f32) -> Self {
        Self {
            radius,
            engines: vec![Engine::Hhg, Engine::Kiddo],
            schemes: Vec::new(),
            orders: vec![None],
            threads: default_threads(),
            reps: None,
            seed: DEFAULT_SEED,
        }
    }
}

/// Runs the selected engines and hashing schemes on the points of a file, `name` being the
/// file's stem, in every order of `run` (see `arrange`); returns the engines' records and
/// the schemes'. Must be called inside the pool.
///
/// Brute force is skipped (with a note through `progress`) above its size limit, a scheme that
/// cannot be made with a note too.
pub fn run_points(
    name: &str,
    points: &[[f32; 3]],
    run: &PointRun,
    progress: &mut dyn Progress,
) -> Result<(Vec<Record>, Vec<SchemeRecord>), String> {
    let mut engines = run.engines.clone();
    engines.sort();
    engines.dedup();
    let mut orders = run.orders.clone();
    if orders.is_empty() {
        orders.push(None);
    }
    orders.sort();
    orders.dedup();
    let mut kinds = run.schemes.clone();
    kinds.sort();
    kinds.dedup();
    let reps = run.reps.unwrap_or_else(|| default_reps(points.len()));
    let data = SceneData {
        points: points.to_vec(),
        radius: run.radius,
        plane: false,
        radii: None,
        periodic: None,
        solver_order: None,
    };
    let mut cells = None;
    let mut records = Vec::new();
    let mut scheme_records = Vec::new();
    let mut python = crate::particles::engines::python::PythonPeers::new(&engines);
    if python.wanted() && !orders.contains(&None) {
        progress.note("  python peers: skipped: they run on the file's order only (--order file)");
    }
    let too_many = engines.iter().find(|e| !e.accepts(points.len()));
    if let Some(engine) = too_many {
        progress.note(&format!(
            "  skipping {engine}: {} points is more than its limit of {}",
            points.len(),
            crate::particles::engines::BRUTE_MAX_N
        ));
    }
    let in_process: Vec<Engine> = engines
        .iter()
        .copied()
        .filter(|e| !matches!(e, Engine::Python(_)) && e.accepts(points.len()))
        .collect();
    let mut unavailable: Vec<SchemeKind> = Vec::new();
    for order in orders {
        let arranged;
        let (cloud, map) = match order {
            None => (&data, None),
            Some(order) => {
                arranged = arrange(order, &data, &mut cells, run.seed)?;
                (&arranged.0, Some(arranged.1.as_slice()))
            }
        };
        let input = input_of(name, order, cloud, map);
        let first = records.len();
        for &engine in &in_process {
            let (record, run_cells) = measure(engine, &input, reps, run.threads, progress)?;
            records.push(record);
            // Only a run on the file's own order gives the cell order of the file's points.
            if order.is_none() && cells.is_none() {
                cells = run_cells;
            }
        }
        if python.wanted() && order.is_none() {
            records.extend(python.run(
                name,
                None,
                points,
                run.radius,
                None,
                run.threads,
                reps,
                progress,
            ));
        }
        set_floor(&mut records[first..], &cloud.points, reps);
        let scheme_input = SchemeInput {
            name,
            order,
            points: &cloud.points,
            radius: run.radius,
            map,
        };
        for &kind in &kinds {
            if unavailable.contains(&kind) {
                continue;
            }
            if let Err(e) = schemes::make_scheme(kind, run.radius) {
                progress.note(&format!("  {kind}: SKIPPED: {e}"));
                unavailable.push(kind);
                continue;
            }
            let record = schemes::measure(kind, &scheme_input, reps, run.threads)?;
            progress.note(&format!(
                "  scheme {kind:<8} {:<20} n={:<8} best of {reps}: {:>10.3} ms, {} pairs",
                record.case(),
                record.n,
                record.total_s() * 1e3,
                record.stats.pairs
            ));
            scheme_records.push(record);
        }
    }
    if records.is_empty() && scheme_records.is_empty() {
        return Err(nothing_ran());
    }
    annotate(&mut records);
    schemes::annotate(&mut scheme_records, &records);
    Ok((records, scheme_records))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::particles::record::disagreements;
    use crate::scenes::Scene;
    use crate::suite::{Agreement, thread_pool};
    use hhg_core::ListPass;

    #[test]
    fn a_point_file_runs_in_every_order_with_engines_and_schemes() {
        let points = Scene::Clustered.generate(3000, 12);
        let run = PointRun {
            engines: vec![Engine::Kiddo, Engine::HhgCellOrder, Engine::Hhg],
            schemes: vec![SchemeKind::Xor, SchemeKind::Core],
            orders: vec![
                Some(Order::Zorder),
                None,
                Some(Order::Drift),
                Some(Order::Random),
                Some(Order::Sorted),
                None,
            ],
            threads: 2,
            reps: Some(1),
            seed: 5,
            ..PointRun::new(1.0)
        };
        let pool = thread_pool(2).unwrap();
        let (records, schemes) = pool
            .install(|| run_points("cloud", &points, &run, &mut |_: &str| {}))
            .unwrap();
        // Five orders, the file's first, three engines in their fixed order each.
        assert_eq!(records.len(), 15);
        let cases: Vec<String> = records.iter().step_by(3).map(Record::case).collect();
        assert_eq!(
            cases,
            [
                "cloud",
                "cloud-random",
                "cloud-sorted",
                "cloud-drift",
                "cloud-zorder"
            ]
        );
        let engines: Vec<Engine> = records[..3].iter().map(|r| r.engine).collect();
        assert_eq!(engines, [Engine::Hhg, Engine::HhgCellOrder, Engine::Kiddo]);
        assert!(
            disagreements(&records).is_empty(),
            "{:?}",
            disagreements(&records)
        );
        let drift: Vec<&Record> = records.iter().filter(|r| r.moved().is_some()).collect();
        assert_eq!(drift.len(), 3);
        assert_eq!(drift[2].agree, Agreement::Reference);
        assert_ne!(drift[0].stats.checksum, records[0].stats.checksum);
        assert_eq!(records[0].agree, Agreement::Agrees);
        assert_eq!(
            records[2].agree,
            Agreement::Reference,
            "kiddo on the file's order"
        );
        assert!(records.iter().all(|r| r.over_sorted.is_some()));
        let sorted_hhg = &records[6];
        assert_eq!(sorted_hhg.list_pass, Some(ListPass::InCellOrder));

        // The schemes ran on the same clouds and agree with the engines' references.
        assert_eq!(schemes.len(), 10);
        assert!(
            schemes.iter().all(|r| r.agree == Agreement::Agrees),
            "{:?}",
            schemes::disagreements(&schemes)
        );
        assert_eq!(schemes[0].case(), "cloud");
        assert_eq!(schemes[1].scheme, SchemeKind::Xor);
        assert_eq!(schemes[6].case(), "cloud-drift");
        assert_eq!(schemes[6].stats.checksum, drift[0].stats.checksum);

        // Schemes alone are compared among themselves.
        let run = PointRun {
            engines: Vec::new(),
            orders: vec![Some(Order::Drift), Some(Order::Random)],
            ..run
        };
        let (records, schemes) = pool
            .install(|| run_points("cloud", &points, &run, &mut |_: &str| {}))
            .unwrap();
        assert!(records.is_empty());
        let agree: Vec<Agreement> = schemes.iter().map(|r| r.agree).collect();
        assert_eq!(
            agree,
            [
                Agreement::Reference,
                Agreement::Agrees,
                Agreement::Reference,
                Agreement::Agrees
            ]
        );
    }
}
