//! PoucholScheme against brute force on every scene (pairs, visitor, lists, queries and the broad-phase box query), with several hierarchy depths, tables down to one bucket and both kernels; the structure's keys and has_children flags; determinism across thread counts; agreement with hhg-core and the XOR scheme.

use crate::common;

use common::{
    Expected, KERNELS, check_against_core, check_kernels_agree, check_scheme, check_thread_counts,
    core_pairs, outputs, point_scenes,
};
use hhg_core::broad::Aabb;
use hhg_core::{FixedRadiusScheme, Kernel, Real};
use hhg_testkit::{
    Scene, SplitMix64, TestReal, for_both_precisions, gaussian_clusters, to_real, uniform_cube,
};
use hhg_xor::{Levels, PoucholScheme, Primes, TableSize, XorScheme};

/// (table size, hierarchy depth) pairs every scene runs with.
const CONFIGS: [(TableSize, Levels); 5] = [
    (TableSize::PerPoint(2), Levels::Auto),
    (TableSize::Fixed(8), Levels::Auto),
    (TableSize::Fixed(1), Levels::Auto),
    (TableSize::PerPoint(2), Levels::Fixed(0)),
    (TableSize::PerPoint(4), Levels::Fixed(3)),
];

fn pouchol<T: TestReal>(
    radius: T,
    primes: Primes,
    size: TableSize,
    levels: Levels,
    kernel: Kernel,
) -> PoucholScheme<T> {
    let mut scheme = PoucholScheme::with_config(radius, primes, size, levels).unwrap();
    scheme.set_kernel(kernel);
    scheme
}

/// Boxes to query a scene with: degenerate boxes at set points, small, medium and large
/// boxes around them, boxes with infinite sides, one covering everything and one far away.
fn query_boxes<T: TestReal>(seed: u64, scene: &Scene<T>) -> Vec<Aabb<T>> {
    let mut rng = SplitMix64::new(seed);
    let r = scene.radius.to_f64();
    let mut boxes = Vec::new();
    let inf = f64::INFINITY;
    boxes.push(Aabb::new([T::from_f64(-inf); 3], [T::from_f64(inf); 3]));
    boxes.push(Aabb::new([T::from_f64(-1e30); 3], [T::from_f64(1e30); 3]));
    boxes.push(Aabb::new([T::from_f64(1e20); 3], [T::from_f64(2e20); 3]));
    if scene.points.is_empty() {
        return boxes;
    }
    for k in 0..30 {
        let p = scene.points[rng.below(scene.points.len())];
        let c = p.map(Real::to_f64);
        let half = match k % 5 {
            0 => 0.0,
            1 => rng.range(0.0, r),
            2 => rng.range(0.0, 5.0 * r),
            3 => rng.range(0.0, 50.0 * r),
            _ => rng.range(0.0, 2.0 * r),
        };
        let lo: [f64; 3] = std::array::from_fn(|a| c[a] - half * rng.range(0.0, 1.0));
        let hi: [f64; 3] = std::array::from_fn(|a| c[a] + half * rng.range(0.0, 1.0));
        let mut aabb = Aabb::new(lo.map(T::from_f64), hi.map(T::from_f64));
        if k % 5 == 0 {
            aabb = Aabb::new(p, p);
        }
        if k % 7 == 6 {
            aabb.min[k % 3] = T::from_f64(-inf);
        }
        if k % 11 == 10 {
            aabb.max[(k + 1) % 3] = T::from_f64(inf);
        }
        boxes.push(aabb);
    }
    boxes
}

/// The points inside a closed box, by brute force.
fn oracle_box<T: Real>(points: &[[T; 3]], aabb: &Aabb<T>) -> Vec<u32> {
    (0..points.len() as u32)
        .filter(|&i| {
            let p = points[i as usize];
            (0..3).all(|a| aabb.min[a] <= p[a] && p[a] <= aabb.max[a])
        })
        .collect()
}

/// Checks both box queries of a built scheme against brute force.
fn check_boxes<T: TestReal>(
    what: &str,
    scheme: &PoucholScheme<T>,
    points: &[[T; 3]],
    boxes: &[Aabb<T>],
) {
    let mut exact = vec![5];
    let mut candidates = vec![5];
    for (k, aabb) in boxes.iter().enumerate() {
        scheme.query_aabb(aabb, &mut exact).unwrap();
        let want = oracle_box(points, aabb);
        assert_eq!(exact, want, "{what}: box {k} {aabb:?}");
        scheme.query_aabb_candidates(aabb, &mut candidates).unwrap();
        assert!(
            candidates.windows(2).all(|w| w[0] < w[1]),
            "{what}: box {k}: candidates not ascending and unique"
        );
        assert!(
            candidates
                .last()
                .is_none_or(|&i| (i as usize) < points.len())
        );
        for i in &want {
            assert!(
                candidates.binary_search(i).is_ok(),
                "{what}: box {k} {aabb:?}: point {i} inside but not a candidate"
            );
        }
    }
}

/// The structure itself: every point sits in the bucket of its cell's top-down key, and the
/// set `has_children` flags are exactly the buckets of the occupied cells' ancestors' keys.
fn check_structure<T: TestReal>(what: &str, scheme: &PoucholScheme<T>, points: &[[T; 3]]) {
    let Some(hasher) = scheme.hasher() else {
        return;
    };
    let (starts, order, cells) = (
        scheme.bucket_starts(),
        scheme.order(),
        scheme.sorted_cells(),
    );
    let top = scheme.top_class();
    let mut flagged = std::collections::BTreeSet::new();
    for b in 0..starts.len() - 1 {
        for k in starts[b] as usize..starts[b + 1] as usize {
            let c = cells[k];
            assert_eq!(
                c,
                hasher.cell(points[order[k] as usize]),
                "{what}: cell of {k}"
            );
            assert_eq!(hasher.key(c) as usize, b, "{what}: bucket of {k}");
            let mut prefix = 0u32;
            for j in (1..=top).rev() {
                prefix = prefix.wrapping_add(hasher.hash.raw(c.map(|v| v >> j)));
                flagged.insert(prefix & hasher.hash.mask());
            }
            let key = prefix.wrapping_add(hasher.hash.raw(c)) & hasher.hash.mask();
            assert_eq!(key as usize, b, "{what}: top-down key of {k}");
        }
    }
    for b in 0..hasher.hash.buckets() as u32 {
        assert_eq!(
            scheme.has_children(b),
            flagged.contains(&b),
            "{what}: has_children of bucket {b}"
        );
    }
}

/// Every scene, every configuration: exact results for every operation, the same pair
/// sequence from both kernels, the same pair set as hhg-core and the same candidate count as
/// the XOR scheme (each pair of adjacent-cell points tested once).
fn every_scene_matches_the_oracle<T: TestReal>() {
    for (s, scene) in point_scenes::<T>().iter().enumerate() {
        let expected = Expected::of(200 + s as u64, scene);
        let boxes = query_boxes(300 + s as u64, scene);
        let core_pairs = core_pairs(&scene.points, scene.radius);
        let mut xor = XorScheme::new(scene.radius, Primes::Teschner).unwrap();
        xor.build(&scene.points).unwrap();
        let xor_tests = xor.stats().pair_candidates;
        for (k, &(size, levels)) in CONFIGS.iter().enumerate() {
            let primes = if k % 2 == 0 {
                Primes::Teschner
            } else {
                Primes::Mueller
            };
            let mut sequences = Vec::new();
            for kernel in KERNELS {
                let what = format!("pouchol {primes:?} {size:?} {levels:?} {kernel:?}");
                let mut scheme = pouchol(scene.radius, primes, size, levels, kernel);
                let pairs = check_scheme(&what, &mut scheme, scene, &expected);
                let what = format!("{what}, {}", scene.name);
                check_against_core(&what, &pairs, &core_pairs);
                assert_eq!(scheme.stats().pair_candidates, xor_tests, "{what}");
                // Tiny tables flag nearly every bucket, so box walks run to their budget:
                // a few boxes cover that path.
                let count = if matches!(size, TableSize::Fixed(_)) {
                    boxes.len().min(8)
                } else {
                    boxes.len()
                };
                check_boxes(&what, &scheme, &scene.points, &boxes[..count]);
                check_structure(&what, &scheme, &scene.points);
                sequences.push(pairs);
            }
            check_kernels_agree(
                &format!("pouchol {size:?} {levels:?}, {}", scene.name),
                &sequences,
            );
        }
    }
}

/// The automatic depth puts the whole box in one top-class cell; a fixed depth is kept.
fn hierarchy_depth<T: TestReal>() {
    let mut rng = SplitMix64::new(3);
    let points: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 2000, [0.0; 3], 1.0, 40.0));
    let mut scheme = PoucholScheme::new(T::from_f64(1.0), Primes::Teschner).unwrap();
    scheme.build(&points).unwrap();
    let hasher = *scheme.hasher().unwrap();
    let widest = *hasher.table.span.iter().max().unwrap();
    let top = scheme.top_class();
    assert!((widest - 1) >> top == 0 && (top == 0 || (widest - 1) >> (top - 1) != 0));
    scheme.set_levels(Levels::Fixed(2)).unwrap();
    scheme.build(&points).unwrap();
    assert_eq!(scheme.top_class(), 2);
    scheme.build(&points[..1]).unwrap();
    assert_eq!(scheme.top_class(), 2);
    scheme.set_levels(Levels::Auto).unwrap();
    scheme.build(&points[..1]).unwrap();
    assert_eq!(scheme.top_class(), 0);
}

/// Clusters far apart (empty space the flags prune) with box queries in the gaps and across
/// everything; a deep fixed hierarchy; and a shallow one whose top class is too fine for a
/// scene-wide box (the query falls back to a scan, with the same results).
fn clusters_and_depths<T: TestReal>() {
    let mut rng = SplitMix64::new(17);
    let points: Vec<[T; 3]> = to_real(&gaussian_clusters(
        &mut rng,
        &[(400, 0.5), (400, 0.5), (300, 2.0)],
        2000.0,
    ));
    let scene = Scene {
        name: format!("far clusters ({})", T::NAME),
        points,
        radius: T::from_f64(0.7),
    };
    let expected = Expected::of(17, &scene);
    let boxes = query_boxes(18, &scene);
    for levels in [Levels::Auto, Levels::Fixed(0), Levels::Fixed(30)] {
        let what = format!("pouchol {levels:?}");
        let mut scheme = pouchol(
            scene.radius,
            Primes::Mueller,
            TableSize::PerPoint(2),
            levels,
            Kernel::Simd,
        );
        check_scheme(&what, &mut scheme, &scene, &expected);
        check_boxes(&what, &scheme, &scene.points, &boxes);
        check_structure(&what, &scheme, &scene.points);
    }
}

/// A larger set: the pairs, the lists and the sorted order are identical for 1, 2 and 16
/// threads, and the pair set is hhg-core's.
fn thread_counts_give_identical_output<T: TestReal>() {
    let mut rng = SplitMix64::new(6);
    let points: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 12_000, [-3.0, 2.0, 1.0], 1.0, 40.0));
    let radius = T::from_f64(1.0);
    let expected = core_pairs(&points, radius);
    check_thread_counts("pouchol", &expected, || {
        let scheme = PoucholScheme::new(radius, Primes::Teschner).unwrap();
        outputs(scheme, &points, PoucholScheme::order)
    });
}

for_both_precisions!(
    every_scene_matches_the_oracle,
    hierarchy_depth,
    clusters_and_depths,
    thread_counts_give_identical_output,
);

/// The scheme's name, and the paper's example in one dimension: a box finds what it covers.
#[test]
fn name_and_a_small_example() {
    let mut scheme = PoucholScheme::<f64>::new(1.0, Primes::Teschner).unwrap();
    assert_eq!(scheme.name(), "pouchol");
    let points: Vec<[f64; 3]> = (0..64).map(|i| [f64::from(i), 0.0, 0.0]).collect();
    scheme.build(&points).unwrap();
    assert_eq!(scheme.top_class(), 6);
    let mut out = Vec::new();
    scheme
        .query_aabb(&Aabb::new([9.5, -1.0, -1.0], [12.0, 1.0, 1.0]), &mut out)
        .unwrap();
    assert_eq!(out, vec![10, 11, 12]);
    scheme.query_point([20.0, 0.5, 0.0], &mut out).unwrap();
    assert_eq!(out, vec![20]);
    let mut pair_list = hhg_core::PairList::default();
    scheme.pairs(&mut pair_list).unwrap();
    let mut pairs = pair_list.pairs().to_vec();
    pairs.sort_unstable();
    let want: Vec<[u32; 2]> = (0..63).map(|i| [i, i + 1]).collect();
    assert_eq!(pairs, want);
}
