//! The conformance suite on a wheel with a manual clock, turned by the test itself: when
//! every task is idle, the clock moves one tick and the wheel turns, like tokio's paused
//! clock auto-advancing. Exact: lateness is checked to the tick.
//!
//! The suite runs on a wheel that grows; a full wheel's degraded mode, on one of 8 entries
//! (where a task that polls busily sees the clock move a tick every [`BUSY_POLLS`] polls,
//! as time passes on a real clock while it spins).

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;
use core::pin::pin;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::Arc;
use std::task::Wake;

use punctual::{Fixed, Growable, ManualClock, Storage, Wheel};

/// Polls in a row without the body going idle after which the clock moves anyway.
const BUSY_POLLS: u32 = 1_000;

const TICK: Duration = Duration::from_millis(1);

struct Manual<S: Storage + 'static> {
    wheel: &'static Wheel<ManualClock, S>,
    fixed_capacity: Option<usize>,
}

impl Manual<Growable> {
    fn new() -> Self {
        let wheel = Box::leak(Box::new(Wheel::growable(ManualClock::new(), TICK)));
        Self {
            wheel,
            fixed_capacity: None,
        }
    }
}

impl Manual<Fixed<8>> {
    fn fixed() -> Self {
        let wheel = Box::leak(Box::new(Wheel::fixed(ManualClock::new(), TICK)));
        Self {
            wheel,
            fixed_capacity: Some(wheel.capacity()),
        }
    }
}

struct Flag(AtomicBool);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl<S: Storage + 'static> conformance::Harness for Manual<S> {
    const EXACT: bool = true;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }
    fn fixed_capacity(&self) -> Option<usize> {
        self.fixed_capacity
    }
    fn degraded_polls(&self) -> Option<usize> {
        Some(self.wheel.degraded_polls())
    }
    fn run(&self, body: impl Future<Output = ()>) {
        let flag = Arc::new(Flag(AtomicBool::new(true)));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut body = pin!(body);
        // A bound on virtual time, so a lost wakeup fails instead of hanging.
        let limit = Duration::from_secs(3600);
        let mut busy = 0;
        loop {
            if busy < BUSY_POLLS && flag.0.swap(false, Ordering::SeqCst) {
                if let Poll::Ready(()) = body.as_mut().poll(&mut cx) {
                    return;
                }
                busy += 1;
                continue;
            }
            // Idle, or busy for `BUSY_POLLS` polls (then still woken: polled after the tick).
            busy = 0;
            assert!(
                self.now() < limit,
                "no progress after an hour of virtual time: lost wakeup"
            );
            self.wheel.advance(self.wheel.tick());
        }
    }
}

conformance_suite!(Manual::new());

/// The full-wheel scenario on a wheel that can fill (the suite's own grows).
#[test]
fn full_wheel_degrades_on_a_fixed_wheel() {
    conformance::full_wheel_degrades(&Manual::fixed());
}
