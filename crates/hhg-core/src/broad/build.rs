//! Building the hierarchy: validate the boxes, choose `c0`, assign each box to its level or
//! to the huge list, and build every level with SIMD hashing and the parallel counting sort.

use rayon::prelude::*;

use crate::columns::{COPY_CHUNK, PointColumns, check_count, par_chunks};
use crate::error::Error;
use crate::geometry::{CELL_MARGIN, CellTable, column_bounds};
use crate::real::{LANES, Real};
use crate::sort::{counting_sort, cut_units};

use super::{Aabb, BroadPhase, Filter, Kind, Level, UNIT_BOXES};

/// The objects a hierarchy is built over, seen through what the build needs of them.
pub(crate) trait Objects<T: Real, const D: usize>: Sync {
    /// How many objects there are.
    fn count(&self) -> usize;
    /// Refuses an invalid object with an error naming it.
    fn check(&self, index: usize) -> Result<(), Error>;
    /// The size that decides the level: a box's longest edge, a particle's radius.
    fn size(&self, index: usize) -> f64;
    /// False for objects that go to the huge list whatever their size (infinite boxes).
    fn is_finite(&self, index: usize) -> bool;
    /// The extent the object adds to the scene's bounding box.
    fn extent(&self, index: usize) -> ([f64; D], [f64; D]);
    /// The values of the minimum and maximum columns; the first is the hashed point.
    fn columns(&self, index: usize) -> ([T; D], [T; D]);
}

impl<T: Real, const D: usize> Objects<T, D> for [Aabb<T, D>] {
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

    fn extent(&self, index: usize) -> ([f64; D], [f64; D]) {
        (
            self[index].min.map(Real::to_f64),
            self[index].max.map(Real::to_f64),
        )
    }

    #[inline]
    fn columns(&self, index: usize) -> ([T; D], [T; D]) {
        (self[index].min, self[index].max)
    }
}

/// Particles with their own radii: positions in the minimum columns, radii in the maximum
/// x column.
pub(crate) struct Particles<'a, T, const D: usize> {
    pub(crate) points: &'a [[T; D]],
    pub(crate) radii: &'a [T],
}

impl<T: Real, const D: usize> Objects<T, D> for Particles<'_, T, D> {
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

    fn extent(&self, index: usize) -> ([f64; D], [f64; D]) {
        let p = self.points[index].map(Real::to_f64);
        (p, p)
    }

    #[inline]
    fn columns(&self, index: usize) -> ([T; D], [T; D]) {
        let r = self.radii[index];
        let mut radius = [T::default(); D];
        radius[0] = r;
        (self.points[index], radius)
    }
}

/// Level 0 spans at most `2^BASE_SPAN_BITS` cells of the scene's extent, so that tiny or
/// zero-sized boxes in a large scene never exceed the grid's integer range.
const BASE_SPAN_BITS: i32 = 26;

/// A level's table is dense whenever it needs at most this many buckets (or 4 per object):
/// small levels stay small, unlike the particle grid's 4096-bucket minimum.
const LEVEL_MIN_DENSE: usize = 64;

/// What one pass over the boxes learns: the first invalid box, the bounding box of the
/// finite boxes, and their smallest positive longest edge.
#[derive(Clone, Debug)]
struct Survey<const D: usize> {
    error: Option<(usize, Error)>,
    lo: [f64; D],
    hi: [f64; D],
    smallest_edge: f64,
    largest_edge: f64,
    finite: usize,
}

impl<const D: usize> Survey<D> {
    const EMPTY: Self = Survey {
        error: None,
        lo: [f64::INFINITY; D],
        hi: [f64::NEG_INFINITY; D],
        smallest_edge: f64::INFINITY,
        largest_edge: 0.0,
        finite: 0,
    };

    fn merge(self, other: Self) -> Self {
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
pub(crate) fn check_box<T: Real, const D: usize>(
    index: usize,
    aabb: &Aabb<T, D>,
) -> Result<(), Error> {
    for axis in 0..D {
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

/// Tells whether all the bounds (six in space, four in the plane) are finite.
#[inline]
fn is_finite_box<T: Real, const D: usize>(aabb: &Aabb<T, D>) -> bool {
    aabb.min
        .iter()
        .chain(aabb.max.iter())
        .all(|v| v.is_finite())
}

fn survey<T: Real, const D: usize, O: Objects<T, D> + ?Sized>(objects: &O) -> Survey<D> {
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
                for a in 0..D {
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
fn validate<T: Real, const D: usize, O: Objects<T, D> + ?Sized>(
    objects: &O,
) -> Result<Survey<D>, Error> {
    let n = objects.count();
    check_count(n)?;
    let survey = survey(objects);
    if let Some((_, error)) = survey.error.clone() {
        return Err(error);
    }
    let spans = (0..D).map(|a| survey.hi[a] - survey.lo[a]);
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
pub(crate) fn check_boxes<T: Real, const D: usize>(boxes: &[Aabb<T, D>]) -> Result<(), Error> {
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

impl<T: Real, const D: usize> BroadPhase<T, D> {
    /// Builds the hierarchy over `boxes` (every box in every group, colliding with all).
    ///
    /// Fails on an invalid box ([`Error::InvalidBox`], [`Error::NonFiniteCoordinate`]), too
    /// many boxes, or finite boxes spanning more than `f64` holds along an axis
    /// ([`Error::CoordinateOutOfRange`]); the hierarchy is then left as it was.
    pub fn build(&mut self, boxes: &[Aabb<T, D>]) -> Result<(), Error> {
        self.kind = Kind::Boxes;
        self.build_inner(boxes, None)
    }

    /// Builds the hierarchy over `boxes` with one [`Filter`] per box. Fails (changing nothing)
    /// as [`BroadPhase::build`] does, and on a filter count other than the box count.
    pub fn build_filtered(
        &mut self,
        boxes: &[Aabb<T, D>],
        filters: &[Filter],
    ) -> Result<(), Error> {
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
    pub(crate) fn build_inner<O: Objects<T, D> + ?Sized>(
        &mut self,
        objects: &O,
        filters: Option<&[Filter]>,
    ) -> Result<(), Error> {
        let n = objects.count();
        let survey = validate(objects)?;
        let extent = (0..D)
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

        // Exponents per box, and the largest size of each exponent's boxes, in one pass; then
        // the boxes grouped by exponent (stable: ascending indices). A finite box's exponent
        // is below the ladder's length (the ladder's last cell covers the largest box), so
        // the ladder's length is the key of the huge list.
        let huge_key = ladder.len() as u32;
        self.exponents.resize(n, 0);
        let largest = self
            .exponents
            .par_chunks_mut(COPY_CHUNK)
            .enumerate()
            .fold(
                || vec![0.0f64; ladder.len()],
                |mut largest, (chunk, out)| {
                    for (k, e) in out.iter_mut().enumerate() {
                        let index = chunk * COPY_CHUNK + k;
                        let edge = objects.size(index);
                        *e = if !objects.is_finite(index)
                            || (edge > 0.0 && edge >= huge_edge && survey.finite > 1)
                        {
                            huge_key
                        } else {
                            let exponent = exponent_of(edge, ladder);
                            debug_assert!(exponent < huge_key, "a finite box past the ladder");
                            let kept = &mut largest[exponent as usize];
                            *kept = kept.max(edge);
                            exponent
                        };
                    }
                    largest
                },
            )
            .reduce(
                || vec![0.0f64; ladder.len()],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, &b)| *a = a.max(b));
                    a
                },
            );
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
                (cell, largest[exponent as usize]),
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
fn placeholder_table<const D: usize>() -> CellTable<D> {
    CellTable {
        origin: [0.0; D],
        cell: 1.0,
        inv_cell: 1.0,
        span: [1; D],
        shift: [2; D],
        dense: true,
    }
}

/// A level's sorted members, for [`fill_columns`]: the members (caller indices), the sort's
/// order over them (place in the level's order -> position among the members), and the
/// level's order to write (place -> caller index), as long as the sort's.
type SortedMembers<'a> = (&'a [u32], &'a [u32], &'a mut [u32]);

/// Copies boxes into minimum and maximum columns: all of them in caller order (`None`), or
/// a level's members in the level's order, writing each one's caller index into the level's
/// order in the same pass (the order and the columns are one parallel gather, not a serial
/// pass and a parallel one).
fn fill_columns<T: Real, const D: usize, O: Objects<T, D> + ?Sized>(
    objects: &O,
    sorted: Option<SortedMembers<'_>>,
    min: &mut PointColumns<T, D>,
    max: &mut PointColumns<T, D>,
) {
    let n = sorted
        .as_ref()
        .map_or(objects.count(), |(_, local, _)| local.len());
    min.set_len(n);
    max.set_len(n);
    let columns = (min.columns_mut(), max.columns_mut());
    let copy = |(min, max): &mut ([&mut [T]; D], [&mut [T]; D]), k: usize, i: usize| {
        let (lo, hi) = objects.columns(i);
        for axis in 0..D {
            min[axis][k] = lo[axis];
            max[axis][k] = hi[axis];
        }
    };
    match sorted {
        None => par_chunks(columns, COPY_CHUNK, &|base, mut columns| {
            for k in 0..columns.0[0].len() {
                copy(&mut columns, k, base + k);
            }
        }),
        Some((members, local, order)) => {
            debug_assert_eq!(order.len(), local.len(), "an order per sorted member");
            par_chunks((columns, ([order], local)), COPY_CHUNK, &|_,
                                                                  (
                mut columns,
                ([order], local),
            )| {
                for (k, &position) in local.iter().enumerate() {
                    let i = members[position as usize];
                    order[k] = i;
                    copy(&mut columns, k, i as usize);
                }
            });
        }
    }
}

/// Builds one level over the boxes `members` (caller indices, ascending) with cells of edge at
/// most `cell`, `largest` the largest size among the members.
fn build_level<T: Real, const D: usize, O: Objects<T, D> + ?Sized>(
    level: &mut Level<T, D>,
    objects: &O,
    filters: Option<&[Filter]>,
    members: &[u32],
    (cell, largest): (f64, f64),
    floor: f64,
    kernel: crate::geometry::Kernel,
) -> Result<(), Error> {
    let m = members.len();
    // The level's cell shrinks to its largest member (never below the floor that bounds the
    // span): every member still fits, and every box of a finer level is smaller than every
    // box of this one, so the neighbourhood arguments hold with fewer candidates per cell.
    let fitted = largest * (1.0 + CELL_MARGIN);
    let cell = if fitted > 0.0 && fitted < cell {
        fitted.max(floor)
    } else {
        cell
    };
    // The hashing input: the members' minimum corners.
    level.corners.set_len(m);
    par_chunks((level.corners.columns_mut(), members), COPY_CHUNK, &|_,
                                                                     (
        corners,
        members,
    )| {
        for (k, &i) in members.iter().enumerate() {
            let (lo, _) = objects.columns(i as usize);
            for axis in 0..D {
                corners[axis][k] = lo[axis];
            }
        }
    });
    let (lo, hi) = column_bounds(level.corners.columns());
    let table = CellTable::over(lo, hi, m, cell, LEVEL_MIN_DENSE).map_err(|(axis, cells)| {
        // Not reached after `validate` (the cell is at least `extent * 2^-26`); named all the
        // same, by the member at the top of the axis.
        let column = level.corners.columns()[axis];
        let at = column
            .iter()
            .position(|v| v.to_f64() == hi[axis])
            .unwrap_or(0);
        Error::CoordinateOutOfRange {
            index: members[at] as usize,
            axis,
            value: hi[axis],
            cells,
            limit: crate::geometry::MAX_SPAN_CELLS,
        }
    })?;
    table.column_keys(&level.corners, kernel, &mut level.keys);
    counting_sort(
        &level.keys,
        table.buckets(),
        &mut level.starts,
        &mut level.local_order,
        &mut level.sort_scratch,
    );
    level.order.resize(m + LANES, 0);
    let (order, padding) = level.order.split_at_mut(m);
    padding.fill(0);
    fill_columns(
        objects,
        Some((members, &level.local_order, order)),
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
