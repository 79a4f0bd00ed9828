//! The driver role: taking it, asking its holder for a turn, letting go, starting over.
//!
//! * `role`: [`DRIVING`] while a thread holds the role, [`REQUESTED`] if another asked.
//! * Only the holder touches `driver`; it takes the role with Acquire, lets go with Release.
//! * A thread that finds the role held sets `REQUESTED` (Release) and returns at once.
//! * The holder lets go with a CAS from `DRIVING` alone. If a request came in, the CAS
//!   fails: it takes the request (Acquire) and turns again, at a reading no older.
//! * A requester is told to turn again by the next tick boundary at the latest: the
//!   holder may plan anew with no one to tell.
//! * A panicking waker lets go of the role on unwind. The wheel stays consistent at
//!   every wake.

use super::Wheel;
use super::entry::NIL;
use super::levels::Levels;
use super::plan::{ACTIVE, LAST};
use super::storage::Storage;
use crate::clock::Clock;
use crate::sync::{AtomicU32, Ordering};
use crate::time::{Reading, Tick};

const DRIVING: u32 = 0b01;
const REQUESTED: u32 = 0b10;

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Turns at `now` if the role is free, else requests a turn. Returns the next plan.
    pub(super) fn turn_at(&self, mut now: Reading, driver: Option<usize>) -> Reading {
        let mut role = self.role.load(Ordering::Relaxed);
        loop {
            let (next, success) = if role & DRIVING == 0 {
                (DRIVING, Ordering::Acquire)
            } else {
                // Release: the holder, acquiring the request, sees our clock reading.
                (role | REQUESTED, Ordering::Release)
            };
            match self
                .role
                .compare_exchange_weak(role, next, success, Ordering::Relaxed)
            {
                Ok(_) if next == DRIVING => break,
                Ok(_) => {
                    let tick = self.ticks().floor(now);
                    let planned = self.plan_reading(self.planned_turn(tick));
                    let next_tick = self.ticks().start(tick.after(1)).min(LAST);
                    return planned.min(next_tick);
                }
                Err(actual) => role = actual,
            }
        }
        struct ReleaseOnUnwind<'a>(&'a AtomicU32);
        impl Drop for ReleaseOnUnwind<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Release);
            }
        }
        let unwind = ReleaseOnUnwind(&self.role);
        let mut woke_from_idle = false;
        loop {
            // SAFETY: this thread holds the role (the CAS above, or the failed release
            // below); the reference does not outlive this statement.
            let (planned, left_idle) = self
                .driver
                .with_mut(|state| unsafe { self.turn_locked(&mut *state, now) });
            woke_from_idle |= left_idle;
            match self
                .role
                .compare_exchange(DRIVING, 0, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    core::mem::forget(unwind);
                    if woke_from_idle {
                        // After letting go, so a driver woken can turn at once.
                        self.driver_wakers.wake_all_but(driver);
                    }
                    return planned;
                }
                Err(_) => {
                    self.role.fetch_and(!REQUESTED, Ordering::Acquire);
                    now = now.max(self.now());
                }
            }
        }
    }

    /// Starts the wheel over, as a new wheel, for a clock whose readings no longer follow
    /// the ones it served. Entries, free lists and counters stay.
    ///
    /// Only for a wheel with nothing armed and no driver running. Returns `false` and
    /// changes nothing if an entry is [`occupied`](Wheel::occupied) or a turn is running.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use punctual_core::{Fixed, ManualClock, Wheel};
    ///
    /// let wheel: Wheel<ManualClock, Fixed<8>> =
    ///     Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// wheel.advance(Duration::from_secs(3600));
    /// // Nothing armed, no driver: the wheel may start over for another clock.
    /// assert!(wheel.restart());
    /// ```
    pub fn restart(&self) -> bool {
        if self
            .role
            .compare_exchange(0, DRIVING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        // SAFETY: this thread holds the role (the CAS above); the reference does not
        // outlive the closure.
        let restarted = self.driver.with_mut(|state| unsafe {
            let state = &mut *state;
            if self.occupied() != 0 || state.to_wake.get() != NIL || self.handed_off() {
                return false;
            }
            state.levels = Levels::new();
            state.linger_until = Tick::new(0);
            state.handed_at = Tick::new(0);
            state.started = false;
            true
        });
        if restarted {
            // Idle, as a new wheel; the shards' marks stay (they are only a hint to look).
            self.plan.next_wake.store(0, Ordering::Relaxed);
            self.plan.offset.store(0, Ordering::Relaxed);
            self.plan.word.fetch_and(!ACTIVE, Ordering::AcqRel);
        }
        if self.role.swap(0, Ordering::AcqRel) & REQUESTED != 0 {
            self.turn_at(self.now(), None);
        }
        restarted
    }
}
