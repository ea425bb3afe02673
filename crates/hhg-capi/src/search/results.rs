//! The results of a search as zero-copy views: the CSR neighbour lists and unique pairs
//! (`HhgNeighborLists`, `HhgPairList`), and a set's cell order, read or adopted; and the
//! neighbours of any one position, copied into the caller's array.

use std::cell::RefCell;
use std::ptr;

use hhg_core::NeighborLists;

use super::{HhgSearch, Precision, dispatch, read, search_mut, search_ref};
use crate::args::{input, output};
use crate::status::{HhgStatus, guard};

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

/// A single `0` offset: the offsets of zero lists, for lists that were never assembled.
static NO_LISTS: [usize; 1] = [0];

/// The view of `lists`, pointing into its buffers.
pub(super) fn lists_view<T: Precision>(lists: &NeighborLists<T>) -> HhgNeighborLists {
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

/// Stores in `*out_lists` a view of the neighbour lists of the last search for the points of
/// set `searching` in set `searched` (see `HhgNeighborLists`). Nothing is copied; the view
/// stays valid until the next call that takes the search as a non-const `HhgSearch *`.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET`, or `HHG_STATUS_NOT_SEARCHED` when the pair of
/// sets is not active or was not searched since it was activated or a set changed.
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one;
/// `out_lists` must be NULL or writable.
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
/// Any `search` is checked, but no other call may change or free it during this one;
/// `out_pairs` must be NULL or writable.
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
/// Any `search` is checked, but no other call may change or free it during this one;
/// `out_order` and `out_len` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_order(
    search: *const HhgSearch,
    set: usize,
    out_order: *mut *const u32,
    out_len: *mut usize,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that nothing changes a live `search` during the call.
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
/// `*out_len` its length. Call it after the step's `hhg_search_update_set_*` call for the set
/// and before `hhg_search_find_neighbors`: renumbering every step this way keeps the solver's arrays
/// in cell order with no second build. Every result involving the set is stale until the
/// next search. Nothing is copied; the array stays valid until the next call that takes
/// the search as a non-const `HhgSearch *`.
///
/// On a 2-D search the set's grid is rebuilt from its positions in cell order (one build
/// more than in 3-D, and no faster list pass); the numbering and the permutation are the
/// same as in 3-D.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET` when the set does not exist, and changes
/// nothing when an output pointer is NULL.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; `out_order` and
/// `out_len` must be NULL or writable.
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
        // SAFETY: the caller guarantees that a live `search` is not shared during the call.
        let mut search = unsafe { search_mut(search) }?;
        let order = dispatch!(&mut search.inner, state => state.adopt_cell_order(set))?;
        out_order.write(order.as_ptr());
        out_len.write(order.len());
        Ok(())
    })
}

thread_local! {
    /// The neighbours of the last position query on this thread, reused by the next one.
    static QUERY_SCRATCH: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// The body of the `hhg_search_query_point_*` functions.
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one; `xyz`
/// must be NULL or point to 3 readable values of `T`; unless `capacity` is 0, `out_indices`
/// must be NULL or point to `capacity` writable `uint32_t`; `out_count` must be NULL or
/// writable.
unsafe fn query_point<T: Precision>(
    search: *const HhgSearch,
    searched: usize,
    xyz: *const T,
    out_indices: *mut u32,
    capacity: usize,
    out_count: *mut usize,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that nothing changes a live `search` during the call.
        let search = unsafe { search_ref(search) }?;
        let state = search.state_ref::<T>()?;
        // SAFETY: the caller guarantees 3 readable values at a non-NULL `xyz`.
        let point = unsafe { input(xyz, 3, "xyz") }?;
        // SAFETY: the caller guarantees that `out_count` is NULL or writable.
        let out_count = unsafe { output(out_count, "out_count") }?;
        if capacity > 0 && out_indices.is_null() {
            return Err(crate::status::Failure::null("out_indices"));
        }
        QUERY_SCRATCH.with_borrow_mut(|found| {
            state.query_point(searched, [point[0], point[1], point[2]], found)?;
            let copied = found.len().min(capacity);
            if copied > 0 {
                // SAFETY: `out_indices` is non-NULL (checked above) and the caller guarantees
                // `capacity` writable values there, of which `copied` are written.
                let out = unsafe { std::slice::from_raw_parts_mut(out_indices, copied) };
                out.copy_from_slice(&found[..copied]);
            }
            out_count.write(found.len());
            Ok(())
        })
    })
}

/// Finds the points of set `searched` of an f32 search within the radius of the position
/// `xyz = {x, y, z}` (distance <= radius), from the set's positions as last given (added,
/// updated or resized). Stores their number in `*out_count` and the first
/// `min(count, capacity)` of their indices, ascending, in `out_indices`: a caller whose
/// array was too small calls again with at least `*out_count` entries. The position need
/// not be a point of any set; a point of `searched` at `xyz` is found itself.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET`, `HHG_STATUS_NON_FINITE_COORDINATE` for a NaN or
/// infinite coordinate of `xyz`, `HHG_STATUS_PRECISION_MISMATCH` on an f64 search,
/// `HHG_STATUS_WRONG_DIMENSION` on a 2-D search (use `hhg_search_query_point_2d_f32`), or
/// `HHG_STATUS_NULL_POINTER` (`out_indices` may be NULL only when `capacity` is 0); nothing
/// is written then.
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one; `xyz`
/// must be NULL or point to 3 readable floats; unless `capacity` is 0, `out_indices` must
/// be NULL or point to `capacity` writable `uint32_t`; `out_count` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_query_point_f32(
    search: *const HhgSearch,
    searched: usize,
    xyz: *const f32,
    out_indices: *mut u32,
    capacity: usize,
    out_count: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `query_point`'s.
    unsafe { query_point(search, searched, xyz, out_indices, capacity, out_count) }
}

/// Finds the points of set `searched` of an f64 search within the radius of the position
/// `xyz` (3 doubles); otherwise like `hhg_search_query_point_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one; `xyz`
/// must be NULL or point to 3 readable doubles; unless `capacity` is 0, `out_indices` must
/// be NULL or point to `capacity` writable `uint32_t`; `out_count` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_query_point_f64(
    search: *const HhgSearch,
    searched: usize,
    xyz: *const f64,
    out_indices: *mut u32,
    capacity: usize,
    out_count: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `query_point`'s.
    unsafe { query_point(search, searched, xyz, out_indices, capacity, out_count) }
}

/// The body of the `hhg_search_query_point_2d_*` functions.
///
/// # Safety
///
/// As [`query_point`], with `xy` NULL or pointing to 2 readable values of `T`.
unsafe fn query_point_2d<T: Precision>(
    search: *const HhgSearch,
    searched: usize,
    xy: *const T,
    out_indices: *mut u32,
    capacity: usize,
    out_count: *mut usize,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that nothing changes a live `search` during the call.
        let search = unsafe { search_ref(search) }?;
        let state = search.plane_ref::<T>()?;
        // SAFETY: the caller guarantees 2 readable values at a non-NULL `xy`.
        let point = unsafe { input(xy, 2, "xy") }?;
        // SAFETY: the caller guarantees that `out_count` is NULL or writable.
        let out_count = unsafe { output(out_count, "out_count") }?;
        if capacity > 0 && out_indices.is_null() {
            return Err(crate::status::Failure::null("out_indices"));
        }
        T::with_query_lists(|lists| {
            let found = state.query_point(searched, [point[0], point[1]], lists)?;
            let copied = found.len().min(capacity);
            if copied > 0 {
                // SAFETY: `out_indices` is non-NULL (checked above) and the caller guarantees
                // `capacity` writable values there, of which `copied` are written.
                let out = unsafe { std::slice::from_raw_parts_mut(out_indices, copied) };
                out.copy_from_slice(&found[..copied]);
            }
            out_count.write(found.len());
            Ok(())
        })
    })
}

/// Finds the points of set `searched` of a 2-D f32 search within the radius of the
/// position `xy = {x, y}`; otherwise like `hhg_search_query_point_f32` (a NaN or infinite
/// coordinate of `xy` is refused with `HHG_STATUS_NON_FINITE_COORDINATE`, and a 3-D search
/// with `HHG_STATUS_WRONG_DIMENSION`).
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one; `xy`
/// must be NULL or point to 2 readable floats; unless `capacity` is 0, `out_indices` must
/// be NULL or point to `capacity` writable `uint32_t`; `out_count` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_query_point_2d_f32(
    search: *const HhgSearch,
    searched: usize,
    xy: *const f32,
    out_indices: *mut u32,
    capacity: usize,
    out_count: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `query_point_2d`'s.
    unsafe { query_point_2d(search, searched, xy, out_indices, capacity, out_count) }
}

/// Finds the points of set `searched` of a 2-D f64 search within the radius of the position
/// `xy` (2 doubles); otherwise like `hhg_search_query_point_2d_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one; `xy`
/// must be NULL or point to 2 readable doubles; unless `capacity` is 0, `out_indices` must
/// be NULL or point to `capacity` writable `uint32_t`; `out_count` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_query_point_2d_f64(
    search: *const HhgSearch,
    searched: usize,
    xy: *const f64,
    out_indices: *mut u32,
    capacity: usize,
    out_count: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `query_point_2d`'s.
    unsafe { query_point_2d(search, searched, xy, out_indices, capacity, out_count) }
}
