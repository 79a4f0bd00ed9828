//! Build, drive and inspect a wheel of your own, and look at the default ones.
//!
//! Most programs never need it: default deadlines choose their wheel themselves. This is
//! for a [`Wheel`] with its own clock and tick, turned by a [`Driver`] that a runtime
//! adapter ([`crate::adapters`]) or a test runs, and the counters ([`Stats`]) every wheel
//! keeps. A wheel of your own and the default wheels never share entries.
//!
//! ```
//! use std::time::Duration;
//! use punctual::wheel::{Fixed, ManualClock, Wheel};
//!
//! let wheel: Wheel<ManualClock, Fixed<64>> =
//!     Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
//! let mut d = std::pin::pin!(wheel.deadline(Duration::from_millis(30), std::future::pending::<()>()));
//! let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! assert!(d.as_mut().poll(&mut cx).is_pending());
//! wheel.advance(Duration::from_millis(30));
//! assert!(d.as_mut().poll(&mut cx).is_ready());
//! ```

#[cfg(target_has_atomic = "64")]
pub use punctual_core::ManualClock;
#[cfg(feature = "std")]
pub use punctual_core::{BootClock, Growable, GrowableWheel, StdClock};
pub use punctual_core::{
    Clock, ClockInstant, DeadlineName, Driver, Fixed, FixedWheel, IndexWidth, Limit, Named,
    RawWheel, Reading, Sleeper, Stats, Storage, Unnamed, Wheel, WheelRef, Within,
    overrun_threshold, report_overruns,
};

#[cfg(feature = "std")]
pub use crate::{
    default_wheel::DefaultWheel,
    global::{Global, GlobalClock, global_wheel},
};
#[cfg(all(
    feature = "std",
    not(all(target_family = "wasm", target_os = "unknown"))
))]
pub use {
    crate::global::{GlobalClockInUse, GlobalClockKind},
    punctual_thread::spawn_driver,
};

#[cfg(feature = "tokio")]
pub use crate::tokio_wheels::{RuntimeClock, runtime_wheel, runtime_wheels_made};

/// How many paused threads' wheels this process has made
/// ([`virtual_time::pause`](crate::virtual_time::pause)): the most in use at once.
#[cfg(feature = "test-util")]
pub fn paused_wheels_made() -> usize {
    crate::virtual_time::SHELF.made()
}
