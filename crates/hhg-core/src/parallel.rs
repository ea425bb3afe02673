//! Small parallel building blocks: disjoint writes through a shared slice, a prefix sum, a
//! cache prefetch hint for the random accesses they make, and the growth rule of per-unit
//! buffers.

use std::marker::PhantomData;

use rayon::prelude::*;

/// A slice that several rayon tasks write to at positions they own exclusively.
///
/// Used where the owner of a position is known only through data (a permutation, the
/// cursors of a counting sort, per-list offsets), so the borrow checker cannot see that the
/// writes are disjoint.
pub(crate) struct DisjointSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a `DisjointSlice` is only a `&mut [T]` split among tasks; every write method
// requires its caller to guarantee that no two tasks touch the same position, so sharing
// it between threads is as sound as sending disjoint `&mut` sub-slices.
unsafe impl<T: Send> Sync for DisjointSlice<'_, T> {}
// SAFETY: see the `Sync` impl; the slice is borrowed mutably for `'a`.
unsafe impl<T: Send> Send for DisjointSlice<'_, T> {}

impl<'a, T> DisjointSlice<'a, T> {
    /// Wraps a mutable slice for disjoint parallel writes.
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        Self {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _borrow: PhantomData,
        }
    }

    /// Writes `value` at `index`.
    ///
    /// # Safety
    /// `index < len`, and no other task reads or writes `index` while the slice is shared.
    #[inline(always)]
    pub(crate) unsafe fn write(&self, index: usize, value: T) {
        debug_assert!(
            index < self.len,
            "disjoint write at {index} beyond {}",
            self.len
        );
        // SAFETY: the caller guarantees `index` is in bounds and owned by this task.
        unsafe { self.ptr.add(index).write(value) }
    }

    /// The sub-slice `start..start + len`, borrowed mutably by this task alone.
    ///
    /// # Safety
    /// `start + len <= self.len`, and no other task touches that range while it is borrowed.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)] // Exclusive access is the caller's documented guarantee.
    pub(crate) unsafe fn range_mut(&self, start: usize, len: usize) -> &mut [T] {
        debug_assert!(
            start.checked_add(len).is_some_and(|end| end <= self.len),
            "disjoint range {start}+{len} beyond {}",
            self.len
        );
        // SAFETY: the caller guarantees the range is in bounds and owned by this task.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }

    /// Asks the cache for position `index` ahead of a write there (a hint: any index is
    /// fine, nothing is read or written).
    #[inline(always)]
    pub(crate) fn prefetch(&self, index: usize) {
        prefetch(self.ptr.wrapping_add(index));
    }
}

/// Asks the cache for the line holding `address` ahead of its use: a hint that reads and
/// writes nothing and cannot fault, whatever the address (x86_64 only; elsewhere nothing).
#[inline(always)]
pub(crate) fn prefetch<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: SSE is part of every x86_64 target, and a prefetch dereferences nothing.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Values per rayon task in a prefix sum: a scan is memory bound, so tasks are large.
const SCAN_CHUNK: usize = 1 << 16;

/// Replaces `values` by their exclusive prefix sum and returns the total.
///
/// Runs in two parallel passes (block totals, then block scans) for long inputs, keeping the
/// block totals in `scratch` so that a repeated scan allocates nothing; the result does not
/// depend on the thread count.
pub(crate) fn exclusive_scan<V>(values: &mut [V], scratch: &mut Vec<V>) -> V
where
    V: Copy + Send + Sync + Default + std::ops::Add<Output = V> + std::iter::Sum,
{
    if values.len() <= SCAN_CHUNK {
        return scan_block(values, V::default());
    }
    scratch.clear();
    scratch.resize(values.len().div_ceil(SCAN_CHUNK), V::default());
    values
        .par_chunks(SCAN_CHUNK)
        .zip(scratch.par_iter_mut())
        .for_each(|(block, total)| *total = block.iter().copied().sum());
    let total = scan_block(scratch, V::default());
    values
        .par_chunks_mut(SCAN_CHUNK)
        .zip(scratch.par_iter())
        .for_each(|(block, &start)| {
            scan_block(block, start);
        });
    total
}

/// Sequential exclusive scan of one block starting from `start`; returns the running total.
#[inline]
fn scan_block<V: Copy + Default + std::ops::Add<Output = V>>(values: &mut [V], start: V) -> V {
    let mut running = start;
    for v in values.iter_mut() {
        let count = *v;
        *v = running;
        running = running + count;
    }
    running
}

/// The slack a per-unit buffer gets when it grows: an eighth. The buffers of a work unit are
/// sized by what that unit met in earlier steps; points that moved a little change a unit's
/// counts by a little, and the slack keeps those steps from allocating.
pub(crate) const GROWTH_SLACK: usize = 8;

/// The least room of per-unit candidate buffers (packed candidates, gather rows): sparse
/// neighbourhoods, whose sizes vary most from step to step, never make them grow.
pub(crate) const MIN_ROOM: usize = 512;

/// `needed` plus its [`GROWTH_SLACK`].
#[inline]
pub(crate) fn with_slack(needed: usize) -> usize {
    needed + needed / GROWTH_SLACK
}

/// The length a per-unit candidate buffer grows to when it must hold `needed` values:
/// `needed` with slack, and at least [`MIN_ROOM`].
#[inline]
pub(crate) fn candidate_room(needed: usize) -> usize {
    with_slack(needed).max(MIN_ROOM)
}

/// Makes the capacity of `buffer` at least `needed`: when it falls short, it grows to
/// `needed` with slack.
pub(crate) fn reserve_with_slack<V>(buffer: &mut Vec<V>, needed: usize) {
    if buffer.capacity() < needed {
        buffer.reserve_exact(with_slack(needed) - buffer.len());
    }
}

/// Keeps the larger allocation of `mine` and `theirs` in `mine` (the other is dropped): for
/// scratch buffers whose capacity, not content, is what is kept across calls.
pub(crate) fn keep_larger<V>(mine: &mut Vec<V>, theirs: Vec<V>) {
    if theirs.capacity() > mine.capacity() {
        *mine = theirs;
    }
}
