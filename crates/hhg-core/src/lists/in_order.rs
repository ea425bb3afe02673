//! The list pass for a set given in cell order: each unit's lists are copied into place as
//! soon as the units before it have reported their sizes, while they are still in cache.
//!
//! Input in cell order (the steady state of a solver that reorders its particles) numbers
//! every point by its sorted position, so the lists of a unit of buckets fill one contiguous
//! stretch of the output, right after the previous unit's. Workers claim units in ascending
//! order; each publishes its unit's total to a [`Sequencer`], which fixes the start of every
//! unit whose predecessors have all reported. A unit whose start is not known yet stays
//! pending in its buffer and goes out at its worker's next flush (after its next unit), or,
//! for the last few, before its worker leaves the pass. The general pass instead keeps every
//! unit's lists until all are gathered and copies them from memory (~160 MB at 1M points).
//!
//! Unit `u` gathers into buffer slot `u % slots`, [`SLOTS_PER_WORKER`] slots a worker, and
//! waits (placing its own pending units meanwhile) while unit `u - slots` still holds it.
//! So every unit meets the same buffer at every pass whatever the threads' timing, and a
//! pass whose units did not grow allocates nothing: a worker that created a buffer whenever
//! it had none free needed one more than warm-up made now and then. While the output grows,
//! a unit whose slot is held by a unit that cannot be placed yet takes a spare buffer; its
//! allocations go back to the slot at the next pass. A worker that panics sets a flag that
//! ends every wait, so that rayon can pass the panic on.

use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rayon::prelude::*;

use super::self_lists::UnitTask;
use super::{NeighborLists, Piece, UnitBuffer};
use crate::error::Error;
use crate::geometry::CellTable;
use crate::grid::Grid;
use crate::kernel::MaskKernel;
use crate::memory::{check_cap, try_reserve_total};
use crate::parallel::{DisjointSlice, copy_streaming};
use crate::real::Real;

/// The room reserved past the total when the output grows: a sixteenth, so that lists that
/// grow a little from one step to the next still find their place while hot.
const GROWTH_SLACK_SHIFT: u32 = 4;

/// Outputs of at least this many bytes are written around the cache ([`copy_streaming`]):
/// non-temporal stores skip reading each line before it is written, which took the pass
/// from 40.1-42.0 to 35.9-37.9 ms on 1M uniform points (156 MB of lists, two threads, a
/// Xeon). A smaller output stays in the cache for the solver, which reads it next.
const STREAM_MIN_BYTES: usize = 32 << 20;

/// Entries of the staging block through which lists gathered out of list order go out
/// around the cache (see [`Destination::copy_lists_out`]): 4 or 8 KiB, in the first-level
/// cache.
const STAGING_ENTRIES: usize = 1024;

/// Buffer slots per worker: how far a worker may run ahead of the oldest unit not placed
/// before it waits (a unit of a busy 2048 points holds ~330 KB of lists).
pub(super) const SLOTS_PER_WORKER: usize = 4;

/// The scratch of the pass, kept across calls; a clone starts afresh.
#[derive(Debug, Default)]
pub(super) struct Scratch<T> {
    /// The unit totals published so far.
    sequencer: Mutex<Sequencer>,
    /// The buffers units gather into: unit `u` into slot `u % slots.len()`.
    slots: Vec<Mutex<Slot<T>>>,
    /// Each worker's gathered units not yet copied, oldest first.
    pending: Vec<VecDeque<Pending<T>>>,
}

#[cfg(test)]
impl<T: Real> Scratch<T> {
    /// Whether a slot's buffer holds candidates packed for a batch.
    pub(super) fn any_packed(&self) -> bool {
        self.slots.iter().any(|slot| lock(slot).buffer.packed.used)
    }
}

impl<T> Clone for Scratch<T> {
    fn clone(&self) -> Self {
        Self {
            sequencer: Mutex::default(),
            slots: Vec::new(),
            pending: Vec::new(),
        }
    }
}

/// A buffer slot and the unit that may take it next.
#[derive(Debug, Default)]
struct Slot<T> {
    buffer: UnitBuffer<T>,
    /// The largest allocations of the spare buffers its units took while the output grew,
    /// absorbed into `buffer` at the next pass: the step after a growth finds them grown.
    spare: UnitBuffer<T>,
    /// The unit allowed to take `buffer`: the slot's own index at the start of a pass, then
    /// `u + slots` once unit `u` was placed.
    next_unit: usize,
}

/// A gathered unit waiting for its start.
#[derive(Debug)]
struct Pending<T> {
    unit: usize,
    buffer: UnitBuffer<T>,
    /// Whether `buffer` is slot `unit % slots`'s buffer (else a spare of a pass whose output
    /// grew, dropped once placed).
    from_slot: bool,
}

/// The unit totals published so far and the output starts they fix.
#[derive(Debug, Default)]
struct Sequencer {
    /// Entries of each unit, `usize::MAX` until published.
    totals: Vec<usize>,
    /// Output start of each unit (and the total at the end), valid up to `starts[known]`.
    starts: Vec<usize>,
    /// Units `0..known` have published.
    known: usize,
}

/// Locks a mutex of the pass. A poisoned lock (a panic elsewhere in an earlier pass) is
/// taken over: every pass resets the sequencer and the slots before it uses them.
fn lock<S>(mutex: &Mutex<S>) -> MutexGuard<'_, S> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sequencer {
    /// Forgets every total, for `units` units.
    fn reset(&mut self, units: usize) {
        self.totals.clear();
        self.totals.resize(units, usize::MAX);
        self.starts.clear();
        self.starts.resize(units + 1, 0);
        self.known = 0;
    }

    /// Records that unit `unit` holds `total` entries, and fixes every start this completes.
    fn publish(&mut self, unit: usize, total: usize) {
        debug_assert_eq!(self.totals[unit], usize::MAX, "unit {unit} published twice");
        self.totals[unit] = total;
        while self.known < self.totals.len() && self.totals[self.known] != usize::MAX {
            self.starts[self.known + 1] = self.starts[self.known] + self.totals[self.known];
            self.known += 1;
        }
    }

    /// The output start of unit `unit`, once every unit before it has published.
    fn start(&self, unit: usize) -> Option<usize> {
        (unit <= self.known).then(|| self.starts[unit])
    }

    /// Tells whether unit `unit` is known to end past `room`, so that it cannot be placed
    /// before the output grows.
    fn overflows(&self, unit: usize, room: usize) -> bool {
        unit < self.known && self.starts[unit + 1] > room
    }
}

/// Where the units' lists go: the spare capacity of the output vectors, and the offsets.
struct Destination<'a, T> {
    indices: DisjointSlice<'a, MaybeUninit<u32>>,
    distances: Option<DisjointSlice<'a, MaybeUninit<T>>>,
    offsets: DisjointSlice<'a, usize>,
    /// Output position of `indices[0]` (and `distances[0]`).
    base: usize,
    /// Output positions below this fit the reserved room.
    room: usize,
    /// Whether the copies write around the cache (see [`STREAM_MIN_BYTES`]).
    streaming: bool,
}

impl<'a, T> Destination<'a, T> {
    /// Output positions `base..room` in the spare capacity of `indices` (and `distances`),
    /// whose first `base` entries are set, and the lists' `offsets`.
    fn new(
        indices: &'a mut Vec<u32>,
        distances: Option<&'a mut Vec<T>>,
        offsets: &'a mut [usize],
        base: usize,
        room: usize,
    ) -> Self {
        debug_assert_eq!(indices.len(), base);
        Self {
            indices: DisjointSlice::new(&mut indices.spare_capacity_mut()[..room - base]),
            distances: distances.map(|distances| {
                DisjointSlice::new(&mut distances.spare_capacity_mut()[..room - base])
            }),
            offsets: DisjointSlice::new(offsets),
            base,
            room,
            streaming: room * size_of::<u32>() >= STREAM_MIN_BYTES,
        }
    }
}

impl<T: Real> Destination<'_, T> {
    /// Copies a unit's entries (or distances) to their place, around the cache for a large
    /// output. Builds with debug assertions (the tests) also stream every other unit of a
    /// small output, so that both copies run in the tests.
    fn copy_out<V: bytemuck::Pod>(&self, first: usize, from: &[V], to: &mut [MaybeUninit<V>]) {
        if self.streaming || (cfg!(debug_assertions) && first % 2 == 1) {
            copy_streaming(from, to);
        } else {
            to.write_copy_of_slice(from);
        }
    }

    /// Copies a unit's entries (or distances) `from` into list order at `to`: whole when
    /// `pieces` is empty (they are in list order), else piece by piece (`pieces` ascend by
    /// their place in `to` and tile it). Around the cache (as [`Destination::copy_out`]
    /// decides) the pieces are first put
    /// together in a small staging block, which goes out whole: stream stores of every small
    /// piece by itself would leave partly written cache lines at both of its ends and fence
    /// after each, which made `drift` at 1M slower than the copy through a buffer of the
    /// unit's size that this replaced.
    fn copy_lists_out<V: bytemuck::Pod>(
        &self,
        first: usize,
        from: &[V],
        pieces: &[Piece],
        to: &mut [MaybeUninit<V>],
    ) {
        if pieces.is_empty() {
            self.copy_out(first, &from[..to.len()], to);
            return;
        }
        if !(self.streaming || (cfg!(debug_assertions) && first % 2 == 1)) {
            for piece in pieces {
                let (at, len) = (piece.from as usize, piece.len as usize);
                to[piece.to as usize..][..len].write_copy_of_slice(&from[at..at + len]);
            }
            return;
        }
        let mut staging = [V::zeroed(); STAGING_ENTRIES];
        let (mut staged, mut written) = (0usize, 0usize);
        for piece in pieces {
            debug_assert_eq!(piece.to as usize, written + staged, "pieces out of order");
            let mut rest = &from[piece.from as usize..][..piece.len as usize];
            while !rest.is_empty() {
                let take = rest.len().min(staging.len() - staged);
                staging[staged..staged + take].copy_from_slice(&rest[..take]);
                staged += take;
                rest = &rest[take..];
                if staged == staging.len() {
                    copy_streaming(&staging, &mut to[written..written + staged]);
                    written += staged;
                    staged = 0;
                }
            }
        }
        copy_streaming(&staging[..staged], &mut to[written..written + staged]);
        debug_assert_eq!(written + staged, to.len());
    }

    /// Copies the lists of a unit whose first list is `first` to output position `start`
    /// and records their offsets.
    ///
    /// # Safety
    /// `base <= start`, `start + buffer.filled <= room`, the lists of `buffer` are those of
    /// lists `first..first + buffer.lens.len()` (below the offsets' length), and no other task
    /// writes those lists or that output range.
    unsafe fn place(&self, buffer: &UnitBuffer<T>, first: usize, start: usize) {
        debug_assert!(self.base <= start && start + buffer.filled <= self.room);
        let at = start - self.base;
        // SAFETY: the caller guarantees the range is in the reserved room and this task's.
        let to = unsafe { self.indices.range_mut(at, buffer.filled) };
        self.copy_lists_out(first, &buffer.entries, &buffer.pieces, to);
        if let Some(distances) = &self.distances {
            // SAFETY: as above; the distances share the indices' layout.
            let to = unsafe { distances.range_mut(at, buffer.filled) };
            self.copy_lists_out(first, &buffer.distances, &buffer.pieces, to);
        }
        let mut offset = start;
        for (k, &len) in buffer.lens.iter().enumerate() {
            // SAFETY: list `first + k` belongs to this unit alone and is in bounds.
            unsafe { self.offsets.write(first + k, offset) };
            offset += len as usize;
        }
    }
}

/// What a worker of the pass shares with the others.
struct Shared<'s, 'd, T> {
    sequencer: &'s Mutex<Sequencer>,
    slots: &'s [Mutex<Slot<T>>],
    to: &'s Destination<'d, T>,
    /// Set when a worker panicked: the units it held will never be published or placed,
    /// so no one waits for them any more (rayon then passes the panic on).
    aborted: &'s AtomicBool,
}

/// Sets the pass's `aborted` flag when dropped while its worker unwinds from a panic.
struct AbortOnPanic<'a>(&'a AtomicBool);

impl Drop for AbortOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

impl<T: Real> Shared<'_, '_, T> {
    /// Copies out the pending units of one worker, oldest first, while their start is known
    /// and their lists fit the room; `first_list(u)` is the first list of unit `u`. Each
    /// placed unit hands its slot on to unit `u + slots`.
    fn flush(&self, pending: &mut VecDeque<Pending<T>>, first_list: impl Fn(usize) -> usize) {
        while let Some(front) = pending.front() {
            let start = lock(self.sequencer).start(front.unit);
            let Some(start) =
                start.filter(|&s| s >= self.to.base && s + front.buffer.filled <= self.to.room)
            else {
                break;
            };
            // SAFETY: units partition the lists and, in cell order, the output: unit `unit`
            // owns lists `first_list(unit)..` and output `start..start + filled`, which fits
            // the room; each pending unit is placed once, from the one queue that holds it
            // (its worker's, flushed by one task at a time).
            unsafe { self.to.place(&front.buffer, first_list(front.unit), start) };
            let done = pending.pop_front().expect("a front exists");
            let mut slot = lock(&self.slots[done.unit % self.slots.len()]);
            if done.from_slot {
                debug_assert_eq!(slot.next_unit, done.unit, "a slot changed hands twice");
                slot.buffer = done.buffer;
                slot.next_unit = done.unit + self.slots.len();
            } else {
                slot.spare.absorb(done.buffer);
            }
        }
    }

    /// Places every pending unit of a worker that fits the room, waiting for the starts
    /// still unknown; the units that do not fit stay pending for the grown output. Called
    /// once every unit is claimed, so every start becomes known (see `take_buffer`).
    fn drain(
        &self,
        pending: &mut VecDeque<Pending<T>>,
        first_list: impl Fn(usize) -> usize + Copy,
    ) {
        let mut spins = 0u32;
        loop {
            self.flush(pending, first_list);
            let Some(front) = pending.front() else {
                return;
            };
            if self.aborted.load(Ordering::Acquire)
                || lock(self.sequencer).overflows(front.unit, self.to.room)
            {
                return;
            }
            spins = pause(spins);
        }
    }

    /// The buffer unit `unit` gathers into: its slot's, once the unit before it in the slot
    /// was placed. Meanwhile the worker places its own `pending` units, which may be that
    /// unit. Where that unit cannot be placed before the output grows, the unit gathers
    /// into a spare buffer instead (the pass allocates then anyway).
    ///
    /// No wait lasts: every unit below `unit` was claimed earlier, and a worker publishes a
    /// unit's total before it waits for anything, so every start below `unit` becomes
    /// known, and the unit holding the slot is placed by its worker's next flush: in its own
    /// wait for a slot, after its next unit, or in the [`Shared::drain`] before it leaves.
    /// `None` when another worker panicked (the slot may never come free).
    fn take_buffer(
        &self,
        unit: usize,
        pending: &mut VecDeque<Pending<T>>,
        first_list: impl Fn(usize) -> usize + Copy,
    ) -> Option<(UnitBuffer<T>, bool)> {
        let slot = &self.slots[unit % self.slots.len()];
        let mut spins = 0u32;
        loop {
            {
                let mut slot = lock(slot);
                if slot.next_unit == unit {
                    return Some((std::mem::take(&mut slot.buffer), true));
                }
                debug_assert!(slot.next_unit < unit, "unit {unit} claimed twice");
            }
            if self.aborted.load(Ordering::Acquire) {
                return None;
            }
            self.flush(pending, first_list);
            let holder = unit - self.slots.len();
            if lock(self.sequencer).overflows(holder, self.to.room) {
                return Some((UnitBuffer::default(), false));
            }
            spins = pause(spins);
        }
    }
}

/// Waits a moment in a loop that waits for another worker: spins at first, then yields the
/// core. Returns the count of waits so far.
fn pause(spins: u32) -> u32 {
    if spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
    spins.saturating_add(1)
}

impl<T: Real> Grid<T> {
    /// The self lists of a grid built on points in cell order (`in_cell_order`): units
    /// gathered in parallel, each copied into place once its start is known.
    pub(super) fn self_lists_in_order<K: MaskKernel>(
        &self,
        table: &CellTable,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        debug_assert!(self.in_cell_order);
        let build = self.run_time_build::<K>();
        let first_list = |unit: usize| self.starts[self.units[unit].0 as usize] as usize;
        let units = UnitsInSequence {
            count: self.units.len(),
            first_list,
            points: |unit: usize| self.unit_points(self.units[unit]),
            gather: |unit: usize, buffer: &mut UnitBuffer<T>| {
                buffer.room_to_pack::<K>();
                // In cell order a point's list is its sorted position's.
                let task = UnitTask {
                    table,
                    unit: self.units[unit],
                    exceptions: &[],
                    list_of: |p: usize| p,
                };
                self.run_task::<K, _>(&task, buffer, with_distances, build);
            },
        };
        lists_in_sequence(self.len(), &units, out, with_distances)
    }
}

/// Work units whose lists fill consecutive stretches of the output: unit `u` holds
/// `points(u)` lists, from list `first_list(u)` on, which `gather(u, buffer)` gathers into
/// `buffer` (its `entries` holding them in list order at the end, or its `pieces` saying how
/// they go into it).
pub(super) struct UnitsInSequence<F, P, G> {
    pub(super) count: usize,
    pub(super) first_list: F,
    pub(super) points: P,
    pub(super) gather: G,
}

/// The lists of `n` points from units that each fill the stretch of the output after the
/// unit before: units gathered in parallel, each copied into place once its start is known.
pub(super) fn lists_in_sequence<T, F, P, G>(
    n: usize,
    units: &UnitsInSequence<F, P, G>,
    out: &mut NeighborLists<T>,
    with_distances: bool,
) -> Result<(), Error>
where
    T: Real,
    F: Fn(usize) -> usize + Copy + Sync,
    P: Fn(usize) -> usize + Sync,
    G: Fn(usize, &mut UnitBuffer<T>) + Sync,
{
    let first_list = units.first_list;
    let unit_count = units.count;
    out.reset(n, 0, with_distances)?;
    let cap = out.cap();
    let workers = rayon::current_num_threads().max(1);
    let scratch = &mut out.in_order;
    let slot_count = workers * SLOTS_PER_WORKER;
    if scratch.slots.len() < slot_count {
        scratch.slots.resize_with(slot_count, Mutex::default);
    }
    if scratch.pending.len() < workers {
        scratch.pending.resize_with(workers, VecDeque::new);
    }
    let slots = &scratch.slots[..slot_count];
    for (index, slot) in slots.iter().enumerate() {
        let mut slot = lock(slot);
        slot.next_unit = index;
        let spare = std::mem::take(&mut slot.spare);
        slot.buffer.absorb(spare);
    }
    for pending in &mut scratch.pending {
        // Units left pending by a pass that panicked belong to no unit of this one; their
        // slots' buffers (if any) are lost, to be grown again.
        pending.clear();
        // A worker holds at most every slot's unit, bar the spares of a growing output.
        pending.reserve(slot_count);
    }
    let sequencer = &scratch.sequencer;
    lock(sequencer).reset(unit_count);

    out.indices.clear();
    out.distances.clear();
    let room = if with_distances {
        out.indices.capacity().min(out.distances.capacity())
    } else {
        out.indices.capacity()
    };
    let next_unit = AtomicUsize::new(0);
    let aborted = AtomicBool::new(false);
    // The first reason a unit stopped short (no memory, or past the cap), and the entries
    // published so far: once one unit failed, the others gather nothing (and hold no list).
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let failed = AtomicBool::new(false);
    let published = AtomicUsize::new(0);
    let pending = &mut scratch.pending[..workers];
    {
        let to = Destination::new(
            &mut out.indices,
            with_distances.then_some(&mut out.distances),
            &mut out.offsets[..n],
            0,
            room,
        );
        let shared = Shared {
            sequencer,
            slots,
            to: &to,
            aborted: &aborted,
        };
        pending.par_iter_mut().for_each(|pending| {
            let _abort_on_panic = AbortOnPanic(&aborted);
            loop {
                let unit = next_unit.fetch_add(1, Ordering::Relaxed);
                if unit >= unit_count {
                    break;
                }
                let Some((mut buffer, from_slot)) = shared.take_buffer(unit, pending, first_list)
                else {
                    break;
                };
                buffer.start((units.points)(unit), cap);
                if !failed.load(Ordering::Relaxed) {
                    (units.gather)(unit, &mut buffer);
                }
                // A failed unit drops its lists first: it publishes none.
                let failed_here = buffer.take_failure();
                let so_far = published.fetch_add(buffer.filled, Ordering::Relaxed) + buffer.filled;
                let reason = failed_here.or_else(|| check_cap("list entries", so_far, cap).err());
                if let Some(reason) = reason {
                    failed.store(true, Ordering::Relaxed);
                    lock(&failure).get_or_insert(reason);
                }
                if !from_slot {
                    // It may wait long, with the lists of many others: only its lists stay.
                    buffer.release_scratch();
                }
                debug_assert!(
                    buffer
                        .slots
                        .first()
                        .is_none_or(|&s| s as usize == first_list(unit))
                        && buffer.slots.windows(2).all(|w| w[0] + 1 == w[1]),
                    "a unit's lists are not consecutive"
                );
                lock(sequencer).publish(unit, buffer.filled);
                pending.push_back(Pending {
                    unit,
                    buffer,
                    from_slot,
                });
                shared.flush(pending, first_list);
            }
            // Every unit is claimed. A worker still waiting for a slot may wait for one
            // of these units, so they go out before this worker leaves.
            shared.drain(pending, first_list);
        });
    }
    let (total, fitted) = {
        let sequencer = lock(sequencer);
        let total = sequencer.starts[unit_count];
        // The units that fit the room are a prefix: starts ascend.
        let fitted = (0..unit_count)
            .find(|&u| sequencer.starts[u + 1] > room)
            .map_or(total, |u| sequencer.starts[u]);
        (total, fitted)
    };
    let mut failure = failure.into_inner().unwrap_or_else(PoisonError::into_inner);
    if failure.is_none() && total > room {
        // The output grows: keep what was placed, reserve with some slack, place the rest.
        // SAFETY: every unit below the first that did not fit was placed, so entries
        // `0..fitted` are initialized (and the distances too, when requested).
        unsafe { out.indices.set_len(fitted) };
        let wanted = total
            .saturating_add(total >> GROWTH_SLACK_SHIFT)
            .min(cap.max(total));
        // Exactly: `reserve` would double the capacity, twice the output's memory.
        failure = try_reserve_total(&mut out.indices, wanted, "the list entries").err();
        if with_distances && failure.is_none() {
            // SAFETY: as above.
            unsafe { out.distances.set_len(fitted) };
            failure = try_reserve_total(&mut out.distances, wanted, "the list distances").err();
        }
    }
    if let Some(failure) = failure {
        // The units that did not fit wait with their buffers: drop them (their slots' next
        // pass grows new ones) and leave no entry.
        for pending in pending.iter_mut() {
            pending.clear();
        }
        out.indices.clear();
        out.distances.clear();
        return Err(failure);
    }
    if total > room {
        let to = Destination::new(
            &mut out.indices,
            with_distances.then_some(&mut out.distances),
            &mut out.offsets[..n],
            fitted,
            total,
        );
        let shared = Shared {
            sequencer,
            slots,
            to: &to,
            aborted: &aborted,
        };
        pending
            .par_iter_mut()
            .for_each(|pending| shared.flush(pending, first_list));
    }
    debug_assert!(pending.iter().all(VecDeque::is_empty));
    // SAFETY: every unit was placed: entries `0..total` are initialized.
    unsafe { out.indices.set_len(total) };
    if with_distances {
        // SAFETY: as above, for the distances.
        unsafe { out.distances.set_len(total) };
    }
    out.offsets[n] = total;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two slots, held by units 0 and 1; 20 units; an output with room for 16 entries.
    fn with_shared(aborted: bool, check: impl FnOnce(&Shared<'_, '_, f32>)) {
        let mut indices: Vec<u32> = Vec::with_capacity(16);
        let mut offsets = vec![0usize; 64];
        let to = Destination::new(&mut indices, None, &mut offsets, 0, 16);
        let sequencer = Mutex::new(Sequencer::default());
        lock(&sequencer).reset(20);
        let slots: Vec<Mutex<Slot<f32>>> = (0..2)
            .map(|unit| {
                Mutex::new(Slot {
                    next_unit: unit,
                    ..Slot::default()
                })
            })
            .collect();
        let aborted = AtomicBool::new(aborted);
        let shared = Shared {
            sequencer: &sequencer,
            slots: &slots,
            to: &to,
            aborted: &aborted,
        };
        check(&shared);
    }

    #[test]
    fn a_wait_ends_when_another_worker_panicked() {
        with_shared(true, |shared| {
            let mut pending = VecDeque::new();
            // Unit 3's slot is held by unit 1, which will never be placed.
            assert!(shared.take_buffer(3, &mut pending, |u| u).is_none());
            // A pending unit whose start will never be known does not hold the drain.
            pending.push_back(Pending {
                unit: 5,
                buffer: UnitBuffer::default(),
                from_slot: true,
            });
            shared.drain(&mut pending, |u| u);
            assert_eq!(pending.len(), 1);
        });
    }

    #[test]
    fn a_unit_whose_slot_holder_overflows_takes_a_spare() {
        with_shared(false, |shared| {
            // Units 0 and 1 hold 10 entries each: unit 1 ends at 20, past the room of 16.
            lock(shared.sequencer).publish(0, 10);
            lock(shared.sequencer).publish(1, 10);
            let mut pending = VecDeque::new();
            let (_, from_slot) = shared.take_buffer(3, &mut pending, |u| u).unwrap();
            assert!(!from_slot, "unit 3 waited for a slot that cannot come free");
            // Unit 2's slot (held by unit 0, which fits but is not pending here) is its own
            // only once unit 0 is placed: it is, by its worker, so unit 2 gets it.
            lock(&shared.slots[0]).next_unit = 2;
            let (_, from_slot) = shared.take_buffer(2, &mut pending, |u| u).unwrap();
            assert!(from_slot);
        });
    }
}
