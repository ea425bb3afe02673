//! The search handle and its entry points: creation in either precision, point sets from AoS
//! or SoA arrays, activation, the search itself, and zero-copy views of its results.

use std::ops::{Deref, DerefMut};
use std::ptr;

use hhg_core::{Error, NeighborLists, NeighborSearch, PairList, Points, Real, SetId, check_count};

use crate::args::{handle, handle_mut, input, output};
use crate::status::{Failure, HhgStatus, guard};

/// An opaque neighbour search over several point sets sharing one radius, in one precision
/// (`float` or `double`, fixed at creation).
///
/// Create it with `hhg_search_new_f32` or `hhg_search_new_f64` and free it with
/// `hhg_search_free`. Functions that take it as `const HhgSearch *` only read it and may run
/// concurrently with each other; a function that takes `HhgSearch *` must not run
/// concurrently with any other call on the same search.
pub struct HhgSearch {
    inner: Inner,
    /// Set when a panic unwound through a call that was changing the search: its state may be
    /// inconsistent, so every later call refuses it.
    poisoned: bool,
}

/// The precision of a search.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HhgPrecision {
    /// Coordinates, radius and distances are `float`.
    F32 = 32,
    /// Coordinates, radius and distances are `double`.
    F64 = 64,
}

/// A borrowed view of neighbour lists in compressed sparse row form.
///
/// The neighbours of point `i` of the searching set are
/// `indices[offsets[i]] .. indices[offsets[i + 1] - 1]`, in ascending order and numbered as
/// the searched set was given; there are `offsets[i + 1] - offsets[i]` of them. A set
/// searching itself does not list a point as its own neighbour.
///
/// The arrays belong to the search: they stay valid until the next call that takes the
/// search as a non-const `HhgSearch *` (including `hhg_search_free`). Do not free them.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HhgNeighborLists {
    /// Number of lists: the point count of the searching set.
    pub count: usize,
    /// Number of entries of all lists together: `offsets[count]`.
    pub total: usize,
    /// `count + 1` offsets into `indices`, ascending from `offsets[0] = 0`.
    pub offsets: *const usize,
    /// `total` neighbour indices, list after list.
    pub indices: *const u32,
    /// `total` squared distances alongside `indices` when the search is f32 and distances
    /// are enabled (`hhg_search_set_with_distances`); NULL otherwise.
    pub distances_f32: *const f32,
    /// `total` squared distances alongside `indices` when the search is f64 and distances
    /// are enabled (`hhg_search_set_with_distances`); NULL otherwise.
    pub distances_f64: *const f64,
}

impl Default for HhgNeighborLists {
    fn default() -> Self {
        Self {
            count: 0,
            total: 0,
            offsets: ptr::null(),
            indices: ptr::null(),
            distances_f32: ptr::null(),
            distances_f64: ptr::null(),
        }
    }
}

/// A borrowed view of the unique neighbour pairs within one point set.
///
/// Pair `k` is `(pairs[2 * k], pairs[2 * k + 1])`, the first index smaller than the second,
/// numbered as the set was given; every pair within the radius appears exactly once, in an
/// order that is the same for any thread count.
///
/// The arrays belong to the search: they stay valid until the next call that takes the
/// search as a non-const `HhgSearch *` (including `hhg_search_free`). Do not free them.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HhgPairList {
    /// Number of pairs.
    pub count: usize,
    /// `2 * count` point indices, two per pair.
    pub pairs: *const u32,
    /// `count` squared distances, one per pair, when the search is f32 and distances are
    /// enabled (`hhg_search_set_with_distances`); NULL otherwise.
    pub distances_f32: *const f32,
    /// `count` squared distances, one per pair, when the search is f64 and distances are
    /// enabled (`hhg_search_set_with_distances`); NULL otherwise.
    pub distances_f64: *const f64,
}

impl Default for HhgPairList {
    fn default() -> Self {
        Self {
            count: 0,
            pairs: ptr::null(),
            distances_f32: ptr::null(),
            distances_f64: ptr::null(),
        }
    }
}

/// The search in the precision it was created with.
enum Inner {
    F32(State<f32>),
    F64(State<f64>),
}

/// Runs `$body` with `$state` bound to the search's state, whatever its precision.
macro_rules! dispatch {
    ($inner:expr, $state:ident => $body:expr) => {
        match $inner {
            Inner::F32($state) => $body,
            Inner::F64($state) => $body,
        }
    };
}

/// The two precisions, tied to the variants of [`Inner`].
trait Precision: Real {
    /// The suffix of this precision's functions.
    const NAME: &'static str;

    /// Wraps a state of this precision.
    fn wrap(state: State<Self>) -> Inner;

    /// The state, when the search has this precision.
    fn state_mut(inner: &mut Inner) -> Option<&mut State<Self>>;

    /// Splits a distance array into the `(f32, f64)` fields of a view; the other is NULL.
    fn distance_fields(distances: Option<&[Self]>) -> (*const f32, *const f64);
}

impl Precision for f32 {
    const NAME: &'static str = "f32";

    fn wrap(state: State<Self>) -> Inner {
        Inner::F32(state)
    }

    fn state_mut(inner: &mut Inner) -> Option<&mut State<Self>> {
        match inner {
            Inner::F32(state) => Some(state),
            Inner::F64(_) => None,
        }
    }

    fn distance_fields(distances: Option<&[Self]>) -> (*const f32, *const f64) {
        (distances.map_or(ptr::null(), <[f32]>::as_ptr), ptr::null())
    }
}

impl Precision for f64 {
    const NAME: &'static str = "f64";

    fn wrap(state: State<Self>) -> Inner {
        Inner::F64(state)
    }

    fn state_mut(inner: &mut Inner) -> Option<&mut State<Self>> {
        match inner {
            Inner::F64(state) => Some(state),
            Inner::F32(_) => None,
        }
    }

    fn distance_fields(distances: Option<&[Self]>) -> (*const f32, *const f64) {
        (ptr::null(), distances.map_or(ptr::null(), <[f64]>::as_ptr))
    }
}

/// A point set's settings and unique pairs, next to its grid in the core search.
struct SetState<T: Real> {
    dynamic: bool,
    pairs_enabled: bool,
    /// `pairs` holds the pairs of the set's current positions.
    pairs_fresh: bool,
    pairs: PairList<T>,
}

/// A search in one precision: the core search plus the unique pairs per set.
struct State<T: Real> {
    search: NeighborSearch<T>,
    sets: Vec<SetState<T>>,
    with_distances: bool,
}

/// A single `0` offset: the offsets of zero lists, for lists that were never assembled.
static NO_LISTS: [usize; 1] = [0];

impl<T: Precision> State<T> {
    fn new(radius: T) -> Result<Self, Error> {
        Ok(Self {
            search: NeighborSearch::new(radius)?,
            sets: Vec::new(),
            with_distances: false,
        })
    }

    fn check_set(&self, set: SetId) -> Result<(), Error> {
        if set >= self.sets.len() {
            return Err(Error::UnknownPointSet {
                set,
                sets: self.sets.len(),
            });
        }
        Ok(())
    }

    fn add(&mut self, points: Points<'_, T>, dynamic: bool) -> Result<SetId, Error> {
        let set = match points {
            Points::Aos(points) if dynamic => self.search.add_dynamic_set(points)?,
            Points::Aos(points) => self.search.add_static_set(points)?,
            Points::Soa(x, y, z) => self.search.add_set_soa(x, y, z, dynamic)?,
        };
        self.sets.push(SetState {
            dynamic,
            pairs_enabled: false,
            pairs_fresh: false,
            pairs: PairList::default(),
        });
        Ok(set)
    }

    fn update(&mut self, set: SetId, points: Points<'_, T>) -> Result<(), Error> {
        match points {
            Points::Aos(points) => self.search.update_positions(set, points)?,
            Points::Soa(x, y, z) => self.search.update_positions_soa(set, x, y, z)?,
        }
        self.sets[set].pairs_fresh = false;
        Ok(())
    }

    fn set_pairs(&mut self, set: SetId, enabled: bool) -> Result<(), Error> {
        self.check_set(set)?;
        let state = &mut self.sets[set];
        state.pairs_enabled = enabled;
        if !enabled {
            state.pairs_fresh = false;
        }
        Ok(())
    }

    fn set_with_distances(&mut self, with_distances: bool) {
        if self.with_distances != with_distances {
            self.with_distances = with_distances;
            self.search.set_with_distances(with_distances);
            for set in &mut self.sets {
                set.pairs_fresh = false;
            }
        }
    }

    fn find(&mut self) -> Result<(), Error> {
        self.search.find_neighbors()?;
        for (id, set) in self.sets.iter_mut().enumerate() {
            if !set.pairs_enabled || (set.pairs_fresh && !set.dynamic) {
                continue;
            }
            let Some(grid) = self.search.grid(id) else {
                continue;
            };
            if self.with_distances {
                grid.pairs_with_distances(&mut set.pairs);
            } else {
                grid.pairs(&mut set.pairs);
            }
            set.pairs_fresh = true;
        }
        Ok(())
    }

    fn neighbors(&self, searching: SetId, searched: SetId) -> Result<HhgNeighborLists, Failure> {
        self.check_set(searching)?;
        self.check_set(searched)?;
        let Some(lists) = self.search.neighbors(searching, searched) else {
            let why = if self.search.is_active(searching, searched) {
                "was not searched since it was activated or a set changed: call \
                 hhg_search_find_neighbors first"
            } else {
                "is not active: call hhg_search_set_active, then hhg_search_find_neighbors"
            };
            return Err(Failure::new(
                HhgStatus::NotSearched,
                format!("set {searching} searching set {searched} {why}"),
            ));
        };
        Ok(lists_view(lists))
    }

    fn pairs(&self, set: SetId) -> Result<HhgPairList, Failure> {
        self.check_set(set)?;
        let state = &self.sets[set];
        if !state.pairs_fresh {
            let why = if state.pairs_enabled {
                "were not computed since they were enabled or the set changed: call \
                 hhg_search_find_neighbors first"
            } else {
                "are not enabled: call hhg_search_set_pairs, then hhg_search_find_neighbors"
            };
            return Err(Failure::new(
                HhgStatus::NotSearched,
                format!("the unique pairs of set {set} {why}"),
            ));
        }
        let pairs = state.pairs.pairs();
        let (distances_f32, distances_f64) = T::distance_fields(state.pairs.distances_squared());
        Ok(HhgPairList {
            count: pairs.len(),
            pairs: pairs.as_ptr().cast::<u32>(),
            distances_f32,
            distances_f64,
        })
    }

    fn order(&self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        Ok(self.search.grid(set).map_or(&[], |grid| grid.order()))
    }

    fn adopt_cell_order(&mut self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        self.sets[set].pairs_fresh = false;
        self.search.adopt_cell_order(set)
    }

    fn set_len(&self, set: SetId) -> Result<usize, Error> {
        self.check_set(set)?;
        Ok(self.search.grid(set).map_or(0, |grid| grid.len()))
    }
}

/// The view of `lists`, pointing into its buffers.
fn lists_view<T: Precision>(lists: &NeighborLists<T>) -> HhgNeighborLists {
    let offsets = match lists.offsets() {
        [] => &NO_LISTS[..],
        offsets => offsets,
    };
    let indices = lists.indices();
    let (distances_f32, distances_f64) = T::distance_fields(lists.distances_squared());
    HhgNeighborLists {
        count: offsets.len() - 1,
        total: indices.len(),
        offsets: offsets.as_ptr(),
        indices: indices.as_ptr(),
        distances_f32,
        distances_f64,
    }
}

impl HhgSearch {
    /// The precision the search was created with.
    fn precision(&self) -> HhgPrecision {
        match self.inner {
            Inner::F32(_) => HhgPrecision::F32,
            Inner::F64(_) => HhgPrecision::F64,
        }
    }

    /// Refuses a search that an earlier panic left in an unknown state.
    fn check_usable(&self) -> Result<(), Failure> {
        if self.poisoned {
            return Err(Failure::new(
                HhgStatus::InternalError,
                "the search was left unusable by an earlier internal error; free it with \
                 hhg_search_free",
            ));
        }
        Ok(())
    }

    /// The state in precision `T`, or a precision mismatch.
    fn state_mut<T: Precision>(&mut self) -> Result<&mut State<T>, Failure> {
        let precision = self.precision();
        T::state_mut(&mut self.inner).ok_or_else(|| {
            let actual = match precision {
                HhgPrecision::F32 => "f32",
                HhgPrecision::F64 => "f64",
            };
            Failure::new(
                HhgStatus::PrecisionMismatch,
                format!(
                    "an _{} function was called on an {actual} search; use the _{actual} one",
                    T::NAME
                ),
            )
        })
    }
}

/// Mutable access to a search that marks it unusable when a panic unwinds through the call.
struct Access<'a>(&'a mut HhgSearch);

impl Deref for Access<'_> {
    type Target = HhgSearch;

    fn deref(&self) -> &HhgSearch {
        self.0
    }
}

impl DerefMut for Access<'_> {
    fn deref_mut(&mut self) -> &mut HhgSearch {
        self.0
    }
}

impl Drop for Access<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned = true;
        }
    }
}

/// Borrows a usable search for a call that changes it.
///
/// # Safety
///
/// `search` must be NULL or a live handle from `hhg_search_new_*` that nothing else accesses
/// during the call.
unsafe fn search_mut<'a>(search: *mut HhgSearch) -> Result<Access<'a>, Failure> {
    // SAFETY: the caller's contract is `handle_mut`'s.
    let search = unsafe { handle_mut(search, "search") }?;
    search.check_usable()?;
    Ok(Access(search))
}

/// Borrows a usable search for a call that reads it.
///
/// # Safety
///
/// `search` must be NULL or a live handle from `hhg_search_new_*` that nothing changes
/// during the call.
unsafe fn search_ref<'a>(search: *const HhgSearch) -> Result<&'a HhgSearch, Failure> {
    // SAFETY: the caller's contract is `handle`'s.
    let search = unsafe { handle(search, "search") }?;
    search.check_usable()?;
    Ok(search)
}

/// Point coordinates as the caller passed them.
#[derive(Clone, Copy)]
enum RawPoints<T> {
    /// `x0, y0, z0, x1, y1, z1, ...`.
    Aos(*const T),
    /// Separate `x`, `y` and `z` arrays.
    Soa(*const T, *const T, *const T),
}

/// Borrows `n` points from the caller's arrays.
///
/// # Safety
///
/// Unless `n` is 0, each pointer of `raw` must be NULL or point to as many readable values
/// of `T` as it holds (`3 * n` for AoS, `n` for each SoA array), unchanged during the call.
unsafe fn points<'a, T: Real>(raw: RawPoints<T>, n: usize) -> Result<Points<'a, T>, Failure> {
    check_count(n)?;
    match raw {
        RawPoints::Aos(xyz) => {
            // SAFETY: `[T; 3]` has the alignment of `T`, and the caller guarantees `3 * n`
            // readable values of `T` at `xyz` (or `n` = 0): `n` values of `[T; 3]`.
            let xyz = unsafe { input(xyz.cast::<[T; 3]>(), n, "xyz") }?;
            Ok(Points::Aos(xyz))
        }
        RawPoints::Soa(x, y, z) => {
            // SAFETY: the caller guarantees `n` readable values at each of `x`, `y` and `z`
            // (or `n` = 0).
            let (x, y, z) = unsafe { (input(x, n, "x")?, input(y, n, "y")?, input(z, n, "z")?) };
            Ok(Points::Soa(x, y, z))
        }
    }
}

/// The body of `hhg_search_new_f32` and `hhg_search_new_f64`.
///
/// # Safety
///
/// `out_search` must be NULL or point to a writable `HhgSearch *`.
unsafe fn new_search<T: Precision>(radius: T, out_search: *mut *mut HhgSearch) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that `out_search` is NULL or writable.
        let out = unsafe { output(out_search, "out_search") }?;
        out.write(ptr::null_mut());
        let search = HhgSearch {
            inner: T::wrap(State::new(radius)?),
            poisoned: false,
        };
        out.write(Box::into_raw(Box::new(search)));
        Ok(())
    })
}

/// The body of the `hhg_search_add_set_*` functions.
///
/// # Safety
///
/// `search` must be NULL or a live handle that nothing else accesses during the call,
/// `raw` and `n` must satisfy [`points`], and `out_set` must be NULL or point to a writable
/// `size_t`.
unsafe fn add_set<T: Precision>(
    search: *mut HhgSearch,
    raw: RawPoints<T>,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that `search` is NULL or a live, unshared handle.
        let mut search = unsafe { search_mut(search) }?;
        // SAFETY: the caller guarantees that `out_set` is NULL or writable.
        let out = unsafe { output(out_set, "out_set") }?;
        let state = search.state_mut::<T>()?;
        // SAFETY: the caller guarantees that `raw` holds `n` points.
        let points = unsafe { points(raw, n) }?;
        out.write(state.add(points, dynamic)?);
        Ok(())
    })
}

/// The body of the `hhg_search_update_set_*` functions.
///
/// # Safety
///
/// `search` must be NULL or a live handle that nothing else accesses during the call, and
/// `raw` and `n` must satisfy [`points`].
unsafe fn update_set<T: Precision>(
    search: *mut HhgSearch,
    set: usize,
    raw: RawPoints<T>,
    n: usize,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that `search` is NULL or a live, unshared handle.
        let mut search = unsafe { search_mut(search) }?;
        let state = search.state_mut::<T>()?;
        // SAFETY: the caller guarantees that `raw` holds `n` points.
        let points = unsafe { points(raw, n) }?;
        state.update(set, points)?;
        Ok(())
    })
}

/// The body of every function that changes a search without further pointer arguments.
///
/// # Safety
///
/// `search` must be NULL or a live handle that nothing else accesses during the call.
unsafe fn change(
    search: *mut HhgSearch,
    body: impl FnOnce(&mut Inner) -> Result<(), Failure>,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that `search` is NULL or a live, unshared handle.
        let mut search = unsafe { search_mut(search) }?;
        body(&mut search.inner)
    })
}

/// The body of every function that reads a search into one output value.
///
/// # Safety
///
/// `search` must be NULL or a live handle that nothing changes during the call, and `out`
/// must be NULL or point to a writable `V`.
unsafe fn read<V>(
    search: *const HhgSearch,
    out: *mut V,
    out_name: &str,
    body: impl FnOnce(&HhgSearch) -> Result<V, Failure>,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that `search` is NULL or a live handle that nothing
        // changes during the call.
        let search = unsafe { search_ref(search) }?;
        // SAFETY: the caller guarantees that `out` is NULL or writable.
        let out = unsafe { output(out, out_name) }?;
        out.write(body(search)?);
        Ok(())
    })
}

/// Creates a search for neighbours within `radius` (pairs at distance <= `radius`) in
/// `float` precision, and stores its handle in `*out_search`.
///
/// Returns `HHG_STATUS_INVALID_RADIUS` for a radius that is not finite and positive (with a
/// normal square in `float`), and `HHG_STATUS_NULL_POINTER` for a NULL `out_search`. On
/// failure `*out_search` (if not NULL) is set to NULL.
///
/// # Safety
///
/// `out_search` must be NULL or point to a writable `HhgSearch *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_new_f32(
    radius: f32,
    out_search: *mut *mut HhgSearch,
) -> HhgStatus {
    // SAFETY: this function's contract is `new_search`'s.
    unsafe { new_search(radius, out_search) }
}

/// Creates a search for neighbours within `radius` in `double` precision; otherwise like
/// `hhg_search_new_f32`.
///
/// # Safety
///
/// `out_search` must be NULL or point to a writable `HhgSearch *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_new_f64(
    radius: f64,
    out_search: *mut *mut HhgSearch,
) -> HhgStatus {
    // SAFETY: this function's contract is `new_search`'s.
    unsafe { new_search(radius, out_search) }
}

/// Frees a search and every array it lent out. NULL is ignored. Leaves the thread's last
/// error message as it was.
///
/// # Safety
///
/// `search` must be NULL or a handle from `hhg_search_new_*` that was not freed yet and that
/// no other thread uses; it must not be used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_free(search: *mut HhgSearch) {
    if search.is_null() {
        return;
    }
    // SAFETY: the caller guarantees that a non-NULL `search` came from `Box::into_raw` in
    // `new_search`, is freed only now, and is not used afterwards.
    let search = unsafe { Box::from_raw(search) };
    // Dropping only frees memory; should it panic anyway, the panic must not reach C.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(search)));
}

/// Stores the precision of the search in `*out_precision`.
///
/// # Safety
///
/// `search` must be NULL or a live handle, and `out_precision` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_precision(
    search: *const HhgSearch,
    out_precision: *mut HhgPrecision,
) -> HhgStatus {
    // SAFETY: this function's contract is `read`'s.
    unsafe {
        read(
            search,
            out_precision,
            "out_precision",
            |s| Ok(s.precision()),
        )
    }
}

/// Stores the number of point sets of the search in `*out_count`.
///
/// # Safety
///
/// `search` must be NULL or a live handle, and `out_count` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_set_count(
    search: *const HhgSearch,
    out_count: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `read`'s.
    unsafe {
        read(search, out_count, "out_count", |s| {
            Ok(dispatch!(&s.inner, state => state.sets.len()))
        })
    }
}

/// Stores the number of points of set `set` in `*out_len`.
///
/// # Safety
///
/// `search` must be NULL or a live handle, and `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_set_len(
    search: *const HhgSearch,
    set: usize,
    out_len: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `read`'s.
    unsafe {
        read(search, out_len, "out_len", |s| {
            Ok(dispatch!(&s.inner, state => state.set_len(set))?)
        })
    }
}

/// Adds a point set of `n` points given as `xyz = {x0, y0, z0, x1, y1, z1, ...}` (`3 * n`
/// floats) to an f32 search, and stores its id in `*out_set`. Ids count from 0 in order of
/// addition.
///
/// A dynamic set moves every step: give it new positions with `hhg_search_update_set_f32`
/// before each `hhg_search_find_neighbors`. A static set (boundary samples) is indexed once,
/// now, and its lists against other static sets are computed only once. The positions are
/// copied: the caller's array may change or be freed after the call. `xyz` may be NULL
/// when `n` is 0.
///
/// Fails with `HHG_STATUS_NON_FINITE_COORDINATE` for a NaN or infinite coordinate,
/// `HHG_STATUS_COORDINATE_OUT_OF_RANGE` for points too far apart for the radius,
/// `HHG_STATUS_TOO_MANY_POINTS`, `HHG_STATUS_PRECISION_MISMATCH` on an f64 search, or
/// `HHG_STATUS_NULL_POINTER`; nothing is added then.
///
/// # Safety
///
/// `search` must be NULL or a live handle; unless `n` is 0, `xyz` must be NULL or point to
/// `3 * n` readable floats; `out_set` must be NULL or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_add_set_f32(
    search: *mut HhgSearch,
    xyz: *const f32,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `add_set`'s.
    unsafe { add_set(search, RawPoints::Aos(xyz), n, dynamic, out_set) }
}

/// Adds a point set of `n` points given as `3 * n` doubles to an f64 search; otherwise like
/// `hhg_search_add_set_f32`.
///
/// # Safety
///
/// `search` must be NULL or a live handle; unless `n` is 0, `xyz` must be NULL or point to
/// `3 * n` readable doubles; `out_set` must be NULL or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_add_set_f64(
    search: *mut HhgSearch,
    xyz: *const f64,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `add_set`'s.
    unsafe { add_set(search, RawPoints::Aos(xyz), n, dynamic, out_set) }
}

/// Adds a point set of `n` points given as three arrays `x`, `y`, `z` of `n` floats each to
/// an f32 search; otherwise like `hhg_search_add_set_f32`.
///
/// # Safety
///
/// `search` must be NULL or a live handle; unless `n` is 0, each of `x`, `y` and `z` must be
/// NULL or point to `n` readable floats; `out_set` must be NULL or point to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_add_set_soa_f32(
    search: *mut HhgSearch,
    x: *const f32,
    y: *const f32,
    z: *const f32,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `add_set`'s.
    unsafe { add_set(search, RawPoints::Soa(x, y, z), n, dynamic, out_set) }
}

/// Adds a point set of `n` points given as three arrays of `n` doubles each to an f64
/// search; otherwise like `hhg_search_add_set_f32`.
///
/// # Safety
///
/// `search` must be NULL or a live handle; unless `n` is 0, each of `x`, `y` and `z` must be
/// NULL or point to `n` readable doubles; `out_set` must be NULL or point to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_add_set_soa_f64(
    search: *mut HhgSearch,
    x: *const f64,
    y: *const f64,
    z: *const f64,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `add_set`'s.
    unsafe { add_set(search, RawPoints::Soa(x, y, z), n, dynamic, out_set) }
}

/// Replaces the positions of set `set` of an f32 search by `n` points given as `3 * n`
/// floats; `n` must be the set's point count. The set is re-indexed now; every result
/// involving it is stale until the next `hhg_search_find_neighbors`.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET`, `HHG_STATUS_POINT_COUNT_CHANGED`, or the
/// errors of `hhg_search_add_set_f32`.
///
/// # Safety
///
/// `search` must be NULL or a live handle; unless `n` is 0, `xyz` must be NULL or point to
/// `3 * n` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_f32(
    search: *mut HhgSearch,
    set: usize,
    xyz: *const f32,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `update_set`'s.
    unsafe { update_set(search, set, RawPoints::Aos(xyz), n) }
}

/// Replaces the positions of set `set` of an f64 search by `n` points given as `3 * n`
/// doubles; otherwise like `hhg_search_update_set_f32`.
///
/// # Safety
///
/// `search` must be NULL or a live handle; unless `n` is 0, `xyz` must be NULL or point to
/// `3 * n` readable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_f64(
    search: *mut HhgSearch,
    set: usize,
    xyz: *const f64,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `update_set`'s.
    unsafe { update_set(search, set, RawPoints::Aos(xyz), n) }
}

/// Replaces the positions of set `set` of an f32 search by three arrays of `n` floats;
/// otherwise like `hhg_search_update_set_f32`.
///
/// # Safety
///
/// `search` must be NULL or a live handle; unless `n` is 0, each of `x`, `y` and `z` must be
/// NULL or point to `n` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_soa_f32(
    search: *mut HhgSearch,
    set: usize,
    x: *const f32,
    y: *const f32,
    z: *const f32,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `update_set`'s.
    unsafe { update_set(search, set, RawPoints::Soa(x, y, z), n) }
}

/// Replaces the positions of set `set` of an f64 search by three arrays of `n` doubles;
/// otherwise like `hhg_search_update_set_f32`.
///
/// # Safety
///
/// `search` must be NULL or a live handle; unless `n` is 0, each of `x`, `y` and `z` must be
/// NULL or point to `n` readable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_soa_f64(
    search: *mut HhgSearch,
    set: usize,
    x: *const f64,
    y: *const f64,
    z: *const f64,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `update_set`'s.
    unsafe { update_set(search, set, RawPoints::Soa(x, y, z), n) }
}

/// Makes set `searching` look (`active` true) or stop looking (false) for neighbours in set
/// `searched`. A set may search itself. Nothing is searched until
/// `hhg_search_find_neighbors`.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET` when either set does not exist.
///
/// # Safety
///
/// `search` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_set_active(
    search: *mut HhgSearch,
    searching: usize,
    searched: usize,
    active: bool,
) -> HhgStatus {
    // SAFETY: this function's contract is `change`'s.
    unsafe {
        change(search, |inner| {
            Ok(dispatch!(inner, state => state.search.set_active(searching, searched, active))?)
        })
    }
}

/// Makes every later `hhg_search_find_neighbors` also compute (`enabled` true) the unique
/// pairs within set `set`, read with `hhg_search_pairs`, or stop computing them (false).
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET` when the set does not exist.
///
/// # Safety
///
/// `search` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_set_pairs(
    search: *mut HhgSearch,
    set: usize,
    enabled: bool,
) -> HhgStatus {
    // SAFETY: this function's contract is `change`'s.
    unsafe {
        change(search, |inner| {
            Ok(dispatch!(inner, state => state.set_pairs(set, enabled))?)
        })
    }
}

/// Makes every later `hhg_search_find_neighbors` also store (`with_distances` true) the
/// squared distance of every list entry and pair, in the search's precision, or stop storing
/// them (false, the default). Changing it makes every result stale until the next search.
///
/// # Safety
///
/// `search` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_set_with_distances(
    search: *mut HhgSearch,
    with_distances: bool,
) -> HhgStatus {
    // SAFETY: this function's contract is `change`'s.
    unsafe {
        change(search, |inner| {
            dispatch!(inner, state => state.set_with_distances(with_distances));
            Ok(())
        })
    }
}

/// Computes the neighbour lists of every active pair of sets and the unique pairs of every
/// set that has them enabled. Lists between two static sets are computed once and kept.
/// Every view read before this call is invalid afterwards.
///
/// # Safety
///
/// `search` must be NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_find_neighbors(search: *mut HhgSearch) -> HhgStatus {
    // SAFETY: this function's contract is `change`'s.
    unsafe { change(search, |inner| Ok(dispatch!(inner, state => state.find())?)) }
}

/// Stores in `*out_lists` a view of the neighbour lists of the last search for the points of
/// set `searching` in set `searched` (see `HhgNeighborLists`). Nothing is copied; the view
/// stays valid until the next call that takes the search as a non-const `HhgSearch *`.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET`, or `HHG_STATUS_NOT_SEARCHED` when the pair of
/// sets is not active or was not searched since it was activated or a set changed.
///
/// # Safety
///
/// `search` must be NULL or a live handle, and `out_lists` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_neighbors(
    search: *const HhgSearch,
    searching: usize,
    searched: usize,
    out_lists: *mut HhgNeighborLists,
) -> HhgStatus {
    // SAFETY: this function's contract is `read`'s.
    unsafe {
        read(
            search,
            out_lists,
            "out_lists",
            |s| dispatch!(&s.inner, state => state.neighbors(searching, searched)),
        )
    }
}

/// Stores in `*out_pairs` a view of the unique pairs within set `set` from the last search
/// (see `HhgPairList`). Nothing is copied; the view stays valid until the next call that
/// takes the search as a non-const `HhgSearch *`.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET`, or `HHG_STATUS_NOT_SEARCHED` when the set's
/// pairs are not enabled (`hhg_search_set_pairs`) or were not computed since they were
/// enabled or the set changed.
///
/// # Safety
///
/// `search` must be NULL or a live handle, and `out_pairs` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_pairs(
    search: *const HhgSearch,
    set: usize,
    out_pairs: *mut HhgPairList,
) -> HhgStatus {
    // SAFETY: this function's contract is `read`'s.
    unsafe {
        read(
            search,
            out_pairs,
            "out_pairs",
            |s| dispatch!(&s.inner, state => state.pairs(set)),
        )
    }
}

/// Stores in `*out_order` the locality permutation of set `set` and in `*out_len` its
/// length (the set's point count): `order[k]` is the index, as given, of the `k`-th point in
/// grid cell order. Reordering solver arrays by it (`new[k] = old[order[k]]`) makes
/// neighbours close in memory. Nothing is copied; the array stays valid until the next call
/// that takes the search as a non-const `HhgSearch *`.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET` when the set does not exist.
///
/// # Safety
///
/// `search` must be NULL or a live handle, and `out_order` and `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_order(
    search: *const HhgSearch,
    set: usize,
    out_order: *mut *const u32,
    out_len: *mut usize,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that `search` is NULL or a live handle that nothing
        // changes during the call.
        let search = unsafe { search_ref(search) }?;
        // SAFETY: the caller guarantees that `out_order` and `out_len` are NULL or writable.
        let (out_order, out_len) =
            unsafe { (output(out_order, "out_order")?, output(out_len, "out_len")?) };
        let order = dispatch!(&search.inner, state => state.order(set))?;
        out_order.write(order.as_ptr());
        out_len.write(order.len());
        Ok(())
    })
}

/// Makes the cell order of set `set`'s last build its numbering, without a rebuild: point
/// `k` of the set is from now on the `k`-th point in cell order, and the next
/// `hhg_search_find_neighbors` numbers every list and pair of the set that way (and takes
/// the faster list pass for points in cell order: no list needs sorting). Stores in
/// `*out_order` the permutation the caller must apply to each of its own arrays of that set
/// (`new[k] = old[order[k]]`), which is the set's `hhg_search_order` before the call, and in
/// `*out_len` its length. Call it after `hhg_search_update_positions` and before
/// `hhg_search_find_neighbors`: renumbering every step this way keeps the solver's arrays
/// in cell order with no second build. Every result involving the set is stale until the
/// next search. Nothing is copied; the array stays valid until the next call that takes
/// the search as a non-const `HhgSearch *`.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET` when the set does not exist, and changes
/// nothing when an output pointer is NULL.
///
/// # Safety
///
/// `search` must be NULL or a live handle that nothing else uses during the call, and
/// `out_order` and `out_len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_adopt_cell_order(
    search: *mut HhgSearch,
    set: usize,
    out_order: *mut *const u32,
    out_len: *mut usize,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that `out_order` and `out_len` are NULL or writable.
        let (out_order, out_len) =
            unsafe { (output(out_order, "out_order")?, output(out_len, "out_len")?) };
        // SAFETY: the caller guarantees that `search` is NULL or a live, unshared handle.
        let mut search = unsafe { search_mut(search) }?;
        let order = dispatch!(&mut search.inner, state => state.adopt_cell_order(set))?;
        out_order.write(order.as_ptr());
        out_len.write(order.len());
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_while_changing_a_search_leaves_it_unusable() {
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a writable handle location.
        assert_eq!(unsafe { hhg_search_new_f32(1.0, &mut raw) }, HhgStatus::Ok);
        let status = guard(|| {
            // SAFETY: `raw` is a live handle that only this thread uses.
            let _search = unsafe { search_mut(raw) }?;
            panic!("injected failure");
        });
        assert_eq!(status, HhgStatus::InternalError);
        let mut count = usize::MAX;
        // SAFETY: `raw` is still a live handle (poisoned, not freed) and `count` is writable.
        let statuses = unsafe {
            [
                hhg_search_find_neighbors(raw),
                hhg_search_set_count(raw, &mut count),
            ]
        };
        assert_eq!(statuses, [HhgStatus::InternalError; 2]);
        assert_eq!(count, usize::MAX);
        // SAFETY: hhg_last_error_message returns a NUL-terminated string valid until the
        // next hhg call on this thread; it is copied at once.
        let message = unsafe { std::ffi::CStr::from_ptr(crate::hhg_last_error_message()) }
            .to_string_lossy()
            .into_owned();
        assert!(message.contains("left unusable"), "{message}");
        // SAFETY: `raw` came from hhg_search_new_f32 and is freed once.
        unsafe { hhg_search_free(raw) };
    }
}
