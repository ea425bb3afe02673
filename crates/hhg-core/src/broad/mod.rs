//! Broad-phase collision detection on a hierarchy of hash grids (Schornbaum's hierarchical
//! hash grid): boxes sorted into levels by size, all overlapping pairs, and queries.
//!
//! Every box goes to the first level whose cell edge `c0 * f^k` is at least its longest edge
//! (times `1 + CELL_MARGIN`), and is hashed by its minimum corner. Two overlapping boxes
//! then have minimum corners less than one cell of the coarser of their two levels apart
//! on every axis, so:
//!
//! - within a level, each occupied bucket is tested against itself and its 13 forward
//!   neighbours (every pair once);
//! - across levels, each box is tested against the 27 buckets around its corner in every
//!   coarser level (thesis Algorithm 4);
//! - boxes with an infinite bound or an edge of at least `huge_fraction` of the scene are kept
//!   in their own list and tested against everything.
//!
//! Levels exist only for sizes that occur (the hierarchy need not be dense), each is built
//! with the particle engine's SIMD hashing and parallel counting sort, and below
//! [`BroadPhaseConfig::all_pairs_below`] boxes no grid is built at all (thesis §3.7).

mod build;
mod patch;
mod query;
mod scene;
mod spheres;

use rayon::prelude::*;

use crate::columns::PointColumns;
use crate::geometry::{CellTable, Kernel};
use crate::grid::{forward_neighbourhood, forward_rows, full_neighbourhood};
use crate::pairs::PairList;
use crate::real::{LANES, Real};

pub use crate::real::{boxes_overlap, sphere_pair_within};
use crate::sort::SortScratch;

pub use query::segment_may_hit;
pub use scene::{Handle, Motion, Scene, UpdateReport, UpdateStrategy};
pub use spheres::VariableRadiusSearch;

/// The neighbour rule of particles with their own radii.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RadiusRule {
    /// `|xi - xj| <= max(ri, rj)`: each particle sees everything within its own radius and
    /// is seen by everything whose radius reaches it (the gather-scatter rule of adaptive SPH).
    #[default]
    Max,
    /// `|xi - xj| <= (ri + rj) / 2`: the symmetrised smoothing length.
    Mean,
}

/// What the objects of a hierarchy are, and so what its columns hold and its test is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Boxes: the minimum columns hold minimum corners, the maximum columns maximum corners;
    /// the test is [`boxes_overlap`].
    Boxes,
    /// Particles: the minimum columns hold positions, the maximum x column radii; the test is
    /// [`sphere_pair_within`] with the rule.
    Spheres(RadiusRule),
}

impl Kind {
    /// The pair test of two objects given as their column values.
    #[inline(always)]
    pub(crate) fn test<T: Real>(self, a: ([T; 3], [T; 3]), b: ([T; 3], [T; 3])) -> bool {
        match self {
            Kind::Boxes => boxes_overlap(a.0, a.1, b.0, b.1),
            Kind::Spheres(rule) => {
                sphere_pair_within(a.0, a.1[0], b.0, b.1[0], rule == RadiusRule::Mean)
            }
        }
    }
}

/// An axis-aligned bounding box with closed bounds: it contains `p` iff
/// `min[a] <= p[a] <= max[a]` on every axis.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Aabb<T> {
    /// The minimum corner.
    pub min: [T; 3],
    /// The maximum corner.
    pub max: [T; 3],
}

impl<T: Real> Aabb<T> {
    /// A box from its two corners.
    pub fn new(min: [T; 3], max: [T; 3]) -> Self {
        Self { min, max }
    }

    /// Tells whether two boxes overlap (closed intervals: touching faces overlap).
    #[inline]
    pub fn overlaps(&self, other: &Aabb<T>) -> bool {
        boxes_overlap(self.min, self.max, other.min, other.max)
    }

    /// The longest edge, in `f64`.
    #[inline]
    pub fn longest_edge(&self) -> f64 {
        (0..3)
            .map(|a| self.max[a].to_f64() - self.min[a].to_f64())
            .fold(0.0, f64::max)
    }
}

/// Collision filter bits: two objects are tested only when each one's group meets the
/// other's mask, `a.group & b.mask != 0 && b.group & a.mask != 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Filter {
    /// The groups the object belongs to.
    pub group: u64,
    /// The groups the object collides with.
    pub mask: u64,
}

impl Filter {
    /// In every group, colliding with every group: the filter of an unfiltered build.
    pub const ALL: Filter = Filter {
        group: u64::MAX,
        mask: u64::MAX,
    };

    /// Tells whether objects with filters `self` and `other` may collide.
    #[inline(always)]
    pub fn accepts(self, other: Filter) -> bool {
        self.group & other.mask != 0 && other.group & self.mask != 0
    }
}

impl Default for Filter {
    fn default() -> Self {
        Filter::ALL
    }
}

/// Settings of a [`BroadPhase`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BroadPhaseConfig {
    /// The hierarchy factor `f`: level `k` has cells of edge `c0 * f^k`. Must be finite and
    /// at least 1.5 (default 2).
    pub hierarchy_factor: f64,
    /// Boxes whose longest edge is at least this fraction of the scene's extent (the largest
    /// edge of the bounding box of all finite boxes) go to the list of huge objects, which is
    /// tested against everything. Must be in `(0, 1]` (default 0.25).
    pub huge_fraction: f64,
    /// Below this many boxes no grid is built: pairs and queries test all boxes (thesis
    /// §3.7). Chosen by measurement (see docs/performance.md).
    pub all_pairs_below: usize,
}

impl Default for BroadPhaseConfig {
    fn default() -> Self {
        Self {
            hierarchy_factor: 2.0,
            huge_fraction: 0.25,
            all_pairs_below: ALL_PAIRS_BELOW,
        }
    }
}

/// The default of [`BroadPhaseConfig::all_pairs_below`], measured (build + pairs, thesis-like
/// boxes, inside a rayon pool of 1 and 2 threads): all-pairs takes 20 us at 256 boxes against
/// 35-42 us for the grid, the two meet at ~512 (54-59 us vs 61-68 us), and at 1024 the grid
/// wins by 1.5-1.9x. See docs/performance.md.
pub const ALL_PAIRS_BELOW: usize = 512;

/// Boxes per work unit of the detection step.
const UNIT_BOXES: usize = 1024;

/// One level of the hierarchy: the boxes whose size fits its cells, sorted by the bucket of
/// their minimum corner into SoA columns.
#[derive(Debug)]
pub(crate) struct Level<T: Real> {
    /// The exponent `k` of the cell edge `c0 * f^k`.
    pub(crate) exponent: u32,
    /// The cell table (its cell edge is the level's).
    pub(crate) table: CellTable,
    /// Bucket starts of the counting sort, `buckets + 1` entries.
    pub(crate) starts: Vec<u32>,
    /// Sorted position -> caller index, padded by [`LANES`].
    pub(crate) order: Vec<u32>,
    /// Minimum corners in sorted order.
    pub(crate) min: PointColumns<T>,
    /// Maximum corners in sorted order.
    pub(crate) max: PointColumns<T>,
    /// Filters in sorted order (empty for an unfiltered build).
    pub(crate) filters: Vec<Filter>,
    /// Work units as bucket ranges.
    pub(crate) units: Vec<(u32, u32)>,
    /// Minimum corners of the level's boxes in caller order (the hashing input).
    corners: PointColumns<T>,
    keys: Vec<u32>,
    local_order: Vec<u32>,
    sort_scratch: SortScratch,
}

impl<T: Real> Level<T> {
    fn new(exponent: u32, table: CellTable) -> Self {
        Self {
            exponent,
            table,
            starts: Vec::new(),
            order: Vec::new(),
            min: PointColumns::default(),
            max: PointColumns::default(),
            filters: Vec::new(),
            units: Vec::new(),
            corners: PointColumns::default(),
            keys: Vec::new(),
            local_order: Vec::new(),
            sort_scratch: SortScratch::default(),
        }
    }

    /// How many boxes the level holds.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.min.len()
    }

    /// The box at sorted position `p`.
    #[inline(always)]
    pub(crate) fn box_at(&self, p: usize) -> ([T; 3], [T; 3]) {
        (self.min.point(p), self.max.point(p))
    }

    /// The filter at sorted position `p` (everything when unfiltered).
    #[inline(always)]
    pub(crate) fn filter_at(&self, p: usize) -> Filter {
        self.filters.get(p).copied().unwrap_or(Filter::ALL)
    }

    /// The bytes the level's buffers hold.
    fn heap_bytes(&self) -> usize {
        let columns = |c: &PointColumns<T>| 3 * c.capacity() * size_of::<T>();
        4 * (self.starts.capacity()
            + self.order.capacity()
            + self.keys.capacity()
            + self.local_order.capacity())
            + columns(&self.min)
            + columns(&self.max)
            + columns(&self.corners)
            + self.filters.capacity() * size_of::<Filter>()
            + self.units.capacity() * 8
            + self.sort_scratch.heap_bytes()
    }
}

/// What a query or the detection step knows about one level, for reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelInfo {
    /// The cell edge.
    pub cell: f64,
    /// How many boxes the level holds.
    pub boxes: usize,
    /// How many buckets its table has.
    pub buckets: usize,
    /// Whether its table is dense (no aliasing).
    pub dense: bool,
}

/// A hierarchical hash grid over a set of boxes: all overlapping pairs, and queries by box,
/// point and segment.
///
/// Rebuild it every step with [`BroadPhase::build`]; its buffers are kept and reused. For
/// insertions, removals, static objects and pair changes between steps, see [`Scene`].
///
/// ```
/// use hhg_core::PairList;
/// use hhg_core::broad::{Aabb, BroadPhase};
///
/// let boxes = [
///     Aabb::new([0.0f32, 0.0, 0.0], [1.0, 1.0, 1.0]),
///     Aabb::new([0.5, 0.5, 0.5], [3.0, 3.0, 3.0]),
///     Aabb::new([5.0, 5.0, 5.0], [6.0, 6.0, 6.0]),
/// ];
/// let mut broad = BroadPhase::new();
/// broad.build(&boxes)?;
/// let mut pairs = PairList::default();
/// broad.pairs(&mut pairs);
/// assert_eq!(pairs.pairs(), &[[0, 1]]);
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct BroadPhase<T: Real> {
    config: BroadPhaseConfig,
    /// The kernel for cell keys and overlap masks.
    kernel: Kernel,
    kind: Kind,
    /// How many boxes the last build held.
    len: usize,
    /// `c0`, the cell edge of exponent 0.
    base_cell: f64,
    /// `c0 * f^k` for the exponents the last build could use.
    ladder: Vec<f64>,
    /// The levels in use, finest first (`levels[..used]`; the rest keep their buffers).
    levels: Vec<Level<T>>,
    used: usize,
    /// Huge boxes: caller indices, ascending, with their boxes and filters.
    huge: Vec<u32>,
    huge_boxes: Vec<Aabb<T>>,
    huge_filters: Vec<Filter>,
    /// With fewer than `all_pairs_below` boxes: every box in caller order, no grid.
    flat_min: PointColumns<T>,
    flat_max: PointColumns<T>,
    flat_filters: Vec<Filter>,
    flat: bool,
    filtered: bool,
    /// Build scratch: the level exponent of every box, and boxes grouped by exponent.
    exponents: Vec<u32>,
    members: Vec<u32>,
    member_starts: Vec<u32>,
    sort_scratch: SortScratch,
}

impl<T: Real> Default for BroadPhase<T> {
    fn default() -> Self {
        Self {
            config: BroadPhaseConfig::default(),
            kernel: Kernel::Simd,
            kind: Kind::Boxes,
            len: 0,
            base_cell: 1.0,
            ladder: Vec::new(),
            levels: Vec::new(),
            used: 0,
            huge: Vec::new(),
            huge_boxes: Vec::new(),
            huge_filters: Vec::new(),
            flat_min: PointColumns::default(),
            flat_max: PointColumns::default(),
            flat_filters: Vec::new(),
            flat: true,
            filtered: false,
            exponents: Vec::new(),
            members: Vec::new(),
            member_starts: Vec::new(),
            sort_scratch: SortScratch::default(),
        }
    }
}

impl BroadPhaseConfig {
    /// Checks every setting: `Ok` or an error naming the first invalid one.
    pub fn check(&self) -> Result<(), crate::Error> {
        let f = self.hierarchy_factor;
        if !(f.is_finite() && f >= 1.5) {
            return Err(crate::Error::InvalidConfig {
                name: "hierarchy_factor",
                value: f,
                expected: "finite and >= 1.5",
            });
        }
        let h = self.huge_fraction;
        if !(h > 0.0 && h <= 1.0) {
            return Err(crate::Error::InvalidConfig {
                name: "huge_fraction",
                value: h,
                expected: "in (0, 1]",
            });
        }
        Ok(())
    }
}

/// One parallel task of the detection step.
#[derive(Clone, Copy, Debug)]
enum Task {
    /// A work unit of a level: its boxes against their own level and every coarser one.
    Unit { level: usize, unit: usize },
    /// A huge box against every box after it in the huge list and every box in the levels.
    Huge { index: usize },
    /// A chunk of boxes of an all-pairs build.
    Flat { start: usize, end: usize },
}

impl<T: Real> BroadPhase<T> {
    /// An empty broad phase with the default configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the hierarchy settings, used from the next build on; an invalid setting is
    /// an error naming it, and leaves the broad phase as it was.
    pub fn set_config(&mut self, config: BroadPhaseConfig) -> Result<(), crate::Error> {
        config.check()?;
        self.config = config;
        Ok(())
    }

    /// Chooses the kernel for cell keys and overlap masks (SIMD by default; the scalar
    /// reference gives identical results).
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The configuration.
    pub fn config(&self) -> &BroadPhaseConfig {
        &self.config
    }

    /// How many boxes the last build held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Tells whether the last build held no box.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The levels in use, finest first (empty for an all-pairs build).
    pub fn levels(&self) -> Vec<LevelInfo> {
        self.levels[..self.used]
            .iter()
            .map(|level| LevelInfo {
                cell: level.table.cell,
                boxes: level.len(),
                buckets: level.table.buckets(),
                dense: level.table.dense,
            })
            .collect()
    }

    /// The caller indices of the huge boxes, ascending.
    pub fn huge(&self) -> &[u32] {
        &self.huge
    }

    /// Tells whether the last build skipped the grid (fewer boxes than `all_pairs_below`).
    pub fn is_all_pairs(&self) -> bool {
        self.flat
    }

    /// The bytes held by the structure's buffers (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        let columns = |c: &PointColumns<T>| 3 * c.capacity() * size_of::<T>();
        self.levels.iter().map(Level::heap_bytes).sum::<usize>()
            + self.huge.capacity() * 4
            + self.huge_boxes.capacity() * size_of::<Aabb<T>>()
            + self.huge_filters.capacity() * size_of::<Filter>()
            + columns(&self.flat_min)
            + columns(&self.flat_max)
            + self.flat_filters.capacity() * size_of::<Filter>()
            + 4 * (self.exponents.capacity()
                + self.members.capacity()
                + self.member_starts.capacity())
            + self.sort_scratch.heap_bytes()
    }

    /// The levels in use.
    #[inline]
    pub(crate) fn active_levels(&self) -> &[Level<T>] {
        &self.levels[..self.used]
    }

    /// Every overlapping pair `[a, b]`, `a < b` in the caller's numbering, exactly once and in
    /// an order that does not depend on the thread count, into `out` (without distances;
    /// cleared first, its buffers reused).
    pub fn pairs(&self, out: &mut PairList<T>) {
        let tasks = self.tasks();
        out.collect_units(tasks.len(), |task, part| {
            self.run_task(tasks[task], &mut |a, b| part.push([a.min(b), a.max(b)]));
        });
    }

    /// Calls `visit(a, b)` for every overlapping pair (`a < b`), sequentially, in the order of
    /// [`BroadPhase::pairs`]; stores nothing.
    pub fn for_each_pair(&self, mut visit: impl FnMut(u32, u32)) {
        for task in self.tasks() {
            self.run_task(task, &mut |a, b| visit(a.min(b), a.max(b)));
        }
    }

    /// Calls `visit(a, b)` for every overlapping pair (`a < b`) from the rayon pool; stores
    /// nothing. The call order is unspecified.
    pub fn par_for_each_pair(&self, visit: impl Fn(u32, u32) + Sync) {
        self.tasks().into_par_iter().for_each(|task| {
            self.run_task(task, &mut |a, b| visit(a.min(b), a.max(b)));
        });
    }

    /// The tasks of the detection step, in output order.
    fn tasks(&self) -> Vec<Task> {
        let mut tasks = Vec::new();
        if self.flat {
            let n = self.len;
            let chunk = 256;
            let mut start = 0;
            while start < n {
                tasks.push(Task::Flat {
                    start,
                    end: (start + chunk).min(n),
                });
                start += chunk;
            }
            return tasks;
        }
        for (level, l) in self.active_levels().iter().enumerate() {
            tasks.extend((0..l.units.len()).map(|unit| Task::Unit { level, unit }));
        }
        tasks.extend((0..self.huge.len()).map(|index| Task::Huge { index }));
        tasks
    }

    /// Runs one detection task, reporting pairs (in either order) to `emit`.
    fn run_task(&self, task: Task, emit: &mut impl FnMut(u32, u32)) {
        with_test!(self.kind, self.kernel, |test| match task {
            Task::Unit { level, unit } => self.unit_pairs(level, unit, test, emit),
            Task::Huge { index } => self.huge_pairs(index, test, emit),
            Task::Flat { start, end } => self.flat_pairs(start, end, test, emit),
        })
    }

    /// The pairs of one work unit: each box against the later boxes of its bucket, the 13
    /// forward buckets, and the 27 buckets around its corner in every coarser level.
    fn unit_pairs(
        &self,
        level_index: usize,
        unit: usize,
        test: impl BlockTest<T>,
        emit: &mut impl FnMut(u32, u32),
    ) {
        let levels = self.active_levels();
        let level = &levels[level_index];
        let table = &level.table;
        let (lo_bucket, hi_bucket) = level.units[unit];
        let filtered = self.filtered;
        for b in lo_bucket..hi_bucket {
            let (start, end) = (level.starts[b as usize], level.starts[b as usize + 1]);
            if start == end {
                continue;
            }
            let bc = table.bucket_coords(b);
            // The later objects of the bucket and those of bucket x + 1 are one contiguous
            // range unless the row wraps there; the other 12 forward buckets are 4 rows.
            let (own_end, forward) = if bc[0] < (1 << table.shift[0]) - 1 {
                (
                    level.starts[b as usize + 2],
                    forward_rows(&level.starts, table, bc),
                )
            } else {
                (end, forward_neighbourhood(&level.starts, table, b, bc))
            };
            for p in start..end {
                let (lo, hi) = level.box_at(p as usize);
                let me = level.order[p as usize];
                let filter = level.filter_at(p as usize);
                let mut hit = |other: &Level<T>, q: usize| {
                    if !filtered || filter.accepts(other.filter_at(q)) {
                        emit(me, other.order[q]);
                    }
                };
                scan(level, test, lo, hi, p as usize + 1, own_end as usize, |q| {
                    hit(level, q)
                });
                for &(s, e) in forward.as_slice() {
                    scan(level, test, lo, hi, s as usize, e as usize, |q| {
                        hit(level, q)
                    });
                }
                for coarse in &levels[level_index + 1..] {
                    let ct = &coarse.table;
                    let cell = ct.coords(lo);
                    if !ct.may_have_neighbours(cell) {
                        continue;
                    }
                    let around =
                        full_neighbourhood(&coarse.starts, ct, ct.bucket_coords(ct.bucket(cell)));
                    for &(s, e) in around.as_slice() {
                        scan(coarse, test, lo, hi, s as usize, e as usize, |q| {
                            hit(coarse, q)
                        });
                    }
                }
            }
        }
    }

    /// The pairs of huge box `index`: against the later huge boxes and every box in a level.
    fn huge_pairs(&self, index: usize, test: impl BlockTest<T>, emit: &mut impl FnMut(u32, u32)) {
        let me = self.huge[index];
        let aabb = self.huge_boxes[index];
        let filter = self.huge_filters.get(index).copied().unwrap_or(Filter::ALL);
        for other in index + 1..self.huge.len() {
            let theirs = &self.huge_boxes[other];
            if self
                .kind
                .test((aabb.min, aabb.max), (theirs.min, theirs.max))
                && (!self.filtered || filter.accepts(self.huge_filters[other]))
            {
                emit(me, self.huge[other]);
            }
        }
        for level in self.active_levels() {
            scan(level, test, aabb.min, aabb.max, 0, level.len(), |q| {
                if !self.filtered || filter.accepts(level.filter_at(q)) {
                    emit(me, level.order[q]);
                }
            });
        }
    }

    /// The pairs of boxes `start..end` of an all-pairs build against every later box.
    fn flat_pairs(
        &self,
        start: usize,
        end: usize,
        test: impl BlockTest<T>,
        emit: &mut impl FnMut(u32, u32),
    ) {
        for i in start..end {
            let lo = self.flat_min.point(i);
            let hi = self.flat_max.point(i);
            let filter = self.flat_filters.get(i).copied().unwrap_or(Filter::ALL);
            scan_columns(
                &self.flat_min,
                &self.flat_max,
                test,
                lo,
                hi,
                i + 1,
                self.len,
                |j| {
                    if !self.filtered || filter.accepts(self.flat_filters[j]) {
                        emit(i as u32, j as u32);
                    }
                },
            );
        }
    }
}

/// The pair test of a scan, chosen once per task so that the block loop is monomorphized.
pub(crate) trait BlockTest<T: Real>: Copy {
    /// The hit mask of 8 candidates (their minimum and maximum columns) against the query
    /// values `lo` and `hi`.
    fn mask(self, lo: [T; 3], hi: [T; 3], min: [&[T; 8]; 3], max: [&[T; 8]; 3]) -> u32;
}

/// The box overlap test, SIMD or scalar.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxTest<const SIMD: bool>;

impl<T: Real, const SIMD: bool> BlockTest<T> for BoxTest<SIMD> {
    #[inline(always)]
    fn mask(self, lo: [T; 3], hi: [T; 3], min: [&[T; 8]; 3], max: [&[T; 8]; 3]) -> u32 {
        if SIMD {
            T::overlap_mask(lo, hi, min, max)
        } else {
            T::overlap_mask_scalar(lo, hi, min, max)
        }
    }
}

/// The particle test (position in `lo`, radius in `hi[0]`), SIMD or scalar; `true` for the
/// mean rule.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SphereTest<const SIMD: bool>(pub(crate) bool);

impl<T: Real, const SIMD: bool> BlockTest<T> for SphereTest<SIMD> {
    #[inline(always)]
    fn mask(self, lo: [T; 3], hi: [T; 3], min: [&[T; 8]; 3], max: [&[T; 8]; 3]) -> u32 {
        if SIMD {
            T::sphere_mask(lo, hi[0], min, max[0], self.0)
        } else {
            T::sphere_mask_scalar(lo, hi[0], min, max[0], self.0)
        }
    }
}

/// Evaluates `$body` with `$test` bound to the [`BlockTest`] of `$kind` and `$kernel`.
macro_rules! with_test {
    ($kind:expr, $kernel:expr, |$test:ident| $body:expr) => {
        match ($kind, $kernel) {
            (Kind::Boxes, Kernel::Simd) => {
                let $test = BoxTest::<true>;
                $body
            }
            (Kind::Boxes, Kernel::Scalar) => {
                let $test = BoxTest::<false>;
                $body
            }
            (Kind::Spheres(rule), Kernel::Simd) => {
                let $test = SphereTest::<true>(rule == RadiusRule::Mean);
                $body
            }
            (Kind::Spheres(rule), Kernel::Scalar) => {
                let $test = SphereTest::<false>(rule == RadiusRule::Mean);
                $body
            }
        }
    };
}
pub(crate) use with_test;

/// Calls `hit(q)` for every sorted position `q` in `start..end` of `level` that passes `test`
/// against `lo..=hi` (boxes: overlap; particles: the particle at `lo` with radius `hi[0]`),
/// in ascending order, 8 candidates per kernel call.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // The scan's inputs are all distinct and all needed.
pub(crate) fn scan<T: Real>(
    level: &Level<T>,
    test: impl BlockTest<T>,
    lo: [T; 3],
    hi: [T; 3],
    start: usize,
    end: usize,
    hit: impl FnMut(usize),
) {
    scan_columns(&level.min, &level.max, test, lo, hi, start, end, hit);
}

/// [`scan`] over explicit minimum and maximum columns.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // The scan's inputs are all distinct and all needed.
pub(crate) fn scan_columns<T: Real>(
    min: &PointColumns<T>,
    max: &PointColumns<T>,
    test: impl BlockTest<T>,
    lo: [T; 3],
    hi: [T; 3],
    start: usize,
    end: usize,
    mut hit: impl FnMut(usize),
) {
    let [min_x, min_y, min_z] = min.padded();
    let [max_x, max_y, max_z] = max.padded();
    debug_assert!(
        end <= min.len() && end <= max.len(),
        "scan past the columns"
    );
    let block = |column: &[T], k: usize| -> &[T; LANES] {
        debug_assert!(k + LANES <= column.len(), "block at {k} past the padding");
        // SAFETY: `k < end <= len`, and padded columns hold `len` values plus at least
        // `LANES` padding values, so `k..k + LANES` lies inside the column.
        unsafe { &*column.as_ptr().add(k).cast::<[T; LANES]>() }
    };
    let mut k = start;
    while k < end {
        let min = [block(min_x, k), block(min_y, k), block(min_z, k)];
        let max = [block(max_x, k), block(max_y, k), block(max_z, k)];
        let mut mask = test.mask(lo, hi, min, max);
        let remaining = end - k;
        if remaining < LANES {
            mask &= (1 << remaining) - 1;
        }
        while mask != 0 {
            hit(k + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
        k += LANES;
    }
}
