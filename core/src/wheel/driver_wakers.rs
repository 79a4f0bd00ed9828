//! Where a wheel keeps its drivers' wakers, so that several drivers may share one wheel.
//!
//! A wheel keeps [`SLOTS`] wakers:
//!
//! * slot 0 for [`Wheel::register_driver`](crate::Wheel::register_driver), one
//!   hand-written driver loop at a time;
//! * the others claimed one each by a [`DriverSlot`](crate::DriverSlot), and given back
//!   when it is dropped. Every [`Driver`](crate::Driver) holds one.
//!
//! A wake that needs a driver wakes every slot in use: any driver can turn the wheel.
//!
//! # Invariants
//!
//! * Bit `k` of `used` is set while slot `k` may hold a live driver's waker.
//! * A claim sets the bit with a compare-and-swap. A release takes the waker out, clears
//!   the bit, and drops the waker last.
//! * Slot 0's bit is set by the first `register_driver`, and stays set.
//! * Only a slot's owner registers into it, so each [`AtomicWaker`] has one registrant
//!   at a time. Any thread may take out of it.
//! * The wake needs no ordering beyond the inbox handshake (the wheel's "Waking the
//!   driver"). A driver claims and registers before it turns.
//! * Its turn ends with a read-modify-write of the plan word, then of the inbox heads of
//!   every shard in use.
//! * An arm pushed after that check synchronises with it. An arm on a shard the word did
//!   not name reads the word after the driver's write. Either way it sees the bit and
//!   the waker.
//!
//! [`DriverSlot`]: crate::DriverSlot

use core::task::Waker;

use crate::sync::atomic_waker::AtomicWaker;
use crate::sync::{AtomicU32, Ordering};

/// Waker slots per wheel: slot 0 and three claimable ones. A fourth driver at once finds
/// none free and turns the wheel at least once a tick instead (see
/// [`DriverSlot::register`](crate::DriverSlot::register)).
pub(crate) const SLOTS: usize = 4;

/// The slot of [`Wheel::register_driver`](crate::Wheel::register_driver).
const SHARED: usize = 0;

pub(crate) struct DriverWakers {
    wakers: [AtomicWaker; SLOTS],
    /// Bit `k`: slot `k` is in use.
    used: AtomicU32,
}

impl DriverWakers {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            #[cfg(not(punctual_loom))]
            let wakers = [const { AtomicWaker::new() }; SLOTS];
            #[cfg(punctual_loom)]
            let wakers = core::array::from_fn(|_| AtomicWaker::new());
            Self { wakers, used: AtomicU32::new(0) }
        }
    }

    /// Registers the waker of the hand-written driver loop (slot 0).
    pub(crate) fn register_shared(&self, waker: &Waker) {
        if self.used.load(Ordering::Relaxed) & (1 << SHARED) == 0 {
            self.used.fetch_or(1 << SHARED, Ordering::AcqRel);
        }
        self.wakers[SHARED].register(waker);
    }

    /// Claims a free slot other than slot 0; `None` when every one is taken.
    pub(crate) fn claim(&self) -> Option<usize> {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            // The lowest clear bit above slot 0, if it is a slot.
            let slot = (!(used | (1 << SHARED))).trailing_zeros() as usize;
            if slot >= SLOTS {
                return None;
            }
            match self.used.compare_exchange_weak(
                used,
                used | (1 << slot),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(slot),
                Err(actual) => used = actual,
            }
        }
    }

    /// Registers `waker` in `slot`, which the caller claimed and owns. Returns whether the
    /// slot was untouched: nothing woke its driver since its last registration (see
    /// `AtomicWaker::register`).
    pub(crate) fn register(&self, slot: usize, waker: &Waker) -> bool {
        debug_assert!(slot != SHARED && self.used.load(Ordering::Relaxed) & (1 << slot) != 0);
        self.wakers[slot].register(waker)
    }

    /// Gives back a claimed `slot`: takes the waker out, frees the slot, wakes the drivers
    /// that remain, then drops the waker (a drop that panics then keeps no slot claimed).
    ///
    /// The others are woken because the plan the leaving driver made may be one that only
    /// it was going to carry out: an arm later than that plan wakes no one, and a driver
    /// that left the wheel idle and was not woken skips its turns (see `Driver`).
    pub(crate) fn release(&self, slot: usize) {
        let waker = self.wakers[slot].take();
        self.used.fetch_and(!(1 << slot), Ordering::Release);
        self.wake_all();
        drop(waker);
    }

    /// Wakes the driver in every slot in use. A waker whose `wake` panics does not keep
    /// the wake from the drivers after it: they are woken as the panic unwinds (a second
    /// waker that panics then aborts, as any panic during unwinding does).
    pub(crate) fn wake_all(&self) {
        self.wake_all_but(None);
    }

    /// [`wake_all`](Self::wake_all), except the driver in slot `skip`, if any.
    pub(crate) fn wake_all_but(&self, skip: Option<usize>) {
        let skipped = skip.map_or(0, |slot| 1 << slot);
        let mut rest = WakeOnUnwind {
            wakers: self,
            slots: self.used.load(Ordering::Acquire) & !skipped,
        };
        self.wake_slots(&mut rest.slots);
        core::mem::forget(rest);
    }

    /// Wakes the slots of `slots`, clearing each bit before its wake.
    fn wake_slots(&self, slots: &mut u32) {
        while *slots != 0 {
            let slot = slots.trailing_zeros() as usize;
            *slots &= *slots - 1;
            if let Some(waker) = self.wakers[slot].take() {
                waker.wake();
            }
        }
    }
}

/// The slots [`DriverWakers::wake_all`] has yet to wake, woken if it unwinds.
struct WakeOnUnwind<'a> {
    wakers: &'a DriverWakers,
    slots: u32,
}

impl Drop for WakeOnUnwind<'_> {
    fn drop(&mut self) {
        self.wakers.wake_slots(&mut self.slots);
    }
}
