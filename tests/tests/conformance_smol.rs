//! The conformance suite on `punctual-smol`, in real time, on two kinds of smol executor:
//! smol's global executor (the driver spawned with `smol::spawn`, the body in
//! `smol::block_on`), and an `Executor` of the harness's own that runs both the driver and
//! the body (`smol::block_on(ex.run(body))`), so the wheel is driven only while the test
//! runs. Each test gets a fresh leaked wheel (1 ms tick). Real time: only never-early,
//! eventual firing and cancellation are checked, never lateness.

#[path = "../conformance/mod.rs"]
mod conformance;

use core::future::Future;

use punctual_smol::SmolWheel;

struct Smol {
    wheel: &'static SmolWheel,
    /// `None`: smol's global executor drives the wheel.
    executor: Option<smol::Executor<'static>>,
}

impl Smol {
    fn global() -> Self {
        let wheel = punctual_smol::leak_wheel(punctual_smol::DEFAULT_TICK);
        smol::spawn(punctual_smol::driver(wheel)).detach();
        Self {
            wheel,
            executor: None,
        }
    }

    fn own_executor() -> Self {
        let wheel = punctual_smol::leak_wheel(punctual_smol::DEFAULT_TICK);
        let executor = smol::Executor::new();
        executor.spawn(punctual_smol::driver(wheel)).detach();
        Self {
            wheel,
            executor: Some(executor),
        }
    }
}

impl conformance::Harness for Smol {
    const EXACT: bool = false;

    fn wheel_view(&self) -> &'static dyn conformance::WheelView {
        self.wheel
    }
    fn run(&self, body: impl Future<Output = ()>) {
        match &self.executor {
            None => smol::block_on(body),
            Some(executor) => smol::block_on(executor.run(body)),
        }
    }
}

mod global_executor {
    use super::{Smol, conformance};
    crate::conformance_suite!(Smol::global());
}

mod own_executor {
    use super::{Smol, conformance};
    crate::conformance_suite!(Smol::own_executor());
}
