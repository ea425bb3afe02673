//! Differential tests: every search path of a grid against a brute-force oracle, on randomized and adversarial scenes.

use std::sync::Mutex;

use hhg_core::building_blocks::{CELL_MARGIN, CellTable};
use hhg_core::reorder::{apply_order, apply_order_with, gather_into};
use hhg_core::{
    Error, Grid, Kernel, NeighborLists, PairList, PointColumns, Points, Real, RunTimeDispatch,
};
use hhg_testkit::{
    Csr, Scene, SplitMix64, THREAD_COUNTS, TestReal, assert_same_seq, build_grid,
    check_excludes_self, check_list_distances, check_lists, check_pair_distances, check_pairs,
    for_both_precisions, gaussian_clusters, in_pool, lattice, oracle_cross, oracle_pairs,
    oracle_self, shuffle, to_real, uniform_box, uniform_cube, within,
};

/// What the oracle says about a scene and its query points.
struct Expected {
    /// Neighbour lists of the set against itself.
    lists: Vec<Vec<u32>>,
    /// Unique pairs, sorted.
    pairs: Vec<[u32; 2]>,
    /// Lists of the query points against the set.
    queries: Vec<Vec<u32>>,
    /// Lists of the second set's points against the set.
    cross: Vec<Vec<u32>>,
    /// Lists of the set's points against the second set.
    back: Vec<Vec<u32>>,
}

/// Everything one path (kernel, thread count) computed, in comparable form.
#[derive(Debug)]
struct Outcome {
    order: Vec<u32>,
    table: Option<CellTable>,
    lists: Csr,
    lists_with_distances: Csr,
    pairs: Vec<[u32; 2]>,
    pair_distances: Vec<u64>,
    visited: Vec<(u32, u32, u64)>,
    queries: Csr,
    queries_with_distances: Csr,
    cross: Csr,
    back: Csr,
}

/// Runs every search of one path over a scene and checks each result against the oracle.
fn run_path<T: TestReal>(
    what: &str,
    scene: &Scene<T>,
    queries: &[[T; 3]],
    second: &[[T; 3]],
    expected: &Expected,
    kernel: Kernel,
    run_time_dispatch: RunTimeDispatch,
) -> Outcome {
    let points = &scene.points;
    let mut grid = build_grid(points, scene.radius, kernel);
    grid.set_run_time_dispatch(run_time_dispatch);
    assert_eq!(grid.len(), points.len(), "{what}: len()");
    assert_eq!(grid.is_empty(), points.is_empty(), "{what}: is_empty()");
    assert_eq!(grid.table().is_none(), points.is_empty(), "{what}: table()");

    let mut lists = NeighborLists::default();
    grid.neighbor_lists(&mut lists).unwrap();
    check_lists(&format!("{what}: neighbor_lists"), &lists, &expected.lists);
    check_excludes_self(&format!("{what}: neighbor_lists"), &lists);
    assert!(
        lists.distances_squared().is_none(),
        "{what}: distances were not requested"
    );

    let mut lists_d = NeighborLists::default();
    grid.neighbor_lists_with_distances(&mut lists_d).unwrap();
    let label = format!("{what}: neighbor_lists_with_distances");
    check_lists(&label, &lists_d, &expected.lists);
    check_list_distances(&label, &lists_d, points, points);

    let mut pairs = PairList::default();
    grid.pairs(&mut pairs).unwrap();
    check_pairs(&format!("{what}: pairs"), pairs.pairs(), &expected.pairs);
    assert_eq!(pairs.len(), expected.pairs.len(), "{what}: PairList::len");
    assert_eq!(
        pairs.is_empty(),
        expected.pairs.is_empty(),
        "{what}: PairList::is_empty"
    );
    assert!(
        pairs.distances_squared().is_none(),
        "{what}: pair distances were not requested"
    );

    let mut pairs_d = PairList::default();
    grid.pairs_with_distances(&mut pairs_d).unwrap();
    let label = format!("{what}: pairs_with_distances");
    assert_same_seq(&label, pairs_d.pairs(), pairs.pairs());
    let pair_d2 = pairs_d
        .distances_squared()
        .expect("pair distances were requested");
    check_pair_distances(&label, pairs_d.pairs(), pair_d2, points);

    // Taking the outputs hands over exactly what the list held and leaves it empty; the
    // next search refills it the same.
    let mut taken_list = pairs_d.clone();
    let (taken, taken_d2) = taken_list.take_pairs();
    assert_same_seq(&format!("{what}: take_pairs"), &taken, pairs.pairs());
    assert_eq!(
        taken_d2.as_deref(),
        Some(pair_d2),
        "{what}: take_pairs distances"
    );
    assert!(taken_list.is_empty() && taken_list.distances_squared().is_none());
    grid.pairs_with_distances(&mut taken_list).unwrap();
    assert_same_seq(
        &format!("{what}: pairs after take"),
        taken_list.pairs(),
        &taken,
    );
    let (offsets, indices) = (lists_d.offsets().to_vec(), lists_d.indices().to_vec());
    let distances = lists_d.distances_squared().map(<[_]>::to_vec);
    let taken = lists_d.take();
    assert_eq!(
        (&taken.offsets, &taken.indices, &taken.distances_squared),
        (&offsets, &indices, &distances),
        "{what}: NeighborLists::take"
    );
    assert!(lists_d.is_empty() && lists_d.indices().is_empty());
    assert!(lists_d.distances_squared().is_none());
    grid.neighbor_lists_with_distances(&mut lists_d).unwrap();
    assert_eq!(lists_d.indices(), &indices[..], "{what}: lists after take");
    assert!(lists.clone().take().distances_squared.is_none());

    // The pairs as `u64` and `u32` columns: the same pairs in the same order, with a fresh
    // scratch and with one that held other outputs (left without pairs).
    let (mut i_wide, mut j_wide) = (vec![7u64; 3], Vec::new());
    grid.pair_columns(&mut PairList::default(), &mut i_wide, &mut j_wide)
        .unwrap();
    let wide: Vec<[u32; 2]> = i_wide
        .iter()
        .zip(&j_wide)
        .map(|(&i, &j)| [u32::try_from(i).unwrap(), u32::try_from(j).unwrap()])
        .collect();
    assert_same_seq(&format!("{what}: pair_columns (u64)"), &wide, pairs.pairs());
    let (mut i_narrow, mut j_narrow) = (Vec::<u32>::new(), Vec::new());
    grid.pair_columns(&mut taken_list, &mut i_narrow, &mut j_narrow)
        .unwrap();
    assert!(
        taken_list.is_empty(),
        "{what}: pair_columns leaves its scratch without pairs"
    );
    let narrow: Vec<[u32; 2]> = i_narrow
        .iter()
        .zip(&j_narrow)
        .map(|(&i, &j)| [i, j])
        .collect();
    assert_same_seq(
        &format!("{what}: pair_columns (u32)"),
        &narrow,
        pairs.pairs(),
    );

    // The sequential visitor walks the pairs in the order of `pairs`.
    let mut visited = Vec::new();
    grid.for_each_pair(|i, j, d2| visited.push((i, j, d2.bits())));
    let as_pairs: Vec<[u32; 2]> = visited.iter().map(|&(i, j, _)| [i, j]).collect();
    assert_same_seq(
        &format!("{what}: for_each_pair order"),
        &as_pairs,
        pairs.pairs(),
    );
    let bits: Vec<u64> = pair_d2.iter().map(|d| d.bits()).collect();
    let visited_bits: Vec<u64> = visited.iter().map(|v| v.2).collect();
    assert_same_seq(
        &format!("{what}: for_each_pair distances"),
        &visited_bits,
        &bits,
    );

    // The parallel visitor reports the same set in any order.
    let collected = Mutex::new(Vec::new());
    grid.par_for_each_pair(|i, j, d2| collected.lock().unwrap().push((i, j, d2)));
    let mut collected = collected.into_inner().unwrap();
    let par_pairs: Vec<[u32; 2]> = collected.iter().map(|&(i, j, _)| [i, j]).collect();
    check_pairs(
        &format!("{what}: par_for_each_pair"),
        &par_pairs,
        &expected.pairs,
    );
    collected.sort_unstable_by_key(|&(i, j, _)| (i, j));
    let (par_pairs, par_d2): (Vec<[u32; 2]>, Vec<T>) =
        collected.iter().map(|&(i, j, d)| ([i, j], d)).unzip();
    check_pair_distances(
        &format!("{what}: par_for_each_pair"),
        &par_pairs,
        &par_d2,
        points,
    );

    // Arbitrary query points: AoS without distances, SoA with distances, one at a time.
    let mut query_lists = NeighborLists::default();
    grid.query(queries, &mut query_lists)
        .expect("finite queries");
    check_lists(&format!("{what}: query"), &query_lists, &expected.queries);
    let (x, y, z) = split(queries);
    let mut query_lists_d = NeighborLists::default();
    grid.query_points_with_distances(Points::Soa(&x, &y, &z), &mut query_lists_d)
        .expect("finite queries");
    let label = format!("{what}: query_points (SoA, with distances)");
    check_lists(&label, &query_lists_d, &expected.queries);
    check_list_distances(&label, &query_lists_d, queries, points);
    let (mut indices, mut distances, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    for (k, &q) in queries.iter().enumerate() {
        grid.query_point_with_distances(q, &mut indices, &mut distances)
            .expect("a finite query");
        assert_same_seq(
            &format!("{what}: query_point {k} at {q:?}"),
            &indices,
            &expected.queries[k],
        );
        grid.query_point(q, &mut plain).expect("a finite query");
        assert_same_seq(
            &format!("{what}: query_point {k} without distances"),
            &plain,
            &indices,
        );
        for (&j, &d2) in indices.iter().zip(&distances) {
            assert_eq!(
                d2.bits(),
                T::distance_squared(q, points[j as usize]).bits(),
                "{what}: query_point {k}, distance to {j}"
            );
        }
    }

    // One set searching another grid, both directions.
    let second_grid = build_grid(second, scene.radius, kernel);
    let mut cross = NeighborLists::default();
    grid.lists_for_with_distances(&second_grid, &mut cross)
        .unwrap();
    let label = format!("{what}: lists_for (second set searching the scene)");
    check_lists(&label, &cross, &expected.cross);
    check_list_distances(&label, &cross, second, points);
    let mut back = NeighborLists::default();
    second_grid.lists_for(&grid, &mut back).unwrap();
    check_lists(
        &format!("{what}: lists_for (scene searching the second set)"),
        &back,
        &expected.back,
    );

    Outcome {
        order: grid.order().to_vec(),
        table: grid.table().copied(),
        lists: Csr::of(&lists),
        lists_with_distances: Csr::of(&lists_d),
        pairs: pairs.pairs().to_vec(),
        pair_distances: bits,
        visited,
        queries: Csr::of(&query_lists),
        queries_with_distances: Csr::of(&query_lists_d),
        cross: Csr::of(&cross),
        back: Csr::of(&back),
    }
}

/// Panics unless two paths produced identical results (bit for bit, same order).
fn assert_same_outcome(what: &str, got: &Outcome, reference: &Outcome) {
    assert_same_seq(&format!("{what}: order()"), &got.order, &reference.order);
    assert_eq!(got.table, reference.table, "{what}: cell table");
    got.lists
        .assert_same(&format!("{what}: neighbor_lists"), &reference.lists);
    got.lists_with_distances.assert_same(
        &format!("{what}: neighbor_lists_with_distances"),
        &reference.lists_with_distances,
    );
    assert_same_seq(&format!("{what}: pairs"), &got.pairs, &reference.pairs);
    assert_same_seq(
        &format!("{what}: pair distances"),
        &got.pair_distances,
        &reference.pair_distances,
    );
    assert_same_seq(
        &format!("{what}: for_each_pair"),
        &got.visited,
        &reference.visited,
    );
    got.queries
        .assert_same(&format!("{what}: query"), &reference.queries);
    got.queries_with_distances.assert_same(
        &format!("{what}: query_points"),
        &reference.queries_with_distances,
    );
    got.cross
        .assert_same(&format!("{what}: lists_for"), &reference.cross);
    got.back
        .assert_same(&format!("{what}: lists_for (back)"), &reference.back);
}

/// Separate coordinate slices of AoS points.
fn split<T: Real>(points: &[[T; 3]]) -> (Vec<T>, Vec<T>, Vec<T>) {
    (
        points.iter().map(|p| p[0]).collect(),
        points.iter().map(|p| p[1]).collect(),
        points.iter().map(|p| p[2]).collect(),
    )
}

/// The bounding box in `f64`, or a box of one radius around the origin when empty.
fn bounding_box<T: Real>(points: &[[T; 3]], radius: f64) -> ([f64; 3], [f64; 3]) {
    if points.is_empty() {
        return ([-radius; 3], [radius; 3]);
    }
    let mut min = [f64::INFINITY; 3];
    let mut max = [f64::NEG_INFINITY; 3];
    for p in points {
        for a in 0..3 {
            min[a] = min[a].min(p[a].to_f64());
            max[a] = max[a].max(p[a].to_f64());
        }
    }
    (min, max)
}

/// Query points for a scene: inside its box, copies of its points, points exactly one
/// radius from its points, points on and just outside the faces of its box at fractions of
/// a cell, far away, and (for `query` only) absurdly far away. Returns `(queries, second)`:
/// the second set leaves out the far points, so that a grid can be built over it.
fn query_sets<T: TestReal>(seed: u64, scene: &Scene<T>) -> (Vec<[T; 3]>, Vec<[T; 3]>) {
    let mut rng = SplitMix64::new(seed ^ 0x0DDB_A11C_0FFE_E000);
    let points = &scene.points;
    let n = points.len();
    let radius = scene.radius;
    let r = radius.to_f64();
    let cell = r * (1.0 + CELL_MARGIN);
    let (min, max) = bounding_box(points, r);
    let mut near: Vec<[T; 3]> = to_real(&uniform_box(&mut rng, 40, min, max));
    if n > 0 {
        for _ in 0..16 {
            near.push(points[rng.below(n)]);
        }
        for _ in 0..24 {
            let mut q = points[rng.below(n)];
            let axis = rng.below(3);
            q[axis] = if rng.below(2) == 0 {
                q[axis] + radius
            } else {
                q[axis] - radius
            };
            near.push(q);
        }
        for axis in 0..3 {
            for low in [true, false] {
                for f in [0.0, 0.5, 0.99999, 1.0, 1.000_01, 1.5, 2.0, 2.5, 3.0] {
                    let mut q = points[rng.below(n)].map(T::to_f64);
                    q[axis] = if low {
                        min[axis] - f * cell
                    } else {
                        max[axis] + f * cell
                    };
                    near.push(q.map(T::from_f64));
                }
            }
        }
        // The corners of the box, exactly and one radius out along the diagonal.
        for corner in 0..8 {
            let c: [f64; 3] =
                std::array::from_fn(|a| if corner >> a & 1 == 0 { min[a] } else { max[a] });
            near.push(c.map(T::from_f64));
            let out: [f64; 3] = std::array::from_fn(|a| {
                if corner >> a & 1 == 0 {
                    c[a] - r
                } else {
                    c[a] + r
                }
            });
            near.push(out.map(T::from_f64));
        }
    }
    let mut queries = near.clone();
    let centre: [f64; 3] = std::array::from_fn(|a| (min[a] + max[a]) / 2.0);
    let extent = (0..3).map(|a| max[a] - min[a]).fold(r, f64::max);
    let extreme = if T::NAME == "f32" { 1e30 } else { 1e300 };
    for axis in 0..3 {
        for sign in [-1.0, 1.0] {
            for distance in [1e3 * extent, extreme] {
                let mut q = centre;
                q[axis] += sign * distance;
                queries.push(q.map(T::from_f64));
            }
        }
    }
    queries.push([T::from_f64(extreme); 3]);
    queries.push([T::from_f64(-extreme); 3]);
    (queries, near)
}

/// Checks every path over `scene` against the oracle, kernels and thread counts against
/// each other, then reordering and the SoA build. Returns the cell table of the build.
fn check_scene<T: TestReal>(seed: u64, scene: &Scene<T>) -> Option<CellTable> {
    let (queries, second) = query_sets(seed, scene);
    let points = &scene.points;
    let radius = scene.radius;
    let expected = Expected {
        lists: oracle_self(points, radius),
        pairs: oracle_pairs(points, radius),
        queries: oracle_cross(&queries, points, radius),
        cross: oracle_cross(&second, points, radius),
        back: oracle_cross(points, &second, radius),
    };
    let mut reference: Option<(String, Outcome)> = None;
    // The SIMD kernel in its widest run-time build (AVX-512 or AVX2, which the library,
    // compiled for the default target, runs where the CPU has them), in the AVX2 build, as
    // compiled, and the scalar reference.
    let paths = [
        (Kernel::Simd, RunTimeDispatch::Widest),
        (Kernel::Simd, RunTimeDispatch::UpToAvx2),
        (Kernel::Simd, RunTimeDispatch::Off),
        (Kernel::Scalar, RunTimeDispatch::Widest),
    ];
    for (kernel, dispatch) in paths {
        for threads in THREAD_COUNTS {
            let what = format!(
                "{} [{kernel:?} kernel, run-time dispatch {dispatch:?}, {threads} threads]",
                scene.name
            );
            let outcome = in_pool(threads, || {
                run_path(&what, scene, &queries, &second, &expected, kernel, dispatch)
            });
            match &reference {
                None => reference = Some((what, outcome)),
                Some((first, reference)) => {
                    assert_same_outcome(&format!("{what} vs {first}"), &outcome, reference);
                }
            }
        }
    }
    in_pool(2, || {
        check_reorder(scene);
        check_soa(scene);
    });
    reference.and_then(|(_, outcome)| outcome.table)
}

/// `order()` is a permutation; applying it gives the points in cell order; rebuilding on the
/// reordered points gives the identity and the same pairs once mapped back.
fn check_reorder<T: TestReal>(scene: &Scene<T>) {
    let what = format!("{}: reorder", scene.name);
    let points = &scene.points;
    let n = points.len();
    let grid = build_grid(points, scene.radius, Kernel::Simd);
    let order = grid.order().to_vec();
    let mut seen = vec![false; n];
    for &i in &order {
        assert!(
            (i as usize) < n && !seen[i as usize],
            "{what}: order() is not a permutation"
        );
        seen[i as usize] = true;
    }
    assert_eq!(order.len(), n, "{what}: order() length");

    let mut reordered = points.clone();
    apply_order(&order, &mut reordered);
    let sorted = grid.sorted_points();
    for (k, p) in reordered.iter().enumerate() {
        let q = points[order[k] as usize];
        assert_eq!(p.map(T::bits), q.map(T::bits), "{what}: apply_order at {k}");
        assert_eq!(
            sorted.point(k).map(T::bits),
            q.map(T::bits),
            "{what}: sorted_points at {k}"
        );
    }
    if let Some(table) = grid.table() {
        let buckets: Vec<u32> = reordered
            .iter()
            .map(|&p| table.bucket(table.coords(p)))
            .collect();
        assert!(
            buckets.is_sorted(),
            "{what}: the reordered points are not in cell order"
        );
    }
    let mut again = points.clone();
    let mut scratch = Vec::new();
    apply_order_with(&order, &mut again, &mut scratch);
    assert!(
        again == reordered,
        "{what}: apply_order_with differs from apply_order"
    );
    let mut gathered = points.clone();
    gather_into(&order, points, &mut gathered);
    assert!(
        gathered == reordered,
        "{what}: gather_into differs from apply_order"
    );

    let regrid = build_grid(&reordered, scene.radius, Kernel::Simd);
    assert_eq!(regrid.table(), grid.table(), "{what}: the table changed");
    let identity: Vec<u32> = (0..n as u32).collect();
    assert_same_seq(
        &format!("{what}: order() after reordering"),
        regrid.order(),
        &identity,
    );

    let mut pairs = PairList::default();
    grid.pairs(&mut pairs).unwrap();
    let mut repairs = PairList::default();
    regrid.pairs(&mut repairs).unwrap();
    let mut mapped: Vec<[u32; 2]> = repairs
        .pairs()
        .iter()
        .map(|&[a, b]| {
            let (i, j) = (order[a as usize], order[b as usize]);
            [i.min(j), i.max(j)]
        })
        .collect();
    mapped.sort_unstable();
    let mut original = pairs.pairs().to_vec();
    original.sort_unstable();
    assert_same_seq(&format!("{what}: pairs mapped back"), &mapped, &original);

    let mut lists = NeighborLists::default();
    grid.neighbor_lists(&mut lists).unwrap();
    let mut relists = NeighborLists::default();
    regrid.neighbor_lists(&mut relists).unwrap();
    // Points in cell order take the path that skips the check and sort of each list.
    let reordered_lists = oracle_self(&reordered, scene.radius);
    check_lists(
        &format!("{what}: lists in cell order"),
        &relists,
        &reordered_lists,
    );
    let mut relists_d = NeighborLists::default();
    regrid
        .neighbor_lists_with_distances(&mut relists_d)
        .unwrap();
    let label = format!("{what}: lists with distances in cell order");
    check_lists(&label, &relists_d, &reordered_lists);
    check_list_distances(&label, &relists_d, &reordered, &reordered);
    for k in 0..n {
        let mut mapped: Vec<u32> = relists
            .neighbors(k)
            .iter()
            .map(|&m| order[m as usize])
            .collect();
        mapped.sort_unstable();
        assert_same_seq(
            &format!("{what}: list {k} mapped back"),
            &mapped,
            lists.neighbors(order[k] as usize),
        );
    }
    assert_eq!(
        regrid.in_cell_order(),
        n > 0,
        "{what}: rebuilt in cell order"
    );

    // Adopting the cell order without a rebuild gives what the rebuild on the reordered
    // points gives, and returns the permutation that reorders the caller's arrays.
    let mut adopted = build_grid(points, scene.radius, Kernel::Simd);
    let returned = adopted.adopt_cell_order().to_vec();
    assert_same_seq(&format!("{what}: adopt returns order()"), &returned, &order);
    assert_same_seq(
        &format!("{what}: order() adopted"),
        adopted.order(),
        &identity,
    );
    assert_eq!(
        adopted.in_cell_order(),
        n > 0,
        "{what}: adopted in cell order"
    );
    let mut adopted_lists = NeighborLists::default();
    adopted.neighbor_lists(&mut adopted_lists).unwrap();
    Csr::of(&adopted_lists).assert_same(&format!("{what}: adopted lists"), &Csr::of(&relists));
    adopted
        .neighbor_lists_with_distances(&mut adopted_lists)
        .unwrap();
    Csr::of(&adopted_lists).assert_same(
        &format!("{what}: adopted lists with distances"),
        &Csr::of(&relists_d),
    );
    assert!(
        adopted_lists.distances_squared() == relists_d.distances_squared(),
        "{what}: adopted distances"
    );
    let mut adopted_pairs = PairList::default();
    adopted.pairs(&mut adopted_pairs).unwrap();
    assert_same_seq(
        &format!("{what}: adopted pairs"),
        adopted_pairs.pairs(),
        repairs.pairs(),
    );
    let mut found = Vec::new();
    if let Some(&probe) = reordered.get(n / 2) {
        adopted
            .query_point(probe, &mut found)
            .expect("a finite query point");
        assert_same_seq(
            &format!("{what}: adopted query"),
            &found,
            &reordered_lists[n / 2]
                .iter()
                .copied()
                .chain([(n / 2) as u32])
                .collect::<std::collections::BTreeSet<u32>>()
                .into_iter()
                .collect::<Vec<u32>>(),
        );
    }
    // A second call returns the identity; a rebuild on the points in their first order
    // forgets the adoption.
    assert_same_seq(
        &format!("{what}: adopted twice"),
        adopted.adopt_cell_order(),
        &identity,
    );
    adopted.build(points).unwrap();
    assert_same_seq(&format!("{what}: order() rebuilt"), adopted.order(), &order);
    assert_eq!(
        adopted.in_cell_order(),
        grid.in_cell_order(),
        "{what}: rebuilt after adopting"
    );
    adopted.neighbor_lists(&mut adopted_lists).unwrap();
    Csr::of(&adopted_lists).assert_same(&format!("{what}: rebuilt lists"), &Csr::of(&lists));
}

/// `build_soa` gives exactly what `build` gives.
fn check_soa<T: TestReal>(scene: &Scene<T>) {
    let what = format!("{}: build_soa", scene.name);
    let aos = build_grid(&scene.points, scene.radius, Kernel::Simd);
    let (x, y, z) = split(&scene.points);
    let mut soa = Grid::new(scene.radius).unwrap();
    soa.build_soa(&x, &y, &z).unwrap();
    assert_same_seq(&format!("{what}: order()"), soa.order(), aos.order());
    assert_eq!(soa.table(), aos.table(), "{what}: table");
    let (mut a, mut b) = (NeighborLists::default(), NeighborLists::default());
    aos.neighbor_lists_with_distances(&mut a).unwrap();
    soa.neighbor_lists_with_distances(&mut b).unwrap();
    Csr::of(&b).assert_same(&format!("{what}: neighbor lists"), &Csr::of(&a));
    let (mut pa, mut pb) = (PairList::default(), PairList::default());
    aos.pairs(&mut pa).unwrap();
    soa.pairs(&mut pb).unwrap();
    assert_same_seq(&format!("{what}: pairs"), pb.pairs(), pa.pairs());
}

for_both_precisions!(
    tiny_sets,
    uniform_cube_scenes,
    gaussian_clusters_use_a_hashed_table,
    lattice_with_spacing_r,
    lattice_with_shells_at_r,
    points_on_cell_borders,
    pairs_at_exactly_r,
    negative_coordinates,
    coordinates_around_one_million,
    identical_points,
    all_points_in_one_cell,
    points_on_lines,
    points_on_planes,
    far_outlier,
    thin_sheet,
    sparse_thin_sheet,
    large_set_sampled_oracle,
    buffers_reused_across_scenes,
    lists_in_cell_order_reuse_buffers,
    empty_grid_clears_reused_lists,
    radius_whose_square_underflows,
    radius_whose_square_is_subnormal,
    radius_whose_square_overflows,
    radius_at_the_limits_of_a_normal_square,
    subnormal_radius,
);

/// Every size from 0 to 20 (below, at and above one 8-lane block), densely packed.
fn tiny_sets<T: TestReal>() {
    for seed in 0..3 {
        let mut rng = SplitMix64::new(seed);
        for n in 0..=20 {
            let points = uniform_box(&mut rng, n, [-1.0; 3], [1.0; 3]);
            check_scene(
                seed,
                &Scene::<T>::new(format!("tiny set, seed {seed}"), &points, 1.0),
            );
        }
    }
}

/// Uniform cubes with about 30 neighbours per point.
fn uniform_cube_scenes<T: TestReal>() {
    for (seed, n) in [(1, 2), (2, 3), (3, 100), (4, 1000), (5, 4000), (6, 2500)] {
        let mut rng = SplitMix64::new(seed);
        let points = uniform_cube(&mut rng, n, [0.5, 0.25, -0.125], 1.0, 30.0);
        let table = check_scene(
            seed,
            &Scene::<T>::new(format!("uniform cube, seed {seed}"), &points, 1.0),
        );
        assert!(
            table.is_some_and(|t| t.dense),
            "a uniform cube should use a dense table"
        );
    }
}

/// Clusters of very different sizes in a big box: the table must be hashed.
fn gaussian_clusters_use_a_hashed_table<T: TestReal>() {
    for seed in [11, 12] {
        let mut rng = SplitMix64::new(seed);
        let clusters = [
            (1500, 1.5),
            (800, 4.0),
            (400, 25.0),
            (200, 0.05),
            (60, 200.0),
            (1, 0.0),
            (1, 0.0),
        ];
        let mut points = gaussian_clusters(&mut rng, &clusters, 2e4);
        shuffle(&mut rng, &mut points);
        let table = check_scene(
            seed,
            &Scene::<T>::new(format!("Gaussian clusters, seed {seed}"), &points, 1.0),
        )
        .expect("a table");
        assert!(
            !table.dense,
            "clusters in a box of 2e4 radii must use a hashed table: {table:?}"
        );
    }
}

/// A lattice with spacing exactly r (a power of two): every axis neighbour is at exactly r.
fn lattice_with_spacing_r<T: TestReal>() {
    for (seed, r) in [(21, 0.5), (22, 2.0), (23, 1.0)] {
        let mut rng = SplitMix64::new(seed);
        let mut points = lattice([12, 11, 10], r, [-5.0 * r, 3.0 * r, -7.0 * r]);
        shuffle(&mut rng, &mut points);
        let scene = Scene::<T>::new(format!("lattice with spacing r = {r}"), &points, r);
        // Axis neighbours only: diagonals are at r * sqrt(2) > r.
        let axis_pairs = 11 * 11 * 10 + 12 * 10 * 10 + 12 * 11 * 9;
        assert_eq!(
            oracle_pairs(&scene.points, scene.radius).len(),
            axis_pairs,
            "the oracle must include the pairs at exactly r"
        );
        check_scene(seed, &scene);
    }
}

/// A lattice with spacing r / 2: shells at exactly r along the axes, with many cells.
fn lattice_with_shells_at_r<T: TestReal>() {
    let mut rng = SplitMix64::new(31);
    let mut points = lattice([14, 13, 12], 0.5, [-3.0, -2.5, 0.0]);
    shuffle(&mut rng, &mut points);
    check_scene(
        31,
        &Scene::<T>::new("lattice with spacing r / 2", &points, 1.0),
    );
}

/// Points placed exactly where cells start (`(k + LATTICE_SHIFT) * edge`), and the same
/// points moved by exactly r along x.
fn points_on_cell_borders<T: TestReal>() {
    let r = 0.25;
    let mut rng = SplitMix64::new(41);
    let points = hhg_testkit::points_on_cell_borders(&mut rng, 1500, r, 12);
    check_scene(41, &Scene::<T>::new("points on cell borders", &points, r));
}

/// Exactly representable pairs at distance exactly r along each axis and diagonals, plus
/// pairs one ulp inside and outside; around the origin, 1e6 and (for f64) 1e12.
fn pairs_at_exactly_r<T: TestReal>() {
    // Offsets in units of 1/8: a^2 + b^2 + c^2 = 100 (r = 10/8) and 81 (r = 9/8).
    let shells: [(f64, &[[i32; 3]]); 2] = [
        (
            10.0 / 8.0,
            &[
                [10, 0, 0],
                [0, 10, 0],
                [0, 0, 10],
                [6, 8, 0],
                [0, 6, 8],
                [8, 0, 6],
                [-6, 8, 0],
                [6, 0, -8],
            ],
        ),
        (
            9.0 / 8.0,
            &[
                [9, 0, 0],
                [0, 9, 0],
                [0, 0, 9],
                [1, 4, 8],
                [4, 4, 7],
                [-8, 1, 4],
                [7, -4, 4],
                [4, 7, -4],
            ],
        ),
    ];
    let mut centres = vec![0.0, 1e6, -1e6];
    if T::NAME == "f64" {
        centres.extend([1e12, -1e12]);
    }
    for (c, &centre) in centres.iter().enumerate() {
        for (s, &(r, offsets)) in shells.iter().enumerate() {
            let seed = 50 + 10 * c as u64 + s as u64;
            let mut rng = SplitMix64::new(seed);
            let radius = T::from_f64(r);
            let mut points: Vec<[T; 3]> = Vec::new();
            let mut exact = Vec::new();
            for _ in 0..300 {
                // Multiples of 1/8 stay exact near 1e6 in f32 and near 1e12 in f64.
                let base: [T; 3] = std::array::from_fn(|_| {
                    T::from_f64(centre + (rng.below(1024) as f64 - 512.0) / 8.0)
                });
                let offset = offsets[rng.below(offsets.len())];
                let partner: [T; 3] =
                    std::array::from_fn(|a| base[a] + T::from_f64(f64::from(offset[a]) / 8.0));
                exact.push([points.len() as u32, points.len() as u32 + 1]);
                points.push(base);
                points.push(partner);
                // One ulp further out and one ulp further in along a non-zero axis.
                let axis = (0..3).find(|&a| offset[a] != 0).unwrap();
                let mut out = partner;
                let mut inside = partner;
                if offset[axis] > 0 {
                    out[axis] = partner[axis].next_up();
                    inside[axis] = partner[axis].next_down();
                } else {
                    out[axis] = partner[axis].next_down();
                    inside[axis] = partner[axis].next_up();
                }
                points.push(if rng.below(2) == 0 { out } else { inside });
            }
            for &[i, j] in &exact {
                let (p, q) = (points[i as usize], points[j as usize]);
                assert_eq!(
                    T::distance_squared(p, q).bits(),
                    (radius * radius).bits(),
                    "the constructed pair {p:?}, {q:?} is not at exactly r"
                );
            }
            let scene = Scene {
                name: format!("pairs at exactly r = {r} around {centre:e} ({})", T::NAME),
                points,
                radius,
            };
            let pairs = oracle_pairs(&scene.points, radius);
            assert!(exact.iter().all(|p| pairs.binary_search(p).is_ok()));
            check_scene(seed, &scene);
        }
    }
}

/// A cube entirely at negative coordinates.
fn negative_coordinates<T: TestReal>() {
    let mut rng = SplitMix64::new(61);
    let points = uniform_cube(&mut rng, 3000, [-1000.5, -250.25, -3.0], 1.0, 30.0);
    check_scene(61, &Scene::<T>::new("negative coordinates", &points, 1.0));
}

/// Cubes around +1e6 and -1e6 (a hashed table), one around 1e6 alone (dense), and for f64
/// one around 1e12.
fn coordinates_around_one_million<T: TestReal>() {
    let mut rng = SplitMix64::new(71);
    let r = 0.5;
    let mut points = uniform_cube(&mut rng, 1500, [1e6, 1e6, 1e6], r, 30.0);
    points.extend(uniform_cube(&mut rng, 1500, [-1e6, -1e6, -1e6], r, 30.0));
    shuffle(&mut rng, &mut points);
    let table = check_scene(71, &Scene::<T>::new("cubes around +-1e6", &points, r)).unwrap();
    assert!(!table.dense, "{table:?}");
    let points = uniform_cube(&mut rng, 2000, [-1e6, 1e6, -1e6], r, 30.0);
    check_scene(72, &Scene::<T>::new("a cube around 1e6", &points, r));
    if T::NAME == "f64" {
        let points = uniform_cube(&mut rng, 2000, [1e12, -1e12, 1e12], 1.0, 30.0);
        check_scene(73, &Scene::<T>::new("a cube around 1e12", &points, 1.0));
    }
}

/// All points identical: every pair is a neighbour pair at distance zero.
fn identical_points<T: TestReal>() {
    for n in [2, 9, 17, 300] {
        let points = vec![[1.5, -2.25, 1e3]; n];
        let scene = Scene::<T>::new("identical points", &points, 1.0);
        assert_eq!(
            oracle_pairs(&scene.points, scene.radius).len(),
            n * (n - 1) / 2
        );
        check_scene(81, &scene);
    }
}

/// All points inside one cell.
fn all_points_in_one_cell<T: TestReal>() {
    let mut rng = SplitMix64::new(91);
    let points = uniform_box(&mut rng, 400, [10.0; 3], [10.3; 3]);
    check_scene(91, &Scene::<T>::new("all points in one cell", &points, 1.0));
}

/// Points on lines (degenerate boxes along two axes, and a diagonal line).
fn points_on_lines<T: TestReal>() {
    let mut rng = SplitMix64::new(101);
    let along_x = uniform_box(&mut rng, 3000, [-100.0, 2.0, 3.0], [100.0, 2.0, 3.0]);
    check_scene(101, &Scene::<T>::new("a line along x", &along_x, 1.0));
    let along_z = uniform_box(&mut rng, 2000, [0.0, 0.0, -60.0], [0.0, 0.0, 60.0]);
    check_scene(102, &Scene::<T>::new("a line along z", &along_z, 1.0));
    let diagonal: Vec<[f64; 3]> = (0..2000)
        .map(|_| {
            let t = rng.range(-50.0, 50.0);
            [t, -t, 0.5 * t]
        })
        .collect();
    check_scene(103, &Scene::<T>::new("a diagonal line", &diagonal, 1.0));
}

/// Points on planes (a degenerate box along one axis).
fn points_on_planes<T: TestReal>() {
    let mut rng = SplitMix64::new(111);
    let z_plane = uniform_box(&mut rng, 3000, [-9.0, -9.0, 5.0], [9.0, 9.0, 5.0]);
    check_scene(111, &Scene::<T>::new("a plane z = 5", &z_plane, 1.0));
    let x_plane = uniform_box(&mut rng, 2000, [-1.0, -7.0, -7.0], [-1.0, 7.0, 7.0]);
    check_scene(112, &Scene::<T>::new("a plane x = -1", &x_plane, 1.0));
}

/// One point 1e9 away from a cube: the search works and the table stays small.
fn far_outlier<T: TestReal>() {
    for (seed, axis, sign) in [(121, 0, 1.0), (122, 2, -1.0)] {
        let mut rng = SplitMix64::new(seed);
        let mut points = uniform_cube(&mut rng, 2000, [0.0; 3], 1.0, 30.0);
        let mut outlier = [0.0; 3];
        outlier[axis] = sign * 1e9;
        points.insert(rng.below(points.len()), outlier);
        let n = points.len();
        let table = check_scene(
            seed,
            &Scene::<T>::new(format!("a far outlier along axis {axis}"), &points, 1.0),
        )
        .unwrap();
        assert!(
            table.buckets() < 64 * n + 4096,
            "the table has {} buckets for {n} points: {table:?}",
            table.buckets()
        );
    }
}

/// A 1024:1 sheet thinner than one cell, with about 30 neighbours per point.
fn thin_sheet<T: TestReal>() {
    let mut rng = SplitMix64::new(131);
    let side = 24.0;
    let points = uniform_box(
        &mut rng,
        4000,
        [0.0, -side, 0.0],
        [side, 0.0, side / 1024.0],
    );
    check_scene(131, &Scene::<T>::new("a 1024:1 sheet", &points, 1.0));
}

/// A 1024:1 sheet one cell thick and 1024 cells wide: sparse, hashed.
fn sparse_thin_sheet<T: TestReal>() {
    let mut rng = SplitMix64::new(141);
    let points = uniform_box(&mut rng, 4000, [0.0, 0.0, 0.0], [1.0, 1024.0, 1024.0]);
    let table = check_scene(141, &Scene::<T>::new("a sparse 1024:1 sheet", &points, 1.0)).unwrap();
    assert!(!table.dense, "{table:?}");
}

/// 100 000 points (several sort parts, parallel prefix sums): lists and pairs agree with
/// each other exactly, sampled lists and queries agree with brute force, and every path
/// gives identical results.
fn large_set_sampled_oracle<T: TestReal>() {
    let mut rng = SplitMix64::new(151);
    let n = 100_000;
    let points: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, n, [3.0, -2.0, 1.0], 1.0, 10.0));
    let radius = T::from_f64(1.0);
    let queries: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 300, [3.0, -2.0, 1.0], 1.0, 0.02));
    let samples: Vec<usize> = (0..300).map(|_| rng.below(n)).collect();
    let mut reference: Option<(String, Outcome)> = None;
    for (kernel, threads) in [
        (Kernel::Simd, 1),
        (Kernel::Simd, 2),
        (Kernel::Simd, 16),
        (Kernel::Scalar, 2),
    ] {
        let what = format!(
            "{n} uniform points ({}) [{kernel:?} kernel, {threads} threads]",
            T::NAME
        );
        let outcome = in_pool(threads, || {
            let grid = build_grid(&points, radius, kernel);
            let mut lists = NeighborLists::default();
            grid.neighbor_lists(&mut lists).unwrap();
            let mut pairs = PairList::default();
            grid.pairs(&mut pairs).unwrap();
            let mut query_lists = NeighborLists::default();
            grid.query(&queries, &mut query_lists).unwrap();
            let outcome = Outcome {
                order: grid.order().to_vec(),
                table: grid.table().copied(),
                lists: Csr::of(&lists),
                lists_with_distances: Csr::default(),
                pairs: pairs.pairs().to_vec(),
                pair_distances: Vec::new(),
                visited: Vec::new(),
                queries: Csr::of(&query_lists),
                queries_with_distances: Csr::default(),
                cross: Csr::default(),
                back: Csr::default(),
            };
            if reference.is_none() {
                // The lists must be exactly the pairs, seen from both ends.
                let mut from_pairs = vec![Vec::new(); n];
                for &[i, j] in pairs.pairs() {
                    from_pairs[i as usize].push(j);
                    from_pairs[j as usize].push(i);
                }
                from_pairs.iter_mut().for_each(|l| l.sort_unstable());
                check_lists(&format!("{what}: lists vs pairs"), &lists, &from_pairs);
                check_pairs(&format!("{what}: pairs vs lists"), pairs.pairs(), &{
                    let mut all = pairs.pairs().to_vec();
                    all.sort_unstable();
                    all
                });
                for &i in &samples {
                    let want: Vec<u32> = (0..n)
                        .filter(|&j| j != i && within(points[i], points[j], radius))
                        .map(|j| j as u32)
                        .collect();
                    assert_same_seq(
                        &format!("{what}: sampled list {i}"),
                        lists.neighbors(i),
                        &want,
                    );
                }
                check_lists(
                    &format!("{what}: query"),
                    &query_lists,
                    &oracle_cross(&queries, &points, radius),
                );
                assert!(
                    outcome.table.unwrap().buckets() > 1 << 16,
                    "the scene should exercise the parallel prefix sum"
                );
            }
            outcome
        });
        match &reference {
            None => reference = Some((what, outcome)),
            Some((first, reference)) => {
                assert_same_outcome(&format!("{what} vs {first}"), &outcome, reference)
            }
        }
    }
}

/// Points given in cell order take the pass that copies each unit's lists into place as
/// soon as its start is known, into the room the lists kept from earlier calls. One set of
/// lists is reused while the output starts empty, grows past its room (a sixteenth of slack),
/// shrinks, and alternates with input in random order; on 1, 2 and 16 threads. The last
/// sizes span more units than a pass on 1 or 2 threads has buffer slots, so units wait for
/// their slot, also while the output grows; their lists are checked against the general
/// pass (itself checked against the oracle above) instead of the oracle, to keep it quick.
/// Each scene is built a second time in cell order, so the build copies the points into its
/// columns while it hashes them, then in random order, where that copy must be replaced;
/// every third scene by the scalar kernel.
fn lists_in_cell_order_reuse_buffers<T: TestReal>() {
    let mut rng = SplitMix64::new(173);
    let radius = T::from_f64(1.0);
    // Each size spans several work units; 12000 then 12300 grows by less than the slack.
    let sizes = [9000, 3000, 12000, 12300, 5000, 40000, 3000, 40000];
    let oracle_sizes = 12300;
    let mut grid = Grid::new(radius).unwrap();
    // Each scene: the points in random order, the same in cell order, and their lists.
    type OrderedScene<T> = (Vec<[T; 3]>, Vec<[T; 3]>, Vec<Vec<u32>>);
    let scenes: Vec<OrderedScene<T>> = sizes
        .iter()
        .map(|&n| {
            let random: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, n, [0.5; 3], 1.0, 30.0));
            grid.build(&random).unwrap();
            let mut ordered = random.clone();
            apply_order(grid.order(), &mut ordered);
            let expected = if n <= oracle_sizes {
                oracle_self(&ordered, radius)
            } else {
                // The general pass's lists of the random order, renumbered by the order.
                let mut lists = NeighborLists::default();
                grid.neighbor_lists(&mut lists).unwrap();
                let mut sorted_position = vec![0u32; n];
                for (k, &i) in grid.order().iter().enumerate() {
                    sorted_position[i as usize] = k as u32;
                }
                grid.order()
                    .iter()
                    .map(|&i| {
                        let mut list: Vec<u32> = lists
                            .neighbors(i as usize)
                            .iter()
                            .map(|&j| sorted_position[j as usize])
                            .collect();
                        list.sort_unstable();
                        list
                    })
                    .collect()
            };
            (random, ordered, expected)
        })
        .collect();
    for threads in THREAD_COUNTS {
        let mut lists = NeighborLists::default();
        for (k, (random, ordered, expected)) in scenes.iter().enumerate() {
            let what = format!(
                "lists in cell order ({}, {threads} threads, n = {})",
                T::NAME,
                ordered.len()
            );
            in_pool(threads, || {
                // Every third scene hashes (and copies the columns) by the scalar kernel.
                grid.set_kernel(if k % 3 == 2 {
                    Kernel::Scalar
                } else {
                    Kernel::Simd
                });
                grid.build(ordered).unwrap();
                assert!(
                    grid.order()
                        .iter()
                        .enumerate()
                        .all(|(k, &i)| k == i as usize),
                    "{what}: the points are not in cell order"
                );
                if k % 2 == 0 {
                    grid.neighbor_lists_with_distances(&mut lists).unwrap();
                    check_list_distances(&what, &lists, ordered, ordered);
                } else {
                    grid.neighbor_lists(&mut lists).unwrap();
                    assert!(
                        lists.distances_squared().is_none(),
                        "{what}: stale distances"
                    );
                }
                check_lists(&what, &lists, expected);
                // Built again from points in cell order (the same, moved by one cell edge on
                // every axis: the cells stay on their lattice, and no point of these seeds
                // crosses a border by rounding), the build copies them into its columns
                // while it hashes them; and now every unit finds its room.
                let edge = T::from_f64(1.0 + hhg_core::building_blocks::CELL_MARGIN);
                let moved: Vec<[T; 3]> = ordered.iter().map(|p| p.map(|v| v + edge)).collect();
                grid.build(&moved).unwrap();
                assert!(grid.in_cell_order(), "{what}: not in cell order when moved");
                let columns = grid.sorted_points();
                assert!(
                    (0..moved.len()).all(|k| columns.point(k) == moved[k]),
                    "{what}: columns copied while hashing differ from the points"
                );
                grid.neighbor_lists(&mut lists).unwrap();
                check_lists(&format!("{what}, again"), &lists, expected);
                // The same points in random order go through the general pass; the columns
                // copied while hashing them are replaced by the sorted ones.
                grid.build(random).unwrap();
                let columns = grid.sorted_points();
                assert!(
                    grid.order()
                        .iter()
                        .enumerate()
                        .all(|(k, &i)| columns.point(k) == random[i as usize]),
                    "{what}: the columns of random input are not in cell order"
                );
                let mut shuffled = NeighborLists::default();
                grid.neighbor_lists(&mut shuffled).unwrap();
                grid.neighbor_lists(&mut lists).unwrap();
                Csr::of(&lists).assert_same(&format!("{what}, random order"), &Csr::of(&shuffled));
            });
        }
    }
}

/// One grid, one set of lists and one pair list reused across scenes of different sizes and
/// tables (shrinking and growing): no stale data survives a rebuild.
fn buffers_reused_across_scenes<T: TestReal>() {
    let mut rng = SplitMix64::new(161);
    let scenes: Vec<Vec<[f64; 3]>> = vec![
        uniform_cube(&mut rng, 3000, [0.0; 3], 1.0, 30.0),
        uniform_box(&mut rng, 5, [0.0; 3], [1.0; 3]),
        gaussian_clusters(&mut rng, &[(1000, 0.5), (800, 5.0), (5, 0.0)], 1e4),
        uniform_cube(&mut rng, 300, [7.0; 3], 1.0, 60.0),
        uniform_box(&mut rng, 1000, [0.0, 0.0, 0.0], [300.0, 0.0, 0.0]),
        vec![[2.0, 2.0, 2.0]; 50],
        uniform_cube(&mut rng, 4000, [-3.0; 3], 1.0, 20.0),
        {
            let mut p = uniform_cube(&mut rng, 500, [0.0; 3], 1.0, 30.0);
            p.push([0.0, -1e9, 0.0]);
            p
        },
    ];
    let radius = T::from_f64(1.0);
    let mut grid = Grid::new(radius).unwrap();
    let mut lists = NeighborLists::default();
    let mut pairs = PairList::default();
    let mut queries = NeighborLists::default();
    for (k, scene) in scenes.iter().enumerate() {
        let points: Vec<[T; 3]> = to_real(scene);
        let what = format!(
            "reused buffers, scene {k} ({}, n = {})",
            T::NAME,
            points.len()
        );
        let probe: Vec<[T; 3]> = to_real(&uniform_box(&mut rng, 50 + 37 * k, [-5.0; 3], [10.0; 3]));
        in_pool(2, || {
            grid.build(&points).unwrap();
            if k % 2 == 0 {
                grid.neighbor_lists_with_distances(&mut lists).unwrap();
                check_list_distances(&what, &lists, &points, &points);
                grid.pairs_with_distances(&mut pairs).unwrap();
                check_pair_distances(
                    &what,
                    pairs.pairs(),
                    pairs.distances_squared().unwrap(),
                    &points,
                );
            } else {
                grid.neighbor_lists(&mut lists).unwrap();
                assert!(
                    lists.distances_squared().is_none(),
                    "{what}: stale distances"
                );
                grid.pairs(&mut pairs).unwrap();
                assert!(
                    pairs.distances_squared().is_none(),
                    "{what}: stale pair distances"
                );
            }
            check_lists(&what, &lists, &oracle_self(&points, radius));
            check_pairs(&what, pairs.pairs(), &oracle_pairs(&points, radius));
            grid.query(&probe, &mut queries).unwrap();
            check_lists(
                &format!("{what}: query"),
                &queries,
                &oracle_cross(&probe, &points, radius),
            );
        });
    }
}

/// A grid over no point, searched with lists that held results before, gives empty
/// lists: `offsets()[n] == indices().len()` and no stale entry or distance remains.
fn empty_grid_clears_reused_lists<T: TestReal>() {
    let mut rng = SplitMix64::new(171);
    let points: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 200, [0.0; 3], 1.0, 30.0));
    let radius = T::from_f64(1.0);
    let full = build_grid(&points, radius, Kernel::Simd);
    let empty = build_grid::<T>(&[], radius, Kernel::Simd);
    let never_built = Grid::<T>::new(radius).unwrap();
    let probe: Vec<[T; 3]> = to_real(&uniform_box(&mut rng, 7, [-1.0; 3], [1.0; 3]));
    for (name, grid) in [
        ("an empty build", &empty),
        ("a grid never built", &never_built),
    ] {
        let mut lists = NeighborLists::default();
        full.neighbor_lists_with_distances(&mut lists).unwrap();
        assert!(lists.total() > 0);
        grid.neighbor_lists(&mut lists).unwrap();
        check_lists(
            &format!("neighbor_lists of {name} ({}) after a search", T::NAME),
            &lists,
            &[],
        );
        assert!(lists.distances_squared().is_none());

        let mut lists = NeighborLists::default();
        full.query(&probe, &mut lists).unwrap();
        assert!(lists.total() > 0);
        grid.query(&probe, &mut lists).unwrap();
        check_lists(
            &format!("query of {name} ({}) after a search", T::NAME),
            &lists,
            &vec![Vec::new(); probe.len()],
        );

        let mut lists = NeighborLists::default();
        full.neighbor_lists_with_distances(&mut lists).unwrap();
        let searching = build_grid(&probe, radius, Kernel::Simd);
        grid.lists_for_with_distances(&searching, &mut lists)
            .unwrap();
        let what = format!("lists_for against {name} ({}) after a search", T::NAME);
        check_lists(&what, &lists, &vec![Vec::new(); probe.len()]);
        assert_eq!(
            lists.distances_squared().map(<[T]>::len),
            Some(0),
            "{what}: stale distances"
        );
    }
}

/// The engine either refuses a radius (`InvalidRadius`, unless `must_accept`) or finds
/// exactly the oracle's pairs for it.
fn check_extreme_radius<T: TestReal>(what: &str, radius: T, points: &[[T; 3]], must_accept: bool) {
    let expected_pairs = oracle_pairs(points, radius);
    let mut grid = match Grid::new(radius) {
        Err(Error::InvalidRadius { .. }) if !must_accept => return,
        Err(other) => panic!("{what}: Grid::new failed with {other:?}"),
        Ok(grid) => grid,
    };
    grid.build(points)
        .unwrap_or_else(|e| panic!("{what}: the radius was accepted but the build failed: {e}"));
    let mut pairs = PairList::default();
    grid.pairs(&mut pairs).unwrap();
    check_pairs(&format!("{what}: pairs"), pairs.pairs(), &expected_pairs);
    let mut lists = NeighborLists::default();
    grid.neighbor_lists(&mut lists).unwrap();
    check_lists(
        &format!("{what}: neighbor_lists"),
        &lists,
        &oracle_self(points, radius),
    );
    let mut queries = NeighborLists::default();
    grid.query(points, &mut queries).unwrap();
    check_lists(
        &format!("{what}: query"),
        &queries,
        &oracle_cross(points, points, radius),
    );
}

/// A radius whose square underflows to zero: `dx * dx` underflows too, so points
/// thousands of radii apart satisfy `d2 <= r * r` (0 <= 0).
fn radius_whose_square_underflows<T: TestReal>() {
    let (r, d) = if T::NAME == "f32" {
        (1e-30, 1e-26)
    } else {
        (1e-170, 1e-166)
    };
    let radius = T::from_f64(r);
    assert_eq!(radius * radius, T::from_f64(0.0));
    let zero = T::from_f64(0.0);
    let points: Vec<[T; 3]> = (0..12)
        .map(|k| [T::from_f64(k as f64 * d), zero, zero])
        .collect();
    assert_eq!(
        oracle_pairs(&points, radius).len(),
        66,
        "the oracle calls every pair a neighbour pair"
    );
    check_extreme_radius(
        &format!("r = {r:e} with r * r = 0 ({})", T::NAME),
        radius,
        &points,
        false,
    );
}

/// Pairs at the farthest distance along x that the formula accepts for radius `r`, each
/// placed just below a cell border so that a pair longer than one cell straddles two, and
/// a point pinning the box's minimum at x = 0.
fn farthest_pairs<T: TestReal>(r: f64) -> Vec<[T; 3]> {
    let radius = T::from_f64(r);
    let cell = r * (1.0 + CELL_MARGIN);
    let zero = T::from_f64(0.0);
    let mut points = vec![[zero, zero, T::from_f64(100.0 * r)]];
    for k in 0..8 {
        let p = [T::from_f64((4.0 * k as f64 + 0.99995) * cell), zero, zero];
        // The farthest partner by bisection on its x coordinate.
        let accepts = |x: f64| within(p, [T::from_f64(x), zero, zero], radius);
        let (mut lo, mut hi) = (p[0].to_f64() + 0.999_99 * r, p[0].to_f64() + 2.0 * r);
        assert!(accepts(lo) && !accepts(hi));
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if accepts(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let q = [T::from_f64(lo), zero, zero];
        assert!(within(p, q, radius) && !within(p, [q[0].next_up(), zero, zero], radius));
        points.push(p);
        points.push(q);
    }
    points
}

/// A radius whose square is subnormal: `d2` is rounded to a coarse absolute grid, so a
/// pair slightly farther than one cell passes the test, and it can straddle two cells.
fn radius_whose_square_is_subnormal<T: TestReal>() {
    let r = if T::NAME == "f32" { 1e-21 } else { 1e-160 };
    let radius = T::from_f64(r);
    assert!(radius * radius > T::from_f64(0.0) && !(radius * radius).to_f64().is_nan());
    let what = format!("r = {r:e} with a subnormal r * r ({})", T::NAME);
    check_extreme_radius(&what, radius, &farthest_pairs(r), false);
}

/// The smallest and largest radii whose square is still a normal number must be accepted
/// and searched exactly, including pairs at the farthest accepted distance.
fn radius_at_the_limits_of_a_normal_square<T: TestReal>() {
    let radii: [f64; 2] = if T::NAME == "f32" {
        [1.1e-19, 1.8e19]
    } else {
        [1.6e-154, 1.3e154]
    };
    for r in radii {
        let radius = T::from_f64(r);
        let r2 = radius * radius;
        assert!(r2.is_finite() && r2.to_f64() >= if T::NAME == "f32" { 1.2e-38 } else { 2.3e-308 });
        let what = format!("r = {r:e} with a normal r * r ({})", T::NAME);
        check_extreme_radius(&what, radius, &farthest_pairs(r), true);
        // Points far apart whose squared distance overflows are no pair.
        let zero = T::from_f64(0.0);
        let far = [
            [zero; 3],
            [T::from_f64(1e3 * r), zero, zero],
            [T::from_f64(2e3 * r), zero, zero],
        ];
        check_extreme_radius(&format!("{what}, far points"), radius, &far, true);
    }
}

/// A radius whose square overflows to infinity: every distance, even an infinite one,
/// passes `d2 <= r * r`.
fn radius_whose_square_overflows<T: TestReal>() {
    let (r, d) = if T::NAME == "f32" {
        (2e19, 1e21)
    } else {
        (1e155, 1e157)
    };
    let radius = T::from_f64(r);
    assert!(!(radius * radius).is_finite());
    let zero = T::from_f64(0.0);
    let points = [[zero; 3], [T::from_f64(d), zero, zero]];
    assert!(
        within(points[0], points[1], radius),
        "the oracle calls this a pair"
    );
    check_extreme_radius(
        &format!("r = {r:e} with r * r = inf ({})", T::NAME),
        radius,
        &points,
        false,
    );
}

/// A subnormal radius (its inverse overflows in `f64` for f64 inputs): refused as invalid, or
/// searched correctly; a single point or identical points cannot span too many cells.
fn subnormal_radius<T: TestReal>() {
    let r = if T::NAME == "f32" { 1e-42 } else { 1e-310 };
    let radius = T::from_f64(r);
    let zero = T::from_f64(0.0);
    let one = T::from_f64(1.0);
    let what = format!("subnormal radius {r:e} ({})", T::NAME);
    check_extreme_radius(&format!("{what}, one point"), radius, &[[zero; 3]], false);
    let identical = [[one, zero, zero]; 2];
    check_extreme_radius(
        &format!("{what}, two identical points"),
        radius,
        &identical,
        false,
    );
    let half = T::from_f64(r / 2.0);
    let close = [[zero; 3], [half, zero, zero]];
    check_extreme_radius(
        &format!("{what}, two points r / 2 apart"),
        radius,
        &close,
        false,
    );
}

/// The checks themselves reject wrong answers: a missing, an extra or a duplicated entry,
/// and a distance one ulp off.
#[test]
fn checks_reject_wrong_answers() {
    let mut rng = SplitMix64::new(181);
    let points: Vec<[f64; 3]> = uniform_cube(&mut rng, 300, [0.0; 3], 1.0, 30.0);
    let grid = build_grid(&points, 1.0, Kernel::Simd);
    let mut lists = NeighborLists::default();
    grid.neighbor_lists_with_distances(&mut lists).unwrap();
    let expected = oracle_self(&points, 1.0);
    check_lists("correct lists", &lists, &expected);
    let i = (0..points.len())
        .find(|&i| !expected[i].is_empty())
        .unwrap();
    let fails = |f: &dyn Fn()| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err();

    let mut missing = expected.clone();
    missing[i].pop();
    assert!(fails(&|| check_lists("missing", &lists, &missing)));
    let mut extra = expected.clone();
    extra[i].push(u32::MAX);
    assert!(fails(&|| check_lists("extra", &lists, &extra)));
    let mut moved = points.clone();
    let j = expected[i][0] as usize;
    moved[j][0] = moved[j][0].next_up();
    assert!(fails(&|| check_list_distances(
        "an ulp off",
        &lists,
        &moved,
        &moved
    )));

    let pairs = oracle_pairs(&points, 1.0);
    let mut duplicated = pairs.clone();
    duplicated.push(pairs[0]);
    assert!(fails(&|| check_pairs("duplicated", &duplicated, &pairs)));
    assert!(fails(&|| check_pairs("missing", &pairs[1..], &pairs)));
    let reversed: Vec<[u32; 2]> = pairs.iter().map(|&[i, j]| [j, i]).collect();
    assert!(fails(&|| check_pairs("reversed", &reversed, &pairs)));
}

/// The public helpers: `bounds` (over several parallel chunks), and `PointColumns` filled
/// from AoS and SoA input, growing and shrinking.
#[test]
fn bounds_and_point_columns() {
    let mut rng = SplitMix64::new(191);
    // 40_001 and 1001 points leave a tail after whole blocks of 24 (AoS) and 16 (SoA) in
    // their last chunk.
    for n in [40_001, 1001, 3] {
        let points: Vec<[f32; 3]> = to_real(&uniform_box(
            &mut rng,
            n,
            [-3.0, 2.0, -1e6],
            [5.0, 2.0, 1e6],
        ));
        let bounds = hhg_core::building_blocks::bounds(Points::Aos(&points))
            .unwrap()
            .unwrap();
        for a in 0..3 {
            let min = points
                .iter()
                .map(|p| p[a].to_f64())
                .fold(f64::INFINITY, f64::min);
            let max = points
                .iter()
                .map(|p| p[a].to_f64())
                .fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(
                (bounds.min[a], bounds.max[a]),
                (min, max),
                "n = {n}, axis {a}"
            );
        }
        let (x, y, z) = split(&points);
        assert_eq!(
            hhg_core::building_blocks::bounds(Points::Soa(&x, &y, &z)).unwrap(),
            Some(bounds)
        );
        // A NaN or infinity anywhere (a block's lanes, a chunk's tail, a later chunk) is
        // seen, and the first one is named.
        for index in [n - 1, n / 2, n / 3 + 1] {
            for (axis, bad) in (0..3).flat_map(|axis| {
                [f32::NAN, f32::INFINITY, f32::NEG_INFINITY].map(|bad| (axis, bad))
            }) {
                let mut broken = points.clone();
                broken[index][axis] = bad;
                let (x, y, z) = split(&broken);
                for result in [
                    hhg_core::building_blocks::bounds(Points::Aos(&broken)),
                    hhg_core::building_blocks::bounds(Points::Soa(&x, &y, &z)),
                ] {
                    assert!(
                        matches!(result, Err(hhg_core::Error::NonFiniteCoordinate { index: i, axis: a, .. }) if i == index && a == axis),
                        "n = {n}, {bad} at ({index}, {axis}): {result:?}"
                    );
                }
            }
        }

        let mut columns = PointColumns::default();
        columns.assign_aos(&points).unwrap();
        assert_eq!((columns.len(), columns.is_empty()), (n, false));
        assert!(columns.x() == &x[..] && columns.y() == &y[..] && columns.z() == &z[..]);
        let mut from_soa = PointColumns::default();
        from_soa.assign_soa(&x, &y, &z).unwrap();
        for k in 0..n {
            assert_eq!(columns.point(k), points[k]);
            assert_eq!(from_soa.point(k), points[k]);
        }
    }
    assert_eq!(
        hhg_core::building_blocks::bounds::<f64>(Points::Aos(&[])).unwrap(),
        None
    );
    let mut columns = PointColumns::<f64>::default();
    columns.assign_aos(&[]).unwrap();
    assert!(columns.is_empty() && columns.x().is_empty());
}

/// The pass for input in cell order under contention: 8 threads on however many cores, a
/// set of ~50 work units (more than the pass's 32 buffer slots), 24 passes in a row, half of
/// them with an output that must grow. Workers wait for each other's slots there; every pass
/// must end (a watchdog fails the test after two minutes instead of hanging) with the lists
/// of a pass on one thread, which never waits for another worker.
#[test]
fn lists_in_cell_order_under_contention() {
    let mut rng = SplitMix64::new(211);
    let random: Vec<[f32; 3]> = to_real(&uniform_cube(&mut rng, 100_000, [0.0; 3], 1.0, 20.0));
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut grid = Grid::new(1.0f32).unwrap();
        grid.build(&random).unwrap();
        let mut ordered = random;
        apply_order(grid.order(), &mut ordered);
        grid.build(&ordered).unwrap();
        assert!(grid.in_cell_order(), "the points are not in cell order");
        let mut reference = NeighborLists::default();
        in_pool(1, || grid.neighbor_lists(&mut reference)).unwrap();
        let expected = Csr::of(&reference);
        in_pool(8, || {
            for pass in 0..24 {
                // A fresh output grows past its empty room; a reused one has room.
                let mut fresh = NeighborLists::default();
                let mut reused = NeighborLists::default();
                grid.neighbor_lists(&mut reused).unwrap();
                let (lists, what) = if pass % 2 == 0 {
                    grid.neighbor_lists(&mut fresh).unwrap();
                    (&fresh, "a growing output")
                } else {
                    grid.neighbor_lists(&mut reused).unwrap();
                    (&reused, "a reused output")
                };
                Csr::of(lists).assert_same(&format!("pass {pass}, {what}, 8 threads"), &expected);
            }
        });
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the passes in cell order did not end within two minutes (a deadlock?)");
}
