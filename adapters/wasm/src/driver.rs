//! Making a wheel on the host's clock and running its driver on the host's event loop.

use core::time::Duration;

use punctual_core::{Clock, Driver, Growable, Storage, Wheel};

use crate::{HostClock, TimeoutSleeper};

/// The tick of a wheel made by [`leak_wheel`] with no other wish: 1 ms.
pub const DEFAULT_TICK: Duration = Duration::from_millis(1);

/// A growable wheel on the [`HostClock`]: what [`leak_wheel`] makes.
pub type HostWheel = Wheel<HostClock, Growable>;

/// The driver future of a wheel on clock `C`, sleeping on `setTimeout`.
pub type WasmDriver<'w, C = HostClock, S = Growable> = Driver<'w, C, S, TimeoutSleeper<&'w C>>;

/// Makes a growable wheel on the [`HostClock`] and leaks it (about 2 KB on wasm32, plus
/// the entries it grew to hold: one per program), so that its deadlines are `'static`.
/// Drive it with [`spawn_driver`] (see the crate example).
///
/// # Panics
///
/// If `tick` is zero, or 2<sup>64</sup> ns (about 584 years) or more.
pub fn leak_wheel(tick: Duration) -> &'static HostWheel {
    Wheel::growable(HostClock::new(), tick).leak()
}

/// The driver future of `wheel`, whose clock runs at the host's pace ([`HostClock`], or
/// a clock that reads it). It never completes; poll it on the host's event loop.
///
/// ```no_run
/// use core::time::Duration;
/// use punctual_core::{Fixed, Wheel};
/// use punctual_wasm::HostClock;
///
/// static WHEEL: Wheel<HostClock, Fixed<64>> = Wheel::fixed(HostClock::new(), Duration::from_millis(1));
/// wasm_bindgen_futures::spawn_local(async {
///     match punctual_wasm::driver(&WHEEL).await {}
/// });
/// ```
///
/// # Cancel safety
///
/// Dropping the driver stops the wheel: armed deadlines fire late, once another driver
/// turns it.
pub fn driver<C: Clock, S: Storage>(wheel: &Wheel<C, S>) -> WasmDriver<'_, C, S> {
    wheel.driver(TimeoutSleeper::new(wheel.clock()))
}

/// Spawns the driver of `wheel` ([`driver`]) as a task of `wasm-bindgen-futures`'
/// executor on this thread, for the rest of the program. Spawn one per wheel.
pub fn spawn_driver<C: Clock, S: Storage>(wheel: &'static Wheel<C, S>) {
    wasm_bindgen_futures::spawn_local(async move { match driver(wheel).await {} });
}
