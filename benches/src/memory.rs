//! A counting global allocator, so that the bench can report the peak heap of each engine run.
//!
//! The `hhg-bench` binary installs [`CountingAllocator`] as its global allocator; the runners
//! start a [`PeakMeter`] before an engine's first run and read the peak, above the heap in use
//! when the meter started, after its last run. Counting costs two relaxed atomic operations
//! per allocation. Where the allocator is not installed (the library's unit tests), the meter
//! reports nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes currently allocated through the counting allocator.
static CURRENT: AtomicUsize = AtomicUsize::new(0);

/// The most bytes allocated at once since the last [`PeakMeter::start`].
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator with byte counters: install it with `#[global_allocator]`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAllocator;

/// Counts `bytes` more in use and raises the peak if needed.
#[inline]
fn grow(bytes: usize) {
    let now = CURRENT.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

/// Counts `bytes` fewer in use.
#[inline]
fn shrink(bytes: usize) {
    CURRENT.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` with the caller's arguments, so the allocator
// upholds exactly `System`'s guarantees; the counters do not touch the memory.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout meets `GlobalAlloc::alloc`'s contract, which `System` shares.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator, that is by `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        shrink(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` and `layout` come from this allocator, that is from `System`, and the
        // caller guarantees `new_size` is valid for `layout`'s alignment.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                grow(new_size - layout.size());
            } else {
                shrink(layout.size() - new_size);
            }
        }
        new
    }
}

/// Whether the counting allocator is the global allocator of this process (it has counted
/// something: every Rust program allocates before its `main` hands over to the bench).
pub fn is_installed() -> bool {
    CURRENT.load(Ordering::Relaxed) > 0
}

/// Measures the peak heap from its start on, above the heap in use at the start.
#[derive(Debug)]
pub struct PeakMeter {
    /// Bytes in use when the meter started.
    base: usize,
}

impl PeakMeter {
    /// Starts measuring: the peak is reset to the bytes in use now.
    pub fn start() -> Self {
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        Self { base }
    }

    /// The most bytes in use at once since the start, above the start's; `None` when the
    /// counting allocator is not installed.
    pub fn peak_bytes(&self) -> Option<u64> {
        is_installed().then(|| PEAK.load(Ordering::Relaxed).saturating_sub(self.base) as u64)
    }
}

/// Formats a byte count in MiB with two decimals, or `-` when there is none.
pub fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "-".to_owned(),
        |b| format!("{:.2}", b as f64 / f64::from(1 << 20)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_allocator_the_meter_reports_nothing() {
        // The unit tests run on the default allocator, so nothing is counted.
        let meter = PeakMeter::start();
        let v = vec![0u8; 1 << 20];
        std::hint::black_box(&v);
        assert_eq!(meter.peak_bytes(), None);
        assert_eq!(mib(None), "-");
        assert_eq!(mib(Some(3 << 20)), "3.00");
    }

    #[test]
    fn counting_tracks_growth_and_peaks() {
        // The counters themselves, driven by hand as the allocator drives them.
        let before = CURRENT.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        grow(1000);
        grow(500);
        shrink(1200);
        assert_eq!(CURRENT.load(Ordering::Relaxed), before + 300);
        assert!(PEAK.load(Ordering::Relaxed) >= before + 1500);
        shrink(300);
        assert_eq!(CURRENT.load(Ordering::Relaxed), before);
    }
}
