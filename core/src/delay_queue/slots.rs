//! Where a queue keeps its values: a [`Slot`] each, in [`FixedSlots`] or `GrowableSlots`.
//! * A slot is occupied exactly while `value` is `Some`. Its `key` is then its key's index
//!   (growable), or always its generation (fixed: a key's index is its slot).
//! * A key's generation changes each time its value leaves: an old key never matches.
//! * Only `vacate` moves occupied slots, and has the levels relink each.
//! * `next`, `prev`, `place` are the levels' while occupied; a free fixed slot links its
//!   free list through `next`.

use core::fmt;

use super::key::Key;
use super::levels::{Levels, NIL, Slot};

pub(crate) mod sealed {
    use super::{Key, Levels, Slot};

    /// What the queue needs of its storage.
    pub trait Store<T> {
        /// Every slot, free ones included.
        fn slots(&self) -> &[Slot<T>];
        fn slots_mut(&mut self) -> &mut [Slot<T>];
        /// A free slot, its `key` set, and the value's key; `None` if full.
        fn occupy(&mut self) -> Option<(Key, u32)>;
        /// The slot of `key`'s value, unless the key is stale.
        fn find(&self, key: Key) -> Option<u32>;
        /// The key of the value in the occupied slot `index`.
        fn key_at(&self, index: u32) -> Key;
        /// Starts loading what `key_at` reads beyond a slot whose `key` is `key_index`.
        fn prefetch_key(&self, _key_index: u32) {}
        /// Frees the slot `index` (its value taken), staling its key; may then move values
        /// down to give memory back, relinking each in `levels`.
        fn vacate(&mut self, index: u32, levels: &mut Levels);
        fn len(&self) -> usize;
        fn capacity(&self) -> usize;
        /// Drops every value, staling every key.
        fn clear(&mut self);
    }
}

/// Where a [`DelayQueue`](crate::DelayQueue) keeps its values: [`FixedSlots`] or
/// `GrowableSlots` (with `alloc`). Sealed.
pub trait SlotStorage<T>: sealed::Store<T> {}

impl<T, S: sealed::Store<T>> SlotStorage<T> for S {}

/// Room for `N` values inline, with no allocation: an insert into a full queue returns
/// [`Full`](crate::Full) with the value. A value costs itself and 24 bytes; `N` must be
/// below `u32::MAX`. Example: [`DelayQueue`](crate::DelayQueue).
pub struct FixedSlots<T, const N: usize> {
    slots: [Slot<T>; N],
    /// Freed slots, linked through `next`; while none, slots `0..len` are occupied.
    free: u32,
    len: u32,
}

impl<T, const N: usize> FixedSlots<T, N> {
    /// Empty slots for `N` values.
    ///
    /// # Panics
    ///
    /// If `N` is `u32::MAX` or more (at compile time where it is a constant).
    pub const fn new() -> Self {
        assert!(N < NIL as usize, "FixedSlots: N must be below u32::MAX");
        Self {
            slots: [const { Slot::VACANT }; N],
            free: NIL,
            len: 0,
        }
    }
}

impl<T, const N: usize> Default for FixedSlots<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const N: usize> fmt::Debug for FixedSlots<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FixedSlots")
            .field("len", &self.len)
            .field("capacity", &N)
            .finish()
    }
}

impl<T, const N: usize> sealed::Store<T> for FixedSlots<T, N> {
    fn slots(&self) -> &[Slot<T>] {
        &self.slots
    }

    fn slots_mut(&mut self) -> &mut [Slot<T>] {
        &mut self.slots
    }

    fn occupy(&mut self) -> Option<(Key, u32)> {
        let index = match self.free {
            NIL if self.len as usize == N => return None,
            NIL => self.len,
            free => {
                self.free = self.slots[free as usize].next;
                free
            }
        };
        self.len += 1;
        Some((self.key_at(index), index))
    }

    fn find(&self, key: Key) -> Option<u32> {
        let slot = self.slots.get(key.index as usize)?;
        (slot.key == key.generation && slot.value.is_some()).then_some(key.index)
    }

    fn key_at(&self, index: u32) -> Key {
        let generation = self.slots[index as usize].key;
        Key { index, generation }
    }

    fn vacate(&mut self, index: u32, _: &mut Levels) {
        let slot = &mut self.slots[index as usize];
        debug_assert!(slot.value.is_none(), "vacate: the value is still there");
        (slot.next, slot.key) = (self.free, slot.key.wrapping_add(1));
        self.free = index;
        self.len -= 1;
    }

    fn len(&self) -> usize {
        self.len as usize
    }

    fn capacity(&self) -> usize {
        N
    }

    fn clear(&mut self) {
        for slot in &mut self.slots {
            if slot.value.take().is_some() {
                slot.key = slot.key.wrapping_add(1);
            }
        }
        (self.free, self.len) = (NIL, 0);
    }
}

/// Starts loading `value`'s cache lines: a hint only (nothing on other targets, Miri, loom).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(punctual_loom)))]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (value as *const T).cast::<i8>();
        let last = first.wrapping_add(size_of::<T>().saturating_sub(1));
        // SAFETY: a prefetch never faults and has no visible effect, whatever the address;
        // SSE is baseline on x86-64.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            _mm_prefetch::<_MM_HINT_T0>(last);
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(punctual_loom))))]
    let _ = value;
}
