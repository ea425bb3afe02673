//! The handle registry: a handle given to C is not an address but a value that encodes a
//! magic tag, a slot of a process-wide table and the slot's generation, so that a freed,
//! doubly freed or made-up handle is looked up and refused instead of dereferenced.
//!
//! On 64-bit targets a handle is `magic << 48 | generation << 24 | slot`: a 16-bit magic tag
//! (`0x4847`, "HG"), 2^24 slots (live objects at once) and 2^24 generations per slot. The
//! magic tag puts the value outside the canonical addresses of x86-64 and AArch64, so a
//! pointer to any other object never passes for a handle, and a handle dereferenced by
//! mistake faults instead of reading memory. On 32-bit targets the layout is narrower: an
//! 8-bit tag (`0xE7`), 2^10 slots and 2^14 generations per slot, a weaker check. Other
//! pointer widths do not compile.
//!
//! A slot whose generation would wrap is retired, never reused (the rule of the `Scene`
//! handles of hhg-core), so a handle is never valid again once its object is freed.

use std::ptr::NonNull;

use crate::status::{Failure, HhgStatus};

#[cfg(target_pointer_width = "64")]
mod layout {
    /// The bits of the magic tag, at the top of a handle.
    pub(super) const MAGIC_BITS: u32 = 16;
    /// The bits of the slot, at the bottom of a handle.
    pub(super) const SLOT_BITS: u32 = 24;
    /// The magic tag: "HG" in ASCII, neither 0x0000 nor 0xFFFF, so never a canonical address.
    pub(super) const MAGIC: usize = 0x4847;
}

#[cfg(target_pointer_width = "32")]
mod layout {
    /// The bits of the magic tag, at the top of a handle.
    pub(super) const MAGIC_BITS: u32 = 8;
    /// The bits of the slot, at the bottom of a handle.
    pub(super) const SLOT_BITS: u32 = 10;
    /// The magic tag: above the user addresses of the usual 32-bit address space splits.
    pub(super) const MAGIC: usize = 0xE7;
}

#[cfg(not(any(target_pointer_width = "32", target_pointer_width = "64")))]
compile_error!(
    "hhg-capi encodes its handles in 32-bit or 64-bit pointers; this target's pointer width \
     is not supported"
);

use layout::{MAGIC, MAGIC_BITS, SLOT_BITS};

/// The bits of the generation, between the slot and the magic tag.
const GENERATION_BITS: u32 = usize::BITS - MAGIC_BITS - SLOT_BITS;

/// The number of slots a registry can have.
const SLOTS: usize = 1 << SLOT_BITS;

/// The last generation of a slot: a slot freed at it is retired.
const LAST_GENERATION: u32 = (1 << GENERATION_BITS) - 1;

/// The handle of `slot` at `generation`.
fn encode(slot: usize, generation: u32) -> usize {
    debug_assert!(slot < SLOTS && generation <= LAST_GENERATION);
    MAGIC << (usize::BITS - MAGIC_BITS) | (generation as usize) << SLOT_BITS | slot
}

/// The slot and generation a handle encodes, or `None` when it lacks the magic tag.
fn decode(handle: usize) -> Option<(usize, u32)> {
    if handle >> (usize::BITS - MAGIC_BITS) != MAGIC {
        return None;
    }
    let generation = (handle >> SLOT_BITS) & LAST_GENERATION as usize;
    Some((handle & (SLOTS - 1), generation as u32))
}

/// One slot of a registry: the generation of its current (or last) object and that object,
/// owned through the pointer `Box::into_raw` gave.
struct Slot<T> {
    generation: u32,
    entry: Option<NonNull<T>>,
}

/// A table of boxed objects named by checked handles.
///
/// The registry owns its objects: it boxes them on insertion and unboxes them on removal,
/// and lends out only raw pointers (see [`Registry::get`]), so that a pointer lent to one
/// call stays valid while the table grows or other slots change.
pub(crate) struct Registry<T> {
    slots: Vec<Slot<T>>,
    /// Freed slots that have generations left, reused last freed first.
    free: Vec<usize>,
    /// The number of slots the registry may have (fewer than [`SLOTS`] only in tests).
    limit: usize,
}

// SAFETY: the registry owns the objects behind its pointers (each came from `Box::into_raw`
// and goes back through `Box::from_raw` once), like a `Vec<Option<Box<T>>>`, so moving the
// registry to another thread moves those objects, which `T: Send` allows.
unsafe impl<T: Send> Send for Registry<T> {}

impl<T> Registry<T> {
    /// An empty registry.
    pub(crate) const fn new() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            limit: SLOTS,
        }
    }

    /// Takes ownership of `object` and returns its handle, or fails when every slot is taken
    /// or retired.
    pub(crate) fn insert(&mut self, object: Box<T>) -> Result<usize, Failure> {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None if self.slots.len() < self.limit => {
                self.slots.push(Slot {
                    generation: 0,
                    entry: None,
                });
                self.slots.len() - 1
            }
            None => {
                return Err(Failure::new(
                    HhgStatus::HandlesExhausted,
                    format!(
                        "no handle is left: {} objects are live, or their slots' {} \
                         generations are used up",
                        self.limit,
                        u64::from(LAST_GENERATION) + 1
                    ),
                ));
            }
        };
        let place = &mut self.slots[slot];
        debug_assert!(place.entry.is_none());
        place.entry = Some(NonNull::from(Box::leak(object)));
        Ok(encode(slot, place.generation))
    }

    /// Checks a handle: the slot, or why the handle names no live object.
    fn check(&self, handle: usize, name: &str) -> Result<usize, Failure> {
        let invalid = |what: String| {
            Failure::new(
                HhgStatus::InvalidHandle,
                format!("argument `{name}` ({handle:#x}) {what}"),
            )
        };
        let Some((slot, generation)) = decode(handle) else {
            return Err(invalid("is not an hhg handle".to_owned()));
        };
        match self.slots.get(slot) {
            Some(place) if place.generation == generation && place.entry.is_some() => Ok(slot),
            Some(place) if generation <= place.generation => Err(invalid(format!(
                "was already freed (slot {slot}, generation {generation})"
            ))),
            _ => Err(invalid(format!(
                "is not an hhg handle (slot {slot}, generation {generation} was never issued)"
            ))),
        }
    }

    /// The object a handle names, as a pointer that stays valid until the handle is removed.
    pub(crate) fn get(&self, handle: usize, name: &str) -> Result<NonNull<T>, Failure> {
        let slot = self.check(handle, name)?;
        self.slots[slot]
            .entry
            .ok_or_else(|| Failure::new(HhgStatus::InternalError, "a checked slot has no object"))
    }

    /// Takes the object a handle names out of the registry: the handle, and every copy of
    /// it, is refused from now on.
    pub(crate) fn remove(&mut self, handle: usize, name: &str) -> Result<Box<T>, Failure> {
        let slot = self.check(handle, name)?;
        let place = &mut self.slots[slot];
        let entry = place.entry.take().ok_or_else(|| {
            Failure::new(HhgStatus::InternalError, "a checked slot has no object")
        })?;
        if place.generation < LAST_GENERATION {
            place.generation += 1;
            self.free.push(slot);
        }
        // A slot freed at its last generation is retired: it stays in the table, empty, and
        // its last handle reads as freed.
        debug_assert!(entry.as_ptr().is_aligned());
        // SAFETY: `entry` came from `Box::leak` in `insert` and has just been taken out of
        // its slot, so it is reclaimed exactly once; the registry never lent it as a
        // reference, and no call still uses it by the contract of the caller's entry point.
        Ok(unsafe { Box::from_raw(entry.as_ptr()) })
    }
}

impl<T> Drop for Registry<T> {
    fn drop(&mut self) {
        for place in &mut self.slots {
            if let Some(entry) = place.entry.take() {
                debug_assert!(entry.as_ptr().is_aligned());
                // SAFETY: `entry` came from `Box::leak` in `insert` and is taken out of its
                // slot here, so it is reclaimed exactly once; a dropped registry lends
                // nothing any more.
                drop(unsafe { Box::from_raw(entry.as_ptr()) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handle's status and message.
    fn refusal<V: std::fmt::Debug>(result: Result<V, Failure>) -> (HhgStatus, String) {
        let failure = result.unwrap_err();
        (failure.status, failure.message)
    }

    #[test]
    fn handles_round_trip_and_carry_the_magic_tag() {
        for (slot, generation) in [(0, 0), (1, 2), (SLOTS - 1, LAST_GENERATION)] {
            let handle = encode(slot, generation);
            assert_ne!(handle, 0);
            assert_eq!(decode(handle), Some((slot, generation)));
        }
        assert_eq!(decode(0x1234), None);
        let local = 7u64;
        assert_eq!(decode(std::ptr::addr_of!(local).addr()), None);
    }

    #[test]
    fn freed_and_made_up_handles_are_refused() {
        let mut registry = Registry::new();
        let handle = registry.insert(Box::new(5u32)).unwrap();
        // SAFETY: the pointer came from a live entry that nothing else uses.
        assert_eq!(unsafe { *registry.get(handle, "h").unwrap().as_ptr() }, 5);
        assert_eq!(*registry.remove(handle, "h").unwrap(), 5);
        let (status, message) = refusal(registry.get(handle, "h"));
        assert_eq!(status, HhgStatus::InvalidHandle);
        assert_eq!(
            message,
            format!("argument `h` ({handle:#x}) was already freed (slot 0, generation 0)")
        );
        let (status, message) = refusal(registry.remove(handle, "h"));
        assert_eq!(status, HhgStatus::InvalidHandle);
        assert!(message.ends_with("was already freed (slot 0, generation 0)"));
        let (status, message) = refusal(registry.get(0x1234, "h"));
        assert_eq!(status, HhgStatus::InvalidHandle);
        assert_eq!(message, "argument `h` (0x1234) is not an hhg handle");
        let (_, message) = refusal(registry.get(encode(3, 0), "h"));
        assert!(message.ends_with("is not an hhg handle (slot 3, generation 0 was never issued)"));
        let (_, message) = refusal(registry.get(encode(0, 9), "h"));
        assert!(message.ends_with("is not an hhg handle (slot 0, generation 9 was never issued)"));
    }

    #[test]
    fn a_reused_slot_gets_a_new_generation() {
        let mut registry = Registry::new();
        let first = registry.insert(Box::new(1u32)).unwrap();
        registry.remove(first, "h").unwrap();
        let second = registry.insert(Box::new(2u32)).unwrap();
        assert_eq!(decode(first), Some((0, 0)));
        assert_eq!(decode(second), Some((0, 1)));
        assert_eq!(
            refusal(registry.get(first, "h")).0,
            HhgStatus::InvalidHandle
        );
        assert_eq!(*registry.remove(second, "h").unwrap(), 2);
    }

    #[test]
    fn a_slot_at_its_last_generation_is_retired() {
        let mut registry = Registry::new();
        let first = registry.insert(Box::new(1u32)).unwrap();
        registry.remove(first, "h").unwrap();
        registry.slots[0].generation = LAST_GENERATION;
        let last = registry.insert(Box::new(2u32)).unwrap();
        assert_eq!(decode(last), Some((0, LAST_GENERATION)));
        registry.remove(last, "h").unwrap();
        let (_, message) = refusal(registry.get(last, "h"));
        assert!(message.contains("was already freed"), "{message}");
        let next = registry.insert(Box::new(3u32)).unwrap();
        assert_eq!(decode(next), Some((1, 0)), "a retired slot is never reused");
        assert!(registry.free.is_empty());
        // The remaining entry is freed with the registry.
    }

    #[test]
    fn a_full_registry_refuses_new_objects() {
        let mut registry = Registry::new();
        registry.limit = 2;
        let handles = [1u32, 2].map(|value| registry.insert(Box::new(value)).unwrap());
        let (status, message) = refusal(registry.insert(Box::new(3u32)));
        assert_eq!(status, HhgStatus::HandlesExhausted);
        assert!(
            message.starts_with("no handle is left: 2 objects"),
            "{message}"
        );
        registry.remove(handles[0], "h").unwrap();
        assert!(registry.insert(Box::new(4u32)).is_ok());
    }
}
