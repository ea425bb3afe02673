//! The benchmark runner: which engine runs on which input how often, and how results are compared.
//!
//! Each measurement is the best of `k` complete runs (structure build plus neighbour lists; hhg
//! rebuilds its previous run's buffers in place as a solver does every step, the peers allocate
//! afresh) by wall-clock total. The pair count and checksum come from the last run,
//! after its timing stopped, so checking costs no extra run. The peak heap of a measurement is
//! taken over all its runs ([`crate::memory`]).

use hhg_core::reorder::apply_order;

use crate::memory::PeakMeter;
use crate::orders::{drift, drift_seed, morton_order, shuffle_seed, shuffled_order};
use crate::particles::engines::{Engine, Radius, cell_order, list_pass_name};
use crate::particles::record::{Order, Record, annotate};
use crate::progress::Progress;
use crate::scenes::{Scene, SceneData};
use crate::suite::{Agreement, DEFAULT_SEED, default_reps, default_threads, thread_pool};

/// The scene sizes of the quick default run.
pub const DEFAULT_SIZES: [usize; 2] = [10_000, 100_000];

/// Where a measurement's points come from and how its result is checked.
pub(crate) struct Input<'a> {
    name: &'a str,
    order: Option<Order>,
    points: &'a [[f32; 3]],
    radius: Radius<'a>,
    /// `map[k]` = input index of the engine's point `k`, for reordered input.
    map: Option<&'a [u32]>,
}

/// Measures `engine` on `input`: the best of `reps` runs.
///
/// Returns the record and, for hhg, the cell order of the last run, so that the sorted case needs
/// no extra build.
pub(crate) fn measure(
    engine: Engine,
    input: &Input<'_>,
    reps: usize,
    threads: usize,
    progress: &mut dyn Progress,
) -> Result<(Record, Option<Vec<u32>>), String> {
    let reps = reps.max(1);
    let mut best = (f64::INFINITY, f64::INFINITY);
    let mut last = None;
    let meter = PeakMeter::start();
    for _ in 0..reps {
        // The previous run's structures are reused (hhg) or freed before the clock starts.
        let out = engine.run_with(input.points, input.radius, last.take())?;
        if out.build_s + out.query_s < best.0 + best.1 {
            best = (out.build_s, out.query_s);
        }
        last = Some(out);
    }
    let out = last.ok_or("no run was made")?;
    let peak_bytes = meter.peak_bytes();
    let stats = out.stats(input.map);
    let order = out.cell_order().map(<[u32]>::to_vec);
    let list_pass = out.list_pass();
    let record = Record {
        engine,
        input: input.name.to_owned(),
        order: input.order,
        n: input.points.len(),
        threads,
        reps,
        build_s: best.0,
        query_s: best.1,
        stats,
        vs_kiddo: None,
        over_sorted: None,
        list_pass,
        floor_s: None,
        peak_bytes,
        agree: Agreement::Reference,
    };
    progress.note(&format!(
        "  {engine:<13} {:<20} n={:<8} threads={threads} best of {reps}: {:>10.3} ms, {} pairs{}",
        record.case(),
        record.n,
        record.total_s() * 1e3,
        record.stats.pairs,
        list_pass.map_or_else(String::new, |pass| format!(
            " (list pass: {})",
            list_pass_name(pass)
        ))
    ));
    progress.advance(&format!("{engine} {} n={}", record.case(), record.n));
    Ok((record, order))
}

/// What the generated-scene run covers.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneRun {
    /// Scenes, in order.
    pub scenes: Vec<Scene>,
    /// Point counts, in order.
    pub sizes: Vec<usize>,
    /// Engines; brute force is skipped above [`crate::particles::engines::BRUTE_MAX_N`] points.
    pub engines: Vec<Engine>,
    /// Worker threads.
    pub threads: usize,
    /// Runs per measurement; `None` means [`default_reps`].
    pub reps: Option<usize>,
    /// The base seed.
    pub seed: u64,
}

impl Default for SceneRun {
    fn default() -> Self {
        Self {
            scenes: Scene::ALL.to_vec(),
            sizes: DEFAULT_SIZES.to_vec(),
            engines: Engine::QUICK.to_vec(),
            threads: default_threads(),
            reps: None,
            seed: DEFAULT_SEED,
        }
    }
}

/// The orders every engine but brute force (and the Python peers) runs on after the random one.
pub const REORDERED: [Order; 4] = [Order::Sorted, Order::Drift, Order::Step, Order::Zorder];

/// A search rule of the scene's kind (no radii, no box edges), enough to tell which engines
/// run on the scene of `n` points before it is generated.
fn rule_of(scene: Scene, n: usize) -> Radius<'static> {
    if scene.is_variable() && scene.is_plane() {
        Radius::PlanePerPoint(&[])
    } else if scene.is_variable() {
        Radius::PerPoint(&[])
    } else if scene.is_periodic() {
        Radius::Periodic {
            radius: scene.radius(n),
            lengths: [f32::INFINITY; 3],
        }
    } else if scene.is_plane() {
        Radius::Plane(scene.radius(n))
    } else {
        Radius::Fixed(scene.radius(n))
    }
}

/// The orders every engine but brute force runs on after the random one on `scene`:
/// [`REORDERED`], then [`Order::Solver`] on a scene with a numbering of its own.
pub fn later_orders(scene: Scene) -> impl Iterator<Item = Order> {
    REORDERED
        .into_iter()
        .chain(scene.has_solver_order().then_some(Order::Solver))
}

impl SceneRun {
    /// How many measurements [`run_scenes`] makes (for the progress bar).
    pub fn planned(&self) -> u64 {
        let mut count = 0;
        for &scene in &self.scenes {
            for &n in &self.sizes {
                let rule = rule_of(scene, n);
                let python = |e: &Engine| matches!(e, Engine::Python(_));
                let runs = |e: &&Engine| !python(e) && e.supports(&rule);
                let random = self.engines.iter().filter(runs).filter(|e| e.accepts(n));
                let others = self
                    .engines
                    .iter()
                    .filter(runs)
                    .filter(|&e| *e != Engine::Brute);
                let peers = if scene.is_variable() {
                    0
                } else {
                    self.engines.iter().filter(|e| python(e)).count()
                };
                count += random.count() + others.count() * later_orders(scene).count() + peers;
            }
        }
        count as u64
    }
}

/// Where a measurement's points come from: a cloud in one order, with the map back to the
/// input's numbering.
pub(crate) fn input_of<'a>(
    name: &'a str,
    order: Option<Order>,
    data: &'a SceneData,
    map: Option<&'a [u32]>,
) -> Input<'a> {
    Input {
        name,
        order,
        points: &data.points,
        radius: data.search(),
        map,
    }
}

/// Puts the points of `data` (and their radii) into `order` for the engines, and returns them
/// with the map `map[k]` = input index of their point `k`.
///
/// `cells` holds hhg's cell order of `data` (taken from hhg's own run when it ran), computed
/// here by an untimed build when first needed (with the largest radius on the
/// variable-radius scene). `seed` is the case's seed, from which the shuffle of
/// [`Order::Random`] and the offsets of [`Order::Drift`] and [`Order::Step`] are drawn; the
/// moves and the Morton
/// cells take the scene's radius (the largest one on `variable`). [`Order::Solver`] takes
/// [`SceneData::solver_order`], an error where there is none.
pub(crate) fn arrange(
    order: Order,
    data: &SceneData,
    cells: &mut Option<Vec<u32>>,
    seed: u64,
) -> Result<(SceneData, Vec<u32>), String> {
    let map = match order {
        Order::Random => shuffled_order(data.points.len(), shuffle_seed(seed)),
        Order::Sorted | Order::Drift | Order::Step => match cells {
            Some(cells) => cells.clone(),
            None => cells.insert(cell_order(&data.points, data.radius)?).clone(),
        },
        Order::Zorder => morton_order(&data.points, data.radius),
        Order::Solver => data
            .solver_order
            .clone()
            .ok_or("these points have no solver order of their own")?,
    };
    let mut points = data.points.clone();
    apply_order(&map, &mut points);
    let radii = data.radii.as_ref().map(|radii| {
        let mut radii = radii.clone();
        apply_order(&map, &mut radii);
        radii
    });
    if let Some(reach) = order.reach() {
        drift(
            &mut points,
            reach * data.radius,
            data.periodic,
            drift_seed(seed),
        );
        if data.plane {
            // The points of a 2-D scene stay in the plane `z = 0`.
            for point in &mut points {
                point[2] = 0.0;
            }
        }
    }
    let arranged = SceneData {
        points,
        radius: data.radius,
        plane: data.plane,
        radii,
        periodic: data.periodic,
        solver_order: None,
    };
    Ok((arranged, map))
}

/// Measures every engine of `engines` on `input`, appends the records, and measures the
/// case's floor for them.
fn measure_case(
    engines: &[Engine],
    input: &Input<'_>,
    reps: usize,
    threads: usize,
    progress: &mut dyn Progress,
    records: &mut Vec<Record>,
) -> Result<(), String> {
    let first = records.len();
    for &engine in engines {
        records.push(measure(engine, input, reps, threads, progress)?.0);
    }
    set_floor(&mut records[first..], input.points, reps);
    Ok(())
}

/// Runs every selected engine on every selected scene and size, in every point order.
///
/// The random order (the generator's) comes first, with every engine; brute force runs on it
/// only, and so do the Python peers (when asked for, on fixed-radius scenes). Then every other
/// engine runs on [`REORDERED`]: hhg's cell order (taken from hhg's own random-order run when
/// hhg was selected, else from one untimed build), the drift after it, and the Morton order
/// (see `arrange`); on a scene with a numbering of its own (`sph`) then on
/// [`Order::Solver`] ([`later_orders`]). The run order is fixed: scenes, sizes, orders,
/// engines. Must be called inside the thread pool (see [`thread_pool`]).
pub fn run_scenes(config: &SceneRun, progress: &mut dyn Progress) -> Result<Vec<Record>, String> {
    let mut engines: Vec<Engine> = config
        .engines
        .iter()
        .copied()
        .filter(|e| !matches!(e, Engine::Python(_)))
        .collect();
    engines.sort();
    engines.dedup();
    let mut python = crate::particles::engines::python::PythonPeers::new(&config.engines);
    let mut records = Vec::new();
    for &scene in &config.scenes {
        for &n in &config.sizes {
            progress.note(&format!("{scene}, {n} points:"));
            let seed = scene.seed(config.seed, n);
            let data = scene.data(n, seed);
            let points = &data.points;
            let radius = data.search();
            let reps = config.reps.unwrap_or_else(|| default_reps(n));
            let mut cells = None;
            let random = input_of(scene.name(), Some(Order::Random), &data, None);
            let first = records.len();
            for &engine in &engines {
                if !engine.accepts(n) || !engine.supports(&radius) {
                    continue;
                }
                let (record, run_cells) = measure(engine, &random, reps, config.threads, progress)?;
                records.push(record);
                if cells.is_none() {
                    cells = run_cells;
                }
            }
            if python.wanted() {
                if scene.is_variable() {
                    progress.note(
                        "  python peers: skipped on `variable` (they take one radius for all points)",
                    );
                } else {
                    records.extend(python.run(
                        scene.name(),
                        Some(Order::Random),
                        points,
                        data.radius,
                        data.periodic,
                        config.threads,
                        reps,
                        progress,
                    ));
                }
            }
            set_floor(&mut records[first..], points, reps);

            let reordered: Vec<Engine> = engines
                .iter()
                .copied()
                .filter(|&e| e != Engine::Brute && e.supports(&radius))
                .collect();
            if reordered.is_empty() {
                continue;
            }
            for order in later_orders(scene) {
                let (arranged, map) = arrange(order, &data, &mut cells, seed)?;
                let input = input_of(scene.name(), Some(order), &arranged, Some(&map));
                measure_case(
                    &reordered,
                    &input,
                    reps,
                    config.threads,
                    progress,
                    &mut records,
                )?;
            }
        }
    }
    if records.is_empty() {
        return Err(nothing_ran());
    }
    annotate(&mut records);
    Ok(records)
}

/// Measures the selected in-process engines (brute force excepted) on the random order of
/// each `(scene, n)` case with every thread count of `threads` that differs from
/// `config.threads` (whose records the main run made), each in a pool of its own.
pub fn run_scaling(
    config: &SceneRun,
    cases: &[(Scene, usize)],
    threads: &[usize],
    progress: &mut dyn Progress,
) -> Result<Vec<Record>, String> {
    let mut engines: Vec<Engine> = config
        .engines
        .iter()
        .copied()
        .filter(|e| !matches!(e, Engine::Python(_) | Engine::Brute))
        .collect();
    engines.sort();
    engines.dedup();
    let mut records = Vec::new();
    for &(scene, n) in cases {
        let data = scene.data(n, scene.seed(config.seed, n));
        let radius = data.search();
        let input = Input {
            name: scene.name(),
            order: Some(Order::Random),
            points: &data.points,
            radius,
            map: None,
        };
        let reps = config.reps.unwrap_or_else(|| default_reps(n));
        for &t in threads.iter().filter(|&&t| t != config.threads) {
            progress.note(&format!(
                "thread scaling: {scene}, {n} points, {t} thread(s):"
            ));
            let pool = thread_pool(t)?;
            for &engine in &engines {
                if !engine.supports(&radius) {
                    progress.advance(&format!("{engine} {scene} n={n}: no periodic boxes"));
                    continue;
                }
                let (record, _) = pool.install(|| measure(engine, &input, reps, t, progress))?;
                records.push(record);
            }
        }
    }
    annotate(&mut records);
    Ok(records)
}

/// The number of measurements [`run_scaling`] makes.
pub fn planned_scaling(config: &SceneRun, cases: usize, threads: &[usize]) -> u64 {
    let engines = config
        .engines
        .iter()
        .filter(|e| !matches!(e, Engine::Python(_) | Engine::Brute))
        .count();
    let counts = threads.iter().filter(|&&t| t != config.threads).count();
    (cases * engines * counts) as u64
}

/// Measures the memory floor of a case: the best of `reps` times to read every coordinate
/// once and write `n + 1` offsets and `entries` list entries (4-byte indices), in parallel on
/// the current pool. The buffers are allocated and touched before the clock starts, as a
/// solver's reused lists are. Any search that outputs CSR lists pays at least this.
pub fn measure_floor(points: &[[f32; 3]], entries: usize, reps: usize) -> f64 {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let mut offsets = vec![0usize; points.len() + 1];
    let mut indices = vec![0u32; entries];
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let start = std::time::Instant::now();
        let sum: f64 = points
            .par_chunks(CHUNK)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|p| f64::from(p[0] + p[1] + p[2]))
                    .sum::<f64>()
            })
            .sum();
        offsets
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, out)| {
                for (k, o) in out.iter_mut().enumerate() {
                    *o = c * CHUNK + k;
                }
            });
        indices
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(c, out)| {
                for (k, o) in out.iter_mut().enumerate() {
                    *o = (c * CHUNK + k) as u32;
                }
            });
        best = best.min(start.elapsed().as_secs_f64());
        std::hint::black_box((sum, &offsets, &indices));
    }
    best
}

/// Measures the floor of one case and stores it in each of its records.
pub(crate) fn set_floor(records: &mut [Record], points: &[[f32; 3]], reps: usize) {
    let Some(entries) = records.iter().map(|r| r.stats.pairs * 2).max() else {
        return;
    };
    let floor = measure_floor(points, entries as usize, reps);
    for record in records {
        record.floor_s = Some(floor);
    }
}

/// The error for a selection in which no engine accepted any input.
pub(crate) fn nothing_ran() -> String {
    format!(
        "nothing was run: brute force, the only engine selected, runs only up to {} points",
        crate::particles::engines::BRUTE_MAX_N
    )
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::particles::record::disagreements;
    use crate::points::{PointRun, run_points};
    use hhg_core::ListPass;

    #[test]
    fn floor_is_a_positive_time_that_grows_with_the_output() {
        let points = vec![[1.0f32, 2.0, 3.0]; 10_000];
        let small = measure_floor(&points, 1_000, 3);
        let large = measure_floor(&points, 20_000_000, 3);
        assert!(small > 0.0 && small.is_finite());
        assert!(
            large > small,
            "writing 80 MB took {large} s, 4 kB {small} s"
        );
    }

    /// The distance along each axis between each point of `a` and the point of `b` at the
    /// same index.
    fn axis_offsets(a: &[[f32; 3]], b: &[[f32; 3]]) -> Vec<f32> {
        a.iter()
            .zip(b)
            .flat_map(|(p, q)| (0..3).map(move |axis| (p[axis] - q[axis]).abs()))
            .collect()
    }

    #[test]
    fn arranged_orders_keep_or_move_the_points_as_they_say() {
        let data = Scene::Variable.data(3000, 4);
        let mut cells = None;
        let (sorted, map) = arrange(Order::Sorted, &data, &mut cells, 1).unwrap();
        assert_eq!(cells.as_deref(), Some(map.as_slice()));
        assert_eq!(map, cell_order(&data.points, data.radius).unwrap());
        let radii = data.radii.as_ref().unwrap();
        for (k, &i) in map.iter().enumerate() {
            assert_eq!(sorted.points[k], data.points[i as usize]);
            assert_eq!(sorted.radii.as_ref().unwrap()[k], radii[i as usize]);
        }
        // The drift and the step move every point by at most their reach, and are seeded.
        for order in [Order::Drift, Order::Step] {
            let (moved, moved_map) = arrange(order, &data, &mut cells, 1).unwrap();
            assert_eq!(moved_map, map);
            assert_eq!(moved.radii, sorted.radii, "radii follow their points");
            let reach = order.reach().unwrap() * data.radius;
            let offsets = axis_offsets(&moved.points, &sorted.points);
            assert!(offsets.iter().all(|&d| d <= reach * 1.001), "{order}");
            assert!(offsets.iter().any(|&d| d > 0.9 * reach), "{order}");
            assert!(offsets.iter().filter(|&&d| d > 0.0).count() > offsets.len() * 99 / 100);
            let (again, _) = arrange(order, &data, &mut cells, 1).unwrap();
            assert_eq!(again, moved, "the {order} is seeded");
        }

        let (zorder, zmap) = arrange(Order::Zorder, &data, &mut None, 1).unwrap();
        assert_eq!(zmap, morton_order(&data.points, data.radius));
        assert_eq!(zorder.points[0], data.points[zmap[0] as usize]);
        assert!(arrange(Order::Solver, &data, &mut None, 1).is_err());
        let (shuffled, smap) = arrange(Order::Random, &data, &mut None, 1).unwrap();
        assert_ne!(smap, (0..3000).collect::<Vec<u32>>());
        assert_eq!(shuffled.points[7], data.points[smap[7] as usize]);

        // In a periodic box the drifted points stay in the box.
        let data = Scene::Periodic.data(3000, 4);
        let lengths = data.periodic.unwrap();
        let (drifted, _) = arrange(Order::Drift, &data, &mut None, 1).unwrap();
        assert!(
            drifted
                .points
                .iter()
                .all(|p| (0..3).all(|a| (0.0..lengths[a]).contains(&p[a])))
        );
    }

    #[test]
    fn a_small_scene_run_agrees_everywhere() {
        let config = SceneRun {
            scenes: Scene::ALL.to_vec(),
            sizes: vec![2000],
            engines: Engine::ALL.to_vec(),
            threads: 2,
            reps: Some(1),
            seed: 1,
        };
        let pool = thread_pool(2).unwrap();
        let records = pool
            .install(|| run_scenes(&config, &mut |_: &str| {}))
            .unwrap();
        // Per fixed-radius scene in open space: every engine on the random order, all but
        // brute force on the other four orders (and on sph's solver order); hhg-cellorder
        // skips the variable-radius scenes; on the periodic scene only hhg (every order) and
        // brute force run.
        let open = Scene::ALL.iter().filter(|s| s.is_plain()).count();
        let variable = Scene::ALL.iter().filter(|s| s.is_variable()).count();
        assert_eq!(variable, 2);
        assert_eq!(
            records.len(),
            open * (5 + 4 * 4) + 4 + variable * (4 + 3 * 4) + (2 + 4)
        );
        assert_eq!(config.planned(), records.len() as u64);
        for order in Order::ALL {
            assert!(records.iter().any(|r| r.order == Some(order)), "{order}");
        }
        let solver: Vec<&Record> = records
            .iter()
            .filter(|r| r.order == Some(Order::Solver))
            .collect();
        assert_eq!(solver.len(), 4);
        assert!(solver.iter().all(|r| r.case() == "sph-solver"
            && r.agree == Agreement::Agrees
            && r.n == solver[0].n));
        for r in records.iter().filter(|r| r.engine != Engine::Brute) {
            assert!(r.over_sorted.is_some(), "{} on {}", r.engine, r.case());
            assert_eq!(
                r.list_pass.is_some(),
                r.engine.is_hhg() && !r.input.starts_with("variable") && r.input != "periodic"
            );
        }
        for r in records.iter().filter(|r| r.order == Some(Order::Sorted)) {
            if let Some(pass) = r.list_pass {
                assert_eq!(pass, ListPass::InCellOrder, "{} on {}", r.engine, r.case());
            }
        }
        // The drift and the step move the points, so their pairs differ from the sorted case's
        // and from each other's.
        let of = |order: Order| {
            records
                .iter()
                .find(|r| {
                    r.input == "uniform" && r.engine == Engine::Kiddo && r.order == Some(order)
                })
                .unwrap()
                .stats
        };
        assert_ne!(of(Order::Drift).checksum, of(Order::Sorted).checksum);
        assert_ne!(of(Order::Step).checksum, of(Order::Sorted).checksum);
        assert_ne!(of(Order::Step).checksum, of(Order::Drift).checksum);
        assert_eq!(of(Order::Zorder), of(Order::Random));
        assert!(
            disagreements(&records).is_empty(),
            "{:?}",
            disagreements(&records)
        );
        assert!(
            records.iter().all(|r| r.stats.pairs > 0
                && (r.vs_kiddo.is_some() || r.input == Scene::Periodic.name()))
        );
        let periodic: Vec<&Record> = records
            .iter()
            .filter(|r| r.input == Scene::Periodic.name())
            .collect();
        assert_eq!(periodic.len(), 6);
        assert!(periodic.iter().any(|r| r.agree == Agreement::Agrees));

        let points = Scene::Uniform.generate(500, 3);
        let run = PointRun {
            engines: vec![Engine::Brute, Engine::Hhg],
            threads: 2,
            reps: Some(1),
            ..PointRun::new(1.0)
        };
        let (only, schemes) = pool
            .install(|| run_points("file", &points, &run, &mut |_: &str| {}))
            .unwrap();
        assert!(schemes.is_empty());
        assert_eq!(only.len(), 2);
        assert_eq!(only[0].engine, Engine::Hhg);
        assert_eq!(only[1].agree, Agreement::Reference);
        assert_eq!(only[0].agree, Agreement::Agrees);
        assert_eq!(only[0].vs_kiddo, None);

        // Brute force alone on too many points runs nothing, which is an error, not a pass.
        let many = vec![[0.0f32; 3]; crate::particles::engines::BRUTE_MAX_N + 1];
        let run = PointRun {
            engines: vec![Engine::Brute],
            threads: 2,
            reps: Some(1),
            ..PointRun::new(1.0)
        };
        let none = pool.install(|| run_points("many", &many, &run, &mut |_: &str| {}));
        assert!(none.unwrap_err().contains("nothing was run"));

        // Scaling measures the other thread counts only.
        let scaling = run_scaling(
            &config,
            &[(Scene::Uniform, 2000)],
            &[1, 2],
            &mut |_: &str| {},
        )
        .unwrap();
        assert_eq!(scaling.len(), 4);
        assert!(scaling.iter().all(|r| r.threads == 1));
        assert_eq!(planned_scaling(&config, 1, &[1, 2]), 4);
    }

    #[test]
    fn the_plane_scenes_run_and_agree_with_every_engine() {
        let config = SceneRun {
            scenes: Scene::PLANE.to_vec(),
            sizes: vec![2000],
            engines: Engine::ALL.to_vec(),
            threads: 2,
            reps: Some(1),
            seed: 3,
        };
        let pool = thread_pool(2).unwrap();
        let records = pool
            .install(|| run_scenes(&config, &mut |_: &str| {}))
            .unwrap();
        // hhg, kiddo, rstar and brute force on the random order, all but brute force on the
        // four others; hhg-cellorder (a 3-D `Grid`) runs on none of them.
        assert_eq!(records.len(), Scene::PLANE.len() * (4 + 3 * 4));
        assert_eq!(config.planned(), records.len() as u64);
        assert!(records.iter().all(|r| r.engine != Engine::HhgCellOrder));
        assert!(
            disagreements(&records).is_empty(),
            "{:?}",
            disagreements(&records)
        );
        for scene in Scene::PLANE {
            let of_scene = |engine: Engine| {
                records
                    .iter()
                    .filter(|r| r.input == scene.name() && r.engine == engine)
                    .count()
            };
            assert_eq!((of_scene(Engine::Hhg), of_scene(Engine::Brute)), (5, 1));
        }
        assert!(
            records
                .iter()
                .all(|r| r.stats.pairs > 0 && r.vs_kiddo.is_some())
        );
    }
}
