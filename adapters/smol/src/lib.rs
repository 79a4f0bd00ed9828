//! Drive a [punctual] timer wheel from async-io timers on any smol executor, no extra
//! thread: [`driver`] turns a wheel on a [`StdClock`] and sleeps on an [`async_io::Timer`]
//! until its next turn. Spawn it, or run it beside your future ([`with_driver`]).
//!
//! ```
//! use std::time::Duration;
//!
//! // Once per program: a 'static wheel, driven by a task on smol's global executor.
//! let wheel = punctual_smol::leak_wheel(punctual_smol::DEFAULT_TICK);
//! smol::spawn(punctual_smol::driver(wheel)).detach();
//!
//! smol::block_on(async {
//!     let fast = wheel.deadline(Duration::from_millis(100), async { 42 }).await;
//!     assert_eq!(fast, Ok(42));
//!     // Missed: Err(Elapsed), and the inner future has been dropped.
//!     let slow = smol::Timer::after(Duration::from_secs(5));
//!     let err = wheel.deadline(Duration::from_millis(10), slow).await.unwrap_err();
//!     assert_eq!(err.duration(), Duration::from_millis(10));
//! });
//! ```
//!
//! (`punctual`'s `fut.deadline(d)` works under smol as it is, on its global wheel's thread.)
//!
//! # Rules
//!
//! * With a driver that is not starved, a deadline fires at most two ticks late.
//! * While nothing drives the wheel (its executor stopped), deadlines alive elsewhere do
//!   not fire; they fire, late and never early, once a driver runs again.
//!
//! [punctual]: https://docs.rs/punctual
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod driver;
mod sleeper;

pub use driver::{
    DEFAULT_TICK, SmolDriver, SmolWheel, WithDriver, driver, leak_wheel, with_driver,
};
pub use punctual_core::StdClock;
pub use sleeper::{AsyncIoSleeper, TimerSleep};
