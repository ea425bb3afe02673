//! XorScheme against brute force on every scene, with both primes, tables down to one bucket and both kernels; determinism across thread counts; agreement with hhg-core's CoreScheme; the candidate statistics.

use crate::common;

use common::{
    Expected, KERNELS, check_against_core, check_kernels_agree, check_scheme, check_thread_counts,
    core_pairs, outputs, point_scenes,
};
use hhg_core::{FixedRadiusScheme, Kernel};
use hhg_testkit::{Scene, SplitMix64, TestReal, for_both_precisions, to_real, uniform_cube};
use hhg_xor::{Primes, TableSize, XorScheme};

/// The table sizes every scene runs with: the default, one that aliases heavily, and one bucket.
const SIZES: [TableSize; 3] = [
    TableSize::PerPoint(2),
    TableSize::Fixed(8),
    TableSize::Fixed(1),
];

fn xor<T: TestReal>(radius: T, primes: Primes, size: TableSize, kernel: Kernel) -> XorScheme<T> {
    let mut scheme = XorScheme::with_table_size(radius, primes, size).unwrap();
    scheme.set_kernel(kernel);
    scheme
}

/// How many unordered pairs of points lie in the same or adjacent cells (by the scheme's own
/// cell coordinates): the distance tests a half-neighbourhood search makes, by brute force.
fn adjacent_cell_pairs<T: TestReal>(scheme: &XorScheme<T>, points: &[[T; 3]]) -> u64 {
    let Some(hasher) = scheme.hasher() else {
        return 0;
    };
    let cells: Vec<[i32; 3]> = points.iter().map(|&p| hasher.cell(p)).collect();
    let mut count = 0;
    for i in 0..cells.len() {
        for j in i + 1..cells.len() {
            if (0..3).all(|a| (cells[i][a] - cells[j][a]).abs() <= 1) {
                count += 1;
            }
        }
    }
    count
}

/// Every scene, every configuration: exact results, the same pair sequence from both
/// kernels, the same pair set as hhg-core, and the candidate count of brute force.
fn every_scene_matches_the_oracle<T: TestReal>() {
    for (s, scene) in point_scenes::<T>().iter().enumerate() {
        let expected = Expected::of(100 + s as u64, scene);
        let core_pairs = core_pairs(&scene.points, scene.radius);
        let mut candidates = None;
        for primes in [Primes::Teschner, Primes::Mueller] {
            for size in SIZES {
                let mut sequences = Vec::new();
                for kernel in KERNELS {
                    let what = format!("xor {primes:?} {size:?} {kernel:?}");
                    let mut scheme = xor(scene.radius, primes, size, kernel);
                    let pairs = check_scheme(&what, &mut scheme, scene, &expected);
                    check_against_core(&what, &pairs, &core_pairs);
                    let tests = scheme.stats().pair_candidates;
                    let want = *candidates
                        .get_or_insert_with(|| adjacent_cell_pairs(&scheme, &scene.points));
                    assert_eq!(tests, want, "{what}, {}: pair candidates", scene.name);
                    sequences.push(pairs);
                }
                check_kernels_agree(
                    &format!("xor {primes:?} {size:?}, {}", scene.name),
                    &sequences,
                );
            }
        }
    }
}

/// A larger set (many work units): the pairs, the lists and the sorted order are identical
/// for 1, 2 and 16 threads, and the pair set is hhg-core's.
fn thread_counts_give_identical_output<T: TestReal>() {
    let mut rng = SplitMix64::new(5);
    let points: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 12_000, [3.0, -2.0, 1.0], 1.0, 40.0));
    let radius = T::from_f64(1.0);
    let expected = core_pairs(&points, radius);
    for size in [TableSize::PerPoint(2), TableSize::Fixed(64)] {
        check_thread_counts(&format!("{size:?}"), &expected, || {
            let scheme = xor(radius, Primes::Teschner, size, Kernel::Simd);
            outputs(scheme, &points, XorScheme::order)
        });
    }
}

/// Collisions: a tiny table holds several cells per bucket, which the statistics show, and
/// the search still tests exactly the pairs of adjacent cells.
fn collision_statistics<T: TestReal>() {
    let mut rng = SplitMix64::new(9);
    let points: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 3000, [0.0; 3], 1.0, 20.0));
    let radius = T::from_f64(1.0);
    let mut roomy = xor(
        radius,
        Primes::Teschner,
        TableSize::PerPoint(8),
        Kernel::Simd,
    );
    roomy.build(&points).unwrap();
    let mut tiny = xor(radius, Primes::Teschner, TableSize::Fixed(8), Kernel::Simd);
    tiny.build(&points).unwrap();
    let (a, b) = (roomy.stats(), tiny.stats());
    assert_eq!(a.buckets, (3000usize * 8).next_power_of_two());
    assert_eq!(b.buckets, 8);
    assert_eq!(b.occupied, 8, "{b:?}");
    assert!(b.max_load > 300, "{b:?}");
    assert_eq!(a.pair_candidates, b.pair_candidates, "{a:?} {b:?}");
    assert!(
        tiny.foreign_candidates() > 10 * roomy.foreign_candidates(),
        "foreign candidates: tiny {}, roomy {}",
        tiny.foreign_candidates(),
        roomy.foreign_candidates()
    );
    // One bucket: every point but those of the visited cells is foreign.
    let mut one = xor(radius, Primes::Teschner, TableSize::Fixed(1), Kernel::Simd);
    one.build(&points).unwrap();
    let stats = one.stats();
    assert_eq!(
        (stats.buckets, stats.occupied, stats.max_load),
        (1, 1, 3000)
    );
    assert!(one.foreign_candidates() > 0);
    // The sorted cells are grouped: each cell is one run.
    let cells = one.sorted_cells();
    assert!(cells.windows(2).all(|w| w[0] <= w[1]), "cells not ordered");
    assert_eq!(one.bucket_starts(), &[0, 3000]);
}

/// Rebuilding one value with other sets, empty sets and other sizes gives fresh results.
fn rebuilds_reuse_buffers<T: TestReal>() {
    let mut rng = SplitMix64::new(13);
    let mut scheme = xor(
        T::from_f64(1.0),
        Primes::Mueller,
        TableSize::default(),
        Kernel::Simd,
    );
    for (k, n) in [500usize, 0, 3000, 10, 0, 1200].into_iter().enumerate() {
        let points = uniform_cube(&mut rng, n, [k as f64; 3], 1.0, 30.0);
        let scene = Scene::<T>::new(format!("rebuild {k}"), &points, 1.0);
        let expected = Expected::of(k as u64, &scene);
        check_scheme("xor rebuild", &mut scheme, &scene, &expected);
        if k == 3 {
            scheme.set_table_size(TableSize::Fixed(16)).unwrap();
        }
    }
}

for_both_precisions!(
    every_scene_matches_the_oracle,
    thread_counts_give_identical_output,
    collision_statistics,
    rebuilds_reuse_buffers,
);

/// The scheme's name and settings.
#[test]
fn name_and_settings() {
    let mut scheme = XorScheme::<f64>::new(0.5, Primes::Mueller).unwrap();
    assert_eq!(scheme.name(), "xor");
    assert_eq!(scheme.primes(), Primes::Mueller);
    assert_eq!(scheme.table_size(), TableSize::PerPoint(2));
    assert_eq!(scheme.kernel(), Kernel::Simd);
    scheme.set_kernel(Kernel::Scalar);
    assert_eq!(scheme.kernel(), Kernel::Scalar);
    assert!(scheme.hasher().is_none());
    scheme.build(&[[0.0; 3], [0.25, 0.0, 0.0]]).unwrap();
    let hasher = scheme.hasher().unwrap();
    assert_eq!(hasher.hash.buckets(), 4);
    assert_eq!(hasher.hash.primes(), Primes::Mueller.values());
}
