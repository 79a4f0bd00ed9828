//! The queue's own hierarchical wheel, owned by the queue (no atomics), in tokio's layout:
//! six levels of 64 slots, level `l` slot `s` covering `64^l` ticks.
//!
//! | level | one slot | whole level (1 ms tick) |
//! |---|---|---|
//! | 0 | 1 tick | 64 ms |
//! | 1 | 64 ticks | 4.1 s |
//! | 2 | 4 096 ticks | 4.4 min |
//! | 3 | 262 144 ticks | 4.7 h |
//! | 4 | 16.8 M ticks | 12.4 days |
//! | 5 | 1.07 G ticks | 2.2 years |
//!
//! # Ground rules
//!
//! * A value's tick is the first tick boundary at or after its deadline. It is placed by
//!   its tick relative to `elapsed`: on the level of the highest 6-bit digit in which they
//!   differ, in the slot of its tick's digit there. Ticks past the top level's range are
//!   placed as if at its end, and placed again when that slot comes up.
//! * Each slot is a doubly linked list through the slots' `next` and `prev` (indices),
//!   with a bit per level marking the slots that hold something; a value knows its slot
//!   (`place`), so unlinking is O(1). The lowest level's lists keep their tails too.
//! * The lowest level holding anything holds the earliest ticks: a higher level's
//!   entries differ from `elapsed` in a higher digit.
//! * Values whose deadline has passed wait in the due list (first in, first out) until
//!   the queue hands them out. `advance(t)` moves there everything whose tick is at most
//!   `t`, cascading the higher slots that come up on the way, and leaves `elapsed = t`.
//! * A lowest-level slot that comes up is due whole: its list joins the due list in O(1),
//!   its values keeping their old `place`. So the due list's ends are known by identity
//!   (`due_head`, `due_tail`), never by `place`.
//! * Nothing reaches the due list before its tick has been reached: never early.

use super::slots::{NIL, Slot};
use crate::time::{Reading, TickDivisor};

const LEVELS: usize = 6;
const SLOT_BITS: u32 = 6;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Ticks beyond `elapsed` that the levels can tell apart.
const RANGE: u64 = (1 << (SLOT_BITS * LEVELS as u32)) - 1;
/// `place` of a value pushed onto the due list (one joined with its slot keeps its own).
const DUE: u16 = (LEVELS * 64) as u16;

/// The earliest slot holding anything, and the tick it comes up at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expiration {
    level: usize,
    slot: usize,
    /// The first tick the slot covers.
    pub(crate) tick: u64,
}

/// The levels and the due list.
pub(crate) struct Levels {
    tick: TickDivisor,
    /// Every tick up to this one has been moved to the due list.
    elapsed: u64,
    heads: [[u32; 64]; LEVELS],
    /// The last value of each lowest-level slot.
    tails: [u32; 64],
    occupied: [u64; LEVELS],
    due_head: u32,
    due_tail: u32,
}

impl Levels {
    pub(crate) const fn new(tick: TickDivisor) -> Self {
        Self {
            tick,
            elapsed: 0,
            heads: [[NIL; 64]; LEVELS],
            tails: [NIL; 64],
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

    /// The tick `now` falls in.
    #[inline]
    pub(crate) fn floor(&self, now: Reading) -> u64 {
        self.tick.floor(now).get()
    }

    /// The reading of tick boundary `tick`, saturating at [`Reading::END`].
    pub(crate) fn reading_of(&self, tick: u64) -> Reading {
        Reading::from_nanos(tick.saturating_mul(self.tick.tick()))
    }

    /// Forgets every value (their slots are dropped by the caller); keeps `elapsed`.
    pub(crate) fn clear(&mut self) {
        self.heads = [[NIL; 64]; LEVELS];
        self.tails = [NIL; 64];
        self.occupied = [0; LEVELS];
        self.due_head = NIL;
        self.due_tail = NIL;
    }

    /// Places the value at `index`: in the due list if `due` or its tick was reached,
    /// else in its slot.
    pub(crate) fn insert<T>(&mut self, slots: &mut [Slot<T>], index: u32, due: bool) {
        let tick = self.tick_of(slots[index as usize].deadline);
        if due || tick <= self.elapsed {
            self.push_due(slots, index);
        } else {
            self.place(slots, index, tick);
        }
    }

    /// Whether the value at `index`, in the levels, would be placed where it is with
    /// `deadline`: a reset that need not move it.
    pub(crate) fn keeps_place<T>(&self, slots: &[Slot<T>], index: u32, deadline: u64) -> bool {
        let slot = &slots[index as usize];
        // Values in the due list have place `DUE`, or a tick already reached (they keep
        // the place of the lowest slot they came from).
        if slot.place == DUE || self.tick_of(slot.deadline) <= self.elapsed {
            return false;
        }
        let tick = self.tick_of(deadline);
        tick > self.elapsed && self.place_for(tick) == slot.place
    }

    /// `level · 64 + slot` for a tick after `elapsed`.
    fn place_for(&self, tick: u64) -> u16 {
        let placed = tick.min(self.elapsed.saturating_add(RANGE));
        let level = level_for(self.elapsed, placed);
        let slot = ((placed >> (SLOT_BITS * level as u32)) & SLOT_MASK) as usize;
        (level * 64 + slot) as u16
    }

    /// Takes the value at `index` out of wherever it is.
    pub(crate) fn unlink<T>(&mut self, slots: &mut [Slot<T>], index: u32) {
        let (next, prev, place) = {
            let slot = &slots[index as usize];
            (slot.next, slot.prev, slot.place)
        };
        let (level, slot) = (place as usize / 64, place as usize % 64);
        if prev != NIL {
            slots[prev as usize].next = next;
        } else if self.due_head == index {
            self.due_head = next;
        } else {
            self.heads[level][slot] = next;
            if next == NIL {
                self.occupied[level] &= !(1 << slot);
            }
        }
        if next != NIL {
            slots[next as usize].prev = prev;
        } else if self.due_tail == index {
            self.due_tail = prev;
        } else if level == 0 {
            self.tails[slot] = prev;
        }
        let slot = &mut slots[index as usize];
        slot.next = NIL;
        slot.prev = NIL;
    }

    /// Relinks the value that moved from slot `from` to slot `to` (`SlotStorage::compact`).
    pub(crate) fn relocate<T>(&mut self, slots: &mut [Slot<T>], from: u32, to: u32) {
        let (next, prev, place) = {
            let slot = &slots[to as usize];
            (slot.next, slot.prev, slot.place)
        };
        debug_assert!(next != from && prev != from, "a slot linked to itself");
        let (level, slot) = (place as usize / 64, place as usize % 64);
        if prev != NIL {
            slots[prev as usize].next = to;
        } else if self.due_head == from {
            self.due_head = to;
        } else {
            self.heads[level][slot] = to;
        }
        if next != NIL {
            slots[next as usize].prev = to;
        } else if self.due_tail == from {
            self.due_tail = to;
        } else if level == 0 {
            self.tails[slot] = to;
        }
    }

    /// The first value of the due list.
    pub(crate) fn first_due(&self) -> Option<u32> {
        (self.due_head != NIL).then_some(self.due_head)
    }

    /// Moves every value whose tick is at most `now_tick` to the due list.
    pub(crate) fn advance<T>(&mut self, slots: &mut [Slot<T>], now_tick: u64) {
        while let Some(expiration) = self.next_expiration() {
            if expiration.tick > now_tick {
                break;
            }
            self.elapsed = expiration.tick;
            self.cascade(slots, expiration);
        }
        self.elapsed = self.elapsed.max(now_tick);
    }

    /// The earliest slot holding anything: the next one up on the lowest level in use.
    pub(crate) fn next_expiration(&self) -> Option<Expiration> {
        (0..LEVELS).find_map(|level| self.next_on(level))
    }

    /// The walk for [`DelayQueue::next_deadline`](crate::DelayQueue::next_deadline): the
    /// earliest deadline in the earliest slot.
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

    /// The earliest tick in `expiration`'s slot: its own tick on the lowest level, else a
    /// walk of the slot.
    pub(crate) fn earliest_tick<T>(&self, slots: &[Slot<T>], expiration: Expiration) -> u64 {
        if expiration.level == 0 {
            return expiration.tick;
        }
        let mut index = self.heads[expiration.level][expiration.slot];
        let mut earliest = u64::MAX;
        while index != NIL {
            earliest = earliest.min(slots[index as usize].deadline);
            index = slots[index as usize].next;
        }
        self.tick_of(earliest)
    }

    fn next_on(&self, level: usize) -> Option<Expiration> {
        let occupied = self.occupied[level];
        if occupied == 0 {
            return None;
        }
        let shift = SLOT_BITS * level as u32;
        let now_slot = (self.elapsed >> shift) & SLOT_MASK;
        let slot = (u64::from(occupied.rotate_right(now_slot as u32).trailing_zeros()) + now_slot)
            & SLOT_MASK;
        let level_range = 1u64 << (shift + SLOT_BITS);
        let level_start = self.elapsed & !(level_range - 1);
        let mut tick = level_start + (slot << shift);
        if tick <= self.elapsed {
            // Only the top level wraps: ticks beyond its range, placed as if at its end.
            debug_assert_eq!(level, LEVELS - 1, "a slot behind the wheel below the top");
            tick += level_range;
        }
        Some(Expiration {
            level,
            slot: slot as usize,
            tick,
        })
    }

    /// Empties a slot that came up: its values whose tick is reached become due, the rest
    /// go lower (or back to the top, if still beyond the range).
    fn cascade<T>(&mut self, slots: &mut [Slot<T>], expiration: Expiration) {
        let mut index = self.heads[expiration.level][expiration.slot];
        self.heads[expiration.level][expiration.slot] = NIL;
        self.occupied[expiration.level] &= !(1 << expiration.slot);
        if expiration.level == 0 {
            // Every value here is of this tick: the whole list is due.
            #[cfg(debug_assertions)]
            {
                let mut walk = index;
                while walk != NIL {
                    let tick = self.tick_of(slots[walk as usize].deadline);
                    debug_assert_eq!(tick, expiration.tick, "a lowest slot of two ticks");
                    walk = slots[walk as usize].next;
                }
            }
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
            let next = slots[index as usize].next;
            let slot = &mut slots[index as usize];
            slot.next = NIL;
            slot.prev = NIL;
            let tick = self.tick_of(slot.deadline);
            if tick <= self.elapsed {
                self.push_due(slots, index);
            } else {
                self.place(slots, index, tick);
            }
            index = next;
        }
    }

    fn place<T>(&mut self, slots: &mut [Slot<T>], index: u32, tick: u64) {
        debug_assert!(tick > self.elapsed);
        let place = self.place_for(tick);
        let (level, slot) = (place as usize / 64, place as usize % 64);
        let head = self.heads[level][slot];
        if head != NIL {
            slots[head as usize].prev = index;
        } else if level == 0 {
            self.tails[slot] = index;
        }
        let entry = &mut slots[index as usize];
        entry.next = head;
        entry.prev = NIL;
        entry.place = place;
        self.heads[level][slot] = index;
        self.occupied[level] |= 1 << slot;
    }

    fn push_due<T>(&mut self, slots: &mut [Slot<T>], index: u32) {
        let tail = self.due_tail;
        {
            let entry = &mut slots[index as usize];
            entry.next = NIL;
            entry.prev = tail;
            entry.place = DUE;
        }
        if tail == NIL {
            self.due_head = index;
        } else {
            slots[tail as usize].next = index;
        }
        self.due_tail = index;
    }
}

/// The level of a tick `when` after `elapsed`: that of the highest digit they differ in.
fn level_for(elapsed: u64, when: u64) -> usize {
    let masked = ((elapsed ^ when) | SLOT_MASK).min(RANGE - 1);
    let significant = 63 - masked.leading_zeros();
    (significant / SLOT_BITS) as usize
}

impl core::fmt::Debug for Levels {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Levels")
            .field("elapsed", &self.elapsed)
            .field("occupied", &self.occupied)
            .finish_non_exhaustive()
    }
}
