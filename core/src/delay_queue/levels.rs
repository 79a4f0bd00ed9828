//! The queue's lists on [`hierarchy`](crate::hierarchy)'s six levels, and the due list,
//! linked through each [`Slot`]'s `next` and `prev` (the storage keeps the slots).
//! * A value is placed by its tick, the first tick boundary at or after its deadline; its
//!   `place` makes unlinking O(1). Level-0 lists keep their tails.
//! * `advance(t)` moves every value of tick at most `t` to the due list (first in, first
//!   out), cascading higher slots: never early. A level-0 slot joins the due list whole,
//!   its values keeping their `place`, so the due list's ends are known by identity.

use crate::hierarchy::{Expiration, Hand, MAX_LEVELS as LEVELS, SLOTS};
use crate::time::{Reading, TickDivisor};

/// No slot: the end of a list.
pub(crate) const NIL: u32 = u32::MAX;

/// A value of a queue, with its deadline and its place in the levels.
#[derive(Debug)]
pub struct Slot<T> {
    /// The deadline, nanoseconds of the wheel's clock.
    pub(crate) deadline: u64,
    pub(crate) next: u32,
    pub(crate) prev: u32,
    /// The key's index (growable), or the slot's generation (fixed).
    pub(crate) key: u32,
    /// `level · 64 + slot` in the levels, or `levels::DUE`.
    pub(crate) place: u16,
    pub(crate) value: Option<T>,
}

impl<T> Slot<T> {
    pub(crate) const VACANT: Self = Self {
        deadline: 0,
        next: NIL,
        prev: NIL,
        key: 0,
        place: 0,
        value: None,
    };
}

/// `place` of a value pushed onto the due list (one joined with its slot keeps its own).
const DUE: u16 = (LEVELS * SLOTS) as u16;

#[derive(Debug)]
pub struct Levels {
    pub(crate) tick: TickDivisor,
    /// Every tick up to its `elapsed` has been moved to the due list.
    hand: Hand,
    heads: [[u32; SLOTS]; LEVELS],
    /// The last value of each level-0 slot.
    tails: [u32; SLOTS],
    occupied: [u64; LEVELS],
    due_head: u32,
    due_tail: u32,
}

impl Levels {
    pub(crate) const fn new(tick: TickDivisor) -> Self {
        Self {
            tick,
            hand: Hand::new(),
            heads: [[NIL; SLOTS]; LEVELS],
            tails: [NIL; SLOTS],
            occupied: [0; LEVELS],
            due_head: NIL,
            due_tail: NIL,
        }
    }

    /// The tick boundary at or after `deadline`.
    #[inline]
    pub(crate) fn tick_of(&self, deadline: u64) -> u64 {
        self.tick.ceil(Reading::from_nanos(deadline)).get()
    }

    /// Forgets every value; keeps `elapsed`.
    pub(crate) fn clear(&mut self) {
        let elapsed = self.hand.elapsed();
        *self = Self::new(self.tick);
        self.hand.set_elapsed(elapsed);
    }

    /// Places the value at `index`: due if `due` or its tick was reached, else in its slot.
    pub(crate) fn insert<T>(&mut self, slots: &mut [Slot<T>], index: u32, due: bool) {
        let tick = self.tick_of(slots[index as usize].deadline);
        if due || tick <= self.hand.elapsed() {
            self.push_due(slots, index);
        } else {
            self.place(slots, index, tick);
        }
    }

    /// Whether the value at `index` would stay where it is with `deadline`.
    pub(crate) fn keeps_place<T>(&self, slots: &[Slot<T>], index: u32, deadline: u64) -> bool {
        let slot = &slots[index as usize];
        // A due value has place `DUE`, or a tick already reached.
        let elapsed = self.hand.elapsed();
        if slot.place == DUE || self.tick_of(slot.deadline) <= elapsed {
            return false;
        }
        let tick = self.tick_of(deadline);
        tick > elapsed && self.place_for(tick) == slot.place
    }

    /// `level · 64 + slot` for a tick after `elapsed`.
    fn place_for(&self, tick: u64) -> u16 {
        let (level, slot) = self.hand.place(tick, LEVELS);
        (level * SLOTS + slot) as u16
    }

    /// Takes the value at `index` out of wherever it is.
    pub(crate) fn unlink<T>(&mut self, slots: &mut [Slot<T>], index: u32) {
        let Slot { next, prev, .. } = slots[index as usize];
        self.relink(slots, index, index, next, prev);
        (slots[index as usize].next, slots[index as usize].prev) = (NIL, NIL);
    }

    /// Relinks the value that moved from slot `from` to slot `to`.
    #[cfg(feature = "alloc")]
    pub(crate) fn relocate<T>(&mut self, slots: &mut [Slot<T>], from: u32, to: u32) {
        let moved = &slots[to as usize];
        debug_assert!(
            moved.next != from && moved.prev != from,
            "a slot linked to itself"
        );
        self.relink(slots, to, from, to, to);
    }

    /// Points the neighbours of the value at `at` (`was` to the due list's ends) at
    /// `before` (as next, or head) and `after` (as prev, or tail).
    #[inline(always)]
    fn relink<T>(&mut self, slots: &mut [Slot<T>], at: u32, was: u32, before: u32, after: u32) {
        let Slot {
            next, prev, place, ..
        } = slots[at as usize];
        let (level, slot) = (place as usize / SLOTS, place as usize % SLOTS);
        if prev != NIL {
            slots[prev as usize].next = before;
        } else if self.due_head == was {
            self.due_head = before;
        } else {
            self.heads[level][slot] = before;
            if before == NIL {
                self.occupied[level] &= !(1 << slot);
            }
        }
        if next != NIL {
            slots[next as usize].prev = after;
        } else if self.due_tail == was {
            self.due_tail = after;
        } else if level == 0 {
            self.tails[slot] = after;
        }
    }

    pub(crate) fn first_due(&self) -> Option<u32> {
        (self.due_head != NIL).then_some(self.due_head)
    }

    /// Moves every value whose tick is at most `now_tick` to the due list.
    pub(crate) fn advance<T>(&mut self, slots: &mut [Slot<T>], now_tick: u64) {
        while let Some(expiration) = self.hand.come_up(self.next_expiration(), now_tick) {
            self.cascade(slots, expiration);
        }
        if now_tick > self.hand.elapsed() {
            self.hand.set_elapsed(now_tick);
        }
    }

    /// The earliest slot holding anything: the next one up on the lowest level in use.
    pub(crate) fn next_expiration(&self) -> Option<Expiration> {
        self.hand.next(LEVELS, |level| self.occupied[level])
    }

    /// The value of the earliest deadline in the earliest slot, by a walk of the slot.
    pub(crate) fn earliest<T>(&self, slots: &[Slot<T>]) -> Option<u32> {
        let expiration = self.next_expiration()?;
        let mut index = self.heads[expiration.level][expiration.slot];
        let mut earliest = index;
        while index != NIL {
            if slots[index as usize].deadline < slots[earliest as usize].deadline {
                earliest = index;
            }
            index = slots[index as usize].next;
        }
        Some(earliest)
    }

    /// The earliest tick in the earliest slot, `expiration` (a walk above level 0).
    pub(crate) fn earliest_tick<T>(&self, slots: &[Slot<T>], expiration: Expiration) -> u64 {
        if expiration.level == 0 {
            return expiration.deadline;
        }
        let earliest = self
            .earliest(slots)
            .map(|index| slots[index as usize].deadline);
        self.tick_of(earliest.unwrap_or(u64::MAX))
    }

    /// Empties a slot that came up: a level-0 slot's values become due, a higher slot's
    /// are placed again.
    fn cascade<T>(&mut self, slots: &mut [Slot<T>], expiration: Expiration) {
        let mut index = self.heads[expiration.level][expiration.slot];
        self.heads[expiration.level][expiration.slot] = NIL;
        self.occupied[expiration.level] &= !(1 << expiration.slot);
        if expiration.level == 0 {
            // Every value here is of this tick: the whole list is due.
            let tail = core::mem::replace(&mut self.tails[expiration.slot], NIL);
            if self.due_tail == NIL {
                self.due_head = index;
            } else {
                slots[self.due_tail as usize].next = index;
                slots[index as usize].prev = self.due_tail;
            }
            self.due_tail = tail;
            return;
        }
        while index != NIL {
            let Slot { next, deadline, .. } = slots[index as usize];
            self.place(slots, index, self.tick_of(deadline));
            index = next;
        }
    }

    fn place<T>(&mut self, slots: &mut [Slot<T>], index: u32, tick: u64) {
        let place = self.place_for(tick);
        let (level, slot) = (place as usize / SLOTS, place as usize % SLOTS);
        let head = self.heads[level][slot];
        if head != NIL {
            slots[head as usize].prev = index;
        } else if level == 0 {
            self.tails[slot] = index;
        }
        let entry = &mut slots[index as usize];
        (entry.next, entry.prev, entry.place) = (head, NIL, place);
        self.heads[level][slot] = index;
        self.occupied[level] |= 1 << slot;
    }

    fn push_due<T>(&mut self, slots: &mut [Slot<T>], index: u32) {
        let tail = core::mem::replace(&mut self.due_tail, index);
        let entry = &mut slots[index as usize];
        (entry.next, entry.prev, entry.place) = (NIL, tail, DUE);
        if tail == NIL {
            self.due_head = index;
        } else {
            slots[tail as usize].next = index;
        }
    }
}

#[cfg(feature = "std")]
#[cfg(test)]
mod tests {
    //! The levels alone: every value out at its tick, never early.

    extern crate std;

    use super::{LEVELS, Levels, Slot};
    use crate::hierarchy::range;
    use crate::time::TickDivisor;

    /// Values near, mid-range and beyond the range (a 1 ns tick: the range is 2^36), by
    /// steps of a tick to most of a rotation: each out at the first advance past its tick.
    #[test]
    fn every_value_comes_out_at_its_tick() {
        let (mut levels, far) = (Levels::new(TickDivisor::new(1)), range(LEVELS));
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |below: u64| {
            seed = seed.wrapping_mul(0x5851_f42d_4c95_7f2d).wrapping_add(1);
            (seed >> 20) % below
        };
        let mut slots: std::vec::Vec<Slot<()>> = (0..300).map(|_| Slot::VACANT).collect();
        // From inside a top-level slot: a far value may share its slot.
        let mut now = (5 << 30) + 100;
        levels.advance(&mut slots, now);
        for (index, slot) in slots.iter_mut().enumerate() {
            let (base, spread) = [
                (1, 200),
                (1, 100_000),
                (1 << 30, far),
                (far - 50, 100),
                (far, 3 * far),
            ][index % 5];
            slot.deadline = now + base + next(spread);
        }
        for index in 0..slots.len() as u32 {
            levels.insert(&mut slots, index, false);
        }
        let mut left = slots.len();
        while left > 0 {
            let step = [64, 70_000, far][next(3) as usize];
            now += 1 + next(step);
            levels.advance(&mut slots, now);
            while let Some(index) = levels.first_due() {
                assert!(slots[index as usize].deadline <= now, "early");
                levels.unlink(&mut slots, index);
                (slots[index as usize].deadline, left) = (u64::MAX, left - 1);
            }
            assert!(slots.iter().all(|s| s.deadline > now), "late at {now}");
        }
    }
}
