//! Status codes every entry point returns, their fixed descriptions, the thread's last error
//! message, and the guard that keeps panics from crossing the C boundary.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use hhg_core::Error;

/// The outcome of a call: `HHG_STATUS_OK`, or why the call failed.
///
/// Every function that can fail returns one. After a failure, `hhg_last_error_message()`
/// gives a message naming the offending value, and `hhg_error_message(code)` a fixed
/// description of the code. The values are stable: new codes are only ever appended.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HhgStatus {
    /// The call succeeded.
    Ok = 0,
    /// A required pointer argument was NULL (an array may only be NULL when its length is 0).
    NullPointer = 1,
    /// A pointer argument is not aligned for its type.
    InvalidArgument = 2,
    /// An `_f32` function was called on a search created by `hhg_search_new_f64`, or an
    /// `_f64` function on one created by `hhg_search_new_f32`.
    PrecisionMismatch = 3,
    /// The requested result does not exist: the pair of sets is not active, or has not been
    /// searched by `hhg_search_find_neighbors` since it was activated or a set changed, or
    /// unique pairs are not enabled for the set.
    NotSearched = 4,
    /// A point-set id that the search does not hold.
    UnknownPointSet = 5,
    /// The radius is zero, negative, NaN or infinite, or its square overflows, underflows or
    /// is subnormal in the search's precision.
    InvalidRadius = 6,
    /// A coordinate is NaN or infinite.
    NonFiniteCoordinate = 7,
    /// The points span more cells along one axis than the grid can number.
    CoordinateOutOfRange = 8,
    /// More points than a `uint32_t` index can number.
    TooManyPoints = 9,
    /// New positions for a set do not have the set's point count.
    PointCountChanged = 10,
    /// Separate coordinate arrays of different lengths.
    LengthMismatch = 11,
    /// A box whose minimum exceeds its maximum.
    InvalidBox = 12,
    /// A negative, NaN or infinite particle radius.
    InvalidParticleRadius = 13,
    /// A configuration value outside its valid range.
    InvalidConfig = 14,
    /// A handle of hhg-core (a scene object) that does not name a live object. The C API's
    /// own handles report `HHG_STATUS_INVALID_HANDLE` instead.
    StaleHandle = 15,
    /// An internal error (a Rust panic) was caught. A search on which it happened is left
    /// unusable: every later call on it returns this code, and it can only be freed.
    InternalError = 16,
    /// A pair names a point index not below the point count.
    PairIndexOutOfRange = 17,
    /// A point lies too many box lengths outside a periodic box for an exact image count.
    ImageCountOutOfRange = 18,
    /// A non-NULL `HhgSearch *` that names no live search: it was already freed by
    /// `hhg_search_free`, or it never came from `hhg_search_new_*`.
    InvalidHandle = 19,
    /// Memory for the results could not be allocated. The search keeps its points; its
    /// lists and pairs of that call are empty.
    OutOfMemory = 20,
    /// The results would exceed the cap set on them (`hhg_search_set_max_entries`); nothing
    /// was allocated past it, and the lists and pairs of that call are empty.
    OutputTooLarge = 21,
    /// No search handle is left: 2^24 searches are live at once on a 64-bit target (2^10 on
    /// a 32-bit one), or the process has created and freed about 2^48 (2^24) of them, so
    /// that every slot's generations are used up. Nothing was created.
    HandlesExhausted = 22,
    /// A 3-D point function (one without `_2d_`) was called on a 2-D search created by
    /// `hhg_search_new_2d_f32` or `hhg_search_new_2d_f64`, or a `_2d_` function on a 3-D
    /// search.
    WrongDimension = 23,
}

/// The fixed description of every status code, in code order.
const DESCRIPTIONS: [(HhgStatus, &CStr); 24] = [
    (HhgStatus::Ok, c"success"),
    (
        HhgStatus::NullPointer,
        c"a required pointer argument was NULL",
    ),
    (
        HhgStatus::InvalidArgument,
        c"a pointer argument is not aligned for its type",
    ),
    (
        HhgStatus::PrecisionMismatch,
        c"the function's precision (f32 or f64) differs from the search's",
    ),
    (
        HhgStatus::NotSearched,
        c"the result was not computed: the pair of sets (or the set's unique pairs) is not \
          enabled, or was not searched since it was enabled or a set changed",
    ),
    (
        HhgStatus::UnknownPointSet,
        c"the point set does not exist in this search",
    ),
    (
        HhgStatus::InvalidRadius,
        c"the radius must be finite and > 0 with a finite, normal square",
    ),
    (
        HhgStatus::NonFiniteCoordinate,
        c"a coordinate is NaN or infinite",
    ),
    (
        HhgStatus::CoordinateOutOfRange,
        c"the points span more cells than the grid can number",
    ),
    (
        HhgStatus::TooManyPoints,
        c"more points than uint32_t can number",
    ),
    (
        HhgStatus::PointCountChanged,
        c"the new positions do not have the set's point count",
    ),
    (
        HhgStatus::LengthMismatch,
        c"coordinate arrays differ in length",
    ),
    (HhgStatus::InvalidBox, c"a box is empty along an axis"),
    (
        HhgStatus::InvalidParticleRadius,
        c"a particle radius is negative, NaN or infinite",
    ),
    (
        HhgStatus::InvalidConfig,
        c"a configuration value is out of range",
    ),
    (
        HhgStatus::StaleHandle,
        c"a handle does not name a live object",
    ),
    (
        HhgStatus::InternalError,
        c"internal error (a panic was caught); free the search",
    ),
    (
        HhgStatus::PairIndexOutOfRange,
        c"a pair names a point index out of range",
    ),
    (
        HhgStatus::ImageCountOutOfRange,
        c"a point lies too far outside the periodic box for an exact image count",
    ),
    (
        HhgStatus::InvalidHandle,
        c"the handle names no live search: it was freed, or never came from hhg_search_new_*",
    ),
    (
        HhgStatus::OutOfMemory,
        c"out of memory: the results could not be allocated",
    ),
    (
        HhgStatus::OutputTooLarge,
        c"the results would exceed their cap",
    ),
    (
        HhgStatus::HandlesExhausted,
        c"no search handle is left: too many searches are live, or every slot's generations \
          are used up",
    ),
    (
        HhgStatus::WrongDimension,
        c"the function's dimension (2-D or 3-D) differs from the search's",
    ),
];

/// The status code of each error of hhg-core. `Error` is `#[non_exhaustive]`: an error
/// hhg-core adds before this map learns it reads as an internal error (the test
/// `every_core_error_maps_to_its_code_and_display_text` lists every variant, so adding one there is the reminder).
fn status_of(error: &Error) -> HhgStatus {
    match error {
        Error::InvalidRadius { .. } => HhgStatus::InvalidRadius,
        Error::NonFiniteCoordinate { .. } => HhgStatus::NonFiniteCoordinate,
        Error::CoordinateOutOfRange { .. } => HhgStatus::CoordinateOutOfRange,
        Error::TooManyPoints { .. } => HhgStatus::TooManyPoints,
        Error::LengthMismatch { .. } => HhgStatus::LengthMismatch,
        Error::InvalidBox { .. } => HhgStatus::InvalidBox,
        Error::InvalidParticleRadius { .. } => HhgStatus::InvalidParticleRadius,
        Error::InvalidConfig { .. } => HhgStatus::InvalidConfig,
        Error::StaleHandle { .. } => HhgStatus::StaleHandle,
        Error::UnknownPointSet { .. } => HhgStatus::UnknownPointSet,
        Error::PointCountChanged { .. } => HhgStatus::PointCountChanged,
        Error::PairIndexOutOfRange { .. } => HhgStatus::PairIndexOutOfRange,
        Error::ImageCountOutOfRange { .. } => HhgStatus::ImageCountOutOfRange,
        Error::OutOfMemory { .. } => HhgStatus::OutOfMemory,
        Error::OutputTooLarge { .. } => HhgStatus::OutputTooLarge,
        _ => HhgStatus::InternalError,
    }
}

/// Why a call failed: the code it returns and the message `hhg_last_error_message` gives.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Failure {
    pub(crate) status: HhgStatus,
    pub(crate) message: String,
}

impl Failure {
    /// A failure with `status` and `message`.
    pub(crate) fn new(status: HhgStatus, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// The failure of a NULL pointer argument called `name`.
    pub(crate) fn null(name: &str) -> Self {
        Self::new(HhgStatus::NullPointer, format!("argument `{name}` is NULL"))
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Self::new(status_of(&error), error.to_string())
    }
}

thread_local! {
    /// The message of the last failed call on this thread; `None` after a successful call.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records the outcome of a call as this thread's last error.
fn record(message: Option<String>) {
    let message = message.map(|text| {
        // Messages are built from numbers and fixed text; a NUL byte is impossible, but
        // would only shorten the message rather than fail.
        let text = text.replace('\0', " ");
        CString::new(text).unwrap_or_default()
    });
    // A thread being torn down has no last error to keep; ignoring that case is fine.
    let _ = LAST_ERROR.try_with(|last| *last.borrow_mut() = message);
}

/// The text of a caught panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "no message"
    }
}

/// Runs the body of an entry point: maps its result to a status code, records the message
/// of a failure as the thread's last error (and clears it on success), and turns a panic
/// into [`HhgStatus::InternalError`] instead of letting it unwind into C.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> HhgStatus {
    run(body, true)
}

/// Like [`guard`], except that a success leaves the thread's last error message as it was:
/// for `hhg_search_free`, which cleanup code calls between a failure and reading its message.
pub(crate) fn guard_keeping_message(body: impl FnOnce() -> Result<(), Failure>) -> HhgStatus {
    run(body, false)
}

/// The body of [`guard`] and [`guard_keeping_message`]; `clear` tells whether a success
/// clears the last error message.
fn run(body: impl FnOnce() -> Result<(), Failure>, clear: bool) -> HhgStatus {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(Failure::new(
            HhgStatus::InternalError,
            format!("internal error: {}", panic_text(payload.as_ref())),
        ))
    });
    match outcome {
        Ok(()) => {
            if clear {
                record(None);
            }
            HhgStatus::Ok
        }
        Err(failure) => {
            record(Some(failure.message));
            failure.status
        }
    }
}

/// Returns a fixed, human-readable description of a status code (a static string that is
/// never freed), or "unknown status code" for a value that is no `HhgStatus`.
#[unsafe(no_mangle)]
pub extern "C" fn hhg_error_message(code: i32) -> *const c_char {
    DESCRIPTIONS
        .iter()
        .find(|(status, _)| *status as i32 == code)
        .map_or(c"unknown status code", |(_, text)| text)
        .as_ptr()
}

/// Returns the message of the last failed call on the calling thread, naming the offending
/// value (e.g. "point 7 has a non-finite y coordinate (NaN)"), or "" when the last call that
/// returns an `HhgStatus` succeeded.
///
/// The string belongs to the library: it stays valid until the next call of an hhg function
/// on the same thread; copy it to keep it.
#[unsafe(no_mangle)]
pub extern "C" fn hhg_last_error_message() -> *const c_char {
    LAST_ERROR
        .try_with(|last| match last.borrow().as_ref() {
            Some(text) => text.as_ptr(),
            None => c"".as_ptr(),
        })
        .unwrap_or(c"".as_ptr())
}

/// Returns the version of the library as a static string, e.g. "0.1.0".
#[unsafe(no_mangle)]
pub extern "C" fn hhg_version() -> *const c_char {
    const VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => c"unknown",
        };
    VERSION.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a C string returned by the functions above.
    fn text(ptr: *const c_char) -> String {
        assert!(!ptr.is_null());
        // SAFETY: every pointer tested here comes from hhg_error_message,
        // hhg_last_error_message or hhg_version, which return NUL-terminated strings that
        // stay valid until the next hhg call on this thread.
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn descriptions_cover_every_code_in_order() {
        for (k, (status, description)) in DESCRIPTIONS.iter().enumerate() {
            assert_eq!(*status as i32, k as i32, "descriptions out of code order");
            assert!(!description.is_empty());
            assert_eq!(
                text(hhg_error_message(k as i32)),
                description.to_str().unwrap()
            );
        }
        assert_eq!(text(hhg_error_message(-1)), "unknown status code");
        assert_eq!(
            text(hhg_error_message(DESCRIPTIONS.len() as i32)),
            "unknown status code"
        );
    }

    #[test]
    fn a_panic_becomes_an_internal_error_with_its_message() {
        let status = guard(|| panic!("boom at {}", 42));
        assert_eq!(status, HhgStatus::InternalError);
        assert_eq!(text(hhg_last_error_message()), "internal error: boom at 42");
        let status = guard(|| std::panic::panic_any(7u8));
        assert_eq!(status, HhgStatus::InternalError);
        assert_eq!(text(hhg_last_error_message()), "internal error: no message");
    }

    #[test]
    fn success_clears_and_failure_sets_the_last_error() {
        let status = guard(|| Err(Failure::null("out")));
        assert_eq!(status, HhgStatus::NullPointer);
        assert_eq!(text(hhg_last_error_message()), "argument `out` is NULL");
        assert_eq!(guard(|| Ok(())), HhgStatus::Ok);
        assert_eq!(text(hhg_last_error_message()), "");
    }

    #[test]
    fn the_last_error_is_per_thread() {
        assert_eq!(guard(|| Err(Failure::null("here"))), HhgStatus::NullPointer);
        let other = std::thread::spawn(|| text(hhg_last_error_message()))
            .join()
            .unwrap();
        assert_eq!(other, "");
        assert_eq!(text(hhg_last_error_message()), "argument `here` is NULL");
    }

    #[test]
    fn every_core_error_maps_to_its_code_and_display_text() {
        let errors = [
            (
                Error::InvalidRadius { radius: -1.0 },
                HhgStatus::InvalidRadius,
            ),
            (
                Error::NonFiniteCoordinate {
                    index: 3,
                    axis: 1,
                    value: f64::NAN,
                },
                HhgStatus::NonFiniteCoordinate,
            ),
            (
                Error::CoordinateOutOfRange {
                    index: 0,
                    axis: 0,
                    value: 1e30,
                    cells: 1e30,
                    limit: 1e9,
                },
                HhgStatus::CoordinateOutOfRange,
            ),
            (
                Error::TooManyPoints { count: 9, limit: 8 },
                HhgStatus::TooManyPoints,
            ),
            (
                Error::LengthMismatch { x: 1, y: 2, z: 3 },
                HhgStatus::LengthMismatch,
            ),
            (
                Error::InvalidBox {
                    index: 0,
                    axis: 2,
                    min: 1.0,
                    max: 0.0,
                },
                HhgStatus::InvalidBox,
            ),
            (
                Error::InvalidParticleRadius {
                    index: 0,
                    radius: -1.0,
                },
                HhgStatus::InvalidParticleRadius,
            ),
            (
                Error::InvalidConfig {
                    name: "levels",
                    value: 0.0,
                    expected: "at least 1",
                },
                HhgStatus::InvalidConfig,
            ),
            (
                Error::StaleHandle {
                    slot: 1,
                    generation: 2,
                },
                HhgStatus::StaleHandle,
            ),
            (
                Error::UnknownPointSet { set: 4, sets: 2 },
                HhgStatus::UnknownPointSet,
            ),
            (
                Error::PointCountChanged {
                    set: 0,
                    expected: 3,
                    given: 2,
                },
                HhgStatus::PointCountChanged,
            ),
            (
                Error::PairIndexOutOfRange {
                    pair: 1,
                    indices: [0, 5],
                    count: 3,
                },
                HhgStatus::PairIndexOutOfRange,
            ),
            (
                Error::ImageCountOutOfRange {
                    index: 0,
                    axis: 0,
                    value: 1e30,
                    images: -1e29,
                    limit: 9e15,
                },
                HhgStatus::ImageCountOutOfRange,
            ),
            (
                Error::OutOfMemory {
                    what: "the list entries",
                    bytes: 1 << 40,
                },
                HhgStatus::OutOfMemory,
            ),
            (
                Error::OutputTooLarge {
                    what: "list entries",
                    at_least: 10,
                    cap: 9,
                },
                HhgStatus::OutputTooLarge,
            ),
        ];
        for (error, status) in errors {
            let failure = Failure::from(error.clone());
            assert_eq!(failure.status, status, "{error:?}");
            assert_eq!(failure.message, error.to_string());
            let returned = guard(|| Err(failure));
            assert_eq!(returned, status);
            assert_eq!(text(hhg_last_error_message()), error.to_string());
        }
    }

    #[test]
    fn the_version_is_the_crate_version() {
        assert_eq!(text(hhg_version()), env!("CARGO_PKG_VERSION"));
    }
}
