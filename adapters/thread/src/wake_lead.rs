//! How early a timer thread wakes before its planned turn, and the spin that covers the
//! rest: a thread that sleeps runs again some µs after its instant (5 to 10 on a 2-core
//! VM), and a deadline on a thread-driven wheel pays that twice (the timer thread's wake,
//! then its task's). Bounds, pinned by the tests below:
//!
//! - the lead is a running average (weight 1/8) of the oversleeps seen, zero until one
//!   was measured, at most [`WakeEarly::MAX`] (50 µs) and half the wheel's tick;
//! - a spin ends when the clock reaches the turn, the thread is woken, or after twice
//!   the lead of real time (a clock that stops or runs slow);
//! - a planned turn is spun towards at most once, then slept for: a stopped clock never
//!   keeps the thread spinning;
//! - waking early fires nothing early: the turn reads the clock.

use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use std::time::Instant;

use punctual_core::Clock;

/// How a timer thread waits for a planned turn: sleep, then spin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wait {
    /// How long to sleep first (zero: do not sleep).
    pub(crate) sleep: Duration,
    /// The longest spin after it, in real time (zero: do not spin).
    pub(crate) spin: Duration,
}

/// A timer thread's lead, and the planned turn it last spun towards.
#[derive(Debug, Default)]
pub(crate) struct WakeEarly {
    /// Running average of the oversleeps seen, in nanoseconds, each at most `MAX`.
    average_ns: u64,
    spun_towards: Option<Duration>,
}

impl WakeEarly {
    /// The longest lead.
    pub(crate) const MAX: Duration = Duration::from_micros(50);

    /// How long before a planned turn to wake, on a wheel with this `tick`.
    fn lead(&self, tick: Duration) -> Duration {
        Duration::from_nanos(self.average_ns)
            .min(Self::MAX)
            .min(tick / 2)
    }

    /// Records a timed sleep that returned `overslept` after the reading it asked for.
    fn observe(&mut self, overslept: Duration) {
        // At most `MAX`: the cast is exact, one preempted wake moves the lead by `MAX / 8`.
        let ns = overslept.min(Self::MAX).as_nanos() as u64;
        self.average_ns = self.average_ns - self.average_ns / 8 + ns / 8;
    }

    /// How to wait, at reading `now`, for the turn planned at reading `next`, on a wheel
    /// with this `tick`. `None` when the turn is due already.
    pub(crate) fn plan(&mut self, now: Duration, next: Duration, tick: Duration) -> Option<Wait> {
        let wait = next.checked_sub(now).filter(|wait| !wait.is_zero())?;
        let early = if self.spun_towards == Some(next) {
            // Spun towards it already: the clock stopped or runs slow. Sleep the rest.
            Duration::ZERO
        } else {
            self.lead(tick)
        };
        if !early.is_zero() {
            self.spun_towards = Some(next);
        }
        Some(Wait {
            sleep: wait.saturating_sub(early),
            spin: early * 2,
        })
    }

    /// After a sleep that asked to end at `asked` and ended at `woke`: whether to spin on
    /// (`false`: it ended early, so turn now). One that ended on time or late is measured.
    pub(crate) fn slept(&mut self, asked: Duration, woke: Duration) -> bool {
        woke.checked_sub(asked)
            .inspect(|&overslept| self.observe(overslept))
            .is_some()
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
    use std::sync::Arc;
    use std::sync::mpsc;

    const TICK: Duration = Duration::from_millis(1);

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A thread-driver wait that has measured `overslept` many times.
    fn trained(overslept: Duration) -> WakeEarly {
        let mut early = WakeEarly::default();
        for _ in 0..200 {
            early.observe(overslept);
        }
        early
    }

    #[test]
    fn no_lead_before_a_sleep_was_measured() {
        assert_eq!(WakeEarly::default().lead(TICK), Duration::ZERO);
        let plan = WakeEarly::default().plan(ms(10), ms(12), TICK);
        assert_eq!(
            plan,
            Some(Wait {
                sleep: ms(2),
                spin: Duration::ZERO
            })
        );
    }

    #[test]
    fn the_lead_follows_a_steady_oversleep() {
        let lead = trained(us(8));
        let gap = us(8) - lead.lead(TICK);
        assert!(
            gap < Duration::from_nanos(100),
            "lead {:?}",
            lead.lead(TICK)
        );
    }

    #[test]
    fn the_lead_shrinks_when_the_oversleeps_do() {
        let mut lead = trained(us(20));
        for _ in 0..200 {
            lead.observe(us(2));
        }
        let now = lead.lead(TICK);
        assert!(now >= us(1) && now <= us(3), "lead {now:?}");
    }

    #[test]
    fn the_lead_never_passes_its_cap_nor_half_a_tick() {
        let lead = trained(Duration::from_secs(1));
        assert!(lead.lead(TICK) <= WakeEarly::MAX);
        assert!(lead.lead(TICK) > WakeEarly::MAX - us(1));
        let small_tick = us(30);
        assert_eq!(lead.lead(small_tick), small_tick / 2);
    }

    #[test]
    fn oversleep_moves_lead_at_most_an_eighth() {
        let mut lead = WakeEarly::default();
        lead.observe(Duration::from_secs(3600));
        assert_eq!(lead.lead(TICK), WakeEarly::MAX / 8);
    }

    #[test]
    fn sleeps_to_the_lead_then_spins_at_most_twice() {
        let mut early = trained(us(8));
        let lead = early.lead(TICK);
        let plan = early.plan(ms(10), ms(12), TICK).expect("a wait");
        assert_eq!(plan.sleep, ms(2) - lead);
        assert_eq!(plan.spin, lead * 2);
    }

    #[test]
    fn turn_closer_than_lead_is_spun_for() {
        let mut early = trained(us(8));
        let plan = early.plan(ms(10), ms(10) + us(3), TICK).expect("a wait");
        assert_eq!(plan.sleep, Duration::ZERO);
        assert!(plan.spin > Duration::ZERO);
    }

    #[test]
    fn a_turn_that_is_due_needs_no_wait() {
        let mut early = trained(us(8));
        assert_eq!(early.plan(ms(10), ms(10), TICK), None);
        assert_eq!(early.plan(ms(11), ms(10), TICK), None);
    }

    #[test]
    fn a_turn_is_spun_towards_once_then_slept_for() {
        // A clock that stopped short of the turn: the second wait for the same turn
        // sleeps all the way instead of spinning again.
        let mut early = trained(us(8));
        let first = early.plan(ms(10), ms(10) + us(3), TICK).expect("a wait");
        assert!(first.spin > Duration::ZERO);
        let again = early.plan(ms(10) + us(1), ms(10) + us(3), TICK);
        assert_eq!(
            again,
            Some(Wait {
                sleep: us(2),
                spin: Duration::ZERO
            })
        );
        // A new turn is spun towards again.
        let next = early.plan(ms(11), ms(12), TICK).expect("a wait");
        assert!(next.spin > Duration::ZERO);
    }

    #[test]
    fn early_wake_turns_at_once_unmeasured() {
        let mut early = WakeEarly::default();
        assert!(!early.slept(ms(10), ms(9)));
        assert_eq!(early.lead(TICK), Duration::ZERO);
        assert!(early.slept(ms(10), ms(10) + us(8)));
        assert_eq!(early.lead(TICK), us(1));
    }

    /// Runs `spin_until` on a thread of its own; how long it spun, or `None` if it had
    /// not returned after 5 s (a spin that never ends fails the test instead of hanging
    /// it).
    fn spin_elsewhere(
        clock: &Arc<ManualClock>,
        at: Duration,
        woken: &Arc<AtomicBool>,
        limit: Duration,
    ) -> Option<Duration> {
        let (tx, rx) = mpsc::channel();
        let (clock, woken) = (Arc::clone(clock), Arc::clone(woken));
        std::thread::spawn(move || {
            let started = Instant::now();
            spin_until(&*clock, at, &woken, limit);
            let _ = tx.send(started.elapsed());
        });
        rx.recv_timeout(Duration::from_secs(5)).ok()
    }

    #[test]
    fn a_spin_ends_when_the_clock_reaches_the_turn() {
        let clock = Arc::new(ManualClock::new());
        let woken = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let mover = Arc::clone(&clock);
        std::thread::spawn(move || {
            std::thread::sleep(ms(20));
            mover.advance(ms(5));
            let _ = tx.send(());
        });
        let spun = spin_elsewhere(&clock, ms(5), &woken, Duration::from_secs(60));
        rx.recv().expect("the clock moved");
        assert!(
            spun.is_some(),
            "still spinning after the clock reached the turn"
        );
    }

    #[test]
    fn a_spin_ends_when_the_thread_is_woken() {
        let clock = Arc::new(ManualClock::new());
        let woken = Arc::new(AtomicBool::new(false));
        let waker = Arc::clone(&woken);
        std::thread::spawn(move || {
            std::thread::sleep(ms(20));
            waker.store(true, Ordering::Relaxed);
        });
        let spun = spin_elsewhere(
            &clock,
            Duration::from_secs(1),
            &woken,
            Duration::from_secs(60),
        );
        assert!(spun.is_some(), "still spinning after a wake");
    }

    #[test]
    fn a_spin_on_a_stopped_clock_ends_after_its_limit() {
        let clock = Arc::new(ManualClock::new());
        let woken = Arc::new(AtomicBool::new(false));
        let limit = ms(20);
        let spun = spin_elsewhere(&clock, Duration::from_secs(1), &woken, limit)
            .expect("still spinning on a stopped clock after 5 s");
        assert!(spun >= limit, "returned after {spun:?}");
    }
}
