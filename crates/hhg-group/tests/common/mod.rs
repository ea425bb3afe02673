//! Shared helpers of hhg-group's integration tests: a seeded PRNG, scene generators, the brute-force oracles and exact checks (after hhg-core's).
// Each test binary uses a different subset of these helpers.
#![allow(dead_code, unused_macros)]

/// Declares `mod name { f32, f64 }` tests calling the generic `name::<T>()`.
macro_rules! for_both_precisions {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn f32() {
                    super::$name::<f32>();
                }

                #[test]
                fn f64() {
                    super::$name::<f64>();
                }
            }
        )*
    };
}

use std::fmt::Debug;
use std::sync::OnceLock;

use hhg_core::{NeighborLists, Real};
use rayon::{ThreadPool, ThreadPoolBuilder};

/// SplitMix64: a tiny, fast, seedable generator, so that every test is deterministic.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose stream depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform value in `[0, 1)` with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform value in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// A uniform integer in `0..n` (`n > 0`); the modulo bias is irrelevant here.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A standard normal value by the Box-Muller transform.
    pub fn gaussian(&mut self) -> f64 {
        // 1 - u lies in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// The coordinate types under test, with the few extra operations the tests need.
pub trait TestReal: Real {
    /// The type's name, for messages.
    const NAME: &'static str;

    /// The next representable value towards +infinity.
    fn next_up(self) -> Self;

    /// The next representable value towards -infinity.
    fn next_down(self) -> Self;

    /// The bit pattern, widened (exact comparison of values, including the sign of zero).
    fn bits(self) -> u64;
}

impl TestReal for f32 {
    const NAME: &'static str = "f32";

    fn next_up(self) -> Self {
        f32::next_up(self)
    }

    fn next_down(self) -> Self {
        f32::next_down(self)
    }

    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl TestReal for f64 {
    const NAME: &'static str = "f64";

    fn next_up(self) -> Self {
        f64::next_up(self)
    }

    fn next_down(self) -> Self {
        f64::next_down(self)
    }

    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// A named point set with its search radius.
#[derive(Clone, Debug)]
pub struct Scene<T> {
    /// What the scene is, for messages.
    pub name: String,
    /// The points, in the caller's numbering.
    pub points: Vec<[T; 3]>,
    /// The search radius.
    pub radius: T,
}

impl<T: TestReal> Scene<T> {
    /// Converts `f64` points (rounding to nearest) into a scene of `T`.
    pub fn new(name: impl Into<String>, points: &[[f64; 3]], radius: f64) -> Self {
        Self {
            name: format!("{} ({}, n = {})", name.into(), T::NAME, points.len()),
            points: to_real(points),
            radius: T::from_f64(radius),
        }
    }
}

/// Rounds `f64` points to `T`.
pub fn to_real<T: Real>(points: &[[f64; 3]]) -> Vec<[T; 3]> {
    points.iter().map(|p| p.map(T::from_f64)).collect()
}

/// `n` points uniform in the box `min..max` (an axis with `min == max` is degenerate).
pub fn uniform_box(rng: &mut SplitMix64, n: usize, min: [f64; 3], max: [f64; 3]) -> Vec<[f64; 3]> {
    (0..n)
        .map(|_| std::array::from_fn(|a| rng.range(min[a], max[a])))
        .collect()
}

/// The edge of a cube holding `n` uniform points with about `neighbours` neighbours each
/// within `radius`.
pub fn cube_edge(n: usize, radius: f64, neighbours: f64) -> f64 {
    let volume = n as f64 * (4.0 / 3.0) * std::f64::consts::PI * radius.powi(3) / neighbours;
    volume.cbrt()
}

/// `n` points uniform in a cube centred at `centre` with about `neighbours` neighbours each.
pub fn uniform_cube(
    rng: &mut SplitMix64,
    n: usize,
    centre: [f64; 3],
    radius: f64,
    neighbours: f64,
) -> Vec<[f64; 3]> {
    let half = cube_edge(n.max(1), radius, neighbours) / 2.0;
    uniform_box(rng, n, centre.map(|c| c - half), centre.map(|c| c + half))
}

/// Gaussian clusters `(count, sigma)` with centres uniform in `[0, side)^3`.
pub fn gaussian_clusters(
    rng: &mut SplitMix64,
    clusters: &[(usize, f64)],
    side: f64,
) -> Vec<[f64; 3]> {
    let mut points = Vec::new();
    for &(count, sigma) in clusters {
        let centre: [f64; 3] = std::array::from_fn(|_| rng.range(0.0, side));
        for _ in 0..count {
            points.push(std::array::from_fn(|a| centre[a] + sigma * rng.gaussian()));
        }
    }
    points
}

/// A `counts[0] x counts[1] x counts[2]` lattice with the given spacing from `origin`.
pub fn lattice(counts: [usize; 3], spacing: f64, origin: [f64; 3]) -> Vec<[f64; 3]> {
    let mut points = Vec::with_capacity(counts.iter().product());
    for k in 0..counts[2] {
        for j in 0..counts[1] {
            for i in 0..counts[0] {
                points.push([
                    origin[0] + i as f64 * spacing,
                    origin[1] + j as f64 * spacing,
                    origin[2] + k as f64 * spacing,
                ]);
            }
        }
    }
    points
}

/// Shuffles in place (Fisher-Yates), so that the caller's numbering is not spatial.
pub fn shuffle<V>(rng: &mut SplitMix64, values: &mut [V]) {
    for i in (1..values.len()).rev() {
        values.swap(i, rng.below(i + 1));
    }
}

/// The neighbour predicate, exactly as the contract states it.
#[inline]
pub fn within<T: Real>(p: [T; 3], q: [T; 3], radius: T) -> bool {
    T::distance_squared(p, q) <= radius * radius
}

/// Brute force: for every point `i`, every `j != i` within the radius, ascending.
pub fn oracle_self<T: Real>(points: &[[T; 3]], radius: T) -> Vec<Vec<u32>> {
    (0..points.len())
        .map(|i| {
            (0..points.len())
                .filter(|&j| j != i && within(points[i], points[j], radius))
                .map(|j| j as u32)
                .collect()
        })
        .collect()
}

/// Brute force: every pair `i < j` within the radius, in lexicographic order.
pub fn oracle_pairs<T: Real>(points: &[[T; 3]], radius: T) -> Vec<[u32; 2]> {
    let mut pairs = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            if within(points[i], points[j], radius) {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    pairs
}

/// Panics with the first position where two sequences differ (or their lengths).
pub fn assert_same_seq<V: PartialEq + Debug>(what: &str, got: &[V], expected: &[V]) {
    if let Some(k) = (0..got.len().min(expected.len())).find(|&k| got[k] != expected[k]) {
        panic!(
            "{what}: first difference at position {k}: got {:?}, expected {:?} (lengths {} and {})",
            got[k],
            expected[k],
            got.len(),
            expected.len()
        );
    }
    assert_eq!(got.len(), expected.len(), "{what}: lengths differ");
}

/// Checks the CSR structure of `lists` and that list `i` equals `expected[i]` exactly.
pub fn check_lists<T: Real>(what: &str, lists: &NeighborLists<T>, expected: &[Vec<u32>]) {
    let n = expected.len();
    assert_eq!(lists.len(), n, "{what}: number of lists");
    assert_eq!(lists.is_empty(), n == 0, "{what}: is_empty");
    let offsets = lists.offsets();
    assert_eq!(offsets.len(), n + 1, "{what}: offsets length");
    assert_eq!(offsets[0], 0, "{what}: offsets[0]");
    assert!(
        offsets.windows(2).all(|w| w[0] <= w[1]),
        "{what}: offsets are not monotone"
    );
    assert_eq!(
        offsets[n],
        lists.indices().len(),
        "{what}: offsets[n] != indices().len()"
    );
    assert_eq!(lists.total(), lists.indices().len(), "{what}: total()");
    for (i, want) in expected.iter().enumerate() {
        let got = lists.neighbors(i);
        if got != &want[..] {
            let missing: Vec<u32> = want.iter().copied().filter(|j| !got.contains(j)).collect();
            let extra: Vec<u32> = got.iter().copied().filter(|j| !want.contains(j)).collect();
            panic!(
                "{what}: list {i} differs from the oracle: {} entries instead of {}; \
                 missing {missing:?}, extra {extra:?}, got {got:?}",
                got.len(),
                want.len()
            );
        }
    }
    let expected_total: usize = expected.iter().map(Vec::len).sum();
    assert_eq!(lists.total(), expected_total, "{what}: total entries");
}

/// Checks unique pairs: `i < j` in each, no duplicates, the same set as `expected`
/// (which is sorted).
pub fn check_pairs(what: &str, pairs: &[[u32; 2]], expected: &[[u32; 2]]) {
    if let Some(p) = pairs.iter().find(|p| p[0] >= p[1]) {
        panic!("{what}: pair {p:?} is not ordered i < j");
    }
    let mut sorted = pairs.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        panic!("{what}: pair {:?} is reported twice", w[0]);
    }
    if sorted != expected {
        let missing: Vec<_> = expected
            .iter()
            .filter(|p| sorted.binary_search(p).is_err())
            .take(10)
            .collect();
        let extra: Vec<_> = sorted
            .iter()
            .filter(|p| expected.binary_search(p).is_err())
            .take(10)
            .collect();
        panic!(
            "{what}: {} pairs instead of {}; missing (first 10) {missing:?}, extra (first 10) {extra:?}",
            sorted.len(),
            expected.len()
        );
    }
}

/// The thread counts every path is run with.
pub const THREAD_COUNTS: [usize; 3] = [1, 2, 16];

/// Runs `op` inside a rayon pool of `threads` threads (pools of [`THREAD_COUNTS`] are
/// created once per test binary and shared; other counts get a fresh pool).
pub fn in_pool<R: Send>(threads: usize, op: impl FnOnce() -> R + Send) -> R {
    static POOLS: [OnceLock<ThreadPool>; 3] = [const { OnceLock::new() }; 3];
    let build = || {
        ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool")
    };
    match THREAD_COUNTS.iter().position(|&t| t == threads) {
        Some(slot) => POOLS[slot].get_or_init(build).install(op),
        None => build().install(op),
    }
}

/// Brute force: every point of the set within the radius of `q`, ascending.
pub fn oracle_query<T: Real>(points: &[[T; 3]], radius: T, q: [T; 3]) -> Vec<u32> {
    (0..points.len() as u32)
        .filter(|&j| within(q, points[j as usize], radius))
        .collect()
}

/// The scenes every operation is checked on, each with its radius: uniform, Gaussian
/// clusters, a lattice with pairs at exactly `r`, points on cell borders, negative and
/// 1e6-scale coordinates, all points in one cell, a far outlier, coincident points, and the
/// empty and one-point sets.
pub fn scenes<T: TestReal>(seed: u64) -> Vec<Scene<T>> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    out.push(Scene::new(
        "uniform",
        &uniform_cube(&mut rng, 2000, [0.0; 3], 1.0, 30.0),
        1.0,
    ));
    out.push(Scene::new(
        "gaussian clusters",
        &gaussian_clusters(&mut rng, &[(700, 0.8), (500, 2.0), (300, 0.2)], 12.0),
        0.5,
    ));
    // Integer lattice with spacing r: axis neighbours are exactly r apart in both precisions.
    let mut points = lattice([11, 10, 9], 1.0, [-3.0, 2.0, 5.0]);
    shuffle(&mut rng, &mut points);
    out.push(Scene::new("lattice at exactly r", &points, 1.0));
    // Points on and one ulp around the cell borders of a grid anchored at the origin.
    let cell = 0.75 * (1.0 + hhg_core::CELL_MARGIN);
    let mut points = vec![[0.0; 3]];
    for _ in 0..600 {
        let mut p: [f64; 3] = std::array::from_fn(|_| rng.below(8) as f64 * cell);
        let axis = rng.below(3);
        p[axis] = match rng.below(3) {
            0 => p[axis].next_up(),
            1 => p[axis].next_down().max(0.0),
            _ => p[axis],
        };
        points.push(p);
    }
    out.push(Scene::new("cell borders", &points, 0.75));
    out.push(Scene::new(
        "negative and 1e6-scale",
        &uniform_cube(&mut rng, 1500, [-1.0e6, 2.5e6, -3.0e6], 40.0, 30.0),
        40.0,
    ));
    out.push(Scene::new(
        "all in one cell",
        &uniform_box(&mut rng, 300, [2.0; 3], [2.9; 3]),
        1.0,
    ));
    let mut points = uniform_cube(&mut rng, 1500, [0.0; 3], 1.0, 25.0);
    points.push([4.0e5, -3.0e5, 1.0e5]);
    points.push([4.0e5 + 0.5, -3.0e5, 1.0e5]);
    out.push(Scene::new("far outlier", &points, 1.0));
    let mut points = uniform_box(&mut rng, 200, [0.0; 3], [6.0; 3]);
    let copy = points[..40].to_vec();
    points.extend(copy);
    points.extend(std::iter::repeat_n([1.0, 1.0, 1.0], 20));
    shuffle(&mut rng, &mut points);
    out.push(Scene::new("coincident points", &points, 0.6));
    out.push(Scene::new("empty", &[], 1.0));
    out.push(Scene::new("one point", &[[1.0, 2.0, 3.0]], 1.0));
    out
}

/// Query points for a scene: every 7th point of the set, points near it, and random points
/// in and far around its bounding box.
pub fn queries<T: TestReal>(rng: &mut SplitMix64, points: &[[T; 3]], radius: T) -> Vec<[T; 3]> {
    let mut out: Vec<[T; 3]> = points.iter().step_by(7).copied().collect();
    let r = radius.to_f64();
    let (mut lo, mut hi) = ([0.0f64; 3], [1.0f64; 3]);
    if let Some(first) = points.first() {
        lo = first.map(Real::to_f64);
        hi = lo;
        for p in points {
            for a in 0..3 {
                lo[a] = lo[a].min(p[a].to_f64());
                hi[a] = hi[a].max(p[a].to_f64());
            }
        }
    }
    for p in points.iter().step_by(13) {
        out.push(std::array::from_fn(|a| {
            T::from_f64(p[a].to_f64() + rng.range(-r, r))
        }));
    }
    for _ in 0..40 {
        out.push(std::array::from_fn(|a| {
            T::from_f64(rng.range(lo[a] - 3.0 * r, hi[a] + 3.0 * r))
        }));
    }
    out.push(std::array::from_fn(|a| T::from_f64(hi[a] + 1.0e7 * r)));
    out.push(std::array::from_fn(|a| T::from_f64(lo[a] - 1.0e7 * r)));
    out
}
