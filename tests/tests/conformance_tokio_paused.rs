//! The conformance suite on `punctual-tokio` under tokio's paused clock: a `current_thread`
//! runtime built with `start_paused(true)`, a wheel from `punctual_tokio::start` (1 ms
//! tick, driver task on the runtime). Time moves only by tokio's auto-advance, when every
//! task is idle, straight to the driver's next sleep.
//!
//! Exact: lateness is checked to the tick. It holds because nothing moves tokio's clock
//! between the driver's wake-up and the test's next look at it, and the driver's sleeps
//! land exactly on the wheel's ticks: the wheel's clock starts on tokio's millisecond grid
//! (the paused clock only ever moves by whole milliseconds here), its tick is one tokio
//! millisecond, and `tokio::time::sleep_until` rounds up to that grid, so it adds nothing.
//! A deadline therefore fires less than one tick after its requested time.

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;
use core::time::Duration;

use punctual::wheel::Clock;
use punctual_tokio::TokioWheel;
use tokio::runtime::{Builder, Runtime};

struct TokioPaused {
    rt: Runtime,
    wheel: &'static TokioWheel,
}

impl TokioPaused {
    fn new() -> Self {
        let rt = Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a paused current_thread runtime");
        let wheel = rt.block_on(async { punctual_tokio::start() });
        Self { rt, wheel }
    }
}

impl conformance::Harness for TokioPaused {
    const EXACT: bool = true;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }
    fn now(&self) -> Duration {
        // Inside the runtime's context: the paused clock, also when called from outside
        // `run`.
        let _context = self.rt.enter();
        self.wheel.clock().now()
    }
    fn run(&self, body: impl Future<Output = ()>) {
        self.rt.block_on(body);
    }
}

conformance_suite!(TokioPaused::new());
