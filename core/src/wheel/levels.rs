//! The hierarchical timing wheel proper: levels of 64 slots, each slot a list of entries.
//!
//! This is the structure of Varghese & Lauck, "Hashed and Hierarchical Timing Wheels"
//! (SOSP 1987), in the layout tokio uses. It is owned by whichever thread holds the driver
//! role (see [`Wheel`](crate::Wheel)); nothing here is shared, so nothing here is atomic
//! except the entries' link fields, which are read with `Relaxed` by that one thread.
//!
//! # Levels
//!
//! Time is counted in ticks. Level `l` has 64 slots of `64^l` ticks each and spans
//! `64^(l+1)` ticks:
//!
//! | level | slot width  | level span  | at a 1 ms tick        |
//! |-------|-------------|-------------|-----------------------|
//! | 0     | 1           | 64          | 1 ms slots, 64 ms     |
//! | 1     | 64          | 4 096       | 64 ms slots, ~4 s     |
//! | 2     | 4 096       | 262 144     | ~4 s slots, ~4 min    |
//! | 3     | 262 144     | 2^24        | ~4 min slots, ~4.6 h  |
//! | 4     | 2^24        | 2^30        | ~4.6 h slots, ~12 d   |
//! | 5     | 2^30        | 2^36        | ~12 d slots, ~2.2 y   |
//!
//! # Slot arithmetic
//!
//! `elapsed` is the tick up to which the wheel has been advanced. An entry expiring at
//! tick `when > elapsed` is due at a reading in `((when − 1)·tick, when·tick]`: during tick
//! `key = when − 1`, the tick it *comes due in*. The levels place it by that key: at the
//! level of the highest 6-bit group in which `elapsed` and `key` differ, at slot
//! `(key >> 6·level) & 63` of that level. Because every tick between `elapsed` and `key`
//! shares the bits above that group, the entry stays at that level until its slot comes
//! up; then its slot is taken and each entry either fires (its deadline has passed) or is
//! re-inserted one or more levels lower ("cascading").
//!
//! A slot of level 1 or above comes up (is taken and cascaded) when the wheel reaches its
//! first key: at the start of the first tick any of its entries can come due in. So an
//! entry is on level 0 throughout the tick it comes due in, where the driver can fire it
//! at its own deadline (see "Sparse slots"). A level-0 slot holds one key `k`: while
//! `elapsed = k` it is the slot of the tick in progress, and it comes up whole at tick
//! `k + 1` (its entries' `when`), when all of them are due. (Placed by `when` instead, the
//! entries due in the last tick before each 64-tick boundary would wait on level 1 until
//! the boundary, up to a tick late.)
//!
//! An entry more than `2^36` ticks away goes to the top level as if it were within range:
//! its slot then comes up once per rotation of the top level, and every time it is simply
//! re-inserted, until it is within range. It never fires early, because nothing fires before
//! its own deadline is reached.
//!
//! # Sparse slots
//!
//! For each level-0 slot the levels also keep how many entries it holds (counted up to
//! `u8::MAX`, then "many" until the slot empties) and a lower bound on their *offsets*:
//! an entry of tick `T` is due at a reading in `((T − 1)·tick, T·tick]`, and its offset is
//! how far into tick `T − 1` that is, from 1 ns to a whole tick (saturating at
//! `u32::MAX` ns). A slot of at most [`SPARSE`] entries lets the driver fire each one at
//! its own time rather than all at the slot's tick (see the wheel's "Sub-tick firing").
//! Both numbers only steer when the driver looks: whether an entry may fire is always
//! decided on its own deadline.
//!
//! # Invariants
//!
//! * Every entry on a slot list has `when > elapsed` (its key is `elapsed` or later), and
//!   is on the list of `slot_for(key, level_for(elapsed, key))`: a slot comes up before
//!   `elapsed` passes its first key, so the levels never need to be told where an entry is.
//! * Bit `s` of `occupied[l]` is set exactly when slot `s` of level `l` is non-empty.
//! * An entry on a slot list has `slot_prev` = the previous entry or `NIL` (list head);
//!   an entry on no list has `slot_prev = UNLINKED`.
//! * For a level-0 slot, `counts[s]` is its number of entries (or `u8::MAX`: at least
//!   that many since it was last empty), and `firsts[s]` is at most the offset of each of
//!   its entries that is not cancelled (a walk of the slot leaves cancelled ones out: they
//!   wait on it only to be reclaimed); an empty slot has `counts[s] = 0` and
//!   `firsts[s] = u32::MAX`.

use crate::sync::Ordering::Relaxed;
use crate::wheel::entry::{Index, NIL, Slab, UNLINKED};

pub(crate) const LEVELS: usize = 6;
const SLOT_BITS: u32 = 6;
pub(crate) const SLOTS: usize = 1 << SLOT_BITS;
const SLOT_MASK: u64 = SLOTS as u64 - 1;
/// Ticks spanned by the whole wheel.
pub(crate) const RANGE: u64 = 1 << (SLOT_BITS as u64 * LEVELS as u64);

/// A level-0 slot of at most this many entries is sparse: the driver fires its entries at
/// their own deadlines (see "Sparse slots"). Each early look at a sparse slot walks it,
/// so this bounds that work to `SPARSE²` entry visits per slot.
pub(crate) const SPARSE: u8 = 8;

/// The next slot to process: its level, its index, and the tick at which it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expiration {
    pub(crate) level: usize,
    pub(crate) slot: usize,
    pub(crate) deadline: u64,
}

pub(crate) struct Levels {
    elapsed: u64,
    occupied: [u64; LEVELS],
    /// Entries per level-0 slot (see "Sparse slots").
    counts: [u8; SLOTS],
    /// A lower bound on the offsets of each level-0 slot's entries (see "Sparse slots"),
    /// stored complemented so that "no bound" (`u32::MAX`) is zero bytes, as the rest of
    /// a new wheel is (see `link`): read and write it through `first` and `set_bound`.
    firsts: [u32; SLOTS],
}

/// The key the levels place an entry of tick `when` by: the tick it comes due in (see
/// "Slot arithmetic"). `when > elapsed ≥ 0`, so no underflow.
#[inline]
fn key_of(when: u64) -> u64 {
    when - 1
}

/// The level an entry of key `key` belongs to, seen from `elapsed`.
#[inline]
fn level_for(elapsed: u64, key: u64) -> usize {
    let mut masked = (elapsed ^ key) | SLOT_MASK;
    if masked >= RANGE {
        masked = RANGE - 1;
    }
    let significant = 63 - masked.leading_zeros();
    (significant / SLOT_BITS) as usize
}

#[inline]
fn slot_for(key: u64, level: usize) -> usize {
    ((key >> (level as u32 * SLOT_BITS)) & SLOT_MASK) as usize
}

#[inline]
const fn slot_width(level: usize) -> u64 {
    1 << (level as u32 * SLOT_BITS)
}

impl Levels {
    pub(crate) const fn new() -> Self {
        Self {
            elapsed: 0,
            occupied: [0; LEVELS],
            counts: [0; SLOTS],
            firsts: [!u32::MAX; SLOTS],
        }
    }

    /// The tick the wheel has been advanced to.
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Moves `elapsed` to the first key of a slot about to be taken: the level-0 slot's
    /// key (`deadline − 1`), or a higher slot's start (`deadline`). Not to a level-0
    /// slot's `deadline`: that is the start of the next block of 64 when the key ends
    /// one, and `elapsed` would then stand at the start of a level-1 slot that has not
    /// come up yet (whose search starts after the current slot).
    pub(crate) fn reach(&mut self, expiration: &Expiration) {
        let first_key = if expiration.level == 0 {
            expiration.deadline - 1
        } else {
            expiration.deadline
        };
        self.set_elapsed(first_key);
    }

    /// Moves `elapsed` forward (never back).
    pub(crate) fn set_elapsed(&mut self, tick: u64) {
        debug_assert!(tick >= self.elapsed, "elapsed moving back");
        self.elapsed = self.elapsed.max(tick);
    }

    /// Links `index`, expiring at tick `when > elapsed` with the given `offset` into the
    /// tick before (see "Sparse slots"), into its slot.
    pub(crate) fn insert<S: Slab>(&mut self, storage: &S, index: Index, when: u64, offset: u32) {
        debug_assert!(
            when > self.elapsed,
            "inserting an entry that is already due"
        );
        let key = key_of(when);
        let level = level_for(self.elapsed, key);
        let slot = slot_for(key, level);
        if level == 0 {
            self.counts[slot] = self.counts[slot].saturating_add(1);
            self.set_bound(slot, self.first(slot).min(offset));
        }
        // SAFETY: the levels are only reached through the driver's state, which only the
        // holder of the driver role reaches (so for every use of the heads here).
        let head = unsafe { storage.heads().get(level, slot) };
        let entry = storage.entry(index);
        entry.slot_prev.store(NIL, Relaxed);
        entry.slot_next.store(head, Relaxed);
        if head != NIL {
            storage.entry(head).slot_prev.store(index, Relaxed);
        }
        // SAFETY: as above.
        unsafe { storage.heads().set(level, slot, index) };
        self.occupied[level] |= 1 << slot;
    }

    /// Unlinks `index` (expiring at `when`) if it is on a slot list.
    pub(crate) fn remove<S: Slab>(&mut self, storage: &S, index: Index, when: u64) {
        let entry = storage.entry(index);
        let prev = entry.slot_prev.load(Relaxed);
        if prev == UNLINKED {
            return;
        }
        let next = entry.slot_next.load(Relaxed);
        if next != NIL {
            storage.entry(next).slot_prev.store(prev, Relaxed);
        }
        let key = key_of(when);
        let level = level_for(self.elapsed, key);
        let slot = slot_for(key, level);
        if prev != NIL {
            storage.entry(prev).slot_next.store(next, Relaxed);
        } else {
            debug_assert_eq!(
                // SAFETY: as in `insert`.
                unsafe { storage.heads().get(level, slot) },
                index,
                "entry is not where its tick says"
            );
            // SAFETY: as in `insert`.
            unsafe { storage.heads().set(level, slot, next) };
            if next == NIL {
                self.occupied[level] &= !(1 << slot);
            }
        }
        if level == 0 {
            if self.occupied[0] & (1 << slot) == 0 {
                self.forget_slot(slot);
            } else if self.counts[slot] != u8::MAX {
                self.counts[slot] -= 1;
            }
        }
        entry.slot_prev.store(UNLINKED, Relaxed);
        entry.slot_next.store(NIL, Relaxed);
    }

    /// The earliest non-empty slot, if any.
    pub(crate) fn next_expiration(&self) -> Option<Expiration> {
        (0..LEVELS).find_map(|level| self.next_in_level(level))
    }

    fn next_in_level(&self, level: usize) -> Option<Expiration> {
        let occupied = self.occupied[level];
        if occupied == 0 {
            return None;
        }
        let width = slot_width(level);
        let now_slot = (self.elapsed / width) as u32 & SLOT_MASK as u32;
        let span = width << SLOT_BITS;
        let level_start = self.elapsed & !(span - 1);
        if level == 0 {
            // Level 0 holds keys from `elapsed` to the end of its block of 64, the current
            // slot (the tick in progress) included; a slot of key `k` is due at `k + 1`.
            let slot = (occupied & (u64::MAX << now_slot)).trailing_zeros() as usize;
            debug_assert!(slot < SLOTS, "a level-0 slot behind the tick in progress");
            return Some(Expiration {
                level,
                slot,
                deadline: level_start + slot as u64 + 1,
            });
        }
        // Above level 0, slots after the current one come first (the current one holds
        // nothing: keys from `elapsed` on that share its group differ from `elapsed` only
        // lower down). Only the top level can have occupied slots at or before the
        // current one: entries parked beyond the wheel's range, due one rotation later at
        // the earliest, so they are searched last.
        let after = if now_slot as usize == SLOTS - 1 {
            0
        } else {
            occupied & (u64::MAX << (now_slot + 1))
        };
        let slot = if after != 0 {
            after.trailing_zeros()
        } else {
            occupied.trailing_zeros()
        } as usize;
        let mut deadline = level_start + slot as u64 * width;
        if deadline <= self.elapsed {
            // Only the top level wraps: its slots also hold entries beyond the wheel's
            // range, so a slot "behind" the current one is one rotation ahead.
            debug_assert_eq!(level, LEVELS - 1, "a lower level wrapped");
            deadline = deadline.saturating_add(span);
        }
        Some(Expiration {
            level,
            slot,
            deadline,
        })
    }

    /// Empties a slot and returns its list, every entry already marked `UNLINKED`; walk it
    /// with [`Levels::next_taken`].
    pub(crate) fn take_slot<S: Slab>(&mut self, storage: &S, expiration: &Expiration) -> Index {
        let (level, slot) = (expiration.level, expiration.slot);
        // SAFETY: as in `insert`.
        let head = unsafe { storage.heads().get(level, slot) };
        // SAFETY: as in `insert`.
        unsafe { storage.heads().set(level, slot, NIL) };
        self.occupied[expiration.level] &= !(1 << expiration.slot);
        if expiration.level == 0 {
            self.forget_slot(expiration.slot);
        }
        head
    }

    /// Resets the count and offset bound of an emptied level-0 slot.
    fn forget_slot(&mut self, slot: usize) {
        self.counts[slot] = 0;
        self.set_bound(slot, u32::MAX);
    }

    /// The offset bound of a level-0 slot (`u32::MAX`: none).
    #[inline]
    fn first(&self, slot: usize) -> u32 {
        !self.firsts[slot]
    }

    #[inline]
    fn set_bound(&mut self, slot: usize, bound: u32) {
        self.firsts[slot] = !bound;
    }

    /// The offset bound of a level-0 slot, if it is sparse and has one below `u32::MAX`
    /// (see "Sparse slots").
    pub(crate) fn sparse_first(&self, slot: usize) -> Option<u32> {
        let first = self.first(slot);
        (self.counts[slot] <= SPARSE && first != u32::MAX).then_some(first)
    }

    /// The first entry of a level-0 slot (`NIL` if empty), to walk it along `slot_next`.
    pub(crate) fn level0_head<S: Slab>(&self, storage: &S, slot: usize) -> Index {
        // SAFETY: as in `insert`.
        unsafe { storage.heads().get(0, slot) }
    }

    /// Tightens a level-0 slot's offset bound after a walk found the offset of every entry
    /// that is not cancelled (see "Sparse slots").
    pub(crate) fn set_first<S: Slab>(&mut self, storage: &S, slot: usize, first: u32) {
        // SAFETY: as in `insert`.
        if unsafe { storage.heads().get(0, slot) } != NIL {
            self.set_bound(slot, first);
        }
    }

    /// The entry after `index` in a list returned by [`Levels::take_slot`]; marks `index`
    /// unlinked.
    pub(crate) fn next_taken<S: Slab>(storage: &S, index: Index) -> Index {
        let entry = storage.entry(index);
        let next = entry.slot_next.load(Relaxed);
        entry.slot_prev.store(UNLINKED, Relaxed);
        entry.slot_next.store(NIL, Relaxed);
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_for_picks_the_highest_differing_group() {
        assert_eq!(level_for(0, 1), 0);
        assert_eq!(level_for(0, 63), 0);
        assert_eq!(level_for(0, 64), 1);
        assert_eq!(level_for(63, 64), 1);
        assert_eq!(level_for(64, 127), 0);
        assert_eq!(level_for(0, 4096), 2);
        assert_eq!(level_for(0, RANGE - 1), LEVELS - 1);
        assert_eq!(
            level_for(0, RANGE),
            LEVELS - 1,
            "beyond range parks at the top"
        );
        assert_eq!(level_for(0, u64::MAX - 1), LEVELS - 1);
    }

    #[test]
    fn slot_for_reads_the_level_group() {
        assert_eq!(slot_for(5, 0), 5);
        assert_eq!(slot_for(64 * 3 + 5, 1), 3);
        assert_eq!(slot_for(64 * 64 + 5, 1), 0);
    }
}
