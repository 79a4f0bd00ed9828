//! One deadline's entry: its `state` word (below), deadline, waker and list links.
//!
//! | bits  | name        | meaning                                                       |
//! |-------|-------------|---------------------------------------------------------------|
//! | 0     | `HANDLE`    | a `Deadline` (or `Sleep`) owns the entry                      |
//! | 1     | `WHEEL`     | the wheel owns the entry: arm inbox, a slot, or being fired    |
//! | 2     | `FIRED`     | outcome: the deadline passed                                  |
//! | 3     | `CANCELLED` | outcome: the handle let go before the deadline passed         |
//! | 4..32 | generation  | bumped each time the entry is freed, for debug checks         |
//!
//! An entry is *free* when both ownership bits are clear:
//!
//! ```text
//!   free ──arm──▶ HANDLE|WHEEL ──fire (CAS)───▶ HANDLE|WHEEL|FIRED ──┬─ handle lets go ─▶ WHEEL|FIRED ─ wheel lets go ─▶ free
//!                      │                                               └─ wheel lets go ─▶ HANDLE|FIRED ─ handle lets go ─▶ free
//!                      └──cancel (CAS)─▶ WHEEL|CANCELLED ──driver unlinks it──▶ free
//! ```
//!
//! * The outcome is decided by one CAS out of `HANDLE|WHEEL`: the driver's to `FIRED` or
//!   the handle's to `CANCELLED`.
//! * Whoever clears the last ownership bit frees the entry: the driver never touches an
//!   entry (its waker in particular) once another deadline may reuse it.
//! * `slot_next` links the one list the entry is on (free, arm inbox, slot, to-wake,
//!   hand-off); each reader takes it before handing the entry on. `cancel_link` links the
//!   cancel inbox, which overlaps the others. `Relaxed`: the lists' heads order them.
//! * A [`Link<BIAS>`] stores `index + BIAS`, wrapping, so that a new wheel is all zero
//!   bytes: `NIL` for bias 1 ([`NIL_ZERO`]), `UNLINKED` (`slot_prev`) for bias 2.

use crate::sync::atomic_waker::AtomicWaker;
use crate::sync::{AtomicU32, Ordering, UnsafeCell};
use crate::time::Reading;

pub(crate) type NextLink = Link<NIL_ZERO>;
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
pub struct Entry {
    pub(crate) state: AtomicU32,
    pub(crate) cancel_link: NextLink,
    pub(crate) slot_prev: PrevLink,
    pub(crate) slot_next: NextLink,
    /// The reading from which the deadline may fire.
    due: UnsafeCell<Reading>,
    pub(crate) waker: AtomicWaker,
}

// SAFETY: `due` is written only by the arming thread, which owns the entry alone, before
// its Release push onto the arm inbox; then only read (the driver after its Acquire take,
// the owning deadline) until both ownership bits clear. Every other field is atomic.
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

    /// Sets the deadline.
    ///
    /// # Safety
    ///
    /// * The caller owns the entry alone: taken, and not yet pushed onto the arm inbox.
    pub(crate) unsafe fn set_due(&self, at: Reading) {
        // SAFETY: exclusive ownership, by the caller's contract.
        self.due.with_mut(|due| unsafe { *due = at });
    }

    /// The deadline.
    ///
    /// # Safety
    ///
    /// * The caller holds the driver role and took the entry off the arm inbox, or owns
    ///   it as its deadline, or cancelled it and has not queued the cancel yet.
    pub(crate) unsafe fn due(&self) -> Reading {
        // SAFETY: by the caller's contract, the write happened before and none is to come.
        self.due.with(|due| unsafe { *due })
    }

    /// Resets the entry and bumps the generation; returns the old waker to drop later.
    ///
    /// # Safety
    ///
    /// * The caller cleared the last ownership bit by Acquire read-modify-write.
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

/// Asks the CPU to cache `entry` (both ends: it may straddle two lines). A hint only.
#[inline(always)]
#[allow(unused_unsafe)] // `_mm_prefetch` is a safe call on compilers that allow it
pub(crate) fn prefetch(entry: &Entry) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(punctual_loom)))]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (entry as *const Entry).cast::<i8>();
        let last = first.wrapping_add(core::mem::size_of::<Entry>() - 1);
        // SAFETY: a prefetch never faults and has no visible effect; SSE is baseline
        // on x86-64.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            // Only an entry aligned below a line can straddle two.
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

/// An entry index. `NIL` ends a list.
pub(crate) type Index = u32;
pub(crate) const NIL: Index = u32::MAX;
/// `slot_prev` of an entry that is on no slot list.
pub(crate) const UNLINKED: Index = u32::MAX - 1;

pub(crate) const NIL_ZERO: u32 = 1;
pub(crate) const UNLINKED_ZERO: u32 = 2;

#[inline(always)]
const fn encode<const BIAS: u32>(index: Index) -> u32 {
    index.wrapping_add(BIAS)
}

#[inline(always)]
const fn decode<const BIAS: u32>(stored: u32) -> Index {
    stored.wrapping_sub(BIAS)
}

/// `Link`'s compare-and-swaps, strong and weak: the atomic's, on biased indices.
macro_rules! cas {
    ($($name:ident),*) => {$(
        #[inline(always)]
        pub(crate) fn $name(
            &self,
            current: Index,
            new: Index,
            success: Ordering,
            failure: Ordering,
        ) -> Result<Index, Index> {
            let (current, new) = (encode::<BIAS>(current), encode::<BIAS>(new));
            self.0
                .$name(current, new, success, failure)
                .map(decode::<BIAS>)
                .map_err(decode::<BIAS>)
        }
    )*};
}

/// An atomic entry index, stored biased by `BIAS`.
pub(crate) struct Link<const BIAS: u32>(AtomicU32);

impl<const BIAS: u32> Link<BIAS> {
    crate::sync::const_fn! {
        /// A link stored as zero.
        pub(crate) fn new() -> Self {
            Self(AtomicU32::new(0))
        }
    }

    #[inline(always)]
    pub(crate) fn load(&self, order: Ordering) -> Index {
        decode::<BIAS>(self.0.load(order))
    }

    #[inline(always)]
    pub(crate) fn store(&self, index: Index, order: Ordering) {
        self.0.store(encode::<BIAS>(index), order);
    }

    #[inline(always)]
    pub(crate) fn swap(&self, index: Index, order: Ordering) -> Index {
        decode::<BIAS>(self.0.swap(encode::<BIAS>(index), order))
    }

    /// A read-modify-write that changes nothing, ordered with the link's others.
    #[inline(always)]
    pub(crate) fn read_modify(&self, order: Ordering) -> Index {
        decode::<BIAS>(self.0.fetch_or(0, order))
    }

    cas!(compare_exchange, compare_exchange_weak);
}

/// An entry index owned by the driver, stored as `index + 1`.
#[derive(Clone, Copy)]
pub(crate) struct PlainLink(u32);

impl PlainLink {
    pub(crate) const NIL: Self = Self(0);

    #[inline(always)]
    pub(crate) const fn get(self) -> Index {
        decode::<NIL_ZERO>(self.0)
    }

    #[inline(always)]
    pub(crate) const fn new(index: Index) -> Self {
        Self(encode::<NIL_ZERO>(index))
    }
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn zero_bytes_read_as_the_initial_index() {
        assert_eq!(Link::<NIL_ZERO>::new().load(Ordering::Relaxed), NIL);
        assert_eq!(
            Link::<UNLINKED_ZERO>::new().load(Ordering::Relaxed),
            UNLINKED
        );
        assert_eq!(PlainLink::NIL.get(), NIL);
    }

    #[test]
    fn every_index_round_trips() {
        for index in [0, 1, 2, 1000, u32::MAX - 3, UNLINKED, NIL] {
            let next = Link::<NIL_ZERO>::new();
            next.store(index, Ordering::Relaxed);
            assert_eq!(next.load(Ordering::Relaxed), index);
            let prev = Link::<UNLINKED_ZERO>::new();
            prev.store(index, Ordering::Relaxed);
            assert_eq!(prev.load(Ordering::Relaxed), index);
            assert_eq!(PlainLink::new(index).get(), index);
        }
        let link = Link::<NIL_ZERO>::new();
        assert_eq!(
            link.compare_exchange(NIL, 7, Ordering::Relaxed, Ordering::Relaxed),
            Ok(NIL)
        );
        assert_eq!(
            link.compare_exchange(NIL, 8, Ordering::Relaxed, Ordering::Relaxed),
            Err(7)
        );
        assert_eq!(link.swap(NIL, Ordering::Relaxed), 7);
        assert_eq!(link.read_modify(Ordering::Relaxed), NIL);
    }
}
