//! The conformance suite on the plain-thread driver (`punctual::wheel::spawn_driver`, what the
//! global wheel uses) with the real clock, under `futures_executor::block_on`. Real time:
//! only never-early, eventual firing and cancellation are checked, never lateness.

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;
use core::time::Duration;

use punctual::wheel::{Growable, StdClock, Wheel};

struct StdThread {
    wheel: &'static Wheel<StdClock, Growable>,
}

impl StdThread {
    fn new() -> Self {
        let wheel = Wheel::growable(StdClock::new(), Duration::from_millis(1))
            .with_batched_wakes()
            .leak();
        punctual::wheel::spawn_driver(wheel);
        Self { wheel }
    }
}

impl conformance::Harness for StdThread {
    const EXACT: bool = false;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }
    fn run(&self, body: impl Future<Output = ()>) {
        futures_executor::block_on(body);
    }
}

conformance_suite!(StdThread::new());
