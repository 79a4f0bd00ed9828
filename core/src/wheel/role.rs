//! The driver role and the plan it publishes.
//!
//! * `role`: [`DRIVING`] while a thread holds the role, [`REQUESTED`] if another asked.
//!   Only the holder touches `driver`; it takes the role with Acquire, lets go with
//!   Release (on unwind too).
//! * A thread that finds the role held sets `REQUESTED` (Release) and returns at once, to
//!   turn again by the next tick boundary at the latest.
//! * The holder lets go with a CAS from `DRIVING` alone. If a request came in, the CAS
//!   fails: it takes the request (Acquire) and turns again, at a reading no older.
//! * The plan word: bit 0 [`ACTIVE`] (clear: idle, as a new wheel is), bits 1.. the
//!   shards in use, bit 31 [`DEGRADED`].

use super::entry::NIL;
use super::levels::Levels;
use super::storage::Storage;
use super::{Wheel, lists};
use crate::clock::Clock;
use crate::sync::{AtomicU32, Ordering};
use crate::time::{Reading, StoredTick, Tick, span_of};

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

/// The last reading a plan names: [`Reading::END`] stands for idle.
pub(super) const LAST: Reading = Reading::from_nanos(u64::MAX - 1);

pub(super) struct Plan {
    /// Low 32 bits of the tick of the driver's next planned turn.
    pub(super) next_wake: AtomicU32,
    /// How far into the tick before `next_wake` the driver turns (ns, saturating): a
    /// whole tick for a higher slot coming down; 0 for a dense slot, or a plan from no
    /// slot (lingering, reclaim horizon), so that arms into it do not wake the driver.
    pub(super) offset: AtomicU32,
    pub(super) word: AtomicU32,
}

/// `Plan::word`: the driver plans a turn.
pub(super) const ACTIVE: u32 = 1;

/// `Plan::word`: a degraded deadline left its waker since the driver last looked.
pub(super) const DEGRADED: u32 = 1 << 31;

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// Divides readings by the tick.
    #[inline]
    pub(crate) fn ticks(&self) -> &StoredTick {
        &self.tick
    }

    /// [`Clock::resolution`], as a span.
    #[inline]
    pub(crate) fn resolution(&self) -> u64 {
        span_of(self.clock.resolution())
    }

    /// The reading a planned tick begins at: `END` only for `Tick::IDLE`.
    pub(super) fn plan_reading(&self, planned: Tick) -> Reading {
        if planned == Tick::IDLE {
            Reading::END
        } else {
            self.ticks().start(planned).min(LAST)
        }
    }

    /// The plan's full tick, rebuilt near `reference`; `Tick::IDLE` only while idle.
    pub(super) fn planned_turn(&self, reference: Tick) -> Tick {
        self.plan_of(self.plan.word.load(Ordering::Relaxed), reference)
    }

    /// [`planned_turn`](Self::planned_turn) after a push onto `shard`, marking the shard
    /// in use first if need be (`lists`).
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(super) fn planned_turn_after_push(&self, reference: Tick, shard: usize) -> Tick {
        let mut word = self.plan.word.load(Ordering::Acquire);
        let bit = lists::in_use_bit(shard);
        if word & bit != bit {
            word = self.mark_in_use(bit);
        }
        self.plan_of(word, reference)
    }

    /// Sets a shard's bit; returns the word with it.
    #[cold]
    pub(super) fn mark_in_use(&self, bit: u32) -> u32 {
        self.plan.word.fetch_or(bit, Ordering::AcqRel) | bit
    }

    /// The plan, given the plan word just read. One rebuilt past the last tick is that
    /// tick's predecessor: it wakes the driver only for arms that would wake it anyway.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(super) fn plan_of(&self, word: u32, reference: Tick) -> Tick {
        if word & ACTIVE == 0 {
            return Tick::IDLE;
        }
        let low = self.plan.next_wake.load(Ordering::Relaxed);
        let reference = reference.get();
        let delta = low.wrapping_sub(reference as u32) as i32 as i64;
        Tick::new(reference.saturating_add_signed(delta).min(u64::MAX - 1))
    }
}
