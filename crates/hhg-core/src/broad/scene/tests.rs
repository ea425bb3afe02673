//! Unit tests of the scene that reach into its private state: retired slots.

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
