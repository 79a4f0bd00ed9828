//! Drive a [punctual] timer wheel from a tokio task: no extra thread, and deadlines on
//! tokio's clock, paused or not.
//!
//! `punctual`'s default deadlines already follow the runtime they are polled in. Use this
//! crate for a wheel of your own (another tick, a fixed capacity, a `static`): [`start`]
//! makes one on the current runtime's clock ([`TokioClock`]) and spawns its driver task,
//! [`spawn_driver`] drives a wheel you made, and [`driver`] is the driver future itself.
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
//! # Paused time
//!
//! * A deadline fires when tokio's clock reaches it ([`tokio::time::advance`] or
//!   auto-advance), never before, with no real time passing.
//! * With ticks and advances of whole milliseconds it fires less than a tick late in
//!   virtual time; fractional ones let tokio's rounding add up to 2 ms.
//! * An idle wheel holds no tokio timer, so it never makes a paused runtime auto-advance.
//!   After a wake from idle the driver keeps one timer 16 ticks ahead.
//!
//! ```
//! use std::time::Duration;
//! use tokio::time::Instant;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! // In a test: #[tokio::test(start_paused = true)]
//! let wheel = punctual_tokio::start();
//! let started = Instant::now();
//! let r = wheel.deadline(Duration::from_secs(3600), std::future::pending::<()>()).await;
//! assert!(r.is_err());
//! assert_eq!(started.elapsed(), Duration::from_secs(3600)); // an hour, in no time
//! # }
//! ```
//!
//! # Scheduling and shutdown
//!
//! * A deadline spends no tokio budget. The driver is a task of its own, so an inner future
//!   that exhausts its budget is still cut off.
//! * Blocking a worker delays the driver on it: deadlines are late, never early.
//! * Shutdown drops the driver task; the wheel stays valid. A deadline of it held outside
//!   the runtime fires only once a driver turns the wheel again ([`spawn_driver_on`]).
//! * tokio's timer counts whole milliseconds: ticks below 1 ms buy nothing. A wheel of your
//!   own wants [`Wheel::with_precise_fires`](punctual_core::Wheel::with_precise_fires), as
//!   [`start`] sets.
//!
//! [punctual]: https://docs.rs/punctual
//! [`tokio::time::advance`]: https://docs.rs/tokio/1/tokio/time/fn.advance.html
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
