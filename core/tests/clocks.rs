//! When a deadline's time starts and how it reads its clock: a relative deadline starts
//! at its first poll (rule 4 of docs/design.md), an instant is absolute from creation, a
//! future ready at its first poll reads no clock, and a coarse clock's resolution is
//! added to every deadline (a budget's too).

mod support;

use core::future::{pending, ready};
use core::pin::pin;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use core::task::Poll;
use core::time::Duration;

use punctual_core::{Clock, Fixed, Wheel};
use support::{CountingWaker, ProbeState, TICK, fixed, is_elapsed, ms, ns};

#[test]
fn a_relative_deadline_starts_at_its_first_poll_not_at_creation() {
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
    let mut d = pin!(wheel.deadline_at(ms(150), pending::<()>()));
    let mut s = pin!(wheel.sleep_until(ms(150)));
    wheel.advance(ms(100));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ms(50) - ns(1));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 2);
    // The error carries the time from the first poll to the instant.
    assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), ms(50));
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
fn a_future_ready_at_first_poll_reads_no_clock_and_arms_nothing() {
    let wheel: Wheel<CountingClock, Fixed<4>> = Wheel::fixed(CountingClock::default(), TICK);
    let w = CountingWaker::new();
    let probe = ProbeState::default();
    probe.set_ready();

    let mut d = pin!(wheel.deadline(ms(10), ready(5)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(5)));
    let mut d = pin!(wheel.deadline_at(ms(10), probe.probe()));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(7)));
    assert!(probe.dropped());
    // Bad input does not change that: the ready future wins, with no clock read.
    let mut d = pin!(wheel.deadline(Duration::ZERO, ready(1)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(1)));
    let mut d = pin!(wheel.deadline(Duration::MAX, ready(2)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(2)));
    let mut d = pin!(wheel.deadline_at(Duration::ZERO, ready(3)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(3)));

    assert_eq!(wheel.clock().reads(), 0, "the clock was read");
    assert_eq!(wheel.occupied(), 0, "an entry was armed");
    assert_eq!(w.wakes(), 0);
    assert_eq!(wheel.degraded_polls(), 0);
}

#[test]
fn a_coarse_clock_adds_its_resolution_to_relative_deadlines() {
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
fn a_coarse_clock_adds_its_resolution_to_deadlines_a_budget_bounds_too() {
    // A budget in force (here one far off) takes the general path of starting a deadline:
    // the clock's resolution is added there as well, and to a budget made on that clock.
    let resolution = ms(2);
    let clock = CountingClock::with_resolution(resolution);
    let wheel: Wheel<CountingClock, Fixed<4>> = Wheel::fixed(clock, TICK);
    let reading = ms(5) + Duration::from_micros(250);
    wheel.clock().set(reading);
    let _ = wheel.turn();
    let far =
        punctual_core::Budget::new(&wheel, Duration::from_secs(100), Duration::from_secs(100));
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
    assert_eq!(budget.at(), earliest + 2 * TICK + ms(10) + resolution);
}
