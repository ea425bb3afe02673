//! Shared helpers of the integration tests (adapted from hhg-core's): a seeded PRNG, scene generators, brute-force oracles, exact checks and a driver that checks a whole scheme.
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

use hhg_core::{FixedRadiusScheme, NeighborLists, Real};
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

/// Brute force: for every searching point, every searched point within the radius, ascending.
pub fn oracle_cross<T: Real>(
    searching: &[[T; 3]],
    searched: &[[T; 3]],
    radius: T,
) -> Vec<Vec<u32>> {
    searching
        .iter()
        .map(|&p| {
            (0..searched.len())
                .filter(|&j| within(p, searched[j], radius))
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

/// Checks that each list of `lists` excludes its own index (lists of a set against itself).
pub fn check_excludes_self<T: Real>(what: &str, lists: &NeighborLists<T>) {
    for i in 0..lists.len() {
        assert!(
            !lists.neighbors(i).contains(&(i as u32)),
            "{what}: list {i} contains the point itself"
        );
    }
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

/// The adversarial and randomized point scenes every fixed-radius scheme is checked on.
pub fn point_scenes<T: TestReal>() -> Vec<Scene<T>> {
    let mut scenes = Vec::new();
    let mut rng = SplitMix64::new(7);

    let points = uniform_cube(&mut rng, 2000, [0.3, -0.7, 1.1], 1.0, 40.0);
    scenes.push(Scene::new("uniform cube", &points, 1.0));

    let points = gaussian_clusters(&mut rng, &[(700, 0.4), (500, 1.5), (400, 0.15)], 12.0);
    scenes.push(Scene::new("gaussian clusters", &points, 0.5));

    // Spacing exactly r (exact in both precisions): every axis neighbour is at exactly r.
    let mut points = lattice([11, 10, 12], 0.5, [-2.0, 1.0, 0.5]);
    shuffle(&mut rng, &mut points);
    scenes.push(Scene::new("lattice with pairs at exactly r", &points, 0.5));

    // Points where cells start (multiples of the cell edge from the box's minimum), and the
    // same points moved by exactly r along x.
    let r = 0.25;
    let cell = r * (1.0 + hhg_core::CELL_MARGIN);
    let mut points = Vec::new();
    for _ in 0..1200 {
        let k: [f64; 3] = std::array::from_fn(|_| rng.below(12) as f64);
        let p = [k[0] * cell, k[1] * cell, rng.range(0.0, 12.0 * cell)];
        points.push(p);
        if rng.below(3) == 0 {
            points.push([p[0] + r, p[1], p[2]]);
        }
    }
    points.push([0.0; 3]);
    shuffle(&mut rng, &mut points);
    scenes.push(Scene::new("points on cell borders", &points, r));

    let points = uniform_cube(&mut rng, 1500, [-1000.5, -250.25, -3.0], 1.0, 30.0);
    scenes.push(Scene::new("negative coordinates", &points, 1.0));

    let points = uniform_cube(&mut rng, 1500, [1e6, -1e6, 1e6], 2.0, 30.0);
    scenes.push(Scene::new("coordinates around 1e6", &points, 2.0));

    let points = uniform_box(&mut rng, 400, [5.0; 3], [5.4; 3]);
    scenes.push(Scene::new("all points in one cell", &points, 1.0));

    let mut points = uniform_cube(&mut rng, 1500, [0.0; 3], 1.0, 30.0);
    points.insert(rng.below(points.len()), [9.0e8, -1.0e5, 2.0e5]);
    scenes.push(Scene::new("a far outlier", &points, 1.0));

    let mut points = uniform_box(&mut rng, 300, [0.0; 3], [3.0; 3]);
    let copies: Vec<[f64; 3]> = points[..50].to_vec();
    points.extend(copies);
    scenes.push(Scene::new("identical points", &points, 0.5));

    scenes.push(Scene::new("one point", &[[1.0, 2.0, 3.0]], 1.0));
    scenes.push(Scene::new("no point", &[], 1.0));
    scenes
}

/// Query points for a scene: set points, points near them, points around the box and far.
pub fn query_points<T: TestReal>(seed: u64, scene: &Scene<T>) -> Vec<[T; 3]> {
    let mut rng = SplitMix64::new(seed);
    let r = scene.radius.to_f64();
    let mut queries = Vec::new();
    for k in 0..40 {
        if scene.points.is_empty() {
            queries.push(std::array::from_fn(|_| T::from_f64(rng.range(-5.0, 5.0))));
            continue;
        }
        let p = scene.points[rng.below(scene.points.len())].map(Real::to_f64);
        let q: [f64; 3] = match k % 4 {
            0 => p,
            1 => std::array::from_fn(|a| p[a] + rng.range(-r, r)),
            2 => std::array::from_fn(|a| p[a] + rng.range(-4.0 * r, 4.0 * r)),
            _ => std::array::from_fn(|a| p[a] + rng.range(-1e3, 1e3) * r),
        };
        queries.push(q.map(T::from_f64));
    }
    queries
}

/// The neighbours of an arbitrary point by brute force, ascending.
pub fn oracle_point<T: Real>(points: &[[T; 3]], p: [T; 3], radius: T) -> Vec<u32> {
    (0..points.len() as u32)
        .filter(|&j| within(p, points[j as usize], radius))
        .collect()
}

/// What the oracle says about a scene.
pub struct Expected<T> {
    /// Unique pairs, sorted.
    pub pairs: Vec<[u32; 2]>,
    /// Neighbour lists of the set against itself.
    pub lists: Vec<Vec<u32>>,
    /// Query points.
    pub queries: Vec<[T; 3]>,
    /// The neighbours of each query point.
    pub query_lists: Vec<Vec<u32>>,
}

impl<T: TestReal> Expected<T> {
    /// Brute force over `scene`, with query points from `seed`.
    pub fn of(seed: u64, scene: &Scene<T>) -> Self {
        let queries = query_points(seed, scene);
        let query_lists = queries
            .iter()
            .map(|&q| oracle_point(&scene.points, q, scene.radius))
            .collect();
        Self {
            pairs: oracle_pairs(&scene.points, scene.radius),
            lists: oracle_self(&scene.points, scene.radius),
            queries,
            query_lists,
        }
    }
}

/// Builds `scheme` over the scene and checks every operation of the trait against the oracle:
/// pairs, the visitor (the same sequence as the pairs), the lists, the queries and the bucket
/// statistics. Returns the pairs as produced (for comparisons of order).
pub fn check_scheme<T: TestReal>(
    what: &str,
    scheme: &mut dyn FixedRadiusScheme<T>,
    scene: &Scene<T>,
    expected: &Expected<T>,
) -> Vec<[u32; 2]> {
    let what = format!("{what}, {}", scene.name);
    scheme.build(&scene.points).expect("a valid scene");
    assert_eq!(scheme.len(), scene.points.len(), "{what}: len()");
    assert_eq!(
        scheme.is_empty(),
        scene.points.is_empty(),
        "{what}: is_empty()"
    );
    assert_eq!(
        scheme.radius().bits(),
        scene.radius.bits(),
        "{what}: radius()"
    );

    // Stale content must be replaced.
    let mut pairs = vec![[7, 7]; 3];
    scheme.pairs(&mut pairs);
    check_pairs(&format!("{what}: pairs"), &pairs, &expected.pairs);

    let mut visited = Vec::new();
    scheme.for_each_pair(&mut |i, j| visited.push([i, j]));
    assert_same_seq(&format!("{what}: visitor against pairs"), &visited, &pairs);

    let mut lists = NeighborLists::default();
    scheme.neighbor_lists(&mut lists);
    check_lists(&format!("{what}: neighbor_lists"), &lists, &expected.lists);

    let mut found = vec![9, 9];
    for (k, (&q, want)) in expected
        .queries
        .iter()
        .zip(&expected.query_lists)
        .enumerate()
    {
        scheme.query_point(q, &mut found).expect("a finite query");
        assert_eq!(&found, want, "{what}: query {k} at {q:?}");
    }

    let stats = scheme.stats();
    let n = scene.points.len();
    if n > 0 {
        assert!(stats.buckets.is_power_of_two(), "{what}: {stats:?}");
        assert!(
            stats.occupied >= 1 && stats.occupied <= stats.buckets,
            "{what}: {stats:?}"
        );
        let total = stats.mean_load * stats.occupied as f64;
        assert!(
            (total - n as f64).abs() < 1e-6 * n as f64,
            "{what}: {stats:?}"
        );
        assert!(
            stats.max_load as f64 >= stats.mean_load,
            "{what}: {stats:?}"
        );
    }
    assert!(
        stats.pair_candidates >= pairs.len() as u64,
        "{what}: {} candidates for {} pairs",
        stats.pair_candidates,
        pairs.len()
    );
    // The pairs search never tests more than every pair once.
    assert!(
        stats.pair_candidates <= (n as u64 * n.saturating_sub(1) as u64) / 2,
        "{what}: {stats:?}"
    );
    pairs
}

/// The neighbour rule of particles with their own radii, by hhg-core's predicate.
pub fn spheres_within<T: Real>(p: [T; 3], rp: T, q: [T; 3], rq: T) -> bool {
    hhg_core::broad::sphere_pair_within(p, rp, q, rq, false)
}

/// Brute force over particles with radii: every pair `i < j` with `d <= max(ri, rj)`.
pub fn oracle_sphere_pairs<T: Real>(points: &[[T; 3]], radii: &[T]) -> Vec<[u32; 2]> {
    let mut pairs = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            if spheres_within(points[i], radii[i], points[j], radii[j]) {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    pairs
}
