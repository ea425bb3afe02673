//! The bucket table every scheme of this crate builds: points counting-sorted by bucket into
//! SoA columns, with each point's cell stored alongside and the points of a bucket ordered by
//! cell, so that every occupied cell is one contiguous run of sorted positions.
//!
//! With a hash that is not geometric, neighbouring cells are not neighbouring buckets, and
//! one bucket may hold several cells (a hash collision). Searches therefore look a cell up as
//! a *run*: hash the cell to its bucket, then find the cell's points inside the bucket by
//! comparing stored cells (one comparison when the bucket holds one cell, a binary search
//! otherwise). Points of foreign cells that share the bucket are skipped without a distance
//! test, each cell's points stay contiguous for the 8-lane kernels, and since distinct cells
//! have disjoint runs, a pair is never reported twice even when two neighbour cells of one
//! cell share a bucket.

use hhg_core::building_blocks::{LANES, SortScratch, counting_sort, cut_units};
use hhg_core::{Error, Kernel, PointColumns, Real};
use rayon::prelude::*;

use crate::hash::{CellHasher, MAX_BUCKETS};

/// Points per work unit of a search: units end at bucket borders, so a unit holds about this
/// many points (enough work to hide scheduling, small enough to balance the threads).
pub(crate) const UNIT_POINTS: usize = 2048;

/// How many buckets a table has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableSize {
    /// About this many buckets per point, rounded up to a power of two (at most `2^30`).
    PerPoint(usize),
    /// This many buckets, rounded up to a power of two (at most `2^30`), whatever the
    /// point count: a small table forces heavy aliasing.
    Fixed(usize),
}

impl Default for TableSize {
    /// Two buckets per point.
    fn default() -> Self {
        TableSize::PerPoint(2)
    }
}

impl TableSize {
    /// Refuses zero and tables beyond `2^30` buckets ([`Error::InvalidConfig`]).
    pub fn check(self) -> Result<(), Error> {
        let (name, value) = match self {
            TableSize::PerPoint(k) => ("buckets_per_point", k),
            TableSize::Fixed(b) => ("buckets", b),
        };
        if value == 0 || value > MAX_BUCKETS {
            return Err(Error::InvalidConfig {
                name,
                value: value as f64,
                expected: "between 1 and 2^30",
            });
        }
        Ok(())
    }

    /// The number of buckets for `n` points: a power of two, at least 1, at most `2^30`.
    pub fn buckets(self, n: usize) -> usize {
        let wanted = match self {
            TableSize::PerPoint(k) => n.saturating_mul(k),
            TableSize::Fixed(b) => b,
        };
        wanted
            .clamp(1, MAX_BUCKETS)
            .next_power_of_two()
            .min(MAX_BUCKETS)
    }
}

/// Points sorted by bucket, then by cell inside each bucket, as SoA columns with their
/// caller indices and cells; the bucket starts; and the work units.
#[derive(Debug, Default)]
pub(crate) struct Buckets<T: Real> {
    /// The points in sorted order (padded columns).
    pub(crate) sorted: PointColumns<T>,
    /// The caller's index of each sorted position.
    pub(crate) order: Vec<u32>,
    /// The finest-class cell of each sorted position.
    pub(crate) cells: Vec<[i32; 3]>,
    /// Bucket `b` holds sorted positions `starts[b]..starts[b + 1]`.
    pub(crate) starts: Vec<u32>,
    /// Work units as bucket ranges `lo..hi` of about [`UNIT_POINTS`] points each.
    pub(crate) units: Vec<(u32, u32)>,
    keys: Vec<u32>,
    input_cells: Vec<[i32; 3]>,
    scratch: SortScratch,
}

impl<T: Real> Buckets<T> {
    /// How many points the table holds.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// Empties the table, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        self.order.clear();
        self.cells.clear();
        self.starts.clear();
        self.units.clear();
        // Gathering no point cannot fail.
        let _ = self.sorted.gather_from(&[], &[]);
    }

    /// Builds the table over `points` (all of them, or the caller indices `members`,
    /// ascending): hash 8 lanes at a time, counting-sort by bucket, order each bucket that
    /// holds several cells by cell, gather the sorted columns, cut the work units.
    pub(crate) fn build(
        &mut self,
        points: &[[T; 3]],
        members: Option<&[u32]>,
        hasher: &CellHasher,
        kernel: Kernel,
    ) -> Result<(), Error> {
        let m = members.map_or(points.len(), <[u32]>::len);
        match members {
            Some(members) => hasher.hash_with(
                m,
                |k| points[members[k] as usize],
                kernel,
                &mut self.keys,
                &mut self.input_cells,
            ),
            None => hasher.hash_with(
                m,
                |k| points[k],
                kernel,
                &mut self.keys,
                &mut self.input_cells,
            ),
        }
        counting_sort(
            &self.keys,
            hasher.hash.buckets(),
            &mut self.starts,
            &mut self.order,
            &mut self.scratch,
        );
        // Cells in sorted order, then the local indices mapped to the caller's numbering.
        let input_cells = &self.input_cells;
        self.cells.resize(m, [0; 3]);
        self.cells
            .par_chunks_mut(1 << 14)
            .zip(self.order.par_chunks(1 << 14))
            .for_each(|(cells, order)| {
                for (c, &k) in cells.iter_mut().zip(order) {
                    *c = input_cells[k as usize];
                }
            });
        if let Some(members) = members {
            self.order
                .par_chunks_mut(1 << 14)
                .for_each(|order| order.iter_mut().for_each(|k| *k = members[*k as usize]));
        }
        cut_units(&self.starts, m, UNIT_POINTS, &mut self.units);
        self.order_buckets_by_cell();
        self.sorted.gather_from(points, &self.order)
    }

    /// Orders the points of every bucket that holds several cells by (cell, caller index),
    /// so that each cell is one contiguous run (in parallel over the work units).
    fn order_buckets_by_cell(&mut self) {
        let starts = &self.starts;
        // Each unit owns the sorted positions of its buckets: split the arrays accordingly.
        let mut order_rest = &mut self.order[..];
        let mut cells_rest = &mut self.cells[..];
        let mut pieces = Vec::with_capacity(self.units.len());
        for &(lo, hi) in &self.units {
            let len = (starts[hi as usize] - starts[lo as usize]) as usize;
            let (order, order_tail) = std::mem::take(&mut order_rest).split_at_mut(len);
            let (cells, cells_tail) = std::mem::take(&mut cells_rest).split_at_mut(len);
            order_rest = order_tail;
            cells_rest = cells_tail;
            pieces.push((lo, hi, order, cells));
        }
        pieces.into_par_iter().for_each(|(lo, hi, order, cells)| {
            let base = starts[lo as usize];
            let mut scratch: Vec<([i32; 3], u32)> = Vec::new();
            for b in lo..hi {
                let s = (starts[b as usize] - base) as usize;
                let e = (starts[b as usize + 1] - base) as usize;
                let bucket_cells = &cells[s..e];
                if bucket_cells.windows(2).all(|w| w[0] == w[1]) {
                    continue;
                }
                scratch.clear();
                scratch.extend(
                    bucket_cells
                        .iter()
                        .copied()
                        .zip(order[s..e].iter().copied()),
                );
                scratch.sort_unstable();
                for (k, &(c, i)) in scratch.iter().enumerate() {
                    cells[s + k] = c;
                    order[s + k] = i;
                }
            }
        });
    }

    /// The sorted positions of bucket `b`.
    #[inline(always)]
    pub(crate) fn bucket_range(&self, b: u32) -> (u32, u32) {
        (self.starts[b as usize], self.starts[b as usize + 1])
    }

    /// The run of `cell` in bucket `b`: the sorted positions of the points of that cell
    /// (empty when the bucket holds none; its foreign points are never part of it).
    #[inline(always)]
    pub(crate) fn run(&self, b: u32, cell: [i32; 3]) -> (u32, u32) {
        let (s, e) = self.bucket_range(b);
        if s == e {
            return (s, s);
        }
        let first = self.cells[s as usize];
        let last = self.cells[e as usize - 1];
        if first == last {
            return if first == cell { (s, e) } else { (s, s) };
        }
        let cells = &self.cells[s as usize..e as usize];
        let lo = cells.partition_point(|c| *c < cell) as u32;
        let hi = cells.partition_point(|c| *c <= cell) as u32;
        (s + lo, s + hi)
    }

    /// The runs of several cells at once (`cells[k]` in bucket `keys[k]`, into `out[k]`), in
    /// phases: all bucket bounds, then all first and last cells, then the decisions. The
    /// loads of a phase are independent and no branch depends on a load still in flight, so
    /// the cache misses of all the lookups overlap (a hashed neighbourhood is scattered over
    /// the whole table); [`Buckets::run`] per cell would wait for each miss in turn.
    #[inline(always)]
    pub(crate) fn runs(&self, keys: &[u32], cells: &[[i32; 3]], out: &mut [(u32, u32)]) {
        let n = keys.len();
        debug_assert!(cells.len() == n && out.len() >= n && n <= 27);
        let Some(last) = self.cells.len().checked_sub(1) else {
            out[..n].fill((0, 0));
            return;
        };
        let mut bounds = [(0u32, 0u32); 27];
        for k in 0..n {
            bounds[k] = self.bucket_range(keys[k]);
        }
        let mut ends = [([0i32; 3], [0i32; 3]); 27];
        for k in 0..n {
            let (s, e) = bounds[k];
            ends[k] = (
                self.cells[(s as usize).min(last)],
                self.cells[(e as usize).saturating_sub(1).min(last)],
            );
        }
        for k in 0..n {
            let (s, e) = bounds[k];
            let (first, end) = ends[k];
            out[k] = if s == e {
                (s, s)
            } else if first == end {
                if first == cells[k] { (s, e) } else { (s, s) }
            } else {
                self.run(keys[k], cells[k])
            };
        }
    }

    /// Loads the first candidate of every run (its coordinates and caller index), all at once,
    /// so that the cache misses of scattered runs overlap before the tests walk them in turn.
    #[inline(always)]
    pub(crate) fn touch(&self, runs: &[(u32, u32)]) {
        let Some(last) = self.order.len().checked_sub(1) else {
            return;
        };
        let [x, y, z] = self.sorted.padded();
        let mut sink = T::default();
        let mut ids = 0u32;
        for &(s, e) in runs {
            let s = (s as usize).min(last);
            let e = (e as usize).saturating_sub(1).min(last);
            sink = sink + x[s] + y[s] + z[s] + x[e] + y[e] + z[e];
            ids ^= self.order[s] ^ self.order[e];
        }
        std::hint::black_box((sink, ids));
    }

    /// Calls `visit(start, end, cell)` for every cell run of bucket `b`, in position order.
    #[inline(always)]
    pub(crate) fn for_each_run(&self, b: u32, mut visit: impl FnMut(u32, u32, [i32; 3])) {
        let (s, e) = self.bucket_range(b);
        if s == e {
            return;
        }
        let last = self.cells[e as usize - 1];
        if self.cells[s as usize] == last {
            visit(s, e, last);
            return;
        }
        let mut start = s;
        while start < e {
            let cell = self.cells[start as usize];
            let mut end = start + 1;
            while end < e && self.cells[end as usize] == cell {
                end += 1;
            }
            visit(start, end, cell);
            start = end;
        }
    }

    /// The 8 lanes of each padded column starting at sorted position `base`.
    #[inline(always)]
    pub(crate) fn lanes(&self, base: usize) -> [&[T; 8]; 3] {
        self.sorted
            .padded()
            .map(|column| column[base..base + LANES].try_into().unwrap())
    }
}

/// Validates `points` for a search within `radius` exactly as hhg-core does (too many points,
/// NaN or infinite coordinates, a span beyond the integer cell range) and returns the cell
/// geometry (origin at the bounding box's minimum, cells of edge `radius * (1 + CELL_MARGIN)`),
/// or `None` for no point.
pub(crate) fn cell_geometry<T: Real>(
    points: &[[T; 3]],
    radius: T,
) -> Result<Option<hhg_core::building_blocks::CellTable>, Error> {
    hhg_core::building_blocks::check_count(points.len())?;
    let Some(bounds) = hhg_core::building_blocks::bounds(hhg_core::Points::Aos(points))? else {
        return Ok(None);
    };
    hhg_core::building_blocks::CellTable::choose(
        &bounds,
        points.len(),
        radius.to_f64(),
        hhg_core::Points::Aos(points),
    )
    .map(Some)
}

/// Tells whether cell coordinates may have an occupied cell among their 27 neighbours:
/// occupied cells lie in `0..span` on every axis.
#[inline(always)]
pub(crate) fn near_span(table: &hhg_core::building_blocks::CellTable, c: [i32; 3]) -> bool {
    (0..3).all(|a| c[a] >= -1 && c[a] <= table.span[a])
}

/// The hasher of the last build (`hasher`, `None` while empty) and the cell of the query
/// point `point`, or `None` when no occupied cell can be among that cell's 27 neighbours.
#[inline(always)]
pub(crate) fn query_cell<T: Real>(
    hasher: Option<&CellHasher>,
    point: [T; 3],
) -> Option<(&CellHasher, [i32; 3])> {
    let hasher = hasher?;
    let c = hasher.cell(point);
    near_span(&hasher.table, c).then_some((hasher, c))
}

/// Cell `c` moved by `offset`.
#[inline(always)]
pub(crate) fn add(c: [i32; 3], offset: [i32; 3]) -> [i32; 3] {
    [c[0] + offset[0], c[1] + offset[1], c[2] + offset[2]]
}

/// Refuses a query point with a NaN or infinite coordinate, as hhg-core does (index 0).
pub(crate) fn check_point<T: Real>(point: [T; 3]) -> Result<(), Error> {
    match (0..3).find(|&axis| !point[axis].is_finite()) {
        Some(axis) => Err(Error::NonFiniteCoordinate {
            index: 0,
            axis,
            value: point[axis].to_f64(),
        }),
        None => Ok(()),
    }
}

/// Implements [`FixedRadiusScheme`] for a table scheme of this crate (`XorScheme`,
/// `PoucholScheme`), with the pair collection both share: both keep a `table` of sorted
/// columns, an optional `hasher`, a `kernel` choice and their `pair_buffers`,
/// and provide `build_table`, `walk_unit` and `query_with`; `$candidates` computes
/// `pair_candidates` from `$this`.
macro_rules! impl_fixed_radius_scheme {
    ($scheme:ident, $name:literal, |$this:ident| $candidates:expr) => {
        impl<T: hhg_core::Real> $scheme<T> {
            /// The unit's pairs in the caller's numbering, `[min, max]`, appended to `out`.
            fn unit_pairs<K: $crate::kernel::MaskKernel>(
                &self,
                hasher: &$crate::hash::CellHasher,
                u: usize,
                out: &mut hhg_core::PairSink,
            ) {
                let order = &self.table.order;
                self.walk_unit::<K>(hasher, self.table.units[u], &mut |p, q| {
                    let (i, j) = (order[p as usize], order[q as usize]);
                    out.push(if i < j { [i, j] } else { [j, i] });
                });
            }

            /// Every pair, in unit order, with kernel `K`.
            fn pairs_with<K: $crate::kernel::MaskKernel>(
                &self,
                out: &mut hhg_core::PairList<T>,
            ) -> Result<(), hhg_core::Error> {
                let Some(hasher) = self.hasher.as_ref() else {
                    return out.collect_units(0, |_, _| {});
                };
                out.collect_units(self.table.units.len(), |u, sink| {
                    self.unit_pairs::<K>(hasher, u, sink)
                })
            }
        }

        impl<T: hhg_core::Real> hhg_core::FixedRadiusScheme<T> for $scheme<T> {
            fn name(&self) -> &'static str {
                $name
            }

            fn radius(&self) -> T {
                self.radius
            }

            fn build(&mut self, points: &[[T; 3]]) -> Result<(), hhg_core::Error> {
                self.build_table(points)
            }

            fn len(&self) -> usize {
                self.table.len()
            }

            fn pairs(&self, out: &mut hhg_core::PairList<T>) -> Result<(), hhg_core::Error> {
                match self.kernel {
                    hhg_core::Kernel::Simd => self.pairs_with::<$crate::kernel::SimdKernel>(out),
                    hhg_core::Kernel::Scalar => {
                        self.pairs_with::<$crate::kernel::ScalarKernel>(out)
                    }
                }
            }

            fn neighbor_lists(
                &self,
                out: &mut hhg_core::NeighborLists<T>,
            ) -> Result<(), hhg_core::Error> {
                out.assign_from_pair_search(self.len(), |pairs| self.pairs(pairs))
            }

            fn for_each_pair(&self, visit: &mut dyn FnMut(u32, u32)) {
                let Some(hasher) = self.hasher.as_ref() else {
                    return;
                };
                let order = &self.table.order;
                let mut emit = |p: u32, q: u32| {
                    let (i, j) = (order[p as usize], order[q as usize]);
                    if i < j { visit(i, j) } else { visit(j, i) }
                };
                for &unit in &self.table.units {
                    match self.kernel {
                        hhg_core::Kernel::Simd => {
                            self.walk_unit::<$crate::kernel::SimdKernel>(hasher, unit, &mut emit)
                        }
                        hhg_core::Kernel::Scalar => {
                            self.walk_unit::<$crate::kernel::ScalarKernel>(hasher, unit, &mut emit)
                        }
                    }
                }
            }

            fn query_point(
                &self,
                point: [T; 3],
                out: &mut Vec<u32>,
            ) -> Result<(), hhg_core::Error> {
                $crate::table::check_point(point)?;
                out.clear();
                match self.kernel {
                    hhg_core::Kernel::Simd => {
                        self.query_with::<$crate::kernel::SimdKernel>(point, out)
                    }
                    hhg_core::Kernel::Scalar => {
                        self.query_with::<$crate::kernel::ScalarKernel>(point, out)
                    }
                }
                out.sort_unstable();
                Ok(())
            }

            fn stats(&self) -> hhg_core::SchemeStats {
                let mut stats = hhg_core::SchemeStats::from_starts(&self.table.starts);
                let $this = self;
                stats.pair_candidates = $candidates;
                stats
            }
        }
    };
}

pub(crate) use impl_fixed_radius_scheme;

/// The setters and accessors that `XorScheme` and `PoucholScheme` share, as methods of the
/// impl block the macro stands in: both keep a table `size`, a `kernel` choice, an optional
/// `hasher` and a `table` of sorted columns. `hasher` and `sorted_cells` take their
/// documentation from the caller (Pouchol's cells are those of class 0).
macro_rules! table_accessors {
    (hasher: $hasher_doc:literal, sorted_cells: $cells_doc:literal $(,)?) => {
        /// Sets the table size of later builds.
        pub fn set_table_size(&mut self, size: $crate::TableSize) -> Result<(), hhg_core::Error> {
            size.check()?;
            self.size = size;
            Ok(())
        }

        /// Chooses the SIMD (default) or the scalar reference kernel for hashing and distance
        /// tests; both give identical results.
        pub fn set_kernel(&mut self, kernel: hhg_core::Kernel) {
            self.kernel = kernel;
        }

        /// The kernel in use.
        pub fn kernel(&self) -> hhg_core::Kernel {
            self.kernel
        }

        #[doc = $hasher_doc]
        pub fn hasher(&self) -> Option<&$crate::CellHasher> {
            self.hasher.as_ref()
        }

        /// The caller's index of each sorted position (points sorted by bucket, then cell).
        pub fn order(&self) -> &[u32] {
            &self.table.order
        }

        /// The points in sorted order, as padded SoA columns.
        pub fn sorted_points(&self) -> &hhg_core::PointColumns<T> {
            &self.table.sorted
        }

        #[doc = $cells_doc]
        pub fn sorted_cells(&self) -> &[[i32; 3]] {
            &self.table.cells
        }

        /// The bucket starts of the last build: bucket `b` holds sorted positions
        /// `starts[b]..starts[b + 1]`.
        pub fn bucket_starts(&self) -> &[u32] {
            &self.table.starts
        }
    };
}

pub(crate) use table_accessors;
