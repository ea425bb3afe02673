//! The benchmark runner: which engine runs on which input how often, and how results are compared.
//!
//! Each measurement is the best of `k` complete runs (structure build plus neighbour lists; hhg
//! rebuilds its previous run's buffers in place as a solver does every step, the peers allocate
//! afresh) by wall-clock total. The pair count and checksum come from the last run,
//! after its timing stopped, so checking costs no extra run. The peak heap of a measurement is
//! taken over all its runs ([`crate::memory`]).

use std::fmt;
use std::str::FromStr;

use hhg_core::ListPass;
use hhg_core::reorder::apply_order;
use rayon::ThreadPool;

use crate::engines::{Engine, Radius, cell_order, list_pass_name};
use crate::memory::PeakMeter;
use crate::orders::{drift, drift_seed, morton_order, shuffle_seed, shuffled_order};
use crate::pairs::PairStats;
use crate::progress::Progress;
use crate::scenes::{Scene, SceneData};
use crate::schemes::{self, SchemeInput, SchemeKind, SchemeRecord};

/// The scene sizes of the quick default run.
pub const DEFAULT_SIZES: [usize; 2] = [10_000, 100_000];

/// The smallest size of the `--full` run, whose sizes are the powers of ten from it up to
/// `--max-n`.
pub const FULL_MIN_SIZE: usize = 1_000;

/// The largest size of the `--full` run unless `--max-n` says otherwise.
pub const FULL_MAX_SIZE: usize = 1_000_000;

/// The default number of worker threads: one per logical CPU.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The thread counts of a scaling measurement on `cpus` logical CPUs: 1, 2, 4, ... below
/// `cpus`, then `cpus` itself.
pub fn scaling_threads(cpus: usize) -> Vec<usize> {
    let mut counts = Vec::new();
    let mut t = 1;
    while t < cpus {
        counts.push(t);
        t *= 2;
    }
    counts.push(cpus.max(1));
    counts
}

/// The sizes of a `--full` run: the powers of ten from [`FULL_MIN_SIZE`] up to `max_n`, then
/// `max_n` itself if it lies above the last of them.
pub fn full_sizes(max_n: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut n = FULL_MIN_SIZE;
    while n <= max_n {
        sizes.push(n);
        n *= 10;
    }
    if sizes.last().is_none_or(|&last| last < max_n) && max_n >= FULL_MIN_SIZE {
        sizes.push(max_n);
    }
    sizes
}

/// The base seed of the default run.
pub const DEFAULT_SEED: u64 = 0x5EED_0000_0000_0001;

/// How many runs a measurement takes the best of: 3 up to 100k points, 2 above.
pub fn default_reps(n: usize) -> usize {
    if n <= 100_000 { 3 } else { 2 }
}

/// The order in which a scene's points are handed to an engine.
///
/// Every order but [`Order::Drift`] hands over the same points, so their pairs and checksums
/// (taken in the input's numbering) are the same; the drift moves the points, so its cases
/// are compared among themselves.
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
    /// The points (not moved) stably sorted by the Morton code of their cell of edge `r`,
    /// counted from the bounding box's minimum ([`crate::orders::morton_order`]).
    Zorder,
    /// The generator's own numbering of a scene that has one ([`SceneData::solver_order`]):
    /// the `sph` frame as hhg-sph's solver numbers its particles. Not one of [`Order::ALL`]
    /// (nor parsed): only such a scene runs it, after the other orders.
    Solver,
}

impl Order {
    /// Every order of every input, in the order the runner measures them ([`Order::Solver`]
    /// comes after them on the scenes that have it).
    pub const ALL: [Order; 4] = [Order::Random, Order::Sorted, Order::Drift, Order::Zorder];

    /// The suffix of the case name.
    pub fn name(self) -> &'static str {
        match self {
            Order::Random => "random",
            Order::Sorted => "sorted",
            Order::Drift => "drift",
            Order::Zorder => "zorder",
            Order::Solver => "solver",
        }
    }

    /// Whether the order moves the points, which makes a point cloud of its own.
    pub fn moves_points(self) -> bool {
        self == Order::Drift
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
                    format!("unknown order `{s}` (expected random, cell, drift, zorder or file)")
                }),
        }
    }
}

/// Whether a record's pairs and checksum match its group's reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// The record is the reference of its group (brute force if it ran, else kiddo, else hhg).
    Reference,
    /// Same pair count and checksum as the reference, and symmetric lists without self entries.
    Agrees,
    /// Anything else.
    Differs,
}

impl fmt::Display for Agreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Agreement::Reference => "ref",
            Agreement::Agrees => "yes",
            Agreement::Differs => "NO",
        })
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
    /// size (offsets and entries), measured in the same run (see [`measure_floor`]).
    pub floor_s: Option<f64>,
    /// The most heap bytes the measurement held at once above what was in use before it
    /// (structure and lists; `None` where not measured, as for the Python peers).
    pub peak_bytes: Option<u64>,
    /// The comparison with the group's reference (filled in by [`annotate`]).
    pub agree: Agreement,
}

impl Record {
    /// The case name: the input name, with its order's suffix (`-random`, `-sorted`,
    /// `-drift`, `-zorder`, `-solver`) unless it is a point file in the file's order.
    pub fn case(&self) -> String {
        case_name(&self.input, self.order)
    }

    /// Whether the record's points were moved (the drift order), a point cloud of their own.
    pub fn moved(&self) -> bool {
        self.order.is_some_and(Order::moves_points)
    }

    /// Whether `other` ran on the same points as this record, perhaps in another order (so its
    /// pairs and checksum must be the same): the same input and size, both moved or neither.
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

/// Builds the rayon pool every measurement runs in.
pub fn thread_pool(threads: usize) -> Result<ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("hhg-bench-{i}"))
        .build()
        .map_err(|e| format!("cannot start {threads} worker threads: {e}"))
}

/// Where a measurement's points come from and how its result is checked.
struct Input<'a> {
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
fn measure(
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
    /// Engines; brute force is skipped above [`crate::engines::BRUTE_MAX_N`] points.
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
pub const REORDERED: [Order; 3] = [Order::Sorted, Order::Drift, Order::Zorder];

/// A search rule of the scene's kind (no radii, no box edges), enough to tell which engines
/// run on the scene of `n` points before it is generated.
fn rule_of(scene: Scene, n: usize) -> Radius<'static> {
    if scene.is_variable() {
        Radius::PerPoint(&[])
    } else if scene.is_periodic() {
        Radius::Periodic {
            radius: scene.radius(n),
            lengths: [f32::INFINITY; 3],
        }
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
fn input_of<'a>(
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
/// [`Order::Random`] and the offsets of [`Order::Drift`] are drawn; the drift and the Morton
/// cells take the scene's radius (the largest one on `variable`). [`Order::Solver`] takes
/// [`SceneData::solver_order`], an error where there is none.
fn arrange(
    order: Order,
    data: &SceneData,
    cells: &mut Option<Vec<u32>>,
    seed: u64,
) -> Result<(SceneData, Vec<u32>), String> {
    let map = match order {
        Order::Random => shuffled_order(data.points.len(), shuffle_seed(seed)),
        Order::Sorted | Order::Drift => match cells {
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
    if order.moves_points() {
        drift(&mut points, data.radius, data.periodic, drift_seed(seed));
    }
    let arranged = SceneData {
        points,
        radius: data.radius,
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
    let mut python = crate::python::PythonPeers::new(&config.engines);
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
fn set_floor(records: &mut [Record], points: &[[f32; 3]], reps: usize) {
    let Some(entries) = records.iter().map(|r| r.stats.pairs * 2).max() else {
        return;
    };
    let floor = measure_floor(points, entries as usize, reps);
    for record in records {
        record.floor_s = Some(floor);
    }
}

/// The error for a selection in which no engine accepted any input.
fn nothing_ran() -> String {
    format!(
        "nothing was run: brute force, the only engine selected, runs only up to {} points",
        crate::engines::BRUTE_MAX_N
    )
}

/// What a run on the points of a file covers (`--points FILE --radius R`).
#[derive(Clone, Debug, PartialEq)]
pub struct PointRun {
    /// The search radius.
    pub radius: f32,
    /// Engines; brute force is skipped above [`crate::engines::BRUTE_MAX_N`] points, and the
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
        radii: None,
        periodic: None,
        solver_order: None,
    };
    let mut cells = None;
    let mut records = Vec::new();
    let mut scheme_records = Vec::new();
    let mut python = crate::python::PythonPeers::new(&engines);
    if python.wanted() && !orders.contains(&None) {
        progress.note("  python peers: skipped: they run on the file's order only (--order file)");
    }
    let too_many = engines.iter().find(|e| !e.accepts(points.len()));
    if let Some(engine) = too_many {
        progress.note(&format!(
            "  skipping {engine}: {} points is more than its limit of {}",
            points.len(),
            crate::engines::BRUTE_MAX_N
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

/// Fills in `vs_kiddo`, `over_sorted` and `agree` for every record.
///
/// Records are grouped by point cloud ([`Record::same_cloud`]: input and point count, and
/// whether the points were moved); the reference of a group is its brute-force record if
/// there is one, else kiddo's, else rstar's, else hhg's (else a Python peer's), the file's
/// order first, then random, sorted, drift and Z order, fewest threads first. The pair count
/// and checksum depend neither on the point order nor on the thread count, so a cloud's
/// records all share one reference; the drifted points are another cloud with a reference
/// of their own.
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

    use super::*;

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
        assert!(records[4].moved() && !records[7].moved());
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
        let (drifted, drift_map) = arrange(Order::Drift, &data, &mut cells, 1).unwrap();
        assert_eq!(drift_map, map);
        assert_eq!(drifted.radii, sorted.radii, "radii follow their points");
        let reach = crate::orders::DRIFT_FRACTION * data.radius;
        let offsets: Vec<f32> = drifted
            .points
            .iter()
            .zip(&sorted.points)
            .flat_map(|(a, b)| (0..3).map(move |axis| (a[axis] - b[axis]).abs()))
            .collect();
        assert!(offsets.iter().all(|&d| d <= reach * 1.001));
        assert!(offsets.iter().filter(|&&d| d > 0.0).count() > offsets.len() * 99 / 100);
        let (again, _) = arrange(Order::Drift, &data, &mut cells, 1).unwrap();
        assert_eq!(again, drifted, "the drift is seeded");

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
    fn other_thread_counts_share_the_reference() {
        let good = stats(5, 17);
        let mut python = record(
            Engine::Python(crate::engines::PyPeer::Scipy),
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
        // brute force on the other three orders (and on sph's solver order); hhg-cellorder
        // skips the variable-radius scene; on the periodic scene only hhg (every order) and
        // brute force run.
        let open = Scene::ALL.iter().filter(|s| s.is_plain()).count();
        assert_eq!(
            records.len(),
            open * (5 + 4 * 3) + 4 + (4 + 3 * 3) + (2 + 3)
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
                r.engine.is_hhg() && r.input != "variable" && r.input != "periodic"
            );
        }
        for r in records.iter().filter(|r| r.order == Some(Order::Sorted)) {
            if let Some(pass) = r.list_pass {
                assert_eq!(pass, ListPass::InCellOrder, "{} on {}", r.engine, r.case());
            }
        }
        // The drift moves the points, so its pairs differ from the sorted case's.
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
        assert_eq!(periodic.len(), 5);
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
        let many = vec![[0.0f32; 3]; crate::engines::BRUTE_MAX_N + 1];
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
        let drift: Vec<&Record> = records.iter().filter(|r| r.moved()).collect();
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

    #[test]
    fn sizes_and_thread_counts() {
        assert_eq!(scaling_threads(1), [1]);
        assert_eq!(scaling_threads(2), [1, 2]);
        assert_eq!(scaling_threads(6), [1, 2, 4, 6]);
        assert_eq!(scaling_threads(8), [1, 2, 4, 8]);
        assert_eq!(full_sizes(1_000_000), [1_000, 10_000, 100_000, 1_000_000]);
        assert_eq!(full_sizes(300_000), [1_000, 10_000, 100_000, 300_000]);
        assert_eq!(full_sizes(500), Vec::<usize>::new());
    }
}
