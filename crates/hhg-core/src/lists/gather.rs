//! The gather of neighbour lists: batches of points that share a neighbourhood test its
//! candidates (packed within reach of the batch first, where the kernel packs) and record
//! their hits, mapped to the caller's numbering and sorted where that broke their order.

use wide::u32x8;

use super::{ListOrder, UnitBuffer};
use crate::geometry::CellTable;
use crate::grid::{Grid, Ranges, run_neighbourhood};
use crate::kernel::{
    BATCH, GATHER_GROUP, MaskKernel, PackRequest, ROW_SLACK, bounding_box, gather_many,
    gather_point, pack_within_box, range_holding,
};
use crate::real::{LANES, Real};
use crate::smallsort::NETWORK_MAX;

/// Searching points that share one neighbourhood, with where their lists go.
pub(super) struct Batch<T> {
    pub(super) points: [[T; 3]; BATCH],
    /// Output list of each point.
    pub(super) slots: [usize; BATCH],
    /// Sorted position of each point in the searched set, or `u32::MAX` (not in it).
    pub(super) itself: [u32; BATCH],
    pub(super) len: usize,
}

impl<T: Real> Batch<T> {
    pub(super) fn new() -> Self {
        Self {
            points: [[T::default(); 3]; BATCH],
            slots: [0; BATCH],
            itself: [u32::MAX; BATCH],
            len: 0,
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, point: [T; 3], slot: usize, itself: u32) {
        self.points[self.len] = point;
        self.slots[self.len] = slot;
        self.itself[self.len] = itself;
        self.len += 1;
    }
}

/// Checked lists in a row that did not ascend, after which a unit checks only every
/// [`UNSORTED_PROBE`]-th list before sorting it (see [`UnitBuffer::sort_gathered`]).
pub(super) const UNSORTED_STREAK: u32 = 8;

/// While lists keep failing the check, one list in this many is still checked.
pub(super) const UNSORTED_PROBE: usize = 8;

/// Batches of at least this many points pack the candidates within reach of their bounding
/// box before the points test them (see [`pack_within_box`]); smaller batches test the
/// ranges directly, since the filter costs about as much as two points' tests.
pub(super) const PACK_MIN: usize = 4;

/// Sparse buckets search in runs: a bucket with fewer than this many points takes the
/// buckets after it in its row into its batch while the run holds at most this many points
/// (and spans at most [`RUN_WIDTH`] buckets), so that one neighbourhood of 9 wider rows
/// serves them all and their batch is large enough to pack its candidates. On the
/// clustered cloud, where 43 % of the points lie in buckets of at most 4, this took the
/// list pass from 1,220 to 1,140 instructions per point (callgrind, 1M in cell order);
/// uniform points and the dam break stay within 1 %.
pub(super) const RUN_POINTS: usize = 8;

/// The most buckets in one run (see [`RUN_POINTS`]): 3, 5 and 8 measured 1,160, 1,148 and
/// 1,140 instructions per point on the clustered cloud.
pub(super) const RUN_WIDTH: u32 = 8;

/// Gathers the lists of a batch into `buffer`: each point's hits (without the point itself)
/// are compressed straight to the end of the buffer's lists, mapped to the caller's numbering
/// and sorted where the mapping broke the order; the list of `batch.slots[j]` is recorded
/// as output list `list_of(batch.slots[j])`.
///
/// With [`MaskKernel::PACKS`] and at least [`PACK_MIN`] points, the candidates within reach
/// of the batch's bounding box are packed first, in range order, and the points test only
/// those.
#[inline(always)]
pub(super) fn gather_batch<T: Real, K: MaskKernel>(
    grid: &Grid<T>,
    ranges: &Ranges,
    batch: &Batch<T>,
    buffer: &mut UnitBuffer<T>,
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
            buffer,
            with_distances,
            ascending,
            list_of,
        );
        return;
    }
    let mut packed = std::mem::take(&mut buffer.packed);
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
        buffer,
        with_distances,
        ascending,
        list_of,
    );
    buffer.packed = packed;
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

/// Gathers the lists of a batch from `source` into `buffer` (see [`gather_batch`]).
#[inline(always)]
fn gather_rows<T: Real, K: MaskKernel>(
    grid: &Grid<T>,
    source: &Candidates<'_, T>,
    batch: &Batch<T>,
    buffer: &mut UnitBuffer<T>,
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
            let at = buffer.filled;
            if !buffer.reserve_entries(at + GATHER_GROUP * row, false) {
                return;
            }
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
                    &mut buffer.entries[at..at + GATHER_GROUP * row],
                )
            };
            for (k, &len) in lens.iter().enumerate() {
                let from = at + k * row;
                // SAFETY: a kernel sets AVX2 and AVX512 only where the CPU has them.
                unsafe { buffer.sort_gathered(from, len, row, ascending, K::AVX2, K::AVX512) };
                if from != buffer.filled {
                    buffer.entries.copy_within(from..from + len, buffer.filled);
                }
                buffer.push_list(list_of(batch.slots[j + k]), len);
            }
            j += GATHER_GROUP;
        }
    }
    for j in j..batch.len {
        let at = buffer.filled;
        if !buffer.reserve_entries(at + row, with_distances) {
            return;
        }
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
                    &mut buffer.entries[at..at + row],
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
                    &mut buffer.entries[at..at + row],
                )
            }
        };
        let list = &mut buffer.entries[at..at + len];
        if with_distances {
            let dist = &mut buffer.distances[at..at + len];
            for (q, d) in list.iter_mut().zip(dist.iter_mut()) {
                *d = T::distance_squared(batch.points[j], grid.sorted.point(*q as usize));
                *q = order[*q as usize];
            }
            if !ascending {
                sort_with_distances(
                    list,
                    dist,
                    &mut buffer.sort_keys,
                    &mut buffer.sort_distances,
                );
            }
        } else {
            // SAFETY: a kernel sets AVX2 and AVX512 only where the CPU has them.
            unsafe { buffer.sort_gathered(at, len, row, ascending, K::AVX2, K::AVX512) };
        }
        buffer.push_list(list_of(batch.slots[j]), len);
    }
}

/// Tells whether a list ascends, branch-free: 8 neighbouring pairs per step on 8-lane
/// vectors, then a fold over the last few. (The standard `is_sorted` stops at the first
/// descent, one scalar compare and branch per entry: 7 % of the list pass on lists that
/// mostly ascend; a fold over `windows(2)` took ~86 instructions for a list of 40.)
#[inline(always)]
pub(crate) fn is_ascending(list: &[u32]) -> bool {
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

impl<T: Real> Grid<T> {
    /// Gathers the lists of work unit `unit` into `buffer` with kernel `K`, the list of sorted
    /// position `p` as output list `list_of(p)`: the points of the unit's buckets in
    /// batches of up to [`BATCH`], with each bucket's full neighbourhood computed once, or
    /// once for a run of sparse buckets of one row (see [`RUN_POINTS`]). The positions in
    /// `exceptions` (ascending, inside the unit; masked points of a view with exceptions,
    /// see `exceptions`) search nothing and get an empty list in their place. No closure on
    /// the way to the kernels: a closure is compiled as a function of its own, without the
    /// target features of the run-time AVX2 build it is written in.
    #[inline(always)]
    pub(super) fn gather_unit_with<K: MaskKernel>(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        exceptions: &[u32],
        buffer: &mut UnitBuffer<T>,
        with_distances: bool,
        list_of: impl Fn(usize) -> usize + Copy,
    ) {
        let mut exceptions = exceptions;
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
            // The stretch in pieces between its exceptions, each exception an empty list.
            let mut from = start;
            while let Some((&exception, rest)) = exceptions.split_first()
                && exception < end
            {
                debug_assert!(exception >= from, "exceptions out of order");
                self.gather_stretch::<K>(
                    &ranges,
                    (from, exception),
                    &mut batch,
                    buffer,
                    with_distances,
                    list_of,
                );
                buffer.push_list(list_of(exception as usize), 0);
                from = exception + 1;
                exceptions = rest;
            }
            self.gather_stretch::<K>(
                &ranges,
                (from, end),
                &mut batch,
                buffer,
                with_distances,
                list_of,
            );
        }
    }

    /// Gathers the lists of the consecutive sorted positions `stretch`, which share the
    /// neighbourhood `ranges`, in batches of up to [`BATCH`] (see [`gather_batch`]).
    #[inline(always)]
    pub(super) fn gather_stretch<K: MaskKernel>(
        &self,
        ranges: &Ranges,
        stretch: (u32, u32),
        batch: &mut Batch<T>,
        buffer: &mut UnitBuffer<T>,
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
            gather_batch::<T, K>(self, ranges, batch, buffer, with_distances, list_of);
        }
    }
}
