//! Per-point neighbour lists in CSR form: a set against itself, query points against a set,
//! and one set against another; both directions, the caller's numbering, each list ascending.

use rayon::prelude::*;

use crate::error::Error;
use crate::geometry::{CellTable, Kernel, Points, first_non_finite};
use crate::grid::{Grid, Ranges};
use crate::kernel::{
    BATCH, MaskKernel, ScalarKernel, SimdKernel, compress_store, for_each_hit, scan_batch,
};
use crate::parallel::{DisjointSlice, exclusive_scan};
use crate::real::{LANES, Real};
use crate::smallsort::sort_short;

/// Query points per rayon task.
const QUERY_CHUNK: usize = 1024;

/// Neighbour lists in compressed sparse row form.
///
/// The neighbours of list `i` are `indices()[offsets()[i]..offsets()[i + 1]]`, in ascending
/// order, numbered as the caller numbered the searched set; with distances requested,
/// `distances_squared()` holds the squared distance of each entry at the same position.
/// Reuse one value across time steps: its buffers only grow.
#[derive(Clone, Debug, Default)]
pub struct NeighborLists<T: Real> {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    distances: Vec<T>,
    has_distances: bool,
    counts: Vec<u32>,
    scan: Vec<usize>,
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

    /// The neighbours of point `i`, ascending.
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

    /// Makes `lists` empty lists, keeping the buffers.
    fn reset(&mut self, lists: usize, with_distances: bool) {
        self.offsets.clear();
        self.offsets.resize(lists + 1, 0);
        self.counts.clear();
        self.counts.resize(lists, 0);
        self.has_distances = with_distances;
    }

    /// Turns per-list counts (already in `offsets[..len]`) into offsets and sizes the entries.
    fn finish_offsets(&mut self) {
        let lists = self.len();
        let total = exclusive_scan(&mut self.offsets[..lists], &mut self.scan);
        self.offsets[lists] = total;
        // Only growth writes: every entry below `total` is overwritten by the fill pass.
        self.indices.resize(total, 0);
        self.indices.truncate(total);
        if self.has_distances {
            self.distances.resize(total, T::default());
            self.distances.truncate(total);
        } else {
            self.distances.clear();
        }
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

    #[inline(always)]
    fn points(&self) -> &[[T; 3]] {
        &self.points[..self.len]
    }
}

/// The hit count of every point of a batch (including the point itself when it is in the set).
#[inline(always)]
fn count_batch<T: Real, K: MaskKernel>(
    grid: &Grid<T>,
    ranges: &Ranges,
    batch: &Batch<T>,
) -> [u32; BATCH] {
    let mut counts = [0u32; BATCH];
    scan_batch::<T, K>(
        grid.sorted.padded(),
        batch.points(),
        grid.r2,
        ranges.as_slice(),
        |j, _, mask| counts[j] += mask.count_ones(),
    );
    counts
}

/// Entries per searching point gathered on the stack before they are written out: lists
/// up to this long are compressed into L1-resident buffers and then streamed to their final
/// place once, mapped to the caller's numbering on the way.
const LOCAL_CAPACITY: usize = 120;

/// Per-task stack buffers for [`fill_batch`], one row per point of a batch.
pub(crate) struct LocalLists {
    rows: [[u32; LOCAL_CAPACITY + LANES]; BATCH],
}

impl LocalLists {
    pub(crate) fn new() -> Self {
        Self {
            rows: [[0; LOCAL_CAPACITY + LANES]; BATCH],
        }
    }
}

/// Fills the lists of a batch: the hits (without the point itself) in candidate order, then
/// mapped to the caller's numbering and sorted where the mapping broke the order.
///
/// # Safety
/// The ranges `offsets[slot]..offsets[slot + 1]` of the batch's slots must belong to this
/// task alone, and the count pass must have sized them with the same grid and kernel.
#[inline(always)]
unsafe fn fill_batch<T: Real, K: MaskKernel>(
    grid: &Grid<T>,
    ranges: &Ranges,
    batch: &Batch<T>,
    offsets: &[usize],
    indices: &DisjointSlice<'_, u32>,
    distances: Option<&DisjointSlice<'_, T>>,
    local: &mut LocalLists,
) {
    let mut lists: [&mut [u32]; BATCH] = std::array::from_fn(|_| &mut [][..]);
    let mut longest = 0;
    for j in 0..batch.len {
        let slot = batch.slots[j];
        let len = offsets[slot + 1] - offsets[slot];
        longest = longest.max(len);
        // SAFETY: the caller guarantees this slot's range is ours alone and in bounds.
        lists[j] = unsafe { indices.range_mut(offsets[slot], len) };
    }
    let columns = grid.sorted.padded();
    let mut cursors = [0usize; BATCH];
    let exclude = |j: usize, base: u32, mask: u32| {
        let itself = batch.itself[j].wrapping_sub(base);
        if itself < LANES as u32 {
            mask & !(1 << itself)
        } else {
            mask
        }
    };
    // Gather sorted positions: on the stack when every list fits, else in place.
    let on_stack = longest <= LOCAL_CAPACITY;
    if on_stack {
        scan_batch::<T, K>(
            columns,
            batch.points(),
            grid.r2,
            ranges.as_slice(),
            |j, base, mask| {
                cursors[j] =
                    compress_store(base, exclude(j, base, mask), &mut local.rows[j], cursors[j]);
            },
        );
    } else {
        scan_batch::<T, K>(
            columns,
            batch.points(),
            grid.r2,
            ranges.as_slice(),
            |j, base, mask| {
                cursors[j] = compress_store(base, exclude(j, base, mask), lists[j], cursors[j]);
            },
        );
    }
    let order = &grid.order[..];
    for j in 0..batch.len {
        let list = &mut *lists[j];
        debug_assert_eq!(cursors[j], list.len(), "count and fill passes disagree");
        if let Some(distances) = distances {
            let slot = batch.slots[j];
            // SAFETY: as for the indices; the distances share their layout.
            let dist = unsafe { distances.range_mut(offsets[slot], list.len()) };
            if on_stack {
                list.copy_from_slice(&local.rows[j][..list.len()]);
            }
            for (q, d) in list.iter_mut().zip(dist.iter_mut()) {
                *d = T::distance_squared(batch.points[j], grid.sorted.point(*q as usize));
                *q = order[*q as usize];
            }
            sort_with_distances(list, dist);
        } else {
            if on_stack {
                for (out, &q) in list.iter_mut().zip(&local.rows[j]) {
                    *out = order[q as usize];
                }
            } else {
                for q in list.iter_mut() {
                    *q = order[*q as usize];
                }
            }
            if !list.is_sorted() {
                sort_short(list);
            }
        }
    }
}

/// Sorts a list and its distances together by index (insertion sort: lists are short and
/// usually sorted already; no allocation).
fn sort_with_distances<T: Copy>(list: &mut [u32], distances: &mut [T]) {
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

    /// Calls `visit(ranges, batch)` for the points of a unit's buckets in batches of up to
    /// [`BATCH`], with each bucket's full neighbourhood computed once. Slots are sorted
    /// positions here; callers map them.
    #[inline(always)]
    fn walk_unit_batches(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        mut visit: impl FnMut(&Ranges, &Batch<T>),
    ) {
        let mut batch = Batch::new();
        for b in unit.0..unit.1 {
            let (start, end) = self.bucket_range(b);
            if start == end {
                continue;
            }
            let ranges = self.full_neighbourhood(table, table.bucket_coords(b));
            let mut p = start;
            while p < end {
                batch.len = 0;
                while batch.len < BATCH && p < end {
                    batch.push(self.sorted.point(p as usize), p as usize, p);
                    p += 1;
                }
                visit(&ranges, &batch);
            }
        }
    }

    fn self_lists_with<K: MaskKernel>(&self, out: &mut NeighborLists<T>, with_distances: bool) {
        let n = self.len();
        out.reset(n, with_distances);
        let Some(table) = self.table.as_ref() else {
            return;
        };
        // Pass 1: count, in sorted order (a point always finds itself, hence the - 1).
        let counts = DisjointSlice::new(&mut out.counts);
        self.units.par_iter().for_each(|&unit| {
            self.walk_unit_batches(table, unit, |ranges, batch| {
                let hits = count_batch::<T, K>(self, ranges, batch);
                for j in 0..batch.len {
                    // SAFETY: each sorted position belongs to one bucket, hence one unit's
                    // task, and is < n = counts.len().
                    unsafe { counts.write(batch.slots[j], hits[j] - 1) };
                }
            });
        });
        // Pass 2: counts to offsets in the caller's numbering.
        let offsets = DisjointSlice::new(&mut out.offsets[..n]);
        self.order
            .par_iter()
            .zip(out.counts.par_iter())
            .for_each(|(&i, &count)| {
                // SAFETY: `order` is a permutation of 0..n, so each slot is written once.
                unsafe { offsets.write(i as usize, count as usize) }
            });
        out.finish_offsets();
        // Pass 3: fill each list in place.
        let offsets = &out.offsets;
        let indices = DisjointSlice::new(&mut out.indices);
        let distances = DisjointSlice::new(&mut out.distances);
        let distances = with_distances.then_some(&distances);
        self.units.par_iter().for_each(|&unit| {
            let mut local = LocalLists::new();
            let mut mapped = Batch::new();
            self.walk_unit_batches(table, unit, |ranges, batch| {
                mapped.len = 0;
                for j in 0..batch.len {
                    let p = batch.slots[j];
                    mapped.push(batch.points[j], self.order[p] as usize, p as u32);
                }
                // SAFETY: the slots are order[p] for this unit's positions p; `order` is a
                // permutation, so no other task fills them; the count pass sized them.
                unsafe {
                    fill_batch::<T, K>(
                        self, ranges, &mapped, offsets, &indices, distances, &mut local,
                    )
                };
            });
        });
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
        self.cross_lists(queries.len(), |k| (queries.get(k), k), out, with_distances);
        Ok(())
    }

    /// The neighbour lists of every point of `searching` (another set, built with its own
    /// grid) against this set, in `searching`'s numbering.
    pub fn lists_for(&self, searching: &Grid<T>, out: &mut NeighborLists<T>, with_distances: bool) {
        let searcher = |k: usize| (searching.sorted.point(k), searching.order[k] as usize);
        self.cross_lists(searching.len(), searcher, out, with_distances);
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
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) {
        match self.kernel {
            Kernel::Simd => {
                self.cross_lists_with::<SimdKernel>(count, searcher, out, with_distances)
            }
            Kernel::Scalar => {
                self.cross_lists_with::<ScalarKernel>(count, searcher, out, with_distances)
            }
        }
    }

    /// Calls `visit(ranges, batch)` for searchers `range` grouped into batches of
    /// consecutive searchers in the same bucket; searchers with no possible neighbour are
    /// skipped (their lists stay empty).
    #[inline(always)]
    fn walk_searcher_batches(
        &self,
        table: &CellTable,
        range: std::ops::Range<usize>,
        searcher: &impl Fn(usize) -> ([T; 3], usize),
        mut visit: impl FnMut(&Ranges, &Batch<T>),
    ) {
        let mut batch = Batch::new();
        let mut current: Option<(u32, Ranges)> = None;
        for k in range {
            let (point, slot) = searcher(k);
            let cell = table.coords(point);
            if !table.may_have_neighbours(cell) {
                continue;
            }
            let bucket = table.bucket(cell);
            match &current {
                Some((b, _)) if *b == bucket && batch.len < BATCH => {}
                _ => {
                    if let Some((_, ranges)) = &current
                        && batch.len > 0
                    {
                        visit(ranges, &batch);
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
            visit(ranges, &batch);
        }
    }

    fn cross_lists_with<K: MaskKernel>(
        &self,
        count: usize,
        searcher: impl Fn(usize) -> ([T; 3], usize) + Sync,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) {
        out.reset(count, with_distances);
        let Some(table) = self.table.as_ref() else {
            return;
        };
        let chunks = count.div_ceil(QUERY_CHUNK);
        let chunk_range =
            |chunk: usize| chunk * QUERY_CHUNK..((chunk + 1) * QUERY_CHUNK).min(count);
        // Pass 1: count straight into the offsets, at each searcher's slot.
        let offsets = DisjointSlice::new(&mut out.offsets[..count]);
        (0..chunks).into_par_iter().for_each(|chunk| {
            self.walk_searcher_batches(table, chunk_range(chunk), &searcher, |ranges, batch| {
                let hits = count_batch::<T, K>(self, ranges, batch);
                for j in 0..batch.len {
                    // SAFETY: slots are distinct across searchers (a permutation or the
                    // identity) and < count = offsets.len().
                    unsafe { offsets.write(batch.slots[j], hits[j] as usize) }
                }
            });
        });
        out.finish_offsets();
        // Pass 2: fill.
        let offsets = &out.offsets;
        let indices = DisjointSlice::new(&mut out.indices);
        let distances = DisjointSlice::new(&mut out.distances);
        let distances = with_distances.then_some(&distances);
        (0..chunks).into_par_iter().for_each(|chunk| {
            let mut local = LocalLists::new();
            self.walk_searcher_batches(table, chunk_range(chunk), &searcher, |ranges, batch| {
                // SAFETY: every slot belongs to one searcher, visited by this task alone;
                // the count pass sized the lists with the same grid and kernel.
                unsafe {
                    fill_batch::<T, K>(
                        self, ranges, batch, offsets, &indices, distances, &mut local,
                    )
                };
            });
        });
    }
}
