//! The list pass for a set given in cell order but for a few points (a solver's order a step
//! or so after a reorder): the caller's numbering serves as the grid's order, and the few
//! points whose cell breaks it are exceptions, searched apart and merged into the lists.
//!
//! A point is kept while the keys of the kept points ascend along the caller's numbering
//! (see [`split_exceptions`]); the others are the exceptions. A view of the grid then holds
//! the points in the caller's numbering (the identity as its order, as for input in cell
//! order), the exceptions masked with [`Real::PAD`] so that no range finds them, and bucket
//! starts over the kept points, so that a bucket's range of caller indices holds its kept
//! points (and the exceptions among them). The pass for input in cell order runs on that
//! view: no counting sort of the lists, no inverse, every list ascending by construction
//! and each unit's lists placed while hot. The exceptions search the grid itself (their
//! true cells) before the pass; each unit then merges the exceptions among the neighbours
//! of its kept points into their lists (from the back, in place) and puts each of its
//! exceptions' lists in its empty place. The work beyond exact cell order grows with the
//! exceptions, not with the set.
//!
//! The pass takes ascending lists of a set against itself without distances; while more
//! than one point in [`EXCEPTIONS_MAX_SHARE`] is an exception, the other passes run.

use rayon::prelude::*;

use super::in_order::{UnitsInSequence, lists_in_sequence};
use super::self_lists::UnitTask;
use super::{NeighborLists, UnitBuffer};
use crate::error::Error;
use crate::geometry::CellTable;
use crate::grid::{Grid, UNIT_POINTS, full_neighbourhood};
use crate::kernel::MaskKernel;
use crate::parallel::DisjointSlice;
use crate::real::{LANES, Real};
use crate::sort::{cut_units, fill_identity};

/// The pass is taken while at most one point in this many is an exception.
pub(super) const EXCEPTIONS_MAX_SHARE: usize = 32;

/// Exceptions searched per parallel task.
const EXCEPTION_CHUNK: usize = 256;

/// Sorted positions per chunk of the parallel copy of the points into the caller's
/// numbering.
const SCATTER_CHUNK: usize = 1 << 14;

/// The scratch of the pass, kept across calls; a clone starts afresh.
#[derive(Debug, Default)]
pub(super) struct Scratch<T: Real> {
    /// The view of the grid in the caller's numbering.
    view: Option<Box<Grid<T>>>,
    /// The caller's indices of the exceptions, ascending.
    exceptions: Vec<u32>,
    /// One bit per point: set for an exception.
    is_exception: Vec<u64>,
    /// The coordinates of each exception.
    points: Vec<[T; 3]>,
    /// Where each exception's list starts in `lists` (one more for the end).
    offsets: Vec<usize>,
    /// The lists of the exceptions, back to back, each ascending.
    lists: Vec<u32>,
    /// `kept << 32 | exception` for each kept point within reach of an exception, ascending.
    hits: Vec<u64>,
    /// What each parallel task of the exceptions' search found.
    chunks: Vec<ChunkLists>,
}

impl<T: Real> Clone for Scratch<T> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// The lists and hits of one task of the exceptions' search.
#[derive(Debug, Default)]
struct ChunkLists {
    entries: Vec<u32>,
    lens: Vec<usize>,
    hits: Vec<u64>,
}

/// Splits the points with bucket `keys` (in the caller's numbering) into kept points, whose
/// keys ascend, and exceptions: `kept(i, key)` or `exception(i)` is called for each point in
/// turn. A point is kept when its key is at least the last kept key, unless the next point
/// would be kept after it but not after this one (a point that jumped ahead of its
/// followers is set aside, not its followers). Stops and returns false at the first
/// exception past `max`.
pub(super) fn split_exceptions(
    keys: &[u32],
    max: usize,
    mut kept: impl FnMut(usize, u32),
    mut exception: impl FnMut(usize),
) -> bool {
    let mut last = 0u32;
    let mut count = 0usize;
    for (i, &key) in keys.iter().enumerate() {
        let next = keys.get(i + 1).copied().unwrap_or(u32::MAX);
        let blocks_next = next < key && next >= last;
        if key >= last && !blocks_next {
            last = key;
            kept(i, key);
        } else {
            count += 1;
            if count > max {
                return false;
            }
            exception(i);
        }
    }
    true
}

impl<T: Real> Grid<T> {
    /// Tells whether the caller's numbering is cell order but for few enough exceptions for
    /// the pass of this module (see [`EXCEPTIONS_MAX_SHARE`]).
    pub(super) fn few_exceptions(&self) -> bool {
        let n = self.len();
        split_exceptions(&self.keys[..n], n / EXCEPTIONS_MAX_SHARE, |_, _| {}, |_| {})
    }

    /// The self lists (ascending, without distances) of a grid whose points are in cell
    /// order but for a few exceptions, or `None` (nothing done) when they are too many.
    pub(super) fn self_lists_with_exceptions<K: MaskKernel>(
        &self,
        table: &CellTable,
        out: &mut NeighborLists<T>,
    ) -> Option<Result<(), Error>> {
        let mut scratch = std::mem::take(&mut out.exceptions);
        let result = self.lists_with_exceptions::<K>(table, out, &mut scratch);
        out.exceptions = scratch;
        result
    }

    fn lists_with_exceptions<K: MaskKernel>(
        &self,
        table: &CellTable,
        out: &mut NeighborLists<T>,
        scratch: &mut Scratch<T>,
    ) -> Option<Result<(), Error>> {
        let n = self.len();
        if scratch.view.is_none() {
            scratch.view = Some(Box::new(Grid::new(self.radius).ok()?));
        }
        let view = scratch
            .view
            .as_deref_mut()
            .expect("the view was made above");
        // The kept points' bucket starts in the caller's numbering: bucket `b` starts at the
        // first kept point with a key of at least `b` (bucket 0 at 0, so that exceptions
        // before the first kept point lie in a bucket too).
        let starts = &mut view.starts;
        let exceptions = &mut scratch.exceptions;
        starts.clear();
        starts.push(0);
        exceptions.clear();
        let few = split_exceptions(
            &self.keys[..n],
            n / EXCEPTIONS_MAX_SHARE,
            |i, key| {
                if starts.len() <= key as usize {
                    starts.resize(key as usize + 1, i as u32);
                }
            },
            |i| exceptions.push(i as u32),
        );
        if !few {
            return None;
        }
        starts.resize(table.buckets() + 1, n as u32);
        self.shape_view(view);
        let exceptions = &scratch.exceptions;
        let is_exception = &mut scratch.is_exception;
        is_exception.clear();
        is_exception.resize(n.div_ceil(64), 0);
        for &e in exceptions {
            is_exception[e as usize / 64] |= 1 << (e % 64);
        }

        // The points in the caller's numbering, the exceptions masked.
        view.sorted.set_len(n);
        {
            let [x, y, z] = view.sorted.columns_mut().map(DisjointSlice::new);
            let [sx, sy, sz] = self.sorted.padded();
            self.order[..n]
                .par_chunks(SCATTER_CHUNK)
                .enumerate()
                .for_each(|(c, order)| {
                    for (k, &i) in order.iter().enumerate() {
                        let p = c * SCATTER_CHUNK + k;
                        debug_assert!((i as usize) < n);
                        // SAFETY: `order[..n]` is a permutation of `0..n`, so every caller
                        // index is written once, by one task, and is in bounds.
                        unsafe {
                            x.write(i as usize, sx[p]);
                            y.write(i as usize, sy[p]);
                            z.write(i as usize, sz[p]);
                        }
                    }
                });
        }
        scratch.points.clear();
        scratch
            .points
            .extend(exceptions.iter().map(|&e| view.sorted.point(e as usize)));
        let [x, y, z] = view.sorted.columns_mut();
        for &e in exceptions {
            let e = e as usize;
            (x[e], y[e], z[e]) = (T::PAD, T::PAD, T::PAD);
        }
        // The identity, padded like a built order; a view of as many points has it already.
        if view.order.len() != n + LANES {
            view.order.clear();
            view.order.resize(n + LANES, 0);
            fill_identity(&mut view.order[..n]);
        }
        cut_units(&view.starts, n, UNIT_POINTS, &mut view.units);

        self.search_exceptions(table, scratch);
        let view = scratch.view.as_deref().expect("the view was made above");
        let (exceptions, offsets, lists, hits) = (
            &scratch.exceptions[..],
            &scratch.offsets[..],
            &scratch.lists[..],
            &scratch.hits[..],
        );
        let build = view.run_time_build::<K>();
        let units = UnitsInSequence {
            count: view.units.len(),
            first_list: |unit: usize| view.starts[view.units[unit].0 as usize] as usize,
            points: |unit: usize| view.unit_points(view.units[unit]),
            gather: |unit: usize, buffer: &mut UnitBuffer<T>| {
                buffer.room_to_pack::<K>();
                let unit = view.units[unit];
                let (first, end) = (view.starts[unit.0 as usize], view.starts[unit.1 as usize]);
                let from = exceptions.partition_point(|&e| e < first);
                let to = exceptions.partition_point(|&e| e < end);
                let task = UnitTask {
                    table,
                    unit,
                    exceptions: &exceptions[from..to],
                    list_of: |p: usize| p,
                };
                view.run_task::<K, _>(&task, buffer, false, build);
                let hits_from = hits.partition_point(|&h| h >> 32 < u64::from(first));
                let hits_to = hits.partition_point(|&h| h >> 32 < u64::from(end));
                if buffer.failure.is_none() {
                    buffer.splice_exceptions(
                        first as usize,
                        &exceptions[from..to],
                        &offsets[from..=to],
                        lists,
                        &hits[hits_from..hits_to],
                    );
                }
            },
        };
        Some(lists_in_sequence(n, &units, out, false))
    }

    /// Searches the grid for the neighbours of each exception of `scratch` (by its true
    /// cell): its list, ascending, into `scratch.lists`, and for each kept neighbour a hit
    /// into `scratch.hits`, which end sorted.
    fn search_exceptions(&self, table: &CellTable, scratch: &mut Scratch<T>) {
        let chunks = scratch.exceptions.len().div_ceil(EXCEPTION_CHUNK);
        if scratch.chunks.len() < chunks {
            scratch.chunks.resize_with(chunks, ChunkLists::default);
        }
        let is_exception = &scratch.is_exception;
        scratch
            .exceptions
            .par_chunks(EXCEPTION_CHUNK)
            .zip(scratch.points.par_chunks(EXCEPTION_CHUNK))
            .zip(scratch.chunks[..chunks].par_iter_mut())
            .for_each(|((exceptions, points), found)| {
                found.entries.clear();
                found.lens.clear();
                found.hits.clear();
                for (&e, &point) in exceptions.iter().zip(points) {
                    let from = found.entries.len();
                    let bucket = self.keys[e as usize];
                    let ranges =
                        full_neighbourhood(&self.starts, table, table.bucket_coords(bucket));
                    for &(start, end) in ranges.as_slice() {
                        for q in start as usize..end as usize {
                            let i = self.order[q];
                            // The formula of the kernels (`Real::within_mask_scalar`), with
                            // the exception as the searching point.
                            if i != e && T::distance_squared(point, self.sorted.point(q)) <= self.r2
                            {
                                found.entries.push(i);
                            }
                        }
                    }
                    let list = &mut found.entries[from..];
                    list.sort_unstable();
                    found.lens.push(list.len());
                    found.hits.extend(
                        list.iter()
                            .filter(|&&j| is_exception[j as usize / 64] >> (j % 64) & 1 == 0)
                            .map(|&j| u64::from(j) << 32 | u64::from(e)),
                    );
                }
            });
        scratch.offsets.clear();
        scratch.offsets.push(0);
        scratch.lists.clear();
        scratch.hits.clear();
        for found in &scratch.chunks[..chunks] {
            scratch.lists.extend_from_slice(&found.entries);
            let mut end = *scratch.offsets.last().expect("offsets start with 0");
            scratch.offsets.extend(found.lens.iter().map(|&len| {
                end += len;
                end
            }));
            scratch.hits.extend_from_slice(&found.hits);
        }
        scratch.hits.par_sort_unstable();
    }
}

impl<T: Real> UnitBuffer<T> {
    /// Completes the lists of a unit gathered on a view with exceptions, lists
    /// `first..first + lens.len()` in order: the exceptions `exceptions` of the unit (their
    /// lists empty) get their lists, `lists[offsets[k]..offsets[k + 1]]` for the `k`-th, and
    /// each kept point its `hits` (`kept << 32 | exception`, ascending, only the unit's
    /// kept points), merged into its ascending list. In place, from the back: each list
    /// moves up by what the lists before it gain, and the lists before the first that
    /// changes stay where they are.
    fn splice_exceptions(
        &mut self,
        first: usize,
        exceptions: &[u32],
        offsets: &[usize],
        lists: &[u32],
        hits: &[u64],
    ) {
        debug_assert_eq!(offsets.len(), exceptions.len() + 1);
        let extra = hits.len() + (offsets[exceptions.len()] - offsets[0]);
        if extra == 0 {
            return;
        }
        let filled = self.filled;
        if !self.reserve_entries(filled + extra, false) {
            return;
        }
        let entries = &mut self.entries;
        let (mut write, mut read) = (filled + extra, filled);
        let (mut hits_left, mut exceptions_left) = (hits.len(), exceptions.len());
        for k in (0..self.lens.len()).rev() {
            if write == read {
                break;
            }
            let slot = first + k;
            debug_assert_eq!(self.slots[k] as usize, slot, "a unit's lists out of order");
            let len = self.lens[k] as usize;
            let start = read - len;
            if exceptions_left > 0 && exceptions[exceptions_left - 1] as usize == slot {
                exceptions_left -= 1;
                debug_assert_eq!(len, 0, "an exception found neighbours in the view");
                let list = &lists[offsets[exceptions_left]..offsets[exceptions_left + 1]];
                write -= list.len();
                entries[write..write + list.len()].copy_from_slice(list);
                self.lens[k] = list.len() as u32;
            } else {
                let end = hits_left;
                while hits_left > 0 && (hits[hits_left - 1] >> 32) as usize == slot {
                    hits_left -= 1;
                }
                let own = &hits[hits_left..end];
                // Merge from the back: the larger of the list's last entry and the last hit.
                let mut from = read;
                for &hit in own.iter().rev() {
                    let hit = hit as u32;
                    while from > start && entries[from - 1] > hit {
                        write -= 1;
                        from -= 1;
                        entries[write] = entries[from];
                    }
                    write -= 1;
                    entries[write] = hit;
                }
                let rest = from - start;
                entries.copy_within(start..from, write - rest);
                write -= rest;
                self.lens[k] = (len + own.len()) as u32;
            }
            read = start;
        }
        debug_assert_eq!(write, read, "the merged lists do not meet the unmoved ones");
        self.filled = filled + extra;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept points of `keys` and the exceptions, as the rule splits them.
    fn split(keys: &[u32]) -> (Vec<usize>, Vec<usize>) {
        let (mut kept, mut exceptions) = (Vec::new(), Vec::new());
        assert!(split_exceptions(
            keys,
            keys.len(),
            |i, _| kept.push(i),
            |i| exceptions.push(i)
        ));
        (kept, exceptions)
    }

    #[test]
    fn one_moved_point_is_one_exception_and_kept_keys_ascend() {
        // Moved back, moved ahead, moved far ahead, and a run that follows a backward move.
        for (keys, expected) in [
            (vec![1, 1, 0, 1, 2, 2], vec![2]),
            (vec![1, 1, 2, 1, 1, 3], vec![2]),
            (vec![3, 3, 0, 3, 3], vec![2]),
            (vec![0, 9, 1, 1, 2], vec![1]),
            (vec![2, 0, 1, 1], vec![0]),
        ] {
            let (kept, exceptions) = split(&keys);
            assert_eq!(exceptions, expected, "keys {keys:?}");
            assert!(kept.windows(2).all(|w| keys[w[0]] <= keys[w[1]]));
        }
        // Past the budget, the split stops.
        assert!(!split_exceptions(&[3, 2, 1, 0], 1, |_, _| {}, |_| {}));
    }

    #[test]
    fn splice_puts_exception_lists_in_place_and_merges_hits() {
        let mut buffer = UnitBuffer::<f32>::default();
        // Lists 10..14 of a unit: 11 is an exception, 10 and 13 gain hits.
        buffer.start(4, usize::MAX);
        let gathered: [&[u32]; 4] = [&[12, 20], &[], &[10, 13], &[2, 9]];
        for (k, list) in gathered.iter().enumerate() {
            let at = buffer.filled;
            assert!(buffer.reserve_entries(at + list.len(), false));
            buffer.entries[at..at + list.len()].copy_from_slice(list);
            buffer.push_list(10 + k, list.len());
        }
        let lists = [99, 10, 13, 15];
        let hits = [10u64 << 32 | 11, 10 << 32 | 30, 13 << 32 | 1, 13 << 32 | 11];
        buffer.splice_exceptions(10, &[11], &[1, 3], &lists, &hits);
        let mut from = 0;
        let mut out = Vec::new();
        for &len in &buffer.lens {
            out.push(buffer.entries[from..from + len as usize].to_vec());
            from += len as usize;
        }
        assert_eq!(from, buffer.filled);
        assert_eq!(
            out,
            [
                vec![11, 12, 20, 30],
                vec![10, 13],
                vec![10, 13],
                vec![1, 2, 9, 11]
            ]
        );
    }
}
