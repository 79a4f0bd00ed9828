//! One deadline's slot in the wheel: its state word, its deadline, its waker and the links
//! of the lists it may be on.
//!
//! # State field
//!
//! `state` is a `u32`:
//!
//! | bits  | name        | meaning                                                       |
//! |-------|-------------|---------------------------------------------------------------|
//! | 0     | `HANDLE`    | a `Deadline` (or `Sleep`) owns the entry                      |
//! | 1     | `WHEEL`     | the wheel owns the entry: arm inbox, a slot, or being fired    |
//! | 2     | `FIRED`     | outcome: the deadline passed                                  |
//! | 3     | `CANCELLED` | outcome: the handle let go before the deadline passed         |
//! | 4..32 | generation  | bumped each time the entry is freed, for debug checks         |
//!
//! An entry is *free* when both ownership bits are clear. Its life is:
//!
//! ```text
//!   free ──arm──▶ HANDLE|WHEEL ──fire (CAS)───▶ HANDLE|WHEEL|FIRED ──┬─ handle lets go ─▶ WHEEL|FIRED ─ wheel lets go ─▶ free
//!                      │                                               └─ wheel lets go ─▶ HANDLE|FIRED ─ handle lets go ─▶ free
//!                      └──cancel (CAS)─▶ WHEEL|CANCELLED ──driver unlinks it──▶ free
//! ```
//!
//! The outcome is decided by exactly one compare-and-swap out of `HANDLE|WHEEL`: the
//! driver's to `FIRED` or the handle's to `CANCELLED`. Whoever clears the last ownership bit
//! frees the entry, so the driver never touches an entry (its waker in particular) after it
//! was reused by another deadline.
//!
//! # Links
//!
//! * `slot_next`: the next entry on whichever singly linked list the entry is on: the free
//!   list while free, the arm inbox from arming until the driver takes it, then its slot
//!   list. An entry is on one of them at a time, and each reader takes `slot_next` before
//!   handing the entry on (the driver reads an inbox entry's successor before it links
//!   the entry into a slot).
//! * `slot_prev`: the previous entry on the slot list (`NIL` at its head), or `UNLINKED`
//!   when the entry is on no slot list. With `slot_next`, touched on a slot list only by
//!   the thread that holds the driver role.
//! * `cancel_link`: the next entry on the cancel inbox (an entry may be there while it is
//!   still on the arm inbox or a slot list).
//!
//! Links are `Relaxed` atomics, so that no `unsafe` is needed; the lists' heads carry the
//! ordering. Everything fits 40 bytes on 64-bit targets (32 on 32-bit ones): four `u32`
//! links and state, the `u64` deadline, and the waker slot's two words (the slot keeps its
//! state in the low bits of the waker's vtable pointer: see `atomic_waker`).

use crate::sync::atomic_waker::AtomicWaker;
use crate::sync::{AtomicU32, Ordering, UnsafeCell};
use crate::time::Reading;
pub(crate) use crate::wheel::link::{Index, NIL, UNLINKED};
use crate::wheel::link::{Link, NIL_ZERO, UNLINKED_ZERO};

/// A link that starts out `NIL` (stored as zero: see `link`).
pub(crate) type NextLink = Link<NIL_ZERO>;
/// A link that starts out `UNLINKED` (stored as zero: see `link`).
pub(crate) type PrevLink = Link<UNLINKED_ZERO>;

pub(crate) const HANDLE: u32 = 0b0001;
pub(crate) const WHEEL: u32 = 0b0010;
pub(crate) const FIRED: u32 = 0b0100;
pub(crate) const CANCELLED: u32 = 0b1000;
const FLAG_BITS: u32 = 4;
const FLAGS: u32 = (1 << FLAG_BITS) - 1;

/// The state word of an armed entry of generation `generation`.
#[inline]
pub(crate) const fn armed(generation: u32) -> u32 {
    generation | HANDLE | WHEEL
}

/// The generation bits of a state word.
#[inline]
pub(crate) const fn generation(state: u32) -> u32 {
    state & !FLAGS
}

/// A slot of the wheel's slab. Public only to name it in [`Storage`](crate::Storage)'s
/// sealed methods; not reachable from outside the crate.
///
/// Entries are packed: an entry is written by whichever thread arms or releases it, and
/// two threads using entries on one cache line would pass it back and forth on every
/// operation, so each shard takes untouched entries in blocks of whole 128-byte pairs of
/// lines (see `storage`), an entry freed on a shard goes back on that shard's free list,
/// and a shard takes another shard's freed entries only when the storage would otherwise
/// grow (see `Wheel::take_free`).
pub struct Entry {
    pub(crate) state: AtomicU32,
    pub(crate) cancel_link: NextLink,
    pub(crate) slot_prev: PrevLink,
    pub(crate) slot_next: NextLink,
    /// The deadline: the clock reading, in nanoseconds, from which it may fire (its tick
    /// is derived from it). Written by the arming thread while it owns the entry
    /// exclusively, read by the driver after the arm inbox hands the entry over.
    due: UnsafeCell<Reading>,
    pub(crate) waker: AtomicWaker,
}

// SAFETY: `due` is written only by the arming thread while it owns the entry exclusively:
// it took the entry off a free list (its own shard's, or stolen from another's: an Acquire
// pop after the Release push that freed it, itself after the AcqRel read-modify-write
// that cleared the last owner's bit) or fresh from the bump counter (never used before).
// The write comes before the Release push onto the arm inbox; `due` is then only read:
// by the driver after its Acquire take of that inbox, and by the deadline that owns the
// entry (its `HANDLE` bit set), on the thread that armed it or one the deadline moved to
// through a synchronising move. No one writes it again until the entry is freed, which
// needs both ownership bits clear (see `HANDLE` and `WHEEL`). Every other field is
// atomic. (On 32-bit targets the free list's ABA tag is 16 bits: see `lists`.)
unsafe impl Sync for Entry {}
// SAFETY: as for `Sync`; nothing in an entry is tied to a thread.
unsafe impl Send for Entry {}

impl Entry {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            Self {
                state: AtomicU32::new(0),
                cancel_link: NextLink::new(),
                slot_prev: PrevLink::new(),
                slot_next: NextLink::new(),
                due: UnsafeCell::new(Reading::ZERO),
                waker: AtomicWaker::new(),
            }
        }
    }

    /// Sets the deadline, a reading of the wheel's clock.
    ///
    /// # Safety
    ///
    /// * The caller owns the entry exclusively: it popped it from the free list and has not
    ///   published it on the arm inbox yet.
    pub(crate) unsafe fn set_due(&self, at: Reading) {
        // SAFETY: exclusive ownership, by the caller's contract.
        self.due.with_mut(|due| unsafe { *due = at });
    }

    /// The deadline, a reading of the wheel's clock.
    ///
    /// # Safety
    ///
    /// * The caller holds the driver role and received the entry through the arm inbox
    ///   (whose Acquire swap orders this read after the arming thread's write), or owns
    ///   the entry as its deadline (which armed it, or was moved here with
    ///   synchronisation after arming), or cancelled it and has not queued the cancel
    ///   yet (the entry cannot be reclaimed, and armed again, before that).
    pub(crate) unsafe fn due(&self) -> Reading {
        // SAFETY: no writer exists while the wheel owns the entry, by the caller's contract.
        self.due.with(|due| unsafe { *due })
    }

    /// Resets the entry for its next life and bumps the generation. Returns the last
    /// deadline's waker, if the entry still held one, for the caller to drop once the entry
    /// is back on a free list: a waker whose drop panics then loses no entry.
    ///
    /// # Safety
    ///
    /// * The caller owns the entry exclusively: both ownership bits are clear, and the
    ///   caller cleared the last one with an Acquire read-modify-write, so every access of
    ///   the other owner happened before.
    #[must_use = "drop the old waker after the entry is published"]
    pub(crate) unsafe fn recycle(&self) -> Option<core::task::Waker> {
        // SAFETY: exclusive ownership, by the caller's contract.
        let old = unsafe { self.waker.take_exclusive() };
        self.slot_prev.store(UNLINKED, Ordering::Relaxed);
        self.slot_next.store(NIL, Ordering::Relaxed);
        let state = self.state.load(Ordering::Relaxed);
        debug_assert_eq!(state & (HANDLE | WHEEL), 0, "recycling an owned entry");
        self.state.store(
            generation(state).wrapping_add(1 << FLAG_BITS),
            Ordering::Relaxed,
        );
        old
    }
}

/// Asks the CPU to bring `entry` into its cache ahead of use: a hint, with no effect on
/// behaviour. The lists are threaded through the entries, so a walk would otherwise stall
/// on each entry's cache miss in turn; fetching the next one while the current one is
/// handled overlaps them. A 40-byte entry may straddle two lines, so both ends are asked
/// for.
#[inline(always)]
#[allow(unused_unsafe)] // `_mm_prefetch` is a safe call on compilers that allow it
pub(crate) fn prefetch(entry: &Entry) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(punctual_loom)))]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (entry as *const Entry).cast::<i8>();
        let last = first.wrapping_add(core::mem::size_of::<Entry>() - 1);
        // SAFETY: a prefetch only hints the cache: it never faults and reads or writes
        // nothing the program can see; SSE, which provides it, is part of the x86-64
        // baseline.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            // Known at compile time: only an entry smaller than a line's alignment can
            // straddle two.
            if core::mem::align_of::<Entry>() < 64 {
                _mm_prefetch::<_MM_HINT_T0>(last);
            }
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(punctual_loom))))]
    let _ = entry;
}

impl core::fmt::Debug for Entry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Entry")
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

pub(crate) mod sealed {
    use super::{Entry, Index};
    use crate::wheel::heads::Table;

    /// The entries of a wheel, by index: what the lists, the levels and the wheel need of
    /// a [`Storage`](crate::Storage), which it is the sealed part of (only this crate
    /// implements it). Here, beside the entry, so that the lists and levels depend on
    /// nothing above them (not on the storages, which know the shard count).
    pub trait Slab: Sync {
        /// Untouched entries a shard takes at once (see `Wheel::take_fresh`).
        const FRESH_BLOCK: u32 = 1;

        /// The entry at `index`.
        ///
        /// # Panics
        ///
        /// If `index` was never made usable by [`Slab::reserve`] (a bug in the wheel).
        fn entry(&self, index: Index) -> &Entry;

        /// Makes `index` usable, allocating if the storage grows. `false` when the storage
        /// cannot hold `index`. Called with increasing indices.
        fn reserve(&self, index: Index) -> bool;

        /// How many entries are usable now.
        fn usable(&self) -> usize;

        /// The levels' slot heads, which the storage keeps at the width its capacity
        /// needs and for the number of levels it chose (see `heads`).
        type Heads: Table;

        /// How many levels of 64 slots the wheel has (2 to 6).
        const LEVELS: usize = <Self::Heads as Table>::LEVELS;

        /// The levels' slot heads.
        fn heads(&self) -> &Self::Heads;
    }
}

pub(crate) use sealed::Slab;
