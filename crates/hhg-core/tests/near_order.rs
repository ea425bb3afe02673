//! Differential tests of input nearly in cell order (moved after a reorder, Morton order,
//! partly sorted, cells in shuffled blocks) and of lists in cell order, against brute force.

use hhg_core::building_blocks::{
    LATTICE_SHIFT, bucket_occupancy, exception_count, max_exceptions, set_exceptions_share,
};
use hhg_core::reorder::apply_order;
use hhg_core::{
    Grid, Kernel, ListOrder, ListPass, NeighborLists, NeighborSearch, Real, RunTimeDispatch,
};
use hhg_testkit::{
    Csr, Scene, SplitMix64, THREAD_COUNTS, TestReal, check_list_distances, check_lists,
    for_both_precisions, gaussian_clusters, in_pool, lattice, oracle_cross, oracle_self, shuffle,
    to_real, uniform_box, uniform_cube,
};

/// The kernel and run-time build of every path the tests compare.
const PATHS: [(Kernel, RunTimeDispatch); 4] = [
    (Kernel::Simd, RunTimeDispatch::Widest),
    (Kernel::Simd, RunTimeDispatch::UpToAvx2),
    (Kernel::Simd, RunTimeDispatch::Off),
    (Kernel::Scalar, RunTimeDispatch::Widest),
];

/// `points` in the cell order of a grid of radius `radius` over them.
fn in_cell_order<T: Real>(points: &[[T; 3]], radius: T) -> Vec<[T; 3]> {
    let mut grid = Grid::new(radius).expect("a valid radius");
    grid.build(points).expect("valid points");
    let mut sorted = points.to_vec();
    apply_order(grid.order(), &mut sorted);
    sorted
}

/// `points` in cell order, then each coordinate moved by a uniform offset of up to `by`.
fn drifted(rng: &mut SplitMix64, points: &[[f64; 3]], radius: f64, by: f64) -> Vec<[f64; 3]> {
    in_cell_order(points, radius)
        .iter()
        .map(|p| p.map(|v| v + rng.range(-by, by)))
        .collect()
}

/// Interleaves the low 21 bits of three cell coordinates, x lowest.
fn morton(cell: [u64; 3]) -> u64 {
    let spread = |v: u64| (0..21).fold(0u64, |code, bit| code | ((v >> bit) & 1) << (3 * bit));
    spread(cell[0]) | spread(cell[1]) << 1 | spread(cell[2]) << 2
}

/// `points` in the Morton order of cells of edge `edge` counted from `origin` (not the
/// grid's cells, so a Morton cell may span several of them).
fn morton_ordered(points: &[[f64; 3]], origin: [f64; 3], edge: f64) -> Vec<[f64; 3]> {
    let mut keyed: Vec<(u64, [f64; 3])> = points
        .iter()
        .map(|&p| {
            let cell = std::array::from_fn(|a| ((p[a] - origin[a]) / edge).floor().max(0.0) as u64);
            (morton(cell), p)
        })
        .collect();
    keyed.sort_by_key(|&(code, _)| code);
    keyed.into_iter().map(|(_, p)| p).collect()
}

/// `points` in cell order, with the last `tail` of them shuffled among themselves.
fn partly_sorted(
    rng: &mut SplitMix64,
    points: &[[f64; 3]],
    radius: f64,
    tail: f64,
) -> Vec<[f64; 3]> {
    let mut sorted = in_cell_order(points, radius);
    let from = ((1.0 - tail) * sorted.len() as f64) as usize;
    shuffle(rng, &mut sorted[from..]);
    sorted
}

/// `points` in cell order, then `share` of them swapped in pairs with points anywhere: few
/// points out of place, far from their cells in the numbering.
fn swapped_far(
    rng: &mut SplitMix64,
    points: &[[f64; 3]],
    radius: f64,
    share: f64,
) -> Vec<[f64; 3]> {
    let mut sorted = in_cell_order(points, radius);
    let n = sorted.len();
    for _ in 0..(share * n as f64 / 2.0) as usize {
        let (i, j) = (rng.below(n), rng.below(n));
        sorted.swap(i, j);
    }
    sorted
}

/// `points` in cell order, cut into blocks of `block` points, the blocks shuffled: the
/// points of a cell stay mostly together, but a work unit's cells lie far apart.
fn blocks_shuffled(
    rng: &mut SplitMix64,
    points: &[[f64; 3]],
    radius: f64,
    block: usize,
) -> Vec<[f64; 3]> {
    let sorted = in_cell_order(points, radius);
    let mut blocks: Vec<&[[f64; 3]]> = sorted.chunks(block).collect();
    shuffle(rng, &mut blocks);
    blocks.concat()
}

/// The variants of one cloud nearly in cell order, each with its name.
fn variants(seed: u64, points: &[[f64; 3]], radius: f64) -> Vec<(String, Vec<[f64; 3]>)> {
    let mut rng = SplitMix64::new(seed);
    let mut origin = [f64::INFINITY; 3];
    for p in points {
        for a in 0..3 {
            origin[a] = origin[a].min(p[a]);
        }
    }
    vec![
        (
            "moved by 0.1 r".into(),
            drifted(&mut rng, points, radius, 0.1 * radius),
        ),
        (
            "moved by 0.005 r".into(),
            drifted(&mut rng, points, radius, 0.005 * radius),
        ),
        (
            "moved by 0.5 r".into(),
            drifted(&mut rng, points, radius, 0.5 * radius),
        ),
        (
            "Morton order of cells of r".into(),
            morton_ordered(points, origin, radius),
        ),
        (
            "Morton order of offset cells of 1.7 r".into(),
            morton_ordered(points, origin.map(|o| o - 0.3 * radius), 1.7 * radius),
        ),
        (
            "a third shuffled".into(),
            partly_sorted(&mut rng, points, radius, 0.33),
        ),
        (
            "a fiftieth shuffled".into(),
            partly_sorted(&mut rng, points, radius, 0.02),
        ),
        (
            "one in a hundred swapped far".into(),
            swapped_far(&mut rng, points, radius, 0.01),
        ),
        (
            "blocks of 37 shuffled".into(),
            blocks_shuffled(&mut rng, points, radius, 37),
        ),
    ]
}

/// Every list of `lists` follows `grid`'s cell order: the sorted positions of its entries
/// ascend.
fn assert_lists_in_cell_order<T: Real>(what: &str, lists: &NeighborLists<T>, grid: &Grid<T>) {
    let mut position = vec![0u32; grid.len()];
    for (k, &i) in grid.order().iter().enumerate() {
        position[i as usize] = k as u32;
    }
    for i in 0..lists.len() {
        let list = lists.neighbors(i);
        assert!(
            list.windows(2)
                .all(|w| position[w[0] as usize] < position[w[1] as usize]),
            "{what}: list {i} is not in cell order: {list:?}"
        );
    }
}

/// Every list sorted ascending, for comparing lists in cell order with the oracle.
fn sorted_copy<T: TestReal>(lists: &NeighborLists<T>) -> Vec<Vec<u32>> {
    (0..lists.len())
        .map(|i| {
            let mut list = lists.neighbors(i).to_vec();
            list.sort_unstable();
            list
        })
        .collect()
}

/// What one path computed, for comparing paths bit for bit.
#[derive(Debug, PartialEq)]
struct Outcome {
    lists: Csr,
    with_distances: Csr,
    queries: Csr,
    cross: Csr,
    back: Csr,
}

/// Checks every path's self lists (with and without distances), query lists and lists of a
/// second set against brute force, in both list orders, and that every path of one order
/// gives the same bits; returns the pass the scene took (with ascending lists first, then
/// in cell order), which must be `expect_pass` when that is given.
fn check_scene<T: TestReal>(scene: &Scene<T>, expect_pass: Option<[ListPass; 2]>) -> ListPass {
    let points = &scene.points;
    let radius = scene.radius;
    let expected = oracle_self(points, radius);
    let mut rng = SplitMix64::new(points.len() as u64);
    let second: Vec<[T; 3]> = to_real(&uniform_box(&mut rng, 300, [-2.0; 3], [12.0; 3]));
    let expected_cross = oracle_cross(&second, points, radius);
    let expected_back = oracle_cross(points, &second, radius);
    let mut pass = ListPass::Empty;
    for list_order in [ListOrder::Ascending, ListOrder::CellOrder] {
        let mut reference: Option<(String, Outcome)> = None;
        for (kernel, dispatch) in PATHS {
            for threads in THREAD_COUNTS {
                let what = format!(
                    "{} [{list_order:?}, {kernel:?}, {dispatch:?}, {threads} threads]",
                    scene.name
                );
                let outcome = in_pool(threads, || {
                    let mut grid = Grid::new(radius).expect("a valid radius");
                    grid.set_kernel(kernel);
                    grid.set_run_time_dispatch(dispatch);
                    grid.set_list_order(list_order);
                    grid.build(points).expect("valid points");
                    pass = grid.list_pass();
                    if let Some(expect_pass) = expect_pass {
                        let expect_pass =
                            expect_pass[usize::from(list_order != ListOrder::Ascending)];
                        assert_eq!(pass, expect_pass, "{what}: the list pass");
                    }
                    let mut second_grid = Grid::new(radius).expect("a valid radius");
                    second_grid.build(&second).expect("valid points");
                    let mut lists = NeighborLists::default();
                    let mut with_distances = NeighborLists::default();
                    let mut queries = NeighborLists::default();
                    let mut cross = NeighborLists::default();
                    let mut back = NeighborLists::default();
                    second_grid.set_list_order(list_order);
                    // Twice, so the second pass runs on reused buffers.
                    for _ in 0..2 {
                        grid.neighbor_lists(&mut lists).unwrap();
                        grid.neighbor_lists_with_distances(&mut with_distances)
                            .unwrap();
                        grid.query(&second, &mut queries).expect("finite queries");
                        grid.lists_for_with_distances(&second_grid, &mut cross)
                            .unwrap();
                        // The scene's points (in their order) searching the second set.
                        second_grid
                            .lists_for_with_distances(&grid, &mut back)
                            .unwrap();
                    }
                    if list_order == ListOrder::Ascending {
                        check_lists(&what, &lists, &expected);
                        check_lists(&what, &with_distances, &expected);
                        check_lists(&what, &queries, &expected_cross);
                        check_lists(&what, &cross, &expected_cross);
                        check_lists(&what, &back, &expected_back);
                    } else {
                        assert_eq!(sorted_copy(&lists), expected, "{what}: lists");
                        assert_eq!(sorted_copy(&with_distances), expected, "{what}: lists");
                        assert_eq!(sorted_copy(&queries), expected_cross, "{what}: queries");
                        assert_eq!(sorted_copy(&cross), expected_cross, "{what}: lists_for");
                        assert_eq!(sorted_copy(&back), expected_back, "{what}: back");
                        assert_lists_in_cell_order(&format!("{what}: back"), &back, &second_grid);
                        for (label, lists) in [
                            ("lists", &lists),
                            ("with distances", &with_distances),
                            ("queries", &queries),
                            ("lists_for", &cross),
                        ] {
                            assert_lists_in_cell_order(&format!("{what}: {label}"), lists, &grid);
                        }
                    }
                    check_list_distances(&what, &with_distances, points, points);
                    check_list_distances(&what, &cross, &second, points);
                    check_list_distances(&what, &back, points, &second);
                    Outcome {
                        lists: Csr::of(&lists),
                        with_distances: Csr::of(&with_distances),
                        queries: Csr::of(&queries),
                        cross: Csr::of(&cross),
                        back: Csr::of(&back),
                    }
                });
                match &reference {
                    None => reference = Some((what, outcome)),
                    Some((first, reference)) => {
                        assert!(outcome == *reference, "{what} differs from {first}")
                    }
                }
            }
        }
    }
    pass
}

/// Runs every variant of a cloud; with `expect_near`, the variants that keep cells together
/// must take the pass for input nearly in cell order.
fn check_variants<T: TestReal>(
    name: &str,
    seed: u64,
    points: &[[f64; 3]],
    radius: f64,
    expect_near: bool,
) {
    for (variant, moved) in variants(seed, points, radius) {
        let scene = Scene::<T>::new(format!("{name}, {variant}"), &moved, radius);
        // A step's move, or few points out of place far away, leaves few exceptions: with
        // ascending lists, the pass for cell order with exceptions. (A lattice's points lie
        // on cell borders: a step moves half of them out of their cells.)
        let few_exceptions = variant.contains("swapped far")
            || (expect_near && variant.contains("0.005 r") && !name.contains("lattice"));
        let expect = if few_exceptions {
            Some([ListPass::InCellOrderWithExceptions, ListPass::NearCellOrder])
        } else if variant.contains("0.005 r") {
            None
        } else {
            (expect_near && !variant.contains("0.5 r") && !variant.contains("shuffled"))
                .then_some([ListPass::NearCellOrder; 2])
        };
        check_scene(&scene, expect);
    }
}

/// Uniform points, ~30 neighbours each, in a dense table.
fn uniform_nearly_in_order<T: TestReal>() {
    for (seed, n) in [(1, 3000), (2, 700)] {
        let mut rng = SplitMix64::new(seed);
        let points = uniform_cube(&mut rng, n, [0.5, -3.0, 7.25], 1.0, 30.0);
        check_variants::<T>(
            &format!("uniform cube, seed {seed}"),
            seed,
            &points,
            1.0,
            true,
        );
    }
}

/// Clusters in a big box: a hashed table whose rows wrap around. (Two units of very uneven
/// buckets: either pass may be chosen.)
fn clusters_nearly_in_order<T: TestReal>() {
    let mut rng = SplitMix64::new(7);
    let clusters = [(1200, 1.5), (600, 4.0), (300, 0.05), (60, 80.0), (1, 0.0)];
    let points = gaussian_clusters(&mut rng, &clusters, 2e4);
    check_variants::<T>("Gaussian clusters", 7, &points, 1.0, false);
}

/// A lattice with spacing r: pairs at exactly r along the axes, points on cell borders (the
/// cells' corners lie at `(k + 1/16) * edge`).
fn lattice_nearly_in_order<T: TestReal>() {
    let on_borders = 0.5 * LATTICE_SHIFT;
    let points = lattice([13, 12, 11], 0.5, [-3.0, 2.0, -1.5].map(|c| c + on_borders));
    check_variants::<T>("lattice with spacing r", 9, &points, 0.5, true);
}

/// `points` in cell order, then the points at each index of `moved` put at the place of the
/// point `to` places after it (a cell further on, the point left at its index).
fn moved_ahead(points: &[[f64; 3]], radius: f64, moved: &[usize], to: usize) -> Vec<[f64; 3]> {
    let mut sorted = in_cell_order(points, radius);
    for &i in moved {
        sorted[i] = sorted[(i + to) % sorted.len()];
    }
    sorted
}

/// `points` in cell order, then `count` points spread over the set (never two in a row) each
/// put at the place of the point a quarter of the set before it (each one exception: its
/// cell comes before those around it, also in buckets of a few hundred points). The moved
/// points land in as many buckets as they leave, so the buckets' occupancy, and the budget
/// that follows it, barely moves.
fn moved_back(points: &[[f64; 3]], radius: f64, count: usize) -> Vec<[f64; 3]> {
    let sorted = in_cell_order(points, radius);
    let n = sorted.len();
    let skip = n / 4;
    assert!(2 * count <= n - skip, "moved points would be neighbours");
    let mut moved = sorted.clone();
    for k in 0..count {
        let i = skip + k * (n - skip) / count;
        moved[i] = sorted[i - skip];
    }
    moved
}

/// Points moved far ahead, two or more in a row, are exceptions themselves (the points up to
/// their cell stay kept, so the pass for cell order with exceptions is taken), and the pass
/// follows [`max_exceptions`]: taken with as many exceptions, not with one more. Dense
/// clusters get a larger budget than sparse points.
fn exceptions_do_not_cascade_and_follow_the_threshold<T: TestReal>() {
    let mut rng = SplitMix64::new(11);
    let n = 5000;
    let points = uniform_cube(&mut rng, n, [0.5, -3.0, 7.25], 1.0, 30.0);
    let with_exceptions = Some([ListPass::InCellOrderWithExceptions, ListPass::NearCellOrder]);
    for (name, moved, to) in [
        ("two in a row moved a slab ahead", vec![100, 101], n / 4),
        ("three in a row moved ahead", vec![900, 901, 902], 400),
        // Across the split's chunk border (every 2048 points) and at a chunk's end.
        ("two across a chunk border", vec![2047, 2048], 700),
        ("two at a chunk's end", vec![2046, 2047], 1500),
        (
            "pairs in several places",
            vec![10, 11, 3000, 3001, 4500, 4501],
            300,
        ),
    ] {
        let scene = Scene::<T>::new(
            format!("uniform cube, {name}"),
            &moved_ahead(&points, 1.0, &moved, to),
            1.0,
        );
        check_scene(&scene, with_exceptions);
    }
    // The budget follows the buckets' occupancy, the same in any order; on these sparse
    // points it is the smallest share (one in 12). Each grid is checked against its own
    // budget, on both sides of it.
    let mut grid = Grid::new(T::from_f64(1.0)).expect("a valid radius");
    grid.build(&to_real::<T>(&points)).expect("valid points");
    let max = max_exceptions(&grid);
    assert_eq!(max, n / 12, "the budget of sparse points");
    let mut passes = Vec::new();
    for count in [max - 1, max, max + 1, max + 2] {
        let moved = moved_back(&points, 1.0, count);
        let mut grid = Grid::new(T::from_f64(1.0)).expect("a valid radius");
        grid.build(&to_real::<T>(&moved)).expect("valid points");
        assert_eq!(exception_count(&grid), count, "points moved back");
        let own = max_exceptions(&grid);
        assert!(
            own.abs_diff(max) <= 1,
            "the budget moved to {own} from {max}"
        );
        let expect = if count <= own {
            ListPass::InCellOrderWithExceptions
        } else {
            ListPass::NearCellOrder
        };
        assert_eq!(
            grid.list_pass(),
            expect,
            "{count} exceptions of at most {own}"
        );
        passes.push((count.abs_diff(own), expect));
        let scene = Scene::<T>::new(format!("uniform cube, {count} exceptions"), &moved, 1.0);
        check_scene(&scene, Some([expect, ListPass::NearCellOrder]));
    }
    // The threshold itself was crossed: a count at its own budget took the pass, one just
    // past it did not.
    assert!(
        passes.contains(&(0, ListPass::InCellOrderWithExceptions)),
        "{passes:?}"
    );
    assert!(passes.contains(&(1, ListPass::NearCellOrder)), "{passes:?}");
    // Dense points (~200 in a point's bucket) take the pass with one exception in
    // ten, the largest share; a share set for the grid overrides it.
    let dense = uniform_cube(&mut rng, 2000, [0.0; 3], 1.0, 1000.0);
    let moved = moved_back(&dense, 1.0, 150);
    let mut grid = Grid::new(T::from_f64(1.0)).expect("a valid radius");
    grid.build(&to_real::<T>(&moved)).expect("valid points");
    let occupancy = bucket_occupancy(&grid);
    assert!(occupancy > 100.0, "dense points: {occupancy} in a bucket");
    assert_eq!(max_exceptions(&grid), 200, "the budget of dense points");
    assert_eq!(
        exception_count(&grid),
        150,
        "dense points moved to the front"
    );
    assert_eq!(grid.list_pass(), ListPass::InCellOrderWithExceptions);
    set_exceptions_share(&mut grid, 64);
    assert_eq!(max_exceptions(&grid), 2000 / 64);
    assert_ne!(grid.list_pass(), ListPass::InCellOrderWithExceptions);
    let scene = Scene::<T>::new("dense uniform cube, 150 exceptions", &moved[..], 1.0);
    check_scene(
        &scene,
        Some([ListPass::InCellOrderWithExceptions, ListPass::NearCellOrder]),
    );
}

/// Exceptions on cell borders, with neighbours at exactly the radius, next to each other
/// and several in one bucket (neighbours of each other), found by the pass for cell order
/// with exceptions as by brute force: a lattice of spacing r / 2 from the origin (every
/// other plane on a cell border, pairs two spacings apart at exactly r), in cell order,
/// then blocks of consecutive points swapped far (each block several exceptions of one
/// bucket).
fn exceptions_on_borders_and_at_exactly_r<T: TestReal>() {
    let radius = 1.0;
    let points = lattice([16, 16, 16], 0.5, [0.0; 3]);
    let mut swapped = in_cell_order(&points, radius);
    assert_eq!(swapped.len(), 4096);
    for (a, b, len) in [
        (40, 3000, 3),
        (700, 1900, 4),
        (2100, 2500, 2),
        (3500, 100, 3),
    ] {
        for k in 0..len {
            swapped.swap(a + k, b + k);
        }
    }
    {
        let (name, input) = ("blocks swapped far", swapped);
        let real: Vec<[T; 3]> = to_real(&input);
        let mut grid = Grid::new(T::from_f64(radius)).expect("a valid radius");
        grid.build(&real).expect("valid points");
        let exceptions = exception_count(&grid);
        assert!(
            (6..=max_exceptions(&grid)).contains(&exceptions),
            "{name}: {exceptions} exceptions of at most {}",
            max_exceptions(&grid)
        );
        let scene = Scene::<T>::new(format!("lattice on borders, {name}"), &input, radius);
        check_scene(&scene, None);
        assert_eq!(
            grid.list_pass(),
            ListPass::InCellOrderWithExceptions,
            "{name}"
        );
    }
}

/// Random order takes the general pass (where units hold a small part of each bucket's
/// points), cell order its own, Morton order the pass for input nearly in cell order.
fn passes_follow_the_order<T: TestReal>() {
    let mut rng = SplitMix64::new(3);
    let mut points = uniform_cube(&mut rng, 60_000, [0.0; 3], 1.0, 40.0);
    shuffle(&mut rng, &mut points);
    let mut grid = Grid::new(T::from_f64(1.0)).expect("a valid radius");
    grid.build(&to_real::<T>(&points)).expect("valid points");
    assert_eq!(grid.list_pass(), ListPass::General, "random order");
    let sorted = in_cell_order(&points, 1.0);
    grid.build(&to_real::<T>(&sorted)).expect("valid points");
    assert_eq!(grid.list_pass(), ListPass::InCellOrder, "cell order");
    let morton = morton_ordered(&points, [-20.0; 3], 1.3);
    grid.build(&to_real::<T>(&morton)).expect("valid points");
    assert_eq!(grid.list_pass(), ListPass::NearCellOrder, "Morton order");
    // Dense clusters among many sparse points: most points sit in full buckets, which random
    // order scatters over the units, although most buckets hold one point.
    let clusters = [(20_000, 2.0), (10_000, 0.7), (30_000, 300.0)];
    let mut clustered = gaussian_clusters(&mut rng, &clusters, 1e4);
    shuffle(&mut rng, &mut clustered);
    grid.build(&to_real::<T>(&clustered)).expect("valid points");
    assert_eq!(
        grid.list_pass(),
        ListPass::General,
        "clusters in random order"
    );
    grid.build(&to_real::<T>(&drifted(&mut rng, &clustered, 1.0, 0.1)))
        .expect("valid points");
    assert_eq!(
        grid.list_pass(),
        ListPass::NearCellOrder,
        "clusters moved by 0.1 r"
    );

    let small: Vec<[f64; 3]> = points[..2000].to_vec();
    let sorted = Scene::<T>::new("uniform cube, cell order", &in_cell_order(&small, 1.0), 1.0);
    assert_eq!(check_scene(&sorted, None), ListPass::InCellOrder);
    let empty = Scene::<T>::new("empty", &[], 1.0);
    assert_eq!(check_scene(&empty, None), ListPass::Empty);
}

/// Several point sets with an activation table, nearly in cell order, in both list orders:
/// the lists of every active pair of sets against brute force, the same for any thread
/// count.
fn several_sets_nearly_in_order<T: TestReal>() {
    let mut rng = SplitMix64::new(5);
    let fluid = uniform_cube(&mut rng, 2500, [0.0; 3], 1.0, 30.0);
    let fluid = drifted(&mut rng, &fluid, 1.0, 0.1);
    let walls = uniform_box(&mut rng, 800, [-7.0, -7.0, -7.0], [7.0, 7.0, -5.5]);
    let walls = morton_ordered(&walls, [-7.0; 3], 1.0);
    let (fluid, walls): (Vec<[T; 3]>, Vec<[T; 3]>) = (to_real(&fluid), to_real(&walls));
    let radius = T::from_f64(1.0);
    for list_order in [ListOrder::Ascending, ListOrder::CellOrder] {
        let mut reference: Option<Vec<Csr>> = None;
        for threads in THREAD_COUNTS {
            let outcome = in_pool(threads, || {
                let mut search = NeighborSearch::new(radius).expect("a valid radius");
                search.set_list_order(list_order);
                let f = search.add_dynamic_set(&fluid).expect("fluid");
                let w = search.add_static_set(&walls).expect("walls");
                for (a, b) in [(f, f), (f, w), (w, f)] {
                    search.set_active(a, b, true).expect("known sets");
                }
                assert_eq!(
                    search.grid(f).expect("the fluid").list_pass(),
                    ListPass::NearCellOrder,
                    "the moved fluid"
                );
                search.find_neighbors().expect("a search");
                let mut outcome = Vec::new();
                let sets = [(f, &fluid), (w, &walls)];
                for &(a, searching) in &sets {
                    for &(b, searched) in &sets {
                        let lists = search.neighbors(a, b);
                        if a == w && b == w {
                            assert!(lists.is_none(), "inactive pair of sets has lists");
                            continue;
                        }
                        let lists = lists.expect("an active pair of sets");
                        let expected = if a == b {
                            oracle_self(searching, radius)
                        } else {
                            oracle_cross(searching, searched, radius)
                        };
                        let what = format!("sets {a} -> {b}, {list_order:?}, {threads} threads");
                        if list_order == ListOrder::Ascending {
                            check_lists(&what, lists, &expected);
                        } else {
                            assert_eq!(sorted_copy(lists), expected, "{what}");
                            let grid = search.grid(b).expect("the searched set");
                            assert_lists_in_cell_order(&what, lists, grid);
                        }
                        outcome.push(Csr::of(lists));
                    }
                }
                outcome
            });
            match &reference {
                None => reference = Some(outcome),
                Some(reference) => assert!(outcome == *reference, "{threads} threads differ"),
            }
        }
    }
}

for_both_precisions!(
    uniform_nearly_in_order,
    clusters_nearly_in_order,
    lattice_nearly_in_order,
    passes_follow_the_order,
    exceptions_do_not_cascade_and_follow_the_threshold,
    exceptions_on_borders_and_at_exactly_r,
    several_sets_nearly_in_order,
);
