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
//! `64^(l+1)` ticks. A wheel has 2 to 6 levels, as its storage chooses (6 unless told
//! otherwise; see [`Fixed`](crate::Fixed)); with all six:
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
//! # Beyond the range
//!
//! An entry more than `64^L` ticks away (`2^36` with six levels, `2^24` with four) goes to
//! the top level as if it were within range: its slot then comes up once per rotation of
//! the top level, and every time it is simply re-inserted, until it is within range. It
//! never fires early, because nothing fires before its own deadline is reached. Fewer
//! levels only make that happen sooner: the levels' arithmetic is the same at every count
//! (the level count is a constant of the storage's type, so it costs nothing at run time).
//!
//! A turn that passes many rotations at once (a clock that jumped, a driver that was not
//! run) would re-insert such an entry once per rotation passed. It skips them instead
//! when it can: with the levels below the top empty and every entry on the top level
//! held there beyond the range, nothing comes down before the rotation of the earliest of
//! their keys, so `elapsed` may move to the end of the rotation before it (never past the
//! turn's tick): those entries stay where they are, since their slot depends on their
//! key alone while they are beyond the range (see the wheel's `skip_rotations`).
//!
//! # Sparse slots
//!
//! For each level-0 slot the levels also keep how many entries it holds (counted up to
//! `u8::MAX`, then "many" until the slot empties) and a bound on their *offsets*: an entry
//! of tick `T` is due at a reading in `((T − 1)·tick, T·tick]`, and its offset is how far
//! into tick `T − 1` that is, from 1 ns to a whole tick (saturating at `u32::MAX` ns). A
//! slot of at most [`SPARSE`] entries lets the driver fire each one at its own time rather
//! than all at the slot's tick (see the wheel's "Sub-tick firing").
//!
//! The bound is kept in 16 bits, in *grains* of `2^s` ns, where `s` is the least shift
//! that fits a whole tick's offset in 16 bits (1 ns up to a 65 µs tick; 16 ns at 1 ms; see
//! [`Grain`]). An offset is rounded *up* to a grain: the bound is at most one grain above
//! the earliest offset, never below it, so the driver never looks before an entry of the
//! slot is due (where, on a stopped clock, it would look again and again at the same
//! time) and looks at most one grain after. An offset that rounds to the last grain of the
//! tick counts as none: its entries fire at the slot's tick, less than a grain later.
//!
//! Both numbers only steer when the driver looks: whether an entry may fire is always
//! decided on its own deadline.
//!
//! # Early looks
//!
//! A wheel whose driver sleeps on a coarser timer than the wheel's own ticks (tokio's
//! timer rounds every sleep up to its own millisecond grid, which the wheel's ticks do not
//! share) turns late by that rounding at each tick boundary, on top of the tick's own. With
//! early looks on ([`Wheel::with_early_looks`](crate::Wheel::with_early_looks)) a
//! dense slot is looked at before its tick as a sparse one is, whenever its earliest entry
//! is due: the timer wakes the driver at its first wake after that deadline, and the turn
//! fires every entry due by then and plans the next look at the earliest one left. So each
//! deadline fires at the timer's first wake after its own time, as the timer's own sleeps
//! would, whatever the tick.
//!
//! Each look walks the slot, and comes only when an entry of it is due (a look that finds
//! only entries cancelled since it was planned fires nothing and tightens the bound to the
//! earliest left). On a precise timer, which wakes the driver at each deadline, that
//! could cost `n²` entry visits for a slot of `n` entries, which is why dense slots
//! otherwise wait for their tick; with a coarse timer the looks at a slot are bounded by
//! the timer's wakes during its tick (about two for a 1 ms tick on tokio), and by the
//! wakes of arms due before the planned look. Nothing fires before its deadline either
//! way.
//!
//! # Invariants
//!
//! * Every entry on a slot list has `when > elapsed` (its key is `elapsed` or later), and
//!   is on the list of `slot_for(key, level_for(elapsed, key))`: a slot comes up before
//!   `elapsed` passes its first key, so the levels never need to be told where an entry is.
//! * Bit `s` of level `l`'s occupancy bitmap (kept with the heads by the storage) is set
//!   exactly when slot `s` of level `l` is non-empty.
//! * An entry on a slot list has `slot_prev` = the previous entry or `NIL` (list head);
//!   an entry on no list has `slot_prev = UNLINKED`.
//! * For a level-0 slot, `counts[s]` is its number of entries (or `u8::MAX`: at least
//!   that many since it was last empty), and its bound, in grains, is at most the offset of
//!   each of its entries that is not cancelled, rounded up to a grain (a walk of the slot
//!   leaves cancelled ones out: they wait on it only to be reclaimed); an empty slot has
//!   count 0 and no bound.

use crate::sync::Ordering::Relaxed;
use crate::wheel::entry::{Index, NIL, Slab, UNLINKED};
use crate::wheel::heads::SLOTS;
use crate::wheel::heads::{SLOT_BITS, Table};

const SLOT_MASK: u64 = SLOTS as u64 - 1;

/// Ticks spanned by a wheel of `levels` levels: one rotation of its top level.
#[inline(always)]
pub(crate) const fn range(levels: usize) -> u64 {
    1 << (SLOT_BITS as u64 * levels as u64)
}

/// A bound of [`NO_BOUND`] grains means none (see "Sparse slots").
const NO_BOUND: u16 = u16::MAX;

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

/// The unit of a level-0 slot's offset bound: `2^shift` ns, the least that fits a whole
/// tick (up to `u32::MAX` ns) in 16 bits (see "Sparse slots"). The driver keeps it beside
/// the levels, set from the wheel's tick at the start of each turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grain {
    shift: u8,
}

impl Grain {
    /// Nanoseconds: all zero bytes, as a new wheel is (see `link`); no turn uses it, since
    /// each sets the wheel's own grain first.
    pub(crate) const NANOS: Self = Self { shift: 0 };

    /// The grain of a wheel whose tick is `tick_nanos` ns.
    #[inline]
    pub(crate) fn of_tick(tick_nanos: u64) -> Self {
        let longest = tick_nanos.min(u64::from(u32::MAX));
        Self {
            shift: (u64::BITS - longest.leading_zeros()).saturating_sub(u16::BITS) as u8,
        }
    }

    /// `offset` in grains, rounded up; [`NO_BOUND`] if that is the last grain or past it.
    #[inline]
    fn up(self, offset: u32) -> u16 {
        let grains = (u64::from(offset) + (1 << self.shift) - 1) >> self.shift;
        grains.min(u64::from(NO_BOUND)) as u16
    }

    /// One grain in nanoseconds.
    #[inline]
    pub(crate) fn unit(self) -> u32 {
        1 << self.shift
    }

    /// `grains` in nanoseconds (below [`NO_BOUND`], so it fits: at most 16 + 16 bits).
    #[inline]
    fn nanos(self, grains: u16) -> u32 {
        u32::from(grains) << self.shift
    }
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
        // current one: entries held there beyond the wheel's range, due one rotation later at
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
    fn a_grain_fits_a_whole_tick_in_16_bits_and_rounds_up() {
        // Up to 65 535 ns a tick, grains are nanoseconds.
        let exact = Grain::of_tick(65_535);
        assert_eq!(exact.shift, 0);
        assert_eq!(exact.up(1), 1);
        assert_eq!(exact.up(65_534), 65_534);
        assert_eq!(exact.up(65_535), NO_BOUND, "a whole tick counts as none");
        // 1 ms: 16 ns grains, rounded up, never below the offset.
        let ms = Grain::of_tick(1_000_000);
        assert_eq!(ms.shift, 4);
        assert_eq!(ms.up(1), 1);
        assert_eq!(ms.up(16), 1);
        assert_eq!(ms.up(17), 2);
        assert_eq!(ms.up(1_000_000), 62_500);
        for offset in [1, 15, 16, 17, 999_999, 1_000_000] {
            let back = ms.nanos(ms.up(offset));
            assert!(back >= offset && back - offset < 16, "{offset} -> {back}");
        }
        // Ticks of 4.3 s and more: offsets saturate at u32::MAX, which is none.
        let long = Grain::of_tick(10_000_000_000);
        assert_eq!(long.shift, 16);
        assert_eq!(long.up(u32::MAX), NO_BOUND);
        for offset in [1, 65_536, 4_000_000_000, u32::MAX - 65_536] {
            let back = long.nanos(long.up(offset));
            assert!(
                back >= offset && back - offset < 65_536,
                "{offset} -> {back}"
            );
        }
    }

    #[test]
    fn slot_for_reads_the_level_group() {
        assert_eq!(slot_for(5, 0), 5);
        assert_eq!(slot_for(64 * 3 + 5, 1), 3);
        assert_eq!(slot_for(64 * 64 + 5, 1), 0);
    }
}
