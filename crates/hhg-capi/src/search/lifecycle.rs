//! Creating and freeing a search, and reading what it holds: its precision, its number of
//! point sets and the size of each.

use std::ptr;

use super::{HhgPrecision, HhgSearch, Precision, State, dispatch, read};
use crate::args::output;
use crate::status::{HhgStatus, guard};

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
