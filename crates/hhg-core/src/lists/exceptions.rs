//! The list pass for a set given in cell order but for a few points (a solver's order a step
//! or so after a reorder): the caller's numbering serves as the grid's order, and the few
//! points whose cell breaks it are exceptions, searched apart and merged into the lists.
//!
//! The kept points are a longest run of points, not necessarily consecutive, whose keys
//! ascend along the caller's numbering (see [`split_exceptions`]); the others are the
//! exceptions. A view of the grid then holds the points in the caller's numbering (the
//! identity as its order, as for input in cell order) and bucket starts over the kept
//! points, so that a bucket's range of caller indices holds its kept points (and the
//! exceptions among them). The pass for input in cell order runs on that view, the
//! exceptions searching nothing there: no counting sort of the lists, no inverse, every
//! list ascending by construction and each unit's lists placed while hot. A kept point
//! finds an exception in the view like any other point where its neighbourhood covers the
//! exception's place, which it nearly always does after a small move (the exception's place
//! lies in its old bucket, next to its new one). Before the pass, each exception searches
//! the kept points of the view around its true bucket with the SIMD kernel and the other
//! exceptions in a grid of the exceptions alone; each unit then puts each of its
//! exceptions' lists in its empty place and merges the few pairs the view missed (a hit:
//! a kept point whose neighbourhood does not hold the exception's place) into the kept
//! points' lists, from the back, in place. The work beyond exact cell order grows with the
//! exceptions, not with the set.
//!
//! The pass takes ascending lists of a set against itself without distances; while there
//! are more exceptions than [`max_exceptions`], the other passes run.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::in_order::{UnitsInSequence, lists_in_sequence};
use super::self_lists::UnitTask;
use super::{NeighborLists, UnitBuffer};
use crate::dispatch::KernelTask;
use crate::error::Error;
use crate::geometry::CellTable;
use crate::grid::{Grid, UNIT_POINTS, full_neighbourhood};
use crate::kernel::{MaskKernel, ROW_SLACK, gather_point};
use crate::parallel::DisjointSlice;
use crate::real::{LANES, Real};
use crate::sort::{ascending_starts, cut_units, fill_identity};

/// The budget of exceptions follows the density: the pass pays per exception a search
/// apart (against its neighbours), the pass nearly in cell order pays per point a batch
/// sorted and scattered (of its neighbours too), and the second grows faster with the
/// neighbours than the first. Measured (docs/performance.md, 2026-11-29, callgrind) the two
/// cross near one exception in 10 (9.8 %) on uniform points with [`OCCUPANCY_SPARSE`]
/// points in a point's bucket (its own included, on average over the points), taken as one
/// in [`CROSSOVER_SPARSE`]; on clusters with [`OCCUPANCY_DENSE`] a former, dearer form of
/// the pass crossed near one in 4 (lines through two inputs), taken as one in
/// [`CROSSOVER_DENSE`] (the pass has got cheaper per exception since). The share in
/// between follows a power of the occupancy through the two, and stays within
/// [`EXCEPTIONS_SHARE_MIN`] and [`EXCEPTIONS_SHARE_MAX`].
const OCCUPANCY_SPARSE: f64 = 10.4;
/// See [`OCCUPANCY_SPARSE`].
const OCCUPANCY_DENSE: f64 = 133.6;
/// See [`OCCUPANCY_SPARSE`].
const CROSSOVER_SPARSE: f64 = 12.0;
/// See [`OCCUPANCY_SPARSE`].
const CROSSOVER_DENSE: f64 = 8.0;
/// The smallest share of exceptions the pass takes, one in this many points: a margin below
/// the crossover measured on uniform points (one in 10), which keeps the pass for a
/// solver's step (~0.75 % exceptions) and for moves of up to ~0.05 r (~7 %).
const EXCEPTIONS_SHARE_MIN: f64 = 12.0;
/// The largest share of exceptions the pass takes, one in this many points, however dense:
/// below the measured crossover of the densest scene, and below a drift of 0.1 r (~14 %).
const EXCEPTIONS_SHARE_MAX: f64 = 10.0;

/// Points per chunk of the split into kept points and exceptions (see [`split_exceptions`]).
const SPLIT_CHUNK: usize = 2048;

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
    /// Each chunk's kept points in the split (see [`split_exceptions`]).
    kept: Vec<Vec<u32>>,
    /// The key carried into each chunk of the split by the kept points before it (see
    /// [`Grid::view_keys`]).
    carried: Vec<u32>,
    /// The caller's indices of the exceptions, ascending.
    exceptions: Vec<u32>,
    /// One bit per point: set for an exception.
    is_exception: Vec<u64>,
    /// The coordinates of each exception.
    points: Vec<[T; 3]>,
    /// `key << 32 | rank` of each exception (`rank` its place in `exceptions`), ascending:
    /// the exceptions counting-sorted by bucket, a grid of the exceptions alone.
    by_key: Vec<u64>,
    /// Where each bucket's exceptions start in `by_key` (one more for the end).
    exception_starts: Vec<u32>,
    /// Where each exception's list starts in `lists` (one more for the end).
    offsets: Vec<usize>,
    /// The lists of the exceptions, back to back, each ascending.
    lists: Vec<u32>,
    /// `kept << 32 | exception` for each kept point within reach of an exception whose place
    /// in the view its neighbourhood may not cover (see [`ExceptionSearch`]), ascending.
    hits: Vec<u64>,
    /// The other half of the radix sort of `hits`.
    hits_scratch: Vec<u64>,
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
    /// The row the kernel gathers one exception's kept neighbours into.
    row: Vec<u32>,
}

/// The most exceptions the pass takes on `grid` as built: a share of its points that grows
/// with the mean occupancy of the points' buckets, from one in 12 on sparse sets to one in
/// 10 on dense ones (see [`bucket_occupancy`]), unless [`set_exceptions_share`] set a share.
/// With more, the other passes run.
pub fn max_exceptions<T: Real>(grid: &Grid<T>) -> usize {
    grid.max_exceptions()
}

/// The mean over the points of `grid`, as built, of the count of points in their bucket
/// (their own included): the sum of the squares of the buckets' counts over the count of
/// points, 0 for an empty grid. It does not depend on the points' order.
pub fn bucket_occupancy<T: Real>(grid: &Grid<T>) -> f64 {
    grid.bucket_occupancy()
}

/// The share of exceptions, one in how many points, up to which the pass pays off on a set
/// whose points share their bucket with `occupancy` points on average (see
/// [`OCCUPANCY_SPARSE`]).
fn exceptions_share_for(occupancy: f64) -> f64 {
    let power =
        (CROSSOVER_SPARSE / CROSSOVER_DENSE).ln() / (OCCUPANCY_DENSE / OCCUPANCY_SPARSE).ln();
    let share = CROSSOVER_SPARSE * (OCCUPANCY_SPARSE / occupancy.max(1.0)).powf(power);
    share.clamp(EXCEPTIONS_SHARE_MAX, EXCEPTIONS_SHARE_MIN)
}

/// How many of the points of `grid`, as built, the pass for cell order with exceptions sets
/// aside (whether or not it is taken: see [`max_exceptions`]). For measurements and tests.
pub fn exception_count<T: Real>(grid: &Grid<T>) -> usize {
    let mut exceptions = Vec::new();
    let n = grid.len();
    let split = split_exceptions(&grid.keys[..n], n, &mut Vec::new(), &mut exceptions);
    debug_assert!(split, "a split without a budget stopped");
    exceptions.len()
}

/// Sets the share of exceptions up to which `grid` takes the pass for cell order with
/// exceptions to one point in `share` (0 never takes it) instead of the share that follows
/// the density (see [`max_exceptions`]), for measuring where the pass stops paying off. The
/// lists are the same whatever the share.
pub fn set_exceptions_share<T: Real>(grid: &mut Grid<T>, share: usize) {
    grid.exceptions_share = Some(share);
}

/// Marks the end of a chain of predecessors in [`longest_ascending`].
const NO_PREDECESSOR: u32 = u32::MAX;

/// Puts into `kept` the points of one chunk of the split (at most [`SPLIT_CHUNK`] points),
/// as indices into `keys`, that form a longest non-decreasing subsequence of its keys; false
/// (`kept` unspecified) when the chunk alone holds more than `max` exceptions. Allocates
/// nothing while `kept` has room for the chunk.
fn longest_ascending(keys: &[u32], max: usize, kept: &mut Vec<u32>) -> bool {
    assert!(
        keys.len() <= SPLIT_CHUNK,
        "a chunk of {} points for the split",
        keys.len()
    );
    // Patience sorting: `tails[l]` is the point that ends the non-decreasing subsequence of
    // length `l + 1` with the smallest last key found so far, `tail_keys[l]` that key, and
    // each point links to the point before it in its subsequence. A point whose key is at
    // least the last tail's (most points, input being nearly in order) extends the longest
    // subsequence without a search. On the stack: a search after warm-up allocates nothing.
    let mut tails = [0u32; SPLIT_CHUNK];
    let mut tail_keys = [0u32; SPLIT_CHUNK];
    let mut predecessors = [NO_PREDECESSOR; SPLIT_CHUNK];
    let mut piles = 0usize;
    for (i, &key) in keys.iter().enumerate() {
        if piles > 0 && key < tail_keys[piles - 1] {
            let pile = tail_keys[..piles].partition_point(|&tail| tail <= key);
            if pile > 0 {
                predecessors[i] = tails[pile - 1];
            }
            tails[pile] = i as u32;
            tail_keys[pile] = key;
            // The points seen so far hold at least this many exceptions, whatever follows.
            if i + 1 - piles > max {
                return false;
            }
        } else {
            if piles > 0 {
                predecessors[i] = tails[piles - 1];
            }
            tails[piles] = i as u32;
            tail_keys[piles] = key;
            piles += 1;
        }
    }
    kept.clear();
    kept.resize(piles, 0);
    let mut point = if piles > 0 {
        tails[piles - 1]
    } else {
        NO_PREDECESSOR
    };
    for slot in kept.iter_mut().rev() {
        debug_assert_ne!(point, NO_PREDECESSOR, "a chain shorter than its length");
        *slot = point;
        point = predecessors[point as usize];
    }
    true
}

/// Joins the kept points of two consecutive chunks so that their keys ascend across the
/// border: keeps the points of `before` with a key of at most `t` and those of `after` with
/// a key of at least `t`, for the `t` of at least `floor` (the last kept key before
/// `before`) that keeps the most. `before` and `after` hold points as indices into `keys`
/// with ascending keys, those of `before` at least `floor`.
fn join_at_border(keys: &[u32], floor: u32, before: &mut Vec<u32>, after: &mut Vec<u32>) {
    let key = |i: &u32| keys[*i as usize];
    let Some(first_after) = after.first().map(key) else {
        return;
    };
    let kept_with = |t: u32| {
        let from_before = before.partition_point(|i| key(i) <= t);
        let from_after = after.len() - after.partition_point(|i| key(i) < t);
        (from_before + from_after, from_before)
    };
    // Below the first key after the border every point after it is kept, so the best `t`
    // there is the largest; above it, only the keys before the border can be better.
    let mut best_t = first_after.max(floor);
    let mut best = kept_with(best_t);
    for t in before.iter().rev().map(key) {
        if t <= first_after {
            break;
        }
        if t >= floor {
            let kept = kept_with(t);
            if kept.0 > best.0 {
                (best_t, best) = (t, kept);
            }
        }
    }
    before.truncate(best.1);
    let set_aside = after.partition_point(|i| key(i) < best_t);
    after.drain(..set_aside);
}

/// Splits the points with bucket `keys` (in the caller's numbering) into kept points, whose
/// keys ascend, and exceptions, whose indices go to `exceptions` (ascending). The kept
/// points are a longest non-decreasing subsequence of the keys in each chunk of
/// [`SPLIT_CHUNK`] points (found in parallel), joined so that the keys ascend across the
/// borders: a point moved far ahead is one exception, never its followers. Returns false,
/// `exceptions` unspecified, when there are more than `max` exceptions. The split does not
/// depend on the number of threads.
pub(super) fn split_exceptions(
    keys: &[u32],
    max: usize,
    kept: &mut Vec<Vec<u32>>,
    exceptions: &mut Vec<u32>,
) -> bool {
    split_exceptions_in_chunks(keys, max, SPLIT_CHUNK, kept, exceptions)
}

/// [`split_exceptions`] with chunks of `chunk` points (at most [`SPLIT_CHUNK`]); `kept`
/// holds each chunk's kept points, reused from call to call.
fn split_exceptions_in_chunks(
    keys: &[u32],
    max: usize,
    chunk: usize,
    kept: &mut Vec<Vec<u32>>,
    exceptions: &mut Vec<u32>,
) -> bool {
    exceptions.clear();
    let chunks = keys.len().div_ceil(chunk);
    if kept.len() < chunks {
        kept.resize_with(chunks, || Vec::with_capacity(chunk));
    }
    let kept = &mut kept[..chunks];
    // The exceptions the chunks done so far hold, each chunk's own count: a lower bound of
    // the final count (the joins at the borders only set more points aside), so once it
    // passes `max` the split fails whatever the chunks left hold, and they are skipped. The
    // answer does not depend on which chunks ran first, so it is the same for any number of
    // threads.
    let found = AtomicUsize::new(0);
    // Adds to `found` without wrapping; returns the sum.
    let add_found = |more: usize| {
        let before = found
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| {
                Some(f.saturating_add(more))
            })
            .unwrap_or_else(|f| f);
        before.saturating_add(more)
    };
    let within_budget = keys
        .par_chunks(chunk)
        .zip(kept.par_iter_mut())
        .enumerate()
        .all(|(c, (chunk_keys, kept))| {
            if found.load(Ordering::Relaxed) > max {
                return false;
            }
            if !longest_ascending(chunk_keys, max, kept) {
                add_found(max.saturating_add(1));
                return false;
            }
            let set_aside = chunk_keys.len() - kept.len();
            if add_found(set_aside) > max {
                return false;
            }
            for i in kept.iter_mut() {
                *i += (c * chunk) as u32;
            }
            true
        });
    if !within_budget {
        return false;
    }
    let mut floor = 0u32;
    for c in 1..kept.len() {
        let (done, rest) = kept.split_at_mut(c);
        join_at_border(keys, floor, &mut done[c - 1], &mut rest[0]);
        if let Some(&last) = done[c - 1].last() {
            floor = keys[last as usize];
        }
    }
    let kept_count: usize = kept.iter().map(Vec::len).sum();
    if keys.len() - kept_count > max {
        return false;
    }
    exceptions.resize(keys.len() - kept_count, 0);
    complement(kept, 0, chunk, keys.len(), exceptions);
    true
}

/// Chunks of the split whose complement one task writes (see [`complement`]).
const COMPLEMENT_CHUNKS: usize = 16;

/// Writes into `out`, ascending, the points of the split's chunks `first..first +
/// kept.len()` (chunk `c` holds the points from `c * chunk` up to the next chunk, or to
/// `n`) that are not among their kept points `kept` (each ascending): exactly `out.len()`
/// points. The halves go in parallel, each into its part of `out`.
fn complement(kept: &[Vec<u32>], first: usize, chunk: usize, n: usize, out: &mut [u32]) {
    let chunk_len = |c: usize| chunk.min(n - c * chunk);
    if kept.len() > COMPLEMENT_CHUNKS {
        let half = kept.len() / 2;
        let set_aside: usize = (0..half)
            .map(|c| chunk_len(first + c) - kept[c].len())
            .sum();
        let (low, high) = out.split_at_mut(set_aside);
        rayon::join(
            || complement(&kept[..half], first, chunk, n, low),
            || complement(&kept[half..], first + half, chunk, n, high),
        );
        return;
    }
    let mut written = 0;
    for (c, kept) in kept.iter().enumerate() {
        let start = (first + c) * chunk;
        let mut next = start as u32;
        let end = (start + chunk_len(first + c)) as u32;
        for &i in kept.iter().chain([end].iter()) {
            for e in next..i {
                out[written] = e;
                written += 1;
            }
            next = i + 1;
        }
    }
    debug_assert_eq!(written, out.len(), "the complement of the kept points");
}

impl<T: Real> Grid<T> {
    /// Tells whether the caller's numbering is cell order but for few enough exceptions for
    /// the pass of this module (see [`max_exceptions`]).
    pub(super) fn few_exceptions(&self) -> bool {
        let n = self.len();
        self.exceptions_share != Some(0)
            && split_exceptions(
                &self.keys[..n],
                self.max_exceptions(),
                &mut Vec::new(),
                &mut Vec::new(),
            )
    }

    /// The most exceptions the pass takes in the grid's set (see [`max_exceptions`]).
    fn max_exceptions(&self) -> usize {
        let n = self.len();
        match self.exceptions_share {
            Some(share) => n.checked_div(share).unwrap_or(0),
            None => (n as f64 / exceptions_share_for(self.bucket_occupancy())) as usize,
        }
    }

    /// See [`bucket_occupancy`]: each point adds its bucket's count, in parallel chunks.
    fn bucket_occupancy(&self) -> f64 {
        let n = self.len();
        if n == 0 {
            return 0.0;
        }
        let starts = &self.starts;
        let sum: u64 = self.keys[..n]
            .par_chunks(SPLIT_CHUNK)
            .map(|keys| {
                keys.iter()
                    .map(|&key| u64::from(starts[key as usize + 1] - starts[key as usize]))
                    .sum::<u64>()
            })
            .sum();
        sum as f64 / n as f64
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
        if self.exceptions_share == Some(0)
            || !split_exceptions(
                &self.keys[..n],
                self.max_exceptions(),
                &mut scratch.kept,
                &mut scratch.exceptions,
            )
        {
            return None;
        }
        self.view_keys(&scratch.kept, &mut scratch.carried, &mut view.keys);
        let view_keys = &view.keys[..n];
        ascending_starts(n, |i| view_keys[i], table.buckets(), &mut view.starts);
        self.shape_view(view);
        let exceptions = &scratch.exceptions;

        // The points in the caller's numbering, the exceptions among them (where a kept
        // point's neighbourhood covers an exception's place, it finds it like any point).
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
        let is_exception = &mut scratch.is_exception;
        is_exception.clear();
        is_exception.resize(n.div_ceil(64), 0);
        for &e in exceptions {
            is_exception[e as usize / 64] |= 1 << (e % 64);
        }
        // The identity, padded like a built order; a view of as many points has it already.
        if view.order.len() != n + LANES {
            view.order.clear();
            view.order.resize(n + LANES, 0);
            fill_identity(&mut view.order[..n]);
        }
        cut_units(&view.starts, n, UNIT_POINTS, &mut view.units);

        self.search_exceptions::<K>(table, scratch);
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

    /// Writes into `view_keys` the bucket of each point in the view, in the caller's
    /// numbering: a kept point's own key, an exception's that of the kept point before it
    /// (bucket 0 before the first), so that the keys ascend and bucket `b` starts at the
    /// first kept point with a key of at least `b` (bucket 0 at 0: exceptions before the
    /// first kept point lie in a bucket too). `kept` holds the split's kept points per
    /// chunk; the chunks are filled in parallel, each from the key carried into it (in
    /// `carried`).
    fn view_keys(&self, kept: &[Vec<u32>], carried: &mut Vec<u32>, view_keys: &mut Vec<u32>) {
        let n = self.len();
        let kept = &kept[..n.div_ceil(SPLIT_CHUNK)];
        let keys = &self.keys[..n];
        carried.clear();
        let mut carry = 0;
        for chunk in kept {
            carried.push(carry);
            if let Some(&last) = chunk.last() {
                carry = keys[last as usize];
            }
        }
        view_keys.resize(n, 0);
        view_keys[..n]
            .par_chunks_mut(SPLIT_CHUNK)
            .zip(kept.par_iter().zip(carried.par_iter()))
            .enumerate()
            .for_each(|(c, (out, (kept, &carry)))| {
                let first = c * SPLIT_CHUNK;
                let mut key = carry;
                let mut next = kept.iter().map(|&i| i as usize - first).peekable();
                for (k, out) in out.iter_mut().enumerate() {
                    if next.next_if_eq(&k).is_some() {
                        key = keys[first + k];
                    }
                    *out = key;
                }
                debug_assert!(next.peek().is_none(), "a kept point outside its chunk");
            });
    }

    /// Searches the neighbours of each exception of `scratch` (around its true bucket): its
    /// kept neighbours on the view with the SIMD kernel (the view holds the kept points in
    /// the caller's numbering, bucket by bucket, so they come out ascending), its neighbours
    /// among the exceptions in a grid of the exceptions alone. Its list, ascending, goes
    /// into `scratch.lists`, and for each kept neighbour a hit into `scratch.hits`, which
    /// end sorted.
    fn search_exceptions<K: MaskKernel>(&self, table: &CellTable, scratch: &mut Scratch<T>) {
        // The exceptions counting-sorted by bucket: bucket `b` starts at the first exception
        // with a key of at least `b`.
        let by_key = &mut scratch.by_key;
        by_key.clear();
        by_key.extend(
            scratch
                .exceptions
                .iter()
                .enumerate()
                .map(|(rank, &e)| u64::from(self.keys[e as usize]) << 32 | rank as u64),
        );
        by_key.par_sort_unstable();
        let by_key = &scratch.by_key[..];
        ascending_starts(
            by_key.len(),
            |q| (by_key[q] >> 32) as u32,
            table.buckets(),
            &mut scratch.exception_starts,
        );

        let chunks = scratch.exceptions.len().div_ceil(EXCEPTION_CHUNK);
        if scratch.chunks.len() < chunks {
            scratch.chunks.resize_with(chunks, ChunkLists::default);
        }
        let view = scratch.view.as_deref().expect("the view was made before");
        let build = view.run_time_build::<K>();
        let (exceptions, points) = (&scratch.exceptions[..], &scratch.points[..]);
        let (by_key, exception_starts) = (&scratch.by_key[..], &scratch.exception_starts[..]);
        let is_exception = &scratch.is_exception[..];
        let keys = &self.keys[..];
        scratch.chunks[..chunks]
            .par_iter_mut()
            .enumerate()
            .for_each(|(c, found)| {
                let first_rank = c * EXCEPTION_CHUNK;
                let task = ExceptionSearch {
                    table,
                    keys,
                    ranks: first_rank..(first_rank + EXCEPTION_CHUNK).min(exceptions.len()),
                    exceptions,
                    points,
                    by_key,
                    exception_starts,
                    is_exception,
                };
                view.run_task::<K, _>(&task, found, false, build);
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
        sort_hits(&mut scratch.hits, &mut scratch.hits_scratch, self.len());
    }
}

/// Whether bit `i` of `bits` is set.
#[inline(always)]
fn is_set(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] >> (i % 64) & 1 == 1
}

/// Bits of the kept point's index per pass of [`sort_hits`].
const HIT_DIGIT_BITS: u32 = 11;

/// Sorts `hits` (`kept << 32 | exception`, the kept points below `n`, the hits of each kept
/// point in ascending exceptions) by kept point, keeping each point's hits in their order:
/// a radix sort by digits of [`HIT_DIGIT_BITS`] of the kept point, through `scratch`. Two
/// passes up to 4M points; a comparison sort of the hits cost ~5,700 instructions per
/// exception (42 per point on a step's move of uniform points).
fn sort_hits(hits: &mut Vec<u64>, scratch: &mut Vec<u64>, n: usize) {
    let bits = usize::BITS - n.saturating_sub(1).leading_zeros();
    let mut shift = 32;
    scratch.clear();
    scratch.resize(hits.len(), 0);
    let mut counts = [0usize; 1 << HIT_DIGIT_BITS];
    while shift < 32 + bits {
        let digit = |hit: u64| (hit >> shift) as usize & ((1 << HIT_DIGIT_BITS) - 1);
        counts.fill(0);
        for &hit in hits.iter() {
            counts[digit(hit)] += 1;
        }
        let mut start = 0;
        for count in &mut counts {
            (*count, start) = (start, start + *count);
        }
        for &hit in hits.iter() {
            let slot = &mut counts[digit(hit)];
            scratch[*slot] = hit;
            *slot += 1;
        }
        std::mem::swap(hits, scratch);
        shift += HIT_DIGIT_BITS;
    }
    debug_assert!(hits.is_sorted(), "hits out of order after their sort");
}

/// One task of the exceptions' search: the exceptions of ranks `ranks`, searched on the
/// view (see [`Grid::search_exceptions`]).
struct ExceptionSearch<'a, T> {
    table: &'a CellTable,
    /// The bucket of each point, in the caller's numbering (the grid's keys).
    keys: &'a [u32],
    ranks: std::ops::Range<usize>,
    /// Every exception's caller index, ascending, and its coordinates.
    exceptions: &'a [u32],
    points: &'a [[T; 3]],
    /// The grid of the exceptions alone (see [`Scratch::by_key`]).
    by_key: &'a [u64],
    exception_starts: &'a [u32],
    /// One bit per point: set for an exception.
    is_exception: &'a [u64],
}

impl<T: Real> KernelTask<T> for ExceptionSearch<'_, T> {
    type Buffer = ChunkLists;

    #[inline(always)]
    fn run<K: MaskKernel>(&self, view: &Grid<T>, found: &mut ChunkLists, _with_distances: bool) {
        found.entries.clear();
        found.lens.clear();
        found.hits.clear();
        let n = view.len();
        let columns = view.sorted.padded();
        for rank in self.ranks.clone() {
            let (e, point) = (self.exceptions[rank], self.points[rank]);
            let coords = self.table.bucket_coords(self.keys[e as usize]);
            let ranges = full_neighbourhood(&view.starts, self.table, coords);
            let row = ranges.candidates() + ROW_SLACK;
            if found.row.len() < row {
                found.row.resize(row, 0);
            }
            debug_assert!(ranges.as_slice().iter().all(|&(_, end)| end as usize <= n));
            debug_assert!(view.order.len() >= n + crate::real::LANES);
            // SAFETY: the ranges come from the view's bucket starts (at most its point
            // count), its columns are padded `PointColumns`, its order (the identity) is
            // padded by LANES past the point count, no position is skipped (where the ranges
            // hold the exception's own place it finds itself, dropped below with the other
            // exceptions), the row holds every candidate plus ROW_SLACK, and a kernel sets
            // AVX512 only where the CPU has it.
            let len = unsafe {
                gather_point::<T, K, true>(
                    columns,
                    &view.order,
                    point,
                    view.r2,
                    ranges.as_slice(),
                    usize::MAX,
                    u32::MAX,
                    &mut found.row[..row],
                )
            };
            // The exceptions the view holds in these ranges (the exception itself among
            // them) are dropped: they come below, from their own grid.
            let mut len_kept = 0;
            for q in 0..len {
                let j = found.row[q];
                found.row[len_kept] = j;
                len_kept += usize::from(!is_set(self.is_exception, j));
            }
            let kept = &mut found.row[..len_kept];
            // A row that wraps around the table comes in two ranges out of order.
            if !ranges.ascending() {
                kept.sort_unstable();
            }
            // Where the exception lies in the view: in the bucket of the kept point before it
            // (bucket 0 before the first), whose range holds its place. A kept point whose
            // neighbourhood holds that bucket finds the exception in the units' gather (its
            // neighbourhood is the whole of every bucket around its own): exactly the kept
            // points in the ranges of that bucket's neighbourhood. The others get it merged
            // into their lists (a hit). Both the list and the ranges ascend: one walk.
            let mut before = rank;
            while before > 0 && self.exceptions[before - 1] + (rank - before + 1) as u32 == e {
                before -= 1;
            }
            let run_start = e as usize - (rank - before);
            let placed = match run_start.checked_sub(1) {
                Some(i) => self.table.bucket_coords(self.keys[i]),
                None => [0; 3],
            };
            let covering = full_neighbourhood(&view.starts, self.table, placed).sorted();
            let mut covering = covering.as_slice().iter().peekable();
            for &j in kept.iter() {
                while covering.next_if(|&&(_, end)| end <= j).is_some() {}
                if covering.peek().is_none_or(|&&(start, _)| start > j) {
                    found.hits.push(u64::from(j) << 32 | u64::from(e));
                }
            }
            let from = found.entries.len();
            found.entries.extend_from_slice(kept);
            // The exceptions among its neighbours, each inserted in its place (few: an
            // exception has about as many exceptions around it as a point has).
            let near = full_neighbourhood(self.exception_starts, self.table, coords);
            for &(start, end) in near.as_slice() {
                for &key_rank in &self.by_key[start as usize..end as usize] {
                    let other = key_rank as u32 as usize;
                    // The formula of the kernels (`Real::within_mask_scalar`), the same in
                    // both directions.
                    if other != rank && T::distance_squared(point, self.points[other]) <= view.r2 {
                        let j = self.exceptions[other];
                        let list = &mut found.entries[from..];
                        let at = list.partition_point(|&i| i < j);
                        found.entries.push(j);
                        found.entries[from + at..].rotate_right(1);
                    }
                }
            }
            found.lens.push(found.entries.len() - from);
        }
    }
}

impl<T: Real> UnitBuffer<T> {
    /// Completes the lists of a unit gathered on a view with exceptions, lists
    /// `first..first + lens.len()` in order: the exceptions `exceptions` of the unit (their
    /// lists empty) get their lists, `lists[offsets[k]..offsets[k + 1]]` for the `k`-th, and
    /// each kept point its `hits` (`kept << 32 | exception`, ascending, only the unit's
    /// kept points) that its list lacks, merged into it. In place, from the back, one move per
    /// insertion: the entries from an insertion's place up to the previous one move up by
    /// what is still to insert before them, and the lists before the first that changes
    /// stay where they are.
    fn splice_exceptions(
        &mut self,
        first: usize,
        exceptions: &[u32],
        offsets: &[usize],
        lists: &[u32],
        hits: &[u64],
    ) {
        debug_assert_eq!(offsets.len(), exceptions.len() + 1);
        // The hits whose kept point did not find the exception itself (a wider run of sparse
        // buckets searches more than the neighbourhood of each): with the lists' ends found
        // from the back, each looked up in its list.
        let mut missing = std::mem::take(&mut self.missing_hits);
        missing.clear();
        let (mut k, mut read) = (self.lens.len(), self.filled);
        for &hit in hits.iter().rev() {
            let slot = (hit >> 32) as usize - first;
            while k > slot + 1 {
                k -= 1;
                read -= self.lens[k] as usize;
            }
            let list = &self.entries[read - self.lens[slot] as usize..read];
            if list.binary_search(&(hit as u32)).is_err() {
                missing.push(hit);
            }
        }
        missing.reverse();
        self.splice_missing(first, exceptions, offsets, lists, &missing);
        self.missing_hits = missing;
    }

    /// [`UnitBuffer::splice_exceptions`] once the hits already in their lists are dropped.
    fn splice_missing(
        &mut self,
        first: usize,
        exceptions: &[u32],
        offsets: &[usize],
        lists: &[u32],
        hits: &[u64],
    ) {
        let extra = hits.len() + (offsets[exceptions.len()] - offsets[0]);
        if extra == 0 {
            return;
        }
        let filled = self.filled;
        if !self.reserve_entries(filled + extra, false) {
            return;
        }
        let entries = &mut self.entries;
        // Entries `read..end` (where they were gathered) are still to move up by `shift`;
        // lists `k..` are done.
        let (mut shift, mut read, mut end) = (extra, filled, filled);
        let (mut hits_left, mut exceptions_left) = (hits.len(), exceptions.len());
        let mut k = self.lens.len();
        while shift > 0 {
            // The last list still to change: the last exception's or the last hit's. The
            // lists after it keep their entries, which move with the next insertion.
            let next_exception = exceptions_left
                .checked_sub(1)
                .map(|left| exceptions[left] as usize);
            let next_hit = hits_left
                .checked_sub(1)
                .map(|left| (hits[left] >> 32) as usize);
            let slot = next_exception
                .max(next_hit)
                .expect("entries left to insert");
            debug_assert!(
                first <= slot && slot < first + k,
                "a unit's lists out of order"
            );
            let changed = slot - first;
            read -= self.lens[changed + 1..k]
                .iter()
                .map(|&len| len as usize)
                .sum::<usize>();
            k = changed;
            debug_assert_eq!(self.slots[k] as usize, slot, "a unit's lists out of order");
            let len = self.lens[k] as usize;
            let start = read - len;
            if next_exception == Some(slot) {
                exceptions_left -= 1;
                debug_assert_eq!(len, 0, "an exception found neighbours in the view");
                let list = &lists[offsets[exceptions_left]..offsets[exceptions_left + 1]];
                entries.copy_within(read..end, read + shift);
                shift -= list.len();
                entries[read + shift..read + shift + list.len()].copy_from_slice(list);
                end = read;
                self.lens[k] = list.len() as u32;
            } else {
                let last = hits_left;
                while hits_left > 0 && (hits[hits_left - 1] >> 32) as usize == slot {
                    hits_left -= 1;
                }
                // Each hit, from the last, after the list's entries below it.
                let mut below = read;
                for &hit in hits[hits_left..last].iter().rev() {
                    let hit = hit as u32;
                    let at = start + entries[start..below].partition_point(|&i| i < hit);
                    entries.copy_within(at..end, at + shift);
                    shift -= 1;
                    entries[at + shift] = hit;
                    (below, end) = (at, at);
                }
                self.lens[k] = (len + last - hits_left) as u32;
            }
            read = start;
        }
        debug_assert_eq!(shift, 0, "the merged lists do not meet the unmoved ones");
        self.filled = filled + extra;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exceptions of `keys` as the split finds them with chunks of `chunk` points, after
    /// checking that the kept keys ascend.
    fn split(keys: &[u32], chunk: usize) -> Vec<u32> {
        let mut exceptions = Vec::new();
        assert!(split_exceptions_in_chunks(
            keys,
            keys.len(),
            chunk,
            &mut Vec::new(),
            &mut exceptions
        ));
        let kept: Vec<u32> = (0..keys.len() as u32)
            .filter(|i| exceptions.binary_search(i).is_err())
            .map(|i| keys[i as usize])
            .collect();
        assert!(kept.is_sorted(), "keys {keys:?}: kept keys {kept:?}");
        exceptions
    }

    /// The length of a longest non-decreasing subsequence of `keys`, by the quadratic
    /// recurrence.
    fn longest_by_brute_force(keys: &[u32]) -> usize {
        let mut ending_at = vec![1usize; keys.len()];
        for i in 0..keys.len() {
            for j in 0..i {
                if keys[j] <= keys[i] {
                    ending_at[i] = ending_at[i].max(ending_at[j] + 1);
                }
            }
        }
        ending_at.into_iter().max().unwrap_or(0)
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
            assert_eq!(split(&keys, keys.len()), expected, "keys {keys:?}");
        }
        // Past the budget, the split stops, in one chunk or several.
        for chunk in [1, 2, 4] {
            assert!(!split_exceptions_in_chunks(
                &[3, 2, 1, 0],
                1,
                chunk,
                &mut Vec::new(),
                &mut Vec::new()
            ));
            assert!(split_exceptions_in_chunks(
                &[0, 2, 1, 3],
                1,
                chunk,
                &mut Vec::new(),
                &mut Vec::new()
            ));
        }
        // Every chunk under the budget, their sum over it: the count the chunks share stops
        // the split, and only then.
        let swapped_pairs = [1, 0, 3, 2, 5, 4, 7, 6];
        // The chunks' buffers serve every call, whatever their chunks.
        let mut kept = Vec::new();
        for chunk in [2, 4, 1, 8] {
            assert!(!split_exceptions_in_chunks(
                &swapped_pairs,
                3,
                chunk,
                &mut Vec::new(),
                &mut Vec::new()
            ));
            let mut exceptions = Vec::new();
            assert!(split_exceptions_in_chunks(
                &swapped_pairs,
                4,
                chunk,
                &mut kept,
                &mut exceptions
            ));
            assert_eq!(exceptions.len(), 4);
        }
    }

    #[test]
    fn the_share_follows_the_occupancy_between_its_bounds() {
        // Through the two measured crossovers (both beyond the bounds, so clamped), never
        // rising with the occupancy.
        assert_eq!(exceptions_share_for(OCCUPANCY_SPARSE), EXCEPTIONS_SHARE_MIN);
        assert_eq!(exceptions_share_for(OCCUPANCY_DENSE), EXCEPTIONS_SHARE_MAX);
        let power =
            (CROSSOVER_SPARSE / CROSSOVER_DENSE).ln() / (OCCUPANCY_DENSE / OCCUPANCY_SPARSE).ln();
        for occupancy in [12.0, 15.0, 20.0, 25.0] {
            let model = CROSSOVER_SPARSE * (OCCUPANCY_SPARSE / occupancy).powf(power);
            assert!((exceptions_share_for(occupancy) - model).abs() < 1e-9);
        }
        assert!((exceptions_share_for(20.0) - 10.8).abs() < 0.05);
        for occupancy in [0.0, 1.0, 5.0] {
            assert_eq!(exceptions_share_for(occupancy), EXCEPTIONS_SHARE_MIN);
        }
        assert_eq!(exceptions_share_for(1e9), EXCEPTIONS_SHARE_MAX);
        let mut last = f64::INFINITY;
        for occupancy in (0..2000).map(|k| f64::from(k) * 0.25) {
            let share = exceptions_share_for(occupancy);
            assert!(share <= last, "{share} at {occupancy} after {last}");
            last = share;
        }
    }

    #[test]
    fn points_moved_far_ahead_together_do_not_cascade() {
        // Two consecutive points moved ahead by a slab: the rule that looked one point ahead
        // kept both and set aside every point up to their cell (here 8 of them).
        let keys = [0, 0, 1, 1, 9, 9, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 9, 9];
        for (chunk, expected) in [
            (keys.len(), &[4, 5][..]),
            (4, &[4, 5]),
            (3, &[4, 5]),
            (2, &[4, 5]),
            // The first chunk, alone, keeps the two points and sets aside the one after them
            // (`0 0 1 1 9 9 | 2`); its border then gives up the two, not the one.
            (7, &[4, 5, 6]),
        ] {
            assert_eq!(split(&keys, chunk), expected, "chunks of {chunk}");
        }
        // The same at a chunk's end: the border gives them up, not the next chunk.
        let keys = [0, 1, 2, 8, 8, 3, 4, 5, 6, 7, 8];
        assert_eq!(split(&keys, 5), [3, 4]);
    }

    #[test]
    fn one_chunk_keeps_a_longest_subsequence_and_chunks_nearly_so() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |below: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % below
        };
        for case in 0..300 {
            let n = 1 + next(120) as usize;
            // Ascending keys with some moved by a little or a lot.
            let mut keys: Vec<u32> = (0..n as u32).map(|i| i / 3).collect();
            for _ in 0..next(1 + n as u64 / 4) {
                let i = next(n as u64) as usize;
                keys[i] = if case % 2 == 0 {
                    next(n as u64 / 3 + 1) as u32
                } else {
                    (keys[i] + next(4) as u32).saturating_sub(2)
                };
            }
            let longest = longest_by_brute_force(&keys);
            assert_eq!(n - split(&keys, n).len(), longest, "keys {keys:?}");
            for chunk in [1, 2, 5, 16] {
                let kept = n - split(&keys, chunk).len();
                assert!(kept <= longest, "keys {keys:?}, chunks of {chunk}");
                // Keys moved by a little: the borders lose at most one point each.
                if case % 2 == 1 {
                    let borders = n.div_ceil(chunk) - 1;
                    assert!(
                        kept + borders >= longest,
                        "keys {keys:?}, chunks of {chunk}: {kept} kept of {longest}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_complement_of_the_kept_points_is_every_other_point_ascending() {
        let mut state = 0x5851_f42d_4c95_7f2du64;
        let mut next = |below: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % below
        };
        // Up to 200 chunks (split between tasks past COMPLEMENT_CHUNKS), a short last chunk,
        // chunks with nothing kept and chunks with everything kept.
        for case in 0..200 {
            let chunk = 1 + next(9) as usize;
            let n = 1 + next(200 * chunk as u64) as usize;
            let kept: Vec<Vec<u32>> = (0..n.div_ceil(chunk))
                .map(|c| {
                    let points = (c * chunk) as u32..((c + 1) * chunk).min(n) as u32;
                    match case % 3 {
                        0 => points.filter(|_| next(4) != 0).collect(),
                        1 => points.filter(|_| next(2) == 0).collect(),
                        _ if c % 5 == 0 => Vec::new(),
                        _ => points.collect(),
                    }
                })
                .collect();
            let want: Vec<u32> = (0..n as u32)
                .filter(|&i| !kept[i as usize / chunk].contains(&i))
                .collect();
            let mut out = vec![u32::MAX; want.len()];
            complement(&kept, 0, chunk, n, &mut out);
            assert_eq!(out, want, "{n} points in chunks of {chunk}");
        }
    }

    #[test]
    fn hits_sort_by_kept_point_and_keep_their_order() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        // Point counts with one, two and three digits of the kept point's index.
        for n in [1usize, 2, 5, 2048, 2049, 100_000, 5_000_000] {
            for count in [0usize, 1, 7, 3000] {
                // Hits in ascending exceptions, as the search produces them.
                let mut hits: Vec<u64> = (0..count as u64)
                    .map(|e| next(n as u64) << 32 | e)
                    .collect();
                let mut expected = hits.clone();
                expected.sort_unstable();
                sort_hits(&mut hits, &mut Vec::new(), n);
                assert_eq!(hits, expected, "{count} hits of {n} points");
            }
        }
    }

    #[test]
    fn splice_puts_exception_lists_in_place_and_merges_hits() {
        let mut buffer = UnitBuffer::<f32>::default();
        // Lists 10..14 of a unit: 11 is an exception, 10 and 13 gain hits, 12 holds its hit
        // already (its neighbourhood covered the exception's place).
        buffer.start(4, usize::MAX);
        let gathered: [&[u32]; 4] = [&[12, 20], &[], &[10, 13], &[2, 9]];
        for (k, list) in gathered.iter().enumerate() {
            let at = buffer.filled;
            assert!(buffer.reserve_entries(at + list.len(), false));
            buffer.entries[at..at + list.len()].copy_from_slice(list);
            buffer.push_list(10 + k, list.len());
        }
        let lists = [99, 10, 13, 15];
        let hits = [
            10u64 << 32 | 11,
            10 << 32 | 30,
            12 << 32 | 13,
            13 << 32 | 1,
            13 << 32 | 11,
        ];
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
