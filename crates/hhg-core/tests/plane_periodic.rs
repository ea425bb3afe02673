//! Periodic rectangles in the plane (`plane::PeriodicSearch2`) against the brute-force
//! minimum-image oracle: pairs, their shifts and distances, lists; rectangles that are not a
//! multiple of the cell, a periodic and an open axis, points outside the rectangle and on its
//! edges, clusters, thread counts, both kernels, and bad input.

use hhg_core::plane::{PeriodicBox2, PeriodicPair2, PeriodicPairList2, PeriodicSearch2};
use hhg_core::{Error, Kernel, NeighborLists};
use hhg_testkit::{
    SplitMix64, THREAD_COUNTS, TestReal, for_both_precisions, in_pool, oracle_periodic_pairs,
};

/// The search's pairs, its pairs with distances and its lists, with the given kernel.
fn search_all<T: TestReal>(
    points: &[[T; 2]],
    radius: T,
    domain: PeriodicBox2<T>,
    kernel: Kernel,
) -> (Vec<PeriodicPair2>, PeriodicPairList2<T>, NeighborLists<T>) {
    let mut search = PeriodicSearch2::new(radius, domain).unwrap();
    search.set_kernel(kernel);
    search.build(points).unwrap();
    assert_eq!(search.len(), points.len());
    let mut pairs = PeriodicPairList2::default();
    search.pairs(&mut pairs).unwrap();
    assert_eq!(pairs.distances_squared(), None);
    let mut with_distances = PeriodicPairList2::default();
    search.pairs_with_distances(&mut with_distances).unwrap();
    let mut lists = NeighborLists::default();
    search.neighbor_lists(&mut lists).unwrap();
    (pairs.pairs().to_vec(), with_distances, lists)
}

/// Checks every output against the oracle, on every thread count and both kernels (the same
/// pairs in the same order everywhere).
fn check<T: TestReal>(name: &str, points: &[[T; 2]], radius: T, domain: PeriodicBox2<T>) {
    let expected_with_distances = oracle_periodic_pairs(points, radius, &domain);
    let expected: Vec<PeriodicPair2> = expected_with_distances.iter().map(|&(p, _)| p).collect();
    assert!(
        expected.iter().any(|p| p.shift != [0; 2]),
        "{name}: the scene must have pairs across the boundary"
    );
    let mut reference = None;
    for threads in THREAD_COUNTS {
        for kernel in [Kernel::Simd, Kernel::Scalar] {
            let what = format!("{name} ({}, {threads} threads, {kernel:?})", T::NAME);
            let (pairs, with_distances, lists) =
                in_pool(threads, || search_all(points, radius, domain, kernel));
            let mut sorted = pairs.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, expected, "{what}: pairs");
            assert_eq!(
                with_distances.pairs(),
                &pairs[..],
                "{what}: pairs with distances"
            );
            let distances = with_distances
                .distances_squared()
                .expect("distances were asked for");
            let mut found: Vec<(PeriodicPair2, T)> = pairs
                .iter()
                .copied()
                .zip(distances.iter().copied())
                .collect();
            found.sort_unstable_by_key(|&(pair, _)| pair);
            for (&(pair, d2), &(_, want)) in found.iter().zip(&expected_with_distances) {
                assert_eq!(
                    d2.to_f64().to_bits(),
                    want.to_f64().to_bits(),
                    "{what}: distance of {pair:?}"
                );
            }
            assert_eq!(lists.len(), points.len(), "{what}: one list per point");
            for i in 0..points.len() {
                let want: Vec<u32> = expected
                    .iter()
                    .filter_map(|p| match i {
                        _ if p.i as usize == i => Some(p.j),
                        _ if p.j as usize == i => Some(p.i),
                        _ => None,
                    })
                    .collect::<std::collections::BTreeSet<u32>>()
                    .into_iter()
                    .collect();
                assert_eq!(lists.neighbors(i), want, "{what}: list {i}");
            }
            // The shift makes the caller's own positions give the minimum-image vector.
            for p in &pairs {
                let image = domain.shifted(points[p.j as usize], p.shift);
                let a = points[p.i as usize];
                let d2 = (0..2)
                    .map(|k| (image[k].to_f64() - a[k].to_f64()).powi(2))
                    .sum::<f64>();
                let r2 = radius.to_f64() * radius.to_f64();
                assert!(d2 <= r2 * (1.0 + 1e-3), "{what}: {p:?} at d2 {d2}");
            }
            match &reference {
                None => reference = Some(pairs),
                Some(r) => assert_eq!(&pairs, r, "{what}: order differs"),
            }
        }
    }
}

fn random_in<T: TestReal>(
    rng: &mut SplitMix64,
    n: usize,
    lo: [f64; 2],
    hi: [f64; 2],
) -> Vec<[T; 2]> {
    (0..n)
        .map(|_| std::array::from_fn(|a| T::from_f64(rng.range(lo[a], hi[a]))))
        .collect()
}

fn fully_periodic<T: TestReal>() {
    let mut rng = SplitMix64::new(1);
    // 7.3 is not a multiple of the cell (1.00001); points partly outside the rectangle, some
    // several lengths away.
    let domain = PeriodicBox2::cubic([T::from_f64(-2.0); 2], [T::from_f64(7.3); 2]);
    let mut points = random_in::<T>(&mut rng, 1500, [-3.0; 2], [6.5; 2]);
    points.extend(random_in::<T>(&mut rng, 100, [-40.0; 2], [40.0; 2]));
    check("fully periodic", &points, T::from_f64(1.0), domain);
}

fn channel<T: TestReal>() {
    let mut rng = SplitMix64::new(2);
    // A 2-D channel: periodic in x, walls in y (open), uneven length, away from the origin.
    let domain = PeriodicBox2 {
        origin: [T::from_f64(-1000.0), T::from_f64(10.0)],
        lengths: [T::from_f64(5.55), T::from_f64(1.0)],
        periodic: [true, false],
    };
    let points = random_in::<T>(&mut rng, 1200, [-1000.0, 10.0], [-994.45, 14.0]);
    check("channel", &points, T::from_f64(0.7), domain);
}

fn clustered<T: TestReal>() {
    // Dense clumps across the corners and edges of the rectangle, and sparse points between.
    let mut rng = SplitMix64::new(5);
    let domain = PeriodicBox2::cubic([T::from_f64(0.0); 2], [T::from_f64(9.0); 2]);
    let mut points = Vec::new();
    for centre in [[0.1, 0.1], [8.9, 4.5], [4.5, 8.95], [4.5, 4.5]] {
        points.extend(random_in::<T>(
            &mut rng,
            300,
            [centre[0] - 0.4, centre[1] - 0.4],
            [centre[0] + 0.4, centre[1] + 0.4],
        ));
    }
    points.extend(random_in::<T>(&mut rng, 200, [0.0; 2], [9.0; 2]));
    check("clustered", &points, T::from_f64(0.5), domain);
}

fn lattice_on_edges<T: TestReal>() {
    // A lattice whose spacing divides the rectangle: points exactly on the lower edges, pairs
    // at exactly r across every edge and corner.
    let mut points = Vec::new();
    for x in 0..6 {
        for y in 0..5 {
            points.push([x as f64, y as f64].map(T::from_f64));
        }
    }
    let domain = PeriodicBox2 {
        origin: [T::from_f64(0.0); 2],
        lengths: [T::from_f64(6.0), T::from_f64(5.0)],
        periodic: [true; 2],
    };
    check("lattice on edges", &points, T::from_f64(1.0), domain);
    check(
        "lattice, diagonals",
        &points,
        T::from_f64(2f64.sqrt() * 1.0001),
        domain,
    );
}

fn narrow_box<T: TestReal>() {
    // A rectangle barely wider than twice the radius: points near both edges at once.
    let mut rng = SplitMix64::new(3);
    let domain = PeriodicBox2::cubic([T::from_f64(0.0); 2], [T::from_f64(2.05); 2]);
    let points = random_in::<T>(&mut rng, 400, [0.0; 2], [2.05; 2]);
    check("narrow rectangle", &points, T::from_f64(1.0), domain);
}

/// Points exactly on the edges: at the origin (as `+0.0` and `-0.0`), at the upper edge
/// (wrapped to the origin), one spacing of `T` below it, and half-way.
fn points_on_edges<T: TestReal>() {
    for (origin, length, radius) in [(0.0, 4.0, 1.0), (-2.0, 5.0, 1.5), (0.0, 3.0, 1.2)] {
        let (o, l) = (T::from_f64(origin), T::from_f64(length));
        let mut values = vec![
            o,
            o + l,
            (o + l).next_down(),
            T::from_f64(origin + length / 2.0),
        ];
        if origin == 0.0 {
            values.push(T::from_f64(-0.0));
        }
        let points: Vec<[T; 2]> = values
            .iter()
            .flat_map(|&x| values.iter().map(move |&y| [x, y]))
            .collect();
        let domain = PeriodicBox2::cubic([o; 2], [l; 2]);
        check(
            &format!("points on the edges of the rectangle at {origin}, {length} long"),
            &points,
            T::from_f64(radius),
            domain,
        );
    }
}

fn bad_input<T: TestReal>() {
    let r = T::from_f64(1.0);
    let small = PeriodicBox2::cubic([T::from_f64(0.0); 2], [T::from_f64(2.0); 2]);
    assert!(matches!(
        PeriodicSearch2::new(r, small),
        Err(Error::InvalidConfig { .. })
    ));
    let infinite = PeriodicBox2::cubic([T::from_f64(0.0); 2], [T::from_f64(f64::INFINITY); 2]);
    assert!(matches!(
        PeriodicSearch2::new(r, infinite),
        Err(Error::InvalidConfig { .. })
    ));
    let ok = PeriodicBox2::cubic([T::from_f64(0.0); 2], [T::from_f64(5.0); 2]);
    for radius in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            PeriodicSearch2::new(T::from_f64(radius), ok),
            Err(Error::InvalidRadius { .. })
        ));
    }
    let mut search = PeriodicSearch2::new(r, ok).unwrap();
    let before = [[T::from_f64(0.5), T::from_f64(0.5)], [T::from_f64(4.8); 2]];
    search.build(&before).unwrap();
    let mut pairs = PeriodicPairList2::default();
    search.pairs(&mut pairs).unwrap();
    let pairs_before = pairs.pairs().to_vec();
    assert_eq!(pairs_before.len(), 1);
    for (axis, value) in [(1, f64::NAN), (0, f64::INFINITY), (1, f64::NEG_INFINITY)] {
        let mut bad = vec![[T::from_f64(1.0); 2]; 3];
        bad[2][axis] = T::from_f64(value);
        let error = search.build(&bad).unwrap_err();
        assert!(
            matches!(error, Error::NonFiniteCoordinate { index: 2, axis: a, .. } if a == axis),
            "{error:?}"
        );
        assert!(error.to_string().contains("point 2"), "{error}");
    }
    // A point too far out for an exact image count is refused, naming it.
    let far = [
        [T::from_f64(1.0); 2],
        [T::from_f64(1.0), T::from_f64(1e300)],
    ];
    if T::NAME == "f64" {
        assert!(matches!(
            search.build(&far),
            Err(Error::ImageCountOutOfRange {
                index: 1,
                axis: 1,
                ..
            })
        ));
    }
    // The failed builds left the search as it was.
    assert_eq!(search.len(), 2);
    search.pairs(&mut pairs).unwrap();
    assert_eq!(pairs.pairs(), &pairs_before[..]);
}

for_both_precisions!(
    fully_periodic,
    channel,
    clustered,
    lattice_on_edges,
    narrow_box,
    points_on_edges,
    bad_input
);
