//! How early a timer thread wakes before the turn it planned, and the short spin that
//! covers the rest.
//!
//! A thread that sleeps until an instant runs again some time after it: the kernel's timer
//! fires, then the scheduler runs the thread (on a virtual machine, after resuming a halted
//! virtual processor). On a 2-core VM that is typically 5 to 10 µs. A deadline on a wheel
//! driven by a thread then pays two such delays one after the other: the timer thread's
//! own, then that of the wake it sends to the deadline's task. An executor whose reactor
//! sleeps in the task's thread (async-io's `block_on`) pays only one.
//!
//! So the timer thread asks to wake a *lead* before its planned turn and spins the rest.
//! The lead follows the oversleeps it has seen: a running average with weight 1/8 per
//! timed wake, each oversleep counted up to [`WakeLead::MAX`]. Most timed wakes then land
//! a few microseconds before the turn, and the turn comes on time.
//!
//! Bounds, which the tests below pin down:
//! - the lead is zero until a timed sleep has been measured, never more than
//!   [`WakeLead::MAX`] (50 µs), and never more than half the wheel's tick, so a timer
//!   thread spins at most that long per planned turn;
//! - a spin ends at the planned turn, as soon as the thread is woken (an earlier deadline
//!   was armed), or after twice the lead of real time, whichever comes first: a clock
//!   that stops (a [`ManualClock`](punctual_core::ManualClock) nobody advances) does not
//!   keep the thread spinning.
//!
//! Waking early never fires anything early: deadlines fire in the turn, which reads the
//! clock; a turn before the planned one only finds less to do.

use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use std::time::Instant;

use punctual_core::Clock;

/// How long before a planned turn a timer thread asks to wake (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct WakeLead {
    /// Running average of the oversleeps seen, in nanoseconds, each at most `MAX`.
    average_ns: u64,
}

impl WakeLead {
    /// The longest lead, and so the longest spin before a turn.
    pub(crate) const MAX: Duration = Duration::from_micros(50);

    /// How long before a planned turn to wake, on a wheel with this `tick`.
    pub(crate) fn lead(&self, tick: Duration) -> Duration {
        Duration::from_nanos(self.average_ns)
            .min(Self::MAX)
            .min(tick / 2)
    }

    /// Records a timed sleep that returned `overslept` after the instant it asked for.
    pub(crate) fn observe(&mut self, overslept: Duration) {
        // At most `MAX`, so the cast is exact, and one preempted wake moves the lead by
        // at most an eighth of `MAX`.
        let ns = overslept.min(Self::MAX).as_nanos() as u64;
        self.average_ns = self.average_ns - self.average_ns / 8 + ns / 8;
    }
}

/// Spins until `clock` reads `at`, `woken` is set, or `limit` of real time has passed,
/// whichever comes first.
pub(crate) fn spin_until<C: Clock>(clock: &C, at: Duration, woken: &AtomicBool, limit: Duration) {
    let started = Instant::now();
    while clock.now() < at && !woken.load(Ordering::Relaxed) && started.elapsed() < limit {
        core::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use punctual_core::ManualClock;

    const TICK: Duration = Duration::from_millis(1);

    #[test]
    fn no_lead_before_a_sleep_was_measured() {
        assert_eq!(WakeLead::default().lead(TICK), Duration::ZERO);
    }

    #[test]
    fn the_lead_follows_a_steady_oversleep() {
        let mut lead = WakeLead::default();
        let overslept = Duration::from_micros(8);
        for _ in 0..200 {
            lead.observe(overslept);
        }
        let gap = overslept - lead.lead(TICK);
        assert!(
            gap < Duration::from_nanos(100),
            "lead {:?}",
            lead.lead(TICK)
        );
    }

    #[test]
    fn the_lead_shrinks_when_the_oversleeps_do() {
        let mut lead = WakeLead::default();
        for _ in 0..200 {
            lead.observe(Duration::from_micros(20));
        }
        for _ in 0..200 {
            lead.observe(Duration::from_micros(2));
        }
        let now = lead.lead(TICK);
        assert!(
            now >= Duration::from_micros(1) && now <= Duration::from_micros(3),
            "lead {now:?}"
        );
    }

    #[test]
    fn the_lead_never_passes_its_cap_nor_half_a_tick() {
        let mut lead = WakeLead::default();
        for _ in 0..1000 {
            lead.observe(Duration::from_secs(1));
        }
        assert!(lead.lead(TICK) <= WakeLead::MAX);
        assert!(lead.lead(TICK) > WakeLead::MAX - Duration::from_micros(1));
        let small_tick = Duration::from_micros(30);
        assert_eq!(lead.lead(small_tick), small_tick / 2);
    }

    #[test]
    fn one_long_oversleep_moves_the_lead_by_at_most_an_eighth_of_the_cap() {
        let mut lead = WakeLead::default();
        lead.observe(Duration::from_secs(3600));
        assert_eq!(lead.lead(TICK), WakeLead::MAX / 8);
    }

    #[test]
    fn a_spin_ends_when_the_clock_reaches_the_turn() {
        let clock = ManualClock::new();
        clock.advance(Duration::from_millis(5));
        let woken = AtomicBool::new(false);
        let started = Instant::now();
        // Already there: returns at once, whatever the limit.
        spin_until(
            &clock,
            Duration::from_millis(5),
            &woken,
            Duration::from_secs(60),
        );
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn a_spin_ends_when_the_thread_is_woken() {
        let clock = ManualClock::new();
        let woken = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                woken.store(true, Ordering::Relaxed);
            });
            let started = Instant::now();
            spin_until(
                &clock,
                Duration::from_secs(1),
                &woken,
                Duration::from_secs(60),
            );
            assert!(started.elapsed() < Duration::from_secs(30));
        });
    }

    #[test]
    fn a_spin_on_a_stopped_clock_ends_after_its_limit() {
        let clock = ManualClock::new();
        let woken = AtomicBool::new(false);
        let limit = Duration::from_millis(20);
        let started = Instant::now();
        spin_until(&clock, Duration::from_secs(1), &woken, limit);
        let spun = started.elapsed();
        assert!(spun >= limit, "returned after {spun:?}");
        assert!(spun < Duration::from_secs(30));
    }
}
