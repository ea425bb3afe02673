//! The pairs of a [`Scene`]: every overlapping pair after an update, the pairs created and
//! lost since the previous detection, and box queries over its structures.

use rayon::prelude::*;

use crate::broad::BroadPhase;
use crate::broad::build::check_box;
use crate::broad::cross::CrossTask;
use crate::error::Error;
use crate::memory::try_reserve_total;
use crate::real::Real;

use super::{Aabb, DEAD, Handle, Scene, UpdateReport};

impl<T: Real, const D: usize> Scene<T, D> {
    /// Updates (see [`Scene::update`]) and reports every overlapping pair of a dynamic object
    /// with a dynamic or static one, each once, the smaller slot first, into `out` (cleared
    /// first), in an order that does not depend on the thread count.
    ///
    /// Fails as [`Scene::update`] does, and then changes nothing (neither the scene nor
    /// `out`). Fails with [`Error::OutOfMemory`] when the pairs cannot be allocated after the
    /// update; `out` is then empty and the scene stays updated, as after [`Scene::update`].
    pub fn detect(&mut self, out: &mut Vec<[Handle; 2]>) -> Result<UpdateReport, Error> {
        let report = self.update()?;
        out.clear();
        if let Err(error) = self.detect_pairs(out) {
            out.clear();
            return Err(error);
        }
        Ok(report)
    }

    /// The pairs of [`Scene::detect`] after its update, into the empty `out`.
    fn detect_pairs(&mut self, out: &mut Vec<[Handle; 2]>) -> Result<(), Error> {
        // Built against built.
        self.dynamic_broad.pairs(&mut self.index_pairs)?;
        try_reserve_total(out, self.index_pairs.len(), "the detected pairs")?;
        out.extend(self.index_pairs.pairs().iter().map(|&[a, b]| {
            self.ordered(self.built_slots[a as usize], self.built_slots[b as usize])
        }));
        // The side list against itself (through its own small hierarchy)...
        if !self.moved.is_empty() {
            // Built by the update (before it changed anything).
            self.moved_broad.pairs(&mut self.index_pairs)?;
            try_reserve_total(
                out,
                out.len() + self.index_pairs.len(),
                "the detected pairs",
            )?;
            out.extend(
                self.index_pairs
                    .pairs()
                    .iter()
                    .map(|&[a, b]| self.ordered(self.moved[a as usize], self.moved[b as usize])),
            );
        }
        // ...and against the built objects, and every dynamic object against the statics.
        let mut buffers = std::mem::take(&mut self.query_buffers);
        let mut tasks = std::mem::take(&mut self.cross_tasks);
        let result = self.cross_side_list_and_statics(&mut buffers, &mut tasks, out);
        self.query_buffers = buffers;
        self.cross_tasks = tasks;
        result
    }

    /// The pairs of the side list's objects with the built ones, and of every dynamic
    /// object with the statics, appended to `out`, each between two hierarchies by
    /// [`BroadPhase::plan_cross`] (`tasks` is scratch for its tasks).
    fn cross_side_list_and_statics(
        &self,
        buffers: &mut Vec<Vec<[Handle; 2]>>,
        tasks: &mut Vec<CrossTask>,
        out: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        // The side list's slots; the built objects' slots, `DEAD` once taken out.
        let moved = |m: u32| Some(self.moved[m as usize]);
        let built = |b: u32| Some(self.built_slots[b as usize]).filter(|&s| s != DEAD);
        let statics = |s: u32| Some(self.static_slots[s as usize]);
        if !self.moved.is_empty() {
            self.cross_pairs(
                &self.moved_broad,
                &self.dynamic_broad,
                moved,
                built,
                tasks,
                buffers,
                out,
            )?;
        }
        if !self.static_slots.is_empty() {
            self.cross_pairs(
                &self.dynamic_broad,
                &self.static_broad,
                built,
                statics,
                tasks,
                buffers,
                out,
            )?;
            if !self.moved.is_empty() {
                self.cross_pairs(
                    &self.moved_broad,
                    &self.static_broad,
                    moved,
                    statics,
                    tasks,
                    buffers,
                    out,
                )?;
            }
        }
        Ok(())
    }

    /// The overlapping pairs between hierarchies `first` and `second` whose filters accept
    /// each other, appended to `out` in task order; `first_slot` and `second_slot` map each
    /// hierarchy's built indices to slots (`None` for an object no longer there).
    #[allow(clippy::too_many_arguments)] // Two hierarchies with their slot maps, and scratch.
    fn cross_pairs(
        &self,
        first: &BroadPhase<T, D>,
        second: &BroadPhase<T, D>,
        first_slot: impl Fn(u32) -> Option<u32> + Sync,
        second_slot: impl Fn(u32) -> Option<u32> + Sync,
        tasks: &mut Vec<CrossTask>,
        buffers: &mut Vec<Vec<[Handle; 2]>>,
        out: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        first.plan_cross(second, tasks);
        let tasks = &*tasks;
        self.collect_in_buffers(tasks.len(), buffers, out, |task, found| {
            first.cross_task(second, tasks[task], &mut |a, b| {
                let (Some(a), Some(b)) = (first_slot(a), second_slot(b)) else {
                    return;
                };
                if self.slots[a as usize]
                    .filter
                    .accepts(self.slots[b as usize].filter)
                {
                    found.push(self.ordered(a, b));
                }
            });
        })
    }

    /// Runs `job(k, found)` for every `k` in `0..jobs` in parallel, each into its own buffer
    /// of `buffers` (kept across calls), and appends the buffers to `out` in job order, so
    /// that the output does not depend on the thread count.
    fn collect_in_buffers(
        &self,
        jobs: usize,
        buffers: &mut Vec<Vec<[Handle; 2]>>,
        out: &mut Vec<[Handle; 2]>,
        job: impl Fn(usize, &mut Vec<[Handle; 2]>) + Sync,
    ) -> Result<(), Error> {
        if buffers.len() < jobs {
            buffers.resize_with(jobs, Vec::new);
        }
        buffers[..jobs]
            .par_iter_mut()
            .enumerate()
            .for_each(|(k, found)| {
                found.clear();
                job(k, found);
            });
        let total = out.len() + buffers[..jobs].iter().map(Vec::len).sum::<usize>();
        try_reserve_total(out, total, "the detected pairs")?;
        for found in &buffers[..jobs] {
            out.extend_from_slice(found);
        }
        Ok(())
    }

    /// Updates and detects (see [`Scene::detect`]), then reports the pairs that overlap now
    /// but did not at the previous call (`created`) and those that did then but do not now
    /// (`lost`, including pairs of removed objects), each sorted ascending.
    ///
    /// Fails as [`Scene::update`] does, and then changes nothing: the next successful call
    /// reports the changes since the last successful one.
    pub fn detect_changes(
        &mut self,
        created: &mut Vec<[Handle; 2]>,
        lost: &mut Vec<[Handle; 2]>,
    ) -> Result<UpdateReport, Error> {
        let mut current = std::mem::take(&mut self.current);
        let report = match self.detect(&mut current) {
            Ok(report) => report,
            Err(error) => {
                self.current = current;
                return Err(error);
            }
        };
        current.par_sort_unstable();
        created.clear();
        lost.clear();
        let (mut i, mut j) = (0, 0);
        let previous = &self.previous;
        while i < current.len() || j < previous.len() {
            match (current.get(i), previous.get(j)) {
                (Some(c), Some(p)) if c == p => {
                    i += 1;
                    j += 1;
                }
                (Some(c), Some(p)) if c < p => {
                    created.push(*c);
                    i += 1;
                }
                (Some(c), None) => {
                    created.push(*c);
                    i += 1;
                }
                (_, Some(p)) => {
                    lost.push(*p);
                    j += 1;
                }
                (None, None) => unreachable!("the loop condition"),
            }
        }
        self.current = std::mem::replace(&mut self.previous, current);
        Ok(report)
    }

    /// The objects overlapping `query`, ascending handles, into `out`, found in the
    /// structures of the last update: an object removed since is never reported, one
    /// inserted since is not yet, and one moved since may be found at its old box (dynamic
    /// objects waiting in the side list are tested at their current box).
    pub fn query_aabb(&self, query: &Aabb<T, D>, out: &mut Vec<Handle>) -> Result<(), Error> {
        check_box(0, query)?;
        out.clear();
        self.dynamic_broad.for_each_overlap(query, |b| {
            let slot = self.built_slots[b as usize];
            if slot != DEAD {
                out.push(self.handle(slot));
            }
        });
        for &slot in &self.moved {
            if self.slots[slot as usize].aabb.overlaps(query) {
                out.push(self.handle(slot));
            }
        }
        self.static_broad.for_each_overlap(query, |b| {
            let handle = Handle {
                slot: self.static_slots[b as usize],
                generation: self.static_generations[b as usize],
            };
            // A static removed since the last update (its slot perhaps reused) is gone.
            if self.slot(handle).is_ok() {
                out.push(handle);
            }
        });
        out.sort_unstable();
        Ok(())
    }
}
