//! `Wheel::restart`: a wheel started over for a clock whose readings no longer follow the
//! ones it served (a wheel reused for another clock) fires nothing early and nothing late
//! on the new readings, and plans as a new wheel does; a wheel in use is refused.
#![cfg(all(feature = "alloc", feature = "stats"))]

use core::future::Future;
use core::pin::pin;
use core::sync::atomic::{AtomicU64, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use punctual_core::{Clock, Growable, Reading, Wheel};

/// A clock that can be set anywhere, backwards too (as a clock of another source reads).
struct SetClock(AtomicU64);

impl SetClock {
    fn set(&self, to: Duration) {
        self.0.store(to.as_nanos() as u64, Ordering::SeqCst);
    }
}

impl Clock for SetClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::SeqCst))
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn wheel_at(at: Duration) -> Wheel<SetClock, Growable> {
    let wheel = Wheel::growable(SetClock(AtomicU64::new(0)), ms(1));
    wheel.clock().set(at);
    wheel
}

fn poll<F: Future>(future: core::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Serves an hour of one clock, fires a deadline there, and is left with nothing armed.
fn served_an_hour(wheel: &Wheel<SetClock, Growable>) {
    let mut sleep = pin!(wheel.sleep(ms(5)));
    assert!(poll(sleep.as_mut()).is_pending());
    wheel.clock().set(Duration::from_secs(3600) + ms(5));
    wheel.turn();
    assert!(poll(sleep.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn restarted_wheel_fires_on_time_on_earlier_clock() {
    let wheel = wheel_at(Duration::from_secs(3600));
    served_an_hour(&wheel);
    // The new clock reads an hour earlier.
    let start = Duration::from_secs(1);
    wheel.clock().set(start);
    assert!(wheel.restart());
    let mut sleep = pin!(wheel.sleep(ms(5)));
    assert!(poll(sleep.as_mut()).is_pending());
    // Planned at its own time, not at the old clock's tick.
    assert_eq!(wheel.turn(), Reading::since_origin(start + ms(5)));
    wheel.clock().set(start + ms(4));
    wheel.turn();
    assert!(poll(sleep.as_mut()).is_pending(), "fired early");
    wheel.clock().set(start + ms(5));
    wheel.turn();
    assert!(poll(sleep.as_mut()).is_ready(), "fired late");
    assert_eq!(wheel.stats().lateness, [2, 0, 0, 0]);
}

#[test]
fn restarted_wheel_plans_nothing_like_a_new_one() {
    let wheel = wheel_at(Duration::from_secs(3600));
    served_an_hour(&wheel);
    // An arm wakes the idle driver, and its turns linger: a plan ahead with nothing armed.
    {
        let mut sleep = pin!(wheel.sleep(ms(50)));
        assert!(poll(sleep.as_mut()).is_pending());
    }
    wheel.turn();
    assert_ne!(wheel.turn(), Reading::END);
    wheel.clock().set(ms(100));
    assert!(wheel.restart());
    assert_eq!(wheel.next_turn(), Reading::END);
    // A new wheel's first turn, with nothing armed, plans nothing at all.
    assert_eq!(wheel.turn(), Reading::END);
}

#[test]
fn a_wheel_in_use_is_not_restarted() {
    let wheel = wheel_at(ms(10));
    {
        let mut sleep = pin!(wheel.sleep(ms(5)));
        assert!(poll(sleep.as_mut()).is_pending());
        wheel.turn();
        assert!(!wheel.restart(), "restarted with a deadline armed");
        // Still served as before.
        wheel.clock().set(ms(15));
        wheel.turn();
        assert!(poll(sleep.as_mut()).is_ready());
    }
    assert!(wheel.restart());
}
