//! Memory tests: outputs past the memory there is fail with `Error::OutOfMemory` instead of
//! aborting (an allocator that refuses large requests stands in for a full machine), caps
//! on an output fail with `Error::OutputTooLarge` before it grows, and lists taken in chunks
//! are the whole lists.
//!
//! The tests of this binary run one at a time, because the refusing allocator is global:
//! while its limit is set it refuses the large requests of every thread of the process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use hhg_core::broad::{Aabb, BroadPhase, RadiusRule, VariableRadiusSearch};
use hhg_core::periodic::{PeriodicBox, PeriodicPairList, PeriodicSearch};
use hhg_core::plane::{Grid2, NeighborSearch2};
use hhg_core::{
    CoreScheme, Error, FixedRadiusScheme, Grid, ListOrder, NeighborLists, NeighborSearch, PairList,
};
use hhg_testkit::{SplitMix64, in_pool, oracle_self, shuffle, uniform_box};

/// Refuses every allocation or reallocation of more than [`LIMIT`] bytes.
struct RefusingAllocator;

/// The largest request granted; `usize::MAX` (no limit) but within a test.
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Held by each test for its whole run: the limit is global.
static ONE_TEST_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_TEST_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

// SAFETY: every call forwards to the system allocator, or returns null (a refused request,
// which the `GlobalAlloc` contract allows).
unsafe impl GlobalAlloc for RefusingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT.load(Ordering::Relaxed) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > LIMIT.load(Ordering::Relaxed) {
            return std::ptr::null_mut();
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: RefusingAllocator = RefusingAllocator;

/// Runs `body` with requests above `limit` bytes refused.
fn with_limit<R>(limit: usize, body: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            LIMIT.store(usize::MAX, Ordering::Relaxed);
        }
    }
    let _reset = Reset;
    LIMIT.store(limit, Ordering::Relaxed);
    body()
}

/// `n` points in a cube small against the radius: every point neighbours every other, so
/// the lists hold `n * (n - 1)` entries (the audit's 1M points in one cell, scaled down).
fn one_cell(n: usize, seed: u64) -> Vec<[f32; 3]> {
    let mut rng = SplitMix64::new(seed);
    uniform_box(&mut rng, n, [0.0; 3], [0.1; 3])
        .into_iter()
        .map(|p| p.map(|v| v as f32))
        .collect()
}

/// Points in cell order: the grid's own order applied.
fn in_cell_order(points: &[[f32; 3]], radius: f32) -> Vec<[f32; 3]> {
    let mut grid = Grid::new(radius).unwrap();
    grid.build(points).unwrap();
    grid.order().iter().map(|&i| points[i as usize]).collect()
}

fn is_memory_error(error: &Error) -> bool {
    matches!(error, Error::OutOfMemory { .. })
}

/// 3,000 points in one cell want 9M list entries (36 MB); with requests above 4 MB refused,
/// every list pass, the pairs and the pair-based searches fail with `OutOfMemory`, leave an
/// empty output, and succeed afterwards once the memory is back.
#[test]
fn outputs_past_memory_fail_instead_of_aborting() {
    let _one = one_test_at_a_time();
    let n = 3000;
    let random = one_cell(n, 1);
    let sorted = in_cell_order(&random, 1.0);
    let limit = 4 << 20;
    for (order, points) in [("random", &random), ("cell order", &sorted)] {
        for threads in [1, 2] {
            let what = format!("{order}, {threads} threads");
            let mut grid = Grid::new(1.0f32).unwrap();
            grid.build(points).unwrap();
            let mut lists = NeighborLists::default();
            let mut pairs = PairList::default();
            let failed = in_pool(threads, || {
                with_limit(limit, || {
                    (
                        grid.neighbor_lists(&mut lists),
                        grid.neighbor_lists_with_distances(&mut lists),
                        grid.pairs(&mut pairs),
                        grid.query(&points[..1000], &mut lists),
                    )
                })
            });
            for (call, result) in [
                ("lists", failed.0),
                ("lists with distances", failed.1),
                ("pairs", failed.2),
                ("query", failed.3),
            ] {
                let error = result.expect_err(&format!("{what}: {call} should fail"));
                assert!(is_memory_error(&error), "{what}: {call}: {error:?}");
                assert!(error.to_string().contains("out of memory"), "{error}");
            }
            assert_eq!((lists.len(), lists.total()), (0, 0), "{what}");
            assert!(pairs.is_empty(), "{what}");
            // The grid is unchanged: with the memory back, the same calls succeed.
            in_pool(threads, || grid.neighbor_lists(&mut lists)).unwrap();
            assert_eq!(lists.total(), n * (n - 1), "{what}");
            in_pool(threads, || grid.pairs(&mut pairs)).unwrap();
            assert_eq!(pairs.len(), n * (n - 1) / 2, "{what}");
        }
    }
    // Nearly in cell order: the cell order with a few swaps.
    let mut near = sorted.clone();
    for k in (0..n - 1).step_by(97) {
        near.swap(k, k + 1);
    }
    let mut grid = Grid::new(1.0f32).unwrap();
    grid.build(&near).unwrap();
    let mut lists = NeighborLists::default();
    let error = with_limit(limit, || grid.neighbor_lists(&mut lists)).unwrap_err();
    assert!(is_memory_error(&error), "{error:?}");
    // The pair-based searches, the periodic search and the searches over several sets.
    let radii = vec![0.5f32; n];
    let mut spheres = VariableRadiusSearch::new(RadiusRule::Max);
    spheres.build(&random, &radii).unwrap();
    let error = with_limit(limit, || spheres.neighbor_lists(&mut lists)).unwrap_err();
    assert!(is_memory_error(&error), "{error:?}");
    let mut periodic =
        PeriodicSearch::new(1.0f32, PeriodicBox::cubic([0.0; 3], [10.0; 3])).unwrap();
    periodic.build(&random).unwrap();
    let mut periodic_pairs = PeriodicPairList::default();
    let error = with_limit(limit, || periodic.pairs(&mut periodic_pairs)).unwrap_err();
    assert!(is_memory_error(&error), "{error:?}");
    assert!(periodic_pairs.is_empty());
    let error = with_limit(limit, || periodic.neighbor_lists(&mut lists)).unwrap_err();
    assert!(is_memory_error(&error), "{error:?}");
    let mut search = NeighborSearch::new(1.0f32).unwrap();
    let set = search.add_dynamic_set(&random).unwrap();
    search.set_active(set, set, true).unwrap();
    let error = with_limit(limit, || search.find_neighbors()).unwrap_err();
    assert!(is_memory_error(&error), "{error:?}");
    assert!(
        search.neighbors(set, set).is_none(),
        "failed lists count as searched"
    );
    search.find_neighbors().unwrap();
    assert_eq!(search.neighbors(set, set).unwrap().total(), n * (n - 1));
    let boxes: Vec<Aabb<f32>> = random
        .iter()
        .map(|&p| Aabb::new(p, p.map(|v| v + 0.2)))
        .collect();
    let mut broad = BroadPhase::new();
    broad.build(&boxes).unwrap();
    let mut broad_pairs = PairList::default();
    let error = with_limit(limit, || broad.pairs(&mut broad_pairs)).unwrap_err();
    assert!(is_memory_error(&error), "{error:?}");
}

/// A cap below the output fails with `OutputTooLarge` before the output grows past it, in
/// every pass and search; a cap at exactly the output's size passes.
#[test]
fn caps_fail_before_the_output_grows() {
    let _one = one_test_at_a_time();
    let mut rng = SplitMix64::new(7);
    let random: Vec<[f32; 3]> = uniform_box(&mut rng, 4000, [0.0; 3], [8.0; 3])
        .into_iter()
        .map(|p| p.map(|v| v as f32))
        .collect();
    let sorted = in_cell_order(&random, 1.0);
    let mut near = sorted.clone();
    for k in (0..near.len() - 1).step_by(53) {
        near.swap(k, k + 1);
    }
    for (order, points) in [
        ("random", &random),
        ("cell order", &sorted),
        ("near", &near),
    ] {
        let mut grid = Grid::new(1.0f32).unwrap();
        grid.build(points).unwrap();
        let mut lists = NeighborLists::default();
        grid.neighbor_lists(&mut lists).unwrap();
        let total = lists.total();
        assert!(total > 10_000, "{order}: {total}");
        for threads in [1, 2] {
            let what = format!("{order}, {threads} threads");
            let mut capped = NeighborLists::default();
            capped.set_max_entries(Some(total - 1));
            assert_eq!(capped.max_entries(), Some(total - 1));
            let error = in_pool(threads, || grid.neighbor_lists(&mut capped)).unwrap_err();
            assert!(
                matches!(error, Error::OutputTooLarge { cap, at_least, .. }
                    if cap == total - 1 && at_least > cap),
                "{what}: {error:?}"
            );
            assert_eq!((capped.len(), capped.total()), (0, 0), "{what}");
            // Nothing grew to the whole output: the cap stopped it first.
            assert!(
                capped.indices().len() < total,
                "{what}: the output grew past the cap"
            );
            capped.set_max_entries(Some(total));
            in_pool(threads, || grid.neighbor_lists(&mut capped)).unwrap();
            assert_eq!(capped.indices(), lists.indices(), "{what}");
            // A tiny cap fails early.
            capped.set_max_entries(Some(10));
            assert!(in_pool(threads, || grid.neighbor_lists(&mut capped)).is_err());
            let error = in_pool(threads, || grid.query(points, &mut capped)).unwrap_err();
            assert!(matches!(error, Error::OutputTooLarge { .. }), "{what}");
        }
        let mut pairs = PairList::default();
        pairs.set_max_pairs(Some(total / 2 - 1));
        assert!(matches!(
            grid.pairs(&mut pairs),
            Err(Error::OutputTooLarge { .. })
        ));
        assert!(pairs.is_empty());
        pairs.set_max_pairs(Some(total / 2));
        grid.pairs(&mut pairs).unwrap();
        assert_eq!(pairs.len(), total / 2);
        let mut scheme = CoreScheme::new(1.0f32).unwrap();
        scheme.build(points).unwrap();
        let mut lists = NeighborLists::default();
        lists.set_max_entries(Some(total - 1));
        assert!(scheme.neighbor_lists(&mut lists).is_err());
        lists.set_max_entries(Some(total));
        scheme.neighbor_lists(&mut lists).unwrap();
        assert_eq!(lists.total(), total);
    }
    let mut search = NeighborSearch::new(1.0f32).unwrap();
    search.set_max_entries(Some(100));
    assert_eq!(search.max_entries(), Some(100));
    let set = search.add_dynamic_set(&random).unwrap();
    search.set_active(set, set, true).unwrap();
    assert!(matches!(
        search.find_neighbors(),
        Err(Error::OutputTooLarge { .. })
    ));
    assert!(search.neighbors(set, set).is_none());
    search.set_max_entries(None);
    search.find_neighbors().unwrap();
    let mut periodic = PeriodicSearch::new(1.0f32, PeriodicBox::cubic([0.0; 3], [8.0; 3])).unwrap();
    periodic.build(&random).unwrap();
    let mut all = PeriodicPairList::default();
    periodic.pairs(&mut all).unwrap();
    let mut capped = PeriodicPairList::default();
    capped.set_max_pairs(Some(all.len() - 1));
    assert!(matches!(
        periodic.pairs(&mut capped),
        Err(Error::OutputTooLarge { .. })
    ));
    capped.set_max_pairs(Some(all.len()));
    periodic.pairs(&mut capped).unwrap();
    assert_eq!(capped.pairs(), all.pairs());
}

/// `n` plane points in a square small against the radius: every point neighbours every
/// other, as in [`one_cell`].
fn one_plane_cell(n: usize, seed: u64) -> Vec<[f32; 2]> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| [rng.range(0.0, 0.1) as f32, rng.range(0.0, 0.1) as f32])
        .collect()
}

/// The plane grid's outputs as the 3-D ones: 3,000 points in one cell want 9M list entries
/// (36 MB); with requests above 4 MB refused its lists, pairs and queries fail with
/// `OutOfMemory`, leave an empty output and a grid that then succeeds; a cap below the
/// output fails with `OutputTooLarge` before the output grows past it, a cap at the
/// output's size passes.
#[test]
fn plane_outputs_past_memory_or_caps_fail_instead_of_aborting() {
    let _one = one_test_at_a_time();
    let n = 3000;
    let random = one_plane_cell(n, 3);
    let mut grid = Grid2::new(1.0f32).unwrap();
    grid.build(&random).unwrap();
    let mut sorted_grid = Grid2::new(1.0f32).unwrap();
    let sorted: Vec<[f32; 2]> = grid.order().iter().map(|&i| random[i as usize]).collect();
    sorted_grid.build(&sorted).unwrap();
    let limit = 4 << 20;
    for (order, grid) in [("random", &grid), ("cell order", &sorted_grid)] {
        for threads in [1, 2] {
            let what = format!("plane, {order}, {threads} threads");
            let mut lists = NeighborLists::default();
            let mut pairs = PairList::default();
            let failed = in_pool(threads, || {
                with_limit(limit, || {
                    (
                        grid.neighbor_lists(&mut lists),
                        grid.pairs(&mut pairs),
                        grid.query(&random[..1000], &mut lists),
                        grid.neighbor_lists_with_distances(&mut lists),
                        grid.lists_for(grid, &mut lists),
                        grid.lists_for_with_distances(grid, &mut lists),
                    )
                })
            });
            for (call, result) in [
                ("lists", failed.0),
                ("pairs", failed.1),
                ("query", failed.2),
                ("lists with distances", failed.3),
                ("lists for another set", failed.4),
                ("lists for another set with distances", failed.5),
            ] {
                let error = result.expect_err(&format!("{what}: {call} should fail"));
                assert!(is_memory_error(&error), "{what}: {call}: {error:?}");
                assert!(error.to_string().contains("out of memory"), "{error}");
            }
            assert_eq!((lists.len(), lists.total()), (0, 0), "{what}");
            assert!(pairs.is_empty(), "{what}");
            // The grid is unchanged: with the memory back, the same calls succeed.
            in_pool(threads, || grid.neighbor_lists(&mut lists)).unwrap();
            assert_eq!(lists.total(), n * (n - 1), "{what}");
            in_pool(threads, || grid.pairs(&mut pairs)).unwrap();
            assert_eq!(pairs.len(), n * (n - 1) / 2, "{what}");
            in_pool(threads, || grid.query(&random[..1000], &mut lists)).unwrap();
            assert_eq!(lists.total(), 1000 * n, "{what}");
            in_pool(threads, || grid.lists_for_with_distances(grid, &mut lists)).unwrap();
            assert_eq!(lists.total(), n * n, "{what}");
        }
    }
    // The search over several sets: a failed search leaves the pair unsearched, then
    // succeeds with the memory back.
    let mut search = NeighborSearch2::new(1.0f32).unwrap();
    let set = search.add_dynamic_set(&random).unwrap();
    search.set_active(set, set, true).unwrap();
    for with_distances in [false, true] {
        search.set_with_distances(with_distances);
        let error = with_limit(limit, || search.find_neighbors()).unwrap_err();
        assert!(is_memory_error(&error), "{error:?}");
        assert!(
            search.neighbors(set, set).is_none(),
            "failed lists count as searched"
        );
        search.find_neighbors().unwrap();
        assert_eq!(search.neighbors(set, set).unwrap().total(), n * (n - 1));
    }
    // Caps, on points spread over many cells and work units.
    let mut rng = SplitMix64::new(8);
    let spread: Vec<[f32; 2]> = (0..20_000)
        .map(|_| [rng.range(0.0, 60.0) as f32, rng.range(-30.0, 30.0) as f32])
        .collect();
    let mut grid = Grid2::new(1.0f32).unwrap();
    grid.build(&spread).unwrap();
    let mut whole = NeighborLists::default();
    grid.neighbor_lists(&mut whole).unwrap();
    let total = whole.total();
    assert!(total > 100_000, "{total}");
    let mut queried = NeighborLists::default();
    grid.query(&spread[..5000], &mut queried).unwrap();
    // The query points are the set's first points: each finds itself too.
    let query_total = queried.total();
    assert!(query_total > 5000, "{query_total}");
    for threads in [1, 2] {
        let what = format!("plane caps, {threads} threads");
        let mut capped = NeighborLists::default();
        for (cap, call_total) in [(total, "lists"), (query_total, "query")] {
            capped.set_max_entries(Some(cap - 1));
            let error = in_pool(threads, || {
                if call_total == "lists" {
                    grid.neighbor_lists(&mut capped)
                } else {
                    grid.query(&spread[..5000], &mut capped)
                }
            })
            .unwrap_err();
            assert!(
                matches!(error, Error::OutputTooLarge { cap: c, at_least, .. }
                    if c == cap - 1 && at_least > c),
                "{what}: {call_total}: {error:?}"
            );
            assert_eq!((capped.len(), capped.total()), (0, 0), "{what}");
            assert!(
                capped.indices().len() < cap,
                "{what}: {call_total}: the output grew past the cap"
            );
        }
        capped.set_max_entries(Some(total));
        in_pool(threads, || grid.neighbor_lists(&mut capped)).unwrap();
        assert_eq!(capped.indices(), whole.indices(), "{what}");
        assert_eq!(capped.offsets(), whole.offsets(), "{what}");
        capped.set_max_entries(Some(query_total));
        in_pool(threads, || grid.query(&spread[..5000], &mut capped)).unwrap();
        assert_eq!(capped.indices(), queried.indices(), "{what}");
        // A tiny cap fails early.
        capped.set_max_entries(Some(10));
        let error = in_pool(threads, || grid.neighbor_lists(&mut capped)).unwrap_err();
        assert!(matches!(error, Error::OutputTooLarge { .. }), "{what}");
        let error = in_pool(threads, || grid.query(&spread, &mut capped)).unwrap_err();
        assert!(matches!(error, Error::OutputTooLarge { .. }), "{what}");
        let mut pairs = PairList::default();
        pairs.set_max_pairs(Some(total / 2 - 1));
        let error = in_pool(threads, || grid.pairs(&mut pairs)).unwrap_err();
        assert!(matches!(error, Error::OutputTooLarge { .. }), "{what}");
        assert!(pairs.is_empty(), "{what}");
        pairs.set_max_pairs(Some(total / 2));
        in_pool(threads, || grid.pairs(&mut pairs)).unwrap();
        assert_eq!(pairs.len(), total / 2, "{what}");
    }
    let mut search = NeighborSearch2::new(1.0f32).unwrap();
    search.set_max_entries(Some(100));
    assert_eq!(search.max_entries(), Some(100));
    let set = search.add_static_set(&spread).unwrap();
    search.set_active(set, set, true).unwrap();
    assert!(matches!(
        search.find_neighbors(),
        Err(Error::OutputTooLarge { cap: 100, .. })
    ));
    assert!(search.neighbors(set, set).is_none());
    search.set_max_entries(None);
    search.find_neighbors().unwrap();
    assert_eq!(search.neighbors(set, set).unwrap().total(), total);
}

/// The chunks of the lists, put back together, are the whole lists: in every pass, with
/// and without distances, in cell order too, for chunk sizes from one unit to all points,
/// with 1 and 2 threads; against the brute-force oracle.
#[test]
fn lists_in_chunks_are_the_whole_lists() {
    let _one = one_test_at_a_time();
    let mut rng = SplitMix64::new(11);
    let mut random: Vec<[f32; 3]> = uniform_box(&mut rng, 3000, [-3.0; 3], [5.0; 3])
        .into_iter()
        .map(|p| p.map(|v| v as f32))
        .collect();
    shuffle(&mut rng, &mut random);
    let sorted = in_cell_order(&random, 0.7);
    let mut near = sorted.clone();
    for k in (0..near.len() - 1).step_by(31) {
        near.swap(k, k + 1);
    }
    for (order, points) in [
        ("random", &random),
        ("cell order", &sorted),
        ("near", &near),
    ] {
        let expected = oracle_self(points, 0.7f32);
        let mut grid = Grid::new(0.7f32).unwrap();
        grid.build(points).unwrap();
        let mut whole = NeighborLists::default();
        grid.neighbor_lists_with_distances(&mut whole).unwrap();
        for list_order in [ListOrder::Ascending, ListOrder::CellOrder] {
            grid.set_list_order(list_order);
            for chunk_points in [1, 100, 1000, usize::MAX] {
                for threads in [1, 2] {
                    let what = format!("{order}, {list_order:?}, chunks of {chunk_points}");
                    let mut seen = vec![None::<Vec<u32>>; points.len()];
                    let mut next_first = 0;
                    let mut lists = NeighborLists::default();
                    in_pool(threads, || {
                        grid.neighbor_lists_with_distances_in_chunks(
                            chunk_points,
                            &mut lists,
                            |chunk| {
                                assert_eq!(chunk.first(), next_first, "{what}");
                                next_first += chunk.points().len();
                                assert_eq!(chunk.lists().len(), chunk.points().len());
                                for (k, &i) in chunk.points().iter().enumerate() {
                                    let list = chunk.lists().neighbors(k);
                                    let d = chunk.lists().neighbor_distances_squared(k).unwrap();
                                    assert_eq!(d.len(), list.len());
                                    let mut got = list.to_vec();
                                    if list_order == ListOrder::Ascending {
                                        assert!(list.is_sorted(), "{what}: list {i}");
                                        assert_eq!(list, whole.neighbors(i as usize), "{what}");
                                        let expected_d =
                                            whole.neighbor_distances_squared(i as usize).unwrap();
                                        assert_eq!(d, expected_d, "{what}: distances of {i}");
                                    }
                                    got.sort_unstable();
                                    assert!(seen[i as usize].is_none(), "{what}: {i} twice");
                                    seen[i as usize] = Some(got);
                                }
                            },
                        )
                    })
                    .unwrap();
                    assert_eq!(next_first, points.len(), "{what}");
                    for (i, list) in seen.into_iter().enumerate() {
                        assert_eq!(list.as_ref(), Some(&expected[i]), "{what}: point {i}");
                    }
                }
            }
        }
        grid.set_list_order(ListOrder::Ascending);
        // A cap applies to each chunk: small chunks pass a cap that the whole lists fail.
        let mut lists = NeighborLists::default();
        let mut largest = 0;
        grid.neighbor_lists_in_chunks(100, &mut lists, |chunk| {
            largest = largest.max(chunk.lists().total());
        })
        .unwrap();
        assert!(largest < whole.total(), "{order}: one chunk");
        lists.set_max_entries(Some(largest));
        assert!(grid.neighbor_lists(&mut lists).is_err());
        let mut entries = 0;
        grid.neighbor_lists_in_chunks(100, &mut lists, |chunk| {
            entries += chunk.lists().total();
        })
        .unwrap();
        assert_eq!(entries, whole.total());
        lists.set_max_entries(Some(largest - 1));
        assert!(
            grid.neighbor_lists_in_chunks(100, &mut lists, |_| {})
                .is_err()
        );
    }
    // No point: no chunk.
    let mut grid = Grid::new(1.0f32).unwrap();
    grid.build(&[]).unwrap();
    let mut lists = NeighborLists::default();
    grid.neighbor_lists_in_chunks(10, &mut lists, |_| panic!("a chunk of no point"))
        .unwrap();
}
