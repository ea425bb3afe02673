//! Creating and freeing a search (3-D or 2-D), and reading what it holds: its precision, its
//! dimension, its number of point sets and the size of each.

use std::ptr;

use super::{
    HhgDimension, HhgPrecision, HhgSearch, PlaneState, Precision, Search, State, dispatch, read,
    register, unregister,
};
use crate::args::output;
use crate::status::{HhgStatus, guard, guard_keeping_message};

/// The body of `hhg_search_new_f32`, `hhg_search_new_f64` (`dimension` three) and
/// `hhg_search_new_2d_f32`, `hhg_search_new_2d_f64` (`dimension` two).
///
/// # Safety
///
/// `out_search` must be NULL or point to a writable `HhgSearch *`.
unsafe fn new_search<T: Precision>(
    radius: T,
    dimension: HhgDimension,
    out_search: *mut *mut HhgSearch,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that `out_search` is NULL or writable.
        let out = unsafe { output(out_search, "out_search") }?;
        out.write(ptr::null_mut());
        let inner = match dimension {
            HhgDimension::Three => T::wrap(State::new(radius)?),
            HhgDimension::Two => T::wrap_plane(PlaneState::new(radius)?),
        };
        let search = Search {
            inner,
            poisoned: false,
        };
        out.write(register(search)?);
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
/// The handle is a checked value, not an address (see `HhgSearch`). Creation fails with
/// `HHG_STATUS_HANDLES_EXHAUSTED` when no handle is left: with 2^24 searches live at once on a
/// 64-bit target (2^10 on a 32-bit one), or after about 2^48 creations in the life of the
/// process (2^24 on a 32-bit target).
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
    unsafe { new_search(radius, HhgDimension::Three, out_search) }
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
    unsafe { new_search(radius, HhgDimension::Three, out_search) }
}

/// Creates a search of points of the plane, `(x, y)`, for neighbours within `radius` in
/// `float` precision; otherwise like `hhg_search_new_f32`.
///
/// The dimension is fixed, like the precision: its points are given with the `_2d_f32`
/// functions (`hhg_search_add_set_2d_f32`, `hhg_search_update_set_2d_f32`, ...), and a 3-D
/// point function returns `HHG_STATUS_WRONG_DIMENSION`. Every function without points
/// (activation, `hhg_search_find_neighbors`, lists, pairs, distances, caps, orders) works
/// on it unchanged.
///
/// # Safety
///
/// `out_search` must be NULL or point to a writable `HhgSearch *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_new_2d_f32(
    radius: f32,
    out_search: *mut *mut HhgSearch,
) -> HhgStatus {
    // SAFETY: this function's contract is `new_search`'s.
    unsafe { new_search(radius, HhgDimension::Two, out_search) }
}

/// Creates a search of points of the plane for neighbours within `radius` in `double`
/// precision; otherwise like `hhg_search_new_2d_f32`.
///
/// # Safety
///
/// `out_search` must be NULL or point to a writable `HhgSearch *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_new_2d_f64(
    radius: f64,
    out_search: *mut *mut HhgSearch,
) -> HhgStatus {
    // SAFETY: this function's contract is `new_search`'s.
    unsafe { new_search(radius, HhgDimension::Two, out_search) }
}

/// Frees a search and every array it lent out. NULL is ignored.
///
/// Returns `HHG_STATUS_OK` for a live search or NULL, and `HHG_STATUS_INVALID_HANDLE` for a
/// search that was already freed (a double free) or a value that never came from
/// `hhg_search_new_*`, which it leaves alone. A success leaves the thread's last error
/// message as it was, so cleanup code may free a search between a failed call and reading
/// that call's message.
///
/// # Safety
///
/// Any value of `search` is checked; when it names a live search, no other call may use
/// that search during this call (a free racing another call on the same search is
/// undefined behaviour). Arrays the search lent out must not be read after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_free(search: *mut HhgSearch) -> HhgStatus {
    if search.is_null() {
        return HhgStatus::Ok;
    }
    // A panic while dropping becomes a status instead of reaching C.
    guard_keeping_message(|| {
        drop(unregister(search)?);
        Ok(())
    })
}

/// Stores the precision of the search in `*out_precision`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one;
/// `out_precision` must be NULL or writable.
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

/// Stores the dimension of the search (`HHG_DIMENSION_TWO` or `HHG_DIMENSION_THREE`) in
/// `*out_dimension`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one;
/// `out_dimension` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_dimension(
    search: *const HhgSearch,
    out_dimension: *mut HhgDimension,
) -> HhgStatus {
    // SAFETY: this function's contract is `read`'s.
    unsafe {
        read(
            search,
            out_dimension,
            "out_dimension",
            |s| Ok(s.dimension()),
        )
    }
}

/// Stores the number of point sets of the search in `*out_count`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may change or free it during this one;
/// `out_count` must be NULL or writable.
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
/// Any `search` is checked, but no other call may change or free it during this one;
/// `out_len` must be NULL or writable.
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
