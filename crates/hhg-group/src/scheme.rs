//! The group scheme's state and its build: validate, key points by cell 8 lanes at a time,
//! counting-sort them, find the distinct cells, map each cell to one of its candidate
//! buckets by Jung and Choi's greedy rule, and lay the points out by (bucket, cell).
//!
//! # Build
//!
//! 1. **Validate and bound** with hhg-core (`bounds`, `CellTable::choose`), so the errors
//!    are hhg-core's: NaN/inf coordinates, too many points, a span of cells beyond the
//!    integer range. The table fixes the cell geometry (origin, edge `r * (1 + 1e-5)`).
//! 2. **Slot keys.** `CellTable::keys` computes each point's geometric bucket (its *slot*)
//!    8 lanes at a time, and `hhg_core::building_blocks::counting_sort` orders the points by slot (stable).
//!    On a dense table a slot is one cell; on a hashed table a slot may hold several cells,
//!    whose points are then sorted by (cell, index) inside the slot.
//! 3. **Distinct cells.** Chunks of slots, cut by point counts, list their cells in parallel;
//!    the lists are concatenated in slot order. The cells are thus visited in ascending
//!    (slot, cell coordinates) order, which on a dense table is ascending cell index: a
//!    fixed order that does not depend on the thread count.
//! 4. **Candidates** of every distinct cell, in parallel ([`crate::GroupHasher`]).
//! 5. **Greedy mapping** (Jung and Choi, Algorithm 1), sequential over the distinct cells
//!    only: each cell joins the least loaded of its candidates (the first on ties), and the
//!    bucket's load grows by the cell's points. Because every distinct cell is visited once,
//!    the algorithm's "the cell is already mapped to a candidate" case never arises inside a
//!    build; each build maps afresh. The pass touches `cells * g` loads, a small share of
//!    the build (see [`BuildProfile`]).
//! 6. **Layout.** `counting_sort` orders the cells by bucket (stable, so by greedy order
//!    inside a bucket); each cell's points are copied, in parallel, to their place in that
//!    order, and `PointColumns::gather_from` gathers the sorted SoA columns. The directory
//!    then holds, per bucket, its cells (coordinates and point range), and the walking
//!    order of the searches (the cells in greedy order) is cut into work units.

mod build;

use std::sync::OnceLock;
use std::time::Duration;

use hhg_core::building_blocks::{CellTable, SortScratch, check_radius};
use hhg_core::{Error, Kernel, NeighborLists, PointColumns, Real, SchemeStats};

use crate::hash::{GroupHasher, MAX_CANDIDATES, check_candidates};

/// Points per chunk when listing cells or copying them into place: large enough that a task
/// costs nothing next to its work, small enough to balance two to sixteen threads.
pub(crate) const CHUNK_POINTS: usize = 1 << 14;

/// Points per work unit of a search: units end at cell borders.
pub(crate) const UNIT_POINTS: usize = 2048;

/// Distinct cells per task when computing candidate buckets.
const CANDIDATE_CHUNK: usize = 1 << 12;

/// The largest bucket count a build uses, whatever the fraction.
pub const MAX_BUCKETS: usize = 1 << 31;

/// The settings of a [`GroupScheme`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupConfig {
    /// Candidate buckets per cell, `g` (1 to 4; Jung and Choi use 3 and 4). One candidate
    /// is plain hashing without load balancing.
    pub candidates: usize,
    /// Buckets per point: the table has `ceil(bucket_fraction * n)` buckets (at least one,
    /// at most [`MAX_BUCKETS`]); finite, `> 0` and `<= 16`. Jung and Choi found about 0.2
    /// best.
    pub bucket_fraction: f64,
    /// The SIMD (default) or scalar reference kernels for cell keys, candidate buckets and
    /// distance masks; both give identical results.
    pub kernel: Kernel,
}

impl Default for GroupConfig {
    fn default() -> Self {
        Self {
            candidates: 3,
            bucket_fraction: 0.2,
            kernel: Kernel::Simd,
        }
    }
}

impl GroupConfig {
    /// Refuses settings outside their ranges with [`Error::InvalidConfig`].
    pub fn validate(&self) -> Result<(), Error> {
        check_candidates(self.candidates)?;
        let f = self.bucket_fraction;
        if !(f.is_finite() && f > 0.0 && f <= 16.0) {
            return Err(Error::InvalidConfig {
                name: "bucket_fraction",
                value: f,
                expected: "a finite number > 0 and <= 16",
            });
        }
        Ok(())
    }

    /// The bucket count for `n` points.
    pub fn buckets_for(&self, n: usize) -> u32 {
        ((self.bucket_fraction * n as f64).ceil() as usize).clamp(1, MAX_BUCKETS) as u32
    }
}

/// Wall-clock time of each phase of the last build.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BuildProfile {
    /// Validation, bounding box and cell geometry.
    pub validate: Duration,
    /// Slot keys (8 lanes at a time) and the counting sort by slot.
    pub sort: Duration,
    /// Listing the distinct cells.
    pub cells: Duration,
    /// Candidate buckets of every distinct cell.
    pub candidates: Duration,
    /// The sequential greedy mapping over the distinct cells.
    pub greedy: Duration,
    /// The sort of cells by bucket, the point order, the gather of the columns, the units.
    pub layout: Duration,
    /// The whole build.
    pub total: Duration,
}

impl BuildProfile {
    /// The greedy pass's share of the build time (0 when nothing was timed).
    pub fn greedy_share(&self) -> f64 {
        if self.total.is_zero() {
            0.0
        } else {
            self.greedy.as_secs_f64() / self.total.as_secs_f64()
        }
    }
}

/// One distinct cell and the bucket the greedy mapping gave it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellAssignment {
    /// Integer cell coordinates (`floor((p - origin) / cell)` per axis).
    pub cell: [i32; 3],
    /// Points in the cell.
    pub points: u32,
    /// The bucket the cell joined.
    pub bucket: u32,
}

/// A distinct cell while building: its coordinates and where its points are in the slot order.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Run {
    cell: [i32; 3],
    source: u32,
    count: u32,
}

/// One distinct cell of the layout: its coordinates and its first sorted point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CellEntry {
    pub(crate) cell: [i32; 3],
    pub(crate) start: u32,
}

/// Fixed-radius neighbour search with group spatial hashing (Jung and Choi): cells of edge
/// `r * (1 + 1e-5)`, each mapped to the least loaded of its `g` candidate buckets, points
/// sorted by (bucket, cell) into SoA columns.
///
/// See the crate documentation for an example, and [`hhg_core::FixedRadiusScheme`] for the
/// operations. Every buffer is reused across builds.
#[derive(Debug)]
pub struct GroupScheme<T: Real> {
    pub(crate) radius: T,
    pub(crate) r2: T,
    pub(crate) config: GroupConfig,
    pub(crate) table: Option<CellTable>,
    pub(crate) hasher: Option<GroupHasher>,
    /// The points in (bucket, cell) order.
    pub(crate) sorted: PointColumns<T>,
    /// `order[k]` is the caller's index of sorted point `k`.
    pub(crate) order: Vec<u32>,
    /// The distinct cells in (bucket, greedy) order, then a sentinel: cell `c` holds the
    /// sorted points `directory[c].start..directory[c + 1].start`.
    pub(crate) directory: Vec<CellEntry>,
    /// Cells of bucket `b`: `bucket_cells[b]..bucket_cells[b + 1]`.
    pub(crate) bucket_cells: Vec<u32>,
    /// The cells in walking order (greedy order, which follows space): `walk[w]` is the
    /// index of the `w`-th cell in the (bucket, greedy) layout.
    pub(crate) walk: Vec<u32>,
    /// Points before each cell in walking order (`cells + 1` entries).
    walk_starts: Vec<u32>,
    /// Work units as ranges of walking positions.
    pub(crate) units: Vec<(u32, u32)>,
    /// The distinct cells in greedy order.
    runs: Vec<Run>,
    /// The bucket of each cell of `runs`.
    run_bucket: Vec<u32>,
    /// Candidate buckets of each cell of `runs`.
    run_candidates: Vec<[u32; MAX_CANDIDATES]>,
    /// Points per bucket.
    loads: Vec<u32>,
    /// Cells of `runs` in (bucket, greedy) order.
    run_order: Vec<u32>,
    slot_keys: Vec<u32>,
    slot_starts: Vec<u32>,
    slot_order: Vec<u32>,
    sort_scratch: SortScratch,
    chunks: Vec<(u32, u32)>,
    chunk_runs: Vec<Vec<Run>>,
    load_stats: SchemeStats,
    profile: BuildProfile,
    /// The pairs search's candidate count, counted on first request after each build.
    pair_candidates: OnceLock<u64>,
}

impl<T: Real> GroupScheme<T> {
    /// An empty search within `radius` with the default [`GroupConfig`] (3 candidates,
    /// 0.2 buckets per point, SIMD).
    pub fn new(radius: T) -> Result<Self, Error> {
        Self::with_config(radius, GroupConfig::default())
    }

    /// An empty search within `radius` with the given settings.
    pub fn with_config(radius: T, config: GroupConfig) -> Result<Self, Error> {
        check_radius(radius)?;
        config.validate()?;
        Ok(Self {
            radius,
            r2: radius * radius,
            config,
            table: None,
            hasher: None,
            sorted: PointColumns::default(),
            order: Vec::new(),
            directory: Vec::new(),
            bucket_cells: Vec::new(),
            walk: Vec::new(),
            walk_starts: Vec::new(),
            units: Vec::new(),
            runs: Vec::new(),
            run_bucket: Vec::new(),
            run_candidates: Vec::new(),
            loads: Vec::new(),
            run_order: Vec::new(),
            slot_keys: Vec::new(),
            slot_starts: Vec::new(),
            slot_order: Vec::new(),
            sort_scratch: SortScratch::default(),
            chunks: Vec::new(),
            chunk_runs: Vec::new(),
            load_stats: SchemeStats::default(),
            profile: BuildProfile::default(),
            pair_candidates: OnceLock::new(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &GroupConfig {
        &self.config
    }

    /// Chooses the SIMD or the scalar reference kernels (from the next build on for cell
    /// keys and candidates, at once for the searches); both give identical results.
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.config.kernel = kernel;
    }

    /// The cell geometry of the last build (`None` while empty). Its `coords` give a point's
    /// cell; its bucket layout is not used by this scheme.
    pub fn table(&self) -> Option<&CellTable> {
        self.table.as_ref()
    }

    /// The candidate hash functions of the last build (`None` while empty).
    pub fn hasher(&self) -> Option<&GroupHasher> {
        self.hasher.as_ref()
    }

    /// Buckets in the table of the last build (0 while empty).
    pub fn bucket_count(&self) -> usize {
        self.hasher.map_or(0, |h| h.buckets() as usize)
    }

    /// Distinct occupied cells of the last build.
    pub fn cell_count(&self) -> usize {
        self.directory.len().saturating_sub(1)
    }

    /// The distinct cells with their points and bucket, in the order the greedy mapping
    /// visited them (ascending slot, then cell coordinates; see the module docs).
    pub fn assignments(&self) -> impl ExactSizeIterator<Item = CellAssignment> + '_ {
        self.runs
            .iter()
            .zip(&self.run_bucket)
            .map(|(run, &bucket)| CellAssignment {
                cell: run.cell,
                points: run.count,
                bucket,
            })
    }

    /// The bucket holding cell `cell`, when the cell holds points (found by probing its
    /// candidate buckets and skipping the foreign cells they hold).
    pub fn bucket_of(&self, cell: [i32; 3]) -> Option<u32> {
        let hasher = self.hasher.as_ref()?;
        let candidates = hasher.candidates_of(cell);
        self.find_cell(cell, &candidates).map(|(_, bucket)| bucket)
    }

    /// The locality permutation: `order()[k]` is the caller's index of the `k`-th point in
    /// (bucket, cell) order.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// The points in (bucket, cell) order, as SoA columns.
    pub fn sorted_points(&self) -> &PointColumns<T> {
        &self.sorted
    }

    /// The bucket-load statistics of the last build (points per bucket), computed during
    /// the build; `pair_candidates` is 0 here (see [`hhg_core::FixedRadiusScheme::stats`]).
    pub fn load_stats(&self) -> SchemeStats {
        self.load_stats
    }

    /// Points per bucket of the last build.
    pub fn loads(&self) -> &[u32] {
        &self.loads
    }

    /// Wall-clock time of each phase of the last build.
    pub fn build_profile(&self) -> BuildProfile {
        self.profile
    }

    /// How many candidate pairs the unique-pairs search tests, counted once per build in a
    /// separate pass (the searches' hot loops count nothing): per cell of `m` points,
    /// `m (m - 1) / 2` inside it plus `m` times the points of its 13 forward neighbour cells.
    /// Foreign cells sharing a bucket are skipped by the lookup, never scanned, so they add
    /// no candidate.
    pub fn pair_candidates(&self) -> u64 {
        *self
            .pair_candidates
            .get_or_init(|| self.count_pair_candidates())
    }

    /// Empties the search, keeping its buffers.
    fn clear(&mut self) {
        self.table = None;
        self.hasher = None;
        // Gathering no point empties the columns and keeps their allocation.
        let _ = self.sorted.gather_from(&[], &[]);
        self.order.clear();
        self.directory.clear();
        self.bucket_cells.clear();
        self.walk.clear();
        self.walk_starts.clear();
        self.units.clear();
        self.runs.clear();
        self.run_bucket.clear();
        self.run_candidates.clear();
        self.loads.clear();
        self.load_stats = SchemeStats::default();
    }
}

impl<T: Real> GroupScheme<T> {
    /// The neighbour lists through the pairs (both directions, each ascending).
    pub(crate) fn lists_from_pairs(&self, out: &mut NeighborLists<T>) -> Result<(), Error> {
        out.assign_from_pair_search(self.len_points(), |pairs| self.pairs_into(pairs))
    }

    /// How many points the last build held.
    #[inline]
    pub(crate) fn len_points(&self) -> usize {
        self.sorted.len()
    }
}
