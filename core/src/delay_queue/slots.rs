//! Where a delay queue keeps its values: one [`Slot`] per value, in [`FixedSlots`] (no
//! allocation) or `GrowableSlots` (with `alloc`).
//! * A slot is occupied exactly while `value` is `Some`; `key` is then the index its key
//!   names (in a fixed storage, the slot's own).
//! * A key's generation changes each time its value leaves (`vacate`): an old key never
//!   matches again.
//! * Only `compact` moves an occupied slot, and it reports each move, so that the levels
//!   relink it.
//! * `next`, `prev` and `place` belong to the queue's levels while the slot is occupied;
//!   a free slot of a fixed storage keeps its free list's link in `next`.

use core::fmt;

use super::key::Key;

/// No slot: the end of a list.
pub(crate) const NIL: u32 = u32::MAX;

/// One value of a delay queue with its deadline and its place in the levels.
pub struct Slot<T> {
    /// The deadline, nanoseconds of the wheel's clock.
    pub(crate) deadline: u64,
    pub(crate) next: u32,
    pub(crate) prev: u32,
    /// The index in the key of the value held.
    pub(crate) key: u32,
    /// `level · 64 + slot` in the levels, or `levels::DUE`.
    pub(crate) place: u16,
    pub(crate) value: Option<T>,
}

impl<T> Slot<T> {
    /// A free slot.
    pub(crate) const VACANT: Self = Self {
        deadline: 0,
        next: NIL,
        prev: NIL,
        key: NIL,
        place: 0,
        value: None,
    };
}

impl<T> fmt::Debug for Slot<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("deadline", &self.deadline)
            .field("key", &self.key)
            .field("occupied", &self.value.is_some())
            .finish_non_exhaustive()
    }
}

pub(crate) mod sealed {
    use super::{Key, Slot};

    /// What the queue needs of its storage. Not for use outside the crate.
    pub trait Store<T> {
        /// The slots, by index; free ones included.
        fn slots(&self) -> &[Slot<T>];
        /// The slots, mutably.
        fn slots_mut(&mut self) -> &mut [Slot<T>];
        /// A free slot, now reserved for a value (its `key` set), and the value's key;
        /// `None` if full.
        fn occupy(&mut self) -> Option<(Key, u32)>;
        /// The slot of `key`'s value, if the key is not stale.
        fn find(&self, key: Key) -> Option<u32>;
        /// The key of the value in the occupied slot `index`.
        fn key_at(&self, index: u32) -> Key;
        /// Starts loading what [`key_at`](Store::key_at) reads for a slot whose `key` is
        /// `key_index`, if anything beyond the slot.
        fn prefetch_key(&self, key_index: u32);
        /// Marks the slot at `index` free, and its key stale; its value has been taken.
        /// `true` if the storage would give memory back by [`compact`](Store::compact).
        fn vacate(&mut self, index: u32) -> bool;
        /// Moves values to lower slots and gives memory back, calling `moved(slots, from,
        /// to)` after each move.
        fn compact(&mut self, moved: impl FnMut(&mut [Slot<T>], u32, u32));
        /// Occupied slots.
        fn len(&self) -> usize;
        /// Slots held now.
        fn capacity(&self) -> usize;
        /// Drops every value; every key so far becomes stale.
        fn clear(&mut self);
    }
}

/// Where a [`DelayQueue`](crate::DelayQueue) keeps its values: [`FixedSlots`] or
/// [`GrowableSlots`]. Sealed.
///
#[cfg_attr(feature = "alloc", doc = "\n[`GrowableSlots`]: crate::GrowableSlots")]
#[cfg_attr(
    not(feature = "alloc"),
    doc = "\n[`GrowableSlots`]: https://docs.rs/punctual-core/latest/punctual_core/struct.GrowableSlots.html"
)]
pub trait SlotStorage<T>: sealed::Store<T> {}

/// Room for `N` values inline, with no allocation: for `no_std` firmware. An insert into
/// a full queue returns [`Full`](crate::Full) with the value.
///
/// Each slot holds the value and 28 bytes (the deadline, two links, its key's index and
/// generation, its place); `N` must be below `u32::MAX`.
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{DelayQueue, Fixed, FixedSlots, ManualClock, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let mut queue = DelayQueue::new(&wheel, FixedSlots::<u8, 2>::new());
/// queue.try_insert(1, Duration::from_millis(5)).unwrap();
/// queue.try_insert(2, Duration::from_millis(5)).unwrap();
/// let full = queue.try_insert(3, Duration::from_millis(5)).unwrap_err();
/// assert_eq!(full.into_inner(), 3);
/// ```
pub struct FixedSlots<T, const N: usize> {
    slots: [Slot<T>; N],
    /// Each slot's generation: its key's.
    generations: [u32; N],
    /// Slots `fresh..N` were never used.
    fresh: u32,
    /// Freed slots, linked through `next`.
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
            generations: [0; N],
            fresh: 0,
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

impl<T, const N: usize> SlotStorage<T> for FixedSlots<T, N> {}

impl<T, const N: usize> sealed::Store<T> for FixedSlots<T, N> {
    fn slots(&self) -> &[Slot<T>] {
        &self.slots
    }

    fn slots_mut(&mut self) -> &mut [Slot<T>] {
        &mut self.slots
    }

    fn occupy(&mut self) -> Option<(Key, u32)> {
        let index = if self.free != NIL {
            let index = self.free;
            self.free = self.slots[index as usize].next;
            index
        } else if (self.fresh as usize) < N {
            self.fresh += 1;
            self.fresh - 1
        } else {
            return None;
        };
        self.len += 1;
        self.slots[index as usize].key = index;
        Some((self.key_at(index), index))
    }

    fn find(&self, key: Key) -> Option<u32> {
        let index = key.index as usize;
        let live = index < N
            && self.generations[index] == key.generation
            && self.slots[index].value.is_some();
        live.then_some(key.index)
    }

    fn key_at(&self, index: u32) -> Key {
        Key {
            index,
            generation: self.generations[index as usize],
        }
    }

    fn prefetch_key(&self, _: u32) {}

    fn vacate(&mut self, index: u32) -> bool {
        let slot = &mut self.slots[index as usize];
        debug_assert!(slot.value.is_none(), "vacate: the value is still there");
        slot.next = self.free;
        self.free = index;
        let generation = &mut self.generations[index as usize];
        *generation = generation.wrapping_add(1);
        self.len -= 1;
        false
    }

    fn compact(&mut self, _: impl FnMut(&mut [Slot<T>], u32, u32)) {}

    fn len(&self) -> usize {
        self.len as usize
    }

    fn capacity(&self) -> usize {
        N
    }

    fn clear(&mut self) {
        for index in 0..self.fresh {
            let slot = &mut self.slots[index as usize];
            if slot.value.take().is_some() {
                let generation = &mut self.generations[index as usize];
                *generation = generation.wrapping_add(1);
                slot.next = self.free;
                self.free = index;
            }
        }
        self.len = 0;
    }
}
