//! Neighbour lists in chunks: the lists of a run of the grid's cells at a time, handed to
//! the caller one chunk after the other, so that lists larger than memory can be streamed
//! (written out, reduced, summed over) with memory for one chunk only.

use super::in_order::{UnitsInSequence, lists_in_sequence};
use super::self_lists::UnitTask;
use super::{NeighborLists, UnitBuffer};
use crate::error::Error;
use crate::geometry::Kernel;
use crate::grid::Grid;
use crate::kernel::{MaskKernel, ScalarKernel, SimdKernel};
use crate::real::Real;

/// The lists of one chunk of [`Grid::neighbor_lists_in_chunks`]: list `k` of
/// [`ListChunk::lists`] is the list of the caller's point [`ListChunk::points`]`[k]`.
#[derive(Clone, Copy, Debug)]
pub struct ListChunk<'a, T: Real> {
    /// Where the chunk's points start in the grid's cell order ([`Grid::order`]).
    first: usize,
    points: &'a [u32],
    lists: &'a NeighborLists<T>,
}

impl<'a, T: Real> ListChunk<'a, T> {
    /// The caller's index of the point of each list of the chunk, in list order: the
    /// chunk's stretch of [`Grid::order`] (for input in cell order, consecutive indices).
    pub fn points(&self) -> &'a [u32] {
        self.points
    }

    /// The chunk's lists: list `k` belongs to `points()[k]`; entries are numbered, ordered
    /// and (when requested) paired with distances as in [`Grid::neighbor_lists`].
    pub fn lists(&self) -> &'a NeighborLists<T> {
        self.lists
    }

    /// Where the chunk starts in the grid's cell order: its lists are those of the points
    /// at sorted positions `first()..first() + points().len()`.
    pub fn first(&self) -> usize {
        self.first
    }
}

impl<T: Real> Grid<T> {
    /// The lists of [`Grid::neighbor_lists`], a chunk at a time: the points are taken in the
    /// grid's cell order, in chunks of whole work units of about `points_per_chunk` points
    /// (at least one unit), and `visit` gets each chunk's lists as soon as they are made, in
    /// order; `lists` holds one chunk at a time, so the memory is that of the largest chunk
    /// however large all the lists would be. Every point's list is in exactly one chunk.
    ///
    /// The lists of a chunk are made in parallel, as the whole lists are; for input in cell
    /// order each chunk is a range of the caller's points. A cap on `lists`
    /// ([`NeighborLists::set_max_entries`]) applies to each chunk.
    ///
    /// Fails with [`Error::OutOfMemory`] or [`Error::OutputTooLarge`] where a chunk's lists
    /// cannot be made; the chunks before it were visited, `lists` is left empty and the grid
    /// unchanged.
    ///
    /// ```
    /// use hhg_core::{Grid, NeighborLists};
    /// let points: Vec<[f32; 3]> = (0..1000).map(|i| [i as f32 * 0.1, 0.0, 0.0]).collect();
    /// let mut grid = Grid::new(0.25f32)?;
    /// grid.build(&points)?;
    /// let mut lists = NeighborLists::default();
    /// let mut entries = 0;
    /// grid.neighbor_lists_in_chunks(100, &mut lists, |chunk| {
    ///     for (k, &i) in chunk.points().iter().enumerate() {
    ///         assert!(chunk.lists().neighbors(k).iter().all(|&j| j != i));
    ///     }
    ///     entries += chunk.lists().total();
    /// })?;
    /// // Four neighbours within 0.25 of each inner point (at 0.1 and 0.2 on either side).
    /// assert_eq!(entries, 4 * 996 + 2 * 3 + 2 * 2);
    /// # Ok::<(), hhg_core::Error>(())
    /// ```
    pub fn neighbor_lists_in_chunks(
        &self,
        points_per_chunk: usize,
        lists: &mut NeighborLists<T>,
        visit: impl FnMut(ListChunk<'_, T>),
    ) -> Result<(), Error> {
        self.lists_in_chunks(points_per_chunk, lists, false, visit)
    }

    /// [`Grid::neighbor_lists_in_chunks`] with the squared distance of every entry.
    pub fn neighbor_lists_with_distances_in_chunks(
        &self,
        points_per_chunk: usize,
        lists: &mut NeighborLists<T>,
        visit: impl FnMut(ListChunk<'_, T>),
    ) -> Result<(), Error> {
        self.lists_in_chunks(points_per_chunk, lists, true, visit)
    }

    fn lists_in_chunks(
        &self,
        points_per_chunk: usize,
        lists: &mut NeighborLists<T>,
        with_distances: bool,
        mut visit: impl FnMut(ListChunk<'_, T>),
    ) -> Result<(), Error> {
        let Some(_) = self.table.as_ref() else {
            // No point: no chunk.
            lists.clear_after_failure();
            return Ok(());
        };
        let mut unit = 0;
        while unit < self.units.len() {
            let first_unit = unit;
            let mut points = 0;
            while unit < self.units.len() && (unit == first_unit || points < points_per_chunk) {
                points += self.unit_points(self.units[unit]);
                unit += 1;
            }
            let result = match self.kernel {
                Kernel::Simd => {
                    self.chunk_lists::<SimdKernel>(first_unit..unit, lists, with_distances)
                }
                Kernel::Scalar => {
                    self.chunk_lists::<ScalarKernel>(first_unit..unit, lists, with_distances)
                }
            };
            if let Err(error) = result {
                lists.clear_after_failure();
                return Err(error);
            }
            let first = self.starts[self.units[first_unit].0 as usize] as usize;
            visit(ListChunk {
                first,
                points: &self.order[first..first + points],
                lists,
            });
        }
        Ok(())
    }

    /// The lists of the points of work units `units` into `out`, list `k` for sorted
    /// position `first + k` (`first` the units' first position).
    fn chunk_lists<K: MaskKernel>(
        &self,
        units: std::ops::Range<usize>,
        out: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        let table = self.table.as_ref().expect("a grid with points has a table");
        let build = self.run_time_build::<K>();
        let own = &self.units[units];
        let first = self.starts[own[0].0 as usize] as usize;
        let count: usize = own.iter().map(|&unit| self.unit_points(unit)).sum();
        let sequence = UnitsInSequence {
            count: own.len(),
            first_list: |unit: usize| self.starts[own[unit].0 as usize] as usize - first,
            points: |unit: usize| self.unit_points(own[unit]),
            gather: |unit: usize, buffer: &mut UnitBuffer<T>| {
                buffer.room_to_pack::<K>();
                let task = UnitTask {
                    table,
                    unit: own[unit],
                    exceptions: &[],
                    list_of: |p: usize| p - first,
                };
                self.run_task::<K, _>(&task, buffer, with_distances, build);
            },
        };
        lists_in_sequence(count, &sequence, out, with_distances)
    }
}
