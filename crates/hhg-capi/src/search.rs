//! The search handle: the opaque `HhgSearch`, the registry of the searches it names (in
//! either precision), the borrows of a handle that refuse a freed, made-up or poisoned
//! search, and the shared bodies of the entry points that change or read one. The entry
//! points themselves live in the submodules, in the order of the header.

// cbindgen writes the functions into `include/hhg.h` in the order it reads the modules, so
// the modules of the entry points keep the order of the header. Each declaration stands
// alone because rustfmt sorts the declarations within a group.
mod lifecycle;

mod sets;

mod steps;

mod results;

mod state;

mod plane;

pub use lifecycle::{
    hhg_search_dimension, hhg_search_free, hhg_search_new_2d_f32, hhg_search_new_2d_f64,
    hhg_search_new_f32, hhg_search_new_f64, hhg_search_precision, hhg_search_set_count,
    hhg_search_set_len,
};
pub use results::{
    HhgNeighborLists, HhgPairList, hhg_search_adopt_cell_order, hhg_search_neighbors,
    hhg_search_order, hhg_search_pairs, hhg_search_query_point_2d_f32,
    hhg_search_query_point_2d_f64, hhg_search_query_point_f32, hhg_search_query_point_f64,
};
pub use sets::{
    hhg_search_add_set_2d_f32, hhg_search_add_set_2d_f64, hhg_search_add_set_f32,
    hhg_search_add_set_f64, hhg_search_add_set_soa_2d_f32, hhg_search_add_set_soa_2d_f64,
    hhg_search_add_set_soa_f32, hhg_search_add_set_soa_f64, hhg_search_resize_set_2d_f32,
    hhg_search_resize_set_2d_f64, hhg_search_resize_set_f32, hhg_search_resize_set_f64,
    hhg_search_update_set_2d_f32, hhg_search_update_set_2d_f64, hhg_search_update_set_f32,
    hhg_search_update_set_f64, hhg_search_update_set_soa_2d_f32, hhg_search_update_set_soa_2d_f64,
    hhg_search_update_set_soa_f32, hhg_search_update_set_soa_f64,
};
pub use steps::{
    hhg_search_find_neighbors, hhg_search_set_active, hhg_search_set_max_entries,
    hhg_search_set_pairs, hhg_search_set_with_distances,
};

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};
use std::sync::{Mutex, MutexGuard, PoisonError};

use hhg_core::{NeighborLists, Real};

use crate::args::output;
use crate::registry::Registry;
use crate::status::{Failure, HhgStatus, guard};
use state::{PlaneState, State};

/// An opaque neighbour search over several point sets sharing one radius, in one precision
/// (`float` or `double`) and one dimension (3-D or 2-D), both fixed at creation.
///
/// Create it with `hhg_search_new_f32` or `hhg_search_new_f64` (3-D), or
/// `hhg_search_new_2d_f32` or `hhg_search_new_2d_f64` (2-D), and free it with
/// `hhg_search_free`. Functions that take it as `const HhgSearch *` only read it and may run
/// concurrently with each other; a function that takes `HhgSearch *` (including
/// `hhg_search_free`) must not run concurrently with any other call on the same search.
///
/// An `HhgSearch *` is a checked handle, not the address of an object: every function
/// looks it up and returns `HHG_STATUS_INVALID_HANDLE` for a search that was already freed
/// or a value that never came from `hhg_search_new_*`. Never dereference it.
pub struct HhgSearch {
    /// No C code sees inside, and no Rust code makes one: the handle is only a value.
    _opaque: [u8; 0],
}

/// What a search handle names: the search in its precision and dimension.
struct Search {
    inner: Inner,
    /// Set when a panic unwound through a call that was changing the search: its state may be
    /// inconsistent, so every later call refuses it.
    poisoned: bool,
}

// Searches live in the process-wide registry, and calls that read one may run on several
// threads at once.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Search>();
};

/// Every live search, named by the handles given to C.
static SEARCHES: Mutex<Registry<Search>> = Mutex::new(Registry::new());

/// The name of a search handle in messages: the argument of every entry point.
const SEARCH: &str = "search";

/// Locks the registry of searches. No registry operation panics between two changes of
/// its table, so a lock poisoned by a panic elsewhere still guards a consistent table.
fn searches() -> MutexGuard<'static, Registry<Search>> {
    SEARCHES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers a new search and returns its handle.
fn register(search: Search) -> Result<*mut HhgSearch, Failure> {
    let search = Box::new(search);
    let handle = searches().insert(search)?;
    Ok(ptr::without_provenance_mut(handle))
}

/// The search a handle names, checked in the registry; the lock is released on return, so
/// that a long call on one search does not hold up calls on others.
fn look_up(search: *const HhgSearch) -> Result<NonNull<Search>, Failure> {
    if search.is_null() {
        return Err(Failure::null(SEARCH));
    }
    searches().get(search.addr(), SEARCH)
}

/// Takes the search a handle names out of the registry, to be dropped by the caller.
fn unregister(search: *mut HhgSearch) -> Result<Box<Search>, Failure> {
    searches().remove(search.addr(), SEARCH)
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

/// The dimension of a search: the number of coordinates of its points.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HhgDimension {
    /// Points of the plane, `(x, y)`: a search made by `hhg_search_new_2d_f32` or
    /// `hhg_search_new_2d_f64`, whose point functions end in `_2d_f32` or `_2d_f64`.
    Two = 2,
    /// Points of space, `(x, y, z)`: a search made by `hhg_search_new_f32` or
    /// `hhg_search_new_f64`.
    Three = 3,
}

/// The search in the precision and dimension it was created with.
enum Inner {
    F32(State<f32>),
    F64(State<f64>),
    PlaneF32(PlaneState<f32>),
    PlaneF64(PlaneState<f64>),
}

/// Runs `$body` with `$state` bound to the search's state, whatever its precision and
/// dimension: the 3-D and 2-D states have the same dimension-free methods.
macro_rules! dispatch {
    ($inner:expr, $state:ident => $body:expr) => {
        match $inner {
            $crate::search::Inner::F32($state) => $body,
            $crate::search::Inner::F64($state) => $body,
            $crate::search::Inner::PlaneF32($state) => $body,
            $crate::search::Inner::PlaneF64($state) => $body,
        }
    };
}

// The submodules name the macro by path.
use dispatch;

/// The two precisions, tied to the variants of [`Inner`].
trait Precision: Real {
    /// The suffix of this precision's functions.
    const NAME: &'static str;

    /// Wraps a 3-D state of this precision.
    fn wrap(state: State<Self>) -> Inner;

    /// Wraps a 2-D state of this precision.
    fn wrap_plane(state: PlaneState<Self>) -> Inner;

    /// The 3-D state, when the search is 3-D and has this precision.
    fn state_mut(inner: &mut Inner) -> Option<&mut State<Self>>;

    /// The 3-D state to read, when the search is 3-D and has this precision.
    fn state_ref(inner: &Inner) -> Option<&State<Self>>;

    /// The 2-D state, when the search is 2-D and has this precision.
    fn plane_mut(inner: &mut Inner) -> Option<&mut PlaneState<Self>>;

    /// The 2-D state to read, when the search is 2-D and has this precision.
    fn plane_ref(inner: &Inner) -> Option<&PlaneState<Self>>;

    /// Runs `body` with this thread's scratch lists of 2-D position queries.
    fn with_query_lists<R>(body: impl FnOnce(&mut NeighborLists<Self>) -> R) -> R;

    /// Splits a distance array into the `(f32, f64)` fields of a view; the other is NULL.
    fn distance_fields(distances: Option<&[Self]>) -> (*const f32, *const f64);
}

thread_local! {
    /// The lists of the last 2-D position query of an f32 search on this thread, reused.
    static QUERY_LISTS_F32: RefCell<NeighborLists<f32>> = RefCell::new(NeighborLists::default());

    /// The lists of the last 2-D position query of an f64 search on this thread, reused.
    static QUERY_LISTS_F64: RefCell<NeighborLists<f64>> = RefCell::new(NeighborLists::default());
}

impl Precision for f32 {
    const NAME: &'static str = "f32";

    fn wrap(state: State<Self>) -> Inner {
        Inner::F32(state)
    }

    fn wrap_plane(state: PlaneState<Self>) -> Inner {
        Inner::PlaneF32(state)
    }

    fn state_mut(inner: &mut Inner) -> Option<&mut State<Self>> {
        match inner {
            Inner::F32(state) => Some(state),
            _ => None,
        }
    }

    fn state_ref(inner: &Inner) -> Option<&State<Self>> {
        match inner {
            Inner::F32(state) => Some(state),
            _ => None,
        }
    }

    fn plane_mut(inner: &mut Inner) -> Option<&mut PlaneState<Self>> {
        match inner {
            Inner::PlaneF32(state) => Some(state),
            _ => None,
        }
    }

    fn plane_ref(inner: &Inner) -> Option<&PlaneState<Self>> {
        match inner {
            Inner::PlaneF32(state) => Some(state),
            _ => None,
        }
    }

    fn with_query_lists<R>(body: impl FnOnce(&mut NeighborLists<Self>) -> R) -> R {
        QUERY_LISTS_F32.with_borrow_mut(body)
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

    fn wrap_plane(state: PlaneState<Self>) -> Inner {
        Inner::PlaneF64(state)
    }

    fn state_mut(inner: &mut Inner) -> Option<&mut State<Self>> {
        match inner {
            Inner::F64(state) => Some(state),
            _ => None,
        }
    }

    fn state_ref(inner: &Inner) -> Option<&State<Self>> {
        match inner {
            Inner::F64(state) => Some(state),
            _ => None,
        }
    }

    fn plane_mut(inner: &mut Inner) -> Option<&mut PlaneState<Self>> {
        match inner {
            Inner::PlaneF64(state) => Some(state),
            _ => None,
        }
    }

    fn plane_ref(inner: &Inner) -> Option<&PlaneState<Self>> {
        match inner {
            Inner::PlaneF64(state) => Some(state),
            _ => None,
        }
    }

    fn with_query_lists<R>(body: impl FnOnce(&mut NeighborLists<Self>) -> R) -> R {
        QUERY_LISTS_F64.with_borrow_mut(body)
    }

    fn distance_fields(distances: Option<&[Self]>) -> (*const f32, *const f64) {
        (ptr::null(), distances.map_or(ptr::null(), <[f64]>::as_ptr))
    }
}

impl Search {
    /// The precision the search was created with.
    fn precision(&self) -> HhgPrecision {
        match self.inner {
            Inner::F32(_) | Inner::PlaneF32(_) => HhgPrecision::F32,
            Inner::F64(_) | Inner::PlaneF64(_) => HhgPrecision::F64,
        }
    }

    /// The dimension the search was created with.
    fn dimension(&self) -> HhgDimension {
        match self.inner {
            Inner::F32(_) | Inner::F64(_) => HhgDimension::Three,
            Inner::PlaneF32(_) | Inner::PlaneF64(_) => HhgDimension::Two,
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

    /// The 3-D state in precision `T`, or a dimension or precision mismatch.
    fn state_mut<T: Precision>(&mut self) -> Result<&mut State<T>, Failure> {
        let (dimension, precision) = (self.dimension(), self.precision());
        T::state_mut(&mut self.inner)
            .ok_or_else(|| mismatch::<T>(HhgDimension::Three, dimension, precision))
    }

    /// The 3-D state in precision `T` to read, or a dimension or precision mismatch.
    fn state_ref<T: Precision>(&self) -> Result<&State<T>, Failure> {
        T::state_ref(&self.inner)
            .ok_or_else(|| mismatch::<T>(HhgDimension::Three, self.dimension(), self.precision()))
    }

    /// The 2-D state in precision `T`, or a dimension or precision mismatch.
    fn plane_mut<T: Precision>(&mut self) -> Result<&mut PlaneState<T>, Failure> {
        let (dimension, precision) = (self.dimension(), self.precision());
        T::plane_mut(&mut self.inner)
            .ok_or_else(|| mismatch::<T>(HhgDimension::Two, dimension, precision))
    }

    /// The 2-D state in precision `T` to read, or a dimension or precision mismatch.
    fn plane_ref<T: Precision>(&self) -> Result<&PlaneState<T>, Failure> {
        T::plane_ref(&self.inner)
            .ok_or_else(|| mismatch::<T>(HhgDimension::Two, self.dimension(), self.precision()))
    }
}

/// The failure of a function of dimension `wanted` and precision `T` called on a search of
/// dimension `dimension` and precision `precision`: the dimension is reported first.
fn mismatch<T: Precision>(
    wanted: HhgDimension,
    dimension: HhgDimension,
    precision: HhgPrecision,
) -> Failure {
    if wanted == dimension {
        precision_mismatch::<T>(precision)
    } else {
        dimension_mismatch(dimension)
    }
}

/// The failure of a point function of the other dimension called on a search of dimension
/// `actual`.
fn dimension_mismatch(actual: HhgDimension) -> Failure {
    let message = match actual {
        HhgDimension::Two => {
            "a 3-D point function was called on a 2-D search (made by hhg_search_new_2d_*); \
             use its _2d_f32 or _2d_f64 form, which takes (x, y) points"
        }
        HhgDimension::Three => {
            "a _2d_ point function was called on a 3-D search (made by hhg_search_new_f32 or \
             hhg_search_new_f64); use the form without _2d_, which takes (x, y, z) points"
        }
    };
    Failure::new(HhgStatus::WrongDimension, message)
}

/// The failure of an `_f32` or `_f64` function (precision `T`) called on a search of
/// precision `actual`.
fn precision_mismatch<T: Precision>(actual: HhgPrecision) -> Failure {
    let actual = match actual {
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
}

/// Mutable access to a search that marks it unusable when a panic unwinds through the call.
struct Access<'a>(&'a mut Search);

impl Deref for Access<'_> {
    type Target = Search;

    fn deref(&self) -> &Search {
        self.0
    }
}

impl DerefMut for Access<'_> {
    fn deref_mut(&mut self) -> &mut Search {
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
/// Any value of `search` is checked; when it names a live search, nothing else may access
/// or free that search during the call.
unsafe fn search_mut<'a>(search: *mut HhgSearch) -> Result<Access<'a>, Failure> {
    let entry = look_up(search)?;
    debug_assert!(entry.as_ptr().is_aligned());
    // SAFETY: `entry` points to the live, boxed search the registry has just found for the
    // handle; it stays valid until the handle is freed, which the caller guarantees does not
    // happen during the call, and nothing else accesses it meanwhile (also the caller's
    // guarantee), so the exclusive reference is unique while it lives.
    let search = unsafe { &mut *entry.as_ptr() };
    search.check_usable()?;
    Ok(Access(search))
}

/// Borrows a usable search for a call that reads it.
///
/// # Safety
///
/// Any value of `search` is checked; when it names a live search, nothing may change or
/// free that search during the call.
unsafe fn search_ref<'a>(search: *const HhgSearch) -> Result<&'a Search, Failure> {
    let entry = look_up(search)?;
    debug_assert!(entry.as_ptr().is_aligned());
    // SAFETY: `entry` points to the live, boxed search the registry has just found for the
    // handle; it stays valid until the handle is freed, and the caller guarantees that
    // nothing changes or frees it during the call.
    let search = unsafe { &*entry.as_ptr() };
    search.check_usable()?;
    Ok(search)
}

/// The body of every function that changes a search without further pointer arguments.
///
/// # Safety
///
/// When `search` names a live search, nothing else may access or free it during the call.
unsafe fn change(
    search: *mut HhgSearch,
    body: impl FnOnce(&mut Inner) -> Result<(), Failure>,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that a live `search` is not shared during the call.
        let mut search = unsafe { search_mut(search) }?;
        body(&mut search.inner)
    })
}

/// The body of every function that reads a search into one output value.
///
/// # Safety
///
/// When `search` names a live search, nothing may change or free it during the call, and
/// `out` must be NULL or point to a writable `V`.
unsafe fn read<V>(
    search: *const HhgSearch,
    out: *mut V,
    out_name: &str,
    body: impl FnOnce(&Search) -> Result<V, Failure>,
) -> HhgStatus {
    guard(|| {
        // SAFETY: the caller guarantees that nothing changes a live `search` during the call.
        let search = unsafe { search_ref(search) }?;
        // SAFETY: the caller guarantees that `out` is NULL or writable.
        let out = unsafe { output(out, out_name) }?;
        out.write(body(search)?);
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
