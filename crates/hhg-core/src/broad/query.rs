//! Queries against a built hierarchy: the boxes overlapping a box, containing a point, or
//! possibly hit by a segment (Pouchol's moving-particle query, walked level by level).

use crate::error::Error;
use crate::geometry::CellTable;
use crate::real::Real;

use super::build::check_box;
use crate::geometry::Kernel;

use super::{
    Aabb, BlockTest, BoxTest, BroadPhase, Kind, Level, RadiusRule, ScanColumns, SphereTest, scan,
    scan_columns, with_test,
};

/// Relative margin by which segment chunks are widened before they are mapped to cells.
const SEGMENT_MARGIN: f64 = 1e-5;

/// Tells whether the segment `a..b` may hit `aabb`: the slab test in `f64`, intersecting the
/// parameter interval `[0, 1]` with each axis' `[(min - a) / d, (max - a) / d]` (an axis with
/// `d = 0` keeps the interval iff `min <= a <= max`). Touching counts as a hit. This function
/// is the definition of a segment hit; the hierarchy reports exactly the boxes it accepts.
pub fn segment_may_hit<T: Real, const D: usize>(a: [T; D], b: [T; D], aabb: &Aabb<T, D>) -> bool {
    let mut enter = 0.0f64;
    let mut leave = 1.0f64;
    for axis in 0..D {
        let start = a[axis].to_f64();
        let d = b[axis].to_f64() - start;
        let (lo, hi) = (aabb.min[axis].to_f64(), aabb.max[axis].to_f64());
        if d == 0.0 {
            if start < lo || start > hi {
                return false;
            }
            continue;
        }
        let (mut near, mut far) = ((lo - start) / d, (hi - start) / d);
        if near > far {
            std::mem::swap(&mut near, &mut far);
        }
        enter = enter.max(near);
        leave = leave.min(far);
        if enter > leave {
            return false;
        }
    }
    true
}

/// The cell range `lo - 1 ..= hi` (clamped by the table) on each axis, as a start and a
/// count of at most the table's dims, so that no bucket is visited twice.
fn cell_range<const D: usize>(
    table: &CellTable<D>,
    lo: [f64; D],
    hi: [f64; D],
) -> ([i32; D], [u32; D]) {
    let dims = table.dims();
    let mut start = [0i32; D];
    let mut count = [0u32; D];
    for axis in 0..D {
        let first = table.coord(lo[axis], axis) - 1;
        let last = table.coord(hi[axis], axis);
        start[axis] = first;
        count[axis] = ((last - first + 1).max(0) as u32).min(dims[axis]);
    }
    (start, count)
}

/// The count of layers `z` of a cell range: its z count in space, 1 in the plane.
#[inline(always)]
fn layer_count<const D: usize>(count: [u32; D]) -> u32 {
    if D == 3 { count[D - 1] } else { 1 }
}

/// The cell coordinates `start + (x, y, z)` of a cell range (in the plane, `z` is not used).
#[inline(always)]
fn cell_at<const D: usize>(start: [i32; D], x: i32, y: i32, z: i32) -> [i32; D] {
    let step = [x, y, z];
    std::array::from_fn(|axis| start[axis] + step[axis])
}

/// Calls `bucket(b)` for each bucket of the cell range, each at most once.
fn for_each_bucket<const D: usize>(
    table: &CellTable<D>,
    start: [i32; D],
    count: [u32; D],
    mut bucket: impl FnMut(u32),
) {
    for z in 0..layer_count(count) as i32 {
        for y in 0..count[1] as i32 {
            for x in 0..count[0] as i32 {
                bucket(table.bucket(cell_at(start, x, y, z)));
            }
        }
    }
}

/// Calls `row(first, end)` for each row of the cell range as bucket ranges `first..end`:
/// the cells of a row are consecutive buckets, so one range of sorted positions holds all
/// their objects; a row that wraps around a hashed table's x dimension gives two ranges.
/// Each bucket comes at most once.
fn for_each_row<const D: usize>(
    table: &CellTable<D>,
    start: [i32; D],
    count: [u32; D],
    mut row: impl FnMut(u32, u32),
) {
    if count[0] == 0 {
        return;
    }
    let dim_x = 1u32 << table.shift[0];
    for z in 0..layer_count(count) as i32 {
        for y in 0..count[1] as i32 {
            let first = table.bucket(cell_at(start, 0, y, z));
            let x = first & (dim_x - 1);
            // The buckets of the row's cells up to the end of the table's row, then from its
            // beginning.
            let before_wrap = count[0].min(dim_x - x);
            row(first, first + before_wrap);
            if before_wrap < count[0] {
                let base = first - x;
                row(base, base + count[0] - before_wrap);
            }
        }
    }
}

/// Checks that a query point is not NaN and not infinite.
fn check_point<T: Real, const D: usize>(p: [T; D]) -> Result<(), Error> {
    for (axis, v) in p.iter().enumerate() {
        if !v.is_finite() {
            return Err(Error::NonFiniteCoordinate {
                index: 0,
                axis,
                value: v.to_f64(),
            });
        }
    }
    Ok(())
}

impl<T: Real, const D: usize> BroadPhase<T, D> {
    /// The boxes overlapping `query` (closed bounds), ascending caller indices, into `out`
    /// (cleared first). The query box may have infinite bounds; NaN or an empty box is an error.
    pub fn query_aabb(&self, query: &Aabb<T, D>, out: &mut Vec<u32>) -> Result<(), Error> {
        check_box(0, query)?;
        out.clear();
        self.for_each_overlap(query, |i| out.push(i));
        out.sort_unstable();
        Ok(())
    }

    /// Calls `hit(i)` for every box overlapping `query` (a valid box), in no particular
    /// order, without allocating.
    pub(crate) fn for_each_overlap(&self, query: &Aabb<T, D>, mut hit: impl FnMut(u32)) {
        with_test!(Kind::Boxes, self.kernel, |test| self
            .for_each_overlap_with(query, test, &mut hit));
    }

    fn for_each_overlap_with(
        &self,
        query: &Aabb<T, D>,
        test: impl BlockTest<T>,
        hit: &mut impl FnMut(u32),
    ) {
        if self.flat {
            scan_columns(
                ScanColumns::new(&self.flat_min, &self.flat_max),
                test,
                query.min,
                query.max,
                0,
                self.len,
                |i| hit(i as u32),
            );
            return;
        }
        let lo = query.min.map(Real::to_f64);
        let hi = query.max.map(Real::to_f64);
        for level in self.active_levels() {
            let columns = ScanColumns::new(&level.min, &level.max);
            let (start, count) = cell_range(&level.table, lo, hi);
            let cells = count.iter().map(|&c| c as usize).product::<usize>();
            if cells >= level.len() {
                // A box much larger than the level's cells: scan its boxes instead.
                scan(level, test, query.min, query.max, 0, level.len(), |q| {
                    hit(level.order[q])
                });
                continue;
            }
            for_each_row(&level.table, start, count, |first, end| {
                let (s, e) = (level.starts[first as usize], level.starts[end as usize]);
                scan_columns(
                    columns,
                    test,
                    query.min,
                    query.max,
                    s as usize,
                    e as usize,
                    |q| hit(level.order[q]),
                );
            });
        }
        for (k, aabb) in self.huge_boxes.iter().enumerate() {
            if aabb.overlaps(query) {
                hit(self.huge[k]);
            }
        }
    }

    /// The boxes containing point `p` (closed bounds), ascending caller indices, into `out`.
    pub fn query_point(&self, p: [T; D], out: &mut Vec<u32>) -> Result<(), Error> {
        check_point(p)?;
        self.query_aabb(&Aabb::new(p, p), out)
    }

    /// The boxes the segment `a..b` may hit by [`segment_may_hit`], ascending caller indices,
    /// into `out`. Each level is searched along the segment's path through its cells (the
    /// segment is cut into pieces no longer than a cell), never with one box around the
    /// whole segment; a level with fewer boxes than the path has cells is scanned instead.
    pub fn query_segment(&self, a: [T; D], b: [T; D], out: &mut Vec<u32>) -> Result<(), Error> {
        check_point(a)?;
        check_point(b)?;
        let a64 = a.map(Real::to_f64);
        let b64 = b.map(Real::to_f64);
        let d: [f64; D] = std::array::from_fn(|k| b64[k] - a64[k]);
        if let Some(axis) = (0..D).find(|&k| !d[k].is_finite()) {
            return Err(Error::NonFiniteCoordinate {
                index: 1,
                axis,
                value: d[axis],
            });
        }
        out.clear();
        if self.flat {
            for i in 0..self.len {
                let aabb = Aabb::new(self.flat_min.point(i), self.flat_max.point(i));
                if segment_may_hit(a, b, &aabb) {
                    out.push(i as u32);
                }
            }
            return Ok(());
        }
        let mut buckets = Vec::new();
        for level in self.active_levels() {
            self.segment_level(level, a, b, a64, d, &mut buckets, out);
        }
        for (k, aabb) in self.huge_boxes.iter().enumerate() {
            if segment_may_hit(a, b, aabb) {
                out.push(self.huge[k]);
            }
        }
        out.sort_unstable();
        Ok(())
    }

    /// The hits of a segment in one level.
    #[allow(clippy::too_many_arguments)] // The segment in both precisions and two buffers.
    fn segment_level(
        &self,
        level: &Level<T, D>,
        a: [T; D],
        b: [T; D],
        a64: [f64; D],
        d: [f64; D],
        buckets: &mut Vec<u32>,
        out: &mut Vec<u32>,
    ) {
        let table = &level.table;
        let longest = d.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let pieces = (longest / table.cell).ceil().max(1.0);
        let test = |q: usize, out: &mut Vec<u32>| {
            let (lo, hi) = level.box_at(q);
            if segment_may_hit(a, b, &Aabb::new(lo, hi)) {
                out.push(level.order[q]);
            }
        };
        // A piece visits the 3^D buckets of the cells around it.
        if pieces * 3f64.powi(D as i32) >= level.len() as f64 {
            for q in 0..level.len() {
                test(q, out);
            }
            return;
        }
        let pieces = pieces as usize;
        let scale = a64
            .iter()
            .zip(&d)
            .fold(0.0f64, |m, (p, d)| m.max(p.abs()).max((p + d).abs()));
        let margin = SEGMENT_MARGIN * table.cell + scale * (-40f64).exp2();
        buckets.clear();
        for piece in 0..pieces {
            let t0 = piece as f64 / pieces as f64;
            let t1 = (piece + 1) as f64 / pieces as f64;
            let mut lo = [0.0; D];
            let mut hi = [0.0; D];
            for k in 0..D {
                let p0 = a64[k] + d[k] * t0;
                let p1 = a64[k] + d[k] * t1;
                lo[k] = p0.min(p1) - margin;
                hi[k] = p0.max(p1) + margin;
            }
            let (start, count) = cell_range(table, lo, hi);
            for_each_bucket(table, start, count, |bucket| buckets.push(bucket));
        }
        buckets.sort_unstable();
        buckets.dedup();
        for &bucket in buckets.iter() {
            let (s, e) = (
                level.starts[bucket as usize],
                level.starts[bucket as usize + 1],
            );
            for q in s..e {
                test(q as usize, out);
            }
        }
    }
}
