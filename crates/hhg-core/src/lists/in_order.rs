//! The list pass for a set given in cell order: each unit's lists are copied into place as
//! soon as the units before it have reported their sizes, while they are still in cache.
//!
//! Input in cell order (the steady state of a solver that reorders its particles) numbers
//! every point by its sorted position, so the lists of a unit of buckets fill one contiguous
//! stretch of the output, right after the previous unit's. Workers claim units in ascending
//! order; each publishes its unit's total to a [`Sequencer`], which fixes the start of every
//! unit whose predecessors have all reported. A worker never waits: a unit whose start is
//! not known yet stays pending in its buffer and goes out at the worker's next flush (after
//! its next unit), or, for the last few, after all workers are done. The general pass instead keeps every unit's
//! lists until all are gathered and copies them from memory (~160 MB at 1M points).

use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::{NeighborLists, PartBuffer};
use crate::geometry::CellTable;
use crate::grid::Grid;
use crate::kernel::MaskKernel;
use crate::parallel::DisjointSlice;
use crate::real::Real;

/// The room reserved past the total when the output grows: a sixteenth, so that lists that
/// grow a little from one step to the next still find their place while hot.
const GROWTH_SLACK_SHIFT: u32 = 4;

/// The buffers of one worker of the pass, kept across calls.
#[derive(Clone, Debug, Default)]
pub(super) struct Worker<T> {
    /// Buffers ready for the next unit.
    free: Vec<PartBuffer<T>>,
    /// Gathered units not yet copied, oldest first, with their unit index.
    pending: VecDeque<(usize, PartBuffer<T>)>,
}

/// The unit totals published so far and the output starts they fix.
#[derive(Debug, Default)]
pub(super) struct Sequencer {
    /// Entries of each unit, `usize::MAX` until published.
    totals: Vec<usize>,
    /// Output start of each unit (and the total at the end), valid up to `starts[known]`.
    starts: Vec<usize>,
    /// Units `0..known` have published.
    known: usize,
}

/// Locks the sequencer. A poisoned lock (a panic elsewhere in an earlier pass) is taken over:
/// every pass resets the sequencer before it uses it.
fn lock(sequencer: &Mutex<Sequencer>) -> std::sync::MutexGuard<'_, Sequencer> {
    sequencer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
        }
    }
}

impl<T: Copy> Destination<'_, T> {
    /// Copies the lists of a unit whose first list is `first` to output position `start`
    /// and records their offsets.
    ///
    /// # Safety
    /// `base <= start`, `start + part.filled <= room`, the lists of `part` are those of
    /// lists `first..first + part.lens.len()` (below the offsets' length), and no other task
    /// writes those lists or that output range.
    unsafe fn place(&self, part: &PartBuffer<T>, first: usize, start: usize) {
        debug_assert!(self.base <= start && start + part.filled <= self.room);
        let at = start - self.base;
        // SAFETY: the caller guarantees the range is in the reserved room and this task's.
        let to = unsafe { self.indices.range_mut(at, part.filled) };
        // SAFETY: `to` is `part.filled` writable slots and `entries` holds at least that many
        // initialized values; the two do not overlap (one is the unit's own buffer).
        unsafe {
            std::ptr::copy_nonoverlapping(
                part.entries.as_ptr(),
                to.as_mut_ptr().cast::<u32>(),
                part.filled,
            );
        }
        if let Some(distances) = &self.distances {
            // SAFETY: as above; the distances share the indices' layout.
            let to = unsafe { distances.range_mut(at, part.filled) };
            // SAFETY: as above, for the distances gathered alongside.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    part.distances.as_ptr(),
                    to.as_mut_ptr().cast::<T>(),
                    part.filled,
                );
            }
        }
        let mut offset = start;
        for (k, &len) in part.lens.iter().enumerate() {
            // SAFETY: list `first + k` belongs to this unit alone and is in bounds.
            unsafe { self.offsets.write(first + k, offset) };
            offset += len as usize;
        }
    }
}

impl<T: Real> Worker<T> {
    /// Copies out the pending units, oldest first, while their start is known and their lists
    /// fit the room; `first_list(u)` is the first list of unit `u`.
    fn flush(
        &mut self,
        sequencer: &Mutex<Sequencer>,
        to: &Destination<'_, T>,
        first_list: impl Fn(usize) -> usize,
    ) {
        while let Some((unit, part)) = self.pending.front() {
            let start = lock(sequencer).start(*unit);
            let Some(start) = start.filter(|&s| s >= to.base && s + part.filled <= to.room) else {
                break;
            };
            // SAFETY: units partition the lists and, in cell order, the output: unit `unit`
            // owns lists `first_list(unit)..` and output `start..start + filled`, which fits
            // the room; each pending unit is placed once, by the worker that gathered it.
            unsafe { to.place(part, first_list(*unit), start) };
            let (_, part) = self.pending.pop_front().expect("a front exists");
            self.free.push(part);
        }
    }
}

impl<T: Real> Grid<T> {
    /// The self lists of a grid built on points in cell order (`in_cell_order`): units
    /// gathered in parallel, each copied into place once its start is known.
    pub(super) fn self_lists_in_order<K: MaskKernel>(
        &self,
        table: &CellTable,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) {
        debug_assert!(self.in_cell_order);
        let n = self.len();
        let units = self.units.len();
        out.reset(n, 0, with_distances);
        let workers = rayon::current_num_threads().max(1);
        if out.workers.len() < workers {
            out.workers.resize_with(workers, Worker::default);
        }
        // Units left pending by a pass that panicked belong to no unit of this one.
        for worker in &mut out.workers {
            while let Some((_, part)) = worker.pending.pop_front() {
                worker.free.push(part);
            }
        }
        let sequencer = &out.sequencer;
        lock(sequencer).reset(units);
        let first_list = |unit: usize| self.starts[self.units[unit].0 as usize] as usize;

        out.indices.clear();
        out.distances.clear();
        let room = if with_distances {
            out.indices.capacity().min(out.distances.capacity())
        } else {
            out.indices.capacity()
        };
        let next_unit = AtomicUsize::new(0);
        let avx2 = self.runs_avx2_build::<K>();
        {
            let to = Destination::new(
                &mut out.indices,
                with_distances.then_some(&mut out.distances),
                &mut out.offsets[..n],
                0,
                room,
            );
            out.workers[..workers].par_iter_mut().for_each(|worker| {
                loop {
                    let unit = next_unit.fetch_add(1, Ordering::Relaxed);
                    if unit >= units {
                        break;
                    }
                    let mut part = worker.free.pop().unwrap_or_default();
                    part.start(self.unit_points(self.units[unit]));
                    // In cell order a point's list is its sorted position's.
                    let list_of = |p: usize| p;
                    let unit_buckets = self.units[unit];
                    self.gather_unit::<K>(
                        table,
                        unit_buckets,
                        &mut part,
                        with_distances,
                        list_of,
                        avx2,
                    );
                    debug_assert!(
                        part.slots
                            .first()
                            .is_none_or(|&s| s as usize == first_list(unit))
                            && part.slots.windows(2).all(|w| w[0] + 1 == w[1]),
                        "a unit's lists are not consecutive"
                    );
                    lock(sequencer).publish(unit, part.filled);
                    worker.pending.push_back((unit, part));
                    worker.flush(sequencer, &to, first_list);
                }
            });
            // Every unit has published; the units that fit the room go out now.
            out.workers[..workers]
                .par_iter_mut()
                .for_each(|worker| worker.flush(sequencer, &to, first_list));
        }
        let (total, fitted) = {
            let sequencer = lock(sequencer);
            let total = sequencer.starts[units];
            // The units that fit the room are a prefix: starts ascend.
            let fitted = (0..units)
                .find(|&u| sequencer.starts[u + 1] > room)
                .map_or(total, |u| sequencer.starts[u]);
            (total, fitted)
        };
        if total > room {
            // The output grows: keep what was placed, reserve with some slack, place the rest.
            // SAFETY: every unit below the first that did not fit was placed, so entries
            // `0..fitted` are initialized (and the distances too, when requested).
            unsafe { out.indices.set_len(fitted) };
            let wanted = total + (total >> GROWTH_SLACK_SHIFT);
            // Exactly: `reserve` would double the capacity, twice the output's memory.
            out.indices.reserve_exact(wanted - fitted);
            if with_distances {
                // SAFETY: as above.
                unsafe { out.distances.set_len(fitted) };
                out.distances.reserve_exact(wanted - fitted);
            }
            let to = Destination::new(
                &mut out.indices,
                with_distances.then_some(&mut out.distances),
                &mut out.offsets[..n],
                fitted,
                total,
            );
            out.workers[..workers]
                .par_iter_mut()
                .for_each(|worker| worker.flush(sequencer, &to, first_list));
        }
        debug_assert!(out.workers.iter().all(|w| w.pending.is_empty()));
        // SAFETY: every unit was placed: entries `0..total` are initialized.
        unsafe { out.indices.set_len(total) };
        if with_distances {
            // SAFETY: as above, for the distances.
            unsafe { out.distances.set_len(total) };
        }
        out.offsets[n] = total;
    }
}
