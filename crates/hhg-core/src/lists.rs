//! Per-point neighbour lists in CSR form: a set against itself, query points against a set,
//! and one set against another; both directions, the caller's numbering, each list ascending.
//!
//! One pass gathers every list: work parts (bucket ranges of the set itself, or chunks of
//! query points) run in parallel, each compressing the hits of batches of points that share
//! a neighbourhood into its own buffer, mapped to the caller's numbering and sorted while
//! they are hot in cache. The per-list counts then give the offsets, and each part copies its
//! lists to their final place.

mod in_order;
mod near_order;

use rayon::prelude::*;
use wide::u32x8;

use crate::error::Error;
use crate::geometry::{CellTable, Kernel, Points, first_non_finite};
use crate::grid::{Grid, Ranges, run_neighbourhood};
use crate::kernel::{
    Avx2Kernel, Avx512Kernel, BATCH, GATHER_GROUP, MaskKernel, PackRequest, PackedCandidates,
    ROW_SLACK, ScalarKernel, SimdKernel, bounding_box, for_each_hit, gather_many, gather_point,
    pack_within_box, range_holding, scan_batch,
};
use crate::parallel::{DisjointSlice, exclusive_scan, keep_larger, prefetch, reserve_with_slack};
use crate::real::{LANES, Real};
use crate::simd::{Build, avx2_build, avx512_build};
use crate::smallsort::{NETWORK_MAX, sort_padded};
use in_order::UnitsInSequence;

/// How many lists ahead the copy of lists into place asks the cache for their places.
const SCATTER_AHEAD: usize = 8;

/// Query points per work part.
const QUERY_CHUNK: usize = 1024;

/// How the searchers of a cross search map to lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SearcherOrder {
    /// Searcher `k` is list `k`: each chunk's lists are consecutive.
    ListOrder,
    /// Searchers map to lists in any order.
    Any,
}

/// The order of the entries of each neighbour list (see [`Grid::set_list_order`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ListOrder {
    /// Each list ascends in the caller's numbering (the default).
    #[default]
    Ascending,
    /// Each list follows the grid's cell order: its entries ascend by their position in
    /// [`Grid::order`] (the sorted position of each point). This is the order the search
    /// finds them in, so no list is sorted; it is deterministic (the same for any thread
    /// count, kernel and run-time build) and, for input in cell order, ascending. SPH sums
    /// over a list do not depend on its order but for rounding; CompactNSearch and
    /// TreeNSearch promise no order at all.
    CellOrder,
}

/// Which list pass [`Grid::neighbor_lists`] takes on the grid as built (see
/// [`Grid::list_pass`]); every pass gives the same lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListPass {
    /// The points came in cell order (`order()` is the identity): no list needs sorting
    /// and each work unit's lists go into place while hot.
    InCellOrder,
    /// The caller's numbering keeps the points of a cell mostly together (cell order after
    /// some motion, Morton or Hilbert order): work units are ranges of the caller's
    /// numbering, whose lists go into place while hot.
    NearCellOrder,
    /// Any other order (random): work units of cells, lists copied into place at the end.
    General,
    /// The grid is empty.
    Empty,
}

/// Neighbour lists in compressed sparse row form.
///
/// The neighbours of list `i` are `indices()[offsets()[i]..offsets()[i + 1]]`, numbered as
/// the caller numbered the searched set, in ascending order (or in the searched grid's cell
/// order, see [`ListOrder`]); with distances requested,
/// `distances_squared()` holds the squared distance of each entry at the same position.
/// Reuse one value across time steps: its buffers only grow.
#[derive(Clone, Debug, Default)]
pub struct NeighborLists<T: Real> {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    distances: Vec<T>,
    has_distances: bool,
    parts: Vec<PartBuffer<T>>,
    scan: Vec<usize>,
    /// Bucket starts of the counting sort that turns pairs into lists.
    scan_starts: Vec<u32>,
    /// Scratch of the pass for input in cell order.
    in_order: in_order::Scratch<T>,
    /// The sorted position of each caller index (pass for input nearly in cell order).
    inverse: Vec<u32>,
}

/// The lists one work part gathered, in the order it visited its searching points.
#[derive(Clone, Debug, Default)]
struct PartBuffer<T> {
    /// Entries of all lists, back to back; only `..filled` is meaningful, the rest is
    /// scratch kept for the next batch and the next search.
    entries: Vec<u32>,
    /// Squared distances alongside `entries`, when requested.
    distances: Vec<T>,
    filled: usize,
    /// Output list of each gathered list.
    slots: Vec<u32>,
    /// Length of each gathered list.
    lens: Vec<u32>,
    /// Scratch of the merge sort for lists longer than one sorting network.
    merge: Vec<u32>,
    /// Scratch of the sort of lists with distances: packed (index, position) keys and the
    /// distances in their new order.
    sort_keys: Vec<u64>,
    sort_distances: Vec<T>,
    /// The candidates packed for the current batch.
    packed: PackedCandidates<T>,
    /// Lists checked in a row that did not ascend (see [`PartBuffer::sort_gathered`]).
    unsorted_streak: u32,
    /// The runs of consecutive sorted positions of a unit of the pass for input nearly in
    /// cell order (see `near_order`).
    runs: Vec<(u32, u32)>,
    /// Where each list of such a unit starts among the unit's lists in list order.
    list_starts: Vec<u32>,
    /// Where such a unit's lists are moved into list order; then swapped with `entries`,
    /// so that it holds the lists as gathered.
    reordered: Vec<u32>,
    /// The distances alongside `reordered`.
    reordered_distances: Vec<T>,
}

impl<T: Real> PartBuffer<T> {
    /// Keeps, field by field, the larger allocation of `self` and `other`.
    fn absorb(&mut self, other: Self) {
        keep_larger(&mut self.entries, other.entries);
        keep_larger(&mut self.distances, other.distances);
        keep_larger(&mut self.slots, other.slots);
        keep_larger(&mut self.lens, other.lens);
        keep_larger(&mut self.merge, other.merge);
        keep_larger(&mut self.sort_keys, other.sort_keys);
        keep_larger(&mut self.sort_distances, other.sort_distances);
        keep_larger(&mut self.runs, other.runs);
        keep_larger(&mut self.list_starts, other.list_starts);
        keep_larger(&mut self.reordered, other.reordered);
        keep_larger(&mut self.reordered_distances, other.reordered_distances);
        self.packed.absorb(other.packed);
    }

    /// Frees the scratch that only a buffer kept for the next pass needs: a spare buffer
    /// of a growing output waits with its lists and should hold nothing else.
    fn release_scratch(&mut self) {
        self.reordered = Vec::new();
        self.reordered_distances = Vec::new();
        self.merge = Vec::new();
        self.sort_keys = Vec::new();
        self.sort_distances = Vec::new();
    }
}

impl<T: Copy + Default> PartBuffer<T> {
    /// Empties the part for `lists` searching points, with room to record them all.
    fn start(&mut self, lists: usize) {
        self.filled = 0;
        self.unsorted_streak = 0;
        self.slots.clear();
        self.lens.clear();
        reserve_with_slack(&mut self.slots, lists);
        reserve_with_slack(&mut self.lens, lists);
    }

    /// Makes `entries[..len]` (and the distances, when requested) addressable, growing the
    /// buffers only past their high-water mark.
    fn reserve_entries(&mut self, len: usize, with_distances: bool) {
        if self.entries.len() < len {
            self.entries.resize(len, 0);
        }
        if with_distances && self.distances.len() < len {
            self.distances.resize(len, T::default());
        }
    }

    /// Sorts the `len` entries gathered at `entries[from..]` (in a row of `row`, room for the
    /// sorting network) where the numbering broke their order; `ascending` says they are
    /// known to ascend already.
    ///
    /// A list is checked before it is sorted while lists ascend now and then (input nearly
    /// in cell order, such as a solver's between two reorderings). After [`UNSORTED_STREAK`]
    /// checked lists in a row that did not ascend (input in random order), only every
    /// [`UNSORTED_PROBE`]-th list is checked, and the first that ascends brings the checks
    /// back. The check of a list just gathered cost 6-11 % of the list pass in random order.
    ///
    /// # Safety
    /// With `avx2`, [`avx2_detected`](crate::simd::avx2_detected) holds; with `avx512`,
    /// [`avx512_detected`](crate::simd::avx512_detected) holds.
    #[inline(always)]
    unsafe fn sort_gathered(
        &mut self,
        from: usize,
        len: usize,
        row: usize,
        ascending: bool,
        avx2: bool,
        avx512: bool,
    ) {
        if ascending {
            return;
        }
        let check = self.unsorted_streak < UNSORTED_STREAK
            || self.lens.len().is_multiple_of(UNSORTED_PROBE);
        if check {
            if is_ascending(&self.entries[from..from + len]) {
                self.unsorted_streak = 0;
                return;
            }
            self.unsorted_streak = self.unsorted_streak.saturating_add(1);
        }
        // SAFETY: the caller sets `avx2` and `avx512` only where the CPU has the features.
        unsafe {
            sort_padded(
                &mut self.entries[from..from + row],
                len,
                &mut self.merge,
                avx2,
                avx512,
            )
        };
    }

    /// Records the list of output list `slot`, whose `len` entries end the filled part.
    #[inline(always)]
    fn push_list(&mut self, slot: usize, len: usize) {
        self.slots.push(slot as u32);
        self.lens.push(len as u32);
        self.filled += len;
    }
}

impl<T: Real> NeighborLists<T> {
    /// How many lists there are (one per searching point).
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Tells whether there is no list.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `len() + 1` offsets into [`NeighborLists::indices`].
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// All lists, concatenated.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Squared distances alongside `indices()`, when they were requested.
    pub fn distances_squared(&self) -> Option<&[T]> {
        self.has_distances.then_some(&self.distances[..])
    }

    /// The neighbours of point `i`, ascending (or in cell order, see [`ListOrder`]).
    pub fn neighbors(&self, i: usize) -> &[u32] {
        &self.indices[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The squared distances to the neighbours of point `i`, when they were requested.
    pub fn neighbor_distances_squared(&self, i: usize) -> Option<&[T]> {
        self.has_distances
            .then(|| &self.distances[self.offsets[i]..self.offsets[i + 1]])
    }

    /// The total number of list entries (twice the pair count for a set against itself).
    pub fn total(&self) -> usize {
        self.indices.len()
    }

    /// Replaces the lists by those of `n` points with the unique pairs `pairs` (each
    /// `[i, j]` with `i != j`, both `< n`, no pair twice): both directions, each list
    /// ascending, no distances. For schemes that find pairs and need CSR lists.
    ///
    /// Fails with [`Error::PairIndexOutOfRange`], naming the first pair with an index not
    /// below `n`, and then leaves the lists as they were.
    pub fn assign_from_pairs(&mut self, n: usize, pairs: &[[u32; 2]]) -> Result<(), Error> {
        if let Some(pair) = pairs
            .par_iter()
            .position_first(|&[i, j]| i as usize >= n || j as usize >= n)
        {
            return Err(Error::PairIndexOutOfRange {
                pair,
                indices: pairs[pair],
                count: n,
            });
        }
        let mut keys = Vec::new();
        let mut order = Vec::new();
        let mut scratch = crate::sort::SortScratch::default();
        self.assign_pairs(n, pairs, &mut keys, &mut order, &mut scratch);
        Ok(())
    }

    /// Replaces the lists by those of `n` objects with the unique pairs `pairs`: both
    /// directions, each list ascending, no distances. A parallel counting sort of the
    /// directed pairs by their first object, then a sort of each list. Every index must be
    /// below `n`, as it is for the pairs of a build over `n` objects (the counting sort
    /// panics otherwise).
    pub(crate) fn assign_pairs(
        &mut self,
        n: usize,
        pairs: &[[u32; 2]],
        keys: &mut Vec<u32>,
        order: &mut Vec<u32>,
        scratch: &mut crate::sort::SortScratch,
    ) {
        self.has_distances = false;
        self.distances.clear();
        keys.clear();
        keys.extend(pairs.iter().map(|p| p[0]));
        keys.extend(pairs.iter().map(|p| p[1]));
        let mut starts = std::mem::take(&mut self.scan_starts);
        crate::sort::counting_sort(keys, n, &mut starts, order, scratch);
        let total = keys.len();
        self.indices.clear();
        self.indices.resize(total, 0);
        let half = pairs.len();
        self.indices
            .par_chunks_mut(1 << 14)
            .zip(order.par_chunks(1 << 14))
            .for_each(|(out, order)| {
                for (slot, &k) in out.iter_mut().zip(order) {
                    let k = k as usize;
                    *slot = if k < half {
                        pairs[k][1]
                    } else {
                        pairs[k - half][0]
                    };
                }
            });
        self.offsets.clear();
        self.offsets.extend(starts.iter().map(|&s| s as usize));
        self.for_each_list_mut(|_, list| list.sort_unstable());
        self.scan_starts = starts;
    }

    /// Replaces the lists by `n` lists without distances, list `i` holding `count(i)` entries
    /// that `fill(i, list)` writes (in parallel).
    pub(crate) fn assign_with(
        &mut self,
        n: usize,
        count: impl Fn(usize) -> usize + Sync,
        fill: impl Fn(usize, &mut [u32]) + Sync,
    ) {
        self.has_distances = false;
        self.distances.clear();
        self.offsets.clear();
        self.offsets.resize(n + 1, 0);
        self.offsets[..n]
            .par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .for_each(|(i, slot)| *slot = count(i));
        let total = exclusive_scan(&mut self.offsets[..n], &mut self.scan);
        self.offsets[n] = total;
        // Only growth writes: every entry below `total` is written by `fill`.
        self.indices.resize(total, 0);
        self.indices.truncate(total);
        self.for_each_list_mut(fill);
    }

    /// Calls `edit(i, list)` on every list's indices, in parallel (no distances may be
    /// attached).
    pub(crate) fn for_each_list_mut(&mut self, edit: impl Fn(usize, &mut [u32]) + Sync) {
        debug_assert!(!self.has_distances);
        let lists = self.len();
        debug_assert_eq!(self.offsets.get(lists).copied(), Some(self.indices.len()));
        let shared = DisjointSlice::new(self.indices.as_mut_slice());
        let offsets = &self.offsets;
        (0..lists).into_par_iter().with_min_len(1024).for_each(|i| {
            let (s, e) = (offsets[i], offsets[i + 1]);
            debug_assert!(s <= e);
            // SAFETY: the offsets ascend from 0 to the slice's length, so list `i` owns
            // `s..e` alone and the range is in bounds.
            let list = unsafe { shared.range_mut(s, e - s) };
            edit(i, list);
        });
    }

    /// Makes `lists` empty lists, keeping the buffers.
    fn reset(&mut self, lists: usize, parts: usize, with_distances: bool) {
        self.offsets.clear();
        self.offsets.resize(lists + 1, 0);
        self.has_distances = with_distances;
        if self.parts.len() < parts {
            self.parts.resize_with(parts, PartBuffer::default);
        }
    }

    /// Empties every list (the searched set is empty).
    fn clear_entries(&mut self) {
        self.indices.clear();
        self.distances.clear();
    }

    /// Turns the gathered parts into the CSR arrays: counts to offsets, then each part
    /// copies its lists into place (in parallel).
    fn assemble(&mut self, parts: usize) {
        let lists = self.len();
        let offsets = DisjointSlice::new(&mut self.offsets[..lists]);
        self.parts[..parts].par_iter().for_each(|part| {
            for (k, (&slot, &len)) in part.slots.iter().zip(&part.lens).enumerate() {
                if let Some(&later) = part.slots.get(k + 2 * SCATTER_AHEAD) {
                    offsets.prefetch(later as usize);
                }
                // SAFETY: every output list is gathered by exactly one part, once, and
                // slots are < lists.
                unsafe { offsets.write(slot as usize, len as usize) }
            }
        });
        let total = exclusive_scan(&mut self.offsets[..lists], &mut self.scan);
        self.offsets[lists] = total;
        // Only growth writes: every entry below `total` is overwritten by the copies.
        self.indices.resize(total, 0);
        self.indices.truncate(total);
        if self.has_distances {
            self.distances.resize(total, T::default());
            self.distances.truncate(total);
        } else {
            self.distances.clear();
        }
        let indices = DisjointSlice::new(&mut self.indices);
        let distances = DisjointSlice::new(&mut self.distances);
        let offsets = &self.offsets;
        let with_distances = self.has_distances;
        self.parts[..parts].par_iter().for_each(|part| {
            let (Some(&first), Some(&last)) = (part.slots.first(), part.slots.last()) else {
                return;
            };
            // Lists gathered for consecutive slots (input in cell order) are consecutive in
            // the output too: one bulk copy instead of one per list.
            let span = last.checked_sub(first).map(|d| d as usize + 1);
            if span == Some(part.slots.len()) && part.slots.is_sorted() {
                let to = offsets[first as usize];
                // SAFETY: the slots are distinct, ascending and as many as first..=last holds,
                // so they are exactly first..=last in order: their output range belongs to
                // this part, and its length is the sum of their lengths, `part.filled`.
                let lists = unsafe { indices.range_mut(to, part.filled) };
                lists.copy_from_slice(&part.entries[..part.filled]);
                if with_distances {
                    // SAFETY: as above; the distances share the indices' layout.
                    let dist = unsafe { distances.range_mut(to, part.filled) };
                    dist.copy_from_slice(&part.distances[..part.filled]);
                }
                return;
            }
            let mut from = 0;
            let slots = &part.slots;
            for (k, (&slot, &len)) in slots.iter().zip(&part.lens).enumerate() {
                // Lists land at random places when the input is not in cell order: ask for
                // the offset of a list further on, and for the place of one nearer.
                if let Some(&later) = slots.get(k + 2 * SCATTER_AHEAD) {
                    prefetch(&offsets[later as usize]);
                }
                if let Some(&next) = slots.get(k + SCATTER_AHEAD) {
                    indices.prefetch(offsets[next as usize]);
                }
                let (to, len) = (offsets[slot as usize], len as usize);
                // SAFETY: list `slot` owns `offsets[slot]..offsets[slot + 1]`, which is
                // `len` long, and only this part writes it.
                let list = unsafe { indices.range_mut(to, len) };
                list.copy_from_slice(&part.entries[from..from + len]);
                if with_distances {
                    // SAFETY: as above; the distances share the indices' layout.
                    let dist = unsafe { distances.range_mut(to, len) };
                    dist.copy_from_slice(&part.distances[from..from + len]);
                }
                from += len;
            }
        });
    }
}

/// Searching points that share one neighbourhood, with where their lists go.
struct Batch<T> {
    points: [[T; 3]; BATCH],
    /// Output list of each point.
    slots: [usize; BATCH],
    /// Sorted position of each point in the searched set, or `u32::MAX` (not in it).
    itself: [u32; BATCH],
    len: usize,
}

impl<T: Real> Batch<T> {
    fn new() -> Self {
        Self {
            points: [[T::default(); 3]; BATCH],
            slots: [0; BATCH],
            itself: [u32::MAX; BATCH],
            len: 0,
        }
    }

    #[inline(always)]
    fn push(&mut self, point: [T; 3], slot: usize, itself: u32) {
        self.points[self.len] = point;
        self.slots[self.len] = slot;
        self.itself[self.len] = itself;
        self.len += 1;
    }
}

/// Checked lists in a row that did not ascend, after which a part checks only every
/// [`UNSORTED_PROBE`]-th list before sorting it (see [`PartBuffer::sort_gathered`]).
const UNSORTED_STREAK: u32 = 8;

/// While lists keep failing the check, one list in this many is still checked.
const UNSORTED_PROBE: usize = 8;

/// Batches of at least this many points pack the candidates within reach of their bounding
/// box before the points test them (see [`pack_within_box`]); smaller batches test the
/// ranges directly, since the filter costs about as much as two points' tests.
const PACK_MIN: usize = 4;

/// Sparse buckets search in runs: a bucket with fewer than this many points takes the
/// buckets after it in its row into its batch while the run holds at most this many points
/// (and spans at most [`RUN_WIDTH`] buckets), so that one neighbourhood of 9 wider rows
/// serves them all and their batch is large enough to pack its candidates. On the
/// clustered cloud, where 43 % of the points lie in buckets of at most 4, this took the
/// list pass from 1,220 to 1,140 instructions per point (callgrind, 1M in cell order);
/// uniform points and the dam break stay within 1 %.
const RUN_POINTS: usize = 8;

/// The most buckets in one run (see [`RUN_POINTS`]): 3, 5 and 8 measured 1,160, 1,148 and
/// 1,140 instructions per point on the clustered cloud.
const RUN_WIDTH: u32 = 8;

/// Gathers the lists of a batch into `part`: each point's hits (without the point itself)
/// are compressed straight to the end of the part's lists, mapped to the caller's numbering
/// and sorted where the mapping broke the order; the list of `batch.slots[j]` is recorded
/// as output list `list_of(batch.slots[j])`.
///
/// With [`MaskKernel::PACKS`] and at least [`PACK_MIN`] points, the candidates within reach
/// of the batch's bounding box are packed first, in range order, and the points test only
/// those.
#[inline(always)]
fn gather_batch<T: Real, K: MaskKernel>(
    grid: &Grid<T>,
    ranges: &Ranges,
    batch: &Batch<T>,
    part: &mut PartBuffer<T>,
    with_distances: bool,
    list_of: impl Fn(usize) -> usize,
) {
    // Lists in cell order take the ranges by position: the hits then follow it.
    let cell_order = grid.list_order == ListOrder::CellOrder;
    let ordered;
    let ranges = if cell_order && !ranges.ascending() {
        ordered = ranges.sorted();
        &ordered
    } else {
        ranges
    };
    // Input in cell order numbers every point by its sorted position, so the hits of ranges
    // that ascend and do not overlap come out ascending: no check, no sort.
    let ascending = (grid.in_cell_order && ranges.ascending()) || cell_order;
    let self_range = range_holding(ranges.as_slice(), batch.itself[0]);
    // Two calls of `gather_rows`, each inlined for its own source, on purpose: one call
    // after choosing the source cost 1,146 -> 1,156 instructions per point on uniform
    // points and 1,246 -> 1,272 on the clustered cloud (callgrind, 256k, cell order).
    if !(K::PACKS && batch.len >= PACK_MIN) {
        let source = Candidates {
            columns: grid.sorted.padded(),
            ids: &grid.order[..],
            ranges: ranges.as_slice(),
            self_range,
            itself: batch.itself,
            count: ranges.candidates(),
            ids_are_packed: false,
        };
        gather_rows::<T, K>(
            grid,
            &source,
            batch,
            part,
            with_distances,
            ascending,
            list_of,
        );
        return;
    }
    let mut packed = std::mem::take(&mut part.packed);
    let (lo, hi) = bounding_box(&batch.points[..batch.len]);
    // Lists with distances pack sorted positions (to find each hit's coordinates), the
    // others the caller's indices.
    let request = PackRequest {
        columns: grid.sorted.padded(),
        ids: &grid.order[..],
        lo,
        hi,
        r2: grid.r2,
        ranges: ranges.as_slice(),
        self_range,
        first_self: batch.itself[0],
        avx2: K::AVX2,
        avx512: K::AVX512,
    };
    // SAFETY: the ranges come from this grid's bucket starts (below its point count), the
    // columns are its padded columns, `order` is padded by LANES past the point count (see
    // `Grid::build_points`), and `range_holding` found the range that holds the batch's
    // first point.
    let (count, self_at) = unsafe {
        if with_distances {
            pack_within_box::<T, false>(&request, &mut packed)
        } else {
            pack_within_box::<T, true>(&request, &mut packed)
        }
    };
    // The batch's points are consecutive in their bucket and all kept, so they stay
    // consecutive in the packed columns.
    let mut itself = [u32::MAX; BATCH];
    if self_at != u32::MAX {
        debug_assert!(
            (0..batch.len).all(|j| batch.itself[j] == batch.itself[0] + j as u32),
            "the points of a batch are not consecutive"
        );
        for (j, at) in itself[..batch.len].iter_mut().enumerate() {
            *at = self_at + j as u32;
        }
    }
    let whole = [(0, count as u32)];
    let source = Candidates {
        columns: packed.columns(),
        ids: packed.ids(),
        ranges: &whole[..usize::from(count > 0)],
        self_range: if self_at == u32::MAX { usize::MAX } else { 0 },
        itself,
        count,
        ids_are_packed: true,
    };
    gather_rows::<T, K>(
        grid,
        &source,
        batch,
        part,
        with_distances,
        ascending,
        list_of,
    );
    part.packed = packed;
}

/// The candidates a batch tests: the grid's sorted columns over the neighbourhood's ranges,
/// or the candidates packed for the batch (one range).
struct Candidates<'a, T> {
    columns: [&'a [T]; 3],
    /// The caller's index of each candidate (the grid's `order`), or for packed candidates
    /// their identifiers (caller's indices, or sorted positions for lists with distances).
    ids: &'a [u32],
    ranges: &'a [(u32, u32)],
    /// The range that holds the batch's points (`usize::MAX`: none).
    self_range: usize,
    /// Position of each batch point among these candidates (`u32::MAX`: not among them).
    itself: [u32; BATCH],
    /// Candidates in all ranges.
    count: usize,
    /// Whether `ids` are packed identifiers: then they are what the lists hold (sorted
    /// positions for lists with distances); otherwise they are the grid's `order`, and
    /// lists with distances take the positions themselves.
    ids_are_packed: bool,
}

/// Gathers the lists of a batch from `source` into `part` (see [`gather_batch`]).
#[inline(always)]
fn gather_rows<T: Real, K: MaskKernel>(
    grid: &Grid<T>,
    source: &Candidates<'_, T>,
    batch: &Batch<T>,
    part: &mut PartBuffer<T>,
    with_distances: bool,
    ascending: bool,
    list_of: impl Fn(usize) -> usize,
) {
    let order = &grid.order[..];
    // Each row holds every candidate plus one block of slack, and at least a whole sorting
    // network's width so that lists sort in place.
    let row = (source.count + ROW_SLACK).max(NETWORK_MAX);
    let mut j = 0;
    if !with_distances {
        while j + GATHER_GROUP <= batch.len {
            let at = part.filled;
            part.reserve_entries(at + GATHER_GROUP * row, false);
            // SAFETY: as in the loop below, for every row.
            let lens = unsafe {
                gather_many::<T, K, true, GATHER_GROUP>(
                    source.columns,
                    source.ids,
                    std::array::from_fn(|k| batch.points[j + k]),
                    grid.r2,
                    source.ranges,
                    source.self_range,
                    std::array::from_fn(|k| source.itself[j + k]),
                    &mut part.entries[at..at + GATHER_GROUP * row],
                )
            };
            for (k, &len) in lens.iter().enumerate() {
                let from = at + k * row;
                // SAFETY: a kernel sets AVX2 and AVX512 only where the CPU has them.
                unsafe { part.sort_gathered(from, len, row, ascending, K::AVX2, K::AVX512) };
                if from != part.filled {
                    part.entries.copy_within(from..from + len, part.filled);
                }
                part.push_list(list_of(batch.slots[j + k]), len);
            }
            j += GATHER_GROUP;
        }
    }
    for j in j..batch.len {
        let at = part.filled;
        part.reserve_entries(at + row, with_distances);
        // SAFETY: the ranges lie below the columns' point count (the grid's, or the packed
        // count), the columns are padded by LANES (the grid's `PointColumns`, or packed
        // columns with ROW_SLACK of room), so are the ids (`order` is padded by LANES past
        // the point count, see `Grid::build_points`), the row holds every candidate plus
        // ROW_SLACK, and a kernel sets AVX2 and AVX512 only where the CPU has them.
        // Separate call sites on purpose: a helper that chooses between them costs ~4% more
        // instructions per point (callgrind, 1,499 -> 1,564); it only changes the
        // code LLVM generates for the loop. Lists with distances gather sorted positions:
        // the packed identifiers, or the positions themselves.
        let len = unsafe {
            if with_distances && !source.ids_are_packed {
                gather_point::<T, K, false>(
                    source.columns,
                    source.ids,
                    batch.points[j],
                    grid.r2,
                    source.ranges,
                    source.self_range,
                    source.itself[j],
                    &mut part.entries[at..at + row],
                )
            } else {
                gather_point::<T, K, true>(
                    source.columns,
                    source.ids,
                    batch.points[j],
                    grid.r2,
                    source.ranges,
                    source.self_range,
                    source.itself[j],
                    &mut part.entries[at..at + row],
                )
            }
        };
        let list = &mut part.entries[at..at + len];
        if with_distances {
            let dist = &mut part.distances[at..at + len];
            for (q, d) in list.iter_mut().zip(dist.iter_mut()) {
                *d = T::distance_squared(batch.points[j], grid.sorted.point(*q as usize));
                *q = order[*q as usize];
            }
            if !ascending {
                sort_with_distances(list, dist, &mut part.sort_keys, &mut part.sort_distances);
            }
        } else {
            // SAFETY: a kernel sets AVX2 and AVX512 only where the CPU has them.
            unsafe { part.sort_gathered(at, len, row, ascending, K::AVX2, K::AVX512) };
        }
        part.push_list(list_of(batch.slots[j]), len);
    }
}

/// Tells whether a list ascends, branch-free: 8 neighbouring pairs per step on 8-lane
/// vectors, then a fold over the last few. (The standard `is_sorted` stops at the first
/// descent, one scalar compare and branch per entry: 7 % of the list pass on lists that
/// mostly ascend; a fold over `windows(2)` took ~86 instructions for a list of 40.)
#[inline(always)]
fn is_ascending(list: &[u32]) -> bool {
    let mut descents = u32x8::splat(0);
    let mut k = 0;
    while k + LANES < list.len() {
        let here = u32x8::new(list[k..k + LANES].try_into().unwrap());
        let next = u32x8::new(list[k + 1..k + 1 + LANES].try_into().unwrap());
        // Nonzero exactly in the lanes where an entry exceeds its successor.
        descents |= here.max(next) ^ next;
        k += LANES;
    }
    let tail = list[k..]
        .windows(2)
        .fold(true, |ascending, w| ascending & (w[0] <= w[1]));
    tail && descents.reduce_max() == 0
}

/// Sorts a list and its distances together by index. Short lists, and lists that already
/// ascend (input in cell order), by insertion; others (input in random order) by sorting
/// keys that pack each index with its position, then moving the distances through
/// `moved`. Insertion sort alone took the lists with distances of 1M uniform points in
/// random order from 193 ms (cell order) to 598 ms, two threads.
fn sort_with_distances<T: Copy>(
    list: &mut [u32],
    distances: &mut [T],
    keys: &mut Vec<u64>,
    moved: &mut Vec<T>,
) {
    if list.len() <= 16 || is_ascending(list) {
        insertion_sort_with_distances(list, distances);
        return;
    }
    keys.clear();
    keys.extend(
        list.iter()
            .enumerate()
            .map(|(position, &index)| (u64::from(index) << 32) | position as u64),
    );
    keys.sort_unstable();
    moved.clear();
    moved.extend(keys.iter().map(|&key| distances[key as u32 as usize]));
    for (entry, &key) in list.iter_mut().zip(keys.iter()) {
        *entry = (key >> 32) as u32;
    }
    distances.copy_from_slice(moved);
}

/// Sorts a list and its distances together by index, by insertion (no allocation).
fn insertion_sort_with_distances<T: Copy>(list: &mut [u32], distances: &mut [T]) {
    for i in 1..list.len() {
        let (key, value) = (list[i], distances[i]);
        let mut j = i;
        while j > 0 && list[j - 1] > key {
            list[j] = list[j - 1];
            distances[j] = distances[j - 1];
            j -= 1;
        }
        list[j] = key;
        distances[j] = value;
    }
}

/// One task of a pass that runs the SIMD kernels: a work unit of a list pass ([`UnitTask`])
/// or of the pairs ([`crate::pairs`]), or a range of searchers ([`SearcherTask`]).
/// [`Grid::run_task`] runs it with the kernel as compiled or in a run-time AVX2 or AVX-512
/// build.
pub(crate) trait KernelTask<T: Real> {
    /// What the task fills.
    type Part;

    /// Runs the task into `part` with kernel `K`. Inlined into the run-time builds
    /// ([`Grid::run_task`]), so no closure may lie on the way to the kernels: a closure is
    /// compiled as a function of its own, without that build's target features.
    fn run<K: MaskKernel>(&self, grid: &Grid<T>, part: &mut Self::Part, with_distances: bool);
}

/// The points of work unit `unit` (bucket range) searching their own set; the list of sorted
/// position `p` is output list `list_of(p)`.
struct UnitTask<'a, F> {
    table: &'a CellTable,
    unit: (u32, u32),
    list_of: F,
}

impl<T: Real, F: Fn(usize) -> usize + Copy> KernelTask<T> for UnitTask<'_, F> {
    type Part = PartBuffer<T>;

    #[inline(always)]
    fn run<K: MaskKernel>(&self, grid: &Grid<T>, part: &mut PartBuffer<T>, with_distances: bool) {
        grid.gather_unit_with::<K>(self.table, self.unit, part, with_distances, self.list_of);
    }
}

/// Searchers `range` of another set (or query points) searching this set; `searcher(k)`
/// gives the point and the output list of searcher `k`.
struct SearcherTask<'a, S> {
    table: &'a CellTable,
    range: std::ops::Range<usize>,
    searcher: &'a S,
    /// Whether a searcher without possible neighbours records an empty list (so that the
    /// lists of a range of searchers are consecutive), or none (its list stays empty).
    record_empty: bool,
}

impl<T: Real, S: Fn(usize) -> ([T; 3], usize)> KernelTask<T> for SearcherTask<'_, S> {
    type Part = PartBuffer<T>;

    #[inline(always)]
    fn run<K: MaskKernel>(&self, grid: &Grid<T>, part: &mut PartBuffer<T>, with_distances: bool) {
        let range = self.range.clone();
        grid.gather_searchers_with::<K>(
            self.table,
            range,
            self.searcher,
            part,
            with_distances,
            self.record_empty,
        );
    }
}

impl<T: Real> Grid<T> {
    /// The neighbour lists of every point of the set against the set itself, excluding the
    /// point itself: `out.neighbors(i)` holds every `j != i` within the radius of `i`.
    pub fn neighbor_lists(&self, out: &mut NeighborLists<T>) {
        self.self_lists(out, false);
    }

    /// Like [`Grid::neighbor_lists`], with the squared distance of every entry.
    pub fn neighbor_lists_with_distances(&self, out: &mut NeighborLists<T>) {
        self.self_lists(out, true);
    }

    fn self_lists(&self, out: &mut NeighborLists<T>, with_distances: bool) {
        match self.kernel {
            Kernel::Simd => self.self_lists_with::<SimdKernel>(out, with_distances),
            Kernel::Scalar => self.self_lists_with::<ScalarKernel>(out, with_distances),
        }
    }

    /// Which pass [`Grid::neighbor_lists`] takes on the grid as built: chosen from how well
    /// the caller's numbering keeps the points of a cell together.
    pub fn list_pass(&self) -> ListPass {
        if self.table.is_none() {
            ListPass::Empty
        } else if self.in_cell_order {
            ListPass::InCellOrder
        } else if self.nearly_in_cell_order() {
            ListPass::NearCellOrder
        } else {
            ListPass::General
        }
    }

    fn self_lists_with<K: MaskKernel>(&self, out: &mut NeighborLists<T>, with_distances: bool) {
        // Input in cell order: each unit's lists go into place while hot (see `in_order`).
        if let (true, Some(table)) = (self.in_cell_order, self.table.as_ref()) {
            self.self_lists_in_order::<K>(table, out, with_distances);
            return;
        }
        // Input nearly in cell order: units of the caller's numbering, placed while hot.
        if let Some(table) = self.table.as_ref()
            && self.nearly_in_cell_order()
        {
            self.self_lists_near_order::<K>(table, out, with_distances);
            return;
        }
        let n = self.len();
        let parts = self.units.len();
        out.reset(n, parts, with_distances);
        let Some(table) = self.table.as_ref() else {
            out.clear_entries();
            return;
        };
        let build = self.run_time_build::<K>();
        self.units
            .par_iter()
            .zip(out.parts[..parts].par_iter_mut())
            .for_each(|(&unit, part)| {
                part.start(self.unit_points(unit));
                // The batch's slots are sorted positions; lists go to caller indices.
                let list_of = |p: usize| self.order[p] as usize;
                let task = UnitTask {
                    table,
                    unit,
                    list_of,
                };
                self.run_task::<K, _>(&task, part, with_distances, build);
            });
        out.assemble(parts);
    }

    /// Runs `task` into `part` with kernel `K` as compiled, or in the run-time build
    /// `build` (from [`Grid::run_time_build`]) of the inner loops.
    #[inline(always)]
    pub(crate) fn run_task<K: MaskKernel, Task: KernelTask<T>>(
        &self,
        task: &Task,
        part: &mut Task::Part,
        with_distances: bool,
        build: Build,
    ) {
        match build {
            Build::AsCompiled => task.run::<K>(self, part, with_distances),
            // SAFETY: `run_time_build` found the features `avx2_build` enables.
            Build::Avx2 => unsafe { self.run_task_avx2(task, part, with_distances) },
            // SAFETY: `run_time_build` found the features `avx512_build` enables.
            Build::Avx512 => unsafe { self.run_task_avx512(task, part, with_distances) },
        }
    }

    avx2_build! {
        /// [`Grid::run_task`] compiled with AVX2 enabled, with the AVX2 kernel: every loop
        /// inlined into it uses AVX2 instructions for the permutes (see `simd`).
        ///
        /// # Safety
        /// [`avx2_detected`](crate::simd::avx2_detected) holds.
        unsafe fn run_task_avx2<Task: KernelTask<T>>(
            &self,
            task: &Task,
            part: &mut Task::Part,
            with_distances: bool,
        ) {
            task.run::<Avx2Kernel>(self, part, with_distances);
        }
    }

    avx512_build! {
        /// [`Grid::run_task`] compiled with AVX-512 enabled, with the AVX-512 kernel: the
        /// gather and packing take 16 `f32` or 8 `f64` candidates per block (see
        /// `kernel::avx512`), and lists sort on 16-lane registers.
        ///
        /// # Safety
        /// [`avx512_detected`](crate::simd::avx512_detected) holds.
        unsafe fn run_task_avx512<Task: KernelTask<T>>(
            &self,
            task: &Task,
            part: &mut Task::Part,
            with_distances: bool,
        ) {
            task.run::<Avx512Kernel>(self, part, with_distances);
        }
    }

    /// Gathers the lists of work unit `unit` into `part` with kernel `K`, the list of sorted
    /// position `p` as output list `list_of(p)`: the points of the unit's buckets in
    /// batches of up to [`BATCH`], with each bucket's full neighbourhood computed once, or
    /// once for a run of sparse buckets of one row (see [`RUN_POINTS`]). No closure on the
    /// way to the kernels: a closure is compiled as a function of its own, without the
    /// target features of the run-time AVX2 build it is written in.
    #[inline(always)]
    fn gather_unit_with<K: MaskKernel>(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        part: &mut PartBuffer<T>,
        with_distances: bool,
        list_of: impl Fn(usize) -> usize + Copy,
    ) {
        let mut batch = Batch::new();
        let last_x = (1u32 << table.shift[0]) - 1;
        let mut b = unit.0;
        while b < unit.1 {
            let (start, mut end) = self.bucket_range(b);
            if start == end {
                b += 1;
                continue;
            }
            let coords = table.bucket_coords(b);
            // A sparse bucket takes the next buckets of its row (of this unit) into its run,
            // as long as neither the run nor its neighbours in x wrap around the row.
            let mut width = 1;
            if ((end - start) as usize) < RUN_POINTS && coords[0] >= 1 {
                while b + width < unit.1 && coords[0] + width < last_x && width < RUN_WIDTH {
                    let next_end = self.starts[(b + width) as usize + 1];
                    if (next_end - start) as usize > RUN_POINTS {
                        break;
                    }
                    width += 1;
                    end = next_end;
                }
            }
            let ranges = run_neighbourhood(&self.starts, table, coords, width);
            b += width;
            let stretch = (start, end);
            self.gather_stretch::<K>(&ranges, stretch, &mut batch, part, with_distances, list_of);
        }
    }

    /// Gathers the lists of the consecutive sorted positions `stretch`, which share the
    /// neighbourhood `ranges`, in batches of up to [`BATCH`] (see [`gather_batch`]).
    #[inline(always)]
    fn gather_stretch<K: MaskKernel>(
        &self,
        ranges: &Ranges,
        stretch: (u32, u32),
        batch: &mut Batch<T>,
        part: &mut PartBuffer<T>,
        with_distances: bool,
        list_of: impl Fn(usize) -> usize + Copy,
    ) {
        let (mut p, end) = stretch;
        while p < end {
            batch.len = 0;
            while batch.len < BATCH && p < end {
                batch.push(self.sorted.point(p as usize), p as usize, p);
                p += 1;
            }
            gather_batch::<T, K>(self, ranges, batch, part, with_distances, list_of);
        }
    }

    /// The neighbour lists of arbitrary query points against this set: `out.neighbors(k)`
    /// holds every point of the set within the radius of `queries[k]`.
    pub fn query(&self, queries: &[[T; 3]], out: &mut NeighborLists<T>) -> Result<(), Error> {
        self.query_points(Points::Aos(queries), out, false)
    }

    /// Like [`Grid::query`], for any [`Points`] and optionally with squared distances.
    pub fn query_points(
        &self,
        queries: Points<'_, T>,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        queries.check_lengths()?;
        crate::columns::check_count(queries.len())?;
        if let Some(error) = first_non_finite(queries) {
            return Err(error);
        }
        let searcher = |k| (queries.get(k), k);
        let order = SearcherOrder::ListOrder;
        self.cross_lists(queries.len(), searcher, order, out, with_distances);
        Ok(())
    }

    /// The neighbour lists of every point of `searching` (another set, built with its own
    /// grid) against this set, in `searching`'s numbering.
    pub fn lists_for(&self, searching: &Grid<T>, out: &mut NeighborLists<T>, with_distances: bool) {
        let n = searching.len();
        if searching.in_cell_order {
            // Sorted positions are the searching set's numbering.
            let searcher = |k: usize| (searching.sorted.point(k), k);
            self.cross_lists(n, searcher, SearcherOrder::ListOrder, out, with_distances);
        } else if searching.table.is_some() && searching.nearly_in_cell_order() {
            // The searching set in its own numbering, which keeps its cells together.
            let mut inverse = std::mem::take(&mut out.inverse);
            searching.inverse_order(&mut inverse);
            let searcher = |i: usize| (searching.sorted.point(inverse[i] as usize), i);
            self.cross_lists(n, searcher, SearcherOrder::ListOrder, out, with_distances);
            out.inverse = inverse;
        } else {
            // The searching set in cell order, to batch the points of its cells.
            let searcher = |k: usize| (searching.sorted.point(k), searching.order[k] as usize);
            self.cross_lists(n, searcher, SearcherOrder::Any, out, with_distances);
        }
    }

    /// Neighbours of one query point: calls `visit(j, d2)` for every point `j` of the set
    /// within the radius, in no particular order.
    pub fn query_point(&self, point: [T; 3], mut visit: impl FnMut(u32, T)) -> Result<(), Error> {
        if let Some(error) = first_non_finite(Points::Aos(&[point])) {
            return Err(error);
        }
        let Some(table) = self.table.as_ref() else {
            return Ok(());
        };
        let cell = table.coords(point);
        if !table.may_have_neighbours(cell) {
            return Ok(());
        }
        let ranges = self.full_neighbourhood(table, table.bucket_coords(table.bucket(cell)));
        let columns = self.sorted.padded();
        scan_batch::<T, SimdKernel>(
            columns,
            &[point],
            self.r2,
            ranges.as_slice(),
            |_, base, mask| {
                for_each_hit(base, mask, |q| {
                    let d2 = T::distance_squared(point, self.sorted.point(q as usize));
                    visit(self.order[q as usize], d2);
                });
            },
        );
        Ok(())
    }

    /// Shared count-then-fill driver for searchers that are not the set itself;
    /// `searcher(k)` gives the point and the output list of searcher `k`.
    fn cross_lists(
        &self,
        count: usize,
        searcher: impl Fn(usize) -> ([T; 3], usize) + Sync,
        searcher_order: SearcherOrder,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) {
        match self.kernel {
            Kernel::Simd => self.cross_lists_with::<SimdKernel>(
                count,
                searcher,
                searcher_order,
                out,
                with_distances,
            ),
            Kernel::Scalar => self.cross_lists_with::<ScalarKernel>(
                count,
                searcher,
                searcher_order,
                out,
                with_distances,
            ),
        }
    }

    /// Gathers into `part` with kernel `K` the lists of searchers `range`, in batches of
    /// consecutive searchers in the same bucket; searchers with no possible neighbour are
    /// skipped (their lists stay empty). No closure on the way to the kernels, as in
    /// [`Grid::gather_unit_with`].
    #[inline(always)]
    fn gather_searchers_with<K: MaskKernel>(
        &self,
        table: &CellTable,
        range: std::ops::Range<usize>,
        searcher: &impl Fn(usize) -> ([T; 3], usize),
        part: &mut PartBuffer<T>,
        with_distances: bool,
        record_empty: bool,
    ) {
        let mut batch = Batch::new();
        let mut current: Option<(u32, Ranges)> = None;
        for k in range {
            let (point, slot) = searcher(k);
            let cell = table.coords(point);
            if !table.may_have_neighbours(cell) {
                if record_empty {
                    // The lists so far go first, to keep the lists in searcher order.
                    if let Some((_, ranges)) = &current
                        && batch.len > 0
                    {
                        gather_batch::<T, K>(self, ranges, &batch, part, with_distances, |k| k);
                    }
                    batch.len = 0;
                    part.push_list(slot, 0);
                }
                continue;
            }
            let bucket = table.bucket(cell);
            match &current {
                Some((b, _)) if *b == bucket && batch.len < BATCH => {}
                _ => {
                    if let Some((_, ranges)) = &current
                        && batch.len > 0
                    {
                        gather_batch::<T, K>(self, ranges, &batch, part, with_distances, |k| k);
                    }
                    batch.len = 0;
                    if current.as_ref().is_none_or(|(b, _)| *b != bucket) {
                        let ranges = self.full_neighbourhood(table, table.bucket_coords(bucket));
                        current = Some((bucket, ranges));
                    }
                }
            }
            batch.push(point, slot, u32::MAX);
        }
        if let Some((_, ranges)) = &current
            && batch.len > 0
        {
            gather_batch::<T, K>(self, ranges, &batch, part, with_distances, |k| k);
        }
    }

    fn cross_lists_with<K: MaskKernel>(
        &self,
        count: usize,
        searcher: impl Fn(usize) -> ([T; 3], usize) + Sync,
        searcher_order: SearcherOrder,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) {
        let parts = count.div_ceil(QUERY_CHUNK);
        let Some(table) = self.table.as_ref() else {
            out.reset(count, parts, with_distances);
            out.clear_entries();
            return;
        };
        let build = self.run_time_build::<K>();
        if searcher_order == SearcherOrder::ListOrder {
            // Each chunk's lists are consecutive: they go into place while hot.
            let chunk = |unit: usize| unit * QUERY_CHUNK..((unit + 1) * QUERY_CHUNK).min(count);
            let units = UnitsInSequence {
                count: parts,
                first_list: |unit: usize| unit * QUERY_CHUNK,
                points: |unit: usize| chunk(unit).len(),
                gather: |unit: usize, part: &mut PartBuffer<T>| {
                    let task = SearcherTask {
                        table,
                        range: chunk(unit),
                        searcher: &searcher,
                        record_empty: true,
                    };
                    self.run_task::<K, _>(&task, part, with_distances, build);
                },
            };
            in_order::lists_in_sequence(count, &units, out, with_distances);
            return;
        }
        out.reset(count, parts, with_distances);
        out.parts[..parts]
            .par_iter_mut()
            .enumerate()
            .for_each(|(chunk, part)| {
                let range = chunk * QUERY_CHUNK..((chunk + 1) * QUERY_CHUNK).min(count);
                part.start(range.len());
                let task = SearcherTask {
                    table,
                    range,
                    searcher: &searcher,
                    record_empty: false,
                };
                self.run_task::<K, _>(&task, part, with_distances, build);
            });
        out.assemble(parts);
    }
}

#[cfg(test)]
mod tests {
    use hhg_testkit::SplitMix64;

    use super::{
        ListPass, NeighborLists, PACK_MIN, PartBuffer, RUN_WIDTH, UNSORTED_PROBE, UNSORTED_STREAK,
        is_ascending,
    };
    use crate::RunTimeDispatch;
    use crate::kernel::{Avx2Kernel, Avx512Kernel, ScalarKernel, SimdKernel};
    use crate::simd::{
        Build, COMPILED_FOR_AVX2, COMPILED_FOR_AVX512, avx2_detected, avx512_detected,
    };
    use crate::smallsort::NETWORK_MAX;
    use crate::{Grid, Kernel};

    /// The SIMD kernel packs the candidates of batches of at least `PACK_MIN` points, and
    /// only of those; the scalar kernel never packs. (The differential tests compare the
    /// lists of both kernels with the oracle; this makes sure they compare the two paths.)
    #[test]
    fn batches_of_enough_points_pack_their_candidates() {
        let mut rng = SplitMix64::new(5);
        // Enough points that a work unit holds a small part of each bucket's points: random
        // order then takes the general pass.
        let dense: Vec<[f32; 3]> = (0..20_000)
            .map(|_| std::array::from_fn(|_| rng.range(0.0, 10.0) as f32))
            .collect();
        // One point in every third cell along each axis (in reverse cell order): a bucket's
        // batch, or a run of up to RUN_WIDTH buckets of a row, holds at most 3 points, fewer
        // than PACK_MIN.
        const { assert!(RUN_WIDTH <= 9 && PACK_MIN > 3) };
        let sparse: Vec<[f32; 3]> = (0..200)
            .rev()
            .map(|k| {
                [
                    (k % 10) as f32 * 3.0,
                    (k / 10 % 10) as f32 * 3.0,
                    (k / 100) as f32 * 3.0,
                ]
            })
            .collect();
        // The sparse points change bucket at every point in any order: they take the pass
        // for input nearly in cell order.
        for (points, kernel, packs, pass) in [
            (&dense, Kernel::Simd, true, ListPass::General),
            (&dense, Kernel::Scalar, false, ListPass::General),
            (&sparse, Kernel::Simd, false, ListPass::NearCellOrder),
        ] {
            let mut grid = Grid::<f32>::new(1.0).unwrap();
            grid.set_kernel(kernel);
            grid.build(points).unwrap();
            assert_eq!(grid.list_pass(), pass, "{} points", points.len());
            for with_distances in [false, true] {
                let mut lists = NeighborLists::default();
                grid.self_lists(&mut lists, with_distances);
                let packed = lists.parts.iter().any(|part| !part.packed.ids().is_empty())
                    || lists.in_order.any_packed();
                assert_eq!(
                    packed,
                    packs,
                    "{} points, {kernel:?}, distances {with_distances}",
                    points.len()
                );
            }
        }
    }

    /// The SIMD kernel runs the widest run-time build that the CPU has, the grid allows
    /// and the library was not compiled for; the scalar kernel and the kernel of the widest
    /// build never switch.
    #[test]
    fn the_widest_build_runs_where_the_cpu_has_it() {
        let mut grid = Grid::<f32>::new(1.0).unwrap();
        let avx512 = !COMPILED_FOR_AVX512 && avx512_detected();
        let avx2 = !COMPILED_FOR_AVX2 && avx2_detected();
        let widest = if avx512 {
            Build::Avx512
        } else if avx2 {
            Build::Avx2
        } else {
            Build::AsCompiled
        };
        assert_eq!(grid.run_time_build::<SimdKernel>(), widest);
        assert_eq!(grid.run_time_build::<ScalarKernel>(), Build::AsCompiled);
        assert_eq!(grid.run_time_build::<Avx512Kernel>(), Build::AsCompiled);
        // The AVX2 kernel still lacks the AVX-512 loops.
        let above_avx2 = if avx512_detected() {
            Build::Avx512
        } else {
            Build::AsCompiled
        };
        assert_eq!(grid.run_time_build::<Avx2Kernel>(), above_avx2);
        grid.set_run_time_dispatch(RunTimeDispatch::UpToAvx2);
        let up_to_avx2 = if avx2 { Build::Avx2 } else { Build::AsCompiled };
        assert_eq!(grid.run_time_build::<SimdKernel>(), up_to_avx2);
        assert_eq!(grid.run_time_build::<Avx2Kernel>(), Build::AsCompiled);
        grid.set_run_time_dispatch(RunTimeDispatch::Off);
        assert_eq!(grid.run_time_build::<SimdKernel>(), Build::AsCompiled);
        grid.set_run_time_dispatch(RunTimeDispatch::Widest);
        assert_eq!(grid.run_time_build::<SimdKernel>(), widest);
    }

    /// Lists that keep failing the check thin the checks out to one in `UNSORTED_PROBE`; an
    /// ascending list found by such a probe brings them back; every list comes out sorted
    /// whether it was checked or not.
    #[test]
    fn unsorted_lists_thin_out_the_ascending_checks() {
        const LEN: usize = 40;
        let mut part = PartBuffer::<f32>::default();
        part.start(64);
        let descending: Vec<u32> = (0..LEN as u32).rev().collect();
        let ascending: Vec<u32> = (0..LEN as u32).collect();
        // Each list is gathered, sorted and recorded as the list pass does; returns the
        // streak afterwards.
        let gather = |part: &mut PartBuffer<f32>, list: &[u32]| {
            let at = part.filled;
            part.reserve_entries(at + NETWORK_MAX, false);
            part.entries[at..at + LEN].copy_from_slice(list);
            // SAFETY: the portable form (no AVX2).
            unsafe { part.sort_gathered(at, LEN, NETWORK_MAX, false, false, false) };
            assert_eq!(&part.entries[at..at + LEN], &ascending[..]);
            let slot = part.lens.len();
            part.push_list(slot, LEN);
            part.unsorted_streak
        };
        for k in 1..=UNSORTED_STREAK {
            assert_eq!(
                gather(&mut part, &descending),
                k,
                "every list is checked at first"
            );
        }
        // A probe that fails lengthens the streak; lists between probes are sorted without
        // a check, even an ascending one, and leave the streak as it is.
        while !part.lens.len().is_multiple_of(UNSORTED_PROBE) {
            gather(&mut part, &descending);
        }
        let streak = gather(&mut part, &descending);
        assert!(streak > UNSORTED_STREAK);
        assert_eq!(gather(&mut part, &ascending), streak);
        while !part.lens.len().is_multiple_of(UNSORTED_PROBE) {
            assert_eq!(gather(&mut part, &descending), streak);
        }
        // The next probe that finds an ascending list ends the streak, and every list is
        // checked again.
        assert_eq!(gather(&mut part, &ascending), 0);
        assert_eq!(gather(&mut part, &descending), 1);
        assert_eq!(gather(&mut part, &ascending), 0);
        // A new unit starts with every list checked.
        for _ in 0..UNSORTED_STREAK {
            gather(&mut part, &descending);
        }
        part.start(64);
        assert_eq!(part.unsorted_streak, 0);
    }

    /// The 8-lane check agrees with the standard one on every length up to three vectors and
    /// a descent at every place, inside a vector, across vectors and in the tail.
    #[test]
    fn is_ascending_finds_every_descent() {
        for len in 0..=26u32 {
            let ascending: Vec<u32> = (0..len).map(|k| 3 * k).collect();
            assert!(is_ascending(&ascending), "length {len}");
            for at in 1..len as usize {
                let mut list = ascending.clone();
                list.swap(at - 1, at);
                assert!(!is_ascending(&list), "length {len}, descent at {at}");
                let mut equal = ascending.clone();
                equal[at] = equal[at - 1];
                assert!(is_ascending(&equal), "length {len}, repeat at {at}");
            }
        }
        let with_max = [0, 5, u32::MAX, 7, 8, 9, 10, 11, 12, 13];
        assert!(!is_ascending(&with_max));
        assert!(is_ascending(&[1, 2, 3, 4, 5, 6, 7, 8, u32::MAX]));
    }
}
