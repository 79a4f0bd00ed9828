//! The driver role: taking it, asking its holder for a turn, letting go, starting over.
//!
//! * `role` is one word: [`DRIVING`] while a thread holds the role, [`REQUESTED`] when
//!   another asked for a turn meanwhile.
//! * Only the holder touches the wheel's `driver` state. It takes the role with Acquire
//!   and lets go with Release.
//! * A thread that finds the role held sets `REQUESTED` (Release) and returns at once.
//! * The holder lets go with a compare-and-swap from `DRIVING` alone. If a request came
//!   in, the swap fails: it takes the request (Acquire) and turns again.
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

/// `role`: a thread holds the driver role.
const DRIVING: u32 = 0b01;
/// `role`: a thread asked for a turn while the role was held.
const REQUESTED: u32 = 0b10;

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Advances to reading `now` if the driver role is free, else leaves a request for its
    /// holder. Returns the reading of the planned next turn, [`Reading::END`] if idle.
    pub(super) fn turn_at(&self, mut now: Reading, driver: Option<usize>) -> Reading {
        let mut role = self.role.load(Ordering::Relaxed);
        loop {
            let (next, success) = if role & DRIVING == 0 {
                (DRIVING, Ordering::Acquire)
            } else {
                // Release: the holder, acquiring the request, also sees our clock reading.
                (role | REQUESTED, Ordering::Release)
            };
            match self
                .role
                .compare_exchange_weak(role, next, success, Ordering::Relaxed)
            {
                Ok(_) if next == DRIVING => break,
                Ok(_) => {
                    // The holder will turn for us, and may plan anew as it does (for a
                    // deadline armed meanwhile, say), with no one to tell: the plan read
                    // now may be out of date by the time the caller sleeps on it. So ask
                    // to be turned again by the next tick boundary at the latest, never
                    // "idle".
                    let tick = self.ticks().floor(now);
                    let planned = self.plan_reading(self.planned_turn(tick));
                    let next_tick = self.tick_start(tick.after(1)).min(LAST);
                    return planned.min(next_tick);
                }
                Err(actual) => role = actual,
            }
        }
        // Lets go of the role if a waker panics during the turn, so the wheel keeps
        // working: its structure is consistent at every wake (see `wake_fired`).
        struct ReleaseOnUnwind<'a>(&'a AtomicU32);
        impl Drop for ReleaseOnUnwind<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Release);
            }
        }
        let unwind = ReleaseOnUnwind(&self.role);
        // Whether a turn took the wheel out of idle (see "Waking the driver").
        let mut woke_from_idle = false;
        loop {
            // SAFETY: this thread holds the driver role (the compare-and-swap above, or the
            // failed release below), the only licence to touch `driver`; the reference
            // does not outlive this statement.
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
                        // After the role is let go: a driver woken turns at once. The
                        // turning driver knows the plan it returns.
                        self.driver_wakers.wake_all_but(driver);
                    }
                    return planned;
                }
                Err(_) => {
                    // A request came in: keep the role, take the request, and turn again
                    // with a reading no older than the requester's.
                    self.role.fetch_and(!REQUESTED, Ordering::Acquire);
                    now = now.max(self.now());
                }
            }
        }
    }

    /// Starts the wheel over, as a new wheel, for a clock whose readings no longer follow
    /// the ones it served: one that now reads another source, earlier or much later than
    /// the last turn's reading. The last turn's plan and the tick it reached are
    /// forgotten, so the next turn starts from the clock's reading then, as a new wheel's
    /// first turn does: it does not linger, and nothing is placed or fired relative to
    /// the old readings (a turn never goes below the tick it reached, which on a clock
    /// now reading earlier would fire deadlines early, and a plan far ahead of the new
    /// readings would keep arms from waking the driver). The entries it grew, its free
    /// lists and its counters stay.
    ///
    /// Only for a wheel that nothing is armed on and that no driver turns (its drivers
    /// have stopped, and will start again after this). Returns `false` and changes
    /// nothing if an entry is in use ([`occupied`](Wheel::occupied) is not 0), or a
    /// turn is in progress on another thread.
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
        // SAFETY: this thread holds the driver role (the compare-and-swap above), the only
        // licence to touch `driver`; the reference does not outlive the closure.
        let restarted = self.driver.with_mut(|state| unsafe {
            let state = &mut *state;
            // Empty: no entry in the levels, on the to-wake list or handed off.
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
            // Idle, as a new wheel is marked before its first turn; the shards' marks
            // stay (a mark only makes the driver look at a shard's inboxes).
            self.plan.next_wake.store(0, Ordering::Relaxed);
            self.plan.offset.store(0, Ordering::Relaxed);
            self.plan.word.fetch_and(!ACTIVE, Ordering::AcqRel);
        }
        if self.role.swap(0, Ordering::AcqRel) & REQUESTED != 0 {
            // A thread asked for a turn meanwhile: it is owed one.
            self.turn_at(self.now(), None);
        }
        restarted
    }
}
