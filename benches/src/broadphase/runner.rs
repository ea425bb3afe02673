//! The broad-phase runner: every engine steps the same seeded scenario and is timed per phase.
//!
//! A run of one engine on `n` boxes generates the scenario, times the setup (the first update)
//! and detects once, then takes [`WARMUP_STEPS`] untimed steps and `steps` measured ones. A step
//! moves the boxes (not timed), updates the engine's structure (timed as the update) and writes
//! all pairs (timed as the detection). The record keeps the median of each phase over the
//! measured steps and the median of their sums. Every engine replays the same scenario from the
//! same seed, so the pair count and checksum of every step, setup included, must agree.

use std::time::Instant;

use crate::broadphase::PairListStats;
use crate::broadphase::engines::BroadEngine;
use crate::broadphase::scenario::{BroadScene, Scenario};
use crate::memory::PeakMeter;
use crate::progress::Progress;
use crate::suite::Agreement;

/// The box counts of the quick default run.
pub const BROAD_SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// The untimed steps between the setup and the measured steps.
pub const WARMUP_STEPS: usize = 1;

/// Measured steps per run: 5 up to 100k boxes, 3 above.
pub fn default_steps(n: usize) -> usize {
    if n <= 100_000 { 5 } else { 3 }
}

/// What the broad-phase run covers.
#[derive(Clone, Debug, PartialEq)]
pub struct BroadRun {
    /// Scenes, in order.
    pub scenes: Vec<BroadScene>,
    /// Box counts, in order.
    pub sizes: Vec<usize>,
    /// Engines; brute force is skipped above [`crate::broadphase::brute::BRUTE_MAX_N`] boxes.
    pub engines: Vec<BroadEngine>,
    /// Worker threads.
    pub threads: usize,
    /// Measured steps per run; `None` means [`default_steps`].
    pub steps: Option<usize>,
    /// The base seed.
    pub seed: u64,
}

impl Default for BroadRun {
    fn default() -> Self {
        Self {
            scenes: BroadScene::ALL.to_vec(),
            sizes: BROAD_SIZES.to_vec(),
            engines: BroadEngine::all_built(),
            threads: crate::suite::default_threads(),
            steps: None,
            seed: crate::suite::DEFAULT_SEED,
        }
    }
}

impl BroadRun {
    /// How many measurements [`run_broadphase`] makes at most (for the progress bar).
    pub fn planned(&self) -> u64 {
        let mut count = 0;
        for _ in &self.scenes {
            for &n in &self.sizes {
                count += self.engines.iter().filter(|e| e.accepts(n)).count();
            }
        }
        count as u64
    }
}

/// One measured engine on one box count.
#[derive(Clone, Debug)]
pub struct BroadRecord {
    /// The engine.
    pub engine: BroadEngine,
    /// The scene.
    pub scene: BroadScene,
    /// The number of boxes.
    pub n: usize,
    /// Worker threads.
    pub threads: usize,
    /// Measured steps.
    pub steps: usize,
    /// Seconds of the setup (the first update, building the structure from nothing).
    pub setup_s: f64,
    /// Median seconds of the update over the measured steps.
    pub update_s: f64,
    /// Median seconds of the detection over the measured steps.
    pub detect_s: f64,
    /// Median seconds of update plus detection over the measured steps.
    pub step_s: f64,
    /// The pairs of the last step.
    pub stats: PairListStats,
    /// The pairs of every step, the setup's first.
    pub step_stats: Vec<PairListStats>,
    /// Heap bytes of the engine's structure after the last step (the pair output excluded).
    pub heap_bytes: usize,
    /// The most heap bytes the run held at once above what was in use before it (structure,
    /// scenario and pair output; `None` without the counting allocator).
    pub peak_bytes: Option<u64>,
    /// hhg's step time over this record's, when hhg ran on the same count.
    pub vs_hhg: Option<f64>,
    /// The comparison with the reference of its box count (filled in by [`annotate`]).
    pub agree: Agreement,
}

impl BroadRecord {
    /// Overlapping pairs per box in the last step.
    pub fn pairs_per_box(&self) -> f64 {
        self.stats.pairs as f64 / self.n.max(1) as f64
    }

    /// Nanoseconds of the median step per box.
    pub fn ns_per_box(&self) -> f64 {
        self.step_s * 1e9 / self.n.max(1) as f64
    }

    /// Nanoseconds of the median step per pair of the last step, if any.
    pub fn ns_per_pair(&self) -> Option<f64> {
        (self.stats.pairs > 0).then(|| self.step_s * 1e9 / self.stats.pairs as f64)
    }
}

/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        len if len % 2 == 1 => sorted[len / 2],
        len => 0.5 * (sorted[len / 2 - 1] + sorted[len / 2]),
    }
}

/// Runs `engine` on the `n`-object instance of `scene` from `seed` for `steps` measured steps.
///
/// Must be called inside the thread pool of the run.
pub fn measure(
    engine: BroadEngine,
    scene: BroadScene,
    n: usize,
    seed: u64,
    steps: usize,
    threads: usize,
) -> Result<BroadRecord, String> {
    let meter = PeakMeter::start();
    let mut scenario = Scenario::generate(scene, n, seed);
    let mut state = engine.state(scene)?;
    let mut out: Vec<[u32; 2]> = Vec::new();
    let mut step_stats = Vec::with_capacity(1 + WARMUP_STEPS + steps);

    let start = Instant::now();
    state.update(&scenario, true)?;
    let setup_s = start.elapsed().as_secs_f64();
    state.pairs(&scenario, &mut out)?;
    step_stats.push(PairListStats::of(&out));

    let (mut updates, mut detections, mut totals) = (Vec::new(), Vec::new(), Vec::new());
    for step in 0..WARMUP_STEPS + steps {
        scenario.step();
        let start = Instant::now();
        state.update(&scenario, false)?;
        let updated = Instant::now();
        state.pairs(&scenario, &mut out)?;
        let done = Instant::now();
        step_stats.push(PairListStats::of(&out));
        if step >= WARMUP_STEPS {
            let update = (updated - start).as_secs_f64();
            let detect = (done - updated).as_secs_f64();
            updates.push(update);
            detections.push(detect);
            totals.push(update + detect);
        }
    }
    let stats = *step_stats.last().ok_or("no step was made")?;
    let peak_bytes = meter.peak_bytes();
    Ok(BroadRecord {
        engine,
        scene,
        n,
        threads,
        steps,
        setup_s,
        update_s: median(&updates),
        detect_s: median(&detections),
        step_s: median(&totals),
        stats,
        step_stats,
        heap_bytes: state.heap_bytes(),
        peak_bytes,
        vs_hhg: None,
        agree: Agreement::Reference,
    })
}

/// Runs every selected engine on every selected scene and box count; an engine that cannot
/// take a scene is skipped with a message. Must be called inside the pool.
pub fn run_broadphase(
    config: &BroadRun,
    progress: &mut dyn Progress,
) -> Result<Vec<BroadRecord>, String> {
    let mut engines = config.engines.clone();
    engines.sort();
    engines.dedup();
    let mut records = Vec::new();
    for &scene in &config.scenes {
        for &n in &config.sizes {
            let seed = Scenario::seed_for(scene, config.seed, n);
            let steps = config.steps.unwrap_or_else(|| default_steps(n)).max(1);
            progress.note(&format!("broad phase, {scene}, {n} boxes:"));
            for &engine in &engines {
                if !engine.accepts(n) {
                    continue;
                }
                if let Err(why) = engine.takes(scene) {
                    progress.note(&format!("  {why}"));
                    progress.advance(&format!("{engine} {scene} n={n} (skipped)"));
                    continue;
                }
                let record = measure(engine, scene, n, seed, steps, config.threads)?;
                progress.note(&format!(
                    "  {engine:<5} {scene:<8} n={n:<8} threads={} setup {:>9.3} ms, step {:>9.3} ms \
                     (median of {steps}), {} pairs",
                    config.threads,
                    record.setup_s * 1e3,
                    record.step_s * 1e3,
                    record.stats.pairs
                ));
                progress.advance(&format!("{engine} {scene} n={n}"));
                records.push(record);
            }
        }
    }
    if records.is_empty() {
        return Err(format!(
            "nothing was run in the broad-phase suite: brute force, the only engine selected, runs \
             only up to {} boxes",
            crate::broadphase::brute::BRUTE_MAX_N
        ));
    }
    annotate(&mut records);
    Ok(records)
}

/// Measures the selected engines (brute force excepted) on each `(scene, n)` case with every
/// thread count of `threads`, each in a pool of its own.
///
/// The main run's thread count is measured again here, beside the others: the host's speed
/// drifts between runs (one thread's median step at 1M cuboids moved between 222 and 358 ms
/// from one run to the next on an otherwise idle machine), so a ratio of the main run's time
/// to one taken later measures the drift as much as the threads. Every count runs in two
/// rounds, the second in reverse order (1, 2, 2, 1), and keeps its faster round, so a drift
/// within the measurement moves both ends of the ratio alike.
pub fn run_scaling(
    config: &BroadRun,
    cases: &[(BroadScene, usize)],
    threads: &[usize],
    progress: &mut dyn Progress,
) -> Result<Vec<BroadRecord>, String> {
    let mut engines: Vec<BroadEngine> = config
        .engines
        .iter()
        .copied()
        .filter(|&e| e != BroadEngine::Brute)
        .collect();
    engines.sort();
    engines.dedup();
    let mut records = Vec::new();
    for &(scene, n) in cases {
        let seed = Scenario::seed_for(scene, config.seed, n);
        let steps = config.steps.unwrap_or_else(|| default_steps(n)).max(1);
        let mut fastest: Vec<BroadRecord> = Vec::new();
        for &t in threads.iter().chain(threads.iter().rev()) {
            progress.note(&format!(
                "thread scaling: broad phase, {scene}, {n} boxes, {t} thread(s):"
            ));
            let pool = crate::suite::thread_pool(t)?;
            for &engine in &engines {
                if engine.takes(scene).is_err() {
                    continue;
                }
                let record = pool.install(|| measure(engine, scene, n, seed, steps, t))?;
                progress.note(&format!(
                    "  {engine:<5} {scene:<8} n={n:<8} threads={t} step {:>9.3} ms",
                    record.step_s * 1e3
                ));
                progress.advance(&format!("{engine} {scene} n={n} threads={t}"));
                match fastest
                    .iter_mut()
                    .find(|kept| kept.engine == engine && kept.threads == t)
                {
                    Some(kept) if kept.step_s <= record.step_s => {}
                    Some(kept) => *kept = record,
                    None => fastest.push(record),
                }
            }
        }
        records.append(&mut fastest);
    }
    annotate(&mut records);
    Ok(records)
}

/// The number of measurements [`run_scaling`] makes at most (two rounds of every count).
pub fn planned_scaling(config: &BroadRun, cases: usize, threads: &[usize]) -> u64 {
    let engines = config
        .engines
        .iter()
        .filter(|&&e| e != BroadEngine::Brute)
        .count();
    (cases * engines * threads.len() * 2) as u64
}

/// Fills in `vs_hhg` and `agree` for every record.
///
/// The reference of a scene, box count and thread count is brute force where it ran, else
/// sort-and-sweep, else parry, else hhg; a record agrees when the pair count and checksum of
/// every one of its steps match the reference's and its pairs are all listed as `i < j`.
pub fn annotate(records: &mut [BroadRecord]) {
    let snapshot: Vec<BroadRecord> = records.to_vec();
    for record in records.iter_mut() {
        let same_n = |other: &&BroadRecord| {
            other.n == record.n && other.scene == record.scene && other.threads == record.threads
        };
        record.vs_hhg = snapshot
            .iter()
            .filter(same_n)
            .find(|other| other.engine == BroadEngine::Hhg)
            .map(|hhg| hhg.step_s / record.step_s);
        let reference = snapshot
            .iter()
            .filter(same_n)
            .min_by_key(|other| other.engine.reference_priority());
        let consistent = record.step_stats.iter().all(PairListStats::is_consistent);
        record.agree = match reference {
            _ if !consistent => Agreement::Differs,
            Some(r) if r.engine == record.engine => Agreement::Reference,
            Some(r) if r.step_stats == record.step_stats => Agreement::Agrees,
            _ => Agreement::Differs,
        };
    }
}

/// One line per record that does not agree with its reference, saying what differs.
pub fn disagreements(records: &[BroadRecord]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.agree == Agreement::Differs)
        .map(|r| {
            let mut line = format!(
                "broad phase: {} on {} with {} boxes ({} threads)",
                r.engine, r.scene, r.n, r.threads
            );
            let reference = records.iter().find(|other| {
                other.n == r.n
                    && other.scene == r.scene
                    && other.threads == r.threads
                    && other.agree == Agreement::Reference
            });
            match reference {
                Some(reference) => {
                    let first = r
                        .step_stats
                        .iter()
                        .zip(&reference.step_stats)
                        .position(|(a, b)| a != b);
                    if let Some(step) = first {
                        let (a, b) = (r.step_stats[step], reference.step_stats[step]);
                        line.push_str(&format!(
                            ": step {step} has {} pairs, checksum {}; reference {}: {} pairs, \
                             checksum {}",
                            a.pairs, a.checksum, reference.engine, b.pairs, b.checksum
                        ));
                    } else if r.step_stats.len() != reference.step_stats.len() {
                        line.push_str(&format!(
                            ": {} steps against the reference's {}",
                            r.step_stats.len(),
                            reference.step_stats.len()
                        ));
                    }
                }
                None => line.push_str(": no reference"),
            }
            let misordered: u64 = r.step_stats.iter().map(|s| s.misordered).sum();
            if misordered > 0 {
                line.push_str(&format!("; {misordered} pairs not listed as i < j"));
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::thread_pool;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn a_small_run_agrees_everywhere() {
        let config = BroadRun {
            scenes: vec![BroadScene::Cuboids],
            sizes: vec![1500],
            steps: Some(2),
            threads: 2,
            ..BroadRun::default()
        };
        let pool = thread_pool(2).unwrap();
        let records = pool
            .install(|| run_broadphase(&config, &mut |_: &str| {}))
            .unwrap();
        assert_eq!(records.len(), BroadEngine::all_built().len());
        assert_eq!(config.planned(), records.len() as u64);
        assert!(
            disagreements(&records).is_empty(),
            "{:?}",
            disagreements(&records)
        );
        for r in &records {
            assert_eq!(r.step_stats.len(), 1 + WARMUP_STEPS + 2);
            assert!(r.stats.pairs > 1000 && r.vs_hhg.is_some());
            assert!(r.step_s >= r.update_s.min(r.detect_s));
        }
        let brute = records
            .iter()
            .find(|r| r.engine == BroadEngine::Brute)
            .unwrap();
        assert_eq!(brute.agree, Agreement::Reference);
        assert_eq!(brute.heap_bytes, 0);

        // A wrong step is flagged, with the step it first differs in.
        let mut broken = records.clone();
        let sap = broken
            .iter_mut()
            .find(|r| r.engine == BroadEngine::Sap)
            .unwrap();
        sap.step_stats[2].checksum += 1;
        annotate(&mut broken);
        let lines = disagreements(&broken);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("sap on cuboids with 1500 boxes (2 threads): step 2"),
            "{}",
            lines[0]
        );

        let only_brute = BroadRun {
            sizes: vec![30_000],
            engines: vec![BroadEngine::Brute],
            ..BroadRun::default()
        };
        let err = pool.install(|| run_broadphase(&only_brute, &mut |_: &str| {}));
        assert!(err.unwrap_err().contains("nothing was run"));

        // parry is skipped with a message on the scene with infinite slabs (or, in a build
        // without it, on every scene).
        let huge = BroadRun {
            scenes: vec![BroadScene::Huge],
            sizes: vec![1200],
            engines: vec![BroadEngine::Parry, BroadEngine::Sap],
            steps: Some(1),
            threads: 2,
            ..BroadRun::default()
        };
        let mut notes = Vec::new();
        let records = pool
            .install(|| run_broadphase(&huge, &mut |line: &str| notes.push(line.to_owned())))
            .unwrap();
        assert_eq!(records.len(), 1);
        let why = if cfg!(feature = "parry") {
            "parry skips `huge`"
        } else {
            "`parry` feature"
        };
        assert!(notes.iter().any(|n| n.contains(why)), "{notes:?}");

        // Scaling measures every thread count, the main run's included, brute force
        // excepted: two rounds each, one record per engine and count (the faster round).
        let mut measured = 0;
        let scaling = run_scaling(
            &config,
            &[(BroadScene::Cuboids, 1500)],
            &[1, 2],
            &mut |line: &str| measured += usize::from(line.contains(" step ")),
        )
        .unwrap();
        let timed = config.engines.len() - 1;
        assert_eq!(scaling.len(), 2 * timed);
        for threads in [1, 2] {
            assert_eq!(
                scaling.iter().filter(|r| r.threads == threads).count(),
                timed
            );
        }
        assert!(scaling.iter().all(|r| r.agree != Agreement::Differs));
        assert_eq!(measured, 4 * timed);
        assert_eq!(planned_scaling(&config, 1, &[1, 2]), measured as u64);
    }
}
