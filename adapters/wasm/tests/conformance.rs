//! The shared conformance scenarios (`tests/conformance/portable.rs`, as the firmware runs
//! them, and the everyday timers' in `timers.rs` and `delay_queue.rs`) on punctual-wasm's driver, in real time on the host's clock: on a growable wheel,
//! and on a fixed one of 8 entries that degrades when full. Each test gets a fresh leaked
//! wheel (1 ms tick) with its driver spawned. Real time: never early, eventual firing and
//! cancellation are checked, never lateness. Runs in Node and in a headless browser
//! (`ci/wasm.sh`).
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

#[path = "../../../tests/conformance/delay_queue.rs"]
mod delay_queue;
#[path = "../../../tests/conformance/portable.rs"]
mod portable;
#[path = "../../../tests/conformance/timers.rs"]
mod timers;

use core::time::Duration;

use punctual_core::{Clock, Fixed, RawWheel, Storage, Wheel};
use punctual_wasm::{DEFAULT_TICK, HostClock};

/// A wheel on the host's clock, driven by punctual-wasm.
struct Host<S: 'static> {
    wheel: &'static Wheel<HostClock, S>,
    fixed: Option<usize>,
}

impl Host<punctual_core::Growable> {
    fn growable() -> Self {
        let wheel = punctual_wasm::leak_wheel(DEFAULT_TICK);
        punctual_wasm::spawn_driver(wheel);
        Self { wheel, fixed: None }
    }
}

impl Host<Fixed<8>> {
    fn fixed() -> Self {
        let wheel: &'static Wheel<HostClock, Fixed<8>> =
            Box::leak(Box::new(Wheel::fixed(HostClock::new(), DEFAULT_TICK)));
        punctual_wasm::spawn_driver(wheel);
        Self {
            wheel,
            fixed: Some(wheel.capacity()),
        }
    }
}

impl<S: Storage> portable::Target for Host<S> {
    const EXACT: bool = false;

    fn wheel(&self) -> &'static dyn RawWheel {
        self.wheel
    }
    fn tick(&self) -> Duration {
        self.wheel.tick()
    }
    fn now(&self) -> Duration {
        self.wheel.clock().now()
    }
    fn occupied(&self) -> usize {
        self.wheel.occupied()
    }
    fn fixed_capacity(&self) -> Option<usize> {
        self.fixed
    }
    fn degraded_polls(&self) -> Option<usize> {
        Some(self.wheel.degraded_polls())
    }
}

/// One `wasm_bindgen_test` per scenario of `$module`, each on a fresh `$make()` target.
macro_rules! scenario_tests {
    ($module:ident; $make:expr; $($name:ident),* $(,)?) => {
        $(
            #[wasm_bindgen_test::wasm_bindgen_test]
            async fn $name() {
                let target = $make;
                if let Err(failure) = super::$module::$name(&target).await {
                    panic!("{}: {failure}", stringify!($name));
                }
            }
        )*
    };
}

mod growable {
    use super::Host;

    crate::portable::scenarios!(scenario_tests! { portable; Host::growable(); });
    crate::timers::scenarios!(scenario_tests! { timers; Host::growable(); });
    crate::delay_queue::scenarios!(scenario_tests! { delay_queue; Host::growable(); });
}

mod fixed {
    use super::Host;

    crate::portable::scenarios!(scenario_tests! { portable; Host::fixed(); });
    crate::timers::scenarios!(scenario_tests! { timers; Host::fixed(); });
    crate::delay_queue::scenarios!(scenario_tests! { delay_queue; Host::fixed(); });
}
