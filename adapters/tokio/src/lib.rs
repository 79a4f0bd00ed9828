//! Drive a [punctual] timer wheel from a tokio task: no extra thread, and deadlines on
//! tokio's clock, paused or not.
//!
//! For a wheel of your own (`punctual`'s default deadlines already follow the runtime):
//! [`start`] makes one on the runtime's clock ([`TokioClock`]) and spawns its driver task,
//! [`spawn_driver`] drives a wheel you made, [`driver`] is the driver future itself.
//!
//! ```
//! use std::time::Duration;
//!
//! #[tokio::main]
//! async fn main() {
//!     let wheel = punctual_tokio::start();
//!     let slow = tokio::time::sleep(Duration::from_secs(5));
//!     let err = wheel.deadline(Duration::from_millis(10), slow).await.unwrap_err();
//!     assert_eq!(err.duration(), Duration::from_millis(10));
//!     // The wheel is leaked, so its deadlines are `'static`: spawn them freely.
//!     let task = tokio::spawn(wheel.deadline(Duration::from_millis(1), async { 42 }));
//!     assert_eq!(task.await.unwrap(), Ok(42));
//! }
//! ```
//!
//! # Rules
//!
//! * Paused time: a deadline fires when tokio's clock reaches it (`advance` or
//!   auto-advance), never before, with no real time passing; with ticks and advances of
//!   whole milliseconds, less than a tick late in virtual time (fractional ones: up to
//!   2 ms more). An idle wheel holds no tokio timer, so it never makes a paused runtime
//!   auto-advance; after a wake from idle the driver keeps one timer 16 ticks ahead.
//! * A deadline spends no tokio budget, and the driver is a task of its own: an inner
//!   future that exhausts its budget is still cut off. A blocked worker makes deadlines
//!   late, never early.
//! * Shutdown drops the driver task; the wheel stays valid, and its deadlines fire once a
//!   driver turns it again ([`spawn_driver_on`]).
//! * tokio's timer counts whole milliseconds: ticks below 1 ms buy nothing. A wheel of your
//!   own wants [`Wheel::with_precise_fires`](punctual_core::Wheel::with_precise_fires), as
//!   [`start`] sets.
//!
//! [punctual]: https://docs.rs/punctual
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod clock;
mod driver;
mod sleeper;
mod turning;

pub use clock::TokioClock;
pub use driver::{
    DEFAULT_TICK, TokioDriver, TokioWheel, driver, spawn_driver, spawn_driver_on, start,
    start_with_tick,
};
pub use sleeper::TokioSleeper;
pub use turning::{TurningSleep, TurningSleeper};
