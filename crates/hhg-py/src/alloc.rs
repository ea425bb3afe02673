//! The extension's global allocator: the system allocator, with transparent huge pages asked
//! for on large blocks, so that the outputs handed to numpy fault in 2 MiB pages.
//!
//! Every output the binding returns is a fresh allocation (numpy keeps the previous one, or
//! frees it), and a fresh block is mapped by the kernel one page at a time as it is first
//! written. With 4 KiB pages the 131 MB of one million points' pairs cost 32,000 page faults
//! per call, which the Rust engine, reusing its buffers, never pays. Linux kernels whose
//! transparent huge pages are in `madvise` mode (the common default) give 2 MiB pages to the
//! ranges marked `MADV_HUGEPAGE`, as numpy marks its own large arrays.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks from this size on are marked for huge pages (smaller ones are not worth a system
/// call, and the allocator serves them from its heap).
const HUGE_FROM: usize = 4 << 20;

/// The size of a huge page on x86-64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// [`System`], with large blocks marked for transparent huge pages.
pub struct HugePages;

impl HugePages {
    /// Marks the whole huge pages inside `ptr .. ptr + size` (a hint: a failure changes
    /// nothing but the page size).
    #[inline]
    fn advise(ptr: *mut u8, size: usize) {
        #[cfg(target_os = "linux")]
        if size >= HUGE_FROM && !ptr.is_null() {
            let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
            let end = (ptr as usize + size) / HUGE_PAGE * HUGE_PAGE;
            if end > start {
                // SAFETY: the range lies inside the block just allocated (rounded inwards to
                // whole huge pages), and `madvise` with `MADV_HUGEPAGE` only changes how the
                // kernel backs the pages, never their contents.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (ptr, size);
    }
}

// SAFETY: every call is forwarded to `System` with the same arguments; `advise` only hints
// the kernel about pages of the returned block.
unsafe impl GlobalAlloc for HugePages {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc(layout) };
        Self::advise(ptr, layout.size());
        ptr
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        Self::advise(new, new_size);
        new
    }
}
