//! C API tests: the extern functions called directly give exactly hhg-core's lists, pairs and orders on random points, and every error path returns its code and message.

use std::ffi::CStr;
use std::ptr;

use hhg::*;
use hhg_core::reorder::apply_order;
use hhg_core::{Error, Grid, MAX_POINTS, NeighborSearch, PairList, Real};

use crate::common::{Failed, SplitMix64, check, last_error, moved, query_in_two_calls};

/// `n` uniform points in the box `[lo, lo + size)^3`.
fn random_points<T: Real>(rng: &mut SplitMix64, n: usize, lo: f64, size: f64) -> Vec<[T; 3]> {
    (0..n)
        .map(|_| std::array::from_fn(|_| T::from_f64(rng.range(lo, lo + size))))
        .collect()
}

/// The three coordinate columns of AoS points.
fn columns<T: Real>(points: &[[T; 3]]) -> [Vec<T>; 3] {
    std::array::from_fn(|axis| points.iter().map(|p| p[axis]).collect())
}

/// The entry points of one precision, so that tests run for both.
trait CReal: Real {
    const NEW: unsafe extern "C" fn(Self, *mut *mut HhgSearch) -> HhgStatus;
    const ADD: unsafe extern "C" fn(
        *mut HhgSearch,
        *const Self,
        usize,
        bool,
        *mut usize,
    ) -> HhgStatus;
    #[allow(clippy::type_complexity)]
    const ADD_SOA: unsafe extern "C" fn(
        *mut HhgSearch,
        *const Self,
        *const Self,
        *const Self,
        usize,
        bool,
        *mut usize,
    ) -> HhgStatus;
    const UPDATE: unsafe extern "C" fn(*mut HhgSearch, usize, *const Self, usize) -> HhgStatus;
    #[allow(clippy::type_complexity)]
    const UPDATE_SOA: unsafe extern "C" fn(
        *mut HhgSearch,
        usize,
        *const Self,
        *const Self,
        *const Self,
        usize,
    ) -> HhgStatus;
    const RESIZE: unsafe extern "C" fn(*mut HhgSearch, usize, *const Self, usize) -> HhgStatus;
    #[allow(clippy::type_complexity)]
    const QUERY: unsafe extern "C" fn(
        *const HhgSearch,
        usize,
        *const Self,
        *mut u32,
        usize,
        *mut usize,
    ) -> HhgStatus;
    const PRECISION: HhgPrecision;

    /// This precision's distance field of a view, and the other one.
    fn distance_fields(f32s: *const f32, f64s: *const f64) -> (*const Self, bool);
}

impl CReal for f32 {
    const NEW: unsafe extern "C" fn(Self, *mut *mut HhgSearch) -> HhgStatus = hhg_search_new_f32;
    const ADD: unsafe extern "C" fn(
        *mut HhgSearch,
        *const Self,
        usize,
        bool,
        *mut usize,
    ) -> HhgStatus = hhg_search_add_set_f32;
    const ADD_SOA: unsafe extern "C" fn(
        *mut HhgSearch,
        *const Self,
        *const Self,
        *const Self,
        usize,
        bool,
        *mut usize,
    ) -> HhgStatus = hhg_search_add_set_soa_f32;
    const UPDATE: unsafe extern "C" fn(*mut HhgSearch, usize, *const Self, usize) -> HhgStatus =
        hhg_search_update_set_f32;
    const UPDATE_SOA: unsafe extern "C" fn(
        *mut HhgSearch,
        usize,
        *const Self,
        *const Self,
        *const Self,
        usize,
    ) -> HhgStatus = hhg_search_update_set_soa_f32;
    const RESIZE: unsafe extern "C" fn(*mut HhgSearch, usize, *const Self, usize) -> HhgStatus =
        hhg_search_resize_set_f32;
    const QUERY: unsafe extern "C" fn(
        *const HhgSearch,
        usize,
        *const Self,
        *mut u32,
        usize,
        *mut usize,
    ) -> HhgStatus = hhg_search_query_point_f32;
    const PRECISION: HhgPrecision = HhgPrecision::F32;

    fn distance_fields(f32s: *const f32, f64s: *const f64) -> (*const Self, bool) {
        (f32s, f64s.is_null())
    }
}

impl CReal for f64 {
    const NEW: unsafe extern "C" fn(Self, *mut *mut HhgSearch) -> HhgStatus = hhg_search_new_f64;
    const ADD: unsafe extern "C" fn(
        *mut HhgSearch,
        *const Self,
        usize,
        bool,
        *mut usize,
    ) -> HhgStatus = hhg_search_add_set_f64;
    const ADD_SOA: unsafe extern "C" fn(
        *mut HhgSearch,
        *const Self,
        *const Self,
        *const Self,
        usize,
        bool,
        *mut usize,
    ) -> HhgStatus = hhg_search_add_set_soa_f64;
    const UPDATE: unsafe extern "C" fn(*mut HhgSearch, usize, *const Self, usize) -> HhgStatus =
        hhg_search_update_set_f64;
    const UPDATE_SOA: unsafe extern "C" fn(
        *mut HhgSearch,
        usize,
        *const Self,
        *const Self,
        *const Self,
        usize,
    ) -> HhgStatus = hhg_search_update_set_soa_f64;
    const RESIZE: unsafe extern "C" fn(*mut HhgSearch, usize, *const Self, usize) -> HhgStatus =
        hhg_search_resize_set_f64;
    const QUERY: unsafe extern "C" fn(
        *const HhgSearch,
        usize,
        *const Self,
        *mut u32,
        usize,
        *mut usize,
    ) -> HhgStatus = hhg_search_query_point_f64;
    const PRECISION: HhgPrecision = HhgPrecision::F64;

    fn distance_fields(f32s: *const f32, f64s: *const f64) -> (*const Self, bool) {
        (f64s, f32s.is_null())
    }
}

/// Neighbour lists copied out of a view.
#[derive(Debug, PartialEq)]
struct Csr<T> {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    distances: Option<Vec<T>>,
}

/// Pairs copied out of a view.
#[derive(Debug, PartialEq)]
struct Pairs<T> {
    pairs: Vec<[u32; 2]>,
    distances: Option<Vec<T>>,
}

/// A search handle that tests use through the C API only, freed on drop.
struct Search<T: CReal> {
    raw: *mut HhgSearch,
    _precision: std::marker::PhantomData<T>,
}

impl<T: CReal> Search<T> {
    fn new(radius: T) -> Result<Self, Failed> {
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a writable handle location.
        check(unsafe { T::NEW(radius, &mut raw) })?;
        assert!(!raw.is_null());
        Ok(Self {
            raw,
            _precision: std::marker::PhantomData,
        })
    }

    fn add(&mut self, points: &[[T; 3]], dynamic: bool) -> Result<usize, Failed> {
        let mut set = usize::MAX;
        // SAFETY: the handle is live, `points` holds `3 * len` values, `set` is writable.
        check(unsafe {
            T::ADD(
                self.raw,
                points.as_ptr().cast(),
                points.len(),
                dynamic,
                &mut set,
            )
        })?;
        Ok(set)
    }

    fn add_soa(&mut self, points: &[[T; 3]], dynamic: bool) -> Result<usize, Failed> {
        let [x, y, z] = columns(points);
        let mut set = usize::MAX;
        // SAFETY: the handle is live, each column holds `len` values, `set` is writable.
        check(unsafe {
            T::ADD_SOA(
                self.raw,
                x.as_ptr(),
                y.as_ptr(),
                z.as_ptr(),
                points.len(),
                dynamic,
                &mut set,
            )
        })?;
        Ok(set)
    }

    fn update(&mut self, set: usize, points: &[[T; 3]]) -> Result<(), Failed> {
        // SAFETY: the handle is live and `points` holds `3 * len` values.
        check(unsafe { T::UPDATE(self.raw, set, points.as_ptr().cast(), points.len()) })
    }

    fn update_soa(&mut self, set: usize, points: &[[T; 3]]) -> Result<(), Failed> {
        let [x, y, z] = columns(points);
        // SAFETY: the handle is live and each column holds `len` values.
        check(unsafe {
            T::UPDATE_SOA(
                self.raw,
                set,
                x.as_ptr(),
                y.as_ptr(),
                z.as_ptr(),
                points.len(),
            )
        })
    }

    fn set_active(&mut self, a: usize, b: usize, active: bool) -> Result<(), Failed> {
        // SAFETY: the handle is live.
        check(unsafe { hhg_search_set_active(self.raw, a, b, active) })
    }

    fn set_pairs(&mut self, set: usize, enabled: bool) -> Result<(), Failed> {
        // SAFETY: the handle is live.
        check(unsafe { hhg_search_set_pairs(self.raw, set, enabled) })
    }

    fn set_with_distances(&mut self, with_distances: bool) -> Result<(), Failed> {
        // SAFETY: the handle is live.
        check(unsafe { hhg_search_set_with_distances(self.raw, with_distances) })
    }

    fn find(&mut self) -> Result<(), Failed> {
        // SAFETY: the handle is live.
        check(unsafe { hhg_search_find_neighbors(self.raw) })
    }

    fn set_count(&self) -> usize {
        let mut count = usize::MAX;
        // SAFETY: the handle is live and `count` is writable.
        check(unsafe { hhg_search_set_count(self.raw, &mut count) }).unwrap();
        count
    }

    fn set_len(&self, set: usize) -> Result<usize, Failed> {
        let mut len = usize::MAX;
        // SAFETY: the handle is live and `len` is writable.
        check(unsafe { hhg_search_set_len(self.raw, set, &mut len) })?;
        Ok(len)
    }

    fn precision(&self) -> HhgPrecision {
        let mut precision = HhgPrecision::F32;
        // SAFETY: the handle is live and `precision` is writable.
        check(unsafe { hhg_search_precision(self.raw, &mut precision) }).unwrap();
        precision
    }

    fn neighbors(&self, a: usize, b: usize) -> Result<Csr<T>, Failed> {
        let mut view = HhgNeighborLists::default();
        // SAFETY: the handle is live and `view` is writable.
        check(unsafe { hhg_search_neighbors(self.raw, a, b, &mut view) })?;
        assert_eq!(view.count, self.set_len(a).unwrap());
        let (distances, other_null) = T::distance_fields(view.distances_f32, view.distances_f64);
        assert!(other_null, "the other precision's distances are NULL");
        // SAFETY: the view was just returned and the search is not changed while it is
        // copied; it documents `count + 1` offsets, `total` indices and, when not NULL,
        // `total` distances.
        unsafe {
            let offsets = std::slice::from_raw_parts(view.offsets, view.count + 1).to_vec();
            assert_eq!(offsets[view.count], view.total);
            Ok(Csr {
                offsets,
                indices: slice_or_empty(view.indices, view.total),
                distances: (!distances.is_null()).then(|| slice_or_empty(distances, view.total)),
            })
        }
    }

    fn pairs(&self, set: usize) -> Result<Pairs<T>, Failed> {
        let mut view = HhgPairList::default();
        // SAFETY: the handle is live and `view` is writable.
        check(unsafe { hhg_search_pairs(self.raw, set, &mut view) })?;
        let (distances, other_null) = T::distance_fields(view.distances_f32, view.distances_f64);
        assert!(other_null, "the other precision's distances are NULL");
        // SAFETY: the view was just returned and the search is not changed while it is
        // copied; it documents `2 * count` indices and, when not NULL, `count` distances.
        unsafe {
            let flat = slice_or_empty(view.pairs, 2 * view.count);
            Ok(Pairs {
                pairs: flat.chunks_exact(2).map(|p| [p[0], p[1]]).collect(),
                distances: (!distances.is_null()).then(|| slice_or_empty(distances, view.count)),
            })
        }
    }

    fn order(&self, set: usize) -> Result<Vec<u32>, Failed> {
        let (mut order, mut len) = (ptr::null(), usize::MAX);
        // SAFETY: the handle is live and both outputs are writable.
        check(unsafe { hhg_search_order(self.raw, set, &mut order, &mut len) })?;
        // SAFETY: the array was just returned with its length and the search is not changed
        // while it is copied.
        Ok(unsafe { slice_or_empty(order, len) })
    }
}

impl<T: CReal> Search<T> {
    fn adopt_cell_order(&mut self, set: usize) -> Result<Vec<u32>, Failed> {
        let (mut order, mut len) = (ptr::null(), usize::MAX);
        // SAFETY: the handle is live and unshared, and both outputs are writable.
        check(unsafe { hhg_search_adopt_cell_order(self.raw, set, &mut order, &mut len) })?;
        // SAFETY: the array was just returned with its length and the search is not changed
        // while it is copied.
        Ok(unsafe { slice_or_empty(order, len) })
    }
}

impl<T: CReal> Drop for Search<T> {
    fn drop(&mut self) {
        // SAFETY: the handle came from hhg_search_new_* and no other call uses it.
        let status = unsafe { hhg_search_free(self.raw) };
        if !std::thread::panicking() {
            assert_eq!(status, HhgStatus::Ok, "a live search is freed once");
        }
    }
}

/// Copies `len` values at `ptr`.
///
/// # Safety
///
/// `ptr` must point to `len` readable values (it may dangle when `len` is 0, but not be NULL).
unsafe fn slice_or_empty<V: Clone>(ptr: *const V, len: usize) -> Vec<V> {
    assert!(!ptr.is_null(), "a view array is NULL");
    // SAFETY: the caller guarantees `len` readable values at the non-NULL `ptr`.
    unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec()
}

/// The lists of hhg-core's search, copied.
fn core_lists<T: Real>(search: &NeighborSearch<T>, a: usize, b: usize) -> Csr<T> {
    let lists = search.neighbors(a, b).expect("searched");
    Csr {
        offsets: lists.offsets().to_vec(),
        indices: lists.indices().to_vec(),
        distances: lists.distances_squared().map(<[T]>::to_vec),
    }
}

/// The unique pairs hhg-core's grid finds over `points`.
fn core_pairs<T: Real>(points: &[[T; 3]], radius: T, with_distances: bool) -> Pairs<T> {
    let mut grid = Grid::new(radius).unwrap();
    grid.build(points).unwrap();
    let mut pairs = PairList::default();
    if with_distances {
        grid.pairs_with_distances(&mut pairs).unwrap();
    } else {
        grid.pairs(&mut pairs).unwrap();
    }
    Pairs {
        pairs: pairs.pairs().to_vec(),
        distances: pairs.distances_squared().map(<[T]>::to_vec),
    }
}

/// Runs a fluid (dynamic, AoS) and a boundary (static, SoA) through the C API and through
/// hhg-core side by side, over three steps, and asserts identical results.
fn matches_core<T: CReal>(seed: u64, with_distances: bool) {
    let mut rng = SplitMix64(seed);
    let radius = T::from_f64(0.7);
    let mut fluid = random_points::<T>(&mut rng, 3000, 0.0, 10.0);
    let boundary = random_points::<T>(&mut rng, 1200, -1.0, 12.0);

    let mut search = Search::<T>::new(radius).unwrap();
    assert_eq!(search.precision(), T::PRECISION);
    search.set_with_distances(with_distances).unwrap();
    let f = search.add(&fluid, true).unwrap();
    let b = search.add_soa(&boundary, false).unwrap();
    assert_eq!((f, b, search.set_count()), (0, 1, 2));
    assert_eq!(search.set_len(f).unwrap(), fluid.len());
    assert_eq!(search.set_len(b).unwrap(), boundary.len());
    for (a, c) in [(f, f), (f, b), (b, f)] {
        search.set_active(a, c, true).unwrap();
    }
    search.set_pairs(f, true).unwrap();
    search.set_pairs(b, true).unwrap();

    let mut core = NeighborSearch::new(radius).unwrap();
    core.set_with_distances(with_distances);
    core.add_dynamic_set(&fluid).unwrap();
    core.add_static_set(&boundary).unwrap();
    for (a, c) in [(f, f), (f, b), (b, f)] {
        core.set_active(a, c, true).unwrap();
    }

    for step in 0..3 {
        if step > 0 {
            fluid = moved(&mut rng, &fluid);
            if step == 1 {
                search.update(f, &fluid).unwrap();
            } else {
                search.update_soa(f, &fluid).unwrap();
            }
            core.update_positions(f, &fluid).unwrap();
        }
        if step == 2 {
            // The solver renumbers the fluid in cell order and permutes its positions.
            let order = search.adopt_cell_order(f).unwrap();
            assert_eq!(order, core.adopt_cell_order(f).unwrap(), "adopted order");
            assert!(
                order.iter().enumerate().any(|(k, &i)| k != i as usize),
                "the fluid was in cell order already, the step would be vacuous"
            );
            assert_eq!(
                search.neighbors(f, f).unwrap_err().0,
                HhgStatus::NotSearched
            );
            apply_order(&order, &mut fluid);
        }
        search.find().unwrap();
        core.find_neighbors().unwrap();
        for (a, c) in [(f, f), (f, b), (b, f)] {
            let ours = search.neighbors(a, c).unwrap();
            assert_eq!(
                ours,
                core_lists(&core, a, c),
                "step {step}: set {a} in set {c}"
            );
            assert_eq!(ours.distances.is_some(), with_distances);
            assert!(!ours.indices.is_empty(), "the scene has neighbours");
        }
        assert_eq!(
            search.neighbors(b, b).unwrap_err().0,
            HhgStatus::NotSearched
        );
        let fluid_pairs = search.pairs(f).unwrap();
        assert_eq!(fluid_pairs, core_pairs(&fluid, radius, with_distances));
        assert_eq!(
            2 * fluid_pairs.pairs.len(),
            core.neighbors(f, f).unwrap().total()
        );
        assert_eq!(
            search.pairs(b).unwrap(),
            core_pairs(&boundary, radius, with_distances)
        );
        for set in [f, b] {
            assert_eq!(
                search.order(set).unwrap(),
                core.grid(set).unwrap().order(),
                "step {step}: order of set {set}"
            );
        }
    }
}

#[test]
fn lists_pairs_and_orders_match_core_f32() {
    matches_core::<f32>(1, false);
    matches_core::<f32>(2, true);
}

#[test]
fn lists_pairs_and_orders_match_core_f64() {
    matches_core::<f64>(3, false);
    matches_core::<f64>(4, true);
}

#[test]
fn results_go_stale_when_the_search_changes() {
    let points: Vec<[f64; 3]> = vec![[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [3.0, 0.0, 0.0]];
    let mut search = Search::<f64>::new(1.0).unwrap();
    let s = search.add(&points, true).unwrap();
    let not_searched = |result: Result<Csr<f64>, Failed>| {
        let (status, message) = result.unwrap_err();
        assert_eq!(status, HhgStatus::NotSearched);
        message
    };
    let message = not_searched(search.neighbors(s, s));
    assert_eq!(
        message,
        "set 0 searching set 0 is not active: call hhg_search_set_active, then \
         hhg_search_find_neighbors"
    );
    search.set_active(s, s, true).unwrap();
    let message = not_searched(search.neighbors(s, s));
    assert!(message.contains("was not searched"), "{message}");
    search.find().unwrap();
    let lists = search.neighbors(s, s).unwrap();
    assert_eq!(lists.offsets, [0, 1, 2, 2]);
    assert_eq!(lists.indices, [1, 0]);
    assert_eq!(lists.distances, None);

    // New positions, distances switched on, a deactivated pair: stale until the next search.
    search.update(s, &points).unwrap();
    not_searched(search.neighbors(s, s));
    search.find().unwrap();
    search.set_with_distances(true).unwrap();
    not_searched(search.neighbors(s, s));
    search.find().unwrap();
    assert_eq!(
        search.neighbors(s, s).unwrap().distances,
        Some(vec![0.25, 0.25])
    );
    search.set_active(s, s, false).unwrap();
    not_searched(search.neighbors(s, s));

    // Unique pairs: refused until enabled and searched, and after being disabled.
    let (status, message) = search.pairs(s).unwrap_err();
    assert_eq!(status, HhgStatus::NotSearched);
    assert!(message.contains("are not enabled"), "{message}");
    search.set_pairs(s, true).unwrap();
    let (status, message) = search.pairs(s).unwrap_err();
    assert_eq!(status, HhgStatus::NotSearched);
    assert!(message.contains("were not computed"), "{message}");
    search.find().unwrap();
    let pairs = search.pairs(s).unwrap();
    assert_eq!(pairs.pairs, [[0, 1]]);
    assert_eq!(pairs.distances, Some(vec![0.25]));
    search.set_pairs(s, false).unwrap();
    assert_eq!(search.pairs(s).unwrap_err().0, HhgStatus::NotSearched);
}

#[test]
fn empty_sets_give_empty_views() {
    let mut search = Search::<f32>::new(1.0).unwrap();
    let mut set = usize::MAX;
    // SAFETY: the handle is live, `n` is 0 so the NULL array is allowed, `set` is writable.
    let status = unsafe { hhg_search_add_set_f32(search.raw, ptr::null(), 0, true, &mut set) };
    check(status).unwrap();
    assert_eq!(set, 0);
    // SAFETY: as above, for three NULL columns.
    let status = unsafe {
        hhg_search_add_set_soa_f32(
            search.raw,
            ptr::null(),
            ptr::null(),
            ptr::null(),
            0,
            false,
            &mut set,
        )
    };
    check(status).unwrap();
    assert_eq!(set, 1);
    search.set_active(0, 0, true).unwrap();
    search.set_active(0, 1, true).unwrap();
    search.set_pairs(0, true).unwrap();
    search.find().unwrap();
    for b in [0, 1] {
        let lists = search.neighbors(0, b).unwrap();
        assert_eq!(lists.offsets, [0]);
        assert!(lists.indices.is_empty());
    }
    assert!(search.pairs(0).unwrap().pairs.is_empty());
    assert!(search.order(1).unwrap().is_empty());
    assert_eq!(search.set_len(1).unwrap(), 0);
}

#[test]
fn bad_radii_are_refused_with_the_core_message() {
    for radius in [-1.0f64, 0.0, f64::NAN, f64::INFINITY, 1e-200] {
        let mut raw = ptr::dangling_mut::<HhgSearch>();
        // SAFETY: `raw` is a writable handle location.
        let status = unsafe { hhg_search_new_f64(radius, &mut raw) };
        assert_eq!(status, HhgStatus::InvalidRadius, "radius {radius}");
        assert!(raw.is_null(), "a failed creation stores NULL");
        assert_eq!(last_error(), Error::InvalidRadius { radius }.to_string());
    }
    // 1e30 is a fine f64 radius, but its square overflows f32.
    let mut raw = ptr::null_mut();
    // SAFETY: `raw` is a writable handle location.
    let status = unsafe { hhg_search_new_f32(1e30, &mut raw) };
    assert_eq!(status, HhgStatus::InvalidRadius);
    assert_eq!(
        last_error(),
        Error::InvalidRadius {
            radius: 1e30f32 as f64
        }
        .to_string()
    );
    assert_eq!(
        Search::<f32>::new(-1.0).err().unwrap().1,
        "the search radius must be finite and > 0 with a finite, normal square in the input \
         precision, got -1"
    );
}

#[test]
fn non_finite_and_far_apart_coordinates_are_refused() {
    let mut search = Search::<f32>::new(1.0).unwrap();
    let mut points = vec![[0.0f32; 3]; 10];
    points[7][1] = f32::NAN;
    let (status, message) = search.add(&points, true).unwrap_err();
    assert_eq!(status, HhgStatus::NonFiniteCoordinate);
    assert_eq!(message, "point 7 has a non-finite y coordinate (NaN)");
    points[7][1] = 0.0;
    points[3][2] = f32::NEG_INFINITY;
    let (status, message) = search.add_soa(&points, false).unwrap_err();
    assert_eq!(status, HhgStatus::NonFiniteCoordinate);
    assert_eq!(message, "point 3 has a non-finite z coordinate (-inf)");
    assert_eq!(search.set_count(), 0, "a refused set is not added");

    points[3][2] = 0.0;
    let s = search.add(&points, true).unwrap();
    points[9][0] = f32::INFINITY;
    let (status, message) = search.update(s, &points).unwrap_err();
    assert_eq!(status, HhgStatus::NonFiniteCoordinate);
    assert_eq!(message, "point 9 has a non-finite x coordinate (inf)");
    let (status, _) = search.update_soa(s, &points).unwrap_err();
    assert_eq!(status, HhgStatus::NonFiniteCoordinate);

    let far = [[0.0f32; 3], [3e9, 0.0, 0.0]];
    let mut tiny = Search::<f32>::new(1e-3).unwrap();
    let (status, message) = tiny.add(&far, false).unwrap_err();
    assert_eq!(status, HhgStatus::CoordinateOutOfRange);
    assert!(
        message.contains("beyond the grid's integer range"),
        "{message}"
    );
}

#[test]
fn point_counts_and_set_ids_are_checked() {
    let points = vec![[0.0f64; 3], [1.0, 0.0, 0.0]];
    let mut search = Search::<f64>::new(1.5).unwrap();
    let s = search.add(&points, true).unwrap();

    let (status, message) = search.update(s, &points[..1]).unwrap_err();
    assert_eq!(status, HhgStatus::PointCountChanged);
    assert_eq!(
        message,
        "point set 0 has 2 points but 1 positions were given"
    );

    let unknown = |result: Result<(), Failed>| {
        let (status, message) = result.unwrap_err();
        assert_eq!(status, HhgStatus::UnknownPointSet);
        assert_eq!(message, "point set 3 does not exist (the search holds 1)");
    };
    unknown(search.update(3, &points));
    unknown(search.update_soa(3, &points));
    unknown(search.set_active(s, 3, true));
    unknown(search.set_active(3, s, true));
    unknown(search.set_pairs(3, true));
    unknown(search.neighbors(3, s).map(drop));
    unknown(search.neighbors(s, 3).map(drop));
    unknown(search.pairs(3).map(drop));
    unknown(search.order(3).map(drop));
    unknown(search.set_len(3).map(drop));

    let many = [0.0f64; 3];
    let mut set = usize::MAX;
    // SAFETY: this violates the documented contract (`n` points must be readable) on
    // purpose: the point count is refused before the array is touched, which is what this
    // checks.
    let status = unsafe {
        hhg_search_add_set_f64(search.raw, many.as_ptr(), MAX_POINTS + 1, true, &mut set)
    };
    assert_eq!(status, HhgStatus::TooManyPoints);
    assert_eq!(
        last_error(),
        Error::TooManyPoints {
            count: MAX_POINTS + 1,
            limit: MAX_POINTS
        }
        .to_string()
    );
    assert_eq!(set, usize::MAX, "a failed call leaves its output alone");
}

#[test]
fn the_wrong_precision_is_refused() {
    let points32 = [[0.0f32; 3]];
    let points64 = [[0.0f64; 3]];
    let search32 = Search::<f32>::new(1.0).unwrap();
    let search64 = Search::<f64>::new(1.0).unwrap();
    let mut set = usize::MAX;
    // SAFETY: both handles are live, the arrays hold one point each, `set` is writable.
    let (status32, status64) = unsafe {
        (
            hhg_search_add_set_f64(search32.raw, points64.as_ptr().cast(), 1, true, &mut set),
            hhg_search_add_set_f32(search64.raw, points32.as_ptr().cast(), 1, true, &mut set),
        )
    };
    assert_eq!(status64, HhgStatus::PrecisionMismatch);
    assert_eq!(
        last_error(),
        "an _f32 function was called on an f64 search; use the _f64 one"
    );
    assert_eq!(status32, HhgStatus::PrecisionMismatch);
    // SAFETY: as above, for SoA and updates of a set that does not exist.
    let statuses = unsafe {
        [
            hhg_search_add_set_soa_f64(search32.raw, &0.0, &0.0, &0.0, 1, true, &mut set),
            hhg_search_add_set_soa_f32(search64.raw, &0.0, &0.0, &0.0, 1, true, &mut set),
            hhg_search_update_set_f64(search32.raw, 0, points64.as_ptr().cast(), 1),
            hhg_search_update_set_f32(search64.raw, 0, points32.as_ptr().cast(), 1),
            hhg_search_update_set_soa_f64(search32.raw, 0, &0.0, &0.0, &0.0, 1),
            hhg_search_update_set_soa_f32(search64.raw, 0, &0.0, &0.0, &0.0, 1),
        ]
    };
    assert_eq!(statuses, [HhgStatus::PrecisionMismatch; 6]);
    assert_eq!(set, usize::MAX);
    assert_eq!((search32.set_count(), search64.set_count()), (0, 0));
}

#[test]
fn null_pointers_are_refused() {
    let null_search = |status: HhgStatus| {
        assert_eq!(status, HhgStatus::NullPointer);
        assert_eq!(last_error(), "argument `search` is NULL");
    };
    let (mut set, mut count) = (0usize, 0usize);
    let mut precision = HhgPrecision::F32;
    let mut lists = HhgNeighborLists::default();
    let mut pairs = HhgPairList::default();
    let mut order = ptr::null();
    let point = [0.0f32; 3];
    let point64 = [0.0f64; 3];
    let no = ptr::null_mut::<HhgSearch>();
    // SAFETY: every call gets a NULL search, which each function refuses before using any
    // other argument; the other pointers are valid anyway.
    unsafe {
        null_search(hhg_search_add_set_f32(
            no,
            point.as_ptr(),
            1,
            true,
            &mut set,
        ));
        null_search(hhg_search_add_set_f64(
            no,
            point64.as_ptr(),
            1,
            true,
            &mut set,
        ));
        null_search(hhg_search_add_set_soa_f32(
            no, &0.0, &0.0, &0.0, 1, true, &mut set,
        ));
        null_search(hhg_search_add_set_soa_f64(
            no, &0.0, &0.0, &0.0, 1, true, &mut set,
        ));
        null_search(hhg_search_update_set_f32(no, 0, point.as_ptr(), 1));
        null_search(hhg_search_update_set_f64(no, 0, point64.as_ptr(), 1));
        null_search(hhg_search_update_set_soa_f32(no, 0, &0.0, &0.0, &0.0, 1));
        null_search(hhg_search_update_set_soa_f64(no, 0, &0.0, &0.0, &0.0, 1));
        null_search(hhg_search_set_active(no, 0, 0, true));
        null_search(hhg_search_set_pairs(no, 0, true));
        null_search(hhg_search_set_with_distances(no, true));
        null_search(hhg_search_find_neighbors(no));
        null_search(hhg_search_precision(no, &mut precision));
        null_search(hhg_search_set_count(no, &mut count));
        null_search(hhg_search_set_len(no, 0, &mut count));
        null_search(hhg_search_neighbors(no, 0, 0, &mut lists));
        null_search(hhg_search_pairs(no, 0, &mut pairs));
        null_search(hhg_search_order(no, 0, &mut order, &mut count));
        null_search(hhg_search_adopt_cell_order(no, 0, &mut order, &mut count));
        hhg_search_free(no);
    }

    let mut search = Search::<f32>::new(1.0).unwrap();
    let s = search
        .add(&[[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]], true)
        .unwrap();
    search.set_active(s, s, true).unwrap();
    search.set_pairs(s, true).unwrap();
    search.find().unwrap();
    let raw = search.raw;
    let null_arg = |status: HhgStatus, name: &str| {
        assert_eq!(status, HhgStatus::NullPointer, "{name}");
        assert_eq!(last_error(), format!("argument `{name}` is NULL"));
    };
    // SAFETY: the handle is live; every call gets one NULL pointer, which it refuses before
    // using it, and valid other pointers.
    unsafe {
        null_arg(hhg_search_new_f32(1.0, ptr::null_mut()), "out_search");
        null_arg(hhg_search_new_f64(1.0, ptr::null_mut()), "out_search");
        null_arg(
            hhg_search_add_set_f32(raw, ptr::null(), 1, true, &mut set),
            "xyz",
        );
        null_arg(
            hhg_search_add_set_f32(raw, point.as_ptr(), 1, true, ptr::null_mut()),
            "out_set",
        );
        null_arg(
            hhg_search_add_set_soa_f32(raw, ptr::null(), &0.0, &0.0, 1, true, &mut set),
            "x",
        );
        null_arg(
            hhg_search_add_set_soa_f32(raw, &0.0, ptr::null(), &0.0, 1, true, &mut set),
            "y",
        );
        null_arg(
            hhg_search_add_set_soa_f32(raw, &0.0, &0.0, ptr::null(), 1, true, &mut set),
            "z",
        );
        null_arg(hhg_search_update_set_f32(raw, s, ptr::null(), 2), "xyz");
        null_arg(
            hhg_search_update_set_soa_f32(raw, s, &0.0, ptr::null(), &0.0, 2),
            "y",
        );
        null_arg(hhg_search_precision(raw, ptr::null_mut()), "out_precision");
        null_arg(hhg_search_set_count(raw, ptr::null_mut()), "out_count");
        null_arg(hhg_search_set_len(raw, s, ptr::null_mut()), "out_len");
        null_arg(
            hhg_search_neighbors(raw, s, s, ptr::null_mut()),
            "out_lists",
        );
        null_arg(hhg_search_pairs(raw, s, ptr::null_mut()), "out_pairs");
        null_arg(
            hhg_search_order(raw, s, ptr::null_mut(), &mut count),
            "out_order",
        );
        null_arg(
            hhg_search_order(raw, s, &mut order, ptr::null_mut()),
            "out_len",
        );
        null_arg(
            hhg_search_adopt_cell_order(raw, s, ptr::null_mut(), &mut count),
            "out_order",
        );
        null_arg(
            hhg_search_adopt_cell_order(raw, s, &mut order, ptr::null_mut()),
            "out_len",
        );
        assert_eq!(
            hhg_search_adopt_cell_order(raw, s + 1, &mut order, &mut count),
            HhgStatus::UnknownPointSet
        );
    }
    // A refused adoption changes nothing: the lists are still those of the last search.
    assert_eq!(search.set_count(), 1, "no refused call added a set");
    assert_eq!(search.neighbors(s, s).unwrap().indices, [1, 0]);
}

/// A new f64 search's handle, outside the freeing wrapper `Search`.
fn new_raw() -> *mut HhgSearch {
    let mut raw = ptr::null_mut();
    // SAFETY: `raw` is a writable handle location.
    assert_eq!(unsafe { hhg_search_new_f64(1.0, &mut raw) }, HhgStatus::Ok);
    assert!(!raw.is_null());
    raw
}

/// Asserts that `status` refuses the handle `raw` with a message that says `what`.
fn invalid_handle(status: HhgStatus, raw: *const HhgSearch, what: &str) {
    assert_eq!(status, HhgStatus::InvalidHandle, "{what}");
    let message = last_error();
    assert!(
        message.starts_with(&format!("argument `search` ({:#x}) ", raw.addr()))
            && message.contains(what),
        "{message}"
    );
}

#[test]
fn a_freed_search_is_refused_not_used() {
    let raw = new_raw();
    // SAFETY: `raw` is live and only this thread uses it.
    assert_eq!(unsafe { hhg_search_free(raw) }, HhgStatus::Ok);
    let (mut set, mut count) = (usize::MAX, usize::MAX);
    let mut precision = HhgPrecision::F32;
    let mut lists = HhgNeighborLists::default();
    let mut order = ptr::null();
    let point = [0.0f64; 3];
    // SAFETY: `raw` is freed, which every function checks before using any other argument;
    // the other pointers are valid anyway.
    unsafe {
        invalid_handle(
            hhg_search_add_set_f64(raw, point.as_ptr(), 1, true, &mut set),
            raw,
            "was already freed",
        );
        invalid_handle(
            hhg_search_update_set_soa_f64(raw, 0, &0.0, &0.0, &0.0, 1),
            raw,
            "was already freed",
        );
        invalid_handle(hhg_search_find_neighbors(raw), raw, "was already freed");
        invalid_handle(
            hhg_search_set_count(raw, &mut count),
            raw,
            "was already freed",
        );
        invalid_handle(
            hhg_search_precision(raw, &mut precision),
            raw,
            "was already freed",
        );
        invalid_handle(
            hhg_search_neighbors(raw, 0, 0, &mut lists),
            raw,
            "was already freed",
        );
        invalid_handle(
            hhg_search_adopt_cell_order(raw, 0, &mut order, &mut count),
            raw,
            "was already freed",
        );
    }
    assert_eq!(
        (set, count),
        (usize::MAX, usize::MAX),
        "no output was written"
    );
    assert_eq!(precision, HhgPrecision::F32);
}

#[test]
fn a_double_free_is_refused() {
    let raw = new_raw();
    // SAFETY: `raw` is live and only this thread uses it; the second free is checked.
    let statuses = unsafe { [hhg_search_free(raw), hhg_search_free(raw)] };
    assert_eq!(statuses[0], HhgStatus::Ok);
    invalid_handle(statuses[1], raw, "was already freed");
    // SAFETY: freeing NULL is a no-op.
    assert_eq!(unsafe { hhg_search_free(ptr::null_mut()) }, HhgStatus::Ok);
}

#[test]
fn made_up_handles_are_refused() {
    let mut local = 7u64;
    let mut made_up = vec![
        ptr::without_provenance_mut::<HhgSearch>(0x1234),
        ptr::from_mut(&mut local).cast::<HhgSearch>(),
        Box::into_raw(Box::new(0u64)).cast::<HhgSearch>(),
    ];
    // The tag and a slot no search has had yet (the 64-bit layout of the crate docs).
    #[cfg(target_pointer_width = "64")]
    let never_issued = ptr::without_provenance_mut::<HhgSearch>(0x4847 << 48 | 0xff_ffff);
    #[cfg(target_pointer_width = "64")]
    made_up.push(never_issued);
    let mut count = usize::MAX;
    for &raw in &made_up {
        // SAFETY: the value is checked before anything is read through it, and `count` is
        // writable.
        unsafe {
            invalid_handle(hhg_search_find_neighbors(raw), raw, "is not an hhg handle");
            invalid_handle(
                hhg_search_set_count(raw, &mut count),
                raw,
                "is not an hhg handle",
            );
            invalid_handle(hhg_search_free(raw), raw, "is not an hhg handle");
        }
    }
    #[cfg(target_pointer_width = "64")]
    assert!(last_error().ends_with("generation 0 was never issued)"));
    assert_eq!(count, usize::MAX);
    assert_eq!(local, 7, "a refused free touched nothing");
    // SAFETY: the box was made above and was not freed by the refused call.
    drop(unsafe { Box::from_raw(made_up[2].cast::<u64>()) });
}

#[test]
fn a_reused_slot_does_not_revive_an_old_handle() {
    /// The slot bits of a handle (the 64-bit layout of the crate docs).
    fn slot(raw: *const HhgSearch) -> usize {
        raw.addr() & 0xff_ffff
    }
    let mut reused = 0;
    for _ in 0..100 {
        let old = new_raw();
        // SAFETY: `old` is live and only this thread uses it.
        assert_eq!(unsafe { hhg_search_free(old) }, HhgStatus::Ok);
        let new = new_raw();
        assert_ne!(new, old, "a new search never gets a freed handle");
        if usize::BITS == 64 && slot(new) == slot(old) {
            reused += 1;
        }
        // SAFETY: `old` is freed, which is checked; `new` is live and only this thread uses
        // it.
        unsafe {
            invalid_handle(hhg_search_find_neighbors(old), old, "was already freed");
            invalid_handle(hhg_search_free(old), old, "was already freed");
            assert_eq!(hhg_search_find_neighbors(new), HhgStatus::Ok);
            assert_eq!(hhg_search_free(new), HhgStatus::Ok);
        }
    }
    // Other tests create searches on other threads meanwhile, but most iterations reuse the
    // slot just freed.
    assert!(usize::BITS != 64 || reused > 0, "no slot was reused");
}

#[test]
fn a_successful_free_keeps_the_last_error() {
    let raw = new_raw();
    // SAFETY: `raw` is live and only this thread uses it; the other handle is NULL.
    unsafe {
        assert_eq!(
            hhg_search_find_neighbors(ptr::null_mut()),
            HhgStatus::NullPointer
        );
        assert_eq!(hhg_search_free(raw), HhgStatus::Ok);
    }
    assert_eq!(last_error(), "argument `search` is NULL");
}

#[test]
fn threads_create_and_free_searches_concurrently() {
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..200 {
                    let raw = new_raw();
                    let mut count = usize::MAX;
                    // SAFETY: `raw` is live and only this thread uses it until it is freed;
                    // the calls after the free are checked.
                    unsafe {
                        assert_eq!(hhg_search_set_count(raw, &mut count), HhgStatus::Ok);
                        assert_eq!(hhg_search_free(raw), HhgStatus::Ok);
                        assert_eq!(hhg_search_free(raw), HhgStatus::InvalidHandle);
                        assert_eq!(
                            hhg_search_set_count(raw, &mut count),
                            HhgStatus::InvalidHandle
                        );
                    }
                    assert_eq!(count, 0);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}

#[test]
fn misaligned_arrays_are_refused() {
    let search = Search::<f64>::new(1.0).unwrap();
    let bytes = [0u8; 64];
    let base = bytes.as_ptr();
    let misaligned = base.wrapping_add(1 + base.align_offset(8)).cast::<f64>();
    let mut set = usize::MAX;
    // SAFETY: the handle is live and `misaligned` points into a 64-byte buffer holding the
    // 3 * 8 bytes the call would read; the call refuses the pointer without reading it.
    let status = unsafe { hhg_search_add_set_f64(search.raw, misaligned, 1, true, &mut set) };
    assert_eq!(status, HhgStatus::InvalidArgument);
    assert!(
        last_error().starts_with("argument `xyz` (0x")
            && last_error().ends_with("is not aligned to 8 bytes"),
        "{}",
        last_error()
    );
    let mut counts = [0usize; 2];
    let out = counts
        .as_mut_ptr()
        .cast::<u8>()
        .wrapping_add(1)
        .cast::<usize>();
    let point = [0.0f64; 3];
    // SAFETY: as above, for a misaligned output location inside `counts`.
    let status = unsafe { hhg_search_add_set_f64(search.raw, point.as_ptr(), 1, true, out) };
    assert_eq!(status, HhgStatus::InvalidArgument);
    assert_eq!(search.set_count(), 0);
}

#[test]
fn status_messages_describe_every_code() {
    let describe = |code: i32| {
        // SAFETY: hhg_error_message returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(hhg_error_message(code)) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(describe(HhgStatus::Ok as i32), "success");
    assert_eq!(
        describe(HhgStatus::NonFiniteCoordinate as i32),
        "a coordinate is NaN or infinite"
    );
    assert_eq!(
        describe(HhgStatus::InvalidHandle as i32),
        "the handle names no live search: it was freed, or never came from hhg_search_new_*"
    );
    assert_eq!(describe(1000), "unknown status code");
    // SAFETY: hhg_version returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(hhg_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

impl<T: CReal> Search<T> {
    /// Replaces set `set` by `points`, whatever their count.
    fn resize(&mut self, set: usize, points: &[[T; 3]]) -> Result<(), Failed> {
        // SAFETY: `points` holds `points.len()` points of 3 values each.
        check(unsafe { T::RESIZE(self.raw, set, points.as_ptr().cast(), points.len()) })
    }

    /// The neighbours of `point` in set `searched`, through a first call with `capacity`
    /// entries and, when they do not fit, a second with room for all.
    fn query(&self, searched: usize, point: [T; 3], capacity: usize) -> Result<Vec<u32>, Failed> {
        query_in_two_calls(capacity, |found, capacity, count| {
            // SAFETY: `point` holds 3 values, `found` `capacity` writable entries, `count` is
            // writable.
            unsafe { T::QUERY(self.raw, searched, point.as_ptr(), found, capacity, count) }
        })
    }
}

/// The indices of `points` within `radius` of `query` (distance <= radius), by brute force.
fn brute_force_query<T: Real>(points: &[[T; 3]], query: [T; 3], radius: T) -> Vec<u32> {
    let r2 = radius.to_f64() * radius.to_f64();
    (0..points.len() as u32)
        .filter(|&i| {
            let d2: f64 = (0..3)
                .map(|a| (points[i as usize][a].to_f64() - query[a].to_f64()).powi(2))
                .sum();
            d2 <= r2
        })
        .collect()
}

/// Resizing grows and shrinks a set (lists match hhg-core's on the new points), position
/// queries match brute force whatever the caller's capacity, and both refuse bad input with
/// the core's messages, leaving the set as it was.
fn resize_and_query<T: CReal>() {
    let mut rng = SplitMix64(11);
    let radius = T::from_f64(0.1);
    let fluid: Vec<[T; 3]> = random_points(&mut rng, 2000, 0.0, 1.0);
    let boundary: Vec<[T; 3]> = random_points(&mut rng, 700, -0.05, 1.1);
    let mut search = Search::<T>::new(radius).unwrap();
    let f = search.add(&fluid[..300], true).unwrap();
    let b = search.add(&boundary, false).unwrap();
    search.set_active(f, f, true).unwrap();
    search.set_active(f, b, true).unwrap();
    let mut core = NeighborSearch::new(radius).unwrap();
    core.add_dynamic_set(&fluid[..300]).unwrap();
    core.add_static_set(&boundary).unwrap();
    core.set_active(f, f, true).unwrap();
    core.set_active(f, b, true).unwrap();
    for n in [2000, 10, 0, 1200] {
        search.resize(f, &fluid[..n]).unwrap();
        assert_eq!(search.set_len(f).unwrap(), n);
        let (status, _) = search.neighbors(f, f).unwrap_err();
        assert_eq!(
            status,
            HhgStatus::NotSearched,
            "a resize makes the lists stale"
        );
        search.find().unwrap();
        core.replace_set(f, hhg_core::Points::Aos(&fluid[..n]))
            .unwrap();
        core.find_neighbors().unwrap();
        for searched in [f, b] {
            assert_eq!(
                search.neighbors(f, searched).unwrap(),
                core_lists(&core, f, searched)
            );
        }
    }
    for q in 0..300 {
        let point: [T; 3] = random_points(&mut rng, 1, -0.1, 1.2)[0];
        for (set, points) in [(f, &fluid[..1200]), (b, &boundary[..])] {
            let expected = brute_force_query(points, point, radius);
            for capacity in [0, 3, 64] {
                assert_eq!(
                    search.query(set, point, capacity).unwrap(),
                    expected,
                    "query {q} in set {set} with capacity {capacity}"
                );
            }
        }
    }
    // A point of the set is found at its own position.
    assert!(search.query(f, fluid[5], 8).unwrap().contains(&5));

    let mut bad = fluid[..50].to_vec();
    bad[7][2] = T::from_f64(f64::NAN);
    let (status, message) = search.resize(f, &bad).unwrap_err();
    assert_eq!(status, HhgStatus::NonFiniteCoordinate);
    assert!(message.contains("point 7"), "{message}");
    assert_eq!(
        search.set_len(f).unwrap(),
        1200,
        "a failed resize keeps the set"
    );
    let (status, message) = search.resize(9, &fluid[..5]).unwrap_err();
    assert_eq!(status, HhgStatus::UnknownPointSet);
    assert_eq!(message, "point set 9 does not exist (the search holds 2)");
    let (status, _) = search.query(9, fluid[0], 4).unwrap_err();
    assert_eq!(status, HhgStatus::UnknownPointSet);
    let nan = [T::from_f64(0.5), T::from_f64(f64::NAN), T::from_f64(0.5)];
    let (status, _) = search.query(f, nan, 4).unwrap_err();
    assert_eq!(status, HhgStatus::NonFiniteCoordinate);
    let mut count = 0usize;
    // SAFETY: NULL arrays with a capacity are refused before anything is read or written.
    let status = unsafe {
        T::QUERY(
            search.raw,
            f,
            fluid[0].as_ptr(),
            ptr::null_mut(),
            4,
            &mut count,
        )
    };
    assert_eq!(status, HhgStatus::NullPointer);
    assert!(last_error().contains("out_indices"), "{}", last_error());
}

#[test]
fn resize_and_query_point_f32() {
    resize_and_query::<f32>();
}

#[test]
fn resize_and_query_point_f64() {
    resize_and_query::<f64>();
}
