//! The hierarchical timing wheel proper: levels of 64 slots, each slot a list of entries.
//!
//! The layout is Varghese and Lauck's hierarchical wheel, as tokio arranges it. The
//! driver role's holder owns it (see [`Wheel`](crate::Wheel)). Nothing here is shared:
//! the entries' links are `Relaxed` atomics, read and written by that one thread.
//!
//! # Levels
//!
//! Level `l` has 64 slots of `64^l` ticks, and spans `64^(l+1)` ticks. The storage
//! chooses 2 to 6 levels (see [`Fixed`](crate::Fixed)). With all six:
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
//! * `elapsed` is the tick up to which the wheel has been advanced.
//! * An entry of tick `when > elapsed` is due at a reading in
//!   `((when − 1)·tick, when·tick]`.
//! * Its *key* is `when − 1`, the tick it comes due in. The levels place it by its key.
//! * Its level is that of the highest 6-bit group in which `elapsed` and `key` differ.
//! * Its slot on that level is `(key >> 6·level) & 63`.
//! * Every tick from `elapsed` to `key` shares the bits above that group. So the entry
//!   stays on its level until its slot comes up.
//! * A slot comes up when the wheel reaches its first key. Each of its entries then
//!   fires, or goes one or more levels lower ("cascading").
//! * So an entry is on level 0 throughout the tick it comes due in. There the driver can
//!   fire it at its own deadline (see "Sparse slots").
//! * A level-0 slot holds one key `k`. While `elapsed = k` it is the tick in progress.
//!   It comes up whole at tick `k + 1`, when all its entries are due.
//!
//! # Beyond the range
//!
//! * An entry more than `64^L` ticks away is held at the top level, as if within range.
//! * Its slot comes up once per rotation of the top level. It is re-inserted each time,
//!   until it is within range. It never fires before its own deadline.
//! * The level count is a constant of the storage's type. The arithmetic is the same at
//!   every count.
//! * A turn may skip many rotations at once (the wheel's `skip_rotations`). It does so
//!   when the lower levels are empty and every top-level entry is beyond the range.
//! * Then nothing comes down before the rotation of the earliest key. So `elapsed` may
//!   move to the end of the rotation before it, never past the turn's tick.
//! * The held entries stay where they are: beyond the range, their slot depends on their
//!   key alone.
//!
//! # Sparse slots
//!
//! * Each level-0 slot keeps a count of its entries and a bound on their *offsets*.
//! * The count saturates at `u8::MAX`, which means "many" until the slot empties.
//! * An entry's offset is how far into the tick before its own it is due: from 1 ns to
//!   a whole tick, saturating at `u32::MAX` ns.
//! * A slot of at most [`SPARSE`] entries is sparse: the driver fires each entry at its
//!   own time (see the wheel's "Sub-tick firing").
//! * The bound is kept in 16 bits, in grains rounded up (see `grain`). So the driver
//!   never looks before an entry of the slot is due, and at most a grain after.
//! * Count and bound only steer when the driver looks. Whether an entry fires is always
//!   decided on its own deadline.
//!
//! # Early looks
//!
//! * With early looks on ([`Wheel::with_early_looks`](crate::Wheel::with_early_looks)), a
//!   dense slot is looked at before its tick, as a sparse one is.
//! * A look comes when the slot's earliest entry is due. It fires every entry due, and
//!   plans the next look at the earliest one left.
//! * A look that finds only entries cancelled since it was planned fires nothing. It
//!   tightens the bound to the earliest entry left.
//!
//! # Invariants
//!
//! * Every entry on a slot list has `when > elapsed`: its key is `elapsed` or later.
//! * It is on the list of `slot_for(key, level_for(elapsed, key))`. A slot comes up
//!   before `elapsed` passes its first key, so no entry needs to record its slot.
//! * Bit `s` of level `l`'s occupancy bitmap is set exactly when that slot is non-empty.
//!   The storage keeps the bitmaps with the heads.
//! * An entry on a slot list has `slot_prev` = the previous entry, or `NIL` at the head.
//!   An entry on no slot list has `slot_prev = UNLINKED`.
//! * A level-0 slot's count is its number of entries, or `u8::MAX`: at least that many
//!   since it was last empty.
//! * Its bound, in grains, is at most each live entry's offset, rounded up to a grain.
//!   A walk leaves cancelled entries out: they wait there only to be reclaimed.
//! * An empty slot has count 0 and no bound.

use crate::sync::Ordering::Relaxed;
use crate::wheel::entry::{Index, NIL, Slab, UNLINKED};
use crate::wheel::grain::{Grain, NO_BOUND};
use crate::wheel::heads::SLOTS;
use crate::wheel::heads::{SLOT_BITS, Table};

const SLOT_MASK: u64 = SLOTS as u64 - 1;

/// Ticks spanned by a wheel of `levels` levels: one rotation of its top level.
#[inline(always)]
pub(crate) const fn range(levels: usize) -> u64 {
    1 << (SLOT_BITS as u64 * levels as u64)
}

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
    /// Entries per level-0 slot (see "Sparse slots").
    counts: [u8; SLOTS],
    /// A bound on the offsets of each level-0 slot's entries, in grains (see "Sparse
    /// slots"), stored complemented so that "no bound" ([`NO_BOUND`]) is zero bytes, as the
    /// rest of a new wheel is (see `link`): read and write it through `bound` and
    /// `set_bound`.
    firsts: [u16; SLOTS],
}

/// The key the levels place an entry of tick `when` by: the tick it comes due in (see
/// "Slot arithmetic"). `when > elapsed ≥ 0`, so no underflow.
#[inline]
fn key_of(when: u64) -> u64 {
    when - 1
}

/// Marks slot `slot` of level `level` non-empty (`true`) or empty in the storage's bitmap.
///
/// # Safety
///
/// * The caller holds the driver role.
#[inline]
unsafe fn set_bit<S: Slab>(storage: &S, level: usize, slot: usize, occupied: bool) {
    let heads = storage.heads();
    // SAFETY: the caller holds the driver role.
    let bits = unsafe { heads.occupied(level) };
    let bits = if occupied {
        bits | 1 << slot
    } else {
        bits & !(1 << slot)
    };
    // SAFETY: as above.
    unsafe { heads.set_occupied(level, bits) };
}

/// The level an entry of key `key` belongs to, seen from `elapsed`, in a wheel of `levels`
/// levels (the top one for keys beyond its range).
#[inline]
fn level_for(elapsed: u64, key: u64, levels: usize) -> usize {
    let mut masked = (elapsed ^ key) | SLOT_MASK;
    if masked >= range(levels) {
        masked = range(levels) - 1;
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
            counts: [0; SLOTS],
            firsts: [!NO_BOUND; SLOTS],
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
    pub(crate) fn insert<S: Slab>(
        &mut self,
        storage: &S,
        index: Index,
        when: u64,
        offset: u32,
        grain: Grain,
    ) {
        debug_assert!(
            when > self.elapsed,
            "inserting an entry that is already due"
        );
        let key = key_of(when);
        let level = level_for(self.elapsed, key, S::LEVELS);
        let slot = slot_for(key, level);
        if level == 0 {
            self.counts[slot] = self.counts[slot].saturating_add(1);
            self.set_bound(slot, self.bound(slot).min(grain.up(offset)));
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
        // SAFETY: as above.
        unsafe { set_bit(storage, level, slot, true) };
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
        let level = level_for(self.elapsed, key, S::LEVELS);
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
                // SAFETY: as in `insert`.
                unsafe { set_bit(storage, level, slot, false) };
            }
        }
        if level == 0 {
            // SAFETY: as in `insert`.
            if unsafe { storage.heads().get(0, slot) } == NIL {
                self.forget_slot(slot);
            } else if self.counts[slot] != u8::MAX {
                self.counts[slot] -= 1;
            }
        }
        entry.slot_prev.store(UNLINKED, Relaxed);
        entry.slot_next.store(NIL, Relaxed);
    }

    /// The earliest non-empty slot, if any.
    pub(crate) fn next_expiration<S: Slab>(&self, storage: &S) -> Option<Expiration> {
        (0..S::LEVELS).find_map(|level| self.next_in_level(storage, level))
    }

    fn next_in_level<S: Slab>(&self, storage: &S, level: usize) -> Option<Expiration> {
        // SAFETY: as in `insert`.
        let occupied = unsafe { storage.heads().occupied(level) };
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
        // current one: entries held beyond the wheel's range, due one rotation later at
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
            debug_assert_eq!(level, S::LEVELS - 1, "a lower level wrapped");
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
        // SAFETY: as in `insert`.
        unsafe { set_bit(storage, level, slot, false) };
        if expiration.level == 0 {
            self.forget_slot(expiration.slot);
        }
        head
    }

    /// Resets the count and offset bound of an emptied level-0 slot.
    fn forget_slot(&mut self, slot: usize) {
        self.counts[slot] = 0;
        self.set_bound(slot, NO_BOUND);
    }

    /// The offset bound of a level-0 slot, in grains ([`NO_BOUND`]: none).
    #[inline]
    fn bound(&self, slot: usize) -> u16 {
        !self.firsts[slot]
    }

    #[inline]
    fn set_bound(&mut self, slot: usize, grains: u16) {
        self.firsts[slot] = !grains;
    }

    /// The offset bound of a level-0 slot in nanoseconds, if it has one and the driver is
    /// to look at the slot before its tick: at or after the offset of each of its entries
    /// that is not cancelled, by less than a grain. A sparse slot is looked at so (see
    /// "Sparse slots"); a dense one only with `early_looks` (see "Early looks").
    pub(crate) fn first_look(&self, slot: usize, grain: Grain, early_looks: bool) -> Option<u32> {
        // Without `std` early looks are off (see `Wheel::with_early_looks`): a constant
        // here, so that firmware carries none of their code.
        let early_looks = cfg!(feature = "std") && early_looks;
        let bound = self.bound(slot);
        let look = early_looks || self.counts[slot] <= SPARSE;
        (bound != NO_BOUND && look).then(|| grain.nanos(bound))
    }

    /// Whether every level below the top one is empty.
    pub(crate) fn only_top<S: Slab>(&self, storage: &S) -> bool {
        // SAFETY: as in `insert`.
        (0..S::LEVELS - 1).all(|level| unsafe { storage.heads().occupied(level) } == 0)
    }

    /// The first entry of each non-empty slot of the top level, to walk each along
    /// `slot_next` (the lists are not changed meanwhile: the caller holds the levels).
    pub(crate) fn top_lists<'s, S: Slab>(
        &self,
        storage: &'s S,
    ) -> impl Iterator<Item = Index> + 's {
        let top = S::LEVELS - 1;
        // SAFETY: as in `insert`.
        let mut occupied = unsafe { storage.heads().occupied(top) };
        core::iter::from_fn(move || {
            if occupied == 0 {
                return None;
            }
            let slot = occupied.trailing_zeros() as usize;
            occupied &= occupied - 1;
            // SAFETY: as in `insert`.
            Some(unsafe { storage.heads().get(top, slot) })
        })
    }

    /// The first entry of a level-0 slot (`NIL` if empty), to walk it along `slot_next`.
    pub(crate) fn level0_head<S: Slab>(&self, storage: &S, slot: usize) -> Index {
        // SAFETY: as in `insert`.
        unsafe { storage.heads().get(0, slot) }
    }

    /// Tightens a level-0 slot's offset bound after a walk found `first`, the least offset
    /// of its entries that are not cancelled (`u32::MAX`: none; see "Sparse slots").
    pub(crate) fn set_first<S: Slab>(
        &mut self,
        storage: &S,
        slot: usize,
        first: u32,
        grain: Grain,
    ) {
        // SAFETY: as in `insert`.
        if unsafe { storage.heads().get(0, slot) } != NIL {
            self.set_bound(slot, grain.up(first));
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
        const L: usize = crate::wheel::heads::MAX_LEVELS;
        assert_eq!(level_for(0, 1, L), 0);
        assert_eq!(level_for(0, 63, L), 0);
        assert_eq!(level_for(0, 64, L), 1);
        assert_eq!(level_for(63, 64, L), 1);
        assert_eq!(level_for(64, 127, L), 0);
        assert_eq!(level_for(0, 4096, L), 2);
        assert_eq!(level_for(0, range(L) - 1, L), L - 1);
        assert_eq!(
            level_for(0, range(L), L),
            L - 1,
            "beyond the range goes to the top"
        );
        assert_eq!(level_for(0, u64::MAX - 1, L), L - 1);
    }

    #[test]
    fn fewer_levels_hold_far_keys_at_their_top() {
        assert_eq!(range(4), 1 << 24);
        assert_eq!(level_for(0, (1 << 24) - 1, 4), 3);
        assert_eq!(level_for(0, 1 << 24, 4), 3);
        assert_eq!(level_for(0, 1 << 30, 4), 3);
        assert_eq!(level_for(0, u64::MAX - 1, 2), 1);
        assert_eq!(level_for(0, 4095, 2), 1);
        assert_eq!(level_for(0, 63, 2), 0);
    }

    #[test]
    fn slot_for_reads_the_level_group() {
        assert_eq!(slot_for(5, 0), 5);
        assert_eq!(slot_for(64 * 3 + 5, 1), 3);
        assert_eq!(slot_for(64 * 64 + 5, 1), 0);
    }
}
