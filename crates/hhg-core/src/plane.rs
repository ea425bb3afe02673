//! Fixed-radius neighbour search in the plane (issue 25): [`Grid2`] over `[T; 2]` points, and
//! [`NeighborSearch2`] over several sets of them.
//!
//! The 3-D engine's structure in two dimensions: cells of edge `r * (1 + CELL_MARGIN)` on the
//! lattice fixed in space (`LATTICE_SHIFT`), a dense table when the occupied box is small,
//! else Schornbaum's geometric hash with power-of-two dims, cell keys 8 lanes at a time,
//! the parallel stable counting sort by bucket, the points gathered into columns in cell
//! order, and work units of about 2048 points cut at bucket borders, run in parallel, each
//! into its own buffer, joined in unit order. A cell has 8 neighbours, 4 of them forward; a
//! bucket's neighbourhood is 3 rows of 3 buckets, each row one range of sorted positions
//! (two where the row wraps around the table).
//!
//! A pair `(i, j)` is a neighbour pair iff `dx*dx + dy*dy <= r*r`, evaluated in the input
//! precision in exactly that order, without fused multiply-add, on every path.
//!
//! ```
//! use hhg_core::NeighborLists;
//! use hhg_core::plane::Grid2;
//!
//! let points = [[0.0f32, 0.0], [0.5, 0.0], [3.0, 0.0]];
//! let mut grid = Grid2::new(1.0f32)?;
//! grid.build(&points)?;
//! let mut lists = NeighborLists::default();
//! grid.neighbor_lists(&mut lists)?;
//! assert_eq!(lists.neighbors(0), &[1]);
//! assert!(lists.neighbors(2).is_empty());
//! # Ok::<(), hhg_core::Error>(())
//! ```

use rayon::prelude::*;

use crate::columns::check_count;
use crate::error::Error;
use crate::geometry::{CELL_MARGIN, Kernel, MAX_SPAN_CELLS, cell_coord, lane_keys, lattice_corner};
use crate::grid::{UNIT_POINTS, check_radius};
use crate::kernel::ROW_SLACK;
use crate::lists::NeighborLists;
use crate::lists::gather::is_ascending;
use crate::memory::{PairSink, check_cap, try_reserve_total, try_resize};
use crate::pairs::PairList;
use crate::parallel::{DisjointSlice, with_slack};
use crate::real::{LANES, Real};
use crate::simd::{avx2_detected, avx512_detected};
use crate::smallsort::sort_padded;
use crate::sort::{SortScratch, adopt_identity, counting_sort, cut_units};

/// A periodic rectangle of the plane (see [`crate::periodic::PeriodicBox`]):
/// `PeriodicBox2::cubic(origin, lengths)` is periodic along both axes.
pub type PeriodicBox2<T> = crate::periodic::PeriodicBox<T, 2>;

/// A minimum-image pair of [`PeriodicSearch2`], with its shift in box lengths per axis.
pub type PeriodicPair2 = crate::periodic::PeriodicPair<2>;

/// The pairs of [`PeriodicSearch2`] (see [`crate::periodic::PeriodicPairList`]).
pub type PeriodicPairList2<T> = crate::periodic::PeriodicPairList<T, 2>;

/// Fixed-radius search in a periodic rectangle: the minimum-image pairs within the radius,
/// with their shifts, and the points' neighbour lists; the 3-D
/// [`crate::periodic::PeriodicSearch`]'s code on [`Grid2`] (points are wrapped into the
/// rectangle, those near a lower periodic edge get ghost images, up to 3 per point).
///
/// ```
/// use hhg_core::plane::{PeriodicBox2, PeriodicPairList2, PeriodicSearch2};
///
/// let points = [[0.1f64, 5.0], [9.8, 5.0], [5.0, 5.0]];
/// let mut search = PeriodicSearch2::new(1.0, PeriodicBox2::cubic([0.0; 2], [10.0; 2]))?;
/// search.build(&points)?;
/// let mut pairs = PeriodicPairList2::default();
/// search.pairs(&mut pairs)?;
/// assert_eq!(pairs.len(), 1);
/// let pair = pairs.pairs()[0];
/// assert_eq!((pair.i, pair.j, pair.shift), (0, 1, [-1, 0]));
/// # Ok::<(), hhg_core::Error>(())
/// ```
pub type PeriodicSearch2<T> = crate::periodic::PeriodicSearchOn<T, Grid2<T>, 2>;

/// A neighbour search over several point sets of the plane sharing one radius (fluid, wall
/// samples): the 3-D [`crate::NeighborSearch`]'s code on [`Grid2`] (see
/// [`crate::NeighborSearchOn`], whose 2-D form this is), with the same activation table,
/// static sets, in-place adoption of the cell order and errors. Its lists ascend.
///
/// ```
/// use hhg_core::plane::NeighborSearch2;
///
/// let fluid = vec![[0.0f64, 0.5], [0.0, 1.0]];
/// let wall = vec![[0.0f64, 0.0], [5.0, 0.0]];
/// let mut search = NeighborSearch2::new(0.6)?;
/// let f = search.add_dynamic_set(&fluid)?;
/// let w = search.add_static_set(&wall)?;
/// search.set_active(f, f, true)?;
/// search.set_active(f, w, true)?;
/// search.find_neighbors()?;
/// assert_eq!(search.neighbors(f, f).unwrap().neighbors(0), &[1]);
/// assert_eq!(search.neighbors(f, w).unwrap().neighbors(0), &[0]);
/// assert!(search.neighbors(f, w).unwrap().neighbors(1).is_empty());
/// # Ok::<(), hhg_core::Error>(())
/// ```
pub type NeighborSearch2<T> = crate::search::NeighborSearchOn<T, Grid2<T>, 2>;

/// A dense table is used when it needs at most this many buckets per point (and at least
/// [`MIN_DENSE_BUCKETS`]), as in 3-D.
const DENSE_BUCKETS_PER_POINT: usize = 4;

/// Any occupied box whose dense table has at most this many buckets is stored densely.
const MIN_DENSE_BUCKETS: usize = 1 << 12;

/// A hashed table has about this many buckets per point (rounded to a power of two).
const HASHED_BUCKETS_PER_POINT: usize = 2;

/// Each axis of the table has at least `2^MIN_SHIFT` buckets, so the 9 offsets of a cell's
/// neighbourhood land in 9 distinct buckets even when the table wraps around.
const MIN_SHIFT: u32 = 2;

/// Points per rayon task when bounding, hashing and gathering.
const CHUNK: usize = 1 << 14;

/// Query points per work unit of [`Grid2::query`].
const QUERY_UNIT: usize = 1024;

/// The bounding box `(min, max)` of plane points, widened to `f64`.
type PlaneBox = ([f64; 2], [f64; 2]);

/// Borrowed plane points, array-of-structs or two separate columns.
#[derive(Clone, Copy, Debug)]
enum PlanePoints<'a, T> {
    /// `[x, y]` per point.
    Aos(&'a [[T; 2]]),
    /// Separate coordinate columns of equal length.
    Soa(&'a [T], &'a [T]),
}

impl<T: Real> PlanePoints<'_, T> {
    /// How many points there are.
    #[inline]
    fn len(&self) -> usize {
        match self {
            PlanePoints::Aos(p) => p.len(),
            PlanePoints::Soa(x, _) => x.len(),
        }
    }

    /// Point `i`.
    #[inline(always)]
    fn get(&self, i: usize) -> [T; 2] {
        match self {
            PlanePoints::Aos(p) => p[i],
            PlanePoints::Soa(x, y) => [x[i], y[i]],
        }
    }

    /// Axis `axis` of points `start..start + 8`, padding past the end with [`Real::PAD`].
    #[inline(always)]
    fn lanes(&self, axis: usize, start: usize) -> [T; LANES] {
        let end = (start + LANES).min(self.len());
        let mut out = [T::PAD; LANES];
        match self {
            PlanePoints::Aos(p) => {
                for (o, q) in out.iter_mut().zip(&p[start..end]) {
                    *o = q[axis];
                }
            }
            PlanePoints::Soa(x, y) => {
                let column = [x, y][axis];
                out[..end - start].copy_from_slice(&column[start..end]);
            }
        }
        out
    }

    /// The smallest and largest coordinate per axis of points `range`, widened to `f64`, and
    /// whether all of them were finite.
    fn fold(&self, range: std::ops::Range<usize>) -> ([f64; 2], [f64; 2], bool) {
        let first = self.get(range.start);
        let (mut lo, mut hi) = (first, first);
        let mut finite = true;
        for i in range {
            let p = self.get(i);
            for axis in 0..2 {
                let v = p[axis];
                lo[axis] = if v < lo[axis] { v } else { lo[axis] };
                hi[axis] = if v > hi[axis] { v } else { hi[axis] };
                finite &= v.is_finite();
            }
        }
        (lo.map(T::to_f64), hi.map(T::to_f64), finite)
    }

    /// The bounding box `(min, max)`, refusing NaN and infinite coordinates (naming the first
    /// offending point and axis). `None` when there is no point.
    fn bounds(&self) -> Result<Option<PlaneBox>, Error> {
        let n = self.len();
        if n == 0 {
            return Ok(None);
        }
        let (lo, hi, finite) = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|chunk| self.fold(chunk * CHUNK..((chunk + 1) * CHUNK).min(n)))
            .reduce(
                || ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2], true),
                |a, b| {
                    (
                        [a.0[0].min(b.0[0]), a.0[1].min(b.0[1])],
                        [a.1[0].max(b.1[0]), a.1[1].max(b.1[1])],
                        a.2 && b.2,
                    )
                },
            );
        if !finite {
            return Err(first_non_finite(*self).expect("a non-finite coordinate was seen"));
        }
        Ok(Some((lo, hi)))
    }
}

/// The first NaN or infinite coordinate of `points`, as an error.
fn first_non_finite<T: Real>(points: PlanePoints<'_, T>) -> Option<Error> {
    (0..points.len()).find_map(|index| {
        let p = points.get(index);
        (0..2)
            .find(|&axis| !p[axis].is_finite())
            .map(|axis| Error::NonFiniteCoordinate {
                index,
                axis,
                value: p[axis].to_f64(),
            })
    })
}

/// The geometry of a plane grid: where cells are and how they map to buckets
/// (`bucket = (ix & mx) | (iy & my) << sx`, Schornbaum's geometric hashing in 2-D).
#[derive(Clone, Copy, Debug, PartialEq)]
struct PlaneTable {
    /// Corner of cell `(0, 0)`, on the lattice `(k + LATTICE_SHIFT) * cell`.
    origin: [f64; 2],
    /// `1 / cell`, the cell edge being the radius times `1 + CELL_MARGIN`.
    inv_cell: f64,
    /// Cells the points span per axis.
    span: [i32; 2],
    /// `log2` of the table dims per axis.
    shift: [u32; 2],
    /// Whether the table is dense (no aliasing).
    dense: bool,
}

impl PlaneTable {
    /// Chooses the table for `n` points in the box `lo..=hi`, searched with `radius`; refuses
    /// points spanning more than [`MAX_SPAN_CELLS`] cells along an axis.
    fn choose<T: Real>(
        lo: [f64; 2],
        hi: [f64; 2],
        n: usize,
        radius: f64,
        points: PlanePoints<'_, T>,
    ) -> Result<Self, Error> {
        let cell = radius * (1.0 + CELL_MARGIN);
        let inv_cell = 1.0 / cell;
        let origin = [0, 1].map(|axis| lattice_corner(lo[axis], cell, inv_cell));
        let mut span = [0i32; 2];
        let mut shift = [0u32; 2];
        for axis in 0..2 {
            let cells = (hi[axis] - origin[axis]) * inv_cell;
            if cells.is_nan() || cells >= MAX_SPAN_CELLS {
                let index = (0..points.len())
                    .find(|&i| points.get(i)[axis].to_f64() == hi[axis])
                    .unwrap_or(0);
                return Err(Error::CoordinateOutOfRange {
                    index,
                    axis,
                    value: hi[axis],
                    cells,
                    limit: MAX_SPAN_CELLS,
                });
            }
            span[axis] = cells.floor() as i32 + 1;
            // Dims strictly larger than the span: the wrapped neighbours of border cells are empty.
            shift[axis] = (span[axis] as u32 + 1)
                .next_power_of_two()
                .trailing_zeros()
                .max(MIN_SHIFT);
        }
        let dense_limit = (n * DENSE_BUCKETS_PER_POINT).max(MIN_DENSE_BUCKETS);
        let total = shift[0] + shift[1];
        let dense = total <= 31 && (1usize << total) <= dense_limit;
        if !dense {
            // Halve the longest axis until the table has about HASHED_BUCKETS_PER_POINT
            // buckets per point: the dims keep following the box's aspect.
            let target = (n * HASHED_BUCKETS_PER_POINT)
                .next_power_of_two()
                .trailing_zeros()
                .clamp(2 * MIN_SHIFT, 30);
            while shift[0] + shift[1] > target {
                let longest = if shift[0] >= shift[1] { 0 } else { 1 };
                if shift[longest] <= MIN_SHIFT {
                    break;
                }
                shift[longest] -= 1;
            }
        }
        Ok(Self {
            origin,
            inv_cell,
            span,
            shift,
            dense,
        })
    }

    /// The number of buckets.
    #[inline]
    fn buckets(&self) -> usize {
        1 << (self.shift[0] + self.shift[1])
    }

    /// Cell coordinate of `value` along `axis`, clamped to `-2..=span + 1` so that far query
    /// points land in a cell with no occupied neighbour (exact for the set's own points).
    #[inline(always)]
    fn coord(&self, value: f64, axis: usize) -> i32 {
        cell_coord(value, self.origin[axis], self.inv_cell, self.span[axis])
    }

    /// Bucket of cell coordinates (wrapping on a hashed table).
    #[inline(always)]
    fn bucket(&self, c: [i32; 2]) -> u32 {
        let mask = |axis: usize| (c[axis] & ((1 << self.shift[axis]) - 1)) as u32;
        mask(0) | mask(1) << self.shift[0]
    }

    /// Bucket coordinates of bucket `b`.
    #[inline(always)]
    fn bucket_coords(&self, b: u32) -> [u32; 2] {
        [b & ((1 << self.shift[0]) - 1), b >> self.shift[0]]
    }

    /// Tells whether cell coordinates can have a point of the set within one cell: false only
    /// for a dense table and a cell farther than one cell outside the occupied span.
    #[inline(always)]
    fn may_have_neighbours(&self, c: [i32; 2]) -> bool {
        !self.dense || (0..2).all(|a| c[a] >= -1 && c[a] <= self.span[a])
    }

    /// Buckets of 8 points by the scalar reference kernel.
    #[inline]
    fn keys8_scalar<T: Real>(&self, lanes: &[[T; LANES]; 2]) -> [u32; LANES] {
        std::array::from_fn(|k| {
            let c = [0, 1].map(|axis| self.coord(lanes[axis][k].to_f64(), axis));
            self.bucket(c)
        })
    }

    /// Buckets of 8 points, 8 lanes at a time ([`lane_keys`]).
    #[inline]
    fn keys8_simd<T: Real>(&self, lanes: &[[T; LANES]; 2]) -> [u32; LANES] {
        lane_keys(lanes, self.origin, self.inv_cell, self.span, self.shift)
    }

    /// Computes the bucket of every point into `keys`, in parallel.
    fn keys<T: Real>(&self, points: PlanePoints<'_, T>, kernel: Kernel, keys: &mut Vec<u32>) {
        keys.resize(points.len(), 0);
        keys.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(chunk, out)| {
                for (block, out) in out.chunks_mut(LANES).enumerate() {
                    let start = chunk * CHUNK + block * LANES;
                    let lanes = [0, 1].map(|axis| points.lanes(axis, start));
                    let keys = match kernel {
                        Kernel::Simd => self.keys8_simd(&lanes),
                        Kernel::Scalar => self.keys8_scalar(&lanes),
                    };
                    out.copy_from_slice(&keys[..out.len()]);
                }
            });
    }
}

/// Up to 6 ranges of sorted positions: a neighbourhood of 3 rows, each one range or two
/// where it wraps around the table.
#[derive(Clone, Copy, Debug, Default)]
struct Rows {
    ranges: [(u32, u32); 6],
    len: usize,
}

impl Rows {
    /// Appends the range `start..end` unless it is empty.
    #[inline(always)]
    fn push(&mut self, start: u32, end: u32) {
        if start < end {
            self.ranges[self.len] = (start, end);
            self.len += 1;
        }
    }

    /// The ranges, in the order pushed.
    #[inline(always)]
    fn as_slice(&self) -> &[(u32, u32)] {
        &self.ranges[..self.len]
    }

    /// Whether each range starts at or after the end of the one before, so that the
    /// positions of all of them, in the order pushed, ascend.
    #[inline(always)]
    fn ascend(&self) -> bool {
        self.as_slice()
            .windows(2)
            .all(|pair| pair[0].1 <= pair[1].0)
    }

    /// Appends the sorted positions of the 3 buckets `bx - 1 ..= bx + 1` of the row starting
    /// at bucket `row`, splitting where the row wraps around the table.
    #[inline(always)]
    fn push_row(&mut self, starts: &[u32], table: &PlaneTable, bx: u32, row: u32) {
        let mx = (1u32 << table.shift[0]) - 1;
        let at = |x: u32| starts[(row + x) as usize];
        if bx >= 1 && bx < mx {
            self.push(at(bx - 1), at(bx + 2));
        } else if bx == 0 {
            self.push(at(0), at(2));
            self.push(at(mx), at(mx + 1));
        } else {
            self.push(at(0), at(1));
            self.push(at(mx - 1), at(mx + 1));
        }
    }
}

/// The first bucket of the row `by + dy` (wrapped).
#[inline(always)]
fn row_base(table: &PlaneTable, by: u32, dy: i32) -> u32 {
    let my = (1u32 << table.shift[1]) - 1;
    (by.wrapping_add(dy as u32) & my) << table.shift[0]
}

/// The lists one work unit found: each of its searching points' list, one after the other.
///
/// Its buffers grow only through [`crate::memory`]: a unit that finds no memory, or whose
/// lists pass the output's cap, records why in `failure` and stops; the pass then fails
/// before the output grows.
#[derive(Debug)]
struct UnitLists<T> {
    /// The entries (caller indices), list after list: only `..filled` is meaningful, the
    /// rest is room for the candidates of the list being gathered.
    entries: Vec<u32>,
    /// The squared distances alongside `entries`, when the pass asks for them.
    distances: Vec<T>,
    /// The scratch of the sorting network for lists longer than it (see
    /// [`sort_padded`]).
    merge: Vec<u32>,
    /// How many entries the unit's lists hold.
    filled: usize,
    /// Where each list ends in `entries`.
    ends: Vec<u32>,
    /// The most entries the output may hold: a unit alone past it fails.
    cap: usize,
    /// Why the unit stopped short (no memory, or past the cap).
    failure: Option<Error>,
}

impl<T> Default for UnitLists<T> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            distances: Vec::new(),
            merge: Vec::new(),
            filled: 0,
            ends: Vec::new(),
            cap: 0,
            failure: None,
        }
    }
}

impl<T: Real> UnitLists<T> {
    /// Empties the buffer for `lists` lists of an output capped at `cap` entries, with room
    /// to record where each ends. False, with the reason recorded, without the memory.
    fn start(&mut self, lists: usize, cap: usize) -> bool {
        self.filled = 0;
        self.ends.clear();
        self.cap = cap;
        self.failure = None;
        // With slack: a unit's buffer is kept across calls, and a step moves a few more
        // points into it.
        let room = with_slack(lists);
        if let Err(error) = try_reserve_total(&mut self.ends, room, "a work unit's list ends") {
            self.failure = Some(error);
            return false;
        }
        true
    }

    /// Makes room for `candidates` more entries (and distances, when asked) past the filled
    /// ones. False, with the reason recorded, when the memory is not there.
    #[inline(always)]
    fn room_for(&mut self, candidates: usize, with_distances: bool) -> bool {
        let needed = self.filled + candidates;
        if needed <= self.entries.len() && (!with_distances || needed <= self.distances.len()) {
            return true;
        }
        self.grow(needed, with_distances)
    }

    #[cold]
    fn grow(&mut self, needed: usize, with_distances: bool) -> bool {
        let grown = try_resize(&mut self.entries, needed, 0, "a work unit's list entries")
            .and_then(|()| {
                if with_distances && self.distances.len() < needed {
                    let what = "a work unit's list distances";
                    try_resize(&mut self.distances, needed, T::default(), what)?;
                }
                Ok(())
            });
        match grown {
            Ok(()) => true,
            Err(error) => {
                self.failure = Some(error);
                false
            }
        }
    }

    /// Records the list that ends at entry `end`. False, with the reason recorded, when the
    /// unit's lists pass the output's cap.
    #[inline(always)]
    fn close_list(&mut self, end: usize) -> bool {
        debug_assert!(
            self.ends.len() < self.ends.capacity(),
            "a list past the reserved room"
        );
        self.ends.push(end as u32);
        self.filled = end;
        if let Err(error) = check_cap("list entries", end, self.cap) {
            self.failure = Some(error);
            return false;
        }
        true
    }

    /// Where list `k` of the unit starts in `entries`, and its length.
    #[inline(always)]
    fn list(&self, k: usize) -> (u32, u32) {
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        (start, self.ends[k] - start)
    }

    /// The entries of list `k` and their distances (empty when the pass had none).
    #[inline(always)]
    fn list_slices(&self, k: usize) -> (&[u32], &[T]) {
        let (start, len) = self.list(k);
        let range = start as usize..(start + len) as usize;
        let distances = self.distances.get(range.clone()).unwrap_or(&[]);
        (&self.entries[range], distances)
    }
}

/// The scratch of the plane's list passes, kept in [`NeighborLists`] across calls so that a
/// pass after warm-up allocates nothing: the work units' buffers, and where each searching
/// point's list lies among them (its unit and its rank there). Per-call buffers cost ~80 of
/// ~1,200 instructions per point on uniform points in cell order (callgrind, 131k).
#[derive(Debug)]
pub(crate) struct PlaneScratch<T> {
    units: Vec<UnitLists<T>>,
    places: Vec<[u32; 2]>,
}

impl<T> Default for PlaneScratch<T> {
    fn default() -> Self {
        Self {
            units: Vec::new(),
            places: Vec::new(),
        }
    }
}

/// A clone starts with empty scratch: none of it carries meaning between calls.
impl<T> Clone for PlaneScratch<T> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// At least `units` work units' buffers in `buffers`, the ones there kept, without aborting
/// when the memory is not there.
fn unit_buffers<T: Real>(buffers: &mut Vec<UnitLists<T>>, units: usize) -> Result<(), Error> {
    if buffers.len() < units {
        try_reserve_total(buffers, units, "the work units' lists")?;
        buffers.resize_with(units, UnitLists::default);
    }
    Ok(())
}

/// The first failure of the units, in unit order (the same for any thread count).
fn first_failure<T>(buffers: &mut [UnitLists<T>]) -> Option<Error> {
    buffers.iter_mut().find_map(|buffer| buffer.failure.take())
}

/// Replaces `lists` by `n` lists, list `i` being list `k` of `buffers[u]` for
/// `(u, k) = place(i)`, with the buffers' distances when asked. Fails for want of memory or
/// past the cap, before the entries are allocated, and then leaves no list.
fn assign_from_units<T: Real>(
    lists: &mut NeighborLists<T>,
    n: usize,
    buffers: &[UnitLists<T>],
    with_distances: bool,
    place: impl Fn(usize) -> (usize, usize) + Sync,
) -> Result<(), Error> {
    let list = |i: usize| {
        let (unit, k) = place(i);
        buffers[unit].list_slices(k)
    };
    if with_distances {
        lists.assign_with_distances(
            n,
            |i| list(i).0.len(),
            |i, indices, distances| {
                let (found, squared) = list(i);
                indices.copy_from_slice(found);
                distances.copy_from_slice(squared);
            },
        )
    } else {
        lists.assign_with(
            n,
            |i| list(i).0.len(),
            |i, out| out.copy_from_slice(list(i).0),
        )
    }
}

/// A fixed-radius neighbour grid over points of the plane, `[T; 2]`.
///
/// Build once per time step with [`Grid2::build`]; the grid's buffers are kept and reused.
/// Every search (SIMD or scalar kernel, any thread count) reports exactly the pairs of a
/// brute-force loop with the predicate `dx*dx + dy*dy <= r*r` (`<=` at exactly `r`).
#[derive(Debug)]
pub struct Grid2<T: Real> {
    radius: T,
    r2: T,
    kernel: Kernel,
    table: Option<PlaneTable>,
    /// The points' x coordinates in cell order, then [`Real::PAD`] for a whole block of lanes.
    x: Vec<T>,
    /// The points' y coordinates in cell order, padded as `x`.
    y: Vec<T>,
    /// Sorted position -> caller index.
    order: Vec<u32>,
    /// The bucket starts of the counting sort (one more than buckets).
    starts: Vec<u32>,
    /// Work units: bucket ranges of about [`UNIT_POINTS`] points.
    units: Vec<(u32, u32)>,
    /// The bucket of each point, in the caller's numbering.
    keys: Vec<u32>,
    sort_scratch: SortScratch,
    /// `order` is the identity: the points came in cell order, or the caller adopted it.
    in_cell_order: bool,
    /// The order before the last [`Grid2::adopt_cell_order`], handed to the caller.
    adopted_from: Vec<u32>,
    /// The CPU has AVX2 for the lists' sorting network.
    sort_avx2: bool,
    /// The CPU has AVX-512 for the lists' sorting network.
    sort_avx512: bool,
}

impl<T: Real> Grid2<T> {
    /// An empty grid for neighbour search within `radius` (pairs with distance `<= radius`).
    ///
    /// Fails with [`Error::InvalidRadius`] for a radius that is zero, negative, NaN or
    /// infinite, or whose square is not a normal number in `T`.
    pub fn new(radius: T) -> Result<Self, Error> {
        check_radius(radius)?;
        Ok(Self {
            radius,
            r2: radius * radius,
            kernel: Kernel::Simd,
            table: None,
            x: Vec::new(),
            y: Vec::new(),
            order: Vec::new(),
            starts: Vec::new(),
            units: Vec::new(),
            keys: Vec::new(),
            sort_scratch: SortScratch::default(),
            in_cell_order: false,
            adopted_from: Vec::new(),
            sort_avx2: avx2_detected(),
            sort_avx512: avx512_detected(),
        })
    }

    /// Chooses the SIMD (default) or the scalar reference kernel for the keys and the
    /// distance tests; both give identical results.
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
    }

    /// The kernel the build and the searches run.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The search radius.
    pub fn radius(&self) -> T {
        self.radius
    }

    /// How many points the last build took.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Tells whether the grid holds no point.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Sorted position -> caller index: the permutation that puts the points in cell order.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Whether the points are numbered in cell order (`order()` is the identity): given so
    /// to the last build, or adopted since with [`Grid2::adopt_cell_order`]. The list passes
    /// then need no sort: a neighbourhood's rows of sorted positions are caller indices that
    /// ascend from row to row.
    pub fn in_cell_order(&self) -> bool {
        self.in_cell_order
    }

    /// Makes the cell order of the last build the caller's numbering, without a rebuild:
    /// point `k` is from now on the `k`-th point in cell order, `order()` is the identity,
    /// and lists, pairs and queries use the new numbering (and take the pass for points in
    /// cell order, which sorts no list), as [`crate::Grid::adopt_cell_order`] does in 3-D.
    ///
    /// Returns the permutation the caller must apply to each of its own per-point arrays
    /// ([`crate::reorder::apply_order`]): `order()` as it was before the call. The returned
    /// slice is overwritten by the next call; the buffers are reused.
    pub fn adopt_cell_order(&mut self) -> &[u32] {
        let n = self.len();
        adopt_identity(&mut self.order, &mut self.adopted_from, n, 0);
        self.in_cell_order = n > 0;
        &self.adopted_from[..n]
    }

    /// Whether the last build's table is dense (`Some(true)`), hashed (`Some(false)`), or
    /// there is no table (an empty grid).
    pub fn is_dense(&self) -> Option<bool> {
        self.table.map(|table| table.dense)
    }

    /// Builds the grid over array-of-structs positions.
    ///
    /// Fails with [`Error::TooManyPoints`], [`Error::NonFiniteCoordinate`] (naming the first
    /// offending point and axis) or [`Error::CoordinateOutOfRange`] (points spanning more than
    /// [`MAX_SPAN_CELLS`] cells along an axis), and then leaves the grid as it was.
    pub fn build(&mut self, points: &[[T; 2]]) -> Result<(), Error> {
        self.build_points(PlanePoints::Aos(points))
    }

    /// Builds the grid over separate coordinate columns; fails like [`Grid2::build`], and
    /// with [`Error::LengthMismatch`] when the columns differ in length (its `z` is `x`'s
    /// length: there is no third column).
    pub fn build_soa(&mut self, x: &[T], y: &[T]) -> Result<(), Error> {
        if x.len() != y.len() {
            return Err(Error::LengthMismatch {
                x: x.len(),
                y: y.len(),
                z: x.len(),
            });
        }
        self.build_points(PlanePoints::Soa(x, y))
    }

    /// Validates and bounds, chooses the table, hashes, counting-sorts by bucket, gathers the
    /// sorted columns and cuts the work units. Every check runs before the grid changes.
    fn build_points(&mut self, points: PlanePoints<'_, T>) -> Result<(), Error> {
        let n = points.len();
        check_count(n)?;
        let Some((lo, hi)) = points.bounds()? else {
            self.clear();
            return Ok(());
        };
        let table = PlaneTable::choose(lo, hi, n, self.radius.to_f64(), points)?;
        table.keys(points, self.kernel, &mut self.keys);
        self.in_cell_order = counting_sort(
            &self.keys,
            table.buckets(),
            &mut self.starts,
            &mut self.order,
            &mut self.sort_scratch,
        );
        // Padding lets the distance kernel load 8 lanes at any sorted position below `n`.
        self.x.resize(n + LANES, T::PAD);
        self.y.resize(n + LANES, T::PAD);
        self.x[n..].fill(T::PAD);
        self.y[n..].fill(T::PAD);
        let order = &self.order[..];
        self.x[..n]
            .par_chunks_mut(CHUNK)
            .zip(self.y[..n].par_chunks_mut(CHUNK))
            .zip(order.par_chunks(CHUNK))
            .for_each(|((x, y), order)| {
                for (k, &i) in order.iter().enumerate() {
                    let p = points.get(i as usize);
                    x[k] = p[0];
                    y[k] = p[1];
                }
            });
        self.table = Some(table);
        cut_units(&self.starts, n, UNIT_POINTS, &mut self.units);
        Ok(())
    }

    /// Empties the grid, keeping its buffers.
    fn clear(&mut self) {
        self.table = None;
        self.x.clear();
        self.y.clear();
        self.order.clear();
        self.starts.clear();
        self.units.clear();
        self.in_cell_order = false;
    }

    /// Calls `hit(j)` for every sorted position `j` in `start..end` within the radius of `p`,
    /// in ascending order: 8 lanes at a time, by the SIMD or the scalar mask.
    #[inline(always)]
    fn scan(&self, p: [T; 2], start: u32, end: u32, mut hit: impl FnMut(usize)) {
        let (start, end) = (start as usize, end as usize);
        let simd = self.kernel == Kernel::Simd;
        let mut k = start;
        while k < end {
            let x: &[T; LANES] = self.x[k..k + LANES].try_into().unwrap();
            let y: &[T; LANES] = self.y[k..k + LANES].try_into().unwrap();
            let mut mask = if simd {
                T::plane_mask(p, x, y, self.r2)
            } else {
                T::plane_mask_scalar(p, x, y, self.r2)
            };
            if end - k < LANES {
                mask &= (1 << (end - k)) - 1;
            }
            while mask != 0 {
                hit(k + mask.trailing_zeros() as usize);
                mask &= mask - 1;
            }
            k += LANES;
        }
    }

    /// The point at sorted position `j`.
    #[inline(always)]
    fn point(&self, j: usize) -> [T; 2] {
        [self.x[j], self.y[j]]
    }

    /// The 3 rows of 3 buckets around bucket coordinates `b`, as ranges of sorted positions.
    #[inline(always)]
    fn neighbourhood(&self, table: &PlaneTable, b: [u32; 2]) -> Rows {
        let mut rows = Rows::default();
        for dy in -1..=1 {
            rows.push_row(&self.starts, table, b[0], row_base(table, b[1], dy));
        }
        rows
    }

    /// Every unique neighbour pair `[i, j]`, `i < j` in the caller's numbering, into `out`
    /// (its distances cleared). The order is deterministic, the same for any thread count:
    /// work unit by work unit in cell order, each point against the later points of its
    /// bucket and the 4 forward neighbours of its cell.
    ///
    /// Fails with [`Error::OutOfMemory`] or [`Error::OutputTooLarge`] (see
    /// [`PairList::set_max_pairs`]) and then leaves the list empty.
    pub fn pairs(&self, out: &mut PairList<T>) -> Result<(), Error> {
        let Some(table) = self.table else {
            return out.collect_units(0, |_, _| {});
        };
        out.collect_units(self.units.len(), |unit, sink| {
            self.unit_pairs(&table, self.units[unit], true, sink);
        })
    }

    /// [`Grid2::pairs`] with the squared distance of every pair
    /// ([`PairList::distances_squared`]), by the predicate's formula `dx*dx + dy*dy` in the
    /// input precision: the same pairs in the same order.
    ///
    /// Fails as [`Grid2::pairs`] does, and then leaves the list empty.
    pub fn pairs_with_distances(&self, out: &mut PairList<T>) -> Result<(), Error> {
        let units = if self.table.is_some() {
            self.units.len()
        } else {
            0
        };
        out.collect_units_with_distances(
            units,
            |unit, sink| {
                if let Some(table) = &self.table {
                    self.unit_pairs(table, self.units[unit], false, sink);
                }
            },
            |[i, j]| {
                let (oi, oj) = (self.order[i as usize], self.order[j as usize]);
                let distance =
                    T::plane_distance_squared(self.point(i as usize), self.point(j as usize));
                ([oi.min(oj), oi.max(oj)], distance)
            },
        )
    }

    /// The pairs of the buckets `unit.0..unit.1`, in visiting order: as caller indices
    /// (`i < j`) when `caller_indices`, else as the sorted positions of the points (for
    /// [`Grid2::pairs_with_distances`], which maps them after reading their coordinates).
    #[inline(always)]
    fn unit_pairs(
        &self,
        table: &PlaneTable,
        unit: (u32, u32),
        caller_indices: bool,
        sink: &mut PairSink,
    ) {
        let mx = (1u32 << table.shift[0]) - 1;
        for b in unit.0..unit.1 {
            let (s, e) = (self.starts[b as usize], self.starts[b as usize + 1]);
            if s == e {
                continue;
            }
            let [bx, by] = table.bucket_coords(b);
            // The own row after the point: the rest of its bucket and the bucket `bx + 1`,
            // one range unless the row wraps there.
            let row = b - bx;
            let (own_end, wrapped) = if bx < mx {
                (self.starts[b as usize + 2], (0, 0))
            } else {
                (
                    e,
                    (self.starts[row as usize], self.starts[row as usize + 1]),
                )
            };
            let mut next = Rows::default();
            next.push_row(&self.starts, table, bx, row_base(table, by, 1));
            next.push(wrapped.0, wrapped.1);
            for i in s..e {
                let p = self.point(i as usize);
                let oi = self.order[i as usize];
                let mut emit = |j: usize| {
                    if caller_indices {
                        let oj = self.order[j];
                        sink.push([oi.min(oj), oi.max(oj)]);
                    } else {
                        sink.push([i, j as u32]);
                    }
                };
                self.scan(p, i + 1, own_end, &mut emit);
                for &(start, end) in next.as_slice() {
                    self.scan(p, start, end, &mut emit);
                }
            }
        }
    }

    /// The neighbour lists of every point in CSR form, numbered as the caller numbered the
    /// points: list `i` holds every `j != i` within the radius of point `i`, ascending; no
    /// distances. The pass's buffers are its own: calls on one grid from several threads
    /// run at once.
    ///
    /// Fails with [`Error::OutOfMemory`] or [`Error::OutputTooLarge`] (see
    /// [`NeighborLists::set_max_entries`]) and then leaves no list.
    pub fn neighbor_lists(&self, lists: &mut NeighborLists<T>) -> Result<(), Error> {
        self.set_lists(self, true, false, lists)
    }

    /// [`Grid2::neighbor_lists`] with the squared distance of each entry
    /// ([`NeighborLists::neighbor_distances_squared`]), by the predicate's formula
    /// `dx*dx + dy*dy` with `d = q - p`, in the input precision.
    pub fn neighbor_lists_with_distances(&self, lists: &mut NeighborLists<T>) -> Result<(), Error> {
        self.set_lists(self, true, true, lists)
    }

    /// The neighbour lists of every point of `searching` (another set, built with its own
    /// grid) among this grid's points: list `i` holds, ascending in this grid's numbering,
    /// every point within the radius of `searching`'s point `i` (its own radius is not used).
    ///
    /// Fails as [`Grid2::neighbor_lists`] does, and then leaves no list.
    pub fn lists_for(
        &self,
        searching: &Grid2<T>,
        lists: &mut NeighborLists<T>,
    ) -> Result<(), Error> {
        self.set_lists(searching, false, false, lists)
    }

    /// [`Grid2::lists_for`] with the squared distances, as
    /// [`Grid2::neighbor_lists_with_distances`] gives them.
    pub fn lists_for_with_distances(
        &self,
        searching: &Grid2<T>,
        lists: &mut NeighborLists<T>,
    ) -> Result<(), Error> {
        self.set_lists(searching, false, true, lists)
    }

    /// The lists of the points of `searching` (this grid itself when `own`, each list then
    /// without its point) among this grid's points, numbered as the callers numbered both
    /// sets: `searching`'s work units run in parallel, each into its own buffer, then each
    /// list is copied into place. A failure leaves no list.
    fn set_lists(
        &self,
        searching: &Grid2<T>,
        own: bool,
        with_distances: bool,
        lists: &mut NeighborLists<T>,
    ) -> Result<(), Error> {
        let n = searching.len();
        let (Some(table), Some(_)) = (self.table, searching.table) else {
            // No searched point, or no searching point: `n` empty lists.
            return if with_distances {
                lists.assign_with_distances(n, |_| 0, |_, _, _| {})
            } else {
                lists.assign_with(n, |_| 0, |_, _| {})
            };
        };
        let cap = lists.max_entries().unwrap_or(usize::MAX);
        let mut scratch = std::mem::take(&mut lists.plane);
        let result = self
            .gather_set_lists(&table, searching, own, with_distances, cap, &mut scratch)
            .and_then(|()| {
                let places = &scratch.places;
                assign_from_units(lists, n, &scratch.units, with_distances, |i| {
                    let [unit, k] = places[i];
                    (unit as usize, k as usize)
                })
            });
        lists.plane = scratch;
        if result.is_err() {
            lists.clear_after_failure();
        }
        result
    }

    /// Runs the work units of `searching` (see [`Grid2::set_lists`]), each into its own
    /// buffer of `scratch`, and finds where each of its caller indices' lists lies: the unit
    /// and its rank there. Fails, before any output grows, where a unit stopped short.
    fn gather_set_lists(
        &self,
        table: &PlaneTable,
        searching: &Grid2<T>,
        own: bool,
        with_distances: bool,
        cap: usize,
        scratch: &mut PlaneScratch<T>,
    ) -> Result<(), Error> {
        let n = searching.len();
        let units = searching.units.len();
        unit_buffers(&mut scratch.units, units)?;
        let buffers = &mut scratch.units[..units];
        buffers
            .par_iter_mut()
            .zip(&searching.units)
            .for_each(|(buffer, &unit)| {
                if own {
                    self.unit_lists(table, unit, with_distances, cap, buffer);
                } else {
                    self.unit_lists_for(table, searching, unit, with_distances, cap, buffer);
                }
            });
        if let Some(error) = first_failure(buffers) {
            return Err(error);
        }
        try_resize(&mut scratch.places, n, [0u32; 2], "the lists' places")?;
        let shared = DisjointSlice::new(&mut scratch.places[..n]);
        searching
            .units
            .par_iter()
            .zip(&scratch.units[..units])
            .enumerate()
            .for_each(|(u, (unit, buffer))| {
                let first = searching.starts[unit.0 as usize] as usize;
                for k in 0..buffer.ends.len() {
                    let i = searching.order[first + k] as usize;
                    debug_assert!(i < n);
                    // SAFETY: `order` is a permutation of `0..n` (the counting sort's) and
                    // the units cover disjoint ranges of sorted positions, so caller index
                    // `i` is written by this task alone, and it is below `n`.
                    unsafe { shared.write(i, [u as u32, k as u32]) };
                }
            });
        Ok(())
    }

    /// The lists of the points of buckets `unit.0..unit.1`, in sorted position order, each
    /// without the point itself; stops at the first failure.
    fn unit_lists(
        &self,
        table: &PlaneTable,
        unit: (u32, u32),
        with_distances: bool,
        cap: usize,
        out: &mut UnitLists<T>,
    ) {
        let first = self.starts[unit.0 as usize];
        let last = self.starts[unit.1 as usize];
        if !out.start((last - first) as usize, cap) {
            return;
        }
        for b in unit.0..unit.1 {
            let (s, e) = (self.starts[b as usize], self.starts[b as usize + 1]);
            if s == e {
                continue;
            }
            let rows = self.neighbourhood(table, table.bucket_coords(b));
            for i in s..e {
                let p = self.point(i as usize);
                if !self.gather_list(p, &rows, i as usize, with_distances, out) {
                    return;
                }
            }
        }
    }

    /// The lists among this grid's points of the points of `searching`'s buckets
    /// `unit.0..unit.1`, in `searching`'s sorted position order; stops at the first failure.
    fn unit_lists_for(
        &self,
        table: &PlaneTable,
        searching: &Grid2<T>,
        unit: (u32, u32),
        with_distances: bool,
        cap: usize,
        out: &mut UnitLists<T>,
    ) {
        let first = searching.starts[unit.0 as usize];
        let last = searching.starts[unit.1 as usize];
        if !out.start((last - first) as usize, cap) {
            return;
        }
        for i in first..last {
            let p = searching.point(i as usize);
            let rows = self.rows_around(table, p);
            if !self.gather_list(p, &rows, usize::MAX, with_distances, out) {
                return;
            }
        }
    }

    /// Appends to `out` the list of `p`: the caller index of every point of `rows` within the
    /// radius of `p` but the one at sorted position `skip`, ascending, with the squared
    /// distances when asked. False, with the reason recorded in `out`, when the memory is not
    /// there or the unit passes the output's cap.
    #[inline(always)]
    fn gather_list(
        &self,
        p: [T; 2],
        rows: &Rows,
        skip: usize,
        with_distances: bool,
        out: &mut UnitLists<T>,
    ) -> bool {
        let candidates: u32 = rows.as_slice().iter().map(|&(s, e)| e - s).sum();
        // Room for every candidate and the sorting network's padding past the list.
        let row = candidates as usize + ROW_SLACK;
        if !out.room_for(row, with_distances) {
            return false;
        }
        let start = out.filled;
        let mut end = start;
        let entries = &mut out.entries;
        // In cell order, sorted positions are caller indices: the list ascends as found when
        // each row's range lies after the one before (it does not where the table wraps).
        let ascending = self.in_cell_order && rows.ascend();
        if with_distances {
            // Sorted positions first, ordered by caller index, then each turned into its
            // caller index beside its distance.
            for &(s, e) in rows.as_slice() {
                self.scan(p, s, e, |j| {
                    if j != skip {
                        entries[end] = j as u32;
                        end += 1;
                    }
                });
            }
            let list = &mut entries[start..end];
            if !ascending {
                list.sort_unstable_by_key(|&j| self.order[j as usize]);
            }
            for (entry, distance) in list.iter_mut().zip(&mut out.distances[start..end]) {
                let j = *entry as usize;
                *distance = T::plane_distance_squared(p, self.point(j));
                *entry = self.order[j];
            }
        } else {
            for &(s, e) in rows.as_slice() {
                self.scan(p, s, e, |j| {
                    if j != skip {
                        entries[end] = self.order[j];
                        end += 1;
                    }
                });
            }
            // Lists found out of the caller's order go through the branch-free network (the
            // standard unstable sort cost 381 instructions per point of 1,908 on uniform
            // points in random order, callgrind), unless they ascend all the same (input
            // nearly in cell order).
            if !ascending && !is_ascending(&entries[start..end]) {
                // SAFETY: `avx2` and `avx512` were detected on this CPU.
                unsafe {
                    sort_padded(
                        &mut entries[start..start + row],
                        end - start,
                        &mut out.merge,
                        self.sort_avx2,
                        self.sort_avx512,
                    );
                }
            }
        }
        out.close_list(end)
    }

    /// The neighbour lists of query points not in the set, in CSR form: list `q` holds every
    /// caller index `j` of the grid's points within the radius of `points[q]`, ascending.
    ///
    /// Fails with [`Error::NonFiniteCoordinate`] (naming the query point and axis) and then
    /// leaves the lists as they were; with [`Error::OutOfMemory`] or
    /// [`Error::OutputTooLarge`] (see [`NeighborLists::set_max_entries`]), and then leaves
    /// no list.
    pub fn query(&self, points: &[[T; 2]], lists: &mut NeighborLists<T>) -> Result<(), Error> {
        let queries = PlanePoints::Aos(points);
        if let Some(error) = first_non_finite_fast(queries) {
            return Err(error);
        }
        let Some(table) = self.table else {
            return lists.assign_with(points.len(), |_| 0, |_, _| {});
        };
        let cap = lists.max_entries().unwrap_or(usize::MAX);
        let units = points.len().div_ceil(QUERY_UNIT);
        let mut scratch = std::mem::take(&mut lists.plane);
        let result = unit_buffers(&mut scratch.units, units).and_then(|()| {
            let buffers = &mut scratch.units[..units];
            buffers
                .par_iter_mut()
                .zip(points.par_chunks(QUERY_UNIT))
                .for_each(|(out, chunk)| {
                    if !out.start(chunk.len(), cap) {
                        return;
                    }
                    for &p in chunk {
                        let rows = self.rows_around(&table, p);
                        if !self.gather_list(p, &rows, usize::MAX, false, out) {
                            return;
                        }
                    }
                });
            if let Some(error) = first_failure(buffers) {
                return Err(error);
            }
            assign_from_units(lists, points.len(), buffers, false, |q| {
                (q / QUERY_UNIT, q % QUERY_UNIT)
            })
        });
        lists.plane = scratch;
        if result.is_err() {
            lists.clear_after_failure();
        }
        result
    }

    /// The rows of the neighbourhood of the cell of `p` (a point of the set or not); none
    /// when no point of the set can lie within one cell of it.
    #[inline(always)]
    fn rows_around(&self, table: &PlaneTable, p: [T; 2]) -> Rows {
        let c = [0, 1].map(|axis| table.coord(p[axis].to_f64(), axis));
        if table.may_have_neighbours(c) {
            self.neighbourhood(table, table.bucket_coords(table.bucket(c)))
        } else {
            Rows::default()
        }
    }
}

/// The first NaN or infinite coordinate of `points` as an error, after a parallel check that
/// finds none in the common case.
fn first_non_finite_fast<T: Real>(points: PlanePoints<'_, T>) -> Option<Error> {
    let n = points.len();
    let finite = (0..n.div_ceil(CHUNK)).into_par_iter().all(|chunk| {
        (chunk * CHUNK..((chunk + 1) * CHUNK).min(n))
            .all(|i| points.get(i).iter().all(|v| v.is_finite()))
    });
    if finite {
        None
    } else {
        first_non_finite(points)
    }
}
