//! The lock-free wheel's levels: [`hierarchy`](crate::hierarchy)'s slots as lists linked
//! through the entries, with heads and bitmaps in the storage's heads table. Only the
//! driver role's holder touches them; links are `Relaxed` atomics.
//!
//! * Every entry on a slot list has `when > elapsed`, in the slot `Hand::place` gives.
//! * `slot_prev` is the previous entry, `NIL` at the head, `UNLINKED` off every slot list.
//! * A slot is [`Table::CHAINS`] lists, walked ([`Walk`]) round-robin from the last
//!   insert's chain; the order of one slot's entries is not part of the contract.
//! * With the lower levels empty, a turn may skip rotations of the top level, never past
//!   its own tick.
//!
//! # Sparse slots (feature `sub-tick`; without it every slot fires at its tick)
//!
//! * A level-0 slot keeps a count (`u8::MAX`: "many" until it empties) and a bound at most
//!   each live entry's offset into the tick before its own; an empty slot has count 0
//!   and no bound. Both only steer when the driver looks: an entry fires on its deadline.
//! * A slot of at most [`SPARSE`] entries (any slot, with precise fires) is looked at
//!   from its bound: each look fires what is due and tightens the bound.
//! * A bound is 16 bits of grains of `2^s` ns, `s` the least shift that fits a tick's
//!   offset (saturating at `u32::MAX` ns): 1 ns up to a 65 µs tick, 16 ns at 1 ms.
//!   Offsets round up, so the driver never looks before an entry is due, and at most a
//!   grain after. The tick's last grain, [`NO_BOUND`], counts as none.

use crate::hierarchy::{Expiration, Hand, SLOTS};
use crate::sync::Ordering::Relaxed;
use crate::wheel::entry::{Index, NIL, UNLINKED};
use crate::wheel::heads::Table;
use crate::wheel::storage::Slab;

/// A level-0 slot of at most this many entries is sparse (see "Sparse slots").
#[cfg(feature = "sub-tick")]
pub(crate) const SPARSE: u8 = 8;

pub(crate) struct Levels {
    pub(crate) hand: Hand,
    /// Entries per level-0 slot.
    #[cfg(feature = "sub-tick")]
    counts: [u8; SLOTS],
    /// Offset bounds per level-0 slot, complemented so [`NO_BOUND`] is zero: use `bound`.
    #[cfg(feature = "sub-tick")]
    firsts: [u16; SLOTS],
}

impl Levels {
    pub(crate) const fn new() -> Self {
        Self {
            hand: Hand::new(),
            #[cfg(feature = "sub-tick")]
            counts: [0; SLOTS],
            #[cfg(feature = "sub-tick")]
            firsts: [!NO_BOUND; SLOTS],
        }
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
        let (level, slot) = self.hand.place(when, S::LEVELS);
        #[cfg(feature = "sub-tick")]
        if level == 0 {
            self.counts[slot] = self.counts[slot].saturating_add(1);
            self.set_bound(slot, self.bound(slot).min(grain.up(offset)));
        }
        #[cfg(not(feature = "sub-tick"))]
        let _ = (offset, grain);
        // SAFETY: the levels live in the driver's state: the caller holds the role.
        let chain = unsafe { storage.heads().insert_chain(level, slot) };
        let head = chains(storage, level, slot).as_ref()[chain];
        let entry = storage.entry(index);
        entry.slot_prev.store(NIL, Relaxed);
        entry.slot_next.store(head, Relaxed);
        if head != NIL {
            storage.entry(head).slot_prev.store(index, Relaxed);
        }
        // SAFETY: as above.
        unsafe { storage.heads().set(level, slot, chain, index) };
        // SAFETY: as above.
        unsafe { storage.heads().mark(level, slot, true) };
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
        let (level, slot) = self.hand.place(when, S::LEVELS);
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
            if next == NIL && slot_empty(storage, level, slot) {
                // SAFETY: as in `insert`.
                unsafe { storage.heads().mark(level, slot, false) };
            }
        }
        #[cfg(feature = "sub-tick")]
        if level == 0 {
            if slot_empty(storage, 0, slot) {
                self.forget_slot(slot);
            } else if self.counts[slot] != u8::MAX {
                self.counts[slot] -= 1;
            }
        }
        Self::unlink_taken(storage, index);
    }

    pub(crate) fn next_expiration<S: Slab>(&self, storage: &S) -> Option<Expiration> {
        // SAFETY: as in `insert`.
        self.hand.next(S::LEVELS, |level| unsafe {
            storage.heads().occupied(level)
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
        unsafe { storage.heads().mark(level, slot, false) };
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
    pub(crate) fn first_look(&self, slot: usize, grain: Grain, precise_fires: bool) -> Option<u32> {
        #[cfg(feature = "sub-tick")]
        {
            // A constant without `std`: firmware carries no early-look code.
            let precise_fires = cfg!(feature = "std") && precise_fires;
            let bound = self.bound(slot);
            let look = precise_fires || self.counts[slot] <= SPARSE;
            (bound != NO_BOUND && look).then(|| grain.nanos(bound))
        }
        #[cfg(not(feature = "sub-tick"))]
        {
            let _ = (slot, grain, precise_fires);
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
            if !slot_empty(storage, 0, slot) {
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

/// Whether every chain of a slot is empty, the driver role held.
#[inline]
fn slot_empty<S: Slab>(storage: &S, level: usize, slot: usize) -> bool {
    chains(storage, level, slot)
        .into_iter()
        .all(|head| head == NIL)
}

/// A walk of a slot's entries: its chains in turn, downwards from the last insert's.
pub(crate) struct Walk<C> {
    /// Each chain's next entry.
    chains: C,
    /// The chain the next entry comes from.
    at: usize,
}

impl<C: AsMut<[Index]>> Walk<C> {
    /// A walk of a slot's entries, which stay linked (the driver role held).
    pub(crate) fn of<S: Slab<Heads: Table<Chains = C>>>(
        storage: &S,
        level: usize,
        slot: usize,
    ) -> Self {
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

/// A bound of [`NO_BOUND`] grains means none.
#[cfg(feature = "sub-tick")]
pub(super) const NO_BOUND: u16 = u16::MAX;

/// A grain, set from the wheel's tick at the start of each turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grain {
    shift: u8,
}

impl Grain {
    /// Nanoseconds, all zero bytes; no turn uses it.
    pub(crate) const NANOS: Self = Self { shift: 0 };

    /// The grain of a wheel whose tick is `tick_nanos` ns.
    #[inline]
    pub(crate) fn of_tick(tick_nanos: u64) -> Self {
        let longest = tick_nanos.min(u64::from(u32::MAX));
        Self {
            shift: (u64::BITS - longest.leading_zeros()).saturating_sub(u16::BITS) as u8,
        }
    }

    /// `offset` in grains, rounded up, at most [`NO_BOUND`].
    #[cfg(feature = "sub-tick")]
    #[inline]
    pub(super) fn up(self, offset: u32) -> u16 {
        let grains = (u64::from(offset) + (1 << self.shift) - 1) >> self.shift;
        grains.min(u64::from(NO_BOUND)) as u16
    }

    /// One grain in nanoseconds.
    #[inline]
    pub(crate) fn unit(self) -> u32 {
        1 << self.shift
    }

    /// `grains` (below [`NO_BOUND`]) in nanoseconds.
    #[cfg(feature = "sub-tick")]
    #[inline]
    pub(super) fn nanos(self, grains: u16) -> u32 {
        u32::from(grains) << self.shift
    }
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "alloc")]
    extern crate alloc;

    #[cfg(any(feature = "alloc", feature = "sub-tick"))]
    use super::*;

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
    #[cfg(feature = "sub-tick")]
    fn a_grain_fits_a_tick_in_16_bits_rounding_up() {
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
}
