//! [`GrowableSlots`]: slots in a `Vec` that gives memory back as the queue shrinks.
//! * The `Vec`'s length is one past the highest occupied slot: trailing free slots go.
//! * A bitmap marks the free slots below that length, with a summary bit per word; an
//!   insert takes the lowest free slot, so values gather at low indices as others leave.
//! * Capacity halves while fewer than a quarter of it are occupied and the length fits
//!   in the half, never below the capacity asked for: amortised O(1) per removal.
//! * A new slot's generation is past every generation its index had before.

extern crate alloc;

use alloc::vec::Vec;
use core::fmt;

use super::slots::{Slot, SlotStorage, sealed};

/// Capacity never shrinks below this many slots, unless asked for less.
const FLOOR: usize = 16;

/// Slots that grow on demand and give memory back as the queue shrinks: no
/// `shrink_to_fit` to call. Needs the `alloc` feature.
///
/// Inserts take the lowest free slot, so that values gather at the front. Capacity halves
/// while fewer than a quarter of it are in use and every value left sits in the first
/// half: a long-lived value at a high index holds the capacity up to it until it leaves.
/// Each slot holds the value and 24 bytes; a bit per slot marks the free ones.
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{DelayQueue, Fixed, GrowableSlots, ManualClock, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let mut queue = DelayQueue::new(&wheel, GrowableSlots::new());
/// let keys: Vec<_> = (0..10_000).map(|i| queue.insert(i, Duration::from_secs(1))).collect();
/// assert!(queue.capacity() >= 10_000);
/// for key in &keys[10..] {
///     queue.remove(*key);
/// }
/// assert!(queue.capacity() < 100); // given back, with no call to make
/// ```
pub struct GrowableSlots<T> {
    slots: Vec<Slot<T>>,
    /// A bit per slot below `slots.len()`: set if free.
    free: Vec<u64>,
    /// A bit per word of `free`: set if the word has a bit set.
    summary: Vec<u64>,
    /// Set bits in `free`.
    free_count: usize,
    /// No word of `summary` before this one has a bit set.
    hint: usize,
    /// The generation of the next slot pushed.
    next_generation: u32,
    /// Capacity never shrinks below this.
    floor: usize,
}

impl<T> GrowableSlots<T> {
    /// No slots yet; the first insert allocates.
    pub const fn new() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            summary: Vec::new(),
            free_count: 0,
            hint: 0,
            next_generation: 0,
            floor: FLOOR,
        }
    }

    /// Room for `capacity` values before allocating again; capacity never shrinks below it.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut slots = Self::new();
        slots.slots.reserve_exact(capacity);
        slots.floor = capacity;
        slots
    }

    /// Makes `index` free below the length.
    fn mark_free(&mut self, index: usize) {
        let word = index / 64;
        self.free[word] |= 1 << (index % 64);
        self.summary[word / 64] |= 1 << (word % 64);
        self.free_count += 1;
        self.hint = self.hint.min(word / 64);
    }

    /// Clears `index`'s free bit.
    fn mark_taken(&mut self, index: usize) {
        let word = index / 64;
        self.free[word] &= !(1 << (index % 64));
        if self.free[word] == 0 {
            self.summary[word / 64] &= !(1 << (word % 64));
        }
        self.free_count -= 1;
    }

    /// The lowest free slot below the length; `free_count` is not zero.
    fn lowest_free(&mut self) -> usize {
        while self.summary[self.hint] == 0 {
            self.hint += 1;
        }
        let word = self.hint * 64 + self.summary[self.hint].trailing_zeros() as usize;
        word * 64 + self.free[word].trailing_zeros() as usize
    }

    /// Sizes the bitmaps for `len` slots.
    fn fit_bitmaps(&mut self, len: usize) {
        let words = len.div_ceil(64);
        self.free.resize(words, 0);
        self.summary.resize(words.div_ceil(64), 0);
        self.hint = self.hint.min(self.summary.len().saturating_sub(1));
    }

    /// Drops trailing free slots, then halves the capacity while it is under a quarter
    /// used and the length fits.
    fn give_back(&mut self) {
        while let Some(last) = self.slots.last() {
            if last.value.is_some() {
                break;
            }
            self.next_generation = self.next_generation.max(last.generation);
            let index = self.slots.len() - 1;
            self.mark_taken(index);
            self.slots.pop();
        }
        let len = self.slots.len();
        let mut capacity = self.slots.capacity();
        while capacity / 2 >= len.max(self.floor) && len - self.free_count < capacity / 4 {
            capacity /= 2;
        }
        if capacity < self.slots.capacity() {
            self.slots.shrink_to(capacity);
            self.fit_bitmaps(len);
            self.free.shrink_to(capacity.div_ceil(64));
            self.summary.shrink_to(capacity.div_ceil(64 * 64));
        }
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
            .field("len", &(self.slots.len() - self.free_count))
            .field("capacity", &self.slots.capacity())
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

    fn occupy(&mut self) -> Option<u32> {
        if self.free_count > 0 {
            let index = self.lowest_free();
            self.mark_taken(index);
            return Some(index as u32);
        }
        let index = self.slots.len();
        if index >= super::slots::NIL as usize {
            return None;
        }
        self.slots.push(Slot::vacant(self.next_generation));
        if index % 64 == 0 {
            self.fit_bitmaps(index + 1);
        }
        Some(index as u32)
    }

    fn vacate(&mut self, index: u32) {
        let index = index as usize;
        let slot = &mut self.slots[index];
        debug_assert!(slot.value.is_none(), "vacate: the value is still there");
        slot.generation = slot.generation.wrapping_add(1);
        self.mark_free(index);
        if index + 1 == self.slots.len() || self.slots.capacity() / 4 > self.len() {
            self.give_back();
        }
    }

    fn len(&self) -> usize {
        self.slots.len() - self.free_count
    }

    fn capacity(&self) -> usize {
        self.slots.capacity()
    }

    fn clear(&mut self) {
        for slot in &mut self.slots {
            self.next_generation = self.next_generation.max(slot.generation.wrapping_add(1));
        }
        self.slots.clear();
        self.free.clear();
        self.summary.clear();
        self.free_count = 0;
        self.hint = 0;
        self.give_back();
    }
}
