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
//! So the timer thread asks to wake a *lead* before its planned turn and spins the rest
//! ([`WakeEarly`]). The lead follows the oversleeps it has seen: a running average with
//! weight 1/8 per timed wake, each oversleep counted up to [`WakeLead::MAX`]. Most timed
//! wakes then land a few microseconds before the turn, and the turn comes on time.
//!
//! Oversleeps are measured on the wheel's clock and sleeps last real time, so the lead
//! means what it says on a clock that keeps real time (`StdClock`, the global wheel's).
//! On any other clock (a [`ManualClock`](punctual_core::ManualClock), a coarse or slowed
//! one) the bounds below still hold.
//!
//! Bounds, which the tests below pin down:
//! - the lead is zero until a timed sleep has been measured, never more than
//!   [`WakeLead::MAX`] (50 µs), and never more than half the wheel's tick;
//! - a spin ends when the clock reaches the planned turn, as soon as the thread is woken
//!   (an earlier deadline was armed), or after twice the lead of real time, whichever
//!   comes first. On a clock that keeps real time that is about the lead; on one that
//!   stops or runs slow it is the time limit;
//! - the thread spins at most once for each planned turn: if the turn it spun towards is
//!   still the plan afterwards (the clock did not get there), it sleeps the rest of the
//!   way, as it did before it had a lead. A clock that stops therefore never keeps it
//!   spinning.
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
    /// The longest lead.
    pub(crate) const MAX: Duration = Duration::from_micros(50);

    /// How long before a planned turn to wake, on a wheel with this `tick`.
    pub(crate) fn lead(&self, tick: Duration) -> Duration {
        Duration::from_nanos(self.average_ns)
            .min(Self::MAX)
            .min(tick / 2)
    }

    /// Records a timed sleep that returned `overslept` after the reading it asked for.
    pub(crate) fn observe(&mut self, overslept: Duration) {
        // At most `MAX`, so the cast is exact, and one preempted wake moves the lead by
        // at most an eighth of `MAX`.
        let ns = overslept.min(Self::MAX).as_nanos() as u64;
        self.average_ns = self.average_ns - self.average_ns / 8 + ns / 8;
    }
}

/// How a timer thread waits for a planned turn: sleep, then spin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wait {
    /// How long to sleep first (zero: do not sleep).
    pub(crate) sleep: Duration,
    /// The longest spin after it, in real time (zero: do not spin).
    pub(crate) spin: Duration,
}

/// A timer thread's waits: its [`WakeLead`], and the planned turn it last spun towards
/// (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct WakeEarly {
    lead: WakeLead,
    spun_towards: Option<Duration>,
}

impl WakeEarly {
    /// How to wait, at reading `now`, for the turn planned at reading `next`, on a wheel
    /// with this `tick`. `None` when the turn is due already.
    pub(crate) fn plan(&mut self, now: Duration, next: Duration, tick: Duration) -> Option<Wait> {
        let wait = next.checked_sub(now).filter(|wait| !wait.is_zero())?;
        let early = if self.spun_towards == Some(next) {
            // Spun towards this turn already and did not reach it: the clock stopped or
            // runs slow. Sleep the rest, as a thread without a lead does.
            Duration::ZERO
        } else {
            self.lead.lead(tick)
        };
        if !early.is_zero() {
            self.spun_towards = Some(next);
        }
        Some(Wait {
            sleep: wait.saturating_sub(early),
            spin: early * 2,
        })
    }

    /// After a sleep that asked to end at reading `asked` and ended at `woke`: whether to
    /// go on to spin (`false`: it ended early, woken for an earlier deadline or
    /// spuriously, so turn now). A sleep that ended on time or late is measured.
    pub(crate) fn slept(&mut self, asked: Duration, woke: Duration) -> bool {
        match woke.checked_sub(asked) {
            Some(overslept) => {
                self.lead.observe(overslept);
                true
            }
            None => false,
        }
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
            early.lead.observe(overslept);
        }
        early
    }

    #[test]
    fn no_lead_before_a_sleep_was_measured() {
        assert_eq!(WakeLead::default().lead(TICK), Duration::ZERO);
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
        let lead = trained(us(8)).lead;
        let gap = us(8) - lead.lead(TICK);
        assert!(
            gap < Duration::from_nanos(100),
            "lead {:?}",
            lead.lead(TICK)
        );
    }

    #[test]
    fn the_lead_shrinks_when_the_oversleeps_do() {
        let mut lead = trained(us(20)).lead;
        for _ in 0..200 {
            lead.observe(us(2));
        }
        let now = lead.lead(TICK);
        assert!(now >= us(1) && now <= us(3), "lead {now:?}");
    }

    #[test]
    fn the_lead_never_passes_its_cap_nor_half_a_tick() {
        let lead = trained(Duration::from_secs(1)).lead;
        assert!(lead.lead(TICK) <= WakeLead::MAX);
        assert!(lead.lead(TICK) > WakeLead::MAX - us(1));
        let small_tick = us(30);
        assert_eq!(lead.lead(small_tick), small_tick / 2);
    }

    #[test]
    fn oversleep_moves_lead_at_most_an_eighth() {
        let mut lead = WakeLead::default();
        lead.observe(Duration::from_secs(3600));
        assert_eq!(lead.lead(TICK), WakeLead::MAX / 8);
    }

    #[test]
    fn sleeps_to_the_lead_then_spins_at_most_twice() {
        let mut early = trained(us(8));
        let lead = early.lead.lead(TICK);
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
        assert_eq!(early.lead.lead(TICK), Duration::ZERO);
        assert!(early.slept(ms(10), ms(10) + us(8)));
        assert_eq!(early.lead.lead(TICK), us(1));
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
