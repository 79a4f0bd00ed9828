//! tokio's interval cases on the manual clock: the first tick, `interval_at`, each missed
//! tick behaviour after a stall, `reset`, the stream, a period of zero; and the contract's
//! own: never early, a suspend gives one tick, one entry while waiting.

#![cfg(feature = "alloc")]

mod support;

use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use futures_core::Stream;
use punctual_core::{Fixed, Interval, ManualClock, MissedTickBehavior, Reading, Wheel};
use support::{CountingWaker, ms};

type TestWheel = Wheel<ManualClock, Fixed<8>>;

fn at(n: u64) -> Reading {
    Reading::ZERO + ms(n)
}

fn wheel() -> TestWheel {
    Wheel::fixed(ManualClock::new(), ms(1))
}

fn poll(interval: &mut Interval<'_>) -> Poll<Reading> {
    interval.poll_tick(&mut Context::from_waker(Waker::noop()))
}

/// Every tick ready now, until the interval is pending.
fn ready_now(interval: &mut Interval<'_>) -> Vec<Reading> {
    let mut ticks = Vec::new();
    while let Poll::Ready(tick) = poll(interval) {
        ticks.push(tick);
        assert!(ticks.len() < 100, "an interval that never waits");
    }
    ticks
}

/// The ticks after the first of a 300 ms interval taken 650 ms late (at 950 ms), as
/// tokio's tests take them, with `behaviour`; then the ticks at 1250, 1550 and 1850 ms.
fn after_a_stall(behaviour: MissedTickBehavior) -> Vec<Vec<Reading>> {
    let wheel = wheel();
    let mut interval = wheel.interval(ms(300));
    interval.set_missed_tick_behavior(behaviour);
    let mut seen = vec![ready_now(&mut interval)];
    wheel.advance(ms(100));
    assert_eq!(poll(&mut interval), Poll::Pending);
    wheel.advance(ms(200));
    seen.push(ready_now(&mut interval));
    wheel.advance(ms(650));
    seen.push(ready_now(&mut interval));
    for _ in 0..3 {
        wheel.advance(ms(300));
        seen.push(ready_now(&mut interval));
    }
    seen
}

#[test]
fn first_tick_is_immediate() {
    let wheel = wheel();
    wheel.advance(ms(7));
    let mut interval = wheel.interval(ms(10));
    assert_eq!(poll(&mut interval), Poll::Ready(at(7)));
    assert_eq!(poll(&mut interval), Poll::Pending);
}

#[test]
fn interval_at_in_the_future() {
    let wheel = wheel();
    let mut interval = wheel.interval_at(at(300), ms(100));
    assert_eq!(poll(&mut interval), Poll::Pending);
    wheel.advance(ms(299));
    assert_eq!(poll(&mut interval), Poll::Pending);
    wheel.advance(ms(1));
    assert_eq!(poll(&mut interval), Poll::Ready(at(300)));
    wheel.advance(ms(100));
    assert_eq!(poll(&mut interval), Poll::Ready(at(400)));
}

#[test]
fn burst_gives_every_missed_tick() {
    let seen = after_a_stall(MissedTickBehavior::Burst);
    let expected = [
        vec![at(0)],
        vec![at(300)],
        vec![at(600), at(900)],
        vec![at(1200)],
        vec![at(1500)],
        vec![at(1800)],
    ];
    assert_eq!(seen, expected);
}

#[test]
fn delay_moves_the_grid() {
    let seen = after_a_stall(MissedTickBehavior::Delay);
    let expected = [
        vec![at(0)],
        vec![at(300)],
        vec![at(600)],
        vec![at(1250)],
        vec![at(1550)],
        vec![at(1850)],
    ];
    assert_eq!(seen, expected);
}

#[test]
fn skip_gives_one_tick_then_the_grid() {
    let seen = after_a_stall(MissedTickBehavior::Skip);
    let expected = [
        vec![at(0)],
        vec![at(300)],
        vec![at(600)],
        vec![at(1200)],
        vec![at(1500)],
        vec![at(1800)],
    ];
    assert_eq!(seen, expected);
}

#[test]
fn skip_is_the_default() {
    assert_eq!(MissedTickBehavior::default(), MissedTickBehavior::Skip);
    let wheel = wheel();
    let interval = wheel.interval(ms(1));
    assert_eq!(interval.missed_tick_behavior(), MissedTickBehavior::Skip);
}

/// A machine suspended for an hour (the clock jumps on resume, as `BootClock` does):
/// with the default, one tick, then the grid again.
#[test]
fn a_suspend_gives_one_tick() {
    let wheel = wheel();
    let mut interval = wheel.interval(ms(10));
    assert_eq!(ready_now(&mut interval), [at(0)]);
    wheel.advance(Duration::from_secs(3600) + ms(3));
    assert_eq!(ready_now(&mut interval), [at(10)]);
    wheel.advance(ms(6));
    assert_eq!(ready_now(&mut interval), []);
    wheel.advance(ms(1));
    assert_eq!(ready_now(&mut interval), [at(3_600_010)]);
}

/// Late by no more than two wheel ticks is on time: the grid stays, even with `Delay`.
#[test]
fn two_ticks_late_keeps_the_grid() {
    let wheel = wheel();
    let mut interval = wheel.interval(ms(10));
    interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
    assert_eq!(ready_now(&mut interval), [at(0)]);
    wheel.advance(ms(12));
    assert_eq!(ready_now(&mut interval), [at(10)]);
    wheel.advance(ms(8));
    assert_eq!(ready_now(&mut interval), [at(20)]);
}

#[test]
fn reset_moves_the_next_tick() {
    let wheel = wheel();
    let mut interval = wheel.interval(ms(300));
    assert_eq!(ready_now(&mut interval), [at(0)]);
    wheel.advance(ms(100));
    interval.reset();
    wheel.advance(ms(299));
    assert_eq!(ready_now(&mut interval), []);
    wheel.advance(ms(1));
    assert_eq!(ready_now(&mut interval), [at(400)]);
    wheel.advance(ms(300));
    assert_eq!(ready_now(&mut interval), [at(700)]);
}

#[test]
fn reset_before_the_first_tick() {
    let wheel = wheel();
    let mut interval = wheel.interval(ms(10));
    interval.reset();
    assert_eq!(ready_now(&mut interval), []);
    wheel.advance(ms(10));
    assert_eq!(ready_now(&mut interval), [at(10)]);
}

/// Each tick wakes the task that polled for it, at its reading and not a nanosecond
/// before; one entry is held while waiting, none once dropped.
#[test]
fn never_early_and_woken() {
    let wheel = wheel();
    let wakes = CountingWaker::new();
    let mut cx = Context::from_waker(&wakes.waker);
    let mut interval = wheel.interval_at(at(5), ms(5));
    for n in 1..=4 {
        assert_eq!(interval.poll_tick(&mut cx), Poll::Pending);
        assert_eq!(wheel.occupied(), 1);
        wheel.advance(ms(5) - Duration::from_nanos(1));
        assert_eq!(wakes.wakes(), n - 1, "woken early");
        wheel.advance(Duration::from_nanos(1));
        assert_eq!(wakes.wakes(), n, "not woken");
        assert_eq!(interval.poll_tick(&mut cx), Poll::Ready(at(5 * n as u64)));
    }
    assert_eq!(interval.poll_tick(&mut cx), Poll::Pending);
    drop(interval);
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn stream_yields_the_ticks() {
    let wheel = wheel();
    let mut interval = wheel.interval(ms(10));
    let mut cx = Context::from_waker(Waker::noop());
    let mut next = || Pin::new(&mut interval).poll_next(&mut cx);
    assert_eq!(next(), Poll::Ready(Some(at(0))));
    assert_eq!(next(), Poll::Pending);
    wheel.advance(ms(10));
    assert_eq!(next(), Poll::Ready(Some(at(10))));
    assert_eq!(interval.size_hint(), (usize::MAX, None));
}

#[test]
fn tick_future_is_cancel_safe() {
    let wheel = wheel();
    let mut interval = wheel.interval(ms(10));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(core::pin::pin!(interval.tick()).poll(&mut cx).is_ready());
    // A tick awaited and dropped while pending takes nothing.
    assert!(core::pin::pin!(interval.tick()).poll(&mut cx).is_pending());
    wheel.advance(ms(10));
    let tick = core::pin::pin!(interval.tick()).poll(&mut cx);
    assert_eq!(tick, Poll::Ready(at(10)));
}

#[test]
#[should_panic(expected = "period of zero")]
fn zero_period_panics() {
    let wheel = wheel();
    let _ = wheel.interval(Duration::ZERO);
}

/// A period too long for the clock: one tick, then never another (no overflow).
#[test]
fn huge_period_ticks_once() {
    let wheel = wheel();
    let mut interval = wheel.interval(Duration::MAX);
    assert_eq!(ready_now(&mut interval), [at(0)]);
    wheel.advance(Duration::from_secs(1 << 40));
    assert_eq!(ready_now(&mut interval), []);
    assert_eq!(wheel.occupied(), 0);
}

/// On a full wheel the interval runs degraded: still never early.
#[test]
fn full_wheel_still_ticks_on_time() {
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), ms(1));
    let mut hog = core::pin::pin!(wheel.sleep(Duration::from_secs(60)));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(hog.as_mut().poll(&mut cx).is_pending());
    let mut interval = wheel.interval(ms(10));
    assert_eq!(interval.poll_tick(&mut cx), Poll::Ready(at(0)));
    assert_eq!(interval.poll_tick(&mut cx), Poll::Pending);
    wheel.advance(ms(9));
    assert_eq!(interval.poll_tick(&mut cx), Poll::Pending);
    wheel.advance(ms(1));
    assert_eq!(interval.poll_tick(&mut cx), Poll::Ready(at(10)));
}

/// An interval moves between threads and tasks as a deadline does.
#[test]
fn auto_traits() {
    fn check<T: Send + Sync + Unpin>() {}
    check::<Interval<'static>>();
    check::<MissedTickBehavior>();
}

/// tokio's `reset_immediately`, `reset_after`, `reset_at`: the next tick where asked,
/// never early, then the grid from there; the missed-tick behaviour stays.
#[test]
fn resets_move_the_grid() {
    let wheel = wheel();
    let mut interval = wheel.interval(ms(300));
    interval.set_missed_tick_behavior(MissedTickBehavior::Burst);
    assert_eq!(ready_now(&mut interval), [at(0)]);

    wheel.advance(ms(100));
    interval.reset_immediately();
    assert_eq!(ready_now(&mut interval), [at(100)]);
    wheel.advance(ms(299));
    assert_eq!(ready_now(&mut interval), []);
    wheel.advance(ms(1));
    assert_eq!(ready_now(&mut interval), [at(400)]);

    interval.reset_after(ms(20));
    wheel.advance(ms(19));
    assert_eq!(ready_now(&mut interval), []);
    wheel.advance(ms(1));
    assert_eq!(ready_now(&mut interval), [at(420)]);

    interval.reset_at(at(1000));
    wheel.advance(ms(579));
    assert_eq!(ready_now(&mut interval), [], "never early");
    wheel.advance(ms(1));
    assert_eq!(ready_now(&mut interval), [at(1000)]);
    assert_eq!(interval.missed_tick_behavior(), MissedTickBehavior::Burst);
    // A stall after the reset: Burst, as set before it.
    wheel.advance(ms(700));
    assert_eq!(ready_now(&mut interval), [at(1300), at(1600)]);

    // A time already past ticks at the next poll.
    interval.reset_at(at(10));
    assert_eq!(ready_now(&mut interval).first(), Some(&at(10)));
}

/// A reset before the first tick settles the wheel and replaces the first tick.
#[test]
fn reset_after_before_the_first_tick() {
    let wheel = wheel();
    let mut interval = wheel.interval_at(at(50), ms(10));
    interval.reset_after(ms(5));
    wheel.advance(ms(5));
    assert_eq!(ready_now(&mut interval), [at(5)]);
}
