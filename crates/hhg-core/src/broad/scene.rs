//! Persistent scenes for physics engines: objects inserted and removed in O(1) behind stable
//! handles, static objects built once, an update step that patches the hierarchy in place
//! or rebuilds it (chosen per step), and the pairs created and lost between steps.

use rayon::prelude::*;

use crate::error::Error;
use crate::geometry::Kernel;
use crate::pairs::PairList;
use crate::real::Real;

use super::build::{check_box, check_boxes};
use super::patch::Location;
use super::{Aabb, BroadPhase, BroadPhaseConfig, Filter};

/// A stable name for an object of a [`Scene`]: valid from `insert` until `remove`, never
/// reused for another object (a reused slot gets a new generation, and a slot whose
/// generations are used up is never reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle {
    slot: u32,
    generation: u32,
}

impl Handle {
    /// The slot: a small integer, dense over live objects plus freed and retired slots (for
    /// side arrays).
    pub fn slot(self) -> u32 {
        self.slot
    }

    /// The generation of the slot this handle was issued for.
    pub fn generation(self) -> u32 {
        self.generation
    }
}

/// Whether an object moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Motion {
    /// Moves, rotates or resizes from step to step.
    Dynamic,
    /// Never moves: built into a structure of its own once (and again only after statics are
    /// inserted, removed or changed). Static objects are never paired with each other.
    Static,
}

/// How [`Scene::update`] brings the dynamic objects' hierarchy up to date.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum UpdateStrategy {
    /// Incremental while few objects change cell or level, rebuild otherwise (default).
    #[default]
    Auto,
    /// A full parallel rebuild every step.
    Rebuild,
    /// Patch in place; objects that change cell or level wait in a side list, which is
    /// merged by a rebuild only when it grows past a quarter of the objects.
    Incremental,
}

/// What one update did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateReport {
    /// Whether the dynamic hierarchy was rebuilt from scratch.
    pub rebuilt: bool,
    /// Whether the static structure was rebuilt.
    pub statics_rebuilt: bool,
    /// Changed objects rewritten in place (same level and cell).
    pub patched: usize,
    /// Objects in the side list after the update (changed cell or level, or newly inserted).
    pub moved: usize,
}

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

/// Objects per parallel task when querying side-list and static objects.
const QUERY_CHUNK: usize = 512;

/// Where a slot's object is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Free,
    Static,
    /// Index in the last dynamic build.
    Built(u32),
    /// Index in the side list.
    Moved(u32),
    /// Inserted since the last update.
    Pending,
}

#[derive(Clone, Copy, Debug)]
struct Slot<T> {
    aabb: Aabb<T>,
    filter: Filter,
    generation: u32,
    place: Place,
    dirty: bool,
}

/// A persistent broad phase over dynamic and static boxes.
///
/// ```
/// use hhg_core::broad::{Aabb, Filter, Motion, Scene};
///
/// let mut scene = Scene::<f32>::new();
/// let ground = scene.insert(Aabb::new([-100.0, -100.0, -1.0], [100.0, 100.0, 0.0]), Motion::Static, Filter::ALL)?;
/// let ball = scene.insert(Aabb::new([0.0, 0.0, 0.5], [1.0, 1.0, 1.5]), Motion::Dynamic, Filter::ALL)?;
/// let (mut created, mut lost) = (Vec::new(), Vec::new());
/// scene.detect_changes(&mut created, &mut lost)?;
/// assert!(created.is_empty());
/// scene.set_aabb(ball, Aabb::new([0.0, 0.0, -0.1], [1.0, 1.0, 0.9]))?;
/// scene.detect_changes(&mut created, &mut lost)?;
/// assert_eq!(created, vec![[ground, ball]]);
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Scene<T: Real> {
    /// How an update chooses between patching and rebuilding.
    strategy: UpdateStrategy,
    /// Every object ever inserted, by slot (a handle's slot); removed ones are free or
    /// retired.
    slots: Vec<Slot<T>>,
    /// Slots free for the next insert.
    free: Vec<u32>,
    /// Slots whose generations are used up (removed at generation `u32::MAX`): neither live
    /// nor free.
    retired: usize,
    /// How many live objects are dynamic (the measure the update strategy weighs changes
    /// against).
    dynamic_count: usize,
    /// Slots changed since the last update.
    dirty: Vec<u32>,
    /// Whether a static object was inserted, changed or removed since the last update.
    statics_changed: bool,
    /// The hierarchy of the static objects, rebuilt only when they change.
    static_broad: BroadPhase<T>,
    /// Static built index -> slot.
    static_slots: Vec<u32>,
    /// The generation of each static object when the static structure was built: a slot
    /// whose generation moved on holds another object (or none) since.
    static_generations: Vec<u32>,
    /// The hierarchy of the dynamic objects as the last rebuild placed them (patched in
    /// place by later updates where a box still fits its cell).
    dynamic_broad: BroadPhase<T>,
    /// The side list's own hierarchy, rebuilt by the update whenever the side list changed,
    /// for its pairs among itself.
    moved_broad: BroadPhase<T>,
    /// Whether `dynamic_broad` holds a build (false at first and after new settings: the
    /// next update then rebuilds everything).
    built: bool,
    /// Built index -> slot (`DEAD` once removed or moved out).
    built_slots: Vec<u32>,
    /// The slots of a structure being built, swapped in once the build succeeded.
    staged_slots: Vec<u32>,
    /// Built index -> where its box lies in `dynamic_broad`, for patches in place.
    locations: Vec<Location>,
    /// Whether `locations` matches the current build (made when first needed after one).
    located: bool,
    /// Built entries killed since the last rebuild (removed, or moved to the side list).
    dead: usize,
    /// The side list: slots of dynamic objects not in the built hierarchy.
    moved: Vec<u32>,
    /// Whether `moved_broad` holds the side list as it is (it is built by the update, before
    /// the update changes anything, so that a failed build leaves the scene as it was).
    side_built: bool,
    /// The pairs of this detection and of the one before, sorted, for `detect_changes`.
    current: Vec<[Handle; 2]>,
    previous: Vec<[Handle; 2]>,
    /// Scratch: the boxes and filters of a build, in built-index order.
    boxes: Vec<Aabb<T>>,
    filters: Vec<Filter>,
    /// Scratch: the pairs of a hierarchy, in its built indices.
    index_pairs: PairList<T>,
}

/// A built index whose object is gone.
const DEAD: u32 = u32::MAX;

impl<T: Real> Default for Scene<T> {
    fn default() -> Self {
        Self {
            strategy: UpdateStrategy::Auto,
            slots: Vec::new(),
            free: Vec::new(),
            retired: 0,
            dynamic_count: 0,
            dirty: Vec::new(),
            statics_changed: false,
            static_broad: BroadPhase::new(),
            static_slots: Vec::new(),
            static_generations: Vec::new(),
            dynamic_broad: BroadPhase::new(),
            moved_broad: BroadPhase::new(),
            built: false,
            built_slots: Vec::new(),
            staged_slots: Vec::new(),
            locations: Vec::new(),
            located: false,
            dead: 0,
            moved: Vec::new(),
            side_built: true,
            current: Vec::new(),
            previous: Vec::new(),
            boxes: Vec::new(),
            filters: Vec::new(),
            index_pairs: PairList::default(),
        }
    }
}

impl<T: Real> Scene<T> {
    /// An empty scene with the default hierarchy settings and [`UpdateStrategy::Auto`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the hierarchy settings; the next update rebuilds the scene with them. An
    /// invalid setting is an error naming it, and leaves the scene as it was.
    pub fn set_config(&mut self, config: BroadPhaseConfig) -> Result<(), Error> {
        config.check()?;
        for broad in [
            &mut self.static_broad,
            &mut self.dynamic_broad,
            &mut self.moved_broad,
        ] {
            broad.config = config;
        }
        self.built = false;
        self.statics_changed = true;
        Ok(())
    }

    /// The hierarchy settings.
    pub fn config(&self) -> &BroadPhaseConfig {
        self.dynamic_broad.config()
    }

    /// Chooses the kernel for cell keys and overlap masks (SIMD by default; the scalar
    /// reference gives identical results).
    pub fn set_kernel(&mut self, kernel: Kernel) {
        for broad in [
            &mut self.static_broad,
            &mut self.dynamic_broad,
            &mut self.moved_broad,
        ] {
            broad.set_kernel(kernel);
        }
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.dynamic_broad.kernel()
    }

    /// The update strategy.
    pub fn strategy(&self) -> UpdateStrategy {
        self.strategy
    }

    /// Changes the update strategy.
    pub fn set_strategy(&mut self, strategy: UpdateStrategy) {
        self.strategy = strategy;
    }

    /// How many objects the scene holds.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len() - self.retired
    }

    /// Tells whether the scene holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes held by the scene's buffers.
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * size_of::<Slot<T>>()
            + 4 * (self.free.capacity()
                + self.dirty.capacity()
                + self.static_slots.capacity()
                + self.static_generations.capacity()
                + self.built_slots.capacity()
                + self.staged_slots.capacity()
                + self.moved.capacity())
            + self.locations.capacity() * size_of::<Location>()
            + (self.current.capacity() + self.previous.capacity()) * size_of::<[Handle; 2]>()
            + self.boxes.capacity() * size_of::<Aabb<T>>()
            + self.filters.capacity() * size_of::<Filter>()
            + self.index_pairs.heap_bytes()
            + self.static_broad.heap_bytes()
            + self.dynamic_broad.heap_bytes()
            + self.moved_broad.heap_bytes()
    }

    fn slot(&self, handle: Handle) -> Result<&Slot<T>, Error> {
        match self.slots.get(handle.slot as usize) {
            Some(slot) if slot.generation == handle.generation && slot.place != Place::Free => {
                Ok(slot)
            }
            _ => Err(Error::StaleHandle {
                slot: handle.slot,
                generation: handle.generation,
            }),
        }
    }

    fn mark_dirty(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        if !s.dirty {
            s.dirty = true;
            self.dirty.push(slot);
        }
    }

    /// Adds an object; O(1). The box is checked like [`BroadPhase::build`] checks boxes (the
    /// error names the slot it would have taken).
    pub fn insert(
        &mut self,
        aabb: Aabb<T>,
        motion: Motion,
        filter: Filter,
    ) -> Result<Handle, Error> {
        let slot = self.free.last().copied().unwrap_or(self.slots.len() as u32);
        check_box(slot as usize, &aabb)?;
        if slot as usize == self.slots.len() {
            crate::columns::check_count(self.slots.len() + 1)?;
            self.slots.push(Slot {
                aabb,
                filter,
                generation: 0,
                place: Place::Free,
                dirty: false,
            });
        } else {
            self.free.pop();
        }
        let s = &mut self.slots[slot as usize];
        s.aabb = aabb;
        s.filter = filter;
        let generation = s.generation;
        match motion {
            Motion::Static => {
                s.place = Place::Static;
                self.statics_changed = true;
            }
            Motion::Dynamic => {
                s.place = Place::Pending;
                self.dynamic_count += 1;
                self.mark_dirty(slot);
            }
        }
        Ok(Handle { slot, generation })
    }

    /// Removes an object; O(1). Its handle becomes stale. A slot's generation is never
    /// reused: a slot removed at generation `u32::MAX` is retired (after 2^32 objects in one
    /// slot) and never holds another object.
    pub fn remove(&mut self, handle: Handle) -> Result<(), Error> {
        let place = self.slot(handle)?.place;
        match place {
            Place::Static => self.statics_changed = true,
            Place::Built(b) => {
                self.ensure_located();
                self.dynamic_broad.kill(self.locations[b as usize]);
                self.built_slots[b as usize] = DEAD;
                self.dead += 1;
                self.dynamic_count -= 1;
            }
            Place::Moved(k) => {
                self.take_from_side_list(k);
                self.side_built = false;
                self.dynamic_count -= 1;
            }
            Place::Pending => self.dynamic_count -= 1,
            Place::Free => unreachable!("checked by slot()"),
        }
        let s = &mut self.slots[handle.slot as usize];
        s.place = Place::Free;
        match s.generation.checked_add(1) {
            Some(generation) => {
                s.generation = generation;
                self.free.push(handle.slot);
            }
            // Its generations are used up: the slot is retired, never to be reused, so that
            // no handle of it can ever name another object.
            None => self.retired += 1,
        }
        Ok(())
    }

    /// Removes side-list entry `k` (swap-remove, fixing the entry moved into its place).
    fn take_from_side_list(&mut self, k: u32) {
        self.moved.swap_remove(k as usize);
        if let Some(&other) = self.moved.get(k as usize) {
            self.slots[other as usize].place = Place::Moved(k);
        }
    }

    /// The object's current box.
    pub fn aabb(&self, handle: Handle) -> Result<Aabb<T>, Error> {
        Ok(self.slot(handle)?.aabb)
    }

    /// Moves, rotates or resizes an object: its new box takes effect at the next update.
    pub fn set_aabb(&mut self, handle: Handle, aabb: Aabb<T>) -> Result<(), Error> {
        let place = self.slot(handle)?.place;
        check_box(handle.slot as usize, &aabb)?;
        self.slots[handle.slot as usize].aabb = aabb;
        if place == Place::Static {
            self.statics_changed = true;
        } else {
            self.mark_dirty(handle.slot);
        }
        Ok(())
    }

    fn ensure_located(&mut self) {
        if !self.located {
            self.dynamic_broad.locate_all(&mut self.locations);
            self.located = true;
        }
    }

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
        self.staged_slots.clear();
        self.boxes.clear();
        self.filters.clear();
        for (k, s) in self.slots.iter().enumerate() {
            if matches!(s.place, Place::Built(_) | Place::Moved(_) | Place::Pending) {
                self.staged_slots.push(k as u32);
                self.boxes.push(s.aabb);
                self.filters.push(s.filter);
            }
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

    fn handle(&self, slot: u32) -> Handle {
        Handle {
            slot,
            generation: self.slots[slot as usize].generation,
        }
    }

    fn ordered(&self, a: u32, b: u32) -> [Handle; 2] {
        let (a, b) = if a < b { (a, b) } else { (b, a) };
        [self.handle(a), self.handle(b)]
    }

    /// Updates (see [`Scene::update`]) and reports every overlapping pair of a dynamic object
    /// with a dynamic or static one, each once, the smaller slot first, into `out` (cleared
    /// first), in an order that does not depend on the thread count.
    ///
    /// Fails as [`Scene::update`] does, and then changes nothing (neither the scene nor
    /// `out`).
    pub fn detect(&mut self, out: &mut Vec<[Handle; 2]>) -> Result<UpdateReport, Error> {
        let report = self.update()?;
        out.clear();
        // Built against built.
        self.dynamic_broad.pairs(&mut self.index_pairs);
        out.extend(self.index_pairs.pairs().iter().map(|&[a, b]| {
            self.ordered(self.built_slots[a as usize], self.built_slots[b as usize])
        }));
        // The side list against itself (through its own small hierarchy)...
        if !self.moved.is_empty() {
            // Built by the update (before it changed anything).
            self.moved_broad.pairs(&mut self.index_pairs);
            out.extend(
                self.index_pairs
                    .pairs()
                    .iter()
                    .map(|&[a, b]| self.ordered(self.moved[a as usize], self.moved[b as usize])),
            );
        }
        // ...and against the built objects.
        let side: Vec<Vec<[Handle; 2]>> = self
            .moved
            .par_chunks(QUERY_CHUNK)
            .map(|slots| {
                let mut found = Vec::new();
                for &slot in slots {
                    let me = &self.slots[slot as usize];
                    self.dynamic_broad.for_each_overlap(&me.aabb, |b| {
                        let other = self.built_slots[b as usize];
                        if other != DEAD && me.filter.accepts(self.slots[other as usize].filter) {
                            found.push(self.ordered(slot, other));
                        }
                    });
                }
                found
            })
            .collect();
        for part in side {
            out.extend(part);
        }
        // Every dynamic object against the statics.
        if !self.static_slots.is_empty() {
            let dynamic: Vec<u32> = self
                .built_slots
                .iter()
                .copied()
                .filter(|&s| s != DEAD)
                .chain(self.moved.iter().copied())
                .collect();
            let with_statics: Vec<Vec<[Handle; 2]>> = dynamic
                .par_chunks(QUERY_CHUNK)
                .map(|slots| {
                    let mut found = Vec::new();
                    for &slot in slots {
                        let me = &self.slots[slot as usize];
                        self.static_broad.for_each_overlap(&me.aabb, |b| {
                            let other = self.static_slots[b as usize];
                            if me.filter.accepts(self.slots[other as usize].filter) {
                                found.push(self.ordered(slot, other));
                            }
                        });
                    }
                    found
                })
                .collect();
            for part in with_statics {
                out.extend(part);
            }
        }
        Ok(report)
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
    pub fn query_aabb(&self, query: &Aabb<T>, out: &mut Vec<Handle>) -> Result<(), Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    impl<T: Real> Scene<T> {
        /// Sets the generation of a slot, to reach the end of the generations without 2^32
        /// removals.
        fn set_generation(&mut self, slot: u32, generation: u32) {
            self.slots[slot as usize].generation = generation;
        }
    }

    /// A slot whose generation would wrap is retired rather than reused: a handle issued at
    /// generation 0 never names the object of a later generation 0, and the scene's size
    /// does not count the retired slot.
    #[test]
    fn a_slot_is_retired_before_its_generation_wraps() {
        let unit = Aabb::new([0.0f64; 3], [1.0; 3]);
        let mut scene = Scene::<f64>::new();
        let first = scene.insert(unit, Motion::Dynamic, Filter::ALL).unwrap();
        scene.remove(first).unwrap();
        scene.set_generation(first.slot(), u32::MAX - 1);
        let mut last = None;
        for generation in [u32::MAX - 1, u32::MAX] {
            let h = scene.insert(unit, Motion::Static, Filter::ALL).unwrap();
            assert_eq!((h.slot(), h.generation()), (first.slot(), generation));
            scene.update().unwrap();
            scene.remove(h).unwrap();
            last = Some(h);
        }
        assert!(scene.is_empty());
        let other = scene.insert(unit, Motion::Dynamic, Filter::ALL).unwrap();
        assert_ne!(other.slot(), first.slot(), "the retired slot was reused");
        assert_eq!(scene.len(), 1);
        for stale in [first, last.unwrap()] {
            assert!(matches!(scene.aabb(stale), Err(Error::StaleHandle { .. })));
            assert!(scene.remove(stale).is_err());
        }
        let mut found = Vec::new();
        scene.detect(&mut Vec::new()).unwrap();
        scene.query_aabb(&unit, &mut found).unwrap();
        assert_eq!(found, vec![other]);
    }
}
