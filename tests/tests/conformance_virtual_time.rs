//! The conformance suite on `punctual::virtual_time`: the calling thread's paused wheel,
//! moved by `virtual_time::advance` a tick at a time whenever every task is idle, under a
//! plain `block_on`-style loop (any executor on the paused thread). Exact: lateness is
//! checked to the tick.

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;

use punctual::virtual_time;

/// The paused wheel of the test's thread (each test runs on a thread of its own).
struct Paused;

impl Paused {
    fn new() -> Self {
        virtual_time::pause();
        Self
    }
}

impl conformance::Harness for Paused {
    const EXACT: bool = true;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        virtual_time::paused_wheel()
    }
    fn run(&self, body: impl Future<Output = ()>) {
        let tick = self.tick();
        conformance::run_on_virtual_time(body, || self.now(), || virtual_time::advance(tick));
    }
}

conformance_suite!(Paused::new());
