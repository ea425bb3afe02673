//! The plane's search over several point sets (`hhg_core::plane::NeighborSearch2`) against
//! brute force: dynamic and static sets, activation patterns, squared distances, SIMD against
//! scalar, one thread against several (bitwise identical), and its errors.

use hhg_core::plane::NeighborSearch2;
use hhg_core::{Error, Kernel, SetId};
use hhg_testkit::{SplitMix64, THREAD_COUNTS, TestReal, for_both_precisions, in_pool};

use super::errors::expect_non_finite;
use super::plane::{brute_list, clustered, uniform};

/// The lists of one active pair of sets: `(searching, searched, lists, distance bits)`.
type PairLists = (SetId, SetId, Vec<Vec<u32>>, Option<Vec<Vec<u64>>>);

/// The squared distance from `p` to `q` by the formula of the plane: `dx*dx + dy*dy` with
/// `d = q - p`, in `T`.
fn squared<T: TestReal>(p: [T; 2], q: [T; 2]) -> T {
    let dx = q[0] - p[0];
    let dy = q[1] - p[1];
    dx * dx + dy * dy
}

/// Checks the lists of every pair of sets against brute force (inactive pairs give `None`,
/// a set against itself excludes the point itself, distances when asked) and returns those
/// of the active pairs, in order. Also returns how many entries they hold.
fn check_search<T: TestReal>(
    what: &str,
    search: &NeighborSearch2<T>,
    sets: &[&[[T; 2]]],
    radius: T,
) -> (Vec<PairLists>, usize) {
    let mut all = Vec::new();
    let mut entries = 0;
    for (a, &searching) in sets.iter().enumerate() {
        for (b, &searched) in sets.iter().enumerate() {
            let label = format!("{what}: set {a} searching set {b}");
            let lists = match (search.is_active(a, b), search.neighbors(a, b)) {
                (false, None) => continue,
                (false, Some(_)) => panic!("{label}: inactive, but neighbors() gives lists"),
                (true, None) => panic!("{label}: active and searched, but neighbors() gives None"),
                (true, Some(lists)) => lists,
            };
            assert_eq!(lists.len(), searching.len(), "{label}: list count");
            let mut indices = Vec::new();
            let mut distances = Vec::new();
            for (i, &p) in searching.iter().enumerate() {
                let skip = if a == b { i } else { usize::MAX };
                let expected = brute_list(searched, p, radius, skip);
                assert_eq!(lists.neighbors(i), expected, "{label}: list {i}");
                entries += expected.len();
                match lists.neighbor_distances_squared(i) {
                    Some(found) => {
                        assert!(search.with_distances(), "{label}: distances not asked for");
                        let bits: Vec<u64> = found.iter().map(|d| d.to_f64().to_bits()).collect();
                        let expected: Vec<u64> = expected
                            .iter()
                            .map(|&j| squared(p, searched[j as usize]).to_f64().to_bits())
                            .collect();
                        assert_eq!(bits, expected, "{label}: distances of list {i}");
                        distances.push(bits);
                    }
                    None => assert!(!search.with_distances(), "{label}: no distances"),
                }
                indices.push(lists.neighbors(i).to_vec());
            }
            let distances = search.with_distances().then_some(distances);
            all.push((a, b, indices, distances));
        }
    }
    (all, entries)
}

/// Moves every point by up to `step` along each axis.
fn moved<T: TestReal>(rng: &mut SplitMix64, points: &[[T; 2]], step: f64) -> Vec<[T; 2]> {
    points
        .iter()
        .map(|p| p.map(|v| T::from_f64(v.to_f64() + rng.range(-step, step))))
        .collect()
}

/// The point sets of the scenario, all in `T`: a fluid block (uniform), the wall under and
/// left of it (a lattice of spacing `radius / 2`, so that samples lie at exactly the radius
/// from each other), gaussian clusters, points on and one ulp beside cell borders, and points
/// at negative and huge coordinates with a few near the fluid.
fn scene<T: TestReal>(rng: &mut SplitMix64, radius: f64) -> Vec<Vec<[T; 2]>> {
    let fluid = uniform::<T>(rng, 1200, [0.0, 0.0], [16.0, 8.0]);
    let spacing = radius / 2.0;
    let mut wall = Vec::new();
    for k in 0..80 {
        for layer in 0..2 {
            let along = f64::from(k) * spacing - 2.0;
            let across = -spacing * f64::from(layer + 1);
            wall.push([T::from_f64(along), T::from_f64(across)]);
            wall.push([T::from_f64(across), T::from_f64(along)]);
        }
    }
    let clusters = clustered::<T>(rng, 900, 4, 16.0, 0.6);
    let cell = radius * (1.0 + 1e-5);
    let borders: Vec<[T; 2]> = (0..600)
        .map(|_| {
            [0, 1].map(|_| {
                let k = rng.range(-2.0, 20.0).floor();
                let border = [k * cell, k * radius, (k + 1.0 / 16.0) * cell][rng.below(3)];
                let v = T::from_f64(border);
                [v, v.next_up(), v.next_down()][rng.below(3)]
            })
        })
        .collect();
    let far_offset = if T::NAME == "f32" { 3.0e4 } else { 1.0e8 };
    let mut far = uniform::<T>(
        rng,
        300,
        [-far_offset, far_offset],
        [-far_offset + 10.0, far_offset + 10.0],
    );
    far.extend(uniform::<T>(
        rng,
        300,
        [-far_offset, -far_offset],
        [-far_offset + 10.0, -far_offset + 10.0],
    ));
    far.extend(uniform::<T>(rng, 100, [0.0, 0.0], [16.0, 8.0]));
    vec![fluid, wall, clusters, borders, far]
}

/// The whole scenario for one kernel and thread count: five sets (fluid, clusters and far
/// points dynamic; wall and borders static), several steps of motion under changing
/// activation patterns, distances switched on, a static set moved, a dynamic set replaced by
/// fewer points. Returns every list computed, for comparison across kernels and threads.
fn scenario<T: TestReal>(kernel: Kernel, threads: usize) -> Vec<Vec<PairLists>> {
    let what = format!("{} [{kernel:?}, {threads} threads]", T::NAME);
    let radius_f64 = 0.5;
    let radius = T::from_f64(radius_f64);
    let mut rng = SplitMix64::new(2525);
    let mut sets = scene::<T>(&mut rng, radius_f64);
    let dynamic = [true, false, true, false, true];
    let mut search = NeighborSearch2::new(radius).unwrap();
    search.set_kernel(kernel);
    for (k, points) in sets.iter().enumerate() {
        let id = if dynamic[k] {
            search.add_dynamic_set(points).unwrap()
        } else {
            search.add_static_set(points).unwrap()
        };
        assert_eq!(id, k);
    }
    assert_eq!(search.set_count(), sets.len());
    let mut found = Vec::new();
    let mut total = 0;
    let count = sets.len();
    for step in 0..7 {
        // Activation: the dam break's pattern, then random ones, all pairs, and none.
        for a in 0..count {
            for b in 0..count {
                let on = match step {
                    0 | 1 => (a == 0 && b <= 1) || (a == 1 && b == 0),
                    5 => true,
                    6 => false,
                    _ => rng.below(2) == 0,
                };
                search.set_active(a, b, on).unwrap();
            }
        }
        if step == 4 {
            search.set_with_distances(true);
        }
        if step == 3 {
            // A static set moves once: its grid and its lists with the other static set
            // are rebuilt.
            sets[1] = moved(&mut rng, &sets[1], 0.05);
            search.update_positions(1, &sets[1]).unwrap();
        }
        if step == 5 {
            sets[2].truncate(400);
            search.replace_set(2, &sets[2]).unwrap();
        }
        for k in (0..count).filter(|&k| dynamic[k]) {
            sets[k] = moved(&mut rng, &sets[k], 0.1);
            search.update_positions(k, &sets[k]).unwrap();
        }
        // The fluid (at step 3 also the moved wall, at step 4 the clusters) adopts the cell
        // order of its last build: its points are renumbered, and the lists in it come from
        // the pass for points in cell order, with distances from step 4 on.
        let adopted: &[SetId] = match step {
            2 => &[0],
            3 => &[0, 1],
            4 => &[0, 2],
            _ => &[],
        };
        for &k in adopted {
            let order = search.adopt_cell_order(k).unwrap().to_vec();
            assert_eq!(
                order.len(),
                sets[k].len(),
                "{what}: the permutation's length"
            );
            sets[k] = order.iter().map(|&i| sets[k][i as usize]).collect();
            assert!(
                search.grid(k).unwrap().in_cell_order(),
                "{what}: set {k} adopted"
            );
            assert!(
                search.neighbors(0, k).is_none(),
                "{what}: stale lists of set {k}"
            );
        }
        in_pool(threads, || search.find_neighbors()).unwrap();
        let views: Vec<&[[T; 2]]> = sets.iter().map(Vec::as_slice).collect();
        let (lists, entries) =
            check_search(&format!("{what} step {step}"), &search, &views, radius);
        total += entries;
        found.push(lists);
    }
    assert!(
        total > 100_000,
        "{what}: only {total} entries, the test would be weak"
    );
    found
}

/// Every kernel and thread count agrees with brute force and, bitwise, with the others.
fn several_sets_against_brute_force<T: TestReal>() {
    let reference = scenario::<T>(Kernel::Simd, 1);
    for kernel in [Kernel::Simd, Kernel::Scalar] {
        for threads in THREAD_COUNTS {
            if (kernel, threads) == (Kernel::Simd, 1) {
                continue;
            }
            let lists = scenario::<T>(kernel, threads);
            assert!(
                lists == reference,
                "{} {kernel:?} {threads} threads: lists differ from the SIMD kernel's on one thread",
                T::NAME
            );
        }
    }
}

/// Sets given as columns search as the same sets given as points; empty sets give empty
/// lists in both directions.
fn columns_and_empty_sets<T: TestReal>() {
    let radius = T::from_f64(0.7);
    let mut rng = SplitMix64::new(2526);
    let a = uniform::<T>(&mut rng, 900, [0.0, 0.0], [12.0, 12.0]);
    let b = clustered::<T>(&mut rng, 700, 3, 12.0, 1.0);
    let x: Vec<T> = b.iter().map(|p| p[0]).collect();
    let y: Vec<T> = b.iter().map(|p| p[1]).collect();
    let mut search = NeighborSearch2::new(radius).unwrap();
    assert_eq!(search.radius(), radius);
    let sa = search.add_dynamic_set(&a).unwrap();
    let sb = search.add_set_soa(&x, &y, false).unwrap();
    let empty = search.add_dynamic_set(&[]).unwrap();
    for s in [sa, sb, empty] {
        for t in [sa, sb, empty] {
            search.set_active(s, t, true).unwrap();
        }
    }
    for with_distances in [false, true] {
        search.set_with_distances(with_distances);
        search.find_neighbors().unwrap();
        let (_, entries) = check_search(T::NAME, &search, &[&a, &b, &[]], radius);
        assert!(entries > 5000, "{entries}");
        assert_eq!(search.neighbors(sa, empty).unwrap().total(), 0);
        assert_eq!(search.neighbors(empty, sb).unwrap().len(), 0);
    }
    // Moving the column set by columns.
    let x: Vec<T> = x.iter().map(|&v| v + T::from_f64(0.25)).collect();
    search.update_positions_soa(sb, &x, &y).unwrap();
    search.find_neighbors().unwrap();
    let moved: Vec<[T; 2]> = x.iter().zip(&y).map(|(&x, &y)| [x, y]).collect();
    check_search(T::NAME, &search, &[&a, &moved, &[]], radius);
    search.replace_set_soa(sb, &x[..100], &y[..100]).unwrap();
    search.find_neighbors().unwrap();
    check_search(T::NAME, &search, &[&a, &moved[..100], &[]], radius);
}

/// Bad radii, unknown sets, NaN and infinite coordinates (naming point and axis), changed
/// point counts and columns of different lengths are errors that leave the search as it
/// was: the same sets, the same lists still fresh.
fn errors<T: TestReal>() {
    for radius in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                NeighborSearch2::new(T::from_f64(radius)),
                Err(Error::InvalidRadius { .. })
            ),
            "{} radius {radius}",
            T::NAME
        );
    }
    let radius = T::from_f64(0.6);
    let mut rng = SplitMix64::new(2527);
    let fluid = uniform::<T>(&mut rng, 300, [0.0, 0.0], [6.0, 6.0]);
    let wall = uniform::<T>(&mut rng, 100, [-1.0, -1.0], [7.0, 0.0]);
    let mut search = NeighborSearch2::new(radius).unwrap();
    let f = search.add_dynamic_set(&fluid).unwrap();
    let w = search.add_static_set(&wall).unwrap();
    search.set_active(f, f, true).unwrap();
    search.set_active(f, w, true).unwrap();
    search.set_with_distances(true);
    search.find_neighbors().unwrap();
    let (before, entries) = check_search(T::NAME, &search, &[&fluid, &wall], radius);
    assert!(entries > 1000);
    let unknown = |result: Result<(), Error>, set: usize| {
        assert!(
            matches!(result, Err(Error::UnknownPointSet { set: s, sets: 2 }) if s == set),
            "{result:?}"
        );
    };
    unknown(search.set_active(2, f, true), 2);
    unknown(search.set_active(f, 7, true), 7);
    unknown(search.update_positions(3, &fluid), 3);
    unknown(search.update_positions_soa(3, &[], &[]), 3);
    unknown(search.replace_set(9, &fluid), 9);
    unknown(search.replace_set_soa(9, &[], &[]), 9);
    unknown(search.adopt_cell_order(4).map(|_| ()), 4);
    assert!(search.neighbors(5, f).is_none() && search.neighbors(f, 5).is_none());
    assert!(!search.is_active(5, f) && search.grid(5).is_none());
    assert!(matches!(
        search.update_positions(f, &fluid[1..]),
        Err(Error::PointCountChanged {
            set: 0,
            expected: 300,
            given: 299
        })
    ));
    let x: Vec<T> = fluid.iter().map(|p| p[0]).collect();
    assert!(matches!(
        search.update_positions_soa(f, &x, &x[1..]),
        Err(Error::LengthMismatch { .. })
    ));
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let bad = T::from_f64(bad);
        for (index, axis) in [(0, 0), (123, 1), (299, 0)] {
            let mut points = fluid.clone();
            points[index][axis] = bad;
            let what = format!("{} point {index} axis {axis}", T::NAME);
            expect_non_finite(&what, search.update_positions(f, &points), index, axis, bad);
            expect_non_finite(&what, search.replace_set(w, &points), index, axis, bad);
            let added = search.add_dynamic_set(&points).map(|_| ());
            expect_non_finite(&what, added, index, axis, bad);
            let added = search.add_static_set(&points).map(|_| ());
            expect_non_finite(&what, added, index, axis, bad);
            let x: Vec<T> = points.iter().map(|p| p[0]).collect();
            let y: Vec<T> = points.iter().map(|p| p[1]).collect();
            expect_non_finite(
                &what,
                search.update_positions_soa(f, &x, &y),
                index,
                axis,
                bad,
            );
            let added = search.add_set_soa(&x, &y, true).map(|_| ());
            expect_non_finite(&what, added, index, axis, bad);
        }
    }
    // Nothing changed: the same two sets, the lists still fresh and as they were, and a new
    // search gives them again.
    assert_eq!(search.set_count(), 2);
    assert_eq!(search.grid(w).unwrap().len(), wall.len());
    let (after, _) = check_search(T::NAME, &search, &[&fluid, &wall], radius);
    assert!(after == before, "a failed call changed the lists");
    search.find_neighbors().unwrap();
    let (again, _) = check_search(T::NAME, &search, &[&fluid, &wall], radius);
    assert!(again == before, "a failed call changed the sets");
}

/// The options read back what was set.
#[test]
fn options_read_back() {
    let mut search = NeighborSearch2::new(1.0f32).unwrap();
    assert_eq!(
        (
            search.kernel(),
            search.with_distances(),
            search.max_entries()
        ),
        (Kernel::Simd, false, None)
    );
    search.set_kernel(Kernel::Scalar);
    search.set_with_distances(true);
    search.set_max_entries(Some(12));
    assert_eq!(
        (
            search.kernel(),
            search.with_distances(),
            search.max_entries()
        ),
        (Kernel::Scalar, true, Some(12))
    );
    let set = search.add_dynamic_set(&[[0.0, 0.0]]).unwrap();
    assert_eq!(search.grid(set).unwrap().kernel(), Kernel::Scalar);
}

for_both_precisions!(
    several_sets_against_brute_force,
    columns_and_empty_sets,
    errors,
);
