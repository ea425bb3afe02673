//! hhg-xor's own helpers of the integration tests: the scenes, query points and driver that check a whole fixed-radius scheme against the oracle (the shared helpers are in hhg-testkit).
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use hhg_core::{CoreScheme, FixedRadiusScheme, Kernel, NeighborLists, PairList, Real};
use hhg_testkit::{
    Scene, SplitMix64, THREAD_COUNTS, TestReal, assert_same_seq, check_lists, check_pairs,
    gaussian_clusters, in_pool, lattice, oracle_pairs, oracle_point, oracle_self,
    points_on_cell_borders, shuffle, uniform_box, uniform_cube,
};

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

    // Points where cells start (`(k + LATTICE_SHIFT) * edge`), and the same points moved by
    // exactly r along x.
    let r = 0.25;
    let points = points_on_cell_borders(&mut rng, 1200, r, 12);
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
    let mut pair_list = PairList::default();
    pair_list
        .collect_units(1, |_, stale| stale.extend([[7, 7]; 3]))
        .unwrap();
    scheme.pairs(&mut pair_list).unwrap();
    assert_eq!(pair_list.distances_squared(), None, "{what}: no distances");
    let pairs = pair_list.pairs().to_vec();
    check_pairs(&format!("{what}: pairs"), &pairs, &expected.pairs);

    let mut visited = Vec::new();
    scheme.for_each_pair(&mut |i, j| visited.push([i, j]));
    assert_same_seq(&format!("{what}: visitor against pairs"), &visited, &pairs);

    let mut lists = NeighborLists::default();
    scheme.neighbor_lists(&mut lists).unwrap();
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

/// The kernels every scheme runs with: the SIMD one first, then the scalar reference.
pub const KERNELS: [Kernel; 2] = [Kernel::Simd, Kernel::Scalar];

/// What one thread count produced: the pairs, the sorted order and the list entries.
pub type Outputs = (Vec<[u32; 2]>, Vec<u32>, Vec<u32>);

/// hhg-core's pairs of `points` within `radius`, sorted: the pair set every scheme must find.
pub fn core_pairs<T: TestReal>(points: &[[T; 3]], radius: T) -> Vec<[u32; 2]> {
    let mut core = CoreScheme::new(radius).unwrap();
    core.build(points).unwrap();
    let mut pairs = PairList::default();
    core.pairs(&mut pairs).unwrap();
    let mut pairs = pairs.pairs().to_vec();
    pairs.sort_unstable();
    pairs
}

/// Checks that `pairs`, once sorted, are hhg-core's sorted pairs `core_pairs`.
pub fn check_against_core(what: &str, pairs: &[[u32; 2]], core_pairs: &[[u32; 2]]) {
    let mut sorted = pairs.to_vec();
    sorted.sort_unstable();
    assert_same_seq(&format!("{what}: against core"), &sorted, core_pairs);
}

/// Checks that the pair sequences of the [`KERNELS`] (in that order) are the same.
pub fn check_kernels_agree(what: &str, sequences: &[Vec<[u32; 2]>]) {
    assert_same_seq(
        &format!("{what}: SIMD against scalar"),
        &sequences[0],
        &sequences[1],
    );
}

/// Builds `scheme` over `points` and returns its pairs, its sorted order (read by `order`)
/// and the entries of its lists.
pub fn outputs<T: TestReal, S: FixedRadiusScheme<T>>(
    mut scheme: S,
    points: &[[T; 3]],
    order: fn(&S) -> &[u32],
) -> Outputs {
    scheme.build(points).unwrap();
    let mut pairs = PairList::default();
    scheme.pairs(&mut pairs).unwrap();
    let mut lists = NeighborLists::default();
    scheme.neighbor_lists(&mut lists).unwrap();
    (
        pairs.pairs().to_vec(),
        order(&scheme).to_vec(),
        lists.indices().to_vec(),
    )
}

/// Runs `run` with each of [`THREAD_COUNTS`] threads: every run's pairs are the sorted pairs
/// `expected` as a set, and its pairs, order and lists are those of the run with one thread.
pub fn check_thread_counts(what: &str, expected: &[[u32; 2]], run: impl Fn() -> Outputs + Sync) {
    let mut reference: Option<Outputs> = None;
    for threads in THREAD_COUNTS {
        let (pairs, order, lists) = in_pool(threads, &run);
        check_pairs(&format!("{what}, {threads} threads"), &pairs, expected);
        match &reference {
            None => reference = Some((pairs, order, lists)),
            Some((p, o, l)) => {
                let what = format!("{what}: {threads} threads against 1");
                assert_same_seq(&format!("{what}: pairs"), &pairs, p);
                assert_same_seq(&format!("{what}: order"), &order, o);
                assert_same_seq(&format!("{what}: lists"), &lists, l);
            }
        }
    }
}
