//! The conformance suite on the wheel that default deadlines use inside a tokio runtime
//! (feature `tokio`): the thread's runtime wheel, on the runtime's clock, turned by the
//! driver task the first default deadline spawned. Twice: on a paused `current_thread`
//! runtime, where timing is checked to the tick, and on real time.
//!
//! Exact under the paused clock: the wheel's readings sit on tokio's millisecond grid (see
//! the tokio default's clock), so the driver's sleeps land on tokio's ticks, and a fired
//! sleep turns the wheel where tokio fires its own timers.

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;
use core::time::Duration;

use punctual::wheel::Clock;
use punctual::wheel::{Growable, Wheel};
use punctual::wheel::{RuntimeClock, runtime_wheel};
use tokio::runtime::{Builder, Runtime};

struct TokioDefault<const PAUSED: bool> {
    rt: Runtime,
    wheel: &'static Wheel<RuntimeClock, Growable>,
}

impl<const PAUSED: bool> TokioDefault<PAUSED> {
    fn new() -> Self {
        let rt = Builder::new_current_thread()
            .enable_time()
            .start_paused(PAUSED)
            .build()
            .expect("a current_thread runtime");
        let wheel = rt
            .block_on(async { runtime_wheel() })
            .expect("a runtime wheel inside the runtime");
        Self { rt, wheel }
    }
}

impl<const PAUSED: bool> conformance::Harness for TokioDefault<PAUSED> {
    const EXACT: bool = PAUSED;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }
    fn now(&self) -> Duration {
        let _context = self.rt.enter();
        self.wheel.clock().now()
    }
    fn run(&self, body: impl Future<Output = ()>) {
        self.rt.block_on(body);
    }
}

mod paused {
    use super::*;
    conformance_suite!(TokioDefault::<true>::new());
}

mod real_time {
    use super::*;
    conformance_suite!(TokioDefault::<false>::new());
}
