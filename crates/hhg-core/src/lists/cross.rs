//! The neighbour lists of points that are not the set itself: query points, and every point
//! of another set, in the searchers' numbering.

use rayon::prelude::*;

use super::gather::{Batch, gather_batch};
use super::in_order::{self, UnitsInSequence};
use super::{NeighborLists, UnitBuffer};
use crate::dispatch::KernelTask;
use crate::error::Error;
use crate::geometry::{CellTable, Kernel, Points, first_non_finite};
use crate::grid::{Grid, Ranges};
use crate::kernel::{BATCH, MaskKernel, ScalarKernel, SimdKernel, for_each_hit, scan_batch};
use crate::real::Real;

/// Query points per work unit.
const QUERY_UNIT: usize = 1024;

/// How the searchers of a cross search map to lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SearcherOrder {
    /// Searcher `k` is list `k`: each unit's lists are consecutive.
    ListOrder,
    /// Searchers map to lists in any order.
    Any,
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
    type Buffer = UnitBuffer<T>;

    #[inline(always)]
    fn run<K: MaskKernel>(&self, grid: &Grid<T>, buffer: &mut UnitBuffer<T>, with_distances: bool) {
        let range = self.range.clone();
        grid.gather_searchers_with::<K>(
            self.table,
            range,
            self.searcher,
            buffer,
            with_distances,
            self.record_empty,
        );
    }
}

impl<T: Real> Grid<T> {
    /// The neighbour lists of arbitrary query points against this set: `out.neighbors(k)`
    /// holds every point of the set within the radius of `queries[k]`.
    pub fn query(&self, queries: &[[T; 3]], out: &mut NeighborLists<T>) -> Result<(), Error> {
        self.query_points_into(Points::Aos(queries), out, false)
    }

    /// [`Grid::query`] with the squared distances.
    pub fn query_with_distances(
        &self,
        queries: &[[T; 3]],
        out: &mut NeighborLists<T>,
    ) -> Result<(), Error> {
        self.query_points_into(Points::Aos(queries), out, true)
    }

    /// [`Grid::query`] for query points in any layout.
    pub fn query_points(
        &self,
        queries: Points<'_, T>,
        out: &mut NeighborLists<T>,
    ) -> Result<(), Error> {
        self.query_points_into(queries, out, false)
    }

    /// [`Grid::query_points`] with the squared distances.
    pub fn query_points_with_distances(
        &self,
        queries: Points<'_, T>,
        out: &mut NeighborLists<T>,
    ) -> Result<(), Error> {
        self.query_points_into(queries, out, true)
    }

    /// The lists of `queries`, checked first.
    fn query_points_into(
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
        self.cross_lists(queries.len(), searcher, order, out, with_distances)
    }

    /// The neighbour lists of every point of `searching` (another set, built with its own
    /// grid) against this set, in `searching`'s numbering.
    ///
    /// Fails as [`Grid::neighbor_lists`] does, for want of memory or past the lists' cap.
    pub fn lists_for(&self, searching: &Grid<T>, out: &mut NeighborLists<T>) -> Result<(), Error> {
        self.lists_for_into(searching, out, false)
    }

    /// [`Grid::lists_for`] with the squared distances.
    pub fn lists_for_with_distances(
        &self,
        searching: &Grid<T>,
        out: &mut NeighborLists<T>,
    ) -> Result<(), Error> {
        self.lists_for_into(searching, out, true)
    }

    /// The lists of `searching` against this set, with distances if asked.
    pub(crate) fn lists_for_into(
        &self,
        searching: &Grid<T>,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        let n = searching.len();
        if searching.in_cell_order {
            // Sorted positions are the searching set's numbering.
            let searcher = |k: usize| (searching.sorted.point(k), k);
            self.cross_lists(n, searcher, SearcherOrder::ListOrder, out, with_distances)
        } else if searching.table.is_some() && searching.nearly_in_cell_order() {
            // The searching set in its own numbering, which keeps its cells together.
            let mut inverse = std::mem::take(&mut out.inverse);
            searching.inverse_order(&mut inverse);
            let searcher = |i: usize| (searching.sorted.point(inverse[i] as usize), i);
            let result =
                self.cross_lists(n, searcher, SearcherOrder::ListOrder, out, with_distances);
            out.inverse = inverse;
            result
        } else {
            // The searching set in cell order, to batch the points of its cells.
            let searcher = |k: usize| (searching.sorted.point(k), searching.order[k] as usize);
            self.cross_lists(n, searcher, SearcherOrder::Any, out, with_distances)
        }
    }

    /// The points of the set within the radius of `point`, ascending, into `out` (cleared
    /// first), with the grid's kernel ([`Grid::set_kernel`]). A non-finite coordinate is an
    /// error, and `out` is left as it was.
    pub fn query_point(&self, point: [T; 3], out: &mut Vec<u32>) -> Result<(), Error> {
        self.check_query_point(point)?;
        out.clear();
        self.visit_query_point(point, |q| out.push(self.order[q as usize]));
        out.sort_unstable();
        Ok(())
    }

    /// [`Grid::query_point`] with the squared distances: `distances[k]` belongs to `out[k]`
    /// (both cleared first).
    pub fn query_point_with_distances(
        &self,
        point: [T; 3],
        out: &mut Vec<u32>,
        distances: &mut Vec<T>,
    ) -> Result<(), Error> {
        self.check_query_point(point)?;
        // Sorted positions first, ordered by their caller index; the distances follow them
        // (the kernel's formula on the same coordinates), then the indices replace them.
        out.clear();
        self.visit_query_point(point, |q| out.push(q));
        out.sort_unstable_by_key(|&q| self.order[q as usize]);
        distances.clear();
        distances.extend(
            out.iter()
                .map(|&q| T::distance_squared(point, self.sorted.point(q as usize))),
        );
        for q in out.iter_mut() {
            *q = self.order[*q as usize];
        }
        Ok(())
    }

    /// An error for a query point with a non-finite coordinate.
    fn check_query_point(&self, point: [T; 3]) -> Result<(), Error> {
        match first_non_finite(Points::Aos(&[point])) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Calls `visit(q)` for the sorted position `q` of every point within the radius of the
    /// finite `point`, in no particular order, with the grid's kernel.
    fn visit_query_point(&self, point: [T; 3], visit: impl FnMut(u32)) {
        match self.kernel {
            Kernel::Simd => self.query_point_with::<SimdKernel>(point, visit),
            Kernel::Scalar => self.query_point_with::<ScalarKernel>(point, visit),
        }
    }

    /// [`Grid::visit_query_point`] with kernel `K`.
    fn query_point_with<K: MaskKernel>(&self, point: [T; 3], mut visit: impl FnMut(u32)) {
        let Some(table) = self.table.as_ref() else {
            return;
        };
        let cell = table.coords(point);
        if !table.may_have_neighbours(cell) {
            return;
        }
        let ranges = self.full_neighbourhood(table, table.bucket_coords(table.bucket(cell)));
        let columns = self.sorted.padded();
        scan_batch::<T, K>(
            columns,
            &[point],
            self.r2,
            ranges.as_slice(),
            |_, base, mask| {
                for_each_hit(base, mask, &mut visit);
            },
        );
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
    ) -> Result<(), Error> {
        let result = match self.kernel {
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
        };
        if result.is_err() {
            out.clear_after_failure();
        }
        result
    }

    /// Gathers into `buffer` with kernel `K` the lists of searchers `range`, in batches of
    /// consecutive searchers in the same bucket; searchers with no possible neighbour are
    /// skipped (their lists stay empty). No closure on the way to the kernels, as in
    /// [`Grid::gather_unit_with`].
    #[inline(always)]
    fn gather_searchers_with<K: MaskKernel>(
        &self,
        table: &CellTable,
        range: std::ops::Range<usize>,
        searcher: &impl Fn(usize) -> ([T; 3], usize),
        buffer: &mut UnitBuffer<T>,
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
                        gather_batch::<T, K>(self, ranges, &batch, buffer, with_distances, |k| k);
                    }
                    batch.len = 0;
                    buffer.push_list(slot, 0);
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
                        gather_batch::<T, K>(self, ranges, &batch, buffer, with_distances, |k| k);
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
            gather_batch::<T, K>(self, ranges, &batch, buffer, with_distances, |k| k);
        }
    }

    fn cross_lists_with<K: MaskKernel>(
        &self,
        count: usize,
        searcher: impl Fn(usize) -> ([T; 3], usize) + Sync,
        searcher_order: SearcherOrder,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        let units = count.div_ceil(QUERY_UNIT);
        let Some(table) = self.table.as_ref() else {
            out.reset(count, units, with_distances)?;
            out.clear_entries();
            return Ok(());
        };
        let build = self.run_time_build::<K>();
        if searcher_order == SearcherOrder::ListOrder {
            // Each unit's lists are consecutive: they go into place while hot.
            let unit_range = |unit: usize| unit * QUERY_UNIT..((unit + 1) * QUERY_UNIT).min(count);
            let sequence = UnitsInSequence {
                count: units,
                first_list: |unit: usize| unit * QUERY_UNIT,
                points: |unit: usize| unit_range(unit).len(),
                gather: |unit: usize, buffer: &mut UnitBuffer<T>| {
                    buffer.room_to_pack::<K>();
                    let task = SearcherTask {
                        table,
                        range: unit_range(unit),
                        searcher: &searcher,
                        record_empty: true,
                    };
                    self.run_task::<K, _>(&task, buffer, with_distances, build);
                },
            };
            return in_order::lists_in_sequence(count, &sequence, out, with_distances);
        }
        out.reset(count, units, with_distances)?;
        let cap = out.cap();
        out.buffers[..units]
            .par_iter_mut()
            .enumerate()
            .for_each(|(unit, buffer)| {
                let range = unit * QUERY_UNIT..((unit + 1) * QUERY_UNIT).min(count);
                buffer.start(range.len(), cap);
                buffer.room_to_pack::<K>();
                let task = SearcherTask {
                    table,
                    range,
                    searcher: &searcher,
                    record_empty: false,
                };
                self.run_task::<K, _>(&task, buffer, with_distances, build);
            });
        out.assemble(units)
    }
}
