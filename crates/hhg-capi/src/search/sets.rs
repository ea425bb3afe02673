//! Adding point sets to a search and replacing their positions, from AoS or SoA arrays in
//! either precision and dimension (the `_2d_` functions take points of the plane).

use hhg_core::building_blocks::check_count;
use hhg_core::plane::Grid2;
use hhg_core::{Grid, Points, Real};

use super::plane::PlanePoints;
use super::state::{PlaneState, State, StateGrid};
use super::{HhgSearch, Precision, Search, search_mut};
use crate::args::{input, output};
use crate::status::{Failure, HhgStatus, guard};

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

/// Points of the plane as the caller passed them.
#[derive(Clone, Copy)]
enum RawPlanePoints<T> {
    /// `x0, y0, x1, y1, ...`.
    Aos(*const T),
    /// Separate `x` and `y` arrays.
    Soa(*const T, *const T),
}

/// Borrows `n` points of the plane from the caller's arrays.
///
/// # Safety
///
/// Unless `n` is 0, each pointer of `raw` must be NULL or point to as many readable values
/// of `T` as it holds (`2 * n` for AoS, `n` for each SoA array), unchanged during the call.
unsafe fn plane_points<'a, T: Real>(
    raw: RawPlanePoints<T>,
    n: usize,
) -> Result<PlanePoints<'a, T>, Failure> {
    check_count(n)?;
    match raw {
        RawPlanePoints::Aos(xy) => {
            // SAFETY: `[T; 2]` has the alignment of `T`, and the caller guarantees `2 * n`
            // readable values of `T` at `xy` (or `n` = 0): `n` values of `[T; 2]`.
            let xy = unsafe { input(xy.cast::<[T; 2]>(), n, "xy") }?;
            Ok(PlanePoints::Aos(xy))
        }
        RawPlanePoints::Soa(x, y) => {
            // SAFETY: the caller guarantees `n` readable values at each of `x` and `y` (or
            // `n` = 0).
            let (x, y) = unsafe { (input(x, n, "x")?, input(y, n, "y")?) };
            Ok(PlanePoints::Soa(x, y))
        }
    }
}

/// The caller's arrays of one dimension's points: how they are borrowed, and which state of
/// the search takes them.
trait RawInput<T: Precision, const D: usize>: Copy {
    /// The grid of the sets these points go to.
    type Grid: StateGrid<T, D>;

    /// Borrows `n` points from the caller's arrays.
    ///
    /// # Safety
    ///
    /// As for [`points`] (3-D) or [`plane_points`] (2-D).
    unsafe fn borrow<'a>(
        self,
        n: usize,
    ) -> Result<<Self::Grid as StateGrid<T, D>>::Input<'a>, Failure>
    where
        T: 'a;

    /// The search's state of this dimension in precision `T`, or the mismatch.
    fn state(search: &mut Search) -> Result<&mut State<T, Self::Grid, D>, Failure>;
}

impl<T: Precision> RawInput<T, 3> for RawPoints<T> {
    type Grid = Grid<T>;

    unsafe fn borrow<'a>(self, n: usize) -> Result<Points<'a, T>, Failure>
    where
        T: 'a,
    {
        // SAFETY: the caller's contract is `points`'s.
        unsafe { points(self, n) }
    }

    fn state(search: &mut Search) -> Result<&mut State<T>, Failure> {
        search.state_mut::<T>()
    }
}

impl<T: Precision> RawInput<T, 2> for RawPlanePoints<T> {
    type Grid = Grid2<T>;

    unsafe fn borrow<'a>(self, n: usize) -> Result<PlanePoints<'a, T>, Failure>
    where
        T: 'a,
    {
        // SAFETY: the caller's contract is `plane_points`'s.
        unsafe { plane_points(self, n) }
    }

    fn state(search: &mut Search) -> Result<&mut PlaneState<T>, Failure> {
        search.plane_mut::<T>()
    }
}

/// The body of the `hhg_search_add_set_*` functions, in either dimension.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; `raw` and `n`
/// must satisfy [`RawInput::borrow`], and `out_set` must be NULL or point to a writable
/// `size_t`.
unsafe fn add_set<T: Precision, const D: usize, R: RawInput<T, D>>(
    search: *mut HhgSearch,
    raw: R,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that a live `search` is not shared during the call.
        let mut search = unsafe { search_mut(search) }?;
        // SAFETY: the caller guarantees that `out_set` is NULL or writable.
        let out = unsafe { output(out_set, "out_set") }?;
        let state = R::state(&mut search)?;
        // SAFETY: the caller guarantees that `raw` holds `n` points.
        let points = unsafe { raw.borrow(n) }?;
        out.write(state.add(points, dynamic)?);
        Ok(())
    })
}

/// How [`replace_set`] changes a set's points.
#[derive(Clone, Copy, PartialEq)]
enum Replace {
    /// New positions of the same points (`hhg_search_update_set_*`).
    Positions,
    /// Any number of points (`hhg_search_resize_set_*`).
    Resize,
}

/// The body of the `hhg_search_update_set_*` and `hhg_search_resize_set_*` functions, in
/// either dimension.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; `raw` and `n`
/// must satisfy [`RawInput::borrow`].
unsafe fn replace_set<T: Precision, const D: usize, R: RawInput<T, D>>(
    search: *mut HhgSearch,
    set: usize,
    raw: R,
    n: usize,
    how: Replace,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that a live `search` is not shared during the call.
        let mut search = unsafe { search_mut(search) }?;
        let state = R::state(&mut search)?;
        // SAFETY: the caller guarantees that `raw` holds `n` points.
        let points = unsafe { raw.borrow(n) }?;
        match how {
            Replace::Positions => state.update(set, points)?,
            Replace::Resize => state.resize(set, points)?,
        }
        Ok(())
    })
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
/// `HHG_STATUS_TOO_MANY_POINTS`, `HHG_STATUS_PRECISION_MISMATCH` on an f64 search,
/// `HHG_STATUS_WRONG_DIMENSION` on a 2-D search (use `hhg_search_add_set_2d_f32`), or
/// `HHG_STATUS_NULL_POINTER`; nothing is added then.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xyz` must be NULL or point to `3 * n` readable floats; `out_set` must be NULL or point
/// to a writable `size_t`.
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
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xyz` must be NULL or point to `3 * n` readable doubles; `out_set` must be NULL or point
/// to a writable `size_t`.
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
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// each of `x`, `y` and `z` must be NULL or point to `n` readable floats; `out_set` must be
/// NULL or point to a writable `size_t`.
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
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// each of `x`, `y` and `z` must be NULL or point to `n` readable doubles; `out_set` must
/// be NULL or point to a writable `size_t`.
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
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xyz` must be NULL or point to `3 * n` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_f32(
    search: *mut HhgSearch,
    set: usize,
    xyz: *const f32,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPoints::Aos(xyz), n, Replace::Positions) }
}

/// Replaces the positions of set `set` of an f64 search by `n` points given as `3 * n`
/// doubles; otherwise like `hhg_search_update_set_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xyz` must be NULL or point to `3 * n` readable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_f64(
    search: *mut HhgSearch,
    set: usize,
    xyz: *const f64,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPoints::Aos(xyz), n, Replace::Positions) }
}

/// Replaces the positions of set `set` of an f32 search by three arrays of `n` floats;
/// otherwise like `hhg_search_update_set_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// each of `x`, `y` and `z` must be NULL or point to `n` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_soa_f32(
    search: *mut HhgSearch,
    set: usize,
    x: *const f32,
    y: *const f32,
    z: *const f32,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPoints::Soa(x, y, z), n, Replace::Positions) }
}

/// Replaces the positions of set `set` of an f64 search by three arrays of `n` doubles;
/// otherwise like `hhg_search_update_set_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// each of `x`, `y` and `z` must be NULL or point to `n` readable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_soa_f64(
    search: *mut HhgSearch,
    set: usize,
    x: *const f64,
    y: *const f64,
    z: *const f64,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPoints::Soa(x, y, z), n, Replace::Positions) }
}

/// Replaces set `set` of an f32 search by `n` points given as `3 * n` floats, where `n` may
/// differ from the set's point count (a set that grows or shrinks; ids and settings of the
/// sets stay). The set is re-indexed now; every result involving it is stale until the next
/// `hhg_search_find_neighbors`. `xyz` may be NULL when `n` is 0.
///
/// Fails with `HHG_STATUS_UNKNOWN_POINT_SET` or the errors of `hhg_search_add_set_f32`; the
/// set keeps its points then.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xyz` must be NULL or point to `3 * n` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_resize_set_f32(
    search: *mut HhgSearch,
    set: usize,
    xyz: *const f32,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPoints::Aos(xyz), n, Replace::Resize) }
}

/// Replaces set `set` of an f64 search by `n` points given as `3 * n` doubles; otherwise like
/// `hhg_search_resize_set_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xyz` must be NULL or point to `3 * n` readable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_resize_set_f64(
    search: *mut HhgSearch,
    set: usize,
    xyz: *const f64,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPoints::Aos(xyz), n, Replace::Resize) }
}

/// Adds a point set of `n` points of the plane given as `xy = {x0, y0, x1, y1, ...}` (`2 * n`
/// floats) to a 2-D f32 search (`hhg_search_new_2d_f32`), and stores its id in `*out_set`;
/// otherwise like `hhg_search_add_set_f32`.
///
/// Fails with `HHG_STATUS_NON_FINITE_COORDINATE` for a NaN or infinite coordinate (the
/// message names the point and the axis), `HHG_STATUS_COORDINATE_OUT_OF_RANGE`,
/// `HHG_STATUS_TOO_MANY_POINTS`, `HHG_STATUS_WRONG_DIMENSION` on a 3-D search,
/// `HHG_STATUS_PRECISION_MISMATCH` on an f64 search, or `HHG_STATUS_NULL_POINTER`; nothing
/// is added then.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xy` must be NULL or point to `2 * n` readable floats; `out_set` must be NULL or point
/// to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_add_set_2d_f32(
    search: *mut HhgSearch,
    xy: *const f32,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `add_set`'s.
    unsafe { add_set(search, RawPlanePoints::Aos(xy), n, dynamic, out_set) }
}

/// Adds a point set of `n` points of the plane given as two arrays `x`, `y` of `n` floats
/// each to a 2-D f32 search; otherwise like `hhg_search_add_set_2d_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// each of `x` and `y` must be NULL or point to `n` readable floats; `out_set` must be
/// NULL or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_add_set_soa_2d_f32(
    search: *mut HhgSearch,
    x: *const f32,
    y: *const f32,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `add_set`'s.
    unsafe { add_set(search, RawPlanePoints::Soa(x, y), n, dynamic, out_set) }
}

/// Replaces the positions of set `set` of a 2-D f32 search by `n` points given as `2 * n`
/// floats (`xy`); `n` must be the set's point count. Otherwise like
/// `hhg_search_update_set_f32`; fails with `HHG_STATUS_WRONG_DIMENSION` on a 3-D search.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xy` must be NULL or point to `2 * n` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_2d_f32(
    search: *mut HhgSearch,
    set: usize,
    xy: *const f32,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPlanePoints::Aos(xy), n, Replace::Positions) }
}

/// Replaces the positions of set `set` of a 2-D f32 search by two arrays of `n` floats;
/// otherwise like `hhg_search_update_set_2d_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// each of `x` and `y` must be NULL or point to `n` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_soa_2d_f32(
    search: *mut HhgSearch,
    set: usize,
    x: *const f32,
    y: *const f32,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe {
        replace_set(
            search,
            set,
            RawPlanePoints::Soa(x, y),
            n,
            Replace::Positions,
        )
    }
}

/// Replaces set `set` of a 2-D f32 search by `n` points given as `2 * n` floats (`xy`),
/// where `n` may differ from the set's point count; otherwise like
/// `hhg_search_resize_set_f32`; fails with `HHG_STATUS_WRONG_DIMENSION` on a 3-D search.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xy` must be NULL or point to `2 * n` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_resize_set_2d_f32(
    search: *mut HhgSearch,
    set: usize,
    xy: *const f32,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPlanePoints::Aos(xy), n, Replace::Resize) }
}

/// Adds a point set of `n` points of the plane given as `2 * n` doubles to a 2-D f64 search
/// (`hhg_search_new_2d_f64`); otherwise like `hhg_search_add_set_2d_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xy` must be NULL or point to `2 * n` readable doubles; `out_set` must be NULL or point
/// to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_add_set_2d_f64(
    search: *mut HhgSearch,
    xy: *const f64,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `add_set`'s.
    unsafe { add_set(search, RawPlanePoints::Aos(xy), n, dynamic, out_set) }
}

/// Adds a point set of `n` points of the plane given as two arrays `x`, `y` of `n` doubles
/// each to a 2-D f64 search; otherwise like `hhg_search_add_set_2d_f32`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// each of `x` and `y` must be NULL or point to `n` readable doubles; `out_set` must be
/// NULL or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_add_set_soa_2d_f64(
    search: *mut HhgSearch,
    x: *const f64,
    y: *const f64,
    n: usize,
    dynamic: bool,
    out_set: *mut usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `add_set`'s.
    unsafe { add_set(search, RawPlanePoints::Soa(x, y), n, dynamic, out_set) }
}

/// Replaces the positions of set `set` of a 2-D f64 search by `n` points given as `2 * n`
/// doubles (`xy`); `n` must be the set's point count. Otherwise like
/// `hhg_search_update_set_f64`; fails with `HHG_STATUS_WRONG_DIMENSION` on a 3-D search.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xy` must be NULL or point to `2 * n` readable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_2d_f64(
    search: *mut HhgSearch,
    set: usize,
    xy: *const f64,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPlanePoints::Aos(xy), n, Replace::Positions) }
}

/// Replaces the positions of set `set` of a 2-D f64 search by two arrays of `n` doubles;
/// otherwise like `hhg_search_update_set_2d_f64`.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// each of `x` and `y` must be NULL or point to `n` readable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_update_set_soa_2d_f64(
    search: *mut HhgSearch,
    set: usize,
    x: *const f64,
    y: *const f64,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe {
        replace_set(
            search,
            set,
            RawPlanePoints::Soa(x, y),
            n,
            Replace::Positions,
        )
    }
}

/// Replaces set `set` of a 2-D f64 search by `n` points given as `2 * n` doubles (`xy`),
/// where `n` may differ from the set's point count; otherwise like
/// `hhg_search_resize_set_f64`; fails with `HHG_STATUS_WRONG_DIMENSION` on a 3-D search.
///
/// # Safety
///
/// Any `search` is checked, but no other call may use it during this one; unless `n` is 0,
/// `xy` must be NULL or point to `2 * n` readable doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hhg_search_resize_set_2d_f64(
    search: *mut HhgSearch,
    set: usize,
    xy: *const f64,
    n: usize,
) -> HhgStatus {
    // SAFETY: this function's contract is `replace_set`'s.
    unsafe { replace_set(search, set, RawPlanePoints::Aos(xy), n, Replace::Resize) }
}
