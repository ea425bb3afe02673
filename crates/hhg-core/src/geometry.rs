//! The cell table: bounding box and validation, the choice between a dense and a hashed
//! table, and cell keys computed 8 lanes at a time (with a scalar reference).

use rayon::prelude::*;
use wide::{f64x4, i64x4};

use crate::columns::PointColumns;
use crate::error::Error;
use crate::parallel::prefetch;
use crate::real::{LANES, Real};

/// Relative margin of the cell edge over the search radius.
///
/// Cell coordinates are computed in `f64`; the margin absorbs their rounding (about
/// `2^-52` relative, at most `2^-22` cells at the largest accepted span) and the rounding
/// of the distance test itself, so a pair within `r` is never more than one cell apart.
pub const CELL_MARGIN: f64 = 1e-5;

/// Where the cell lattice starts, as a fraction of the cell edge: the cells' corners lie at
/// `(k + LATTICE_SHIFT) * cell` for whole `k`.
///
/// Solvers lay particles out on lattices of spacing `r / k` (k = 1 to 4), at the multiples
/// of the spacing or at their midpoints, and their walls stay there. On a lattice that began
/// at 0 those particles sat on the cell borders, each on either side by its rounding or
/// jitter: 1M points on a lattice of spacing r / 2 jittered by 0.025 r took 43.7 ms in
/// exact cell order against 36.3 ms with the borders off the particles, and moved by up to
/// 0.1 r they changed cells far more often. 1/16 of an edge keeps the borders at least that
/// far from every such lattice.
pub const LATTICE_SHIFT: f64 = 1.0 / 16.0;

/// The largest span, in cells, the points may cover along one axis (Schornbaum §3.2).
pub const MAX_SPAN_CELLS: f64 = (1u64 << 30) as f64;

/// `2^52 + 2^51`: the sum of this and an `f64` of magnitude below `2^51` is that value
/// rounded to an integer, and keeps the exponent of `2^52` (or reaches `2^53` exactly), so
/// its low mantissa bits are the integer in two's complement (the cell coordinates of at
/// most `MAX_SPAN_CELLS + 3` cells per axis qualify). See [`floor_small`].
const INT_MAGIC: f64 = 6_755_399_441_055_744.0;

/// The floors of four values of magnitude below `2^51` (such as clamped cell
/// coordinates), each as the low 51 bits of its lane: the floor modulo `2^51` (two's
/// complement for floors of magnitude below `2^50`). So a lane's low 32 bits are the floor
/// as an `i32` when it fits one, and the lane masked with `dim - 1` is the floor modulo a
/// power-of-two `dim`. The high bits are not a sign extension.
///
/// Adding `2^52 + 2^51` rounds a value to the nearest integer and leaves that integer in
/// the low bits of the sum, a few vector operations where a conversion to `i64` takes four scalar
/// ones on AVX2; where the rounding went up, one less is the floor. This needs SSE2 alone:
/// `wide`'s `floor` calls the C library lane by lane below SSE4.1 (the keys of 1M points
/// took 5 ms there instead of 1.3 ms with `-C target-cpu=native`).
///
/// Used by hhg-xor's key kernel (exported in [`crate::building_blocks`]). The precondition,
/// every lane below `2^51` in magnitude, is the caller's to keep: it is not checked, and a
/// lane beyond it gives a wrong integer (never undefined behaviour).
#[inline(always)]
pub fn floor_small(values: f64x4) -> i64x4 {
    let magic = f64x4::splat(INT_MAGIC);
    let rounded = values + magic;
    let went_up: i64x4 = bytemuck::cast((rounded - magic).simd_gt(values));
    bytemuck::cast::<f64x4, i64x4>(rounded) + went_up
}

/// A dense table is used when it needs at most this many buckets per point (and at least
/// [`MIN_DENSE_BUCKETS`]); otherwise the table is hashed.
const DENSE_BUCKETS_PER_POINT: usize = 4;

/// Any occupied box whose dense table has at most this many buckets is stored densely.
const MIN_DENSE_BUCKETS: usize = 1 << 12;

/// A hashed table has about this many buckets per point (rounded to a power of two).
const HASHED_BUCKETS_PER_POINT: usize = 2;

/// Each axis of the table has at least `2^MIN_SHIFT` buckets, so the 27 offsets of a cell's
/// neighbourhood land in 27 distinct buckets even when the table wraps around.
const MIN_SHIFT: u32 = 2;

/// Points per rayon task when hashing.
const HASH_CHUNK: usize = 1 << 14;

/// Borrowed input positions, either array-of-structs or three separate slices.
#[derive(Clone, Copy, Debug)]
pub enum Points<'a, T> {
    /// `[x, y, z]` per point.
    Aos(&'a [[T; 3]]),
    /// Separate coordinate slices of equal length.
    Soa(&'a [T], &'a [T], &'a [T]),
}

impl<T: Real> Points<'_, T> {
    /// How many points there are.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Points::Aos(p) => p.len(),
            Points::Soa(x, _, _) => x.len(),
        }
    }

    /// Tells whether there is no point.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Point `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> [T; 3] {
        match self {
            Points::Aos(p) => p[i],
            Points::Soa(x, y, z) => [x[i], y[i], z[i]],
        }
    }

    /// Asks the cache for point `i` ahead of its use (a hint: never reads, never faults).
    #[inline(always)]
    pub(crate) fn prefetch(&self, i: usize) {
        match self {
            Points::Aos(p) => prefetch(p.as_ptr().wrapping_add(i)),
            Points::Soa(x, y, z) => {
                for column in [x, y, z] {
                    prefetch(column.as_ptr().wrapping_add(i));
                }
            }
        }
    }

    /// Checks that separate slices agree in length.
    pub(crate) fn check_lengths(&self) -> Result<(), Error> {
        if let Points::Soa(x, y, z) = self
            && (x.len() != y.len() || x.len() != z.len())
        {
            return Err(Error::LengthMismatch {
                x: x.len(),
                y: y.len(),
                z: z.len(),
            });
        }
        Ok(())
    }

    /// Axis `axis` of points `start..start + 8`, padding past the end with [`Real::PAD`].
    #[inline(always)]
    fn lanes(&self, axis: usize, start: usize) -> [T; 8] {
        let end = (start + LANES).min(self.len());
        let mut out = [T::PAD; LANES];
        match self {
            Points::Aos(p) => {
                for (o, q) in out.iter_mut().zip(&p[start..end]) {
                    *o = q[axis];
                }
            }
            Points::Soa(x, y, z) => {
                let column = [x, y, z][axis];
                out[..end - start].copy_from_slice(&column[start..end]);
            }
        }
        out
    }
}

/// The bounding box of a point set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Smallest coordinate per axis.
    pub min: [f64; 3],
    /// Largest coordinate per axis.
    pub max: [f64; 3],
}

/// Computes the bounding box, refusing NaN and infinite coordinates. `None` when empty.
pub fn bounds<T: Real>(points: Points<'_, T>) -> Result<Option<Bounds>, Error> {
    points.check_lengths()?;
    let n = points.len();
    if n == 0 {
        return Ok(None);
    }
    let identity = || ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3], true);
    let (min, max, finite) = (0..n.div_ceil(HASH_CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let range = chunk * HASH_CHUNK..((chunk + 1) * HASH_CHUNK).min(n);
            match points {
                Points::Aos(p) => {
                    // Flat, lane `k` of a block of 24 values holds axis `k % 3`.
                    let flat: &[T] = bytemuck::cast_slice(&p[range]);
                    let lanes = fold_lanes::<T, 24>(flat, 3);
                    let [x, y, z] = [0, 1, 2].map(|axis| lanes.extremes(axis, 3));
                    ([x.0, y.0, z.0], [x.1, y.1, z.1], lanes.finite)
                }
                Points::Soa(x, y, z) => {
                    let [x, y, z] = [x, y, z].map(|column| {
                        let lanes = fold_lanes::<T, 16>(&column[range.clone()], 1);
                        (lanes.extremes(0, 1), lanes.finite)
                    });
                    let [(x, xf), (y, yf), (z, zf)] = [x, y, z];
                    ([x.0, y.0, z.0], [x.1, y.1, z.1], xf && yf && zf)
                }
            }
        })
        .reduce(identity, |a, b| {
            (
                std::array::from_fn(|k| a.0[k].min(b.0[k])),
                std::array::from_fn(|k| a.1[k].max(b.1[k])),
                a.2 && b.2,
            )
        });
    if !finite {
        return Err(first_non_finite(points).expect("a non-finite coordinate was seen"));
    }
    Ok(Some(Bounds { min, max }))
}

/// The smallest and largest value of each of `columns` (all of one length, at least one
/// value, all finite), in parallel: the bounding box of the points they hold.
pub(crate) fn column_bounds<T: Real, const D: usize>(columns: [&[T]; D]) -> ([f64; D], [f64; D]) {
    let n = columns[0].len();
    let identity = || ([f64::INFINITY; D], [f64::NEG_INFINITY; D]);
    (0..n.div_ceil(HASH_CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let range = chunk * HASH_CHUNK..((chunk + 1) * HASH_CHUNK).min(n);
            let extremes =
                columns.map(|column| fold_lanes::<T, 16>(&column[range.clone()], 1).extremes(0, 1));
            (extremes.map(|e| e.0), extremes.map(|e| e.1))
        })
        .reduce(identity, |a, b| {
            (
                std::array::from_fn(|k| a.0[k].min(b.0[k])),
                std::array::from_fn(|k| a.1[k].max(b.1[k])),
            )
        })
}

/// Lane-wise extremes of a run of values, and whether all of them were finite.
struct Lanes<T, const W: usize> {
    min: [T; W],
    max: [T; W],
    finite: bool,
}

impl<T: Real, const W: usize> Lanes<T, W> {
    /// The smallest and largest value of axis `axis` of `period` interleaved axes, over the
    /// lanes that hold it (`axis`, `axis + period`, ...), widened to `f64`.
    fn extremes(&self, axis: usize, period: usize) -> (f64, f64) {
        let of_axis = (axis..W).step_by(period);
        let min = of_axis.clone().map(|k| self.min[k].to_f64());
        let max = of_axis.map(|k| self.max[k].to_f64());
        (
            min.fold(f64::INFINITY, f64::min),
            max.fold(f64::NEG_INFINITY, f64::max),
        )
    }
}

/// Folds `values` (at least `period` of them) into `W` lanes: value `k` goes to lane `k % W`. `W` is a
/// multiple of `period`, the number of axes interleaved in `values`, so every lane holds
/// values of one axis (`lane % period`); lanes that no value reached start from the first
/// value of their axis. The loop is a plain compare-and-select per lane, which the compiler
/// turns into vector minima and maxima (with `wide`'s one point at a time, the box of 1M
/// points took 1.3 ms, and 3.5 ms right after a list pass).
#[inline(always)]
fn fold_lanes<T: Real, const W: usize>(values: &[T], period: usize) -> Lanes<T, W> {
    debug_assert!(values.len() >= period && W.is_multiple_of(period));
    let mut min: [T; W] = std::array::from_fn(|k| values[k % period]);
    let mut max = min;
    // `v - v` is zero for finite values and NaN for NaN and infinities; a NaN stays NaN
    // through the sums. (`v * 0` would do the same; the build measured 0.4 ms slower with it
    // at 1M points, by its effect on the code around it.)
    let mut nan = [T::default(); W];
    #[allow(clippy::eq_op, reason = "v - v is the finiteness test, not a zero")]
    let mut fold = |lane: usize, v: T| {
        min[lane] = if v < min[lane] { v } else { min[lane] };
        max[lane] = if v > max[lane] { v } else { max[lane] };
        nan[lane] = nan[lane] + (v - v);
    };
    let mut blocks = values.chunks_exact(W);
    for block in &mut blocks {
        for (lane, &v) in block.iter().enumerate() {
            fold(lane, v);
        }
    }
    for (lane, &v) in blocks.remainder().iter().enumerate() {
        fold(lane, v);
    }
    Lanes {
        min,
        max,
        finite: nan.iter().all(|v| v.is_finite()),
    }
}

/// The first NaN or infinite coordinate, as an error.
pub(crate) fn first_non_finite<T: Real>(points: Points<'_, T>) -> Option<Error> {
    (0..points.len()).find_map(|index| {
        let p = points.get(index);
        (0..3)
            .find(|&axis| !p[axis].is_finite())
            .map(|axis| Error::NonFiniteCoordinate {
                index,
                axis,
                value: p[axis].to_f64(),
            })
    })
}

/// Which kernel computes cell keys and distance masks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernel {
    /// 8 lanes at a time with `wide` (the default).
    #[default]
    Simd,
    /// One lane at a time: the reference the SIMD path is tested against.
    Scalar,
}

/// The geometry of one grid level: where cells are and how they map to buckets.
///
/// Buckets are numbered `(ix & mx) | (iy & my) << sx | (iz & mz) << (sx + sy)` with
/// power-of-two dims per axis (Schornbaum's geometric hashing): neighbouring cells stay
/// neighbouring buckets, so a cell's 26 neighbours are fixed offsets with wrap-around.
/// A *dense* table has dims larger than the occupied span on every axis and never aliases;
/// a *hashed* table wraps, and the distance test filters the foreign points that share a bucket.
///
/// `D` is the number of axes: 3 by default, 2 for the broad phase's hierarchy in the plane
/// (bucket `(ix & mx) | (iy & my) << sx`, 8 neighbours per cell).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellTable<const D: usize = 3> {
    /// Corner of cell `(0, 0, 0)`: the largest multiple of the cell edge at or below the
    /// minimum of the bounding box: cells lie on a lattice fixed in space.
    pub origin: [f64; D],
    /// Cell edge: the radius times `1 + CELL_MARGIN`.
    pub cell: f64,
    /// `1 / cell`.
    pub inv_cell: f64,
    /// Cells the points span per axis (`floor(extent / cell) + 1`).
    pub span: [i32; D],
    /// `log2` of the table dims per axis.
    pub shift: [u32; D],
    /// Whether the table is dense (no aliasing).
    pub dense: bool,
}

/// The 13 forward neighbour offsets `[dx, dy, dz]` of a cell: those whose `(dz, dy, dx)`
/// comes lexicographically after `(0, 0, 0)`, in that order, so that of two adjacent cells
/// exactly one is the other's forward neighbour.
///
/// The cell-by-cell pair searches of the sibling crates (hhg-xor's XOR, Pouchol and
/// multilevel tables, hhg-group's group table) look up these neighbours one cell at a time;
/// hhg-core's own grid reaches them as bucket rows instead.
pub const FORWARD_OFFSETS: [[i32; 3]; 13] = [
    [1, 0, 0],
    [-1, 1, 0],
    [0, 1, 0],
    [1, 1, 0],
    [-1, -1, 1],
    [0, -1, 1],
    [1, -1, 1],
    [-1, 0, 1],
    [0, 0, 1],
    [1, 0, 1],
    [-1, 1, 1],
    [0, 1, 1],
    [1, 1, 1],
];

/// The 27 offsets `[dx, dy, dz]` of a cell's neighbourhood, the cell itself included: offset
/// `s` is `[s % 3 - 1, s / 3 % 3 - 1, s / 9 - 1]`, so the cell itself is offset 13.
///
/// The sibling crates' tables (hhg-xor's XOR, Pouchol and multilevel tables, hhg-group's
/// group table) look up the neighbourhood of a query point or cell one cell at a time with
/// these offsets.
pub const NEIGHBOURHOOD_OFFSETS: [[i32; 3]; 27] = {
    let mut offsets = [[0i32; 3]; 27];
    let mut s = 0;
    while s < 27 {
        offsets[s] = [
            (s % 3) as i32 - 1,
            ((s / 3) % 3) as i32 - 1,
            (s / 9) as i32 - 1,
        ];
        s += 1;
    }
    offsets
};

/// The cell coordinate of `value` on an axis whose cell `0` starts at `origin`, with cells
/// `1 / inv_cell` wide and `span` of them occupied, clamped to `-2..=span + 1` so that far
/// query points land in a cell with no occupied neighbour (exact for the set's own points).
/// The scalar reference of [`lane_keys`]; shared by the 3-D table and the plane's.
#[inline(always)]
pub(crate) fn cell_coord(value: f64, origin: f64, inv_cell: f64, span: i32) -> i32 {
    ((value - origin) * inv_cell)
        .max(-2.0)
        .min(f64::from(span + 1))
        .floor() as i32
}

/// The buckets of 8 points given as 8 lanes per axis, for a table of `D` axes: per axis,
/// subtract the origin, multiply by the inverse cell size, clamp as [`cell_coord`] does,
/// floor ([`floor_small`]), mask with `dim - 1` and shift into place. Shared by the 3-D
/// table and the plane's.
#[inline(always)]
pub(crate) fn lane_keys<T: Real, const D: usize>(
    lanes: &[[T; LANES]; D],
    origin: [f64; D],
    inv_cell: f64,
    span: [i32; D],
    shift: [u32; D],
) -> [u32; LANES] {
    let mut keys = [i64x4::ZERO; 2];
    let mut offset = 0u32;
    for (axis, lanes) in lanes.iter().enumerate() {
        let origin = f64x4::splat(origin[axis]);
        let inv = f64x4::splat(inv_cell);
        let low = f64x4::splat(-2.0);
        let high = f64x4::splat(f64::from(span[axis] + 1));
        let mask = i64x4::splat((1i64 << shift[axis]) - 1);
        for (half, key) in keys.iter_mut().enumerate() {
            let quad: &[T; 4] = lanes[half * 4..half * 4 + 4].try_into().unwrap();
            let scaled = (T::widen4(quad) - origin) * inv;
            let bits = floor_small(scaled.max(low).min(high));
            *key |= (bits & mask) << offset;
        }
        offset += shift[axis];
    }
    let [lo, hi] = keys.map(|k| k.to_array());
    std::array::from_fn(|k| {
        if k < 4 {
            lo[k] as u32
        } else {
            hi[k - 4] as u32
        }
    })
}

/// The highest corner of the lattice `(k + LATTICE_SHIFT) * cell` at or below `min`, or `min`
/// itself where that corner is not representable closely enough (a cell edge tiny beside the
/// coordinate).
///
/// Cells on one lattice fixed in space, rather than one that starts at the points' minimum,
/// stay the same cells when the points move a little: a bounding box that grows or shrinks
/// by 0.1 r from one step to the next moved every cell by as much, so that a set kept in
/// the cell order of the step before found every bucket cut into pieces of up to eight of
/// its old cells (1M uniform points moved by up to 0.1 r: 5.4 points per batch instead of
/// 9.3, the list pass 1.5 times as long as in exact cell order).
pub(crate) fn lattice_corner(min: f64, cell: f64, inv_cell: f64) -> f64 {
    let shift = LATTICE_SHIFT * cell;
    let mut corner = ((min - shift) * inv_cell).floor() * cell + shift;
    // Rounding may land one cell too high.
    if corner > min {
        corner -= cell;
    }
    // Far from the origin of space a multiple of the edge may be a cell or more away.
    if corner.is_finite() && corner <= min && (min - corner) * inv_cell < 1.0 {
        corner
    } else {
        min
    }
}

impl CellTable {
    /// Chooses the table for `n` points in `bounds`, searched with `radius`.
    pub fn choose(
        bounds: &Bounds,
        n: usize,
        radius: f64,
        points: Points<'_, impl Real>,
    ) -> Result<Self, Error> {
        Self::with_cell(
            bounds,
            n,
            radius * (1.0 + CELL_MARGIN),
            MIN_DENSE_BUCKETS,
            points,
        )
    }

    /// Chooses the table for `n` points in `bounds` with cells of edge `cell` (a level of the
    /// hierarchy, whose cell size is fixed by the level rather than by one radius); a table
    /// of at most `min_dense` buckets is dense whatever `n`.
    pub fn with_cell(
        bounds: &Bounds,
        n: usize,
        cell: f64,
        min_dense: usize,
        points: Points<'_, impl Real>,
    ) -> Result<Self, Error> {
        Self::over(bounds.min, bounds.max, n, cell, min_dense).map_err(|(axis, cells)| {
            let index = (0..points.len())
                .find(|&i| points.get(i)[axis].to_f64() == bounds.max[axis])
                .unwrap_or(0);
            Error::CoordinateOutOfRange {
                index,
                axis,
                value: bounds.max[axis],
                cells,
                limit: MAX_SPAN_CELLS,
            }
        })
    }
}

impl<const D: usize> CellTable<D> {
    /// Chooses the table for `n` points between the corners `min` and `max` with cells of
    /// edge `cell`, as [`CellTable::with_cell`] does; an axis spanning [`MAX_SPAN_CELLS`] or
    /// more is refused as `(axis, cells)`.
    pub(crate) fn over(
        min: [f64; D],
        max: [f64; D],
        n: usize,
        cell: f64,
        min_dense: usize,
    ) -> Result<Self, (usize, f64)> {
        const { assert!(D == 2 || D == 3, "cell tables have 2 or 3 axes") };
        let inv_cell = 1.0 / cell;
        let origin = min.map(|min| lattice_corner(min, cell, inv_cell));
        let mut span = [0i32; D];
        let mut shift = [0u32; D];
        for axis in 0..D {
            let cells = (max[axis] - origin[axis]) * inv_cell;
            if cells.is_nan() || cells >= MAX_SPAN_CELLS {
                return Err((axis, cells));
            }
            span[axis] = cells.floor() as i32 + 1;
            // Dims strictly larger than the span: the wrapped neighbours of border cells are empty.
            shift[axis] = (span[axis] as u32 + 1)
                .next_power_of_two()
                .trailing_zeros()
                .max(MIN_SHIFT);
        }
        let dense_limit = (n * DENSE_BUCKETS_PER_POINT).max(min_dense);
        let total: u32 = shift.iter().sum();
        let dense = total < usize::BITS - 1 && (1usize << total) <= dense_limit && total <= 31;
        if !dense {
            // Halve the longest axis until the table has about HASHED_BUCKETS_PER_POINT buckets
            // per point: the dims keep following the box's aspect.
            let target = (n * HASHED_BUCKETS_PER_POINT)
                .next_power_of_two()
                .trailing_zeros()
                .clamp(D as u32 * MIN_SHIFT, 30);
            while shift.iter().sum::<u32>() > target {
                let longest = (0..D).max_by_key(|&a| (shift[a], D - a)).unwrap();
                if shift[longest] <= MIN_SHIFT {
                    break;
                }
                shift[longest] -= 1;
            }
        }
        Ok(Self {
            origin,
            cell,
            inv_cell,
            span,
            shift,
            dense,
        })
    }

    /// Table dims per axis.
    #[inline]
    pub fn dims(&self) -> [u32; D] {
        self.shift.map(|s| 1 << s)
    }

    /// The number of buckets.
    #[inline]
    pub fn buckets(&self) -> usize {
        1 << self.shift.iter().sum::<u32>()
    }

    /// Cell coordinate of `value` along `axis`, clamped to `-2..=span + 1` so that far query
    /// points land in a cell with no occupied neighbour (exact for the set's own points).
    #[inline(always)]
    pub fn coord(&self, value: f64, axis: usize) -> i32 {
        cell_coord(value, self.origin[axis], self.inv_cell, self.span[axis])
    }

    /// Cell coordinates of a point.
    #[inline(always)]
    pub fn coords<T: Real>(&self, p: [T; D]) -> [i32; D] {
        std::array::from_fn(|axis| self.coord(p[axis].to_f64(), axis))
    }

    /// Bucket of cell coordinates (wrapping on a hashed table).
    #[inline(always)]
    pub fn bucket(&self, c: [i32; D]) -> u32 {
        let mask = |axis: usize| (c[axis] & ((1 << self.shift[axis]) - 1)) as u32;
        let mut bucket = mask(0);
        let mut offset = self.shift[0];
        for axis in 1..D {
            bucket |= mask(axis) << offset;
            offset += self.shift[axis];
        }
        bucket
    }

    /// Bucket coordinates of bucket `b`.
    #[inline(always)]
    pub fn bucket_coords(&self, b: u32) -> [u32; D] {
        std::array::from_fn(|axis| {
            let offset: u32 = self.shift[..axis].iter().sum();
            (b >> offset) & ((1 << self.shift[axis]) - 1)
        })
    }

    /// Tells whether cell coordinates can have a point of the set within one cell: false only
    /// for a dense table and a cell farther than one cell outside the occupied span.
    #[inline(always)]
    pub fn may_have_neighbours(&self, c: [i32; D]) -> bool {
        !self.dense || (0..D).all(|a| c[a] >= -1 && c[a] <= self.span[a])
    }

    /// Computes the bucket of every point held in `columns` into `keys` (in parallel), 8
    /// lanes at a time from the padded columns ([`lane_keys`]) or by the scalar reference.
    pub(crate) fn column_keys<T: Real>(
        &self,
        columns: &PointColumns<T, D>,
        kernel: Kernel,
        keys: &mut Vec<u32>,
    ) {
        let padded = columns.padded();
        keys.resize(columns.len(), 0);
        keys.par_chunks_mut(HASH_CHUNK)
            .enumerate()
            .for_each(|(chunk, out)| {
                let base = chunk * HASH_CHUNK;
                for (block, out) in out.chunks_mut(LANES).enumerate() {
                    let start = base + block * LANES;
                    let len = out.len();
                    match kernel {
                        Kernel::Simd => {
                            // The padded columns hold whole blocks of 8 past every point.
                            let lanes = padded.map(|c| {
                                let lanes: [T; LANES] = c[start..start + LANES].try_into().unwrap();
                                lanes
                            });
                            let keys = lane_keys(
                                &lanes,
                                self.origin,
                                self.inv_cell,
                                self.span,
                                self.shift,
                            );
                            out.copy_from_slice(&keys[..len]);
                        }
                        Kernel::Scalar => {
                            for (k, key) in out.iter_mut().enumerate() {
                                *key = self.bucket(self.coords(columns.point(start + k)));
                            }
                        }
                    }
                }
            });
    }
}

impl CellTable {
    /// Buckets of points `start..start + 8` by the scalar reference kernel.
    #[inline]
    fn keys8_scalar<T: Real>(&self, points: Points<'_, T>, start: usize) -> [u32; 8] {
        std::array::from_fn(|k| {
            if start + k < points.len() {
                self.bucket(self.coords(points.get(start + k)))
            } else {
                0
            }
        })
    }

    /// Buckets of points `start..start + 8`, 8 lanes at a time ([`lane_keys`]).
    #[inline]
    fn keys8_simd<T: Real>(&self, lanes: &[[T; LANES]; 3]) -> [u32; 8] {
        lane_keys(lanes, self.origin, self.inv_cell, self.span, self.shift)
    }

    /// Computes the bucket of every point into `keys` (in parallel).
    pub fn keys<T: Real>(&self, points: Points<'_, T>, kernel: Kernel, keys: &mut Vec<u32>) {
        self.keys_and_columns(points, kernel, keys, None);
    }

    /// Computes the bucket of every point into `keys` and, given `columns` (each as long as
    /// `points`), copies the points into them on the way, from the same loads: for input
    /// already in cell order these are the sorted columns, and the build needs no second
    /// read of its input.
    pub(crate) fn keys_and_columns<T: Real>(
        &self,
        points: Points<'_, T>,
        kernel: Kernel,
        keys: &mut Vec<u32>,
        columns: Option<[&mut [T]; 3]>,
    ) {
        let n = points.len();
        keys.resize(n, 0);
        let hash_chunk = |chunk: usize, out: &mut [u32], mut columns: Option<[&mut [T]; 3]>| {
            let base = chunk * HASH_CHUNK;
            for (block, out) in out.chunks_mut(LANES).enumerate() {
                let start = base + block * LANES;
                let len = out.len();
                // The columns are copied from the SIMD kernel's loads, whichever kernel hashes.
                let lanes = [0, 1, 2].map(|axis| points.lanes(axis, start));
                if let Some(columns) = &mut columns {
                    for (column, lanes) in columns.iter_mut().zip(&lanes) {
                        let at = block * LANES;
                        column[at..at + len].copy_from_slice(&lanes[..len]);
                    }
                }
                let lanes = match kernel {
                    Kernel::Simd => self.keys8_simd(&lanes),
                    Kernel::Scalar => self.keys8_scalar(points, start),
                };
                out.copy_from_slice(&lanes[..len]);
            }
        };
        match columns {
            Some([x, y, z]) => {
                assert!(
                    x.len() == n && y.len() == n && z.len() == n,
                    "keys_and_columns: columns of {}, {} and {} for {n} points",
                    x.len(),
                    y.len(),
                    z.len()
                );
                keys.par_chunks_mut(HASH_CHUNK)
                    .zip(x.par_chunks_mut(HASH_CHUNK))
                    .zip(y.par_chunks_mut(HASH_CHUNK))
                    .zip(z.par_chunks_mut(HASH_CHUNK))
                    .enumerate()
                    .for_each(|(chunk, (((out, x), y), z))| {
                        hash_chunk(chunk, out, Some([x, y, z]))
                    });
            }
            None => keys
                .par_chunks_mut(HASH_CHUNK)
                .enumerate()
                .for_each(|(chunk, out)| hash_chunk(chunk, out, None)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lattice_corner_is_the_shifted_multiple_of_the_edge_at_or_below_the_minimum() {
        for (min, cell) in [
            (0.05, 1.01),
            (-0.05, 1.01),
            (-3.0, 1.5),
            (7.3e4, 0.001),
            (-1e6 - 0.4, 2.0),
        ] {
            let corner = lattice_corner(min, cell, 1.0 / cell);
            assert!(corner <= min, "{corner} above {min}");
            assert!(min - corner < cell, "{corner} more than a cell below {min}");
            let multiple = corner / cell - LATTICE_SHIFT;
            assert!(
                (multiple - multiple.round()).abs() < 1e-6,
                "{corner} / {cell}"
            );
        }
    }

    #[test]
    fn a_lattice_that_cannot_be_represented_falls_back_to_the_minimum() {
        // A multiple of the edge cannot come within a cell of the minimum.
        assert_eq!(lattice_corner(1e300, 1e-20, 1e20), 1e300);
        // The quotient overflows.
        assert_eq!(lattice_corner(-1e300, 1e-10, 1e10), -1e300);
        // The inverse of a subnormal edge is infinite.
        assert_eq!(lattice_corner(1e-300, 1e-310, 1.0 / 1e-310), 1e-300);
    }

    #[test]
    fn a_box_moved_a_little_keeps_its_cells() {
        let points = [[0.5f64, 0.5, 0.5]];
        let cells = |min: f64, max: f64| {
            let bounds = Bounds {
                min: [min; 3],
                max: [max; 3],
            };
            CellTable::choose(&bounds, 1000, 1.0, Points::Aos(&points)).unwrap()
        };
        let (before, after) = (cells(0.35, 20.0), cells(0.42, 20.07));
        assert_eq!(before.origin, after.origin);
        let p = [3.3, 7.7, 11.1];
        assert_eq!(before.coords(p), after.coords(p));
    }

    #[test]
    fn lattices_of_spacing_r_over_k_keep_off_the_cell_borders() {
        let cell = 1.0 + CELL_MARGIN;
        let corner = lattice_corner(-0.01, cell, 1.0 / cell);
        for k in 1..=4 {
            let spacing = 1.0 / f64::from(k);
            for start in [0.0, spacing / 2.0] {
                for i in 0..40 {
                    let site = start + f64::from(i) * spacing;
                    let into_cell = (site - corner) / cell;
                    let to_border = (into_cell - into_cell.round()).abs();
                    assert!(
                        to_border > 0.06,
                        "k {k}, site {site}: {to_border} of an edge"
                    );
                }
            }
        }
    }
}
