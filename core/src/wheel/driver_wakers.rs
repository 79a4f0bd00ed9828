//! The drivers' wakers, so that several drivers may share one wheel: [`SLOTS`] of them.
//!
//! * Slot 0 is `register_driver`'s; a [`DriverSlot`](crate::DriverSlot) claims another.
//! * A wake that needs a driver wakes every slot in use: any driver can turn the wheel.
//! * Bit `k` of `used` is set while slot `k` may hold a live driver's waker. A claim sets
//!   it by CAS; a release takes the waker out, clears the bit, and drops the waker last.
//!   Slot 0's bit is set by the first `register_driver`, and stays set.
//! * Only a slot's owner registers into it: each [`AtomicWaker`] has one registrant.
//! * A driver claims and registers before it turns, and its turn ends with the inbox
//!   handshake, so an arm that must wake it sees the bit and the waker.

use core::task::Waker;

use crate::sync::atomic_waker::AtomicWaker;
use crate::sync::{AtomicU32, Ordering};

/// Waker slots per wheel. A driver that finds none free turns at least once a tick.
pub(crate) const SLOTS: usize = 4;

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

    /// Registers the hand-written driver loop's waker (slot 0).
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

    /// Registers `waker` in the caller's claimed `slot`. Returns whether nothing woke it
    /// since its last registration.
    pub(crate) fn register(&self, slot: usize, waker: &Waker) -> bool {
        debug_assert!(slot != SHARED && self.used.load(Ordering::Relaxed) & (1 << slot) != 0);
        self.wakers[slot].register(waker)
    }

    /// Gives back `slot`, wakes the other drivers (its plan may be theirs now), drops the waker.
    pub(crate) fn release(&self, slot: usize) {
        let waker = self.wakers[slot].take();
        self.used.fetch_and(!(1 << slot), Ordering::Release);
        self.wake_all();
        drop(waker);
    }

    /// Wakes the driver in every slot in use; a panicking `wake` wakes the rest on unwind.
    pub(crate) fn wake_all(&self) {
        self.wake_all_but(None);
    }

    /// [`wake_all`](Self::wake_all), except the driver in slot `skip`, if any.
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
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
