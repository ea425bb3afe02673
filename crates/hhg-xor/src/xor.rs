//! [`XorScheme`]: fixed-radius search on a table addressed by the XOR-of-primes hash
//! (Teschner et al. 2003) instead of hhg-core's geometric hashing.
//!
//! # Design
//!
//! Cells are cubes of edge `r * (1 + CELL_MARGIN)` with the origin at the bounding box's
//! minimum, exactly as in hhg-core, so a pair within `r` is at most one cell apart per axis.
//! A cell `(ix, iy, iz)` goes to bucket `((ix * p1) ^ (iy * p2) ^ (iz * p3)) mod n` with
//! wrapping 32-bit multiplies and `n` a power of two (about 2 buckets per point by default).
//!
//! - **Build**: validate like hhg-core (same errors), compute every point's cell and bucket 8
//!   lanes at a time, counting-sort by bucket with [`hhg_core::building_blocks::counting_sort`], order the
//!   buckets that hold several cells by cell (see the crate docs: every cell becomes one
//!   contiguous run), and gather the sorted SoA columns with
//!   [`hhg_core::PointColumns::gather_from`]. Lookups of a cell's neighbourhood are made
//!   together, so that the cache misses of its scattered buckets overlap.
//! - **Pairs**: per occupied bucket, per cell run in it, the run's points against the later
//!   points of the run and against the runs of the 13 forward neighbour cells, each hashed to
//!   its bucket and looked up by cell (foreign cells sharing the bucket are skipped; two
//!   neighbour cells in one bucket are two disjoint runs), 8 lanes at a time with hhg-core's
//!   kernels. Work units are bucket ranges cut by point count, each filling its own buffer;
//!   the buffers are concatenated in unit order, so the order never depends on the threads.
//! - **Queries**: the 27 cells around the query's cell, each looked up the same way.
//!
//! Unlike geometric hashing, neighbouring cells land in unrelated buckets: a cell's
//! neighbourhood costs 13 (or 27) hash evaluations and lookups, and its candidates come as up
//! to 14 short runs rather than a few long rows.

use hhg_core::building_blocks::{FORWARD_OFFSETS, NEIGHBOURHOOD_OFFSETS, check_radius};
use hhg_core::{Error, Kernel, Real};
use rayon::prelude::*;

use crate::hash::{CellHasher, KeyRule, Primes, XorHash};
use crate::kernel::{MaskKernel, query_runs, within_run};
use crate::table::{Buckets, TableSize, add, cell_geometry, query_cell};

/// Fixed-radius neighbour search with XOR-of-primes cell hashing (name `"xor"`).
///
/// ```
/// use hhg_core::FixedRadiusScheme;
/// use hhg_xor::{Primes, XorScheme};
///
/// let points = [[0.0f64, 0.0, 0.0], [0.5, 0.0, 0.0], [3.0, 0.0, 0.0]];
/// let mut scheme = XorScheme::new(1.0, Primes::Teschner)?;
/// scheme.build(&points)?;
/// let mut pairs = hhg_core::PairList::default();
/// scheme.pairs(&mut pairs)?;
/// assert_eq!(pairs.pairs(), [[0, 1]]);
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct XorScheme<T: Real> {
    radius: T,
    r2: T,
    primes: Primes,
    size: TableSize,
    kernel: Kernel,
    hasher: Option<CellHasher>,
    table: Buckets<T>,
}

impl<T: Real> XorScheme<T> {
    /// An empty search within `radius` hashing with `primes`, about 2 buckets per point.
    pub fn new(radius: T, primes: Primes) -> Result<Self, Error> {
        Self::with_table_size(radius, primes, TableSize::default())
    }

    /// An empty search within `radius` hashing with `primes` into tables of `size`.
    pub fn with_table_size(radius: T, primes: Primes, size: TableSize) -> Result<Self, Error> {
        check_radius(radius)?;
        size.check()?;
        Ok(Self {
            radius,
            r2: radius * radius,
            primes,
            size,
            kernel: Kernel::Simd,
            hasher: None,
            table: Buckets::default(),
        })
    }

    crate::table::table_accessors! {
        hasher: "The cell geometry and hash of the last build (`None` while empty).",
        sorted_cells: "The cell of each sorted position.",
    }

    /// The table size of later builds.
    pub fn table_size(&self) -> TableSize {
        self.size
    }

    /// The primes of the hash.
    pub fn primes(&self) -> Primes {
        self.primes
    }

    /// The candidates a per-point search that scans whole buckets and filters foreign cells
    /// would reject: for every cell, the points of foreign cells in the distinct buckets of
    /// its own cell and its 13 forward neighbours, times the cell's points. This search skips
    /// them by cell lookup without a distance test, so they are not in
    /// [`hhg_core::SchemeStats::pair_candidates`]; this is what the hash collisions would cost there.
    pub fn foreign_candidates(&self) -> u64 {
        self.candidate_counts().1
    }

    /// Builds the table: validate, hash, sort, order by cell, gather.
    fn build_table(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        let Some(table) = cell_geometry(points, self.radius)? else {
            self.hasher = None;
            self.table.clear();
            return Ok(());
        };
        let hasher = CellHasher {
            table,
            hash: XorHash::new(self.primes, self.size.buckets(points.len()))?,
            rule: KeyRule::Xor,
        };
        self.table.build(points, None, &hasher, self.kernel)?;
        self.hasher = Some(hasher);
        Ok(())
    }

    /// Walks the pairs found from the points of one work unit: per bucket, per cell run, the
    /// run against itself (later points) and the runs of its 13 forward neighbour cells;
    /// calls `emit(p, q)` with sorted positions.
    #[inline(always)]
    fn walk_unit<K: MaskKernel>(
        &self,
        hasher: &CellHasher,
        unit: (u32, u32),
        emit: &mut impl FnMut(u32, u32),
    ) {
        let table = &self.table;
        for b in unit.0..unit.1 {
            table.for_each_run(b, |s, e, c| {
                // All lookups first: their cache misses overlap instead of queueing behind
                // the distance tests.
                let cells = FORWARD_OFFSETS.map(|offset| add(c, offset));
                let keys = cells.map(|n| hasher.key(n));
                let mut runs = [(0, 0); 13];
                table.runs(&keys, &cells, &mut runs);
                table.touch(&runs);
                within_run::<T, K>(table, self.r2, (s, e), (s, e), true, emit);
                for run in runs {
                    if run.0 < run.1 {
                        within_run::<T, K>(table, self.r2, (s, e), run, false, emit);
                    }
                }
            });
        }
    }

    /// Appends the neighbours of `point` (caller indices, unsorted) with kernel `K`.
    fn query_with<K: MaskKernel>(&self, point: [T; 3], out: &mut Vec<u32>) {
        let Some((hasher, c)) = query_cell(self.hasher.as_ref(), point) else {
            return;
        };
        let cells = NEIGHBOURHOOD_OFFSETS.map(|offset| add(c, offset));
        let keys = cells.map(|n| hasher.key(n));
        let mut runs = [(0, 0); 27];
        self.table.runs(&keys, &cells, &mut runs);
        query_runs::<T, K>(&self.table, self.r2, point, &runs, out);
    }

    /// Counts the distance tests of the pairs search and the foreign points a whole-bucket
    /// scan would add, in one parallel pass over the cells.
    fn candidate_counts(&self) -> (u64, u64) {
        let Some(hasher) = self.hasher.as_ref() else {
            return (0, 0);
        };
        let table = &self.table;
        table
            .units
            .par_iter()
            .map(|&(lo, hi)| {
                let (mut tests, mut foreign) = (0u64, 0u64);
                for b in lo..hi {
                    table.for_each_run(b, |s, e, c| {
                        let m = u64::from(e - s);
                        tests += m * (m - 1) / 2;
                        // Distinct buckets visited, with the points of visited cells in each.
                        let mut visited = [(b, e - s); 14];
                        let mut distinct = 1;
                        for offset in FORWARD_OFFSETS {
                            let n = add(c, offset);
                            let key = hasher.key(n);
                            let run = table.run(key, n);
                            let len = run.1 - run.0;
                            tests += m * u64::from(len);
                            match visited[..distinct].iter_mut().find(|v| v.0 == key) {
                                Some(v) => v.1 += len,
                                None => {
                                    visited[distinct] = (key, len);
                                    distinct += 1;
                                }
                            }
                        }
                        for &(key, useful) in &visited[..distinct] {
                            let (bs, be) = table.bucket_range(key);
                            foreign += m * u64::from(be - bs - useful);
                        }
                    });
                }
                (tests, foreign)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }
}

crate::table::impl_fixed_radius_scheme!(XorScheme, "xor", |this| this.candidate_counts().0);
