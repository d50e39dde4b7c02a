//! A generational slot table: tenants (the HTTP servers, the runtime-server acceptors) keep
//! their entries here, addressed by a slot index inside mio tokens and by a [`SlotKey`]
//! (slot + generation) from handle calls, so a call for a closed entry never reaches the
//! entry that reused its slot.

/// One entry of a [`Slots`] table: its slot and the generation it was filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotKey {
    /// The slot index (part of the entry's tokens).
    pub slot: usize,
    generation: u64,
}

/// Entries by slot; freed slots are reused with a new generation.
#[derive(Debug)]
pub struct Slots<T> {
    entries: Vec<Option<T>>,
    generations: Vec<u64>,
    free: Vec<usize>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            entries: Vec::new(),
            generations: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slots<T> {
    /// A vacant slot for [`Slots::fill`]; hand it back with [`Slots::unreserve`] when the
    /// entry cannot be built (e.g. registering its listener failed).
    pub fn reserve(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.entries.push(None);
            self.generations.push(0);
            self.entries.len() - 1
        })
    }

    /// Returns a reserved slot that was not filled.
    pub fn unreserve(&mut self, slot: usize) {
        self.free.push(slot);
    }

    /// Puts `value` in a reserved slot under a new generation.
    pub fn fill(&mut self, slot: usize, value: T) -> SlotKey {
        self.generations[slot] += 1;
        self.entries[slot] = Some(value);
        SlotKey {
            slot,
            generation: self.generations[slot],
        }
    }

    /// Whether `key`'s entry is still in its slot.
    pub fn live(&self, key: SlotKey) -> bool {
        self.get(key.slot).is_some() && self.generations[key.slot] == key.generation
    }

    pub fn get(&self, slot: usize) -> Option<&T> {
        self.entries.get(slot).and_then(Option::as_ref)
    }

    pub fn get_mut(&mut self, slot: usize) -> Option<&mut T> {
        self.entries.get_mut(slot).and_then(Option::as_mut)
    }

    /// Removes the entry of `slot` and frees the slot.
    pub fn take(&mut self, slot: usize) -> Option<T> {
        let value = self.entries.get_mut(slot).and_then(Option::take)?;
        self.free.push(slot);
        Some(value)
    }

    /// One past the highest slot ever used (for walking every slot by index).
    pub fn bound(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_slot_does_not_answer_to_the_old_key() {
        let mut slots = Slots::default();
        let slot = slots.reserve();
        let old = slots.fill(slot, "a");
        assert!(slots.live(old));
        assert_eq!(slots.take(old.slot), Some("a"));
        assert!(!slots.live(old));
        let again = slots.reserve();
        assert_eq!(again, slot);
        let new = slots.fill(again, "b");
        assert!(slots.live(new) && !slots.live(old));
        assert_eq!(slots.get(again), Some(&"b"));
    }

    #[test]
    fn an_unreserved_slot_is_reused() {
        let mut slots: Slots<u8> = Slots::default();
        let slot = slots.reserve();
        slots.unreserve(slot);
        assert_eq!(slots.reserve(), slot);
        assert_eq!(slots.bound(), 1);
        assert!(slots.get(slot).is_none());
    }
}
