//! [`GrowableSlots`]: values in a `Vec`, memory given back as the queue shrinks.
//! * Keys name handles, and handles name slots: a value's slot may move, its key never.
//! * Both `Vec`s end at their highest index in use; inserts take the lowest free ones.
//! * While under a quarter of the slots' capacity is used, a removal moves the values
//!   above the half into free slots below it and halves the capacity, down to the floor:
//!   amortised O(1). Handles only shrink from the end.
//! * A new handle's generation is past every generation its index had before.

extern crate alloc;

use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use super::DelayQueue;
use super::key::Key;
use super::slots::sealed::{self, Store as _};
use super::slots::{NIL, Slot, SlotStorage, prefetch};
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

/// Values that grow on demand and give memory back as the queue shrinks. Needs `alloc`.
///
/// A value costs itself and 32 bytes. While under a quarter of the slots are used, values
/// move down and the capacity halves, down to 16 slots or the capacity given to
/// [`with_capacity`](GrowableSlots::with_capacity); [`DelayQueue::compact`] goes lower.
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{DelayQueue, Fixed, GrowableSlots, ManualClock, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let mut queue = DelayQueue::new(&wheel, GrowableSlots::new());
/// let keys: Vec<_> = (0..10_000).map(|i| queue.insert(i, Duration::from_secs(1))).collect();
/// for key in keys.iter().enumerate().filter(|(i, _)| i % 1000 != 0).map(|(_, key)| key) {
///     queue.remove(key);
/// }
/// assert!(queue.capacity() < 100); // given back, with no call to make
/// assert_eq!(queue.get(keys[5000]), Some(&5000)); // and the keys still hold
/// (0..10).for_each(|i| assert_eq!(queue.remove(keys[i * 1000]), Some(i * 1000)));
/// assert_eq!(queue.capacity(), 16); // empty: the floor
/// queue.compact();
/// assert_eq!(queue.capacity(), 0);
/// ```
pub struct GrowableSlots<T> {
    slots: Vec<Slot<T>>,
    free_slots: FreeSet,
    handles: Vec<Handle>,
    free_handles: FreeSet,
    /// The generation of the next handle pushed.
    next_generation: u32,
    /// The slots' capacity never shrinks below this by itself.
    floor: usize,
}

impl<T> GrowableSlots<T> {
    /// No slots yet; the first insert allocates.
    pub const fn new() -> Self {
        Self {
            slots: Vec::new(),
            free_slots: FreeSet::new(),
            handles: Vec::new(),
            free_handles: FreeSet::new(),
            next_generation: 0,
            floor: FLOOR,
        }
    }

    /// Room for `capacity` values before allocating again; the queue never shrinks below
    /// it by itself (only [`DelayQueue::compact`] goes lower).
    pub fn with_capacity(capacity: usize) -> Self {
        let mut slots = Self::new();
        slots.slots.reserve_exact(capacity);
        slots.handles.reserve_exact(capacity);
        slots.floor = capacity;
        slots
    }

    /// Drops trailing free handles, and halves their capacity while under a quarter used.
    fn trim_handles(&mut self) {
        while let Some(last) = self.handles.last().filter(|last| last.slot == NIL) {
            self.next_generation = self.next_generation.max(last.generation);
            self.free_handles.remove(self.handles.len() - 1);
            self.handles.pop();
        }
        let len = self.handles.len();
        let capacity = halved(self.handles.capacity(), len, self.floor);
        if capacity < self.handles.capacity() {
            self.handles.shrink_to(capacity);
            self.free_handles.fit(len, capacity);
        }
    }

    /// Moves the values above `capacity` (which holds them all) into the free slots below
    /// it, calling `moved` after each move, and gives back the rest.
    fn compact_to(&mut self, capacity: usize, mut moved: impl FnMut(&mut [Slot<T>], u32, u32)) {
        debug_assert!(capacity >= self.len());
        for from in (capacity..self.slots.len()).rev() {
            if self.slots[from].value.is_none() {
                continue;
            }
            let to = self.free_slots.take_lowest().expect("a free slot below");
            debug_assert!(to < capacity);
            self.slots.swap(from, to);
            self.free_slots.insert(from);
            self.handles[self.slots[to].key as usize].slot = to as u32;
            moved(&mut self.slots, from as u32, to as u32);
        }
        self.trim_slots();
        self.slots.shrink_to(capacity);
        self.free_slots.fit(self.slots.len(), capacity);
        self.trim_handles();
    }

    /// Drops trailing free slots.
    fn trim_slots(&mut self) {
        while self.slots.last().is_some_and(|slot| slot.value.is_none()) {
            self.free_slots.remove(self.slots.len() - 1);
            self.slots.pop();
        }
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
            .field("capacity", &self.slots.capacity())
            .field("handles", &self.handles.len())
            .finish()
    }
}

impl<T> SlotStorage<T> for GrowableSlots<T> {}

impl<T> sealed::Store<T> for GrowableSlots<T> {
    fn slots(&self) -> &[Slot<T>] {
        &self.slots
    }

    fn slots_mut(&mut self) -> &mut [Slot<T>] {
        &mut self.slots
    }

    fn occupy(&mut self) -> Option<(Key, u32)> {
        let handle = match self.free_handles.take_lowest() {
            Some(handle) => handle,
            None if self.handles.len() < NIL as usize => {
                self.handles.push(Handle {
                    slot: NIL,
                    generation: self.next_generation,
                });
                self.free_handles.grow(self.handles.len());
                self.handles.len() - 1
            }
            None => return None,
        };
        let slot = self.free_slots.take_lowest().unwrap_or_else(|| {
            self.slots.push(Slot::VACANT);
            self.free_slots.grow(self.slots.len());
            self.slots.len() - 1
        });
        self.handles[handle].slot = slot as u32;
        self.slots[slot].key = handle as u32;
        Some((self.key_at(slot as u32), slot as u32))
    }

    fn find(&self, key: Key) -> Option<u32> {
        let handle = self.handles.get(key.index as usize)?;
        (handle.generation == key.generation && handle.slot != NIL).then_some(handle.slot)
    }

    fn key_at(&self, index: u32) -> Key {
        let handle = self.slots[index as usize].key;
        Key {
            index: handle,
            generation: self.handles[handle as usize].generation,
        }
    }

    fn prefetch_key(&self, key_index: u32) {
        if let Some(handle) = self.handles.get(key_index as usize) {
            prefetch(handle);
        }
    }

    fn vacate(&mut self, index: u32, moved: impl FnMut(&mut [Slot<T>], u32, u32)) {
        let slot = &mut self.slots[index as usize];
        debug_assert!(slot.value.is_none(), "vacate: the value is still there");
        let handle = core::mem::replace(&mut slot.key, NIL) as usize;
        self.handles[handle].slot = NIL;
        self.handles[handle].generation = self.handles[handle].generation.wrapping_add(1);
        self.free_handles.insert(handle);
        self.free_slots.insert(index as usize);
        if handle + 1 == self.handles.len() {
            self.trim_handles();
        }
        if index as usize + 1 == self.slots.len() {
            self.trim_slots();
        }
        let capacity = halved(self.slots.capacity(), self.len(), self.floor);
        if capacity < self.slots.capacity() {
            self.compact_to(capacity, moved);
        }
    }

    fn len(&self) -> usize {
        self.slots.len() - self.free_slots.count
    }

    fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    fn clear(&mut self) {
        for handle in &self.handles {
            self.next_generation = self.next_generation.max(handle.generation.wrapping_add(1));
        }
        self.slots.clear();
        self.handles.clear();
        self.free_slots = FreeSet::new();
        self.free_handles = FreeSet::new();
        self.trim_handles();
        self.slots.shrink_to(self.floor);
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
    /// The slots grow as needed.
    ///
    /// # Panics
    ///
    /// If the queue already holds `u32::MAX - 1` values.
    pub fn insert_at(&mut self, value: T, at: impl ClockInstant<W>) -> Key {
        self.try_insert_at(value, at).unwrap_or_else(|_| too_many())
    }

    /// Gives back every slot the values do not need, as tokio-util's `compact`: the values
    /// move down and the capacity becomes their number. Keys still hold. O(slots held).
    ///
    /// ```
    /// use core::time::Duration;
    /// use punctual_core::{DelayQueue, Fixed, GrowableSlots, ManualClock, Wheel};
    ///
    /// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// let mut queue = DelayQueue::new(&wheel, GrowableSlots::with_capacity(10));
    /// let _five = queue.insert(5, Duration::from_secs(5));
    /// let ten = queue.insert(10, Duration::from_secs(10));
    /// let fifteen = queue.insert(15, Duration::from_secs(15));
    /// queue.remove(ten);
    /// queue.compact();
    /// assert_eq!(queue.capacity(), 2);
    /// assert_eq!(queue.get(fifteen), Some(&15));
    /// ```
    pub fn compact(&mut self) {
        let len = self.len();
        if len < self.capacity() {
            let levels = &mut self.levels;
            self.slots
                .compact_to(len, |slots, from, to| levels.relocate(slots, from, to));
        }
        self.shrink_to_fit();
    }

    /// Gives back the slots past the highest one in use, moving no value, as tokio-util's
    /// `shrink_to_fit`.
    pub fn shrink_to_fit(&mut self) {
        let s = &mut self.slots;
        s.slots.shrink_to_fit();
        s.free_slots.fit(s.slots.len(), s.slots.len());
        s.handles.shrink_to_fit();
        s.free_handles.fit(s.handles.len(), s.handles.len());
    }

    /// Makes room for at least `additional` more values, as tokio-util's `reserve`, until
    /// the queue shrinks by itself or is compacted.
    ///
    /// # Panics
    ///
    /// As `Vec::reserve`, if the allocation fails or the capacity overflows.
    ///
    /// ```
    /// use core::time::Duration;
    /// use punctual_core::{DelayQueue, Fixed, GrowableSlots, ManualClock, Wheel};
    ///
    /// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// let mut queue = DelayQueue::new(&wheel, GrowableSlots::new());
    /// queue.insert("hello", Duration::from_secs(10));
    /// queue.reserve(10);
    /// assert!(queue.capacity() >= 11);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        let s = &mut self.slots;
        s.slots
            .reserve(additional.saturating_sub(s.free_slots.count));
        s.handles
            .reserve(additional.saturating_sub(s.free_handles.count));
    }
}

#[cold]
#[track_caller]
fn too_many() -> ! {
    panic!("DelayQueue: more than u32::MAX - 1 values")
}

/// The free indices below a length, lowest first: a bit per index, and a summary bit per
/// word that has one set. No summary word before `hint` has a bit set.
#[derive(Debug, Default)]
struct FreeSet {
    words: Vec<u64>,
    summary: Vec<u64>,
    count: usize,
    hint: usize,
}

impl FreeSet {
    const fn new() -> Self {
        Self {
            words: Vec::new(),
            summary: Vec::new(),
            count: 0,
            hint: 0,
        }
    }

    /// Makes room for the index `len - 1` just pushed.
    #[inline]
    fn grow(&mut self, len: usize) {
        if len % 64 == 1 {
            self.fit(len, usize::MAX);
        }
    }

    /// Holds indices below `len` (bits at or past it are clear), and no memory beyond
    /// `capacity` indices.
    fn fit(&mut self, len: usize, capacity: usize) {
        let words = len.div_ceil(64);
        self.words.resize(words, 0);
        self.summary.resize(words.div_ceil(64), 0);
        self.hint = self.hint.min(self.summary.len().saturating_sub(1));
        self.words.shrink_to(capacity.div_ceil(64));
        self.summary.shrink_to(capacity.div_ceil(64 * 64));
    }

    fn insert(&mut self, index: usize) {
        let word = index / 64;
        debug_assert_eq!(self.words[word] & (1 << (index % 64)), 0, "freed twice");
        self.words[word] |= 1 << (index % 64);
        self.summary[word / 64] |= 1 << (word % 64);
        self.count += 1;
        self.hint = self.hint.min(word / 64);
    }

    fn remove(&mut self, index: usize) {
        let word = index / 64;
        debug_assert_ne!(self.words[word] & (1 << (index % 64)), 0, "taken twice");
        self.words[word] &= !(1 << (index % 64));
        if self.words[word] == 0 {
            self.summary[word / 64] &= !(1 << (word % 64));
        }
        self.count -= 1;
    }

    /// The lowest free index, taken.
    fn take_lowest(&mut self) -> Option<usize> {
        if self.count == 0 {
            return None;
        }
        while self.summary[self.hint] == 0 {
            self.hint += 1;
        }
        let word = self.hint * 64 + self.summary[self.hint].trailing_zeros() as usize;
        let index = word * 64 + self.words[word].trailing_zeros() as usize;
        self.remove(index);
        Some(index)
    }
}
