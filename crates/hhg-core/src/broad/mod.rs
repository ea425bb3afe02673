//! Broad-phase collision detection on a hierarchy of hash grids (Schornbaum's hierarchical
//! hash grid): boxes sorted into levels by size, all overlapping pairs, and queries.
//!
//! Every box goes to the first level whose cell edge `c0 * f^k` is at least its longest edge
//! (times `1 + CELL_MARGIN`), and is hashed by its minimum corner. Two overlapping boxes
//! then have minimum corners less than one cell of the coarser of their two levels apart
//! on every axis, so:
//!
//! - within a level, each occupied bucket is tested against itself and its 13 forward
//!   neighbours (every pair once; 4 of 8 in the plane);
//! - across levels, each box is tested against the 27 buckets around its corner in every
//!   coarser level (thesis Algorithm 4; 9 in the plane);
//! - boxes with an infinite bound or an edge of at least `huge_fraction` of the scene are kept
//!   in their own list and tested against everything.
//!
//! Levels exist only for sizes that occur (the hierarchy need not be dense), each is built
//! with the particle engine's SIMD hashing and parallel counting sort, and below
//! [`BroadPhaseConfig::all_pairs_below`] boxes no grid is built at all (thesis §3.7).
//!
//! Every type is generic over the number of axes `D` (3 by default): the same code runs in
//! the plane as [`BroadPhase2`], [`Scene2`] and [`VariableRadiusSearch2`] over [`Aabb2`]
//! boxes, on 2-D cell tables and two coordinate columns.

mod build;
mod cross;
mod detect;
mod patch;
mod query;
mod scan;
mod scene;
mod spheres;

use crate::columns::PointColumns;
use crate::geometry::{CellTable, Kernel};
use crate::real::Real;

pub use crate::real::{boxes_overlap, sphere_pair_within};
use crate::sort::SortScratch;

pub use query::segment_may_hit;
pub(crate) use scan::{
    BlockTest, BoxTest, ScanColumns, SphereTest, scan, scan_around, scan_columns, with_test,
};
pub use scene::{Handle, Motion, Scene, UpdateReport, UpdateStrategy};
pub use spheres::VariableRadiusSearch;

/// A box in the plane: `min` and `max` corners of two axes.
pub type Aabb2<T> = Aabb<T, 2>;

/// The broad phase in the plane: boxes of two axes in a hierarchy of 2-D hash grids, each
/// bucket paired with itself and its 4 forward neighbours, each box looking up the 9
/// buckets around its corner in the coarser levels.
pub type BroadPhase2<T> = BroadPhase<T, 2>;

/// A scene of static and dynamic boxes in the plane (2-D physics engines).
pub type Scene2<T> = Scene<T, 2>;

/// Neighbour search for particles with their own radii in the plane (2-D adaptive SPH).
pub type VariableRadiusSearch2<T> = VariableRadiusSearch<T, 2>;

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
    pub(crate) fn test<T: Real, const D: usize>(
        self,
        a: ([T; D], [T; D]),
        b: ([T; D], [T; D]),
    ) -> bool {
        match self {
            Kind::Boxes => boxes_overlap(a.0, a.1, b.0, b.1),
            Kind::Spheres(rule) => {
                sphere_pair_within(a.0, a.1[0], b.0, b.1[0], rule == RadiusRule::Mean)
            }
        }
    }
}

/// An axis-aligned bounding box with closed bounds: it contains `p` iff
/// `min[a] <= p[a] <= max[a]` on every axis. `D` is the number of axes: 3 by default, 2 for
/// the broad phase in the plane ([`Aabb2`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb<T, const D: usize = 3> {
    /// The minimum corner.
    pub min: [T; D],
    /// The maximum corner.
    pub max: [T; D],
}

impl<T: Real, const D: usize> Default for Aabb<T, D> {
    fn default() -> Self {
        Self {
            min: [T::default(); D],
            max: [T::default(); D],
        }
    }
}

impl<T: Real, const D: usize> Aabb<T, D> {
    /// A box from its two corners.
    pub fn new(min: [T; D], max: [T; D]) -> Self {
        Self { min, max }
    }

    /// Tells whether two boxes overlap (closed intervals: touching faces overlap).
    #[inline]
    pub fn overlaps(&self, other: &Aabb<T, D>) -> bool {
        boxes_overlap(self.min, self.max, other.min, other.max)
    }

    /// The longest edge, in `f64`.
    #[inline]
    pub fn longest_edge(&self) -> f64 {
        (0..D)
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
pub(crate) struct Level<T: Real, const D: usize> {
    /// The exponent `k` of the cell edge `c0 * f^k`.
    pub(crate) exponent: u32,
    /// The cell table (its cell edge is the level's).
    pub(crate) table: CellTable<D>,
    /// Bucket starts of the counting sort, `buckets + 1` entries.
    pub(crate) starts: Vec<u32>,
    /// Sorted position -> caller index, padded by [`LANES`].
    pub(crate) order: Vec<u32>,
    /// Minimum corners in sorted order.
    pub(crate) min: PointColumns<T, D>,
    /// Maximum corners in sorted order.
    pub(crate) max: PointColumns<T, D>,
    /// Filters in sorted order (empty for an unfiltered build).
    pub(crate) filters: Vec<Filter>,
    /// Work units as bucket ranges.
    pub(crate) units: Vec<(u32, u32)>,
    /// Minimum corners of the level's boxes in caller order (the hashing input).
    corners: PointColumns<T, D>,
    keys: Vec<u32>,
    local_order: Vec<u32>,
    sort_scratch: SortScratch,
}

impl<T: Real, const D: usize> Level<T, D> {
    fn new(exponent: u32, table: CellTable<D>) -> Self {
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
    pub(crate) fn box_at(&self, p: usize) -> ([T; D], [T; D]) {
        (self.min.point(p), self.max.point(p))
    }

    /// The filter at sorted position `p` (everything when unfiltered).
    #[inline(always)]
    pub(crate) fn filter_at(&self, p: usize) -> Filter {
        self.filters.get(p).copied().unwrap_or(Filter::ALL)
    }

    /// The bytes the level's buffers hold.
    fn heap_bytes(&self) -> usize {
        let columns = |c: &PointColumns<T, D>| D * c.capacity() * size_of::<T>();
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
/// broad.pairs(&mut pairs)?;
/// assert_eq!(pairs.pairs(), &[[0, 1]]);
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct BroadPhase<T: Real, const D: usize = 3> {
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
    levels: Vec<Level<T, D>>,
    used: usize,
    /// Huge boxes: caller indices, ascending, with their boxes and filters.
    huge: Vec<u32>,
    huge_boxes: Vec<Aabb<T, D>>,
    huge_filters: Vec<Filter>,
    /// With fewer than `all_pairs_below` boxes: every box in caller order, no grid.
    flat_min: PointColumns<T, D>,
    flat_max: PointColumns<T, D>,
    flat_filters: Vec<Filter>,
    flat: bool,
    filtered: bool,
    /// The tasks of the detection step, in output order, planned at the end of each build.
    tasks: Vec<Task>,
    /// Build scratch: the level exponent of every box, and boxes grouped by exponent.
    exponents: Vec<u32>,
    members: Vec<u32>,
    member_starts: Vec<u32>,
    sort_scratch: SortScratch,
}

impl<T: Real, const D: usize> Default for BroadPhase<T, D> {
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
            tasks: Vec::new(),
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

impl<T: Real, const D: usize> BroadPhase<T, D> {
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
        let columns = |c: &PointColumns<T, D>| D * c.capacity() * size_of::<T>();
        self.levels.iter().map(Level::heap_bytes).sum::<usize>()
            + self.huge.capacity() * 4
            + self.huge_boxes.capacity() * size_of::<Aabb<T, D>>()
            + self.huge_filters.capacity() * size_of::<Filter>()
            + columns(&self.flat_min)
            + columns(&self.flat_max)
            + self.flat_filters.capacity() * size_of::<Filter>()
            + self.tasks.capacity() * size_of::<Task>()
            + 4 * (self.exponents.capacity()
                + self.members.capacity()
                + self.member_starts.capacity())
            + self.sort_scratch.heap_bytes()
    }

    /// The levels in use.
    #[inline]
    pub(crate) fn active_levels(&self) -> &[Level<T, D>] {
        &self.levels[..self.used]
    }
}
