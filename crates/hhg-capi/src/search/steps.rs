//! What a search computes and the search itself: activating pairs of sets, enabling unique
//! pairs and squared distances, and finding the neighbours.

use super::{HhgSearch, change, dispatch};
use crate::status::HhgStatus;

/// Makes set `searching` look (`active` true) or stop looking (false) for neighbours in set
/// `searched`. A set may search itself. Nothing is searched until
/// `hhg_search_find_neighbors`.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET` when either set does not exist.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one.
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
/// Any `search` is checked, but no other call may use it during this one.
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
/// Any `search` is checked, but no other call may use it during this one.
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

/// Caps the results of every later `hhg_search_find_neighbors`: the lists of each pair of
/// sets at `max_entries` entries, and each set's pairs at `max_entries` pairs (0: no cap,
/// the default). A search past the cap returns `HHG_STATUS_OUTPUT_TOO_LARGE` before it
/// allocates past it, a guard against a radius or a cloud that would take all memory.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_set_max_entries(
    search: *mut HhgSearch,
    max_entries: usize,
) -> HhgStatus {
    let cap = (max_entries > 0).then_some(max_entries);
    // SAFETY: this function's contract is `change`'s.
    unsafe {
        change(search, |inner| {
            dispatch!(inner, state => state.set_max_entries(cap));
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
/// Any `search` is checked, but no other call may use it during this one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_find_neighbors(search: *mut HhgSearch) -> HhgStatus {
    // SAFETY: this function's contract is `change`'s.
    unsafe { change(search, |inner| dispatch!(inner, state => Ok(state.find()?))) }
}
