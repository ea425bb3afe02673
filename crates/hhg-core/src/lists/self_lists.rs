//! The neighbour lists of a set against itself: the entry points, and the choice of the
//! pass (input in cell order, nearly in cell order, or in any order).

use rayon::prelude::*;

use super::{ListOrder, ListPass, NeighborLists, UnitBuffer};
use crate::dispatch::KernelTask;
use crate::error::Error;
use crate::geometry::{CellTable, Kernel};
use crate::grid::Grid;
use crate::kernel::{MaskKernel, ScalarKernel, SimdKernel};
use crate::real::Real;

/// The points of work unit `unit` (bucket range) searching their own set; the list of sorted
/// position `p` is output list `list_of(p)`; the positions `exceptions` (ascending, inside
/// the unit) search nothing and get empty lists.
pub(super) struct UnitTask<'a, F> {
    pub(super) table: &'a CellTable,
    pub(super) unit: (u32, u32),
    pub(super) exceptions: &'a [u32],
    pub(super) list_of: F,
}

impl<T: Real, F: Fn(usize) -> usize + Copy> KernelTask<T> for UnitTask<'_, F> {
    type Buffer = UnitBuffer<T>;

    #[inline(always)]
    fn run<K: MaskKernel>(&self, grid: &Grid<T>, buffer: &mut UnitBuffer<T>, with_distances: bool) {
        grid.gather_unit_with::<K>(
            self.table,
            self.unit,
            self.exceptions,
            buffer,
            with_distances,
            self.list_of,
        );
    }
}

impl<T: Real> Grid<T> {
    /// The neighbour lists of every point of the set against the set itself, excluding the
    /// point itself: `out.neighbors(i)` holds every `j != i` within the radius of `i`.
    ///
    /// Fails with [`Error::OutOfMemory`] when the lists (or their scratch) cannot be
    /// allocated, and with [`Error::OutputTooLarge`] past the lists' cap
    /// ([`NeighborLists::set_max_entries`]); `out` then holds no list and the grid is
    /// unchanged. Lists larger than memory can be taken in chunks
    /// ([`Grid::neighbor_lists_in_chunks`]).
    pub fn neighbor_lists(&self, out: &mut NeighborLists<T>) -> Result<(), Error> {
        self.self_lists(out, false)
    }

    /// Like [`Grid::neighbor_lists`], with the squared distance of every entry.
    pub fn neighbor_lists_with_distances(&self, out: &mut NeighborLists<T>) -> Result<(), Error> {
        self.self_lists(out, true)
    }

    pub(super) fn self_lists(
        &self,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        let result = match self.kernel {
            Kernel::Simd => self.self_lists_with::<SimdKernel>(out, with_distances),
            Kernel::Scalar => self.self_lists_with::<ScalarKernel>(out, with_distances),
        };
        if result.is_err() {
            out.clear_after_failure();
        }
        result
    }

    /// Which pass [`Grid::neighbor_lists`] takes on the grid as built: chosen from how well
    /// the caller's numbering keeps the points of a cell together.
    pub fn list_pass(&self) -> ListPass {
        if self.table.is_none() {
            ListPass::Empty
        } else if self.in_cell_order {
            ListPass::InCellOrder
        } else if self.list_order == ListOrder::Ascending && self.few_exceptions() {
            ListPass::InCellOrderWithExceptions
        } else if self.nearly_in_cell_order() {
            ListPass::NearCellOrder
        } else {
            ListPass::General
        }
    }

    fn self_lists_with<K: MaskKernel>(
        &self,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        // Input in cell order: each unit's lists go into place while hot (see `in_order`).
        if let (true, Some(table)) = (self.in_cell_order, self.table.as_ref()) {
            return self.self_lists_in_order::<K>(table, out, with_distances);
        }
        // Input in cell order but for a few points: the caller's numbering as the order,
        // the exceptions searched apart (see `exceptions`).
        if !with_distances
            && self.list_order == ListOrder::Ascending
            && let Some(table) = self.table.as_ref()
            && let Some(result) = self.self_lists_with_exceptions::<K>(table, out)
        {
            return result;
        }
        // Input nearly in cell order: units of the caller's numbering, placed while hot.
        if let Some(table) = self.table.as_ref()
            && self.nearly_in_cell_order()
        {
            return self.self_lists_near_order::<K>(table, out, with_distances);
        }
        let n = self.len();
        let units = self.units.len();
        out.reset(n, units, with_distances)?;
        let Some(table) = self.table.as_ref() else {
            out.clear_entries();
            return Ok(());
        };
        let build = self.run_time_build::<K>();
        let cap = out.cap();
        self.units
            .par_iter()
            .zip(out.buffers[..units].par_iter_mut())
            .for_each(|(&unit, buffer)| {
                buffer.start(self.unit_points(unit), cap);
                buffer.room_to_pack::<K>();
                // The batch's slots are sorted positions; lists go to caller indices.
                let list_of = |p: usize| self.order[p] as usize;
                let task = UnitTask {
                    table,
                    unit,
                    exceptions: &[],
                    list_of,
                };
                self.run_task::<K, _>(&task, buffer, with_distances, build);
            });
        out.assemble(units)
    }
}
