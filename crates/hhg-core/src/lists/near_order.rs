//! The list pass for a set given nearly in cell order: cell order after some steps of motion,
//! Morton or Hilbert order, a solver's own order between two reorderings. Work units are
//! ranges of the caller's numbering, so each unit's lists fill one stretch of the output and
//! go into place while hot, as in the pass for input in cell order (`in_order`).
//!
//! In such input the caller's consecutive points mostly share a bucket, and consecutive
//! points of one bucket are consecutive in the grid's sorted order too (the counting sort is
//! stable). A unit therefore reads its points as runs of consecutive sorted positions (one
//! per stretch of points in one bucket), sorts the runs by position and joins those that
//! touch: a point that moved into a neighbouring bucket joins that bucket's run when its
//! members lie in the same unit. The runs are searched bucket by bucket as in the general
//! pass, each list mapped to the caller's numbering and sorted where that broke its order,
//! and the unit's lists are then moved into the caller's order in the unit's buffer (in
//! cache) before they are copied into place.
//!
//! The pass is chosen when the caller's numbering keeps the points of a bucket together
//! ([`NEAR_ORDER_MAX_BATCH_LOSS`]); input in random order takes the general pass, which
//! batches every bucket's points whatever their numbering.

use rayon::prelude::*;

use super::gather::{Batch, RUN_POINTS, RUN_WIDTH};
use super::in_order::{UnitsInSequence, lists_in_sequence};
use super::{NeighborLists, Piece, UnitBuffer};
use crate::dispatch::KernelTask;
use crate::error::Error;
use crate::geometry::CellTable;
use crate::grid::{Grid, UNIT_POINTS, run_neighbourhood};
use crate::kernel::MaskKernel;
use crate::memory::{try_reserve_total, try_resize};
use crate::parallel::DisjointSlice;
use crate::real::Real;

/// The pass for input nearly in cell order is taken when its batches, as a point sees them,
/// are at least the general pass's divided by this. The general pass batches a point with
/// all the points of its bucket; the pass for input nearly in cell order with the points of
/// its bucket in its unit (a unit joins them into one run). Both are estimated on samples
/// and weighted by points (a point in a bucket of `b` counts `b`), so that a few dense
/// buckets among many sparse ones (clusters) weigh as much as their points: uniform points
/// in cell order moved by up to 0.1 r, or in Morton order of any cells, keep most of each
/// bucket in one unit; random order keeps ~1 point of a bucket of ~10 in a unit.
pub(super) const NEAR_ORDER_MAX_BATCH_LOSS: usize = 2;

/// One work unit in this many is measured (a sort of its 2048 keys each).
const UNIT_SAMPLE_EVERY: usize = 16;

/// Points per chunk of the parallel inverse of `order`.
const INVERSE_CHUNK: usize = 1 << 16;

/// The sum of the squares of the lengths of the runs of equal values in `values`, and the
/// count of values: their quotient is the mean run length as a value sees it.
fn weighted_runs(values: impl Iterator<Item = u32>) -> (u64, u64) {
    let (mut squares, mut count, mut run, mut last) = (0u64, 0u64, 0u64, None);
    for value in values {
        if last != Some(value) {
            squares += run * run;
            run = 0;
            last = Some(value);
        }
        run += 1;
        count += 1;
    }
    (squares + run * run, count)
}

/// The points of caller indices `range` searching their own set, gathered run by run
/// (`inverse` maps caller indices to sorted positions).
struct CallerRangeTask<'a> {
    table: &'a CellTable,
    range: (u32, u32),
    inverse: &'a [u32],
}

impl<T: Real> KernelTask<T> for CallerRangeTask<'_> {
    type Buffer = UnitBuffer<T>;

    #[inline(always)]
    fn run<K: MaskKernel>(&self, grid: &Grid<T>, buffer: &mut UnitBuffer<T>, with_distances: bool) {
        grid.gather_caller_range_with::<K>(
            self.table,
            self.range,
            self.inverse,
            buffer,
            with_distances,
        );
    }
}

impl<T: Real> Grid<T> {
    /// Tells whether the caller's numbering keeps the points of a bucket together well
    /// enough for the pass for input nearly in cell order (see
    /// [`NEAR_ORDER_MAX_BATCH_LOSS`]).
    pub(super) fn nearly_in_cell_order(&self) -> bool {
        let n = self.len();
        if n < 2 {
            return false;
        }
        let keys = &self.keys[..n];
        let starts = &self.starts;
        let sum = |a: [u64; 3], b: [u64; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
        // On a sample of units, for every point: the size of its bucket (its batch in the
        // general pass) and the points of its bucket in its unit (its batch here).
        let [general, near, points] = (0..n.div_ceil(UNIT_POINTS))
            .into_par_iter()
            .step_by(UNIT_SAMPLE_EVERY)
            .map(|unit| {
                let from = unit * UNIT_POINTS;
                let to = (from + UNIT_POINTS).min(n);
                let general = keys[from..to]
                    .iter()
                    .map(|&key| u64::from(starts[key as usize + 1] - starts[key as usize]))
                    .sum::<u64>();
                // On the stack: a pass after warm-up allocates nothing.
                let mut unit_keys = [0u32; UNIT_POINTS];
                let unit_keys = &mut unit_keys[..to - from];
                unit_keys.copy_from_slice(&keys[from..to]);
                unit_keys.sort_unstable();
                let (near, points) = weighted_runs(unit_keys.iter().copied());
                [general, near, points]
            })
            .reduce(|| [0; 3], sum);
        debug_assert!(near <= general && points as usize <= n);
        // near / points >= (general / points) / LOSS.
        u128::from(near) * NEAR_ORDER_MAX_BATCH_LOSS as u128 >= u128::from(general)
    }

    /// The self lists of a grid built on points nearly in cell order: units of
    /// [`UNIT_POINTS`] caller indices gathered in parallel, each moved into the caller's
    /// order and copied into place once its start is known.
    pub(super) fn self_lists_near_order<K: MaskKernel>(
        &self,
        table: &CellTable,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        let n = self.len();
        let mut inverse = std::mem::take(&mut out.inverse);
        self.inverse_order(&mut inverse);
        let build = self.run_time_build::<K>();
        let range = |unit: usize| {
            let from = unit * UNIT_POINTS;
            (from as u32, (from + UNIT_POINTS).min(n) as u32)
        };
        let inverse_ref = &inverse[..n];
        let units = UnitsInSequence {
            count: n.div_ceil(UNIT_POINTS),
            first_list: |unit: usize| unit * UNIT_POINTS,
            points: |unit: usize| {
                let (from, to) = range(unit);
                (to - from) as usize
            },
            gather: |unit: usize, buffer: &mut UnitBuffer<T>| {
                buffer.room_to_pack::<K>();
                let task = CallerRangeTask {
                    table,
                    range: range(unit),
                    inverse: inverse_ref,
                };
                self.run_task::<K, _>(&task, buffer, with_distances, build);
                if buffer.failure.is_none() {
                    buffer.move_into_list_order(range(unit).0 as usize);
                }
            },
        };
        let result = lists_in_sequence(n, &units, out, with_distances);
        out.inverse = inverse;
        result
    }

    /// Fills `inverse[..len()]` with the sorted position of each caller index (the inverse
    /// of `order`), in parallel; `inverse` only grows.
    pub(super) fn inverse_order(&self, inverse: &mut Vec<u32>) {
        let n = self.len();
        if inverse.len() < n {
            inverse.resize(n, 0);
        }
        let shared = DisjointSlice::new(&mut inverse[..n]);
        self.order[..n]
            .par_chunks(INVERSE_CHUNK)
            .enumerate()
            .for_each(|(c, order)| {
                for (k, &i) in order.iter().enumerate() {
                    debug_assert!((i as usize) < n);
                    // SAFETY: `order[..n]` is a permutation of `0..n`, so every caller index
                    // is written once, by one task, and is in bounds.
                    unsafe { shared.write(i as usize, (c * INVERSE_CHUNK + k) as u32) };
                }
            });
    }

    /// Gathers the lists of caller indices `range` into `buffer` with kernel `K`: their runs
    /// of consecutive sorted positions, sorted and joined, searched bucket by bucket (a
    /// sparse bucket with the next ones of its row, as in the general pass). The lists are
    /// recorded as the caller's indices, in the order of the runs. No closure on the way to
    /// the kernels (see [`Grid::run_task`]).
    #[inline(always)]
    fn gather_caller_range_with<K: MaskKernel>(
        &self,
        table: &CellTable,
        range: (u32, u32),
        inverse: &[u32],
        buffer: &mut UnitBuffer<T>,
        with_distances: bool,
    ) {
        let keys = &self.keys;
        let mut runs = std::mem::take(&mut buffer.runs);
        runs.clear();
        let (from, to) = (range.0 as usize, range.1 as usize);
        let mut i = from;
        while i < to {
            let key = keys[i];
            let mut j = i + 1;
            while j < to && keys[j] == key {
                j += 1;
            }
            // Consecutive caller indices of one bucket are consecutive sorted positions.
            let start = inverse[i];
            runs.push((start, start + (j - i) as u32));
            i = j;
        }
        let mut runs_scratch = std::mem::take(&mut buffer.runs_scratch);
        sort_runs(&mut runs, &mut runs_scratch);
        buffer.runs_scratch = runs_scratch;
        let mut joined = 0;
        for k in 0..runs.len() {
            if joined > 0 && runs[joined - 1].1 == runs[k].0 {
                runs[joined - 1].1 = runs[k].1;
            } else {
                runs[joined] = runs[k];
                joined += 1;
            }
        }
        runs.truncate(joined);

        let list_of = |p: usize| self.order[p] as usize;
        let last_x = (1u32 << table.shift[0]) - 1;
        let mut batch = Batch::new();
        for &(start, end) in &runs {
            let mut p = start;
            while p < end {
                let bucket = keys[self.order[p as usize] as usize];
                let mut stop = self.starts[bucket as usize + 1].min(end);
                let coords = table.bucket_coords(bucket);
                // A sparse stretch takes the next buckets of its row (of this run) along, as
                // long as neither the stretch nor its neighbours in x wrap around the row.
                let mut width = 1;
                if ((stop - p) as usize) < RUN_POINTS && coords[0] >= 1 {
                    while coords[0] + width < last_x && width < RUN_WIDTH {
                        let next = (bucket + width) as usize;
                        if self.starts[next] >= end {
                            break;
                        }
                        let next_stop = self.starts[next + 1].min(end);
                        if (next_stop - p) as usize > RUN_POINTS {
                            break;
                        }
                        width += 1;
                        stop = next_stop;
                    }
                }
                let ranges = run_neighbourhood(&self.starts, table, coords, width);
                let stretch = (p, stop);
                self.gather_stretch::<K>(
                    &ranges,
                    stretch,
                    &mut batch,
                    buffer,
                    with_distances,
                    list_of,
                );
                p = stop;
            }
        }
        buffer.runs = runs;
    }
}

impl<T: Real> UnitBuffer<T> {
    /// Puts the lists of a unit whose lists are `first..first + slots.len()`, gathered in
    /// any order, into that order: `slots` and `lens` then follow list order, and `pieces`
    /// says how the entries, left as gathered, go into list order when they are copied to
    /// their place (in pieces of lists gathered for consecutive places, ascending by their
    /// place in list order, so that the copy writes its destination in sequence). Nothing
    /// changes where the lists are in list order already. Moving the entries here, through
    /// a buffer of their own, cost a copy of every entry of the unit (see
    /// docs/performance.md, "The pass nearly in cell order: lists put into list order as
    /// they are copied into place").
    fn move_into_list_order(&mut self, first: usize) {
        let count = self.slots.len();
        self.pieces.clear();
        let in_order = (self.slots.iter().enumerate()).all(|(k, &slot)| slot as usize == first + k);
        if in_order {
            return;
        }
        // At most one piece per list; where each list starts among the entries as gathered,
        // then its length, by place.
        self.list_starts.clear();
        if let Err(error) = try_reserve_total(&mut self.pieces, count, "a unit's list pieces")
            .and_then(|()| try_resize(&mut self.list_starts, 2 * count, 0, "a unit's list starts"))
        {
            self.failure = Some(error);
            return;
        }
        let (sources, lens_by_place) = self.list_starts.split_at_mut(count);
        let mut from = 0u32;
        for (&slot, &len) in self.slots.iter().zip(&self.lens) {
            debug_assert!((slot as usize) >= first && (slot as usize) < first + count);
            sources[slot as usize - first] = from;
            lens_by_place[slot as usize - first] = len;
            from += len;
        }
        debug_assert_eq!(from as usize, self.filled);
        let mut to = 0u32;
        let mut place = 0usize;
        while place < count {
            let piece_from = sources[place];
            let mut end = piece_from;
            while place < count && sources[place] == end {
                end += lens_by_place[place];
                place += 1;
            }
            self.pieces.push(Piece {
                from: piece_from,
                to,
                len: end - piece_from,
            });
            to += end - piece_from;
        }
        debug_assert_eq!(to as usize, self.filled);
        for (k, (slot, len)) in self.slots.iter_mut().zip(&mut self.lens).enumerate() {
            *slot = (first + k) as u32;
            *len = lens_by_place[k];
        }
    }
}

/// Runs up to this many are sorted by insertion; more by [`radix_sort_runs`].
const INSERTION_MAX_RUNS: usize = 32;

/// Sorts runs by their first position (the runs of a unit never share one): nothing to do
/// when they ascend already (a unit of points in cell order but for points moved within
/// their bucket), by insertion when they are few, else by a radix sort on the positions
/// relative to the smallest. The radix sort replaced an insertion sort that fell back to
/// `sort_unstable` past a budget of moves: points moved across a bucket of the next slab
/// sit ~20,000 sorted positions away, so most units of `drift` took the fallback (49
/// instructions per point of 1,330 under callgrind; see docs/performance.md).
fn sort_runs(runs: &mut Vec<(u32, u32)>, scratch: &mut Vec<(u32, u32)>) {
    if runs.windows(2).all(|pair| pair[0].0 < pair[1].0) {
        return;
    }
    if runs.len() <= INSERTION_MAX_RUNS {
        for i in 1..runs.len() {
            let run = runs[i];
            let mut j = i;
            while j > 0 && runs[j - 1].0 > run.0 {
                runs[j] = runs[j - 1];
                j -= 1;
            }
            runs[j] = run;
        }
        return;
    }
    radix_sort_runs(runs, scratch);
}

/// Sorts runs by their first position, least significant byte of `start - min` first,
/// skipping the bytes that all runs share (usually all but the two lowest); `scratch` ends
/// up with the other half of the ping-pong and allocates only past its high-water mark.
fn radix_sort_runs(runs: &mut Vec<(u32, u32)>, scratch: &mut Vec<(u32, u32)>) {
    let (min, max) = runs.iter().fold((u32::MAX, 0), |(lo, hi), run| {
        (lo.min(run.0), hi.max(run.0))
    });
    let range = max - min;
    scratch.clear();
    scratch.resize(runs.len(), (0, 0));
    let mut shift = 0;
    while shift < u32::BITS && range >> shift != 0 {
        let digit = |run: &(u32, u32)| ((run.0 - min) >> shift) as usize & 0xff;
        let mut counts = [0u32; 256];
        for run in runs.iter() {
            counts[digit(run)] += 1;
        }
        let mut sum = 0;
        for count in &mut counts {
            let here = *count;
            *count = sum;
            sum += here;
        }
        for run in runs.iter() {
            let at = &mut counts[digit(run)];
            scratch[*at as usize] = *run;
            *at += 1;
        }
        std::mem::swap(runs, scratch);
        shift += 8;
    }
    debug_assert!(runs.windows(2).all(|pair| pair[0].0 < pair[1].0));
}

#[cfg(test)]
mod tests {
    use hhg_testkit::SplitMix64;

    use super::*;

    /// Runs as the pass makes them: disjoint, of lengths 1-4, in an order that mostly
    /// ascends with a share of runs moved up to `reach` positions away.
    fn shuffled_runs(count: usize, moved_every: usize, reach: u32, seed: u64) -> Vec<(u32, u32)> {
        let mut rng = SplitMix64::new(seed);
        let mut next = move || (rng.next_u64() >> 32) as u32;
        let mut start = 1_000_000u32;
        let mut runs: Vec<(u32, u32)> = (0..count)
            .map(|_| {
                let len = 1 + next() % 4;
                start += len + next() % 3;
                (start - len, start)
            })
            .collect();
        for i in 0..count {
            if moved_every > 0 && i % moved_every == 0 {
                let to = (i + (next() % reach) as usize).min(count - 1);
                runs.swap(i, to);
            }
        }
        runs
    }

    #[test]
    fn runs_come_out_sorted_by_start_as_the_standard_sort_sorts_them() {
        let mut scratch = Vec::new();
        for (count, moved_every, reach, seed) in [
            (0, 0, 1, 1),
            (1, 0, 1, 2),
            (20, 3, 10, 3),
            (INSERTION_MAX_RUNS + 1, 2, 30, 4),
            (700, 7, 500, 5),
            (700, 1, 700, 6),
            (5000, 50, 5000, 7),
        ] {
            let mut runs = shuffled_runs(count, moved_every, reach, seed);
            let mut expected = runs.clone();
            expected.sort_unstable_by_key(|run| run.0);
            sort_runs(&mut runs, &mut scratch);
            assert_eq!(runs, expected, "{count} runs, one in {moved_every} moved");
        }
        // Starts that differ in every byte.
        let mut runs = vec![(u32::MAX - 1, u32::MAX), (0, 1), (1 << 24, (1 << 24) + 1)];
        runs.extend((0..40).map(|k| (1000 * k + 7, 1000 * k + 8)));
        let mut expected = runs.clone();
        expected.sort_unstable_by_key(|run| run.0);
        radix_sort_runs(&mut runs, &mut scratch);
        assert_eq!(runs, expected);
    }
}
