//! The hierarchical timing wheel proper: levels of 64 slots, each slot a list of entries.
//! Only the driver role's holder touches it; links are `Relaxed` atomics.
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
//! * An entry of tick `when > elapsed` (due in `((when − 1)·tick, when·tick]`) is placed
//!   by its *key* `when − 1`: at the level of the highest 6-bit group where `elapsed` and
//!   `key` differ, slot `(key >> 6·level) & 63`, until that slot comes up.
//! * A slot comes up when the wheel reaches its first key; each entry fires or goes lower.
//!   So an entry is on level 0 throughout the tick it comes due in.
//! * A level-0 slot holds one key `k`: in progress while `elapsed = k`, up at `k + 1`.
//!
//! # Beyond the range
//!
//! * An entry over `64^L` ticks away waits at the top level, re-inserted each rotation
//!   until within range, never firing early. With the lower levels empty, a turn may
//!   skip rotations (`skip_rotations`), never past its own tick.
//!
//! # Sparse slots (feature `sub-tick`)
//!
//! * Without the feature there are none: no counts, no bounds, every slot fires at its
//!   tick, as a dense one does.
//! * Each level-0 slot keeps a count (`u8::MAX`: "many" until it empties) and a bound on
//!   its entries' *offsets* into the tick before their own (saturating at `u32::MAX` ns).
//! * A slot of at most [`SPARSE`] entries is sparse: its entries fire at their own time.
//! * The bound is in grains rounded up (`grain`): the driver never looks before an
//!   entry is due, and at most a grain after.
//! * Count and bound only steer when the driver looks; an entry fires on its own deadline.
//! * With [`Wheel::with_early_looks`](crate::Wheel::with_early_looks), a dense slot is
//!   looked at as a sparse one: each look fires what is due, and tightens the bound.
//!
//! # Chains
//!
//! * A slot is [`Table::CHAINS`] lists; the storage's heads pick an insert's chain.
//! * A slot is walked ([`Walk`]) round-robin across its chains, from the last
//!   insert's: each chain's next entry is fetched while the others' are used, so a walk
//!   of scattered entries keeps several misses in flight instead of one. Without removals
//!   it meets the entries last in first out, as one list does; the order of one slot's
//!   entries is not part of the contract.
//!
//! # Invariants
//!
//! * Every entry on a slot list has `when > elapsed`, on `slot_for(key, level_for(..))`.
//! * Bit `s` of level `l`'s bitmap is set exactly when that slot is non-empty.
//! * `slot_prev` is the previous entry, `NIL` at the head, `UNLINKED` off every slot list.
//! * A level-0 slot's count is its number of entries, or `u8::MAX`. Its bound is at most
//!   each live entry's offset, rounded up; an empty slot has count 0 and no bound.

use crate::sync::Ordering::Relaxed;
use crate::wheel::entry::{Index, NIL, Slab, UNLINKED};
use crate::wheel::grain::Grain;
#[cfg(feature = "sub-tick")]
use crate::wheel::grain::NO_BOUND;
use crate::wheel::heads::{SLOT_BITS, SLOTS, Table};

const SLOT_MASK: u64 = SLOTS as u64 - 1;

/// Ticks spanned by a wheel of `levels` levels: one rotation of its top level.
#[inline(always)]
pub(crate) const fn range(levels: usize) -> u64 {
    1 << (SLOT_BITS as u64 * levels as u64)
}

/// A level-0 slot of at most this many entries is sparse (see "Sparse slots").
#[cfg(feature = "sub-tick")]
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
    /// Entries per level-0 slot.
    #[cfg(feature = "sub-tick")]
    counts: [u8; SLOTS],
    /// Offset bounds per level-0 slot, complemented so [`NO_BOUND`] is zero: use `bound`.
    #[cfg(feature = "sub-tick")]
    firsts: [u16; SLOTS],
}

/// The key of an entry of tick `when` (`when > elapsed ≥ 0`).
#[inline]
fn key_of(when: u64) -> u64 {
    when - 1
}

/// Marks a slot non-empty or empty in the storage's bitmap.
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

/// The level of key `key` seen from `elapsed` (the top one beyond the range).
#[inline]
fn level_for(elapsed: u64, key: u64, levels: usize) -> usize {
    let mut masked = (elapsed ^ key) | SLOT_MASK;
    if masked >= range(levels) {
        masked = range(levels) - 1;
    }
    let significant = 63 - masked.leading_zeros();
    (significant / SLOT_BITS) as usize
}

/// Whether every chain of a slot is empty.
///
/// # Safety
///
/// * The caller holds the driver role.
#[inline]
unsafe fn slot_empty<S: Slab>(storage: &S, level: usize, slot: usize) -> bool {
    // SAFETY: the caller holds the driver role.
    unsafe { storage.heads().chains(level, slot) }
        .into_iter()
        .all(|head| head == NIL)
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
            #[cfg(feature = "sub-tick")]
            counts: [0; SLOTS],
            #[cfg(feature = "sub-tick")]
            firsts: [!NO_BOUND; SLOTS],
        }
    }

    /// The tick the wheel has been advanced to.
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Moves `elapsed` to the first key of a slot about to be taken (not a level-0 slot's
    /// `deadline`: it may start a level-1 slot not yet come up).
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

    /// Links `index`, of tick `when > elapsed` and `offset`, into its slot.
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
        #[cfg(feature = "sub-tick")]
        if level == 0 {
            self.counts[slot] = self.counts[slot].saturating_add(1);
            self.set_bound(slot, self.bound(slot).min(grain.up(offset)));
        }
        #[cfg(not(feature = "sub-tick"))]
        let _ = (offset, grain);
        // SAFETY: the levels live in the driver's state: the caller holds the role.
        let chain = unsafe { storage.heads().insert_chain(level, slot) };
        // SAFETY: as above.
        let head = unsafe { storage.heads().get(level, slot, chain) };
        let entry = storage.entry(index);
        entry.slot_prev.store(NIL, Relaxed);
        entry.slot_next.store(head, Relaxed);
        if head != NIL {
            storage.entry(head).slot_prev.store(index, Relaxed);
        }
        // SAFETY: as above.
        unsafe { storage.heads().set(level, slot, chain, index) };
        // SAFETY: as above.
        unsafe { set_bit(storage, level, slot, true) };
    }

    /// Unlinks `index` (of tick `when`) if it is on a slot list.
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
            // The head of one of the slot's chains.
            let chain = chains(storage, level, slot)
                .as_ref()
                .iter()
                .position(|&head| head == index);
            debug_assert!(chain.is_some(), "entry is not where its tick says");
            let chain = chain.unwrap_or(0);
            // SAFETY: as in `insert`.
            unsafe { storage.heads().set(level, slot, chain, next) };
            // SAFETY: as in `insert`.
            if next == NIL && unsafe { slot_empty(storage, level, slot) } {
                // SAFETY: as in `insert`.
                unsafe { set_bit(storage, level, slot, false) };
            }
        }
        #[cfg(feature = "sub-tick")]
        if level == 0 {
            // SAFETY: as in `insert`.
            if unsafe { slot_empty(storage, 0, slot) } {
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
            // The current slot (the tick in progress) included.
            let slot = (occupied & (u64::MAX << now_slot)).trailing_zeros() as usize;
            debug_assert!(slot < SLOTS, "a level-0 slot behind the tick in progress");
            return Some(Expiration {
                level,
                slot,
                deadline: level_start + slot as u64 + 1,
            });
        }
        // The current slot holds nothing above level 0. Slots at or before it (top level
        // only: beyond the range) are a rotation later, so searched last.
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
            debug_assert_eq!(level, S::LEVELS - 1, "a lower level wrapped");
            deadline = deadline.saturating_add(span);
        }
        Some(Expiration {
            level,
            slot,
            deadline,
        })
    }

    /// Empties a slot and returns a walk of its entries; mark each with
    /// [`Levels::unlink_taken`].
    pub(crate) fn take_slot<S: Slab>(
        &mut self,
        storage: &S,
        expiration: &Expiration,
    ) -> Walk<<S::Heads as Table>::Chains> {
        let (level, slot) = (expiration.level, expiration.slot);
        let walk = Walk::of(storage, level, slot);
        for chain in 0..S::Heads::CHAINS {
            // SAFETY: as in `insert`.
            unsafe { storage.heads().set(level, slot, chain, NIL) };
        }
        // SAFETY: as in `insert`.
        unsafe { storage.heads().forget_inserts(level, slot) };
        // SAFETY: as in `insert`.
        unsafe { set_bit(storage, level, slot, false) };
        #[cfg(feature = "sub-tick")]
        if expiration.level == 0 {
            self.forget_slot(expiration.slot);
        }
        walk
    }

    /// Resets the count and offset bound of an emptied level-0 slot.
    #[cfg(feature = "sub-tick")]
    fn forget_slot(&mut self, slot: usize) {
        self.counts[slot] = 0;
        self.set_bound(slot, NO_BOUND);
    }

    /// The offset bound of a level-0 slot, in grains ([`NO_BOUND`]: none).
    #[cfg(feature = "sub-tick")]
    #[inline]
    fn bound(&self, slot: usize) -> u16 {
        !self.firsts[slot]
    }

    #[cfg(feature = "sub-tick")]
    #[inline]
    fn set_bound(&mut self, slot: usize, grains: u16) {
        self.firsts[slot] = !grains;
    }

    /// A level-0 slot's bound in ns, if it is to be looked at before its tick. Never
    /// without `sub-tick`: every slot is then looked at at its tick only.
    #[inline]
    pub(crate) fn first_look(&self, slot: usize, grain: Grain, early_looks: bool) -> Option<u32> {
        #[cfg(feature = "sub-tick")]
        {
            // A constant without `std`: firmware carries no early-look code.
            let early_looks = cfg!(feature = "std") && early_looks;
            let bound = self.bound(slot);
            let look = early_looks || self.counts[slot] <= SPARSE;
            (bound != NO_BOUND && look).then(|| grain.nanos(bound))
        }
        #[cfg(not(feature = "sub-tick"))]
        {
            let _ = (slot, grain, early_looks);
            None
        }
    }

    /// Whether every level below the top one is empty.
    pub(crate) fn only_top<S: Slab>(&self, storage: &S) -> bool {
        // SAFETY: as in `insert`.
        (0..S::LEVELS - 1).all(|level| unsafe { storage.heads().occupied(level) } == 0)
    }

    /// The first entry of each chain of each non-empty top-level slot (`NIL` for an
    /// empty chain).
    pub(crate) fn top_lists<'s, S: Slab>(
        &self,
        storage: &'s S,
    ) -> impl Iterator<Item = Index> + 's {
        let top = S::LEVELS - 1;
        // SAFETY: as in `insert`.
        let occupied = unsafe { storage.heads().occupied(top) };
        (0..SLOTS)
            .filter(move |slot| occupied & 1 << slot != 0)
            .flat_map(move |slot| self::chains(storage, top, slot))
    }

    /// A walk of a level-0 slot's entries, which stay linked.
    pub(crate) fn walk_level0<S: Slab>(
        storage: &S,
        slot: usize,
    ) -> Walk<<S::Heads as Table>::Chains> {
        Walk::of(storage, 0, slot)
    }

    /// Marks an entry of a [`Levels::take_slot`] walk unlinked.
    pub(crate) fn unlink_taken<S: Slab>(storage: &S, index: Index) {
        let entry = storage.entry(index);
        entry.slot_prev.store(UNLINKED, Relaxed);
        entry.slot_next.store(NIL, Relaxed);
    }

    /// Sets a level-0 slot's bound after a walk: `first` is its least live offset.
    pub(crate) fn set_first<S: Slab>(
        &mut self,
        storage: &S,
        slot: usize,
        first: u32,
        grain: Grain,
    ) {
        #[cfg(feature = "sub-tick")]
        {
            // SAFETY: as in `insert`.
            if !unsafe { slot_empty(storage, 0, slot) } {
                self.set_bound(slot, grain.up(first));
            }
        }
        #[cfg(not(feature = "sub-tick"))]
        let _ = (storage, slot, first, grain);
    }
}

/// The heads of the chains of slot `slot` of level `level`, the driver role held.
#[inline]
fn chains<S: Slab>(storage: &S, level: usize, slot: usize) -> <S::Heads as Table>::Chains {
    // SAFETY: as in `insert`: the levels' callers hold the driver role.
    unsafe { storage.heads().chains(level, slot) }
}

/// A walk of a slot's entries: its chains in turn, downwards from the last insert's.
pub(crate) struct Walk<C> {
    /// Each chain's next entry.
    chains: C,
    /// The chain the next entry comes from.
    at: usize,
}

impl<C: AsMut<[Index]>> Walk<C> {
    fn of<S: Slab<Heads: Table<Chains = C>>>(storage: &S, level: usize, slot: usize) -> Self {
        Self {
            chains: chains(storage, level, slot),
            // SAFETY: as in `insert`: the levels' callers hold the driver role.
            at: unsafe { storage.heads().last_chain(level, slot) },
        }
    }

    /// The next entry and the one after it on its chain (to fetch ahead); `None` when
    /// every chain is walked. Reads the link before the caller may unlink the entry.
    #[inline]
    pub(crate) fn next<S: Slab>(&mut self, storage: &S) -> Option<(Index, Index)> {
        let chains = self.chains.as_mut();
        for _ in 0..chains.len() {
            let chain = self.at;
            self.at = self.at.wrapping_sub(1) & (chains.len() - 1);
            let index = chains[chain];
            if index != NIL {
                let next = storage.entry(index).slot_next.load(Relaxed);
                chains[chain] = next;
                return Some((index, next));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "alloc")]
    extern crate alloc;

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

    /// A walk of slot 5 of level 0 on `storage`, as the expiry takes it.
    #[cfg(feature = "alloc")]
    fn take<S: Slab>(levels: &mut Levels, storage: &S) -> alloc::vec::Vec<Index> {
        let expiration = levels.next_expiration(storage).expect("a slot in use");
        assert_eq!((expiration.level, expiration.slot), (0, 5));
        let mut walk = levels.take_slot(storage, &expiration);
        let mut taken = alloc::vec::Vec::new();
        while let Some((index, _)) = walk.next(storage) {
            Levels::unlink_taken(storage, index);
            taken.push(index);
        }
        taken
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn chains_give_back_the_last_entry_in_first() {
        let storage = crate::wheel::storage::Growable::new();
        const { assert!(<crate::wheel::storage::Growable as Slab>::Heads::CHAINS > 1) };
        let grain = Grain::of_tick(1_000_000);
        let mut levels = Levels::new();
        for index in 0..11 {
            assert!(storage.reserve(index));
            levels.insert(&storage, index, 6, 0, grain);
        }
        // Every chain, in the reverse order of the inserts.
        assert_eq!(
            take(&mut levels, &storage),
            (0..11).rev().collect::<alloc::vec::Vec<_>>()
        );
        assert_eq!(levels.next_expiration(&storage), None);

        // Removals, of a chain's head and of entries inside chains: the rest, once each.
        for index in 0..11 {
            levels.insert(&storage, index, 6, 0, grain);
        }
        for index in [10, 9, 4, 0] {
            levels.remove(&storage, index, 6);
        }
        let mut rest = take(&mut levels, &storage);
        rest.sort_unstable();
        assert_eq!(rest, [1, 2, 3, 5, 6, 7, 8]);
        assert_eq!(levels.next_expiration(&storage), None);

        // Removing every entry empties the slot and its bit.
        for index in 0..3 {
            levels.insert(&storage, index, 6, 0, grain);
        }
        for index in [1, 2, 0] {
            levels.remove(&storage, index, 6);
        }
        assert_eq!(levels.next_expiration(&storage), None);
    }

    #[test]
    fn slot_for_reads_the_level_group() {
        assert_eq!(slot_for(5, 0), 5);
        assert_eq!(slot_for(64 * 3 + 5, 1), 3);
        assert_eq!(slot_for(64 * 64 + 5, 1), 0);
    }
}
