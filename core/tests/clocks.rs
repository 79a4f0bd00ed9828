//! When a deadline's time starts and how it reads its clock: a relative deadline starts
//! at its first poll (rule 4 of docs/design.md), an instant is absolute from creation, a
//! future ready at its first poll reads no clock, a coarse clock's resolution is added to
//! every deadline (a budget's too), a turn on a stale reading fires nothing early, and a
//! manual clock moved backwards panics with a clear message and changes nothing.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::{pending, ready};
use core::pin::pin;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use core::task::Poll;
use core::time::Duration;

use punctual_core::{Clock, Fixed, ManualClock, Reading, Wheel};
use support::{CountingWaker, ProbeState, TICK, fixed, is_elapsed, ms, ns, quietly};

#[test]
fn relative_deadline_starts_at_first_poll() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    let mut s = pin!(wheel.sleep(ms(10)));
    wheel.advance(ms(100));
    assert!(
        w.poll(d.as_mut()).is_pending(),
        "time before the first poll was not used up"
    );
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ms(10) - ns(1));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 2);
    assert!(w.poll(d.as_mut()).is_ready());
    assert!(w.poll(s.as_mut()).is_ready());
}

#[test]
fn deadline_at_is_absolute_from_creation() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline_at(Reading::since_origin(ms(150)), pending::<()>()));
    let mut s = pin!(wheel.sleep_until(Reading::since_origin(ms(150))));
    wheel.advance(ms(100));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ms(50) - ns(1));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 2);
    // The error carries the instant as it was given, not the time left at the first poll.
    let e = is_elapsed(w.poll(d.as_mut()));
    assert_eq!(e.instant(), Some(Reading::since_origin(ms(150))));
    assert_eq!(e.duration(), Duration::ZERO);
    assert!(w.poll(s.as_mut()).is_ready());
}

/// A manual clock that counts its reads and has a configurable resolution.
#[derive(Default)]
struct CountingClock {
    nanos: AtomicU64,
    reads: AtomicUsize,
    resolution: Duration,
}

impl CountingClock {
    fn with_resolution(resolution: Duration) -> Self {
        Self {
            resolution,
            ..Self::default()
        }
    }

    fn reads(&self) -> usize {
        self.reads.load(SeqCst)
    }

    fn set(&self, to: Duration) {
        self.nanos.store(to.as_nanos() as u64, SeqCst);
    }
}

impl Clock for CountingClock {
    fn now(&self) -> Duration {
        self.reads.fetch_add(1, SeqCst);
        Duration::from_nanos(self.nanos.load(SeqCst))
    }

    fn resolution(&self) -> Duration {
        self.resolution
    }
}

#[test]
fn ready_at_first_poll_reads_no_clock_arms_nothing() {
    let wheel: Wheel<CountingClock, Fixed<4>> = Wheel::fixed(CountingClock::default(), TICK);
    let w = CountingWaker::new();
    let probe = ProbeState::default();
    probe.set_ready();

    let mut d = pin!(wheel.deadline(ms(10), ready(5)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(5)));
    let mut d = pin!(wheel.deadline_at(Reading::since_origin(ms(10)), probe.probe()));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(7)));
    assert!(probe.dropped());
    // Bad input does not change that: the ready future wins, with no clock read.
    let mut d = pin!(wheel.deadline(Duration::ZERO, ready(1)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(1)));
    let mut d = pin!(wheel.deadline(Duration::MAX, ready(2)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(2)));
    let mut d = pin!(wheel.deadline_at(Reading::ZERO, ready(3)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(3)));

    assert_eq!(wheel.clock().reads(), 0, "the clock was read");
    assert_eq!(wheel.occupied(), 0, "an entry was armed");
    assert_eq!(w.wakes(), 0);
    assert_eq!(wheel.degraded_polls(), 0);
}

#[test]
fn coarse_clock_adds_resolution_to_relative_deadlines() {
    let resolution = ms(2);
    let clock = CountingClock::with_resolution(resolution);
    let wheel: Wheel<CountingClock, Fixed<4>> = Wheel::fixed(clock, TICK);
    let reading = ms(5) + Duration::from_micros(250);
    wheel.clock().set(reading);
    let _ = wheel.turn();

    let w = CountingWaker::new();
    let ws = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    let mut s = pin!(wheel.sleep(ms(10)));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(ws.poll(s.as_mut()).is_pending());
    let earliest = reading + ms(10) + resolution;

    // Just short of duration + resolution after the reading: pending.
    for at in [reading + ms(10), earliest - ns(1)] {
        wheel.clock().set(at);
        let _ = wheel.turn();
        assert_eq!(
            (w.wakes(), ws.wakes()),
            (0, 0),
            "fired at {at:?}, before {earliest:?}"
        );
        assert!(w.poll(d.as_mut()).is_pending());
        assert!(ws.poll(s.as_mut()).is_pending());
    }
    wheel.clock().set(earliest + 2 * TICK);
    let _ = wheel.turn();
    assert_eq!((w.wakes(), ws.wakes()), (1, 1));
    assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), ms(10));
    assert!(ws.poll(s.as_mut()).is_ready());
}

#[test]
fn coarse_clock_adds_resolution_to_budgeted_ones() {
    // A budget in force (here one far off) takes the general path of starting a deadline:
    // the clock's resolution is added there as well, and to a budget made on that clock.
    let resolution = ms(2);
    let clock = CountingClock::with_resolution(resolution);
    let wheel: Wheel<CountingClock, Fixed<4>> = Wheel::fixed(clock, TICK);
    let reading = ms(5) + Duration::from_micros(250);
    wheel.clock().set(reading);
    let _ = wheel.turn();
    let far = punctual_core::Budget::new(
        &wheel,
        Reading::since_origin(Duration::from_secs(100)),
        Duration::from_secs(100),
    );
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()).within(far));
    assert!(w.poll(d.as_mut()).is_pending());
    let earliest = reading + ms(10) + resolution;
    wheel.clock().set(earliest - ns(1));
    let _ = wheel.turn();
    assert_eq!(w.wakes(), 0, "fired before {earliest:?}");
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.clock().set(earliest + 2 * TICK);
    let _ = wheel.turn();
    let elapsed = is_elapsed(w.poll(d.as_mut()));
    assert_eq!((elapsed.duration(), elapsed.is_budget()), (ms(10), false));
    let budget = punctual_core::Budget::starting_now(&wheel, ms(10)).unwrap();
    assert_eq!(
        budget.at(),
        Reading::since_origin(earliest + 2 * TICK + ms(10) + resolution)
    );
}

/// A manual clock whose reading, on the thread that sets one, is a stale one: what a
/// thread sees that read the clock and was then preempted before it used the reading.
struct StaleClock(ManualClock);

thread_local! {
    static STALE: core::cell::Cell<Option<Duration>> = const { core::cell::Cell::new(None) };
}

impl Clock for StaleClock {
    fn now(&self) -> Duration {
        STALE.with(|s| s.get()).unwrap_or_else(|| self.0.now())
    }
}

#[test]
fn stale_reading_turn_fires_what_was_due_not_early() {
    // The wheel was turned at 11.2 ms (tick 11 reached). Then a deadline armed from a
    // reading of 10.5 ms (due 10.95 ms) and a turn from a reading of 10.9 ms meet: the
    // deadline is due before the tick already reached, so it fires (the true time is past
    // it), rather than going into a slot behind the wheel, to fire a rotation late.
    let wheel: Wheel<StaleClock, Fixed<4>> = Wheel::fixed(StaleClock(ManualClock::new()), TICK);
    let w = CountingWaker::new();
    let us = Duration::from_micros;
    wheel.clock().0.advance(us(11_200));
    wheel.turn();
    STALE.with(|s| s.set(Some(us(10_500))));
    let mut d = pin!(wheel.sleep(us(450)));
    assert!(w.poll(d.as_mut()).is_pending());
    // Not yet due on a reading taken in the same stale moment.
    let mut later = pin!(wheel.sleep(us(1_000)));
    assert!(w.poll(later.as_mut()).is_pending());
    STALE.with(|s| s.set(Some(us(10_900))));
    wheel.turn();
    STALE.with(|s| s.set(None));
    assert_eq!(
        w.wakes(),
        1,
        "the deadline due before the tick reached did not fire"
    );
    assert!(w.poll(d.as_mut()).is_ready());
    // Due at 11.5 ms: after the true time (11.2 ms), so it waits, and fires on time.
    assert!(w.poll(later.as_mut()).is_pending());
    wheel.clock().0.advance(us(299));
    wheel.turn();
    assert!(w.poll(later.as_mut()).is_pending());
    wheel.clock().0.advance(us(1));
    wheel.turn();
    // With sub-tick firing, at its own time; without, at its tick's end (12 ms).
    if cfg!(not(feature = "sub-tick")) {
        assert!(w.poll(later.as_mut()).is_pending());
        wheel.clock().0.advance(us(499));
        wheel.turn();
        assert!(w.poll(later.as_mut()).is_pending());
        wheel.clock().0.advance(us(1));
        wheel.turn();
    }
    assert!(w.poll(later.as_mut()).is_ready());
}

#[test]
#[should_panic(expected = "ManualClock::set: cannot move the clock backwards from 10ms to 9ms")]
fn setting_manual_clock_backwards_panics_clearly() {
    let clock = ManualClock::starting_at(ms(10));
    clock.set(ms(9));
}

#[test]
fn refused_backwards_set_changes_and_fires_nothing() {
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let w = CountingWaker::new();
    wheel.advance(ms(100));
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    // Moving it to the same reading is not backwards.
    wheel.clock().set(ms(100));
    assert!(quietly(|| wheel.clock().set(ms(50))).is_err());
    assert_eq!(
        wheel.clock().now(),
        ms(100),
        "a refused set moved the clock"
    );
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(10) - ns(1));
    assert_eq!(w.wakes(), 0);
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 1);
    assert!(w.poll(d.as_mut()).is_ready());
}
