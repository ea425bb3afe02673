//! The detection step of a [`BroadPhase`]: its tasks (work units of the levels, huge
//! boxes, chunks of an all-pairs build), all overlapping pairs, and the sequential and
//! parallel visitors.

use rayon::prelude::*;

use crate::geometry::Kernel;
use crate::grid::{forward_neighbourhood, forward_rows};
use crate::pairs::PairList;
use crate::real::Real;

use super::{
    BlockTest, BoxTest, BroadPhase, Filter, Kind, Level, RadiusRule, ScanColumns, SphereTest, Task,
    scan, scan_around, scan_columns, with_test,
};

impl<T: Real, const D: usize> BroadPhase<T, D> {
    /// Every overlapping pair `[a, b]`, `a < b` in the caller's numbering, exactly once and in
    /// an order that does not depend on the thread count, into `out` (without distances;
    /// cleared first, its buffers reused).
    ///
    /// Fails with [`Error::OutOfMemory`](crate::Error::OutOfMemory) when the pairs cannot be
    /// allocated, and with [`Error::OutputTooLarge`](crate::Error::OutputTooLarge) past the
    /// list's cap ([`PairList::set_max_pairs`]); `out` is then empty.
    pub fn pairs(&self, out: &mut PairList<T>) -> Result<(), crate::Error> {
        let tasks = &self.tasks;
        out.collect_units(tasks.len(), |task, sink| {
            self.run_task(tasks[task], &mut |a, b| sink.push([a.min(b), a.max(b)]));
        })
    }

    /// Calls `visit(a, b)` for every overlapping pair (`a < b`), sequentially, in the order of
    /// [`BroadPhase::pairs`]; stores nothing.
    pub fn for_each_pair(&self, mut visit: impl FnMut(u32, u32)) {
        for &task in &self.tasks {
            self.run_task(task, &mut |a, b| visit(a.min(b), a.max(b)));
        }
    }

    /// Calls `visit(a, b)` for every overlapping pair (`a < b`) from the rayon pool; stores
    /// nothing. The call order is unspecified.
    pub fn par_for_each_pair(&self, visit: impl Fn(u32, u32) + Sync) {
        self.tasks.par_iter().for_each(|&task| {
            self.run_task(task, &mut |a, b| visit(a.min(b), a.max(b)));
        });
    }

    /// Plans the tasks of the detection step, in output order, into `tasks` (its buffer
    /// reused). The tasks depend only on the build, so a successful build calls this last.
    pub(super) fn plan_tasks(&mut self) {
        let tasks = &mut self.tasks;
        tasks.clear();
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
            return;
        }
        for (level, l) in self.levels[..self.used].iter().enumerate() {
            tasks.extend((0..l.units.len()).map(|unit| Task::Unit { level, unit }));
        }
        tasks.extend((0..self.huge.len()).map(|index| Task::Huge { index }));
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
    /// forward buckets, and the 27 buckets around its corner in every coarser level (in the
    /// plane, the 4 forward and the 9 around).
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
        // Read once for the unit's scans of its own level.
        let own = ScanColumns::new(&level.min, &level.max);
        for b in lo_bucket..hi_bucket {
            let (start, end) = (level.starts[b as usize], level.starts[b as usize + 1]);
            if start == end {
                continue;
            }
            let bc = table.bucket_coords(b);
            // The later objects of the bucket and those of bucket x + 1 are one contiguous
            // range unless the row wraps there; the other 12 forward buckets are 4 rows (in the
            // plane, the other 3 are 1 row).
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
                let mut hit = |other: &Level<T, D>, q: usize| {
                    if !filtered || filter.accepts(other.filter_at(q)) {
                        emit(me, other.order[q]);
                    }
                };
                scan_columns(own, test, lo, hi, p as usize + 1, own_end as usize, |q| {
                    hit(level, q)
                });
                for &(s, e) in forward.as_slice() {
                    scan_columns(own, test, lo, hi, s as usize, e as usize, |q| hit(level, q));
                }
                for coarse in &levels[level_index + 1..] {
                    scan_around(coarse, test, lo, hi, |q| hit(coarse, q));
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
                ScanColumns::new(&self.flat_min, &self.flat_max),
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
