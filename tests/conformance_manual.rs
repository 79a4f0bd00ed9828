//! The conformance suite on a wheel with a manual clock, turned by the test itself: when
//! every task is idle, the clock moves one tick and the wheel turns, like tokio's paused
//! clock auto-advancing. Exact: lateness is checked to the tick.

#[path = "conformance/mod.rs"]
mod conformance;

use core::future::Future;
use core::pin::pin;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::Arc;
use std::task::Wake;

use punctual::{Growable, ManualClock, Wheel};

struct Manual {
    wheel: &'static Wheel<ManualClock, Growable>,
}

impl Manual {
    fn new() -> Self {
        let wheel = Box::leak(Box::new(Wheel::growable(
            ManualClock::new(),
            Duration::from_millis(1),
        )));
        Self { wheel }
    }
}

struct Flag(AtomicBool);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl conformance::Harness for Manual {
    const EXACT: bool = true;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }
    fn run(&self, body: impl Future<Output = ()>) {
        let flag = Arc::new(Flag(AtomicBool::new(true)));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let mut body = pin!(body);
        // A bound on virtual time, so a lost wakeup fails instead of hanging.
        let limit = Duration::from_secs(3600);
        loop {
            if flag.0.swap(false, Ordering::SeqCst) {
                if let Poll::Ready(()) = body.as_mut().poll(&mut cx) {
                    return;
                }
                continue;
            }
            assert!(
                self.now() < limit,
                "no progress after an hour of virtual time: lost wakeup"
            );
            self.wheel.advance(self.wheel.tick());
        }
    }
}

conformance_suite!(Manual::new());
