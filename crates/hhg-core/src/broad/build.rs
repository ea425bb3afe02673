//! Building the hierarchy: validate the boxes, choose `c0`, assign each box to its level or
//! to the huge list, and build every level with SIMD hashing and the parallel counting sort.

use rayon::prelude::*;

use crate::columns::{COPY_CHUNK, PointColumns, check_count};
use crate::error::Error;
use crate::geometry::{CELL_MARGIN, CellTable, Points, bounds};
use crate::real::{LANES, Real};
use crate::sort::{counting_sort, cut_units};

use super::{Aabb, BroadPhase, Filter, Kind, Level, UNIT_BOXES};

/// The objects a hierarchy is built over, seen through what the build needs of them.
pub(crate) trait Objects<T: Real>: Sync {
    /// How many objects there are.
    fn count(&self) -> usize;
    /// Refuses an invalid object with an error naming it.
    fn check(&self, index: usize) -> Result<(), Error>;
    /// The size that decides the level: a box's longest edge, a particle's radius.
    fn size(&self, index: usize) -> f64;
    /// False for objects that go to the huge list whatever their size (infinite boxes).
    fn is_finite(&self, index: usize) -> bool;
    /// The extent the object adds to the scene's bounding box.
    fn extent(&self, index: usize) -> ([f64; 3], [f64; 3]);
    /// The values of the minimum and maximum columns; the first is the hashed point.
    fn columns(&self, index: usize) -> ([T; 3], [T; 3]);
}

impl<T: Real> Objects<T> for [Aabb<T>] {
    fn count(&self) -> usize {
        self.len()
    }

    fn check(&self, index: usize) -> Result<(), Error> {
        check_box(index, &self[index])
    }

    fn size(&self, index: usize) -> f64 {
        self[index].longest_edge()
    }

    fn is_finite(&self, index: usize) -> bool {
        is_finite_box(&self[index])
    }

    fn extent(&self, index: usize) -> ([f64; 3], [f64; 3]) {
        (
            self[index].min.map(Real::to_f64),
            self[index].max.map(Real::to_f64),
        )
    }

    #[inline]
    fn columns(&self, index: usize) -> ([T; 3], [T; 3]) {
        (self[index].min, self[index].max)
    }
}

/// Particles with their own radii: positions in the minimum columns, radii in the maximum
/// x column.
pub(crate) struct Particles<'a, T> {
    pub(crate) points: &'a [[T; 3]],
    pub(crate) radii: &'a [T],
}

impl<T: Real> Objects<T> for Particles<'_, T> {
    fn count(&self) -> usize {
        self.points.len()
    }

    fn check(&self, index: usize) -> Result<(), Error> {
        for (axis, v) in self.points[index].iter().enumerate() {
            if !v.is_finite() {
                return Err(Error::NonFiniteCoordinate {
                    index,
                    axis,
                    value: v.to_f64(),
                });
            }
        }
        let r = self.radii[index];
        if !(r.is_finite() && r.to_f64() >= 0.0 && (r * r).is_finite()) {
            return Err(Error::InvalidParticleRadius {
                index,
                radius: r.to_f64(),
            });
        }
        Ok(())
    }

    fn size(&self, index: usize) -> f64 {
        self.radii[index].to_f64()
    }

    fn is_finite(&self, _index: usize) -> bool {
        true
    }

    fn extent(&self, index: usize) -> ([f64; 3], [f64; 3]) {
        let p = self.points[index].map(Real::to_f64);
        (p, p)
    }

    #[inline]
    fn columns(&self, index: usize) -> ([T; 3], [T; 3]) {
        let r = self.radii[index];
        (self.points[index], [r, T::default(), T::default()])
    }
}

/// The exponent that marks a huge box.
const HUGE: u32 = u32::MAX;

/// Level 0 spans at most `2^BASE_SPAN_BITS` cells of the scene's extent, so that tiny or
/// zero-sized boxes in a large scene never exceed the grid's integer range.
const BASE_SPAN_BITS: i32 = 26;

/// A level's table is dense whenever it needs at most this many buckets (or 4 per object):
/// small levels stay small, unlike the particle grid's 4096-bucket minimum.
const LEVEL_MIN_DENSE: usize = 64;

/// What one pass over the boxes learns: the first invalid box, the bounding box of the
/// finite boxes, and their smallest positive longest edge.
#[derive(Clone, Debug)]
struct Survey {
    error: Option<(usize, Error)>,
    lo: [f64; 3],
    hi: [f64; 3],
    smallest_edge: f64,
    largest_edge: f64,
    finite: usize,
}

impl Survey {
    const EMPTY: Survey = Survey {
        error: None,
        lo: [f64::INFINITY; 3],
        hi: [f64::NEG_INFINITY; 3],
        smallest_edge: f64::INFINITY,
        largest_edge: 0.0,
        finite: 0,
    };

    fn merge(self, other: Survey) -> Survey {
        let error = match (self.error.clone(), other.error.clone()) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        Survey {
            error,
            lo: std::array::from_fn(|a| self.lo[a].min(other.lo[a])),
            hi: std::array::from_fn(|a| self.hi[a].max(other.hi[a])),
            smallest_edge: self.smallest_edge.min(other.smallest_edge),
            largest_edge: self.largest_edge.max(other.largest_edge),
            finite: self.finite + other.finite,
        }
    }
}

/// Checks box `index`: no NaN, `min <= max`, no `+inf` minimum or `-inf` maximum.
pub(crate) fn check_box<T: Real>(index: usize, aabb: &Aabb<T>) -> Result<(), Error> {
    for axis in 0..3 {
        for value in [aabb.min[axis], aabb.max[axis]] {
            if value.to_f64().is_nan() {
                return Err(Error::NonFiniteCoordinate {
                    index,
                    axis,
                    value: value.to_f64(),
                });
            }
        }
        let (min, max) = (aabb.min[axis].to_f64(), aabb.max[axis].to_f64());
        if min > max || min == f64::INFINITY || max == f64::NEG_INFINITY {
            return Err(Error::InvalidBox {
                index,
                axis,
                min,
                max,
            });
        }
    }
    Ok(())
}

/// Tells whether all six bounds are finite.
#[inline]
fn is_finite_box<T: Real>(aabb: &Aabb<T>) -> bool {
    aabb.min
        .iter()
        .chain(aabb.max.iter())
        .all(|v| v.is_finite())
}

fn survey<T: Real, O: Objects<T> + ?Sized>(objects: &O) -> Survey {
    let n = objects.count();
    (0..n.div_ceil(COPY_CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let mut s = Survey::EMPTY;
            for index in chunk * COPY_CHUNK..((chunk + 1) * COPY_CHUNK).min(n) {
                if let Err(e) = objects.check(index) {
                    s.error = Some((index, e));
                    break;
                }
                if !objects.is_finite(index) {
                    continue;
                }
                s.finite += 1;
                let (lo, hi) = objects.extent(index);
                for a in 0..3 {
                    s.lo[a] = s.lo[a].min(lo[a]);
                    s.hi[a] = s.hi[a].max(hi[a]);
                }
                let edge = objects.size(index);
                if edge > 0.0 {
                    s.smallest_edge = s.smallest_edge.min(edge);
                }
                s.largest_edge = s.largest_edge.max(edge);
            }
            s
        })
        .reduce(|| Survey::EMPTY, Survey::merge)
}

/// Everything that can make a build over `objects` fail: too many objects, an invalid
/// object, or finite objects spanning more than `f64` can hold along an axis. Returns the
/// survey of the objects when the build will succeed.
fn validate<T: Real, O: Objects<T> + ?Sized>(objects: &O) -> Result<Survey, Error> {
    let n = objects.count();
    check_count(n)?;
    let survey = survey(objects);
    if let Some((_, error)) = survey.error.clone() {
        return Err(error);
    }
    let spans = (0..3).map(|a| survey.hi[a] - survey.lo[a]);
    if survey.finite > 0
        && let Some(axis) = spans.clone().position(|span| !span.is_finite())
    {
        let index = (0..n)
            .find(|&i| objects.is_finite(i) && objects.extent(i).1[axis] == survey.hi[axis])
            .unwrap_or(0);
        return Err(Error::CoordinateOutOfRange {
            index,
            axis,
            value: survey.hi[axis],
            cells: f64::INFINITY,
            limit: crate::geometry::MAX_SPAN_CELLS,
        });
    }
    Ok(survey)
}

/// Checks that [`BroadPhase::build`] would accept `boxes`, without building: the error it
/// would return, if any.
pub(crate) fn check_boxes<T: Real>(boxes: &[Aabb<T>]) -> Result<(), Error> {
    validate(boxes).map(drop)
}

/// The level exponent of a finite object of size `size` on the ladder of cell edges
/// `ladder[k] = c0 * f^k`: the smallest `k` with `ladder[k] >= size * (1 + CELL_MARGIN)`
/// (`ladder.len()` when the ladder ends below it).
#[inline]
pub(crate) fn exponent_of(size: f64, ladder: &[f64]) -> u32 {
    let need = size * (1.0 + CELL_MARGIN);
    ladder.partition_point(|&cell| cell < need) as u32
}

/// The ladder of cell edges `c0 * f^k` up to the first that covers `largest * (1 + CELL_MARGIN)`.
fn fill_ladder(ladder: &mut Vec<f64>, base_cell: f64, factor: f64, largest: f64) {
    ladder.clear();
    let need = largest * (1.0 + CELL_MARGIN);
    let mut k = 0;
    loop {
        let cell = base_cell * factor.powi(k);
        ladder.push(cell);
        if cell >= need || !cell.is_finite() {
            break;
        }
        k += 1;
    }
}

impl<T: Real> BroadPhase<T> {
    /// Builds the hierarchy over `boxes` (every box in every group, colliding with all).
    ///
    /// Fails on an invalid box ([`Error::InvalidBox`], [`Error::NonFiniteCoordinate`]), too
    /// many boxes, or finite boxes spanning more than `f64` holds along an axis
    /// ([`Error::CoordinateOutOfRange`]); the hierarchy is then left as it was.
    pub fn build(&mut self, boxes: &[Aabb<T>]) -> Result<(), Error> {
        self.kind = Kind::Boxes;
        self.build_inner(boxes, None)
    }

    /// Builds the hierarchy over `boxes` with one [`Filter`] per box. Fails (changing nothing)
    /// as [`BroadPhase::build`] does, and on a filter count other than the box count.
    pub fn build_filtered(&mut self, boxes: &[Aabb<T>], filters: &[Filter]) -> Result<(), Error> {
        if filters.len() != boxes.len() {
            return Err(Error::LengthMismatch {
                x: boxes.len(),
                y: filters.len(),
                z: boxes.len(),
            });
        }
        self.kind = Kind::Boxes;
        self.build_inner(boxes, Some(filters))
    }

    /// The cell edge of level exponent 0 of the last build.
    pub fn base_cell(&self) -> f64 {
        self.base_cell
    }

    /// Builds the hierarchy over `objects` of the current kind. Every error is found by
    /// [`validate`] before anything is written, so a failed build leaves the hierarchy as it
    /// was.
    pub(crate) fn build_inner<O: Objects<T> + ?Sized>(
        &mut self,
        objects: &O,
        filters: Option<&[Filter]>,
    ) -> Result<(), Error> {
        let n = objects.count();
        let survey = validate(objects)?;
        let extent = (0..3)
            .map(|a| survey.hi[a] - survey.lo[a])
            .fold(0.0f64, f64::max);
        self.len = n;
        self.filtered = filters.is_some();
        self.huge.clear();
        self.huge_boxes.clear();
        self.huge_filters.clear();
        self.used = 0;
        // Emptied until the build completes and plans them again, so that no task names a
        // level or a huge box of the build before.
        self.tasks.clear();

        if n < self.config.all_pairs_below {
            self.flat = true;
            fill_columns(objects, None, &mut self.flat_min, &mut self.flat_max);
            self.flat_filters.clear();
            if let Some(filters) = filters {
                self.flat_filters.extend_from_slice(filters);
            }
            self.plan_tasks();
            return Ok(());
        }
        self.flat = false;

        let factor = self.config.hierarchy_factor;
        let huge_edge = self.config.huge_fraction * extent;
        // The floor is normal, so that every level's `1 / cell` is finite and its span in
        // cells at most about `2^BASE_SPAN_BITS`: no level can fail to build after the checks
        // of `validate` (an extent below `2^-996` would otherwise give a subnormal or zero floor).
        let floor = (extent * (-BASE_SPAN_BITS as f64).exp2()).max(f64::MIN_POSITIVE);
        let mut base_cell = if survey.smallest_edge.is_finite() {
            survey.smallest_edge * factor.sqrt()
        } else {
            0.0
        };
        base_cell = base_cell.max(floor);
        if !(base_cell > 0.0 && base_cell.is_finite()) {
            base_cell = 1.0;
        }
        self.base_cell = base_cell;
        fill_ladder(&mut self.ladder, base_cell, factor, survey.largest_edge);
        let ladder = &self.ladder;

        // Exponents per box, then the boxes grouped by exponent (stable: ascending indices).
        self.exponents.resize(n, 0);
        self.exponents
            .par_chunks_mut(COPY_CHUNK)
            .enumerate()
            .for_each(|(chunk, out)| {
                for (k, e) in out.iter_mut().enumerate() {
                    let index = chunk * COPY_CHUNK + k;
                    let edge = objects.size(index);
                    *e = if !objects.is_finite(index)
                        || (edge > 0.0 && edge >= huge_edge && survey.finite > 1)
                    {
                        HUGE
                    } else {
                        exponent_of(edge, ladder)
                    };
                }
            });
        let top = self
            .exponents
            .par_iter()
            .filter(|&&e| e != HUGE)
            .max()
            .copied()
            .unwrap_or(0);
        let huge_key = top + 1;
        self.exponents
            .par_iter_mut()
            .for_each(|e| *e = if *e == HUGE { huge_key } else { *e });
        counting_sort(
            &self.exponents,
            huge_key as usize + 1,
            &mut self.member_starts,
            &mut self.members,
            &mut self.sort_scratch,
        );

        let (hs, he) = (
            self.member_starts[huge_key as usize] as usize,
            self.member_starts[huge_key as usize + 1] as usize,
        );
        for &i in &self.members[hs..he] {
            self.huge.push(i);
            let (min, max) = objects.columns(i as usize);
            self.huge_boxes.push(Aabb { min, max });
            if let Some(filters) = filters {
                self.huge_filters.push(filters[i as usize]);
            }
        }

        for exponent in 0..huge_key {
            let (s, e) = (
                self.member_starts[exponent as usize] as usize,
                self.member_starts[exponent as usize + 1] as usize,
            );
            if s == e {
                continue;
            }
            let cell = self.ladder[exponent as usize];
            if self.levels.len() == self.used {
                self.levels.push(Level::new(exponent, placeholder_table()));
            }
            let level = &mut self.levels[self.used];
            level.exponent = exponent;
            build_level(
                level,
                objects,
                filters,
                &self.members[s..e],
                cell,
                floor,
                self.kernel,
            )?;
            self.used += 1;
        }
        self.plan_tasks();
        Ok(())
    }
}

/// A table that is overwritten before use.
fn placeholder_table() -> CellTable {
    CellTable {
        origin: [0.0; 3],
        cell: 1.0,
        inv_cell: 1.0,
        span: [1; 3],
        shift: [2; 3],
        dense: true,
    }
}

/// Copies boxes (all, or those named by `order`) into minimum and maximum columns.
fn fill_columns<T: Real, O: Objects<T> + ?Sized>(
    objects: &O,
    order: Option<&[u32]>,
    min: &mut PointColumns<T>,
    max: &mut PointColumns<T>,
) {
    let n = order.map_or(objects.count(), <[u32]>::len);
    min.set_len(n);
    max.set_len(n);
    let [x0, y0, z0] = min.columns_mut();
    let [x1, y1, z1] = max.columns_mut();
    x0.par_chunks_mut(COPY_CHUNK)
        .zip(y0.par_chunks_mut(COPY_CHUNK))
        .zip(z0.par_chunks_mut(COPY_CHUNK))
        .zip(x1.par_chunks_mut(COPY_CHUNK))
        .zip(y1.par_chunks_mut(COPY_CHUNK))
        .zip(z1.par_chunks_mut(COPY_CHUNK))
        .enumerate()
        .for_each(|(chunk, (((((x0, y0), z0), x1), y1), z1))| {
            let base = chunk * COPY_CHUNK;
            for k in 0..x0.len() {
                let i = order.map_or(base + k, |o| o[base + k] as usize);
                let (lo, hi) = objects.columns(i);
                x0[k] = lo[0];
                y0[k] = lo[1];
                z0[k] = lo[2];
                x1[k] = hi[0];
                y1[k] = hi[1];
                z1[k] = hi[2];
            }
        });
}

/// Builds one level over the boxes `members` (caller indices, ascending) with cells of edge at
/// most `cell`.
fn build_level<T: Real, O: Objects<T> + ?Sized>(
    level: &mut Level<T>,
    objects: &O,
    filters: Option<&[Filter]>,
    members: &[u32],
    cell: f64,
    floor: f64,
    kernel: crate::geometry::Kernel,
) -> Result<(), Error> {
    let m = members.len();
    // The level's cell shrinks to its largest member (never below the floor that bounds the
    // span): every member still fits, and every box of a finer level is smaller than every
    // box of this one, so the neighbourhood arguments hold with fewer candidates per cell.
    let largest = members
        .par_iter()
        .map(|&i| objects.size(i as usize))
        .reduce(|| 0.0, f64::max);
    let fitted = largest * (1.0 + CELL_MARGIN);
    let cell = if fitted > 0.0 && fitted < cell {
        fitted.max(floor)
    } else {
        cell
    };
    // The hashing input: the members' minimum corners.
    level.corners.set_len(m);
    {
        let [x, y, z] = level.corners.columns_mut();
        x.par_chunks_mut(COPY_CHUNK)
            .zip(y.par_chunks_mut(COPY_CHUNK))
            .zip(z.par_chunks_mut(COPY_CHUNK))
            .zip(members.par_chunks(COPY_CHUNK))
            .for_each(|(((x, y), z), members)| {
                for (k, &i) in members.iter().enumerate() {
                    let (lo, _) = objects.columns(i as usize);
                    x[k] = lo[0];
                    y[k] = lo[1];
                    z[k] = lo[2];
                }
            });
    }
    let corners = Points::Soa(level.corners.x(), level.corners.y(), level.corners.z());
    let corner_bounds = bounds(corners)?.expect("a level has at least one box");
    let table = CellTable::with_cell(&corner_bounds, m, cell, LEVEL_MIN_DENSE, corners)
        .map_err(|e| e.with_caller_point(|index| members[index] as usize))?;
    table.keys(corners, kernel, &mut level.keys);
    counting_sort(
        &level.keys,
        table.buckets(),
        &mut level.starts,
        &mut level.local_order,
        &mut level.sort_scratch,
    );
    level.order.clear();
    level
        .order
        .extend(level.local_order.iter().map(|&k| members[k as usize]));
    level.order.resize(m + LANES, 0);
    fill_columns(
        objects,
        Some(&level.order[..m]),
        &mut level.min,
        &mut level.max,
    );
    level.filters.clear();
    if let Some(filters) = filters {
        level
            .filters
            .extend(level.order[..m].iter().map(|&i| filters[i as usize]));
    }
    level.table = table;
    cut_units(&level.starts, m, UNIT_BOXES, &mut level.units);
    Ok(())
}
