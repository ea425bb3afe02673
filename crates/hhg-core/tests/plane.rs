//! The plane grid (`hhg_core::plane::Grid2`) against brute force: pairs, lists and queries on
//! seeded randomized scenes, SIMD against scalar, one thread against two, and its errors.

use hhg_core::plane::Grid2;
use hhg_core::{Error, Kernel, NeighborLists, PairList};
use hhg_testkit::{SplitMix64, TestReal, for_both_precisions, in_pool};

use super::errors::expect_non_finite;

/// The neighbour predicate of the plane, as every path of `Grid2` evaluates it.
fn within<T: TestReal>(p: [T; 2], q: [T; 2], radius: T) -> bool {
    let dx = q[0] - p[0];
    let dy = q[1] - p[1];
    dx * dx + dy * dy <= radius * radius
}

/// Every pair `i < j` within `radius`, in lexicographic order.
fn brute_pairs<T: TestReal>(points: &[[T; 2]], radius: T) -> Vec<[u32; 2]> {
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

/// The ascending list of the points within `radius` of `p`, skipping index `skip`.
pub(crate) fn brute_list<T: TestReal>(
    points: &[[T; 2]],
    p: [T; 2],
    radius: T,
    skip: usize,
) -> Vec<u32> {
    (0..points.len())
        .filter(|&j| j != skip && within(p, points[j], radius))
        .map(|j| j as u32)
        .collect()
}

/// `n` points drawn uniformly from the box `lo..hi`.
pub(crate) fn uniform<T: TestReal>(
    rng: &mut SplitMix64,
    n: usize,
    lo: [f64; 2],
    hi: [f64; 2],
) -> Vec<[T; 2]> {
    (0..n)
        .map(|_| [0, 1].map(|a| T::from_f64(rng.range(lo[a], hi[a]))))
        .collect()
}

/// `n` points in gaussian clusters of width `sigma` around `clusters` centres in `0..extent`.
pub(crate) fn clustered<T: TestReal>(
    rng: &mut SplitMix64,
    n: usize,
    clusters: usize,
    extent: f64,
    sigma: f64,
) -> Vec<[T; 2]> {
    let centres: Vec<[f64; 2]> = (0..clusters)
        .map(|_| [rng.range(0.0, extent), rng.range(0.0, extent)])
        .collect();
    (0..n)
        .map(|_| {
            let c = centres[rng.below(clusters)];
            [0, 1].map(|a| T::from_f64(c[a] + sigma * rng.gaussian()))
        })
        .collect()
}

/// A grid over `points` with `kernel`.
fn grid<T: TestReal>(points: &[[T; 2]], radius: T, kernel: Kernel) -> Grid2<T> {
    let mut grid = Grid2::new(radius).expect("a valid radius");
    grid.set_kernel(kernel);
    grid.build(points).expect("valid points");
    grid
}

/// The squared distance of `p` and `q` by the plane's formula, `dx*dx + dy*dy` with
/// `d = q - p`, as bits.
fn distance_bits<T: TestReal>(p: [T; 2], q: [T; 2]) -> u64 {
    let dx = q[0] - p[0];
    let dy = q[1] - p[1];
    (dx * dx + dy * dy).to_f64().to_bits()
}

/// Checks `lists` (with distances when they hold them) against brute force over `points`.
fn check_lists<T: TestReal>(what: &str, lists: &NeighborLists<T>, points: &[[T; 2]], radius: T) {
    assert_eq!(lists.len(), points.len(), "{what}: list count");
    for (i, &p) in points.iter().enumerate() {
        let expected = brute_list(points, p, radius, i);
        assert_eq!(lists.neighbors(i), expected, "{what}: list {i}");
        if let Some(found) = lists.neighbor_distances_squared(i) {
            let found: Vec<u64> = found.iter().map(|d| d.to_f64().to_bits()).collect();
            let expected: Vec<u64> = expected
                .iter()
                .map(|&j| distance_bits(p, points[j as usize]))
                .collect();
            assert_eq!(found, expected, "{what}: distances of list {i}");
        }
    }
}

/// The pairs of `grid` without and with distances: the same pairs in the same order, each
/// `i < j`, the distances those of brute force bit for bit. Returns the pairs.
fn checked_pairs<T: TestReal>(what: &str, grid: &Grid2<T>, points: &[[T; 2]]) -> Vec<[u32; 2]> {
    let mut pairs = PairList::default();
    grid.pairs(&mut pairs).unwrap();
    assert!(
        pairs.distances_squared().is_none(),
        "{what}: distances not asked for"
    );
    let mut with_distances = PairList::default();
    grid.pairs_with_distances(&mut with_distances).unwrap();
    assert_eq!(
        with_distances.pairs(),
        pairs.pairs(),
        "{what}: pairs with distances"
    );
    let distances: Vec<u64> = with_distances
        .distances_squared()
        .expect("distances asked for")
        .iter()
        .map(|d| d.to_f64().to_bits())
        .collect();
    let expected: Vec<u64> = pairs
        .pairs()
        .iter()
        .map(|&[i, j]| distance_bits(points[i as usize], points[j as usize]))
        .collect();
    assert_eq!(distances, expected, "{what}: pair distances");
    pairs.pairs().to_vec()
}

/// `points` in the order `order` (position `k` holds point `order[k]`).
fn permuted<T: TestReal>(points: &[[T; 2]], order: &[u32]) -> Vec<[T; 2]> {
    order.iter().map(|&i| points[i as usize]).collect()
}

/// The grid over `points` after it adopted its cell order, and a grid built on the points
/// given in that order, against brute force over the renumbered points: both number the
/// points in cell order, and give the same lists, pairs and queries.
fn check_cell_order<T: TestReal>(what: &str, points: &[[T; 2]], radius: T, kernel: Kernel) {
    let mut adopted = grid(points, radius, kernel);
    let order = adopted.order().to_vec();
    assert_eq!(
        adopted.adopt_cell_order(),
        order,
        "{what}: the permutation handed out"
    );
    assert!(
        points.is_empty() || adopted.in_cell_order(),
        "{what}: adopted"
    );
    assert!(
        adopted
            .order()
            .iter()
            .enumerate()
            .all(|(k, &i)| k == i as usize)
    );
    let renumbered = permuted(points, &order);
    let rebuilt = grid(&renumbered, radius, kernel);
    assert!(
        points.is_empty() || rebuilt.in_cell_order(),
        "{what}: given in cell order"
    );
    assert_eq!(rebuilt.order(), adopted.order(), "{what}: order");
    let mut queries = renumbered.clone();
    queries.truncate(300);
    for (which, grid) in [("adopted", &adopted), ("rebuilt", &rebuilt)] {
        let what = format!("{what}, {which} cell order");
        let mut sorted = checked_pairs(&what, grid, &renumbered);
        sorted.sort_unstable();
        assert_eq!(sorted, brute_pairs(&renumbered, radius), "{what}: pairs");
        let mut lists = NeighborLists::default();
        grid.neighbor_lists(&mut lists).unwrap();
        check_lists(&what, &lists, &renumbered, radius);
        grid.neighbor_lists_with_distances(&mut lists).unwrap();
        check_lists(&what, &lists, &renumbered, radius);
        grid.query(&queries, &mut lists).unwrap();
        for (q, &p) in queries.iter().enumerate() {
            let expected = brute_list(&renumbered, p, radius, usize::MAX);
            assert_eq!(lists.neighbors(q), expected, "{what}: query {q}");
        }
    }
    // A rebuild after the adoption numbers the points as the caller gives them again.
    adopted.build(points).unwrap();
    assert_eq!(
        adopted.order(),
        order,
        "{what}: a rebuild after the adoption"
    );
}

/// The pairs and lists of `points` on every path (SIMD and scalar kernels, 1 and 2 threads,
/// AoS and SoA input, with and without distances, in the caller's order and in cell order)
/// against brute force; every path gives the same pairs in the same order. Returns the
/// number of pairs, so that a scene can check it is not trivial.
fn check_scene<T: TestReal>(name: &str, points: &[[T; 2]], radius: T) -> usize {
    let expected_pairs = brute_pairs(points, radius);
    let mut reference: Option<Vec<[u32; 2]>> = None;
    for kernel in [Kernel::Simd, Kernel::Scalar] {
        for threads in [1, 2] {
            let what = format!("{name} {} {kernel:?} {threads} threads", T::NAME);
            let (pairs, lists, order) = in_pool(threads, || {
                let grid = grid(points, radius, kernel);
                assert_eq!(grid.len(), points.len());
                assert_eq!(grid.radius(), radius);
                let pairs = checked_pairs(&what, &grid, points);
                let mut lists = NeighborLists::default();
                grid.neighbor_lists_with_distances(&mut lists).unwrap();
                check_lists(&what, &lists, points, radius);
                grid.neighbor_lists(&mut lists).unwrap();
                check_cell_order(&what, points, radius, kernel);
                (pairs, lists, grid.order().to_vec())
            });
            let mut sorted_order = order.clone();
            sorted_order.sort_unstable();
            assert!(
                sorted_order
                    .iter()
                    .enumerate()
                    .all(|(k, &i)| k == i as usize),
                "{what}: order is not a permutation"
            );
            assert!(
                pairs.iter().all(|&[i, j]| i < j),
                "{what}: a pair not i < j"
            );
            let mut sorted = pairs.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, expected_pairs, "{what}: pairs");
            match &reference {
                None => reference = Some(pairs),
                Some(first) => assert_eq!(&pairs, first, "{what}: pair order differs"),
            }
            assert_eq!(lists.len(), points.len(), "{what}: list count");
            for i in 0..points.len() {
                assert_eq!(
                    lists.neighbors(i),
                    brute_list(points, points[i], radius, i),
                    "{what}: list {i}"
                );
            }
        }
    }
    // The same points as columns give the same pairs in the same order.
    let x: Vec<T> = points.iter().map(|p| p[0]).collect();
    let y: Vec<T> = points.iter().map(|p| p[1]).collect();
    let mut columns = Grid2::new(radius).unwrap();
    columns.build_soa(&x, &y).unwrap();
    let mut pairs = PairList::default();
    columns.pairs(&mut pairs).unwrap();
    assert_eq!(
        Some(pairs.pairs().to_vec()),
        reference,
        "{name} {}: SoA pairs",
        T::NAME
    );
    expected_pairs.len()
}

/// Uniform points, dense and (with a far outlier) hashed tables.
fn uniform_scenes<T: TestReal>() {
    let mut rng = SplitMix64::new(25);
    for (n, edge) in [(1, 1.0), (2, 0.5), (9, 3.0), (700, 10.0), (3000, 20.0)] {
        let points = uniform::<T>(&mut rng, n, [0.0, 0.0], [edge, edge]);
        check_scene("uniform", &points, T::from_f64(0.7));
    }
    let mut points = uniform::<T>(&mut rng, 2000, [-5.0, -5.0], [15.0, 15.0]);
    points.push([T::from_f64(4.0e4), T::from_f64(-3.0e4)]);
    let grid = grid(&points, T::from_f64(0.6), Kernel::Simd);
    assert_eq!(
        grid.is_dense(),
        Some(false),
        "an outlier makes the table hashed"
    );
    assert!(check_scene("hashed", &points, T::from_f64(0.6)) > 1000);
}

/// Clustered points: many per cell next to empty cells.
fn clustered_scenes<T: TestReal>() {
    let mut rng = SplitMix64::new(26);
    let points = clustered::<T>(&mut rng, 2500, 6, 40.0, 0.8);
    assert!(check_scene("clustered", &points, T::from_f64(0.5)) > 1000);
    let points = clustered::<T>(&mut rng, 1500, 3, 1.0e5, 3.0);
    assert!(check_scene("clustered far apart", &points, T::from_f64(1.0)) > 1000);
}

/// All points equal, all on a line along an axis, all on a diagonal.
fn degenerate_scenes<T: TestReal>() {
    let mut rng = SplitMix64::new(27);
    let same = vec![[T::from_f64(1.5), T::from_f64(-2.25)]; 200];
    assert_eq!(
        check_scene("all equal", &same, T::from_f64(0.1)),
        200 * 199 / 2
    );
    let line: Vec<[T; 2]> = (0..800)
        .map(|_| [T::from_f64(rng.range(-50.0, 50.0)), T::from_f64(3.0)])
        .collect();
    assert!(check_scene("line", &line, T::from_f64(0.4)) > 500);
    let vertical: Vec<[T; 2]> = (0..800)
        .map(|_| [T::from_f64(-7.0), T::from_f64(rng.range(-50.0, 50.0))])
        .collect();
    assert!(check_scene("vertical line", &vertical, T::from_f64(0.4)) > 500);
    let diagonal: Vec<[T; 2]> = (0..800)
        .map(|_| {
            let t = T::from_f64(rng.range(0.0, 60.0));
            [t, t]
        })
        .collect();
    assert!(check_scene("diagonal", &diagonal, T::from_f64(0.5)) > 500);
}

/// Lattices whose neighbours lie at exactly the radius (exact in binary), shuffled: `<=`
/// keeps them on every path.
fn pairs_at_exactly_the_radius<T: TestReal>() {
    let mut rng = SplitMix64::new(28);
    for (spacing, radius) in [(0.5, 0.5), (0.25, 0.5), (1.0, 2.0)] {
        let mut points: Vec<[T; 2]> = (0..30i32)
            .flat_map(|i| (0..30i32).map(move |j| [i, j]))
            .map(|[i, j]| {
                [
                    T::from_f64(f64::from(i) * spacing - 3.0),
                    T::from_f64(f64::from(j) * spacing),
                ]
            })
            .collect();
        for k in (1..points.len()).rev() {
            points.swap(k, rng.below(k + 1));
        }
        let pairs = check_scene("lattice", &points, T::from_f64(radius));
        // Each site has 4 neighbours at exactly one radius on a lattice of spacing `radius`.
        if spacing == radius {
            assert_eq!(pairs, 2 * 30 * 29);
        }
    }
}

/// Points on and next to cell borders (multiples of the cell edge and of the radius, and
/// one ulp on either side), and negative and huge coordinates.
fn borders_and_far_coordinates<T: TestReal>() {
    let mut rng = SplitMix64::new(29);
    let radius = 0.75;
    let cell = radius * (1.0 + 1e-5);
    let mut points: Vec<[T; 2]> = Vec::new();
    for _ in 0..1500 {
        let at = |rng: &mut SplitMix64| {
            let k = rng.range(-12.0, 12.0).floor();
            let border = [k * cell, k * radius, (k + 1.0 / 16.0) * cell][rng.below(3)];
            let v = T::from_f64(border);
            [v, v.next_up(), v.next_down()][rng.below(3)]
        };
        points.push([at(&mut rng), at(&mut rng)]);
    }
    assert!(check_scene("borders", &points, T::from_f64(radius)) > 1000);
    // Far from the origin, in each precision's range of useful resolution.
    let offset = if T::NAME == "f32" { 3.0e4 } else { 1.0e9 };
    for (sx, sy) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0)] {
        let points = uniform::<T>(
            &mut rng,
            1500,
            [sx * offset, sy * offset],
            [sx * offset + 25.0, sy * offset + 25.0],
        );
        assert!(check_scene("far", &points, T::from_f64(1.0)) > 1000);
    }
}

/// Queries of points not in the set (inside, around and far outside it) against brute force,
/// on a dense and a hashed table, SIMD and scalar.
fn queries<T: TestReal>() {
    let mut rng = SplitMix64::new(30);
    let radius = T::from_f64(0.8);
    let mut hashed = uniform::<T>(&mut rng, 1200, [0.0, 0.0], [12.0, 12.0]);
    hashed.push([T::from_f64(-9.0e4), T::from_f64(2.0e4)]);
    for points in [
        uniform::<T>(&mut rng, 1200, [0.0, 0.0], [12.0, 12.0]),
        hashed,
    ] {
        let mut queries = uniform::<T>(&mut rng, 700, [-3.0, -3.0], [15.0, 15.0]);
        queries.push([T::from_f64(1.0e7), T::from_f64(-1.0e7)]);
        queries.push([T::from_f64(-9.0e4), T::from_f64(2.0e4)]);
        for kernel in [Kernel::Simd, Kernel::Scalar] {
            let grid = grid(&points, radius, kernel);
            let mut lists = NeighborLists::default();
            grid.query(&queries, &mut lists).unwrap();
            assert_eq!(lists.len(), queries.len());
            let mut found = 0;
            for (q, &p) in queries.iter().enumerate() {
                let expected = brute_list(&points, p, radius, usize::MAX);
                found += expected.len();
                assert_eq!(lists.neighbors(q), expected, "{} query {q}", T::NAME);
            }
            assert!(found > 1000);
        }
    }
    // An empty grid answers every query with an empty list.
    let mut empty = Grid2::new(radius).unwrap();
    empty.build(&[]).unwrap();
    let mut lists = NeighborLists::default();
    empty.query(&[[radius, radius]], &mut lists).unwrap();
    assert_eq!(lists.len(), 1);
    assert!(lists.neighbors(0).is_empty());
}

/// An empty build, and a rebuild with fewer points, leave nothing of the build before.
fn rebuilds<T: TestReal>() {
    let mut rng = SplitMix64::new(31);
    let radius = T::from_f64(1.0);
    let mut grid = Grid2::new(radius).unwrap();
    let mut lists = NeighborLists::default();
    grid.build(&uniform::<T>(&mut rng, 3000, [0.0, 0.0], [20.0, 20.0]))
        .unwrap();
    grid.neighbor_lists(&mut lists).unwrap();
    // Fewer points and fewer work units: the list pass's buffers kept from the call before
    // are longer than needed.
    let fewer = uniform::<T>(&mut rng, 500, [5.0, 5.0], [12.0, 12.0]);
    grid.build(&fewer).unwrap();
    let mut pairs = PairList::default();
    grid.pairs(&mut pairs).unwrap();
    let mut sorted = pairs.pairs().to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, brute_pairs(&fewer, radius));
    grid.neighbor_lists(&mut lists).unwrap();
    assert_eq!(lists.len(), fewer.len());
    for (i, &p) in fewer.iter().enumerate() {
        assert_eq!(
            lists.neighbors(i),
            brute_list(&fewer, p, radius, i),
            "list {i}"
        );
    }
    grid.build(&[]).unwrap();
    assert!(grid.is_empty());
    grid.pairs(&mut pairs).unwrap();
    assert!(pairs.is_empty());
    grid.neighbor_lists(&mut lists).unwrap();
    assert_eq!(lists.len(), 0);
}

/// Bad radii, non-finite coordinates (naming point and axis), columns of different lengths
/// and points beyond the grid's integer range are refused, and leave a built grid as it was.
fn errors<T: TestReal>() {
    for radius in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                Grid2::new(T::from_f64(radius)),
                Err(Error::InvalidRadius { .. })
            ),
            "{} radius {radius}",
            T::NAME
        );
    }
    let mut rng = SplitMix64::new(32);
    let good = uniform::<T>(&mut rng, 50, [0.0, 0.0], [4.0, 4.0]);
    let mut grid = Grid2::new(T::from_f64(0.5)).unwrap();
    grid.build(&good).unwrap();
    let mut before = PairList::default();
    grid.pairs(&mut before).unwrap();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for (index, axis) in [(0, 0), (17, 1), (49, 0)] {
            let mut points = good.clone();
            points[index][axis] = T::from_f64(bad);
            let error = grid.build(&points).unwrap_err();
            let what = format!("{} build", T::NAME);
            expect_non_finite(&what, Err(error.clone()), index, axis, T::from_f64(bad));
            let x: Vec<T> = points.iter().map(|p| p[0]).collect();
            let y: Vec<T> = points.iter().map(|p| p[1]).collect();
            // `Error` holds the NaN itself, which equals nothing: compare what it prints.
            let same = |result: Result<(), Error>| {
                format!("{result:?}") == format!("{:?}", Err::<(), _>(error.clone()))
            };
            assert!(same(grid.build_soa(&x, &y)), "{} SoA", T::NAME);
            let mut lists = NeighborLists::default();
            assert!(same(grid.query(&points, &mut lists)), "{} query", T::NAME);
        }
    }
    let x: Vec<T> = good.iter().map(|p| p[0]).collect();
    assert!(matches!(
        grid.build_soa(&x, &x[1..]),
        Err(Error::LengthMismatch { x: 50, y: 49, .. })
    ));
    let far = [
        [T::from_f64(0.0), T::from_f64(0.0)],
        [T::from_f64(0.0), T::from_f64(1.0e12)],
    ];
    assert!(matches!(
        grid.build(&far),
        Err(Error::CoordinateOutOfRange {
            index: 1,
            axis: 1,
            ..
        })
    ));
    // The failed builds left the grid as it was.
    assert_eq!(grid.len(), good.len());
    let mut after = PairList::default();
    grid.pairs(&mut after).unwrap();
    assert_eq!(after.pairs(), before.pairs());
}

for_both_precisions!(
    uniform_scenes,
    clustered_scenes,
    degenerate_scenes,
    pairs_at_exactly_the_radius,
    borders_and_far_coordinates,
    queries,
    rebuilds,
    errors,
);
