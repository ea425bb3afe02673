//! The hashing-scheme suite: every scheme behind `hhg_core::FixedRadiusScheme` (hhg-core's
//! geometric hashing, the XOR and Pouchol schemes of hhg-xor, the group scheme of hhg-group)
//! builds and searches the unique pairs of the same fixed-radius scenes (and, with
//! `--points FILE --radius R --scheme NAME`, of the points of a file in any order).
//!
//! The schemes are driven generically through `Box<dyn FixedRadiusScheme<f32>>`; [`make_scheme`]
//! is the one place where each scheme's constructor is named. A measurement is the best of `k`
//! runs of `build` plus `pairs` (the scheme's buffers reused, as a solver does every step); the
//! record keeps the pair count and checksum (compared with the particle suite's reference and
//! across schemes), the scheme's candidate tests per true pair
//! (`stats().pair_candidates / pairs`) and its largest bucket load (`stats().max_load`).

pub mod report;

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use hhg_core::{CoreScheme, FixedRadiusScheme, SchemeStats};
use hhg_group::GroupScheme;
use hhg_xor::{PoucholScheme, Primes, XorScheme};

use crate::broadphase::PairListStats;
use crate::memory::PeakMeter;
use crate::particles::record::{Order, Record, case_name};
use crate::progress::Progress;
use crate::scenes::Scene;
use crate::suite::{Agreement, default_reps};

/// A hashing scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SchemeKind {
    /// hhg-core's geometric hashing (`hhg_core::CoreScheme`).
    Core,
    /// XOR-of-primes cell hashing (`hhg_xor::XorScheme`).
    Xor,
    /// Pouchol's hierarchical hashing (`hhg_xor::PoucholScheme`).
    Pouchol,
    /// Jung and Choi's group spatial hashing (`hhg_group::GroupScheme`).
    Group,
}

impl SchemeKind {
    /// All schemes, in the order results are listed.
    pub const ALL: [SchemeKind; 4] = [
        SchemeKind::Core,
        SchemeKind::Xor,
        SchemeKind::Pouchol,
        SchemeKind::Group,
    ];

    /// The scheme's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SchemeKind::Core => "core",
            SchemeKind::Xor => "xor",
            SchemeKind::Pouchol => "pouchol",
            SchemeKind::Group => "group",
        }
    }
}

impl fmt::Display for SchemeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for SchemeKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SchemeKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown scheme `{s}` (expected core, xor, pouchol or group)"))
    }
}

/// Creates an empty search of scheme `kind` within `radius` with the scheme's default
/// settings (XOR and Pouchol: Teschner's primes, about 2 buckets per point, Pouchol's levels
/// chosen automatically; group: 3 candidate buckets, 0.2 buckets per point): the one place
/// where the schemes' constructors plug in. An error names the scheme.
pub fn make_scheme(
    kind: SchemeKind,
    radius: f32,
) -> Result<Box<dyn FixedRadiusScheme<f32>>, String> {
    let made: Result<Box<dyn FixedRadiusScheme<f32>>, hhg_core::Error> = match kind {
        SchemeKind::Core => CoreScheme::new(radius).map(|s| Box::new(s) as _),
        SchemeKind::Xor => XorScheme::new(radius, Primes::default()).map(|s| Box::new(s) as _),
        SchemeKind::Pouchol => {
            PoucholScheme::new(radius, Primes::default()).map(|s| Box::new(s) as _)
        }
        SchemeKind::Group => GroupScheme::new(radius).map(|s| Box::new(s) as _),
    };
    made.map_err(|e| format!("{kind}: {e}"))
}

/// One measured scheme on one scene and size.
#[derive(Clone, Debug)]
pub struct SchemeRecord {
    /// The scheme.
    pub scheme: SchemeKind,
    /// The scene's name, or the point file's stem.
    pub input: String,
    /// The point order of a point file's case (as [`Record::order`]); `None` for the
    /// generated scenes, which run in their random order, and for a file in its own order.
    pub order: Option<Order>,
    /// The number of points.
    pub n: usize,
    /// Worker threads.
    pub threads: usize,
    /// Runs the best was taken from.
    pub reps: usize,
    /// Build seconds of the best run.
    pub build_s: f64,
    /// Seconds of the unique-pairs search of the best run.
    pub search_s: f64,
    /// The pairs found.
    pub stats: PairListStats,
    /// The scheme's bucket statistics after the last build.
    pub scheme_stats: SchemeStats,
    /// Peak heap bytes of the measurement above what was in use before it.
    pub peak_bytes: Option<u64>,
    /// The comparison with the scene's reference (filled in by [`annotate`]).
    pub agree: Agreement,
}

impl SchemeRecord {
    /// The case name: the input name, with the order's suffix for a reordered point file.
    pub fn case(&self) -> String {
        case_name(&self.input, self.order)
    }

    /// The order that moved the record's points (the drift or the step), if one did: a point
    /// cloud of its own.
    pub fn moved(&self) -> Option<Order> {
        self.order.filter(|order| order.moves_points())
    }

    /// Build plus search seconds.
    pub fn total_s(&self) -> f64 {
        self.build_s + self.search_s
    }

    /// Candidate pair tests per true pair.
    pub fn candidates_per_pair(&self) -> Option<f64> {
        (self.stats.pairs > 0)
            .then(|| self.scheme_stats.pair_candidates as f64 / self.stats.pairs as f64)
    }
}

/// What the scheme suite covers.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemeRun {
    /// Scenes (fixed-radius ones only run).
    pub scenes: Vec<Scene>,
    /// Point counts.
    pub sizes: Vec<usize>,
    /// Schemes.
    pub schemes: Vec<SchemeKind>,
    /// Worker threads.
    pub threads: usize,
    /// Runs per measurement; `None` means [`default_reps`].
    pub reps: Option<usize>,
    /// The base seed.
    pub seed: u64,
}

impl Default for SchemeRun {
    fn default() -> Self {
        Self {
            scenes: Scene::SCHEME_DEFAULT.to_vec(),
            sizes: crate::particles::runner::DEFAULT_SIZES.to_vec(),
            schemes: SchemeKind::ALL.to_vec(),
            threads: crate::suite::default_threads(),
            reps: None,
            seed: crate::suite::DEFAULT_SEED,
        }
    }
}

impl SchemeRun {
    /// How many measurements [`run_schemes`] makes at most (for the progress bar).
    pub fn planned(&self) -> u64 {
        let scenes = self.scenes.iter().filter(|s| s.is_plain()).count();
        (scenes * self.sizes.len() * self.schemes.len()) as u64
    }
}

/// The points a scheme runs on.
#[derive(Clone, Copy, Debug)]
pub struct SchemeInput<'a> {
    /// The scene's name or the point file's stem.
    pub name: &'a str,
    /// The point order (see [`SchemeRecord::order`]).
    pub order: Option<Order>,
    /// The points, in the order the scheme gets them.
    pub points: &'a [[f32; 3]],
    /// The search radius.
    pub radius: f32,
    /// `map[k]` = input index of the scheme's point `k`, for reordered input: the checksum is
    /// taken in the input's numbering.
    pub map: Option<&'a [u32]>,
}

/// Measures one scheme on `input`: the best of `reps` runs of build plus pairs.
pub fn measure(
    kind: SchemeKind,
    input: &SchemeInput<'_>,
    reps: usize,
    threads: usize,
) -> Result<SchemeRecord, String> {
    let points = input.points;
    let meter = PeakMeter::start();
    let mut scheme = make_scheme(kind, input.radius)?;
    let mut pairs = hhg_core::PairList::default();
    let mut best = (f64::INFINITY, f64::INFINITY);
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        scheme.build(points).map_err(|e| format!("{kind}: {e}"))?;
        let built = Instant::now();
        scheme
            .pairs(&mut pairs)
            .map_err(|e| format!("{kind}: {e}"))?;
        let done = Instant::now();
        let (b, s) = ((built - start).as_secs_f64(), (done - built).as_secs_f64());
        if b + s < best.0 + best.1 {
            best = (b, s);
        }
    }
    let peak_bytes = meter.peak_bytes();
    Ok(SchemeRecord {
        scheme: kind,
        input: input.name.to_owned(),
        order: input.order,
        n: points.len(),
        threads,
        reps: reps.max(1),
        build_s: best.0,
        search_s: best.1,
        stats: PairListStats::of_mapped(pairs.pairs(), input.map),
        scheme_stats: scheme.stats(),
        peak_bytes,
        agree: Agreement::Reference,
    })
}

/// Runs every selected scheme on every selected fixed-radius scene and size (random order);
/// a scheme that cannot be made is skipped with its message. Must be called inside the pool.
pub fn run_schemes(
    config: &SchemeRun,
    progress: &mut dyn Progress,
) -> Result<Vec<SchemeRecord>, String> {
    let mut records = Vec::new();
    let mut unavailable: Vec<SchemeKind> = Vec::new();
    for &scene in &config.scenes {
        if !scene.is_plain() {
            progress.note(&format!(
                "schemes: skipping `{scene}`: a hashing scheme takes one radius for all points \
                 in open space"
            ));
            continue;
        }
        for &n in &config.sizes {
            progress.note(&format!("schemes, {scene}, {n} points:"));
            let data = scene.data(n, scene.seed(config.seed, n));
            let reps = config.reps.unwrap_or_else(|| default_reps(n));
            for &kind in &config.schemes {
                if unavailable.contains(&kind) {
                    progress.advance(kind.name());
                    continue;
                }
                if let Err(e) = make_scheme(kind, data.radius) {
                    progress.note(&format!("  {kind}: SKIPPED: {e}"));
                    unavailable.push(kind);
                    progress.advance(kind.name());
                    continue;
                }
                let input = SchemeInput {
                    name: scene.name(),
                    order: None,
                    points: &data.points,
                    radius: data.radius,
                    map: None,
                };
                let record = measure(kind, &input, reps, config.threads)?;
                progress.note(&format!(
                    "  {kind:<8} {scene:<12} n={n:<8} build {:>9.3} ms, search {:>9.3} ms, {} \
                     pairs, {:.2} candidates per pair, max load {}",
                    record.build_s * 1e3,
                    record.search_s * 1e3,
                    record.stats.pairs,
                    record.candidates_per_pair().unwrap_or(f64::NAN),
                    record.scheme_stats.max_load
                ));
                records.push(record);
                progress.advance(&format!("{kind} {scene} n={n}"));
            }
        }
    }
    Ok(records)
}

/// Fills in `agree` for every scheme record: the reference of a point cloud (scene or file,
/// size, and whether the points were moved) is the particle suite's reference record when it
/// ran there, else the core scheme's record (the file's order first), else the first.
/// A record agrees when its pair count and checksum match and every pair is listed as `i < j`.
pub fn annotate(records: &mut [SchemeRecord], particles: &[Record]) {
    let snapshot = records.to_vec();
    for record in records.iter_mut() {
        let outside = particles.iter().find(|p| {
            p.input == record.input
                && p.n == record.n
                && p.moved() == record.moved()
                && p.agree == Agreement::Reference
        });
        let inside = snapshot
            .iter()
            .filter(|o| o.input == record.input && o.n == record.n && o.moved() == record.moved())
            .min_by_key(|o| (o.scheme, o.order));
        record.agree = if !record.stats.is_consistent() {
            Agreement::Differs
        } else if let Some(reference) = outside {
            if reference.stats.pairs == record.stats.pairs
                && reference.stats.checksum == record.stats.checksum
            {
                Agreement::Agrees
            } else {
                Agreement::Differs
            }
        } else {
            match inside {
                Some(r) if r.scheme == record.scheme && r.order == record.order => {
                    Agreement::Reference
                }
                Some(r)
                    if r.stats.pairs == record.stats.pairs
                        && r.stats.checksum == record.stats.checksum =>
                {
                    Agreement::Agrees
                }
                _ => Agreement::Differs,
            }
        };
    }
}

/// One line per scheme record that does not agree with its reference.
pub fn disagreements(records: &[SchemeRecord]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.agree == Agreement::Differs)
        .map(|r| {
            let mut line = format!(
                "scheme {} on {} (n = {}): {} pairs, checksum {}",
                r.scheme,
                r.case(),
                r.n,
                r.stats.pairs,
                r.stats.checksum
            );
            if r.stats.misordered > 0 {
                line.push_str(&format!(
                    "; {} pairs not listed as i < j",
                    r.stats.misordered
                ));
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
    fn names_round_trip_and_core_is_made() {
        for kind in SchemeKind::ALL {
            assert_eq!(kind.name().parse::<SchemeKind>(), Ok(kind));
        }
        assert!("octree".parse::<SchemeKind>().is_err());
        for kind in SchemeKind::ALL {
            let scheme = make_scheme(kind, 1.0).unwrap();
            assert_eq!(scheme.name(), kind.name());
            assert!(make_scheme(kind, -1.0).is_err());
        }
    }

    #[test]
    fn schemes_agree_with_the_particle_reference() {
        let config = SchemeRun {
            scenes: vec![Scene::Uniform, Scene::Variable],
            sizes: vec![2000],
            reps: Some(1),
            threads: 2,
            ..SchemeRun::default()
        };
        let pool = thread_pool(2).unwrap();
        let mut records = pool
            .install(|| run_schemes(&config, &mut |_: &str| {}))
            .unwrap();
        assert_eq!(records.len(), SchemeKind::ALL.len());
        let core = records[0].clone();
        assert!(core.stats.pairs > 10_000);
        assert!(core.candidates_per_pair().unwrap() >= 1.0);
        assert!(core.scheme_stats.max_load > 0);

        // The particle suite's brute force on the same scene is the reference.
        let data = Scene::Uniform.data(2000, Scene::Uniform.seed(config.seed, 2000));
        let brute = crate::particles::engines::Engine::Brute
            .run(&data.points, data.radius, None)
            .unwrap()
            .stats(None);
        let reference = Record {
            engine: crate::particles::engines::Engine::Brute,
            input: "uniform".into(),
            order: Some(crate::particles::record::Order::Random),
            n: 2000,
            threads: 2,
            reps: 1,
            build_s: 0.0,
            query_s: 1.0,
            stats: brute,
            vs_kiddo: None,
            over_sorted: None,
            list_pass: None,
            floor_s: None,
            peak_bytes: None,
            agree: Agreement::Reference,
        };
        annotate(&mut records, std::slice::from_ref(&reference));
        assert!(records.iter().all(|r| r.agree == Agreement::Agrees));
        records[0].stats.checksum += 1;
        annotate(&mut records, &[reference]);
        assert_eq!(records[0].agree, Agreement::Differs);
        assert_eq!(disagreements(&records).len(), 1);
    }
}
