//! The benchmark runner: which engine runs on which input how often, and how results are compared.
//!
//! Each measurement is the best of `k` complete runs (structure build plus neighbour lists; hhg
//! rebuilds its previous run's buffers in place as a solver does every step, the peers allocate
//! afresh) by wall-clock total. The pair count and checksum come from the last run,
//! after its timing stopped, so checking costs no extra run. The peak heap of a measurement is
//! taken over all its runs ([`crate::memory`]).

use std::fmt;

use hhg_core::reorder::apply_order;
use rayon::ThreadPool;

use crate::engines::{Engine, Radius, cell_order};
use crate::memory::PeakMeter;
use crate::pairs::PairStats;
use crate::progress::Progress;
use crate::scenes::Scene;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Order {
    /// The generator's shuffled order.
    Random,
    /// hhg's cell order (`Grid::order`) applied to the points before the timed run.
    Sorted,
}

impl Order {
    /// The suffix of the case name.
    pub fn name(self) -> &'static str {
        match self {
            Order::Random => "random",
            Order::Sorted => "sorted",
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
    /// The case name: the input name, with `-random` or `-sorted` for generated scenes.
    pub fn case(&self) -> String {
        match self.order {
            Some(order) => format!("{}-{}", self.input, order.name()),
            None => self.input.clone(),
        }
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
        floor_s: None,
        peak_bytes,
        agree: Agreement::Reference,
    };
    progress.note(&format!(
        "  {engine:<8} {:<20} n={:<8} threads={threads} best of {reps}: {:>10.3} ms, {} pairs",
        record.case(),
        record.n,
        record.total_s() * 1e3,
        record.stats.pairs
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

impl SceneRun {
    /// How many measurements [`run_scenes`] makes (for the progress bar).
    pub fn planned(&self) -> u64 {
        let mut count = 0;
        for &scene in &self.scenes {
            for &n in &self.sizes {
                let python = |e: &Engine| matches!(e, Engine::Python(_));
                // Only hhg and brute force search periodic boxes.
                let fits =
                    |e: &Engine| !scene.is_periodic() || matches!(e, Engine::Hhg | Engine::Brute);
                let random = self
                    .engines
                    .iter()
                    .filter(|e| !python(e) && e.accepts(n) && fits(e))
                    .count();
                let sorted = self
                    .engines
                    .iter()
                    .filter(|&e| !python(e) && *e != Engine::Brute && fits(e))
                    .count();
                let peers = if scene.is_variable() {
                    0
                } else {
                    self.engines.iter().filter(|e| python(e)).count()
                };
                count += random + sorted + peers;
            }
        }
        count as u64
    }
}

/// Runs every selected engine on every selected scene and size, in both point orders.
///
/// Brute force runs on the random order only, and so do the Python peers (when asked for, on
/// fixed-radius scenes). The sorted order is hhg's cell order, taken from hhg's own
/// random-order run when hhg was selected, else from one untimed build (with the largest
/// radius on the variable-radius scene, whose radii follow their points). Must be called
/// inside the thread pool (see [`thread_pool`]).
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
            let data = scene.data(n, scene.seed(config.seed, n));
            let points = &data.points;
            let radius = data.search();
            let reps = config.reps.unwrap_or_else(|| default_reps(n));
            let mut order = None;
            let random = Input {
                name: scene.name(),
                order: Some(Order::Random),
                points,
                radius,
                map: None,
            };
            let first = records.len();
            for &engine in &engines {
                if !engine.accepts(n) || !engine.supports(&radius) {
                    continue;
                }
                let (record, cells) = measure(engine, &random, reps, config.threads, progress)?;
                records.push(record);
                if order.is_none() {
                    order = cells;
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

            let sorted_engines: Vec<Engine> = engines
                .iter()
                .copied()
                .filter(|&e| e != Engine::Brute && e.supports(&radius))
                .collect();
            if sorted_engines.is_empty() {
                continue;
            }
            let order = match order {
                Some(order) => order,
                None => cell_order(points, data.radius)?,
            };
            let mut sorted = points.clone();
            apply_order(&order, &mut sorted);
            let sorted_radii = data.radii.as_ref().map(|radii| {
                let mut radii = radii.clone();
                apply_order(&order, &mut radii);
                radii
            });
            let input = Input {
                name: scene.name(),
                order: Some(Order::Sorted),
                points: &sorted,
                radius: match &sorted_radii {
                    Some(radii) => Radius::PerPoint(radii),
                    None => radius,
                },
                map: Some(&order),
            };
            let first = records.len();
            for engine in sorted_engines {
                records.push(measure(engine, &input, reps, config.threads, progress)?.0);
            }
            set_floor(&mut records[first..], &sorted, reps);
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

/// Runs the selected engines on one point set from a file. Must be called inside the pool.
///
/// Brute force is skipped (with a note through `progress`) above its size limit.
pub fn run_points(
    name: &str,
    points: &[[f32; 3]],
    radius: f32,
    engines: &[Engine],
    threads: usize,
    reps: Option<usize>,
    progress: &mut dyn Progress,
) -> Result<Vec<Record>, String> {
    let mut engines = engines.to_vec();
    engines.sort();
    engines.dedup();
    let reps = reps.unwrap_or_else(|| default_reps(points.len()));
    let input = Input {
        name,
        order: None,
        points,
        radius: Radius::Fixed(radius),
        map: None,
    };
    let mut records = Vec::new();
    let mut python = crate::python::PythonPeers::new(&engines);
    for engine in engines {
        if let Engine::Python(_) = engine {
            continue;
        }
        if !engine.accepts(points.len()) {
            progress.note(&format!(
                "  skipping {engine}: {} points is more than its limit of {}",
                points.len(),
                crate::engines::BRUTE_MAX_N
            ));
            continue;
        }
        records.push(measure(engine, &input, reps, threads, progress)?.0);
    }
    if python.wanted() {
        records.extend(python.run(name, None, points, radius, None, threads, reps, progress));
    }
    if records.is_empty() {
        return Err(nothing_ran());
    }
    set_floor(&mut records, points, reps);
    annotate(&mut records);
    Ok(records)
}

/// Fills in `vs_kiddo` and `agree` for every record.
///
/// Records are grouped by input and point count; the reference of a group is its brute-force
/// record if there is one, else kiddo's, else rstar's, else hhg's (else a Python peer's),
/// random order before sorted order, fewest threads first. The pair count and checksum depend
/// neither on the point order nor on the thread count, so they all share one reference.
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

        let reference = snapshot
            .iter()
            .filter(|other| other.input == record.input && other.n == record.n)
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
            let reference = records.iter().find(|other| {
                other.input == r.input && other.n == r.n && other.agree == Agreement::Reference
            });
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
        // Per scene: hhg, kiddo, rstar and brute on the random order, all but brute sorted;
        // on the periodic scene only hhg (both orders) and brute.
        assert_eq!(records.len(), (Scene::ALL.len() - 1) * 7 + 3);
        assert_eq!(config.planned(), records.len() as u64);
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
        assert_eq!(periodic.len(), 3);
        assert!(periodic.iter().any(|r| r.agree == Agreement::Agrees));

        let points = Scene::Uniform.generate(500, 3);
        let only = pool
            .install(|| {
                run_points(
                    "file",
                    &points,
                    1.0,
                    &[Engine::Brute, Engine::Hhg],
                    2,
                    Some(1),
                    &mut |_: &str| {},
                )
            })
            .unwrap();
        assert_eq!(only.len(), 2);
        assert_eq!(only[0].engine, Engine::Hhg);
        assert_eq!(only[1].agree, Agreement::Reference);
        assert_eq!(only[0].agree, Agreement::Agrees);
        assert_eq!(only[0].vs_kiddo, None);

        // Brute force alone on too many points runs nothing, which is an error, not a pass.
        let many = vec![[0.0f32; 3]; crate::engines::BRUTE_MAX_N + 1];
        let none = pool.install(|| {
            run_points(
                "many",
                &many,
                1.0,
                &[Engine::Brute],
                2,
                Some(1),
                &mut |_: &str| {},
            )
        });
        assert!(none.unwrap_err().contains("nothing was run"));

        // Scaling measures the other thread counts only.
        let scaling = run_scaling(
            &config,
            &[(Scene::Uniform, 2000)],
            &[1, 2],
            &mut |_: &str| {},
        )
        .unwrap();
        assert_eq!(scaling.len(), 3);
        assert!(scaling.iter().all(|r| r.threads == 1));
        assert_eq!(planned_scaling(&config, 1, &[1, 2]), 3);
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
