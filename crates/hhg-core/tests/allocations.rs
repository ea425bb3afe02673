//! Allocation tests: once warmed up, a rebuild with the same point count plus neighbour lists and pairs allocates nothing, nor do repeated broad-phase and periodic searches.
//!
//! The tests of this binary run one at a time, because the counting allocator is global:
//! while it is armed it counts the allocations of every thread of the process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::backtrace::Backtrace;
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hhg_core::{Grid, NeighborLists, PairList};
use hhg_testkit::{SplitMix64, cube_edge, uniform_box};

/// Counts allocations and reallocations while [`ARMED`] is set, and records the backtrace
/// and size of the first one.
struct CountingAllocator;

/// Whether allocations are being counted.
static ARMED: AtomicBool = AtomicBool::new(false);

/// Allocations and reallocations counted while armed.
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// The size and backtrace of the first counted allocation.
static FIRST: Mutex<Option<(usize, Backtrace)>> = Mutex::new(None);

/// Held by each test for its whole run: the counter is global, so two tests counting at
/// once would count each other's allocations.
static ONE_TEST_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Waits until no other test of this file runs (a test that failed before still lets the
/// others run).
fn one_test_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_TEST_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

thread_local! {
    /// Set while this thread records a backtrace, whose own allocations are not counted.
    static RECORDING: Cell<bool> = const { Cell::new(false) };
}

impl CountingAllocator {
    /// Counts one allocation of `size` bytes if armed.
    fn note(size: usize) {
        if !ARMED.load(Ordering::SeqCst) {
            return;
        }
        // A thread being torn down has no thread-local left; its allocation still counts.
        let recording = RECORDING.try_with(Cell::get).unwrap_or(false);
        if recording {
            return;
        }
        if COUNT.fetch_add(1, Ordering::SeqCst) == 0 {
            let _ = RECORDING.try_with(|r| {
                r.set(true);
                let trace = Backtrace::force_capture();
                if let Ok(mut first) = FIRST.lock() {
                    *first = Some((size, trace));
                }
                r.set(false);
            });
        }
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// bookkeeping touches only atomics, a thread-local flag and (once) a mutex.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::note(layout.size());
        // SAFETY: forwarded with the caller's guarantees on `layout`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::note(layout.size());
        // SAFETY: forwarded with the caller's guarantees on `layout`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::note(new_size);
        // SAFETY: forwarded with the caller's guarantees on `ptr`, `layout` and `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees on `ptr` and `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Moves every point by at most `step` along each axis.
fn displace(rng: &mut SplitMix64, points: &[[f64; 3]], step: f64) -> Vec<[f64; 3]> {
    points
        .iter()
        .map(|p| std::array::from_fn(|a| p[a] + rng.range(-step, step)))
        .collect()
}

/// Scales points towards `centre` by `factor`.
fn squeeze(points: &[[f64; 3]], centre: f64, factor: f64) -> Vec<[f64; 3]> {
    points
        .iter()
        .map(|p| p.map(|v| centre + (v - centre) * factor))
        .collect()
}

/// What [`allocations_after_warm_up`] saw of the measured step.
struct MeasuredStep {
    /// Allocations counted.
    counted: usize,
    /// Unique pairs and list entries found.
    pairs: usize,
    list_entries: usize,
    /// The table's bucket count before and after the step.
    buckets: usize,
    buckets_after: usize,
}

impl MeasuredStep {
    /// Checks that the step kept its table, found more than `min_pairs` pairs (enough for a
    /// meaningful test) with lists that agree, and allocated nothing; `what` names the scene.
    fn assert_allocated_nothing(&self, what: &str, min_pairs: usize) {
        assert_eq!(
            self.buckets_after, self.buckets,
            "{what}: the table changed size"
        );
        assert!(
            self.pairs > min_pairs,
            "{what}: too few pairs ({}) for a meaningful test",
            self.pairs
        );
        assert_eq!(
            self.list_entries,
            2 * self.pairs,
            "{what}: lists and pairs disagree"
        );
        assert_none_counted(self.counted, what);
    }
}

/// Warms a grid, its lists and its pairs up on `warm_ups`, then counts the allocations of
/// one more build, list pass and pair pass on `measured`, on two threads; with `adopt`, each
/// build is followed by [`Grid::adopt_cell_order`] (a solver that renumbers its particles
/// at every step).
fn allocations_after_warm_up(
    warm_ups: &[&[[f64; 3]]],
    measured: &[[f64; 3]],
    radius: f64,
    adopt: bool,
) -> MeasuredStep {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        let mut grid = Grid::new(radius).unwrap();
        let mut lists = NeighborLists::default();
        let mut pairs = PairList::default();
        for &warm_up in warm_ups {
            grid.build(warm_up).unwrap();
            if adopt {
                grid.adopt_cell_order();
            }
            grid.neighbor_lists(&mut lists).unwrap();
            grid.pairs(&mut pairs).unwrap();
        }
        let buckets = grid.table().unwrap().buckets();

        // The counter works: one boxed value is one allocation.
        COUNT.store(0, Ordering::SeqCst);
        ARMED.store(true, Ordering::SeqCst);
        let probe = std::hint::black_box(Box::new([1u64; 4]));
        ARMED.store(false, Ordering::SeqCst);
        drop(probe);
        assert_eq!(
            COUNT.load(Ordering::SeqCst),
            1,
            "the counting allocator does not count"
        );
        *FIRST.lock().unwrap() = None;

        COUNT.store(0, Ordering::SeqCst);
        ARMED.store(true, Ordering::SeqCst);
        grid.build(measured).unwrap();
        if adopt {
            assert!(
                grid.adopt_cell_order().len() == measured.len() && grid.in_cell_order(),
                "the adopted grid is not in cell order"
            );
        }
        grid.neighbor_lists(&mut lists).unwrap();
        grid.pairs(&mut pairs).unwrap();
        ARMED.store(false, Ordering::SeqCst);
        MeasuredStep {
            counted: COUNT.load(Ordering::SeqCst),
            pairs: pairs.len(),
            list_entries: lists.total(),
            buckets,
            buckets_after: grid.table().unwrap().buckets(),
        }
    })
}

/// Fails with the first allocation's size and backtrace when `counted` is not zero.
fn assert_none_counted(counted: usize, what: &str) {
    if counted > 0 {
        let first = FIRST.lock().unwrap().take();
        let (size, trace) = first.expect("the first allocation was recorded");
        panic!(
            "{what}: build + neighbor_lists + pairs allocated {counted} times after warm-up; \
             the first allocation ({size} bytes) came from:\n{trace}"
        );
    }
}

#[test]
fn rebuild_and_search_allocate_nothing_after_warm_up() {
    let _alone = one_test_at_a_time();
    let n = 20_000;
    let radius = 1.0f64;
    let mut rng = SplitMix64::new(7);
    // A cube of about 30 neighbours per point, 14.5 cells on a side, a quarter cell above
    // the lattice's corner: a displacement of at most 0.05 and a squeeze by 3% both keep it
    // within 15 cells of the lattice per axis, so the cell table keeps its size. The
    // squeezed warm-up has about 10% more neighbours than the measured step, so every
    // output buffer has grown enough.
    let cell = radius * (1.0 + hhg_core::building_blocks::CELL_MARGIN);
    let edge = 14.5 * cell;
    assert!((cube_edge(n, radius, 30.0) - edge).abs() < 1.0);
    let corner = 0.25 * cell;
    let points = uniform_box(&mut rng, n, [corner; 3], [corner + edge; 3]);
    let squeezed = squeeze(&points, edge / 2.0, 0.97);
    let moved = displace(&mut rng, &points, 0.05);
    for adopt in [false, true] {
        let what = if adopt {
            "a dense cube, its cell order adopted at every build"
        } else {
            "a dense cube"
        };
        allocations_after_warm_up(&[&squeezed, &points, &squeezed], &moved, radius, adopt)
            .assert_allocated_nothing(what, 10 * n);
    }

    // A thin sheet of 300k points, 1000 cells on a side: a hashed table of 2^20 buckets,
    // which the counting sort orders in two passes (tables of 2^19 buckets and more). In so
    // sparse a set, moved points change the largest neighbourhood, the point count and the
    // pair count of single work units by more than in the cube: their buffers grow with
    // slack (`parallel::reserve_with_slack`) and from a least room. The sheet lies a quarter
    // cell above the lattice's corner, so that the moved points keep its cells.
    let n = 300_000;
    let points = uniform_box(
        &mut rng,
        n,
        [corner; 3],
        [1000.0, 1000.0, 2.0].map(|v| v + corner),
    );
    let squeezed = squeeze(&points, 500.0, 0.97);
    let moved = displace(&mut rng, &points, 0.05);
    let step = allocations_after_warm_up(&[&squeezed, &points, &squeezed], &moved, radius, false);
    assert!(
        step.buckets >= 1 << 19,
        "{} buckets: not the two-pass sort",
        step.buckets
    );
    step.assert_allocated_nothing("a sheet in a hashed table", n / 10);
}

/// The pass for input in cell order after an output that grew: a block of ~30 work units
/// (more than the pass's 8 buffer slots on two threads), its density rising along z, is
/// searched once into an empty output, so every unit past the first 8 gathers into a spare
/// buffer while the output grows, and the slots' own buffers hold the sparse first units.
/// The next step, the points moved and a little sparser, must find the dense units'
/// allocations kept in their slots (with the spares dropped instead, it allocates).
#[test]
fn a_step_after_an_output_grew_in_cell_order_allocates_nothing() {
    let _alone = one_test_at_a_time();
    let n = 60_000;
    let radius = 1.0f64;
    let mut rng = SplitMix64::new(11);
    let edge = cube_edge(n, radius, 30.0);
    // Density proportional to z: z = edge * sqrt(u) for u uniform.
    let points: Vec<[f64; 3]> = (0..n)
        .map(|_| {
            let [x, y, u] = [
                rng.range(0.0, edge),
                rng.range(0.0, edge),
                rng.range(0.0, 1.0),
            ];
            [x, y, edge * u.sqrt()]
        })
        .collect();
    let squeezed = squeeze(&points, edge / 2.0, 0.97);
    let moved = displace(&mut rng, &points, 0.02);
    allocations_after_warm_up(&[&squeezed], &moved, radius, true)
        .assert_allocated_nothing("a block in cell order after a growing step", 10 * n);
}

/// The searches whose pairs go through per-unit buffers (the broad phase's boxes, the
/// periodic search's points and ghosts, a scene's detection with a side list and statics):
/// once their outputs have grown, repeated pairs, visitors, lists and detections allocate
/// nothing.
#[test]
fn repeated_broad_and_periodic_searches_allocate_nothing() {
    use hhg_core::broad::{Aabb, BroadPhase, Filter, Motion, Scene};
    use hhg_core::periodic::{PeriodicBox, PeriodicPairList, PeriodicSearch};

    let _alone = one_test_at_a_time();
    let n = 20_000;
    let mut rng = SplitMix64::new(13);
    let edge = cube_edge(n, 1.0, 30.0);
    let points = uniform_box(&mut rng, n, [0.0; 3], [edge; 3]);
    let boxes: Vec<Aabb<f64>> = points
        .iter()
        .map(|p| {
            let half = rng.range(0.05, 0.6);
            Aabb::new(p.map(|v| v - half), p.map(|v| v + half))
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        let mut broad = BroadPhase::new();
        broad.build(&boxes).unwrap();
        let mut broad_pairs = PairList::default();
        let mut periodic =
            PeriodicSearch::new(1.0, PeriodicBox::cubic([0.0; 3], [edge; 3])).unwrap();
        periodic.build(&points).unwrap();
        let mut periodic_pairs = PeriodicPairList::default();
        let mut lists = NeighborLists::default();
        // A scene of the same boxes, a tenth of them static and a hundredth moved off the
        // built hierarchy into its side list.
        let mut scene = Scene::new();
        let handles: Vec<_> = boxes
            .iter()
            .enumerate()
            .map(|(k, aabb)| {
                let motion = if k % 10 == 0 {
                    Motion::Static
                } else {
                    Motion::Dynamic
                };
                scene.insert(*aabb, motion, Filter::ALL).unwrap()
            })
            .collect();
        let mut scene_pairs = Vec::new();
        scene.detect(&mut scene_pairs).unwrap();
        for (k, handle) in handles.iter().enumerate().filter(|(k, _)| k % 100 == 1) {
            let aabb = boxes[k];
            let moved = Aabb::new(aabb.min.map(|v| v + 0.25), aabb.max.map(|v| v + 0.25));
            scene.set_aabb(*handle, moved).unwrap();
        }
        let mut search = || {
            broad.pairs(&mut broad_pairs).unwrap();
            let mut visited = 0usize;
            broad.for_each_pair(|_, _| visited += 1);
            periodic.pairs_with_distances(&mut periodic_pairs).unwrap();
            periodic.neighbor_lists(&mut lists).unwrap();
            scene.detect(&mut scene_pairs).unwrap();
            visited
        };
        search();
        search();

        *FIRST.lock().unwrap() = None;
        COUNT.store(0, Ordering::SeqCst);
        ARMED.store(true, Ordering::SeqCst);
        let visited = search();
        ARMED.store(false, Ordering::SeqCst);
        let counted = COUNT.load(Ordering::SeqCst);
        assert!(broad_pairs.len() > n, "{} box pairs", broad_pairs.len());
        assert_eq!(visited, broad_pairs.len(), "visitor and pairs disagree");
        assert!(
            periodic_pairs.len() > 5 * n,
            "{} periodic pairs",
            periodic_pairs.len()
        );
        assert_eq!(
            lists.total(),
            2 * periodic_pairs.len(),
            "periodic lists and pairs disagree"
        );
        if counted > 0 {
            let (size, trace) = FIRST
                .lock()
                .unwrap()
                .take()
                .expect("the first allocation was recorded");
            panic!(
                "repeated pairs, visitors, lists and detections allocated {counted} times; the first \
                 allocation ({size} bytes) came from:\n{trace}"
            );
        }
    });
}

/// The plane's grid: a rebuild and a list pass of points it has searched before (in random
/// order, whose lists go through the sorting network, and in an adopted cell order) allocate
/// nothing: the work units' buffers are kept in the lists' scratch (they were allocated per
/// call before). Unlike the 3-D pass, whose buffers go to any unit, a plane unit keeps its
/// own buffer, which may grow when a step moves more points into it.
#[test]
fn plane_rebuild_and_lists_allocate_nothing_after_warm_up() {
    use hhg_core::plane::Grid2;

    let _alone = one_test_at_a_time();
    let n = 20_000;
    let mut rng = SplitMix64::new(17);
    // About 20 neighbours per point within the radius 1, a quarter cell off the lattice.
    let cell = 1.0 + hhg_core::building_blocks::CELL_MARGIN;
    let side = (n as f64 * std::f64::consts::PI / 20.0).sqrt();
    let corner = 0.25 * cell;
    let points: Vec<[f64; 2]> = (0..n)
        .map(|_| [0, 1].map(|_| corner + rng.range(0.0, side)))
        .collect();
    let squeeze = |p: &[f64; 2]| p.map(|v| side / 2.0 + (v - side / 2.0) * 0.97);
    let squeezed: Vec<[f64; 2]> = points.iter().map(squeeze).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for adopt in [false, true] {
        pool.install(|| {
            let mut grid = Grid2::new(1.0).unwrap();
            let mut lists = NeighborLists::default();
            for warm_up in [&squeezed, &points] {
                grid.build(warm_up).unwrap();
                if adopt {
                    grid.adopt_cell_order();
                }
                grid.neighbor_lists(&mut lists).unwrap();
            }
            *FIRST.lock().unwrap() = None;
            COUNT.store(0, Ordering::SeqCst);
            ARMED.store(true, Ordering::SeqCst);
            grid.build(&points).unwrap();
            if adopt {
                grid.adopt_cell_order();
            }
            grid.neighbor_lists(&mut lists).unwrap();
            ARMED.store(false, Ordering::SeqCst);
            assert!(lists.total() > 10 * n, "{} entries", lists.total());
            let what = if adopt {
                "the plane's grid, its cell order adopted at every build"
            } else {
                "the plane's grid in the caller's order"
            };
            assert_none_counted(COUNT.load(Ordering::SeqCst), what);
        });
    }
}
