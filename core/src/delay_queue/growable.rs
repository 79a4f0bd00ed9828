//! [`GrowableSlots`]: values in a `Vec` that gives memory back as the queue shrinks.
//! * Keys name handles, and handles name slots: a value's slot may move, its key never.
//! * Both `Vec`s end at their highest index in use: trailing free entries go at once.
//! * An insert takes the lowest free handle and the lowest free slot.
//! * While fewer than a quarter of the slots' capacity is used, `compact` moves the values
//!   above the half into free slots below it and halves the capacity, never below the
//!   floor (`FLOOR`, or the capacity asked for): amortised O(1) per removal. Handles only
//!   shrink from the end.
//! * Asked to (`DelayQueue::compact`), the slots shrink to exactly the values held, and the
//!   handles to the highest key in use, whatever the floor.
//! * A new handle's generation is past every generation its index had before.
//! * A queue on growable slots inserts without a `Result`: it only fails past `u32::MAX - 1`
//!   values, which panics.

extern crate alloc;

use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use super::DelayQueue;
use super::free_set::FreeSet;
use super::key::Key;
use super::slots::{NIL, Slot, SlotStorage, sealed};
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

/// Values that grow on demand and give memory back as the queue shrinks: no
/// `shrink_to_fit` to call. Needs the `alloc` feature.
///
/// A value takes a slot (the value and 24 bytes) and its key a handle (8 bytes). While
/// fewer than a quarter of the slots are in use, the values move down and the capacity
/// halves, down to a floor of 16 slots (or the capacity given to
/// [`with_capacity`](GrowableSlots::with_capacity)): a small queue that empties and fills
/// again does not allocate each time. Below the floor it keeps what it has; an emptied
/// queue holds at most 16 slots. [`DelayQueue::compact`] gives back all but what the values
/// need, as tokio-util's. Handles cannot move (keys name them): they shrink as the highest
/// keys leave, and inserts take the lowest free one, so the keys in use gather at the front.
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{DelayQueue, Fixed, GrowableSlots, ManualClock, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let mut queue = DelayQueue::new(&wheel, GrowableSlots::new());
/// let keys: Vec<_> = (0..10_000).map(|i| queue.insert(i, Duration::from_secs(1))).collect();
/// assert!(queue.capacity() >= 10_000);
/// for (i, key) in keys.iter().enumerate() {
///     if i % 1000 != 0 {
///         queue.remove(*key);
///     }
/// }
/// assert!(queue.capacity() < 100); // given back, with no call to make
/// assert_eq!(queue.get(keys[5000]), Some(&5000)); // and the keys still hold
/// for (i, key) in keys.iter().enumerate().step_by(1000) {
///     assert_eq!(queue.remove(*key), Some(i));
/// }
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
    /// The slots' capacity never shrinks below this.
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

    /// Room for `additional` more values than held now, in slots and handles.
    fn reserve(&mut self, additional: usize) {
        let free = self.free_slots.count();
        self.slots.reserve(additional.saturating_sub(free));
        let free = self.free_handles.count();
        self.handles.reserve(additional.saturating_sub(free));
    }

    /// Gives back the slots and handles past the highest in use, moving nothing.
    fn shrink_to_fit(&mut self) {
        self.slots.shrink_to_fit();
        self.free_slots.fit(self.slots.len());
        self.free_slots.shrink_to(self.slots.len());
        self.handles.shrink_to_fit();
        self.free_handles.fit(self.handles.len());
        self.free_handles.shrink_to(self.handles.len());
    }

    /// The capacity to shrink the slots to: halved while under a quarter is used and the
    /// values fit.
    fn target_capacity(&self) -> usize {
        let used = self.slots.len() - self.free_slots.count();
        let mut capacity = self.slots.capacity();
        while capacity / 2 >= used.max(self.floor) && used < capacity / 4 {
            capacity /= 2;
        }
        capacity
    }

    /// Drops trailing free slots.
    fn trim_slots(&mut self) {
        while self.slots.last().is_some_and(|slot| slot.value.is_none()) {
            self.free_slots.remove(self.slots.len() - 1);
            self.slots.pop();
        }
    }

    /// Drops trailing free handles, and halves their capacity while it is under a quarter
    /// used and fits.
    fn trim_handles(&mut self) {
        while let Some(last) = self.handles.last() {
            if last.slot != NIL {
                break;
            }
            self.next_generation = self.next_generation.max(last.generation);
            self.free_handles.remove(self.handles.len() - 1);
            self.handles.pop();
        }
        let len = self.handles.len();
        let mut capacity = self.handles.capacity();
        while capacity / 2 >= len.max(self.floor) && len < capacity / 4 {
            capacity /= 2;
        }
        if capacity < self.handles.capacity() {
            self.handles.shrink_to(capacity);
            self.free_handles.fit(len);
            self.free_handles.shrink_to(capacity);
        }
    }

    /// Moves the values above `capacity` into free slots below it and gives back the
    /// rest; `capacity` holds every value.
    fn compact_to(&mut self, capacity: usize, mut moved: impl FnMut(&mut [Slot<T>], u32, u32)) {
        debug_assert!(capacity >= self.slots.len() - self.free_slots.count());
        // The free slots below `capacity` are as many as the values above it, or more.
        for from in (capacity..self.slots.len()).rev() {
            if self.slots[from].value.is_none() {
                continue;
            }
            let to = self
                .free_slots
                .take_lowest()
                .expect("a free slot below the half");
            debug_assert!(to < capacity);
            self.slots.swap(from, to);
            self.free_slots.insert(from);
            self.handles[self.slots[to].key as usize].slot = to as u32;
            moved(&mut self.slots, from as u32, to as u32);
        }
        self.trim_slots();
        self.slots.shrink_to(capacity);
        self.free_slots.fit(self.slots.len());
        self.free_slots.shrink_to(capacity);
        self.trim_handles();
    }
}

impl<T> Default for GrowableSlots<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for GrowableSlots<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrowableSlots")
            .field("len", &(self.slots.len() - self.free_slots.count()))
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
                if self.handles.len() % 64 == 1 {
                    self.free_handles.fit(self.handles.len());
                }
                self.handles.len() - 1
            }
            None => return None,
        };
        let slot = match self.free_slots.take_lowest() {
            Some(slot) => slot,
            None => {
                self.slots.push(Slot::VACANT);
                if self.slots.len() % 64 == 1 {
                    self.free_slots.fit(self.slots.len());
                }
                self.slots.len() - 1
            }
        };
        self.handles[handle].slot = slot as u32;
        self.slots[slot].key = handle as u32;
        Some((self.key_at(slot as u32), slot as u32))
    }

    fn find(&self, key: Key) -> Option<u32> {
        match self.handles.get(key.index as usize) {
            Some(handle) if handle.generation == key.generation && handle.slot != NIL => {
                Some(handle.slot)
            }
            _ => None,
        }
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
            super::prefetch::prefetch(handle);
        }
    }

    fn vacate(&mut self, index: u32) -> bool {
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
        self.target_capacity() < self.slots.capacity()
    }

    fn compact(&mut self, moved: impl FnMut(&mut [Slot<T>], u32, u32)) {
        let capacity = self.target_capacity();
        if capacity >= self.slots.capacity() {
            return;
        }
        self.compact_to(capacity, moved);
    }

    fn len(&self) -> usize {
        self.slots.len() - self.free_slots.count()
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

    /// Inserts `value`, to expire at `at` (at the next poll if it has passed), as
    /// [`try_insert_at`](DelayQueue::try_insert_at) takes it. The slots grow as needed.
    ///
    /// # Panics
    ///
    /// If the queue already holds `u32::MAX - 1` values.
    pub fn insert_at(&mut self, value: T, at: impl ClockInstant<W>) -> Key {
        self.try_insert_at(value, at).unwrap_or_else(|_| too_many())
    }
}

impl<T, W: WheelRef> DelayQueue<'_, T, GrowableSlots<T>, W> {
    /// Gives back every slot the values do not need: the values move down, and the
    /// capacity becomes the number held, as tokio-util's `DelayQueue::compact`. Keys still
    /// hold. O(n) in the slots held. The queue shrinks by itself too, down to its floor
    /// ([`GrowableSlots`]): this gives back the rest.
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
        self.slots.shrink_to_fit();
    }

    /// Gives back the slots past the highest one in use, moving no value, as tokio-util's
    /// `DelayQueue::shrink_to_fit`; [`compact`](DelayQueue::compact) gives back all it can.
    pub fn shrink_to_fit(&mut self) {
        self.slots.shrink_to_fit();
    }

    /// Makes room for at least `additional` more values before the slots grow again, as
    /// tokio-util's `DelayQueue::reserve`. The room stays until the queue shrinks by
    /// itself (while under a quarter is used) or is compacted.
    ///
    /// # Panics
    ///
    /// If the allocation fails or the capacity overflows, as `Vec::reserve`.
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
        self.slots.reserve(additional);
    }
}

#[cold]
#[track_caller]
fn too_many() -> ! {
    panic!("DelayQueue: more than u32::MAX - 1 values")
}
