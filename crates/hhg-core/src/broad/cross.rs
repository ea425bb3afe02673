//! The overlapping pairs between two built hierarchies (a scene's dynamic objects against its
//! statics, its side list against its built objects): thesis Algorithm 4 across two
//! hierarchies, each pair looked up from the box of the finer level.
//!
//! A box whose size fits a level's cell finds every box of that level it overlaps in the 27
//! buckets (9 in the plane) around its minimum corner (both boxes are no larger than the cell, so their
//! corners lie less than one cell apart on every axis). For two levels `la` of the first
//! hierarchy and `lb` of the second, the boxes of `la` look up `lb` when `lb`'s cell is at
//! least `la`'s, and the boxes of `lb` look up `la` otherwise, so every pair of boxes in
//! levels is tested exactly once and never against more than 27 buckets. Querying each box
//! of the first hierarchy against the second by box (cell by cell over the box) visited
//! ~10^3 buckets for a large box against a fine level instead.

use crate::geometry::Kernel;
use crate::real::Real;

use super::{
    BlockTest, BoxTest, BroadPhase, Kind, RadiusRule, SphereTest, scan, scan_around, with_test,
};

/// Boxes per task of a side that is an all-pairs build (queried box by box).
const QUERY_BOXES: usize = 256;

/// Which of the two hierarchies a task's boxes belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// The first hierarchy (`a` in the pairs).
    First,
    /// The second hierarchy (`b` in the pairs).
    Second,
}

/// One parallel task of a cross detection.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CrossTask {
    /// A work unit of a level of `side`: its boxes against the 27 buckets around their corner
    /// in every level of the other hierarchy they look up (see the module's rule).
    Unit { side: Side, level: u32, unit: u32 },
    /// A huge box of `side` against every box in the levels of the other hierarchy and, for
    /// the first side, against the second's huge boxes.
    Huge { side: Side, index: u32 },
    /// Boxes `start..end` of an all-pairs build of `side`, each queried by box against the
    /// other hierarchy (whatever its form).
    Query { side: Side, start: u32, end: u32 },
}

/// Tells whether a box of a level with cell `own` looks up a level of the other hierarchy
/// with cell `other`: the first side's boxes look up cells at least as large as their own,
/// the second side's boxes strictly larger ones, so that of two levels exactly one side
/// looks up the other.
#[inline(always)]
fn looks_up(side: Side, own: f64, other: f64) -> bool {
    match side {
        Side::First => other >= own,
        Side::Second => other > own,
    }
}

impl<T: Real, const D: usize> BroadPhase<T, D> {
    /// Plans the tasks of [`BroadPhase::cross_task`] between the last builds of `self` (the
    /// first side) and `other` (the second), in output order, into `tasks` (cleared first).
    pub(crate) fn plan_cross(&self, other: &BroadPhase<T, D>, tasks: &mut Vec<CrossTask>) {
        tasks.clear();
        let chunks = |side: Side, len: usize, tasks: &mut Vec<CrossTask>| {
            tasks.extend((0..len.div_ceil(QUERY_BOXES)).map(|k| CrossTask::Query {
                side,
                start: (k * QUERY_BOXES) as u32,
                end: ((k + 1) * QUERY_BOXES).min(len) as u32,
            }));
        };
        if self.len == 0 || other.len == 0 {
            return;
        }
        // An all-pairs build has no levels to look up: its boxes query the other side by box
        // (fewer than `all_pairs_below` queries).
        if self.flat {
            return chunks(Side::First, self.len, tasks);
        }
        if other.flat {
            return chunks(Side::Second, other.len, tasks);
        }
        for (side, own, theirs) in [(Side::First, self, other), (Side::Second, other, self)] {
            for (l, level) in own.active_levels().iter().enumerate() {
                let cell = level.table.cell;
                if theirs
                    .active_levels()
                    .iter()
                    .any(|t| looks_up(side, cell, t.table.cell))
                {
                    tasks.extend((0..level.units.len()).map(|unit| CrossTask::Unit {
                        side,
                        level: l as u32,
                        unit: unit as u32,
                    }));
                }
            }
            tasks.extend((0..own.huge.len()).map(|index| CrossTask::Huge {
                side,
                index: index as u32,
            }));
        }
    }

    /// Runs one task of [`BroadPhase::plan_cross`], reporting every overlapping pair it
    /// covers to `emit(a, b)`: `a` a box of `self`, `b` one of `other`, in the caller indices
    /// of their builds. Filters are not applied. Both builds must be of boxes.
    pub(crate) fn cross_task(
        &self,
        other: &BroadPhase<T, D>,
        task: CrossTask,
        emit: &mut impl FnMut(u32, u32),
    ) {
        debug_assert!(self.kind == Kind::Boxes && other.kind == Kind::Boxes);
        with_test!(Kind::Boxes, self.kernel, |test| match task {
            CrossTask::Unit { side, level, unit } => match side {
                Side::First =>
                    self.cross_unit(other, side, level, unit, test, &mut |a, b| { emit(a, b) }),
                Side::Second =>
                    other.cross_unit(self, side, level, unit, test, &mut |b, a| { emit(a, b) }),
            },
            CrossTask::Huge { side, index } => match side {
                Side::First => self.cross_huge(other, true, index, test, &mut |a, b| emit(a, b)),
                Side::Second => {
                    other.cross_huge(self, false, index, test, &mut |b, a| emit(a, b))
                }
            },
            CrossTask::Query { side, start, end } => match side {
                Side::First => self.cross_query(other, start, end, &mut |a, b| emit(a, b)),
                Side::Second => other.cross_query(self, start, end, &mut |b, a| emit(a, b)),
            },
        })
    }

    /// The boxes of work unit `unit` of level `level` of `self` (on `side`) against the 27
    /// buckets around their corner in every level of `other` they look up, as
    /// `emit(own, other's)`.
    fn cross_unit(
        &self,
        other: &BroadPhase<T, D>,
        side: Side,
        level: u32,
        unit: u32,
        test: impl BlockTest<T>,
        emit: &mut impl FnMut(u32, u32),
    ) {
        let level = &self.active_levels()[level as usize];
        let (lo_bucket, hi_bucket) = level.units[unit as usize];
        let (start, end) = (
            level.starts[lo_bucket as usize] as usize,
            level.starts[hi_bucket as usize] as usize,
        );
        let cell = level.table.cell;
        for coarse in other
            .active_levels()
            .iter()
            .filter(|t| looks_up(side, cell, t.table.cell))
        {
            for p in start..end {
                let (lo, hi) = level.box_at(p);
                // A box taken out of a scene's hierarchy is NaN and overlaps nothing.
                if lo[0].to_f64().is_nan() {
                    continue;
                }
                let me = level.order[p];
                scan_around(coarse, test, lo, hi, |q| emit(me, coarse.order[q]));
            }
        }
    }

    /// Huge box `index` of `self` against every box in the levels of `other` and, when
    /// `with_huge`, against `other`'s huge boxes, as `emit(own, other's)`.
    fn cross_huge(
        &self,
        other: &BroadPhase<T, D>,
        with_huge: bool,
        index: u32,
        test: impl BlockTest<T>,
        emit: &mut impl FnMut(u32, u32),
    ) {
        let me = self.huge[index as usize];
        let aabb = self.huge_boxes[index as usize];
        for level in other.active_levels() {
            scan(level, test, aabb.min, aabb.max, 0, level.len(), |q| {
                emit(me, level.order[q])
            });
        }
        if with_huge {
            for (k, theirs) in other.huge_boxes.iter().enumerate() {
                if aabb.overlaps(theirs) {
                    emit(me, other.huge[k]);
                }
            }
        }
    }

    /// Boxes `start..end` of the all-pairs build `self`, each queried by box against `other`,
    /// as `emit(own, other's)`.
    fn cross_query(
        &self,
        other: &BroadPhase<T, D>,
        start: u32,
        end: u32,
        emit: &mut impl FnMut(u32, u32),
    ) {
        debug_assert!(self.flat);
        for i in start..end {
            let query = super::Aabb::new(
                self.flat_min.point(i as usize),
                self.flat_max.point(i as usize),
            );
            if query.min[0].to_f64().is_nan() {
                continue;
            }
            other.for_each_overlap(&query, |b| emit(i, b));
        }
    }
}
