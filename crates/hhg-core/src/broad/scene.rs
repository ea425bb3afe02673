//! Persistent scenes for physics engines: objects inserted and removed in O(1) behind stable
//! handles, static objects built once, an update step that patches the hierarchy in place
//! or rebuilds it (chosen per step), and the pairs created and lost between steps.

mod detect;
mod update;

use crate::error::Error;
use crate::geometry::Kernel;
use crate::pairs::PairList;
use crate::real::Real;

use super::build::check_box;
use super::cross::CrossTask;
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
struct Slot<T, const D: usize> {
    aabb: Aabb<T, D>,
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
pub struct Scene<T: Real, const D: usize = 3> {
    /// How an update chooses between patching and rebuilding.
    strategy: UpdateStrategy,
    /// Every object ever inserted, by slot (a handle's slot); removed ones are free or
    /// retired.
    slots: Vec<Slot<T, D>>,
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
    static_broad: BroadPhase<T, D>,
    /// Static built index -> slot.
    static_slots: Vec<u32>,
    /// The generation of each static object when the static structure was built: a slot
    /// whose generation moved on holds another object (or none) since.
    static_generations: Vec<u32>,
    /// The hierarchy of the dynamic objects as the last rebuild placed them (patched in
    /// place by later updates where a box still fits its cell).
    dynamic_broad: BroadPhase<T, D>,
    /// The side list's own hierarchy, rebuilt by the update whenever the side list changed,
    /// for its pairs among itself.
    moved_broad: BroadPhase<T, D>,
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
    boxes: Vec<Aabb<T, D>>,
    filters: Vec<Filter>,
    /// Scratch: the pairs of a hierarchy, in its built indices.
    index_pairs: PairList<T>,
    /// Scratch of a detection: the pairs found per task between two hierarchies, and the
    /// tasks.
    query_buffers: Vec<Vec<[Handle; 2]>>,
    cross_tasks: Vec<CrossTask>,
}

/// A built index whose object is gone.
const DEAD: u32 = u32::MAX;

impl<T: Real, const D: usize> Default for Scene<T, D> {
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
            query_buffers: Vec::new(),
            cross_tasks: Vec::new(),
        }
    }
}

impl<T: Real, const D: usize> Scene<T, D> {
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
        self.slots.capacity() * size_of::<Slot<T, D>>()
            + 4 * (self.free.capacity()
                + self.dirty.capacity()
                + self.static_slots.capacity()
                + self.static_generations.capacity()
                + self.built_slots.capacity()
                + self.staged_slots.capacity()
                + self.moved.capacity())
            + self.locations.capacity() * size_of::<Location>()
            + (self.current.capacity() + self.previous.capacity()) * size_of::<[Handle; 2]>()
            + self.boxes.capacity() * size_of::<Aabb<T, D>>()
            + self.filters.capacity() * size_of::<Filter>()
            + self.index_pairs.heap_bytes()
            + self
                .query_buffers
                .iter()
                .map(|found| found.capacity() * size_of::<[Handle; 2]>())
                .sum::<usize>()
            + self.query_buffers.capacity() * size_of::<Vec<[Handle; 2]>>()
            + self.cross_tasks.capacity() * size_of::<CrossTask>()
            + self.static_broad.heap_bytes()
            + self.dynamic_broad.heap_bytes()
            + self.moved_broad.heap_bytes()
    }

    fn slot(&self, handle: Handle) -> Result<&Slot<T, D>, Error> {
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
        aabb: Aabb<T, D>,
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
    pub fn aabb(&self, handle: Handle) -> Result<Aabb<T, D>, Error> {
        Ok(self.slot(handle)?.aabb)
    }

    /// Moves, rotates or resizes an object: its new box takes effect at the next update.
    pub fn set_aabb(&mut self, handle: Handle, aabb: Aabb<T, D>) -> Result<(), Error> {
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
}

#[cfg(test)]
mod tests;
