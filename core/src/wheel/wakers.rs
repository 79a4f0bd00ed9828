//! Places for wakers: drivers' ([`DriverWakers`]) and degraded deadlines'
//! ([`DegradedWakers`]).
//!
//! # Drivers' wakers: [`SLOTS`] of them, so that several drivers may share one wheel
//!
//! * Slot 0 is `register_driver`'s (its bit set at the first, for good); a
//!   [`DriverSlot`](crate::DriverSlot) claims another. Only a slot's owner registers
//!   into it: each [`AtomicWaker`] has one registrant.
//! * A wake that needs a driver wakes every slot in use: any driver can turn the wheel.
//! * Bit `k` of `used` is set while slot `k` may hold a live driver's waker. A claim sets
//!   it by CAS; a release takes the waker out, clears the bit, and drops the waker last.
//! * A driver claims and registers before it turns, and its turn ends with the inbox
//!   handshake, so an arm that must wake it sees the bit and the waker.
//!
//! # Degraded deadlines' wakers
//!
//! * A degraded deadline (the storage was full) leaves its waker in one of [`PLACES`]
//!   places, for the first turn at a later tick than its reading's to wake. A place holds
//!   one waker per task, a task one place at most; with none free, the deadline asks to
//!   be polled again at once.
//! * `word` holds two bits per place: `LOCK` (a thread is in it), `FULL` (a waker). A
//!   thread owns a place from the `fetch_or` setting `LOCK` to the write clearing it; a
//!   locked place is passed by. The waker is cloned before any place is locked.
//! * Leaving ends with a `fetch_or` of [`DEGRADED`] into the plan word (AcqRel), and wakes
//!   the drivers if the plan is idle or later than the next tick. The driver clears
//!   `DEGRADED` before it looks, and publishes by read-modify-write of the same word: it
//!   reads `DEGRADED` and looks again, or the deadline reads the plan.
//!
//! [`DEGRADED`]: super::role::DEGRADED

use crate::sync::atomic_waker::AtomicWaker;
use crate::sync::{AtomicU32, Ordering, UnsafeCell};
use crate::time::Tick;
use core::task::Waker;

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
            let wakers = crate::sync::array_of![AtomicWaker::new(); SLOTS];
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

/// Places per wheel for degraded deadlines' wakers.
pub(crate) const PLACES: usize = 4;

/// Place `place`'s `LOCK` and `FULL` bits.
const fn bits(place: usize) -> (u32, u32) {
    (1 << (2 * place), 2 << (2 * place))
}

pub(crate) struct DegradedWakers {
    /// Place `k`: bit `2k` locked, bit `2k + 1` full.
    word: AtomicU32,
    places: [Place; PLACES],
}

struct Place {
    waker: UnsafeCell<Option<Waker>>,
    /// The tick the waker was left at.
    tick: UnsafeCell<Tick>,
}

// SAFETY: a place's cells are touched only under its LOCK bit (Acquire to take, Release
// to give back); `Waker` is `Send + Sync`.
unsafe impl Sync for DegradedWakers {}

impl DegradedWakers {
    crate::sync::const_fn! {
        pub(crate) fn new() -> Self {
            let places = crate::sync::array_of![
                Place { waker: UnsafeCell::new(None), tick: UnsafeCell::new(Tick::new(0)) };
                PLACES
            ];
            Self { word: AtomicU32::new(0), places }
        }
    }

    /// Leaves `waker` for the first turn after tick `tick`. `false`: no place free.
    pub(crate) fn leave(&self, waker: &Waker, tick: Tick) -> bool {
        let mut mine = Some(waker.clone());
        for (index, place) in self.places.iter().enumerate() {
            let (lock, full) = bits(index);
            let word = self.word.fetch_or(lock, Ordering::Acquire);
            if word & lock != 0 {
                continue;
            }
            if word & full != 0 {
                // SAFETY: this thread holds the place's lock.
                let same_task = place.waker.with(|held| unsafe {
                    (*held).as_ref().is_some_and(|held| held.will_wake(waker))
                });
                self.word.fetch_and(!lock, Ordering::Release);
                if same_task {
                    return true;
                }
                continue;
            }
            // SAFETY: as above; the place is empty, so nothing is overwritten but `None`.
            place.waker.with_mut(|held| unsafe { *held = mine.take() });
            // SAFETY: as above.
            place.tick.with_mut(|held| unsafe { *held = tick });
            self.word.fetch_xor(lock | full, Ordering::Release);
            return true;
        }
        false
    }

    /// Wakes every waker left before tick `now`. Returns whether any place still holds
    /// one or is being filled. A panicking `wake` leaves the later places to the next turn.
    pub(crate) fn wake_before(&self, now: Tick) -> bool {
        let mut waiting = false;
        for (index, place) in self.places.iter().enumerate() {
            let (lock, full) = bits(index);
            if self.word.load(Ordering::Relaxed) & (lock | full) == 0 {
                continue;
            }
            let word = self.word.fetch_or(lock, Ordering::Acquire);
            if word & lock != 0 {
                waiting = true;
                continue;
            }
            if word & full == 0 {
                self.word.fetch_and(!lock, Ordering::Release);
                continue;
            }
            // SAFETY: this thread holds the place's lock.
            let left_at = place.tick.with(|tick| unsafe { *tick });
            if left_at >= now {
                self.word.fetch_and(!lock, Ordering::Release);
                waiting = true;
                continue;
            }
            // SAFETY: as above.
            let waker = place.waker.with_mut(|held| unsafe { (*held).take() });
            self.word.fetch_and(!(lock | full), Ordering::Release);
            if let Some(waker) = waker {
                waker.wake();
            }
        }
        waiting
    }
}
