//! What the C API's 3-D and 2-D tests share: the seeded generator, the status checks with the
//! last error message, moved points and the two-call query of unknown length.

use std::ffi::CStr;

use hhg::*;
use hhg_core::Real;

/// A small deterministic random generator (SplitMix64).
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform value in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The thread's last error message.
pub fn last_error() -> String {
    // SAFETY: hhg_last_error_message returns a NUL-terminated string that stays valid until
    // the next hhg call on this thread; it is copied at once.
    unsafe { CStr::from_ptr(hhg_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// A failed call: its status and the last error message right after it.
pub type Failed = (HhgStatus, String);

/// `Ok` for `HHG_STATUS_OK`, otherwise the status with the last error message.
pub fn check(status: HhgStatus) -> Result<(), Failed> {
    if status == HhgStatus::Ok {
        assert_eq!(
            last_error(),
            "",
            "a successful call leaves no error message"
        );
        Ok(())
    } else {
        Err((status, last_error()))
    }
}

/// The points moved by up to 0.2 along each axis.
pub fn moved<T: Real, const D: usize>(rng: &mut SplitMix64, points: &[[T; D]]) -> Vec<[T; D]> {
    points
        .iter()
        .map(|p| p.map(|v| T::from_f64(v.to_f64() + rng.range(-0.2, 0.2))))
        .collect()
}

/// The neighbours a query function reports, through a first call with `capacity` entries
/// and, when they do not fit, a second with room for all. `query(found, capacity, count)`
/// calls the entry point with `capacity` writable entries at `found` and a writable `count`.
pub fn query_in_two_calls(
    capacity: usize,
    query: impl Fn(*mut u32, usize, &mut usize) -> HhgStatus,
) -> Result<Vec<u32>, Failed> {
    let mut found = vec![u32::MAX; capacity];
    let mut count = usize::MAX;
    check(query(found.as_mut_ptr(), capacity, &mut count))?;
    if count > capacity {
        assert!(
            found.iter().all(|&i| i != u32::MAX),
            "the first call fills its array"
        );
        found.resize(count, u32::MAX);
        check(query(found.as_mut_ptr(), count, &mut count))?;
    }
    found.truncate(count);
    Ok(found)
}
