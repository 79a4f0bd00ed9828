//! [`GrowableSlots`]: values in a `Vec`, memory given back as the queue shrinks.
//! * Keys name handles, and handles name slots: a value's slot may move, its key never.
//! * Both pools end at their highest index in use; inserts take the lowest free ones.
//! * Under a quarter used, a removal moves the values above the half down and halves the
//!   capacity, down to the floor: amortised O(1). Handles only shrink from the end.
//! * A new handle's generation is past every generation its index had before.

extern crate alloc;

use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use super::DelayQueue;
use super::key::Key;
use super::levels::{Levels, NIL, Slot};
use super::slots::prefetch;
use super::slots::sealed::{self, Store as _};
use crate::clock::ClockInstant;
use crate::future::timer::WheelRef;

/// Capacity never shrinks by itself below this many slots, unless asked for less.
const FLOOR: usize = 16;

/// Where a key's value is: its slot (`NIL` while free), and the key's generation.
#[derive(Debug, Clone, Copy)]
struct Handle {
    slot: u32,
    generation: u32,
}

/// Values that grow on demand and give memory back as the queue shrinks: a value costs
/// itself and 32 bytes; under a quarter used, the capacity halves, down to 16 slots or
/// [`with_capacity`](GrowableSlots::with_capacity)'s ([`DelayQueue::compact`] goes lower).
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{DelayQueue, Fixed, GrowableSlots, ManualClock, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let mut queue = DelayQueue::new(&wheel, GrowableSlots::new());
/// let keys: Vec<_> = (0..10_000).map(|i| queue.insert(i, Duration::from_secs(1))).collect();
/// keys[..9_999].iter().for_each(|key| assert!(queue.remove(key).is_some()));
/// assert_eq!(queue.capacity(), 16); // given back down to the floor, with no call to make
/// assert_eq!(queue.get(keys[9_999]), Some(&9_999)); // the value moved, its key holds
/// queue.compact();
/// assert_eq!(queue.capacity(), 1);
/// ```
pub struct GrowableSlots<T> {
    slots: Pool<Slot<T>>,
    handles: Pool<Handle>,
    /// The generation of the next handle pushed.
    next_generation: u32,
    /// The slots' capacity never shrinks below this by itself.
    floor: usize,
}

impl<T> GrowableSlots<T> {
    /// No slots yet; the first insert allocates.
    pub const fn new() -> Self {
        Self {
            slots: Pool::new(),
            handles: Pool::new(),
            next_generation: 0,
            floor: FLOOR,
        }
    }

    /// Room for `capacity` values; the queue never shrinks below it by itself.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut slots = Self::new();
        slots.slots.items.reserve_exact(capacity);
        slots.handles.items.reserve_exact(capacity);
        slots.floor = capacity;
        slots
    }

    /// Moves the values above `capacity` (which holds them all) into the free slots below
    /// it, relinking each, and gives back the rest.
    fn compact_to(&mut self, capacity: usize, levels: &mut Levels) {
        debug_assert!(capacity >= self.len());
        for from in (capacity..self.slots.items.len()).rev() {
            if self.slots.items[from].value.is_none() {
                continue;
            }
            let to = self.slots.take(|| unreachable!("a free slot below"));
            debug_assert!(to < capacity);
            let slots = &mut self.slots.items;
            slots.swap(from, to);
            self.handles.items[slots[to].key as usize].slot = to as u32;
            self.slots.release(from);
            levels.relocate(&mut self.slots.items, from as u32, to as u32);
        }
        self.slots.trim(self.floor);
        self.slots.shrink_to(capacity);
        self.handles.trim(self.floor);
    }
}

/// `capacity`, halved while under a quarter of it is used and `used` and `floor` fit.
fn halved(mut capacity: usize, used: usize, floor: usize) -> usize {
    while capacity / 2 >= used.max(floor) && used < capacity / 4 {
        capacity /= 2;
    }
    capacity
}

impl<T> Default for GrowableSlots<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for GrowableSlots<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrowableSlots")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("handles", &self.handles.items.len())
            .finish()
    }
}

impl<T> sealed::Store<T> for GrowableSlots<T> {
    fn slots(&self) -> &[Slot<T>] {
        &self.slots.items
    }

    fn slots_mut(&mut self) -> &mut [Slot<T>] {
        &mut self.slots.items
    }

    fn occupy(&mut self) -> Option<(Key, u32)> {
        if self.handles.free == 0 && self.handles.items.len() >= NIL as usize {
            return None;
        }
        let generation = self.next_generation;
        let handle = self.handles.take(|| Handle {
            slot: NIL,
            generation,
        });
        let slot = self.slots.take(|| Slot::VACANT);
        self.handles.items[handle].slot = slot as u32;
        self.slots.items[slot].key = handle as u32;
        Some((self.key_at(slot as u32), slot as u32))
    }

    fn find(&self, key: Key) -> Option<u32> {
        let handle = self.handles.items.get(key.index as usize)?;
        (handle.generation == key.generation && handle.slot != NIL).then_some(handle.slot)
    }

    fn key_at(&self, index: u32) -> Key {
        let index = self.slots.items[index as usize].key;
        let generation = self.handles.items[index as usize].generation;
        Key { index, generation }
    }

    fn prefetch_key(&self, key_index: u32) {
        if let Some(handle) = self.handles.items.get(key_index as usize) {
            prefetch(handle);
        }
    }

    fn vacate(&mut self, index: u32, levels: &mut Levels) {
        let slot = &mut self.slots.items[index as usize];
        debug_assert!(slot.value.is_none(), "vacate: the value is still there");
        let handle = core::mem::replace(&mut slot.key, NIL) as usize;
        let entry = &mut self.handles.items[handle];
        (entry.slot, entry.generation) = (NIL, entry.generation.wrapping_add(1));
        self.next_generation = self.next_generation.max(entry.generation);
        self.handles.release(handle);
        self.slots.release(index as usize);
        self.handles.trim(self.floor);
        self.slots.trim(self.floor);
        let capacity = halved(self.capacity(), self.len(), self.floor);
        if capacity < self.capacity() {
            self.compact_to(capacity, levels);
        }
    }

    fn len(&self) -> usize {
        self.slots.items.len() - self.slots.free
    }

    fn capacity(&self) -> usize {
        self.slots.items.capacity()
    }

    fn clear(&mut self) {
        for handle in &self.handles.items {
            self.next_generation = self.next_generation.max(handle.generation.wrapping_add(1));
        }
        self.slots.clear();
        self.handles.clear();
        self.handles.trim(self.floor);
        self.slots.items.shrink_to(self.floor);
    }
}

impl<T, W: WheelRef> DelayQueue<'_, T, GrowableSlots<T>, W> {
    /// Inserts `value`, to expire `timeout` from now. The slots grow as needed.
    ///
    /// # Panics
    ///
    /// If the queue already holds `u32::MAX - 1` values.
    pub fn insert(&mut self, value: T, timeout: Duration) -> Key {
        self.try_insert(value, timeout)
            .unwrap_or_else(|_| too_many())
    }

    /// Inserts `value`, to expire at `at`, as [`try_insert_at`](DelayQueue::try_insert_at).
    ///
    /// # Panics
    ///
    /// If the queue already holds `u32::MAX - 1` values.
    pub fn insert_at(&mut self, value: T, at: impl ClockInstant<W>) -> Key {
        self.try_insert_at(value, at).unwrap_or_else(|_| too_many())
    }

    /// Gives back every slot the values do not need, as tokio-util's `compact`: the values
    /// move down (keys still hold) and the capacity becomes their number. O(slots held).
    pub fn compact(&mut self) {
        self.slots.compact_to(self.len(), &mut self.levels);
        self.shrink_to_fit();
    }

    /// Gives back the slots past the highest one in use, moving no value, as tokio-util's
    /// `shrink_to_fit`.
    pub fn shrink_to_fit(&mut self) {
        self.slots.slots.shrink_to(0);
        self.slots.handles.shrink_to(0);
    }

    /// Makes room for at least `additional` more values, as tokio-util's `reserve`, until
    /// the queue shrinks by itself or is compacted.
    ///
    /// # Panics
    ///
    /// As `Vec::reserve`, if the allocation fails or the capacity overflows.
    pub fn reserve(&mut self, additional: usize) {
        self.slots.slots.reserve(additional);
        self.slots.handles.reserve(additional);
    }
}

#[cold]
#[track_caller]
fn too_many() -> ! {
    panic!("DelayQueue: more than u32::MAX - 1 values")
}

/// A `Vec` and its free indices, lowest first: a bit per index, and a summary bit per word
/// that has one set. No summary word before `hint` has a bit set.
struct Pool<E> {
    items: Vec<E>,
    words: Vec<u64>,
    summary: Vec<u64>,
    free: usize,
    hint: usize,
}

impl<E> Pool<E> {
    const fn new() -> Self {
        Self {
            items: Vec::new(),
            words: Vec::new(),
            summary: Vec::new(),
            free: 0,
            hint: 0,
        }
    }

    /// The lowest free index, taken, else a new one holding `new()`.
    #[inline]
    fn take(&mut self, new: impl FnOnce() -> E) -> usize {
        if self.free == 0 {
            self.items.push(new());
            if self.items.len() % 64 == 1 {
                self.fit(usize::MAX);
            }
            return self.items.len() - 1;
        }
        while self.summary[self.hint] == 0 {
            self.hint += 1;
        }
        let word = self.hint * 64 + self.summary[self.hint].trailing_zeros() as usize;
        let index = word * 64 + self.words[word].trailing_zeros() as usize;
        self.remove(index);
        index
    }

    /// Marks `index` free.
    fn release(&mut self, index: usize) {
        let word = index / 64;
        debug_assert_eq!(self.words[word] & (1 << (index % 64)), 0, "freed twice");
        self.words[word] |= 1 << (index % 64);
        self.summary[word / 64] |= 1 << (word % 64);
        self.free += 1;
        self.hint = self.hint.min(word / 64);
    }

    /// Marks the free `index` taken.
    fn remove(&mut self, index: usize) {
        let word = index / 64;
        debug_assert_ne!(self.words[word] & (1 << (index % 64)), 0, "taken twice");
        self.words[word] &= !(1 << (index % 64));
        if self.words[word] == 0 {
            self.summary[word / 64] &= !(1 << (word % 64));
        }
        self.free -= 1;
    }

    /// Drops the free items at the end, and halves the capacity while under a quarter used
    /// (not below `floor`).
    fn trim(&mut self, floor: usize) {
        while let Some(last) = self.items.len().checked_sub(1) {
            if self.words[last / 64] & (1 << (last % 64)) == 0 {
                break;
            }
            self.remove(last);
            self.items.pop();
        }
        let capacity = halved(self.items.capacity(), self.items.len(), floor);
        if capacity < self.items.capacity() {
            self.shrink_to(capacity);
        }
    }

    /// Room for `additional` more items than in use.
    fn reserve(&mut self, additional: usize) {
        self.items.reserve(additional.saturating_sub(self.free));
    }

    /// Gives back memory beyond `capacity` items, or beyond the items held.
    fn shrink_to(&mut self, capacity: usize) {
        self.items.shrink_to(capacity);
        self.fit(capacity);
    }

    /// Bits for the items held, and memory for no more than `capacity`.
    fn fit(&mut self, capacity: usize) {
        let words = self.items.len().div_ceil(64);
        self.words.resize(words, 0);
        self.summary.resize(words.div_ceil(64), 0);
        self.hint = self.hint.min(self.summary.len().saturating_sub(1));
        self.words.shrink_to(capacity.div_ceil(64));
        self.summary.shrink_to(capacity.div_ceil(64 * 64));
    }

    fn clear(&mut self) {
        self.items.clear();
        (self.words, self.summary, self.free, self.hint) = (Vec::new(), Vec::new(), 0, 0);
    }
}
