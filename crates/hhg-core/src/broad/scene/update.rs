//! The update step of a [`Scene`]: the choice between patching the dynamic hierarchy in
//! place and rebuilding it, the side list of objects that left their cell or level, and the
//! rebuild of the statics.

use rayon::prelude::*;

use crate::broad::build::check_boxes;
use crate::error::Error;
use crate::real::Real;

use super::{DEAD, Place, Scene, UpdateReport, UpdateStrategy};

/// Under [`UpdateStrategy::Auto`], a step with more than this fraction of the dynamic
/// objects changed rebuilds without trying to patch. Measured on thesis-like boxes moving up
/// to 20% of their size (docs/performance.md): patching wins below ~10% changed objects at 1M
/// and below ~30% at 100k, rebuilding above.
const AUTO_REBUILD_CHANGED: f64 = 0.15;

/// Under [`UpdateStrategy::Auto`], the side list is merged by a rebuild once it holds more
/// than this fraction of the dynamic objects (each side-list object costs a query per step).
const AUTO_REBUILD_MOVED: f64 = 0.05;

/// Under [`UpdateStrategy::Incremental`], the side list is merged at this fraction.
const INCREMENTAL_REBUILD_MOVED: f64 = 0.25;

impl<T: Real, const D: usize> Scene<T, D> {
    /// Brings the structures up to date with the inserts, removals and box changes since the
    /// last update: statics are rebuilt only if they changed; dynamic objects are patched in
    /// place or rebuilt according to the strategy.
    ///
    /// # Errors
    ///
    /// [`Error::CoordinateOutOfRange`] when the boxes of a structure to rebuild (the dynamic
    /// hierarchy, the statics, or the side list of dynamic objects waiting outside the
    /// hierarchy) span more than `f64` holds along an axis: finite bounds near `-f64::MAX`
    /// and `f64::MAX` together (`f32` boxes always fit). The update is then undone: the scene is exactly as before the
    /// call (queries see the structures of the last successful update) and the inserts,
    /// removals and changes since that update are still pending, so every later update fails
    /// the same way until the offending boxes are changed or removed.
    pub fn update(&mut self) -> Result<UpdateReport, Error> {
        // Everything that can fail comes first and writes only scratch buffers and the
        // hierarchies, whose failed builds change nothing.
        let mut report = UpdateReport::default();
        if self.statics_changed {
            // Checked now, built last: the static build can no longer fail then.
            self.collect_statics();
            check_boxes(&self.boxes)?;
        }
        let changed = self.dirty.len();
        let rebuild = if !self.built {
            true
        } else if changed == 0 {
            false
        } else {
            match self.strategy {
                UpdateStrategy::Rebuild => true,
                UpdateStrategy::Auto
                    if changed as f64 > AUTO_REBUILD_CHANGED * self.dynamic_count as f64 =>
                {
                    true
                }
                _ => {
                    // The side list's growth if the changed objects were patched: those that
                    // cannot be (and leave a dead entry behind) and those just inserted.
                    self.ensure_located();
                    let (mut joining, mut killed) = (0, 0);
                    for &slot in &self.dirty {
                        let s = &self.slots[slot as usize];
                        match s.place {
                            Place::Built(b) => {
                                let location = self.locations[b as usize];
                                if !self.dynamic_broad.patchable(location, &s.aabb) {
                                    joining += 1;
                                    killed += 1;
                                }
                            }
                            Place::Pending => joining += 1,
                            Place::Moved(_) | Place::Free | Place::Static => {}
                        }
                    }
                    let limit = match self.strategy {
                        UpdateStrategy::Incremental => INCREMENTAL_REBUILD_MOVED,
                        _ => AUTO_REBUILD_MOVED,
                    };
                    let waste = (self.moved.len() + joining + self.dead + killed) as f64;
                    waste > limit * self.dynamic_count.max(1) as f64 && waste > 64.0
                }
            }
        };
        if rebuild {
            self.rebuild_dynamic()?;
            report.rebuilt = true;
        } else {
            if changed > 0 || !self.side_built {
                self.build_side_list()?;
            }
            report.patched = self.patch_dirty();
            self.side_built = true;
        }
        if self.statics_changed {
            self.collect_statics();
            self.static_broad
                .build_filtered(&self.boxes, &self.filters)
                .expect("the static boxes were checked above");
            std::mem::swap(&mut self.static_slots, &mut self.staged_slots);
            self.static_generations.clear();
            self.static_generations.extend(
                self.static_slots
                    .iter()
                    .map(|&slot| self.slots[slot as usize].generation),
            );
            self.statics_changed = false;
            report.statics_rebuilt = true;
        }
        report.moved = self.moved.len();
        Ok(report)
    }

    /// The static objects' slots into `staged_slots`, their boxes and filters into `boxes`
    /// and `filters`.
    fn collect_statics(&mut self) {
        self.staged_slots.clear();
        self.boxes.clear();
        self.filters.clear();
        for (k, s) in self.slots.iter().enumerate() {
            if s.place == Place::Static {
                self.staged_slots.push(k as u32);
                self.boxes.push(s.aabb);
                self.filters.push(s.filter);
            }
        }
    }

    /// Builds the side list's own hierarchy over the side list as [`Scene::patch_dirty`] will
    /// leave it: the objects on it now, then the changed objects that cannot be patched and
    /// those just inserted, in the order of `dirty`. Needs the locations.
    fn build_side_list(&mut self) -> Result<(), Error> {
        self.boxes.clear();
        self.filters.clear();
        for &slot in &self.moved {
            self.boxes.push(self.slots[slot as usize].aabb);
            self.filters.push(self.slots[slot as usize].filter);
        }
        for &slot in &self.dirty {
            let s = &self.slots[slot as usize];
            let joins = match s.place {
                Place::Built(b) => !self
                    .dynamic_broad
                    .patchable(self.locations[b as usize], &s.aabb),
                Place::Pending => true,
                Place::Moved(_) | Place::Free | Place::Static => false,
            };
            if joins {
                self.boxes.push(s.aabb);
                self.filters.push(s.filter);
            }
        }
        if self.boxes.is_empty() {
            return Ok(());
        }
        self.moved_broad.build_filtered(&self.boxes, &self.filters)
    }

    /// Patches the changed objects in place, moving those that cannot be (and those just
    /// inserted) to the side list; returns how many were patched. Needs the locations.
    fn patch_dirty(&mut self) -> usize {
        let mut patched = 0;
        for k in 0..self.dirty.len() {
            let slot = self.dirty[k];
            let s = self.slots[slot as usize];
            self.slots[slot as usize].dirty = false;
            match s.place {
                Place::Built(b) => {
                    let location = self.locations[b as usize];
                    if self.dynamic_broad.patch(location, &s.aabb) {
                        patched += 1;
                    } else {
                        self.dynamic_broad.kill(location);
                        self.built_slots[b as usize] = DEAD;
                        self.dead += 1;
                        self.slots[slot as usize].place = Place::Moved(self.moved.len() as u32);
                        self.moved.push(slot);
                    }
                }
                Place::Pending => {
                    self.slots[slot as usize].place = Place::Moved(self.moved.len() as u32);
                    self.moved.push(slot);
                }
                Place::Moved(_) | Place::Free | Place::Static => {}
            }
        }
        self.dirty.clear();
        patched
    }

    /// Rebuilds the dynamic hierarchy over every dynamic object; on failure nothing changes.
    fn rebuild_dynamic(&mut self) -> Result<(), Error> {
        // The dynamic objects' slots, ascending: the built ones still there, the side list,
        // and those inserted since (only these are pending), found without a pass over the
        // statics' slots (90 % of a static-heavy scene's).
        self.staged_slots.clear();
        self.staged_slots
            .extend(self.built_slots.iter().copied().filter(|&s| s != DEAD));
        self.staged_slots.extend_from_slice(&self.moved);
        self.staged_slots.extend(
            self.dirty
                .iter()
                .copied()
                .filter(|&s| self.slots[s as usize].place == Place::Pending),
        );
        self.staged_slots.par_sort_unstable();
        self.boxes.clear();
        self.filters.clear();
        for &slot in &self.staged_slots {
            let s = &self.slots[slot as usize];
            self.boxes.push(s.aabb);
            self.filters.push(s.filter);
        }
        self.dynamic_broad
            .build_filtered(&self.boxes, &self.filters)?;
        for (b, &slot) in self.staged_slots.iter().enumerate() {
            self.slots[slot as usize].place = Place::Built(b as u32);
        }
        for &slot in &self.dirty {
            self.slots[slot as usize].dirty = false;
        }
        std::mem::swap(&mut self.built_slots, &mut self.staged_slots);
        self.dirty.clear();
        self.moved.clear();
        self.dead = 0;
        self.located = false;
        self.built = true;
        self.side_built = true;
        Ok(())
    }
}
