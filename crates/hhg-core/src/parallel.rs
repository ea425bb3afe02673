//! Small parallel building blocks: disjoint writes through a shared slice, a prefix sum, a
//! cache prefetch hint for the random accesses they make, the growth rule of per-unit
//! buffers, a copy that writes around the cache, and the collection of pairs by work unit.

use std::marker::PhantomData;

use rayon::prelude::*;

use crate::error::Error;
use crate::memory::{PairSink, check_cap, try_reserve_total, try_resize};

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

/// Copies `src` into `dst` (the same length) with non-temporal stores where the CPU has
/// them (SSE2, on every x86_64): the lines go to memory without being read first and
/// without evicting the cache, which pays for outputs far larger than the cache (the list
/// pass for input in cell order: 1M uniform points, two threads, lists 40.1-42.0 -> 35.9-37.9
/// ms on a Xeon). Ends with a store fence, so that the data is ordered before whatever the
/// caller publishes next. Elsewhere, a plain copy.
pub(crate) fn copy_streaming<T: bytemuck::Pod>(src: &[T], dst: &mut [std::mem::MaybeUninit<T>]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "copy between slices of different lengths"
    );
    let bytes = std::mem::size_of_val(src);
    let from = src.as_ptr().cast::<u8>();
    let to = dst.as_mut_ptr().cast::<u8>();
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        // The bytes before the first 16-byte boundary of the destination, and after the last.
        let head = to.align_offset(16).min(bytes);
        let body = (bytes - head) / 64 * 64;
        // SAFETY: `src` and `dst` are `bytes` long and do not overlap (one is borrowed
        // mutably, the other shared); every access below stays inside `0..bytes`: the head
        // and the tail by their lengths, the body in 64-byte steps below `head + body`, at
        // 16-byte aligned destinations (`head` reaches the first boundary). SSE2 is part of
        // every x86_64 CPU. `T: Pod`, so any bytes are a valid `T` in `dst`.
        unsafe {
            std::ptr::copy_nonoverlapping(from, to, head);
            let mut at = head;
            while at < head + body {
                for lane in 0..4 {
                    let offset = at + 16 * lane;
                    debug_assert_eq!(to.add(offset) as usize % 16, 0, "unaligned stream store");
                    let value = _mm_loadu_si128(from.add(offset).cast::<__m128i>());
                    _mm_stream_si128(to.add(offset).cast::<__m128i>(), value);
                }
                at += 64;
            }
            std::ptr::copy_nonoverlapping(from.add(at), to.add(at), bytes - at);
            _mm_sfence();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.write_copy_of_slice(src);
}

/// Runs `fill(u, sink)` for every work unit `u < units` in parallel, each into its own
/// sink `sinks[u]` (emptied first), then writes the sinks back to back into `out` in unit
/// order, so the output does not depend on the thread count. `sinks` grows to `units` sinks
/// and is kept by the caller, so a repeated collection allocates nothing once the sinks and
/// `out` have grown.
///
/// Nothing aborts for want of memory: a sink that could not grow, a unit alone past `cap`
/// pairs, or a total past it fails the collection ([`Error::OutOfMemory`] or
/// [`Error::OutputTooLarge`], the first unit's reason), before `out` grows; `out` is then
/// left empty.
///
/// The pair searches of the sibling crates (hhg-xor's tables, hhg-group's group table) and
/// the broad phase ([`crate::PairList::collect_units`]) collect their pairs with it.
pub fn collect_unit_pairs(
    sinks: &mut Vec<PairSink>,
    units: usize,
    cap: usize,
    fill: impl Fn(usize, &mut PairSink) + Sync,
    out: &mut Vec<[u32; 2]>,
) -> Result<(), Error> {
    let result = collect_unit_pairs_over(sinks, units, cap, fill, out);
    if result.is_err() {
        out.clear();
    }
    result
}

/// [`collect_unit_pairs`] over the pairs `out` held before: they stay until the total is
/// known, so that only growth is zeroed before the copies overwrite every pair (zeroing the
/// whole output cost 3 % of a `VariableRadiusSearch` step's instructions).
fn collect_unit_pairs_over(
    sinks: &mut Vec<PairSink>,
    units: usize,
    cap: usize,
    fill: impl Fn(usize, &mut PairSink) + Sync,
    out: &mut Vec<[u32; 2]>,
) -> Result<(), Error> {
    if sinks.len() < units {
        try_reserve_total(sinks, units, "the work units' pair buffers")?;
        sinks.resize_with(units, PairSink::default);
    }
    let sinks = &mut sinks[..units];
    sinks.par_iter_mut().enumerate().for_each(|(u, sink)| {
        sink.start(cap);
        fill(u, sink);
    });
    if let Some(error) = sinks.iter_mut().find_map(PairSink::take_failure) {
        return Err(error);
    }
    let total = sinks
        .iter()
        .map(PairSink::len)
        .fold(0usize, usize::saturating_add);
    check_cap("pairs", total, cap)?;
    // Only growth writes: every pair below `total` is overwritten by the copies.
    out.truncate(total);
    try_resize(out, total, [0, 0], "the pairs")?;
    copy_back_to_back(sinks, out);
    Ok(())
}

/// Copies `sinks` back to back into `out`, whose length is their total, halving the list
/// of sinks in parallel (no list of the output's pieces to allocate).
fn copy_back_to_back(sinks: &[PairSink], out: &mut [[u32; 2]]) {
    match sinks {
        [] => debug_assert!(out.is_empty()),
        [sink] => out.copy_from_slice(sink.pairs()),
        _ => {
            let (low, high) = sinks.split_at(sinks.len() / 2);
            let low_len = low.iter().map(PairSink::len).sum();
            let (low_out, high_out) = out.split_at_mut(low_len);
            rayon::join(
                || copy_back_to_back(low, low_out),
                || copy_back_to_back(high, high_out),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;

    use super::copy_streaming;

    /// Every length and misalignment of the destination around the 16- and 64-byte steps
    /// comes out equal to the source.
    #[test]
    fn streaming_copy_copies_every_length_and_offset() {
        let source: Vec<u32> = (0..300u32).map(|v| v.wrapping_mul(2_654_435_761)).collect();
        for offset in 0..8 {
            for len in 0..=260 {
                let mut target = vec![MaybeUninit::new(u32::MAX); offset + len + 8];
                copy_streaming(&source[..len], &mut target[offset..offset + len]);
                // SAFETY: every entry was initialized, by `vec!` or by the copy.
                let copied: Vec<u32> = target.iter().map(|v| unsafe { v.assume_init() }).collect();
                assert_eq!(
                    copied[offset..offset + len],
                    source[..len],
                    "len {len}, offset {offset}"
                );
                assert!(
                    copied[..offset].iter().all(|&v| v == u32::MAX),
                    "wrote before"
                );
                assert!(
                    copied[offset + len..].iter().all(|&v| v == u32::MAX),
                    "wrote after"
                );
            }
        }
        let wide: Vec<f64> = (0..100).map(f64::from).collect();
        let mut target = vec![MaybeUninit::new(0.0f64); 100];
        copy_streaming(&wide, &mut target);
        for (t, w) in target.iter().zip(&wide) {
            // SAFETY: every entry was initialized.
            assert_eq!(unsafe { t.assume_init() }, *w);
        }
    }
}
