//! Unique pairs by the half neighbourhood: each occupied bucket against itself and its 13
//! forward neighbours of 26, so every pair is found exactly once and nothing is deduplicated.

use rayon::prelude::*;

use crate::geometry::{CellTable, Kernel};
use crate::grid::Grid;
use crate::kernel::{BATCH, MaskKernel, ScalarKernel, SimdKernel, for_each_hit, scan_batch};
use crate::parallel::{DisjointSlice, exclusive_scan};
use crate::real::Real;

/// Unique neighbour pairs `[i, j]` with `i < j` in the caller's numbering, optionally with
/// their squared distances. The order is deterministic (the same for any thread count);
/// reuse one value across steps, its buffers only grow.
#[derive(Clone, Debug, Default)]
pub struct PairList<T: Real> {
    pairs: Vec<[u32; 2]>,
    distances: Vec<T>,
    has_distances: bool,
    unit_offsets: Vec<usize>,
    scan: Vec<usize>,
}

impl<T: Real> PairList<T> {
    /// The pairs, `i < j` in each.
    pub fn pairs(&self) -> &[[u32; 2]] {
        &self.pairs
    }

    /// Squared distances alongside `pairs()`, when they were requested.
    pub fn distances_squared(&self) -> Option<&[T]> {
        self.has_distances.then_some(&self.distances[..])
    }

    /// How many pairs there are.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Tells whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

impl<T: Real> Grid<T> {
    /// Walks the pairs of one work unit, bucket by bucket: each point against the later
    /// points of its bucket, then the bucket's points in batches against its 13 forward
    /// neighbours. Calls `visit(p, block_start, mask)` for each block with hits.
    #[inline(always)]
    fn walk_unit_forward<K: MaskKernel>(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        mut visit: impl FnMut(u32, u32, u32),
    ) {
        let columns = self.sorted.padded();
        let mut batch = [[T::default(); 3]; BATCH];
        for b in unit.0..unit.1 {
            let (start, end) = self.bucket_range(b);
            if start == end {
                continue;
            }
            for p in start..end - 1 {
                let point = [self.sorted.point(p as usize)];
                scan_batch::<T, K>(
                    columns,
                    &point,
                    self.r2,
                    &[(p + 1, end)],
                    |_, base, mask| {
                        if mask != 0 {
                            visit(p, base, mask)
                        }
                    },
                );
            }
            let ranges = self.forward_neighbourhood(table, b, table.bucket_coords(b));
            let mut first = start;
            while first < end {
                let len = (end - first).min(BATCH as u32);
                for (j, slot) in batch[..len as usize].iter_mut().enumerate() {
                    *slot = self.sorted.point(first as usize + j);
                }
                scan_batch::<T, K>(
                    columns,
                    &batch[..len as usize],
                    self.r2,
                    ranges.as_slice(),
                    |j, base, mask| {
                        if mask != 0 {
                            visit(first + j as u32, base, mask)
                        }
                    },
                );
                first += len;
            }
        }
    }

    /// Every unique pair within the radius, into `out` (reusing its buffers).
    pub fn pairs(&self, out: &mut PairList<T>) {
        self.pairs_impl(out, false);
    }

    /// Like [`Grid::pairs`], with the squared distance of every pair.
    pub fn pairs_with_distances(&self, out: &mut PairList<T>) {
        self.pairs_impl(out, true);
    }

    fn pairs_impl(&self, out: &mut PairList<T>, with_distances: bool) {
        match self.kernel {
            Kernel::Simd => self.pairs_with::<SimdKernel>(out, with_distances),
            Kernel::Scalar => self.pairs_with::<ScalarKernel>(out, with_distances),
        }
    }

    fn pairs_with<K: MaskKernel>(&self, out: &mut PairList<T>, with_distances: bool) {
        out.has_distances = with_distances;
        out.pairs.clear();
        out.distances.clear();
        let Some(table) = self.table.as_ref() else {
            return;
        };
        // Pass 1: pairs per unit.
        out.unit_offsets.clear();
        out.unit_offsets.resize(self.units.len() + 1, 0);
        out.unit_offsets[..self.units.len()]
            .par_iter_mut()
            .zip(self.units.par_iter())
            .for_each(|(count, &unit)| {
                let mut pairs = 0usize;
                self.walk_unit_forward::<K>(table, unit, |_, _, mask| {
                    pairs += mask.count_ones() as usize
                });
                *count = pairs;
            });
        let units = self.units.len();
        let total = exclusive_scan(&mut out.unit_offsets[..units], &mut out.scan);
        out.unit_offsets[units] = total;
        out.pairs.resize(total, [0, 0]);
        if with_distances {
            out.distances.resize(total, T::default());
        }
        // Pass 2: each unit fills its own range.
        let pairs = DisjointSlice::new(&mut out.pairs);
        let distances = DisjointSlice::new(&mut out.distances);
        let unit_offsets = &out.unit_offsets;
        self.units.par_iter().enumerate().for_each(|(u, &unit)| {
            let (start, len) = (unit_offsets[u], unit_offsets[u + 1] - unit_offsets[u]);
            // SAFETY: unit u owns pairs start..start + len; the ranges partition 0..total.
            let pairs = unsafe { pairs.range_mut(start, len) };
            // SAFETY: as above, for the distances when requested (same layout).
            let mut dist = with_distances.then(|| unsafe { distances.range_mut(start, len) });
            let mut k = 0;
            self.walk_unit_forward::<K>(table, unit, |p, base, mask| {
                let i = self.order[p as usize];
                for_each_hit(base, mask, |q| {
                    let j = self.order[q as usize];
                    pairs[k] = if i < j { [i, j] } else { [j, i] };
                    if let Some(dist) = dist.as_deref_mut() {
                        dist[k] = T::distance_squared(
                            self.sorted.point(p as usize),
                            self.sorted.point(q as usize),
                        );
                    }
                    k += 1;
                });
            });
            debug_assert_eq!(k, len, "count and fill passes disagree");
        });
    }

    /// Calls `visit(i, j, d2)` once for every unique pair (`i < j`, caller's numbering),
    /// sequentially and in the same deterministic order as [`Grid::pairs`]; stores nothing.
    pub fn for_each_pair(&self, mut visit: impl FnMut(u32, u32, T)) {
        let Some(table) = self.table.as_ref() else {
            return;
        };
        for &unit in &self.units {
            self.walk_unit_forward::<SimdKernel>(table, unit, |p, base, mask| {
                let i = self.order[p as usize];
                let point = self.sorted.point(p as usize);
                for_each_hit(base, mask, |q| {
                    let j = self.order[q as usize];
                    let d2 = T::distance_squared(point, self.sorted.point(q as usize));
                    if i < j {
                        visit(i, j, d2)
                    } else {
                        visit(j, i, d2)
                    }
                });
            });
        }
    }

    /// Calls `visit(i, j, d2)` once for every unique pair, in parallel and in no fixed order;
    /// stores nothing.
    pub fn par_for_each_pair(&self, visit: impl Fn(u32, u32, T) + Sync) {
        let Some(table) = self.table.as_ref() else {
            return;
        };
        self.units.par_iter().for_each(|&unit| {
            self.walk_unit_forward::<SimdKernel>(table, unit, |p, base, mask| {
                let i = self.order[p as usize];
                let point = self.sorted.point(p as usize);
                for_each_hit(base, mask, |q| {
                    let j = self.order[q as usize];
                    let d2 = T::distance_squared(point, self.sorted.point(q as usize));
                    if i < j {
                        visit(i, j, d2)
                    } else {
                        visit(j, i, d2)
                    }
                });
            });
        });
    }
}
