//! The conformance suite on `punctual-tokio` in real time, on a `current_thread` and a
//! `multi_thread` runtime: a wheel from `punctual_tokio::start` (1 ms tick) whose driver
//! is a task on the runtime; the body runs in `Runtime::block_on`. Real time: only
//! never-early, eventual firing and cancellation are checked, never lateness.

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;

use punctual_tokio::TokioWheel;
use tokio::runtime::{Builder, Runtime};

struct TokioReal {
    rt: Runtime,
    wheel: &'static TokioWheel,
}

impl TokioReal {
    fn new(mut builder: Builder) -> Self {
        let rt = builder.enable_time().build().expect("a tokio runtime");
        let wheel = rt.block_on(async { punctual_tokio::start() });
        Self { rt, wheel }
    }

    fn current_thread() -> Self {
        Self::new(Builder::new_current_thread())
    }

    fn multi_thread() -> Self {
        let mut builder = Builder::new_multi_thread();
        builder.worker_threads(2);
        Self::new(builder)
    }
}

impl conformance::Harness for TokioReal {
    const EXACT: bool = false;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }
    fn run(&self, body: impl Future<Output = ()>) {
        self.rt.block_on(body);
    }
}

mod current_thread {
    use super::{TokioReal, conformance};
    crate::conformance_suite!(TokioReal::current_thread());
}

mod multi_thread {
    use super::{TokioReal, conformance};
    crate::conformance_suite!(TokioReal::multi_thread());
}
