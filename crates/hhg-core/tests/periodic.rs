//! Periodic boundaries against a brute-force minimum-image oracle: pairs and their shifts,
//! boxes that are not a multiple of the cell, mixed periodic and open axes, points outside
//! the box, thread counts.

use hhg_core::periodic::{PeriodicBox, PeriodicPair, PeriodicPairList, PeriodicSearch};
use hhg_core::{Error, Kernel, NeighborLists};
use hhg_testkit::{
    SplitMix64, THREAD_COUNTS, TestReal, for_both_precisions, in_pool, oracle_periodic_pairs,
};

/// The pairs of a built search, in its order.
fn pairs_of<T: TestReal>(search: &PeriodicSearch<T>) -> Vec<PeriodicPair> {
    let mut pairs = PeriodicPairList::default();
    search.pairs(&mut pairs).unwrap();
    assert_eq!(pairs.distances_squared(), None);
    pairs.pairs().to_vec()
}

fn check<T: TestReal>(name: &str, points: &[[T; 3]], radius: T, domain: PeriodicBox<T>) {
    let expected_with_distances = oracle_periodic_pairs(points, radius, &domain);
    let expected: Vec<PeriodicPair> = expected_with_distances.iter().map(|&(p, _)| p).collect();
    assert!(
        expected.iter().any(|p| p.shift != [0; 3]),
        "{name}: the scene must have pairs across the boundary"
    );
    let mut reference = None;
    for threads in THREAD_COUNTS {
        let what = format!("{name} ({}, {threads} threads)", T::NAME);
        let (pairs, with_distances, lists) = in_pool(threads, || {
            let mut search = PeriodicSearch::new(radius, domain).unwrap();
            search.build(points).unwrap();
            let pairs = pairs_of(&search);
            let mut with_distances = PeriodicPairList::default();
            search.pairs_with_distances(&mut with_distances).unwrap();
            let mut lists = NeighborLists::default();
            search.neighbor_lists(&mut lists).unwrap();
            (pairs, with_distances, lists)
        });
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
        let mut found: Vec<(PeriodicPair, T)> = pairs
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
                .filter_map(|p| {
                    if p.i as usize == i {
                        Some(p.j)
                    } else if p.j as usize == i {
                        Some(p.i)
                    } else {
                        None
                    }
                })
                .collect::<std::collections::BTreeSet<u32>>()
                .into_iter()
                .collect();
            assert_eq!(lists.neighbors(i), want, "{what}: list {i}");
        }
        // The shift makes the caller's own positions give the minimum-image vector.
        for p in &pairs {
            let image = domain.shifted(points[p.j as usize], p.shift);
            let d2 = T::distance_squared(points[p.i as usize], image).to_f64();
            let r2 = radius.to_f64() * radius.to_f64();
            assert!(d2 <= r2 * (1.0 + 1e-3), "{what}: {p:?} at d2 {d2}");
        }
        match &reference {
            None => reference = Some(pairs),
            Some(r) => assert_eq!(&pairs, r, "{what}: order differs across thread counts"),
        }
    }
}

fn random_in<T: TestReal>(
    rng: &mut SplitMix64,
    n: usize,
    lo: [f64; 3],
    hi: [f64; 3],
) -> Vec<[T; 3]> {
    (0..n)
        .map(|_| std::array::from_fn(|a| T::from_f64(rng.range(lo[a], hi[a]))))
        .collect()
}

fn fully_periodic<T: TestReal>() {
    let mut rng = SplitMix64::new(1);
    // 7.3 is not a multiple of the cell (1.00001); points partly outside the box.
    let domain = PeriodicBox::cubic([T::from_f64(-2.0); 3], [T::from_f64(7.3); 3]);
    let points = random_in::<T>(&mut rng, 1500, [-3.0; 3], [6.5; 3]);
    check("fully periodic", &points, T::from_f64(1.0), domain);
}

fn mixed_axes<T: TestReal>() {
    let mut rng = SplitMix64::new(2);
    // A channel: periodic in x and y, walls in z; uneven lengths.
    let domain = PeriodicBox {
        origin: [T::from_f64(0.0), T::from_f64(10.0), T::from_f64(0.0)],
        lengths: [T::from_f64(5.55), T::from_f64(3.1), T::from_f64(1.0)],
        periodic: [true, true, false],
    };
    let points = random_in::<T>(&mut rng, 1200, [0.0, 10.0, 0.0], [5.55, 13.1, 4.0]);
    check("channel", &points, T::from_f64(0.7), domain);
}

fn lattice_on_faces<T: TestReal>() {
    // A lattice whose spacing divides the box: points exactly on the lower faces, pairs at
    // exactly r across every face and corner.
    let l = 6.0;
    let mut points = Vec::new();
    for x in 0..6 {
        for y in 0..6 {
            for z in 0..6 {
                points.push([x as f64, y as f64, z as f64].map(T::from_f64));
            }
        }
    }
    let domain = PeriodicBox::cubic([T::from_f64(0.0); 3], [T::from_f64(l); 3]);
    check("lattice on faces", &points, T::from_f64(1.0), domain);
    check(
        "lattice, diagonals",
        &points,
        T::from_f64(2f64.sqrt() * 1.0001),
        domain,
    );
}

fn narrow_box<T: TestReal>() {
    // A box barely wider than twice the radius: points near both faces at once.
    let mut rng = SplitMix64::new(3);
    let domain = PeriodicBox::cubic([T::from_f64(0.0); 3], [T::from_f64(2.05); 3]);
    let points = random_in::<T>(&mut rng, 400, [0.0; 3], [2.05; 3]);
    check("narrow box", &points, T::from_f64(1.0), domain);
}

fn bad_input<T: TestReal>() {
    let r = T::from_f64(1.0);
    let small = PeriodicBox::cubic([T::from_f64(0.0); 3], [T::from_f64(2.0); 3]);
    assert!(matches!(
        PeriodicSearch::new(r, small),
        Err(Error::InvalidConfig { .. })
    ));
    let infinite = PeriodicBox::cubic([T::from_f64(0.0); 3], [T::from_f64(f64::INFINITY); 3]);
    assert!(PeriodicSearch::new(r, infinite).is_err());
    let ok = PeriodicBox::cubic([T::from_f64(0.0); 3], [T::from_f64(5.0); 3]);
    assert!(matches!(
        PeriodicSearch::new(T::from_f64(-1.0), ok),
        Err(Error::InvalidRadius { .. })
    ));
    let mut search = PeriodicSearch::new(r, ok).unwrap();
    let nan = [
        [T::from_f64(0.0); 3],
        [T::from_f64(f64::NAN), T::from_f64(0.0), T::from_f64(0.0)],
    ];
    assert!(matches!(
        search.build(&nan),
        Err(Error::NonFiniteCoordinate {
            index: 1,
            axis: 0,
            ..
        })
    ));
}

/// Pairs across a face at a few units in the last place around the radius, where moving
/// one point up by `L` and the other down by `L` round differently: the lists must still be
/// symmetric, and numbering the points backwards must give the same pairs.
fn symmetric_at_the_radius_across_faces<T: TestReal>() {
    let length = 7.3;
    let domain = PeriodicBox {
        origin: [T::from_f64(0.0); 3],
        lengths: [T::from_f64(length); 3],
        periodic: [true, false, false],
    };
    let radius = T::from_f64(1.0);
    let mut rng = SplitMix64::new(17);
    let mut points = Vec::new();
    // Pairs on a 2.5-spaced lattice in y and z (open axes), so pairs do not interact.
    for slot in 0..24 * 24 {
        let (y, z) = (2.5 * (slot % 24) as f64, 2.5 * (slot / 24) as f64);
        let a = rng.range(0.05, 0.95);
        let high = T::from_f64(length - a);
        let mut low = T::from_f64(1.0 - a);
        for _ in 0..(slot % 7) {
            low = low.next_up();
        }
        for _ in 0..(slot % 5) {
            low = low.next_down();
        }
        points.push([high, T::from_f64(y), T::from_f64(z)]);
        points.push([low, T::from_f64(y), T::from_f64(z)]);
    }
    let n = points.len();
    let mut search = PeriodicSearch::new(radius, domain).unwrap();
    search.build(&points).unwrap();
    let mut lists = NeighborLists::default();
    search.neighbor_lists(&mut lists).unwrap();
    let mut pairs = pairs_of(&search);
    assert!(
        pairs.len() > 100 && pairs.len() < n / 2,
        "{} pairs",
        pairs.len()
    );
    for i in 0..n {
        for &j in lists.neighbors(i) {
            assert!(
                lists.neighbors(j as usize).contains(&(i as u32)),
                "{}: {j} is in the list of {i} but not {i} in that of {j}",
                T::NAME
            );
        }
    }
    let mut from_lists: Vec<[u32; 2]> = (0..n)
        .flat_map(|i| {
            lists
                .neighbors(i)
                .iter()
                .filter(move |&&j| j as usize > i)
                .map(move |&j| [i as u32, j])
        })
        .collect();
    let mut plain: Vec<[u32; 2]> = pairs.iter().map(|p| [p.i, p.j]).collect();
    from_lists.sort_unstable();
    plain.sort_unstable();
    assert_eq!(from_lists, plain, "{}: lists and pairs", T::NAME);

    let backwards: Vec<[T; 3]> = points.iter().rev().copied().collect();
    search.build(&backwards).unwrap();
    let again = pairs_of(&search);
    let mut mapped: Vec<PeriodicPair> = again
        .iter()
        .map(|p| PeriodicPair {
            i: (n - 1) as u32 - p.j,
            j: (n - 1) as u32 - p.i,
            shift: p.shift.map(|s| -s),
        })
        .collect();
    mapped.sort_unstable();
    pairs.sort_unstable();
    assert_eq!(mapped, pairs, "{}: numbered backwards", T::NAME);
}

/// Points exactly on the faces of the box: at the origin (as `+0.0` and `-0.0` where the
/// origin is zero), at the upper face `origin + length` (wrapped to the origin), one spacing
/// of `T` below it, and half-way, on every axis; boxes at the origin and away from it. Each
/// is its own image's neighbour at distance 0, and the pairs and distances are exactly the
/// oracle's.
fn points_on_faces<T: TestReal>() {
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
        let mut points = Vec::new();
        for &x in &values {
            for &y in &values {
                for &z in &values {
                    points.push([x, y, z]);
                }
            }
        }
        let domain = PeriodicBox::cubic([o; 3], [l; 3]);
        check(
            &format!("points on the faces of the box at {origin}, {length} long"),
            &points,
            T::from_f64(radius),
            domain,
        );
    }
}

for_both_precisions!(
    fully_periodic,
    points_on_faces,
    mixed_axes,
    lattice_on_faces,
    narrow_box,
    bad_input,
    symmetric_at_the_radius_across_faces
);

/// Points far outside the box are wrapped with exact image counts (beyond `i32`), and their
/// pairs' shifts are exact; a count beyond `2^53` (where the box length is below the
/// point's own spacing) is refused with an error naming the caller's point.
#[test]
fn far_points_wrap_with_exact_image_counts() {
    let domain = PeriodicBox::cubic([0.0f64; 3], [10.0; 3]);
    assert_eq!(
        domain.wrap([-1e12, 5.0, 5.0]).unwrap(),
        ([0.0, 5.0, 5.0], [100_000_000_000, 0, 0])
    );
    assert_eq!(
        domain.wrap([3e10, 5.0, 5.0]).unwrap(),
        ([0.0, 5.0, 5.0], [-3_000_000_000, 0, 0])
    );
    assert_eq!(
        domain.shifted([0.0, 5.0, 5.0], [-3_000_000_000, 0, 0]),
        [-3e10, 5.0, 5.0]
    );
    let mut search = PeriodicSearch::new(1.0, domain).unwrap();
    let points = [[-1e12 + 5.0, 5.0, 5.0], [3e10 + 5.5, 5.0, 5.0]];
    search.build(&points).unwrap();
    let pairs = pairs_of(&search);
    let shift = [-103_000_000_000, 0, 0];
    assert_eq!(pairs, vec![PeriodicPair { i: 0, j: 1, shift }]);
    // The shift for the caller's positions: x1 + s L - x0 = 0.5 along x, exactly here.
    assert_eq!(points[1][0] + shift[0] as f64 * 10.0 - points[0][0], 0.5);

    for (far, index) in [
        ([[1e30, 5.0, 5.0], [-100.0, 5.0, 5.0]], 0),
        ([[5.0; 3], [5.0, 5.0, -1e300]], 1),
    ] {
        let error = search.build(&far).unwrap_err();
        let axis = if index == 0 { 0 } else { 2 };
        assert!(
            matches!(error, Error::ImageCountOutOfRange { index: i, axis: a, .. } if i == index && a == axis),
            "{error:?}"
        );
        assert!(
            error.to_string().starts_with(&format!("point {index} ")),
            "{error}"
        );
    }
    let error = domain.wrap([1e30, 5.0, 5.0]).unwrap_err();
    assert!(matches!(
        error,
        Error::ImageCountOutOfRange {
            index: 0,
            axis: 0,
            ..
        }
    ));
    // The search still holds its last successful build.
    assert_eq!(search.len(), 2);
    let pairs = pairs_of(&search);
    assert_eq!(pairs, vec![PeriodicPair { i: 0, j: 1, shift }]);
}

/// A box whose upper face overflows the input precision is refused; an error of the grid names the caller's point, never a ghost.
#[test]
fn box_extents_that_overflow_are_refused() {
    let overflowing = PeriodicBox::cubic([3e38f32; 3], [1e38; 3]);
    assert!(matches!(
        PeriodicSearch::new(1.0f32, overflowing),
        Err(Error::InvalidConfig { .. })
    ));
    let mut lengths = [1.0f32; 3];
    lengths[1] = 2.5e38;
    let one_axis = PeriodicBox::cubic([1e38f32; 3], lengths);
    let error = PeriodicSearch::new(0.1f32, one_axis).unwrap_err();
    assert!(
        matches!(
            error,
            Error::InvalidConfig {
                name: "periodic box extent",
                ..
            }
        ),
        "{error:?}"
    );
    let fits = PeriodicBox::cubic([-1e38f32; 3], [f32::MAX; 3]);
    assert!(PeriodicSearch::new(1.0f32, fits).is_ok());
    // Periodic along x only, 10^10 cells long: the far end of the points is the ghost of
    // point 0 (near the lower face), one length above it.
    let long = PeriodicBox {
        origin: [0.0f64; 3],
        lengths: [1e10, 1.0, 1.0],
        periodic: [true, false, false],
    };
    let mut search = PeriodicSearch::new(1.0, long).unwrap();
    let error = search
        .build(&[[0.5, 0.0, 0.0], [5e9, 0.0, 0.0]])
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::CoordinateOutOfRange {
                index: 0,
                axis: 0,
                ..
            }
        ),
        "{error:?}"
    );
}

/// A box below the resolution of the coordinates at its place is refused (found by fuzzing):
/// in `f32` at an origin of 1e15 (a spacing of 2^26) a box of 2500 rounds away, a ghost
/// equals its point and the point was reported as its own neighbour image. The shortest box
/// accepted at a large origin still gives the brute force's pairs.
#[test]
fn a_box_below_the_coordinates_resolution_is_refused() {
    let lost = PeriodicBox::cubic([1e15f32; 3], [2500.0; 3]);
    let error = PeriodicSearch::new(1.0f32, lost).unwrap_err();
    assert!(
        matches!(
            error,
            Error::InvalidConfig {
                name: "periodic box length",
                value: 2500.0,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("spacing"), "{error}");
    // Along one periodic axis only, the others open.
    let one_axis = PeriodicBox {
        origin: [0.0, 1e15f32, 0.0],
        lengths: [10.0, 2500.0, 10.0],
        periodic: [false, true, false],
    };
    assert!(PeriodicSearch::new(1.0f32, one_axis).is_err());
    // The same box in f64 (a spacing of 1/8 there) is fine.
    let f64_box = PeriodicBox::cubic([1e15f64; 3], [2500.0; 3]);
    assert!(PeriodicSearch::new(1.0f64, f64_box).is_ok());

    // At an origin of 1e6 in f32 (a spacing of 1/16) a box of 2.5 for a radius of 1 stands
    // out of the rounding: points on a lattice in it, their images across every face
    // included, pair exactly as brute force says.
    let origin = 1e6f32;
    let domain = PeriodicBox::cubic([origin; 3], [2.5; 3]);
    let points: Vec<[f32; 3]> = (0..27)
        .map(|k| {
            let step = |d: u32| origin + 0.0625 * (d as f32) * 12.0;
            [step(k % 3), step(k / 3 % 3), step(k / 9)]
        })
        .collect();
    let mut search = PeriodicSearch::new(1.0f32, domain).unwrap();
    search.build(&points).unwrap();
    let expected: Vec<PeriodicPair> = oracle_periodic_pairs(&points, 1.0, &domain)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert!(expected.iter().any(|p| p.shift != [0; 3]));
    let mut found = pairs_of(&search);
    found.sort_unstable();
    assert_eq!(found, expected);
    assert!(found.iter().all(|p| p.i != p.j), "a self pair");
}

/// A build whose grid fails (points and ghosts spanning too many cells) leaves the search
/// as the last good build made it: the same points, ghosts, pairs and lists.
#[test]
fn a_failed_build_changes_nothing() {
    let long = PeriodicBox {
        origin: [0.0f64; 3],
        lengths: [1e10, 4.0, 4.0],
        periodic: [true, true, false],
    };
    let mut search = PeriodicSearch::new(1.0, long).unwrap();
    let mut rng = SplitMix64::new(5);
    let good: Vec<[f64; 3]> = (0..400)
        .map(|_| {
            [
                rng.range(2.0, 6.0),
                rng.range(-0.5, 4.0),
                rng.range(0.0, 4.0),
            ]
        })
        .collect();
    search.build(&good).unwrap();
    let observe = |search: &PeriodicSearch<f64>| {
        let pairs = pairs_of(search);
        let mut lists = NeighborLists::default();
        search.neighbor_lists(&mut lists).unwrap();
        let lists: Vec<Vec<u32>> = (0..lists.len())
            .map(|i| lists.neighbors(i).to_vec())
            .collect();
        (search.len(), search.ghosts(), pairs, lists)
    };
    let before = observe(&search);
    assert!(before.1 > 0, "points near the lower face in y have ghosts");
    assert!(!before.2.is_empty());
    // Moved down in x: points near the lower face in x get ghosts a length (1e10) away, and
    // those below it wrap to the far end, both beyond the cells the grid numbers.
    let bad: Vec<[f64; 3]> = good.iter().map(|p| [p[0] - 3.0, p[1], p[2]]).collect();
    let error = search.build(&bad).unwrap_err();
    assert!(
        matches!(error, Error::CoordinateOutOfRange { axis: 0, .. }),
        "{error:?}"
    );
    assert_eq!(
        observe(&search),
        before,
        "a failed build changed the search"
    );
}

/// The scalar kernel finds the same pairs, shifts, distances and lists as the SIMD one.
#[test]
fn kernels_agree() {
    let mut rng = SplitMix64::new(71);
    let domain = PeriodicBox::cubic([0.0; 3], [9.0, 7.0, 8.0]);
    let points: Vec<[f64; 3]> = (0..3000)
        .map(|_| {
            [
                rng.range(0.0, 9.0),
                rng.range(0.0, 7.0),
                rng.range(0.0, 8.0),
            ]
        })
        .collect();
    let run = |kernel: Kernel| {
        let mut search = PeriodicSearch::new(1.0, domain).unwrap();
        search.set_kernel(kernel);
        assert_eq!(search.kernel(), kernel);
        search.build(&points).unwrap();
        let mut pairs = PeriodicPairList::default();
        search.pairs_with_distances(&mut pairs).unwrap();
        let mut lists = NeighborLists::default();
        search.neighbor_lists(&mut lists).unwrap();
        let distances = pairs.distances_squared().unwrap().to_vec();
        (pairs.pairs().to_vec(), distances, lists.indices().to_vec())
    };
    let simd = run(Kernel::Simd);
    assert!(simd.0.len() > 3000, "{} pairs", simd.0.len());
    assert_eq!(run(Kernel::Scalar), simd);
}
