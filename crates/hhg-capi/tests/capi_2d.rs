//! C API tests of the 2-D search: the `_2d_` entry points called directly give brute force's lists, pairs, distances and queries on seeded random points of the plane, and every error path of the new functions returns its code and message.

use std::ffi::CStr;
use std::ptr;

use hhg::*;
use hhg_core::Real;

use crate::common::{Failed, SplitMix64, check, last_error, moved, query_in_two_calls};

type New<T> = unsafe extern "C" fn(T, *mut *mut HhgSearch) -> HhgStatus;
type Add<T> = unsafe extern "C" fn(*mut HhgSearch, *const T, usize, bool, *mut usize) -> HhgStatus;
type AddSoa<T> =
    unsafe extern "C" fn(*mut HhgSearch, *const T, *const T, usize, bool, *mut usize) -> HhgStatus;
type Update<T> = unsafe extern "C" fn(*mut HhgSearch, usize, *const T, usize) -> HhgStatus;
type UpdateSoa<T> =
    unsafe extern "C" fn(*mut HhgSearch, usize, *const T, *const T, usize) -> HhgStatus;
type Query<T> = unsafe extern "C" fn(
    *const HhgSearch,
    usize,
    *const T,
    *mut u32,
    usize,
    *mut usize,
) -> HhgStatus;

/// The 2-D entry points of one precision, so that tests run for both.
trait CReal: Real {
    const NEW: New<Self>;
    const ADD: Add<Self>;
    const ADD_SOA: AddSoa<Self>;
    const UPDATE: Update<Self>;
    const UPDATE_SOA: UpdateSoa<Self>;
    const RESIZE: Update<Self>;
    const QUERY: Query<Self>;
    /// The 3-D function that adds a set, to be refused on a 2-D search.
    const ADD_3D: Add<Self>;
    const PRECISION: HhgPrecision;

    /// This precision's distance field of a view, and whether the other one is NULL.
    fn distance_fields(f32s: *const f32, f64s: *const f64) -> (*const Self, bool);
}

impl CReal for f32 {
    const NEW: New<Self> = hhg_search_new_2d_f32;
    const ADD: Add<Self> = hhg_search_add_set_2d_f32;
    const ADD_SOA: AddSoa<Self> = hhg_search_add_set_soa_2d_f32;
    const UPDATE: Update<Self> = hhg_search_update_set_2d_f32;
    const UPDATE_SOA: UpdateSoa<Self> = hhg_search_update_set_soa_2d_f32;
    const RESIZE: Update<Self> = hhg_search_resize_set_2d_f32;
    const QUERY: Query<Self> = hhg_search_query_point_2d_f32;
    const ADD_3D: Add<Self> = hhg_search_add_set_f32;
    const PRECISION: HhgPrecision = HhgPrecision::F32;

    fn distance_fields(f32s: *const f32, f64s: *const f64) -> (*const Self, bool) {
        (f32s, f64s.is_null())
    }
}

impl CReal for f64 {
    const NEW: New<Self> = hhg_search_new_2d_f64;
    const ADD: Add<Self> = hhg_search_add_set_2d_f64;
    const ADD_SOA: AddSoa<Self> = hhg_search_add_set_soa_2d_f64;
    const UPDATE: Update<Self> = hhg_search_update_set_2d_f64;
    const UPDATE_SOA: UpdateSoa<Self> = hhg_search_update_set_soa_2d_f64;
    const RESIZE: Update<Self> = hhg_search_resize_set_2d_f64;
    const QUERY: Query<Self> = hhg_search_query_point_2d_f64;
    const ADD_3D: Add<Self> = hhg_search_add_set_f64;
    const PRECISION: HhgPrecision = HhgPrecision::F64;

    fn distance_fields(f32s: *const f32, f64s: *const f64) -> (*const Self, bool) {
        (f64s, f32s.is_null())
    }
}

/// The two coordinate columns of points of the plane.
fn columns<T: Real>(points: &[[T; 2]]) -> [Vec<T>; 2] {
    std::array::from_fn(|axis| points.iter().map(|p| p[axis]).collect())
}

/// Copies `len` values at `ptr`, which must not be NULL.
///
/// # Safety
///
/// `ptr` must point to `len` readable values (it may dangle when `len` is 0).
unsafe fn copied<V: Clone>(ptr: *const V, len: usize) -> Vec<V> {
    assert!(!ptr.is_null(), "a view array is NULL");
    // SAFETY: the caller guarantees `len` readable values at the non-NULL `ptr`.
    unsafe { std::slice::from_raw_parts(ptr, len) }.to_vec()
}

/// Lists copied out of a view: one list per point, and the squared distances when enabled.
type Lists<T> = (Vec<Vec<u32>>, Option<Vec<T>>);

/// Pairs copied out of a view, and their squared distances when enabled.
type Pairs<T> = (Vec<[u32; 2]>, Option<Vec<T>>);

/// A 2-D search handle used through the C API only, freed on drop.
struct Search2<T: CReal> {
    raw: *mut HhgSearch,
    _precision: std::marker::PhantomData<T>,
}

impl<T: CReal> Search2<T> {
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

    fn add(&mut self, points: &[[T; 2]], dynamic: bool) -> Result<usize, Failed> {
        let mut set = usize::MAX;
        // SAFETY: the handle is live, `points` holds `2 * len` values, `set` is writable.
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

    fn add_soa(&mut self, points: &[[T; 2]], dynamic: bool) -> Result<usize, Failed> {
        let [x, y] = columns(points);
        let mut set = usize::MAX;
        // SAFETY: the handle is live, each column holds `len` values, `set` is writable.
        check(unsafe {
            T::ADD_SOA(
                self.raw,
                x.as_ptr(),
                y.as_ptr(),
                points.len(),
                dynamic,
                &mut set,
            )
        })?;
        Ok(set)
    }

    fn update(&mut self, set: usize, points: &[[T; 2]]) -> Result<(), Failed> {
        // SAFETY: the handle is live and `points` holds `2 * len` values.
        check(unsafe { T::UPDATE(self.raw, set, points.as_ptr().cast(), points.len()) })
    }

    fn update_soa(&mut self, set: usize, points: &[[T; 2]]) -> Result<(), Failed> {
        let [x, y] = columns(points);
        // SAFETY: the handle is live and each column holds `len` values.
        check(unsafe { T::UPDATE_SOA(self.raw, set, x.as_ptr(), y.as_ptr(), points.len()) })
    }

    fn resize(&mut self, set: usize, points: &[[T; 2]]) -> Result<(), Failed> {
        // SAFETY: the handle is live and `points` holds `2 * len` values.
        check(unsafe { T::RESIZE(self.raw, set, points.as_ptr().cast(), points.len()) })
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

    fn set_max_entries(&mut self, cap: usize) -> Result<(), Failed> {
        // SAFETY: the handle is live.
        check(unsafe { hhg_search_set_max_entries(self.raw, cap) })
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

    fn precision_and_dimension(&self) -> (HhgPrecision, HhgDimension) {
        let mut precision = HhgPrecision::F32;
        let mut dimension = HhgDimension::Three;
        // SAFETY: the handle is live and both outputs are writable.
        unsafe {
            check(hhg_search_precision(self.raw, &mut precision)).unwrap();
            check(hhg_search_dimension(self.raw, &mut dimension)).unwrap();
        }
        (precision, dimension)
    }

    /// The lists of set `a` in set `b`, with their distances when enabled.
    fn neighbors(&self, a: usize, b: usize) -> Result<Lists<T>, Failed> {
        let mut view = HhgNeighborLists::default();
        // SAFETY: the handle is live and `view` is writable.
        check(unsafe { hhg_search_neighbors(self.raw, a, b, &mut view) })?;
        let (distances, other_null) = T::distance_fields(view.distances_f32, view.distances_f64);
        assert!(other_null, "the other precision's distances are NULL");
        // SAFETY: the view was just returned and the search is not changed while it is
        // copied: `count + 1` offsets, `total` indices and, when not NULL, `total` distances.
        unsafe {
            let offsets = copied(view.offsets, view.count + 1);
            assert_eq!(offsets[view.count], view.total);
            let indices = copied(view.indices, view.total);
            let lists = offsets
                .windows(2)
                .map(|w| indices[w[0]..w[1]].to_vec())
                .collect();
            let distances = (!distances.is_null()).then(|| copied(distances, view.total));
            Ok((lists, distances))
        }
    }

    fn pairs(&self, set: usize) -> Result<Pairs<T>, Failed> {
        let mut view = HhgPairList::default();
        // SAFETY: the handle is live and `view` is writable.
        check(unsafe { hhg_search_pairs(self.raw, set, &mut view) })?;
        let (distances, other_null) = T::distance_fields(view.distances_f32, view.distances_f64);
        assert!(other_null, "the other precision's distances are NULL");
        // SAFETY: the view was just returned: `2 * count` indices and, when not NULL, `count`
        // distances.
        unsafe {
            let flat = copied(view.pairs, 2 * view.count);
            let pairs = flat.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
            let distances = (!distances.is_null()).then(|| copied(distances, view.count));
            Ok((pairs, distances))
        }
    }

    fn order(&self, set: usize) -> Result<Vec<u32>, Failed> {
        let (mut order, mut len) = (ptr::null(), usize::MAX);
        // SAFETY: the handle is live and both outputs are writable.
        check(unsafe { hhg_search_order(self.raw, set, &mut order, &mut len) })?;
        // SAFETY: the array was just returned with its length.
        Ok(unsafe { copied(order, len) })
    }

    fn adopt_cell_order(&mut self, set: usize) -> Result<Vec<u32>, Failed> {
        let (mut order, mut len) = (ptr::null(), usize::MAX);
        // SAFETY: the handle is live and unshared, and both outputs are writable.
        check(unsafe { hhg_search_adopt_cell_order(self.raw, set, &mut order, &mut len) })?;
        // SAFETY: the array was just returned with its length.
        Ok(unsafe { copied(order, len) })
    }

    /// The neighbours of `point` in set `searched`, through a first call with `capacity`
    /// entries and, when they do not fit, a second with room for all.
    fn query(&self, searched: usize, point: [T; 2], capacity: usize) -> Result<Vec<u32>, Failed> {
        query_in_two_calls(capacity, |found, capacity, count| {
            // SAFETY: `point` holds 2 values, `found` `capacity` writable entries, `count` is
            // writable.
            unsafe { T::QUERY(self.raw, searched, point.as_ptr(), found, capacity, count) }
        })
    }
}

impl<T: CReal> Drop for Search2<T> {
    fn drop(&mut self) {
        // SAFETY: the handle came from hhg_search_new_2d_* and no other call uses it.
        let status = unsafe { hhg_search_free(self.raw) };
        if !std::thread::panicking() {
            assert_eq!(status, HhgStatus::Ok, "a live search is freed once");
        }
    }
}

/// The neighbour predicate of the contract, in `T`: `dx*dx + dy*dy <= r*r`.
fn within<T: Real>(p: [T; 2], q: [T; 2], radius: T) -> bool {
    T::plane_distance_squared(p, q) <= radius * radius
}

/// Brute force: the indices of `points` within the radius of `p`, ascending, but `skip`.
fn brute_list<T: Real>(points: &[[T; 2]], p: [T; 2], radius: T, skip: usize) -> Vec<u32> {
    (0..points.len())
        .filter(|&j| j != skip && within(p, points[j], radius))
        .map(|j| j as u32)
        .collect()
}

/// Brute force: the lists of `searching` in `searched` (`same` excludes each point itself).
fn brute_lists<T: Real>(
    searching: &[[T; 2]],
    searched: &[[T; 2]],
    radius: T,
    same: bool,
) -> Vec<Vec<u32>> {
    searching
        .iter()
        .enumerate()
        .map(|(i, &p)| brute_list(searched, p, radius, if same { i } else { usize::MAX }))
        .collect()
}

/// Random points of the plane in `[lo, lo + size)^2`, with lattice points of spacing
/// `radius` among them: pairs at exactly the radius, on cell borders.
fn scene<T: Real>(rng: &mut SplitMix64, n: usize, lo: f64, size: f64, radius: f64) -> Vec<[T; 2]> {
    let mut points: Vec<[T; 2]> = (0..n)
        .map(|_| std::array::from_fn(|_| T::from_f64(rng.range(lo, lo + size))))
        .collect();
    for i in 0..8 {
        for j in 0..8 {
            points.push([
                T::from_f64(lo + radius * f64::from(i)),
                T::from_f64(lo + radius * f64::from(j)),
            ]);
        }
    }
    points
}

/// Checks every list of the active pairs of sets against brute force, the distances bit
/// for bit, and that an inactive pair is refused.
fn check_lists<T: CReal>(what: &str, search: &Search2<T>, fluid: &[[T; 2]], wall: &[[T; 2]]) {
    let radius = T::from_f64(0.5);
    let sets = [fluid, wall];
    let mut entries = 0;
    for (a, c) in [(0, 0), (0, 1), (1, 0)] {
        let (lists, distances) = search.neighbors(a, c).unwrap();
        let expected = brute_lists(sets[a], sets[c], radius, a == c);
        assert_eq!(lists, expected, "{what}: set {a} in set {c}");
        entries += lists.iter().map(Vec::len).sum::<usize>();
        if let Some(distances) = distances {
            let flat = lists.iter().enumerate().flat_map(|(i, list)| {
                list.iter()
                    .map(move |&j| T::plane_distance_squared(sets[a][i], sets[c][j as usize]))
            });
            let expected: Vec<u64> = flat.map(|d| d.to_f64().to_bits()).collect();
            let found: Vec<u64> = distances.iter().map(|d| d.to_f64().to_bits()).collect();
            assert_eq!(found, expected, "{what}: distances of set {a} in set {c}");
        }
    }
    assert!(
        entries > 1000,
        "{what}: the scene has neighbours ({entries})"
    );
    assert_eq!(
        search.neighbors(1, 1).unwrap_err().0,
        HhgStatus::NotSearched
    );
}

/// Checks the unique pairs of a set against brute force (as a sorted set of pairs), their
/// distances against the lists' formula, and their order against a second read.
fn check_pairs<T: CReal>(
    what: &str,
    search: &Search2<T>,
    set: usize,
    points: &[[T; 2]],
    distances: bool,
) {
    let radius = T::from_f64(0.5);
    let (pairs, found_distances) = search.pairs(set).unwrap();
    assert_eq!(found_distances.is_some(), distances, "{what}: distances");
    if let Some(found) = &found_distances {
        for (k, &[i, j]) in pairs.iter().enumerate() {
            let expected = T::plane_distance_squared(points[i as usize], points[j as usize]);
            assert_eq!(
                found[k].to_f64().to_bits(),
                expected.to_f64().to_bits(),
                "{what}: pair {k}"
            );
        }
    }
    let mut sorted = pairs;
    assert!(sorted.iter().all(|&[i, j]| i < j), "{what}: i < j");
    sorted.sort_unstable();
    let mut expected = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            if within(points[i], points[j], radius) {
                expected.push([i as u32, j as u32]);
            }
        }
    }
    assert_eq!(sorted, expected, "{what}: pairs of set {set}");
}

/// Checks position queries against brute force, on random positions and on the points.
fn check_queries<T: CReal>(
    rng: &mut SplitMix64,
    search: &Search2<T>,
    set: usize,
    points: &[[T; 2]],
) {
    let radius = T::from_f64(0.5);
    for k in 0..40 {
        let point = if k % 2 == 0 {
            points[(rng.next() % points.len() as u64) as usize]
        } else {
            [
                T::from_f64(rng.range(-6.0, 6.0)),
                T::from_f64(rng.range(-6.0, 6.0)),
            ]
        };
        let expected = brute_list(points, point, radius, usize::MAX);
        assert_eq!(search.query(set, point, 2).unwrap(), expected, "query {k}");
    }
}

/// Checks that `order` is a permutation of `0..n`.
fn assert_permutation(order: &[u32], n: usize) {
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    assert!(
        sorted.iter().copied().eq(0..n as u32),
        "a permutation of {n} points"
    );
}

/// Runs a fluid (dynamic, AoS) and a wall (static, SoA) of the plane through the C API over
/// four steps (AoS update, SoA update, adopted cell order, resize) against brute force.
fn matches_brute_force<T: CReal>(seed: u64, with_distances: bool) {
    let mut rng = SplitMix64(seed);
    let radius = T::from_f64(0.5);
    let mut fluid = scene::<T>(&mut rng, 1500, -4.0, 8.0, 0.5);
    let wall = scene::<T>(&mut rng, 600, -5.0, 10.0, 0.5);

    let mut search = Search2::<T>::new(radius).unwrap();
    assert_eq!(
        search.precision_and_dimension(),
        (T::PRECISION, HhgDimension::Two)
    );
    search.set_with_distances(with_distances).unwrap();
    let f = search.add(&fluid, true).unwrap();
    let w = search.add_soa(&wall, false).unwrap();
    assert_eq!((f, w, search.set_count()), (0, 1, 2));
    assert_eq!(search.set_len(f).unwrap(), fluid.len());
    assert_eq!(search.set_len(w).unwrap(), wall.len());
    for (a, c) in [(f, f), (f, w), (w, f)] {
        search.set_active(a, c, true).unwrap();
    }
    search.set_pairs(f, true).unwrap();
    search.set_pairs(w, true).unwrap();
    let mut refused = usize::MAX;
    let origin = [T::from_f64(0.0); 3];
    // SAFETY: the handle is live, `origin` holds one 3-D point, `refused` is writable.
    let status = unsafe { T::ADD_3D(search.raw, origin.as_ptr(), 1, true, &mut refused) };
    assert_eq!((status, refused), (HhgStatus::WrongDimension, usize::MAX));
    assert_eq!(search.set_count(), 2);
    assert_eq!(
        search.neighbors(f, f).unwrap_err().0,
        HhgStatus::NotSearched
    );
    assert_eq!(search.pairs(f).unwrap_err().0, HhgStatus::NotSearched);

    for step in 0..4 {
        match step {
            1 => {
                fluid = moved(&mut rng, &fluid);
                search.update(f, &fluid).unwrap();
            }
            2 => {
                fluid = moved(&mut rng, &fluid);
                search.update_soa(f, &fluid).unwrap();
                let before = search.order(f).unwrap();
                let order = search.adopt_cell_order(f).unwrap();
                assert_eq!(order, before, "the adopted order is the set's order");
                assert!(
                    order.iter().enumerate().any(|(k, &i)| k != i as usize),
                    "the fluid was in cell order already, the step would be vacuous"
                );
                assert_eq!(
                    search.neighbors(f, f).unwrap_err().0,
                    HhgStatus::NotSearched
                );
                fluid = order.iter().map(|&i| fluid[i as usize]).collect();
            }
            3 => {
                fluid.truncate(fluid.len() - 300);
                search.resize(f, &fluid).unwrap();
                assert_eq!(search.set_len(f).unwrap(), fluid.len());
            }
            _ => {}
        }
        search.find().unwrap();
        let what = format!("seed {seed}, step {step}");
        check_lists(&what, &search, &fluid, &wall);
        check_pairs(&what, &search, f, &fluid, with_distances);
        check_pairs(&what, &search, w, &wall, with_distances);
        check_queries(&mut rng, &search, f, &fluid);
        check_queries(&mut rng, &search, w, &wall);
        assert_permutation(&search.order(f).unwrap(), fluid.len());
        assert_permutation(&search.order(w).unwrap(), wall.len());
    }

    // Deactivation, then a cap the fluid's lists exceed.
    search.set_active(w, f, false).unwrap();
    search.find().unwrap();
    assert_eq!(
        search.neighbors(w, f).unwrap_err().0,
        HhgStatus::NotSearched
    );
    search.set_max_entries(10).unwrap();
    assert_eq!(search.find().unwrap_err().0, HhgStatus::OutputTooLarge);
}

#[test]
fn lists_pairs_and_queries_match_brute_force_f32() {
    matches_brute_force::<f32>(1, false);
    matches_brute_force::<f32>(2, true);
}

#[test]
fn lists_pairs_and_queries_match_brute_force_f64() {
    matches_brute_force::<f64>(3, false);
    matches_brute_force::<f64>(4, true);
}

/// A 3-D search handle for the dimension checks, freed by the caller.
fn new_3d() -> *mut HhgSearch {
    let mut raw = ptr::null_mut();
    // SAFETY: `raw` is a writable handle location.
    check(unsafe { hhg_search_new_f64(1.0, &mut raw) }).unwrap();
    raw
}

#[test]
fn the_wrong_dimension_is_refused() {
    let mut plane = Search2::<f64>::new(1.0).unwrap();
    let set = plane.add(&[[0.0, 0.0], [0.5, 0.0]], true).unwrap();
    let space = new_3d();
    let xyz = [0.0f64; 6];
    let (mut out, mut count) = (usize::MAX, usize::MAX);
    let to_2d = "a 3-D point function was called on a 2-D search (made by hhg_search_new_2d_*); \
                 use its _2d_f32 or _2d_f64 form, which takes (x, y) points";
    let to_3d = "a _2d_ point function was called on a 3-D search (made by hhg_search_new_f32 \
                 or hhg_search_new_f64); use the form without _2d_, which takes (x, y, z) points";
    // SAFETY: both handles are live, every array holds what its call reads, outputs are
    // writable.
    let on_plane = unsafe {
        [
            hhg_search_add_set_f64(plane.raw, xyz.as_ptr(), 2, true, &mut out),
            hhg_search_add_set_soa_f64(plane.raw, &0.0, &0.0, &0.0, 1, true, &mut out),
            hhg_search_update_set_f64(plane.raw, set, xyz.as_ptr(), 2),
            hhg_search_update_set_soa_f64(plane.raw, set, &0.0, &0.0, &0.0, 1),
            hhg_search_resize_set_f64(plane.raw, set, xyz.as_ptr(), 2),
            hhg_search_query_point_f64(
                plane.raw,
                set,
                xyz.as_ptr(),
                ptr::null_mut(),
                0,
                &mut count,
            ),
            // The wrong precision too: the dimension is reported first.
            hhg_search_add_set_f32(plane.raw, [0.0f32; 3].as_ptr(), 1, true, &mut out),
        ]
    };
    for status in on_plane {
        assert_eq!(status, HhgStatus::WrongDimension);
    }
    assert_eq!(last_error(), to_2d);
    // SAFETY: as above.
    let on_space = unsafe {
        [
            hhg_search_add_set_2d_f64(space, xyz.as_ptr(), 3, true, &mut out),
            hhg_search_add_set_soa_2d_f64(space, &0.0, &0.0, 1, true, &mut out),
            hhg_search_update_set_2d_f64(space, 0, xyz.as_ptr(), 3),
            hhg_search_update_set_soa_2d_f64(space, 0, &0.0, &0.0, 1),
            hhg_search_resize_set_2d_f64(space, 0, xyz.as_ptr(), 3),
            hhg_search_query_point_2d_f64(space, 0, xyz.as_ptr(), ptr::null_mut(), 0, &mut count),
            hhg_search_add_set_2d_f32(space, [0.0f32; 2].as_ptr(), 1, true, &mut out),
        ]
    };
    for status in on_space {
        assert_eq!(status, HhgStatus::WrongDimension);
    }
    assert_eq!(last_error(), to_3d);
    assert_eq!(
        (out, count),
        (usize::MAX, usize::MAX),
        "failed calls leave outputs alone"
    );
    // The right dimension in the wrong precision is a precision mismatch.
    // SAFETY: the handle is live, the array holds one point, `out` is writable.
    let status =
        unsafe { hhg_search_add_set_2d_f32(plane.raw, [0.0f32; 2].as_ptr(), 1, true, &mut out) };
    assert_eq!(status, HhgStatus::PrecisionMismatch);
    assert_eq!(
        last_error(),
        "an _f32 function was called on an f64 search; use the _f64 one"
    );
    assert_eq!(
        (plane.set_count(), plane.set_len(set).unwrap()),
        (1, 2),
        "nothing changed"
    );
    let mut dimension = HhgDimension::Two;
    // SAFETY: `space` is live and `dimension` writable; then it is freed once.
    unsafe {
        check(hhg_search_dimension(space, &mut dimension)).unwrap();
        assert_eq!(hhg_search_free(space), HhgStatus::Ok);
    }
    assert_eq!(dimension, HhgDimension::Three);
    // SAFETY: hhg_error_message returns a static NUL-terminated string.
    let description =
        unsafe { CStr::from_ptr(hhg_error_message(HhgStatus::WrongDimension as i32)) };
    assert_eq!(
        description.to_str().unwrap(),
        "the function's dimension (2-D or 3-D) differs from the search's"
    );
    // Every function without points works on a 2-D search; the adopted order of a set that
    // is in cell order already is the identity.
    plane.set_active(set, set, true).unwrap();
    plane.find().unwrap();
    assert_eq!(plane.neighbors(set, set).unwrap().0, vec![vec![1], vec![0]]);
    assert_eq!(plane.adopt_cell_order(set).unwrap().len(), 2);
}

#[test]
fn non_finite_coordinates_name_their_point_and_axis() {
    let mut search = Search2::<f32>::new(1.0).unwrap();
    let mut points = vec![[0.0f32, 1.0]; 5];
    points[3][1] = f32::NAN;
    let failed = search.add(&points, true).unwrap_err();
    assert_eq!(
        failed,
        (
            HhgStatus::NonFiniteCoordinate,
            "point 3 has a non-finite y coordinate (NaN)".to_owned()
        )
    );
    points[3] = [f32::NEG_INFINITY, 0.0];
    let failed = search.add_soa(&points, false).unwrap_err();
    assert_eq!(
        failed,
        (
            HhgStatus::NonFiniteCoordinate,
            "point 3 has a non-finite x coordinate (-inf)".to_owned()
        )
    );
    assert_eq!(search.set_count(), 0, "nothing was added");
    points[3] = [2.0, 2.0];
    let set = search.add(&points, true).unwrap();
    points[4][0] = f32::INFINITY;
    assert_eq!(
        search.update(set, &points).unwrap_err().0,
        HhgStatus::NonFiniteCoordinate
    );
    assert_eq!(
        search.update_soa(set, &points).unwrap_err().0,
        HhgStatus::NonFiniteCoordinate
    );
    assert_eq!(last_error(), "point 4 has a non-finite x coordinate (inf)");
    assert_eq!(
        search.resize(set, &points[1..]).unwrap_err(),
        (
            HhgStatus::NonFiniteCoordinate,
            "point 3 has a non-finite x coordinate (inf)".to_owned()
        )
    );
    assert_eq!(search.set_len(set).unwrap(), 5, "the set keeps its points");
    assert_eq!(
        search.query(set, [0.0, f32::NAN], 4).unwrap_err().0,
        HhgStatus::NonFiniteCoordinate
    );
    assert_eq!(last_error(), "point 0 has a non-finite y coordinate (NaN)");
    // Counts and set ids.
    assert_eq!(
        search.update(set, &points[1..]).unwrap_err().0,
        HhgStatus::PointCountChanged
    );
    assert_eq!(
        search.update(7, &points).unwrap_err().0,
        HhgStatus::UnknownPointSet
    );
    assert_eq!(
        search.query(7, [0.0, 0.0], 4).unwrap_err().0,
        HhgStatus::UnknownPointSet
    );
    // Radii.
    for radius in [0.0f32, -1.0, f32::NAN, f32::INFINITY] {
        assert_eq!(
            Search2::<f32>::new(radius).err().unwrap().0,
            HhgStatus::InvalidRadius
        );
    }
}

#[test]
fn null_pointers_of_the_2d_functions_are_refused() {
    let null = |status: HhgStatus, argument: &str| {
        assert_eq!(status, HhgStatus::NullPointer, "{argument}");
        assert_eq!(last_error(), format!("argument `{argument}` is NULL"));
    };
    let mut search = Search2::<f64>::new(1.0).unwrap();
    let set = search.add(&[[0.0, 0.0]], true).unwrap();
    let raw = search.raw;
    let xy = [0.0f64; 2];
    let (mut out, mut count) = (usize::MAX, usize::MAX);
    let mut found = [0u32; 4];
    // SAFETY: every non-NULL pointer is valid for what the call reads or writes; the NULL
    // ones are what is tested.
    unsafe {
        null(hhg_search_new_2d_f64(1.0, ptr::null_mut()), "out_search");
        null(hhg_search_new_2d_f32(1.0, ptr::null_mut()), "out_search");
        null(hhg_search_dimension(raw, ptr::null_mut()), "out_dimension");
        null(
            hhg_search_dimension(ptr::null(), &mut HhgDimension::Two),
            "search",
        );
        null(
            hhg_search_add_set_2d_f64(ptr::null_mut(), xy.as_ptr(), 1, true, &mut out),
            "search",
        );
        null(
            hhg_search_add_set_2d_f64(raw, ptr::null(), 1, true, &mut out),
            "xy",
        );
        null(
            hhg_search_add_set_2d_f64(raw, xy.as_ptr(), 1, true, ptr::null_mut()),
            "out_set",
        );
        null(
            hhg_search_add_set_soa_2d_f64(raw, ptr::null(), &0.0, 1, true, &mut out),
            "x",
        );
        null(
            hhg_search_add_set_soa_2d_f64(raw, &0.0, ptr::null(), 1, true, &mut out),
            "y",
        );
        null(hhg_search_update_set_2d_f64(raw, set, ptr::null(), 1), "xy");
        null(
            hhg_search_update_set_soa_2d_f64(raw, set, &0.0, ptr::null(), 1),
            "y",
        );
        null(hhg_search_resize_set_2d_f64(raw, set, ptr::null(), 1), "xy");
        null(
            hhg_search_query_point_2d_f64(raw, set, ptr::null(), found.as_mut_ptr(), 4, &mut count),
            "xy",
        );
        null(
            hhg_search_query_point_2d_f64(
                raw,
                set,
                xy.as_ptr(),
                found.as_mut_ptr(),
                4,
                ptr::null_mut(),
            ),
            "out_count",
        );
        null(
            hhg_search_query_point_2d_f64(raw, set, xy.as_ptr(), ptr::null_mut(), 4, &mut count),
            "out_indices",
        );
        // Empty arrays may be NULL.
        check(hhg_search_add_set_2d_f64(
            raw,
            ptr::null(),
            0,
            false,
            &mut out,
        ))
        .unwrap();
        check(hhg_search_resize_set_2d_f64(raw, out, ptr::null(), 0)).unwrap();
    }
    assert_eq!((out, count), (1, usize::MAX));
    assert_eq!(search.set_count(), 2);
    search.set_active(0, 1, true).unwrap();
    search.find().unwrap();
    assert_eq!(search.neighbors(0, 1).unwrap().0, vec![Vec::<u32>::new()]);
}
