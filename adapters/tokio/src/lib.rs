//! Drive a [punctual] timer wheel from a tokio task: no extra thread, and deadlines on
//! tokio's clock, paused or not.
//!
//! [`start`] makes a wheel on the current runtime's clock ([`TokioClock`]), spawns its
//! driver as an ordinary task, and returns the `&'static` wheel. It works on
//! `current_thread` and `multi_thread` runtimes.
//!
//! ```
//! use std::time::Duration;
//!
//! #[tokio::main]
//! async fn main() {
//!     let wheel = punctual_tokio::start();
//!
//!     // Met: Ok with the output.
//!     let fast = wheel.deadline(Duration::from_millis(100), async { 42 }).await;
//!     assert_eq!(fast, Ok(42));
//!
//!     // Missed: Err(Elapsed), and the inner future has been dropped.
//!     let slow = tokio::time::sleep(Duration::from_secs(5));
//!     let err = wheel.deadline(Duration::from_millis(10), slow).await.unwrap_err();
//!     assert_eq!(err.duration(), Duration::from_millis(10));
//!
//!     // The wheel is leaked, so its deadlines are `'static`: spawn them freely.
//!     let task = tokio::spawn(wheel.deadline(Duration::from_millis(1), std::future::pending::<()>()));
//!     assert!(task.await.unwrap().is_err());
//! }
//! ```
//!
//! `punctual`'s default deadlines already follow the runtime they are polled in, on its
//! clock, paused or not. Use this crate for a wheel of your own: another tick, a fixed
//! capacity, a `static`. Its driver is a task of one runtime, on that runtime's clock.
//! [`spawn_driver`] drives a wheel you made, [`driver`] is the driver future itself, and
//! [`TokioSleeper`] (or [`TurningSleeper`], which turns a `'static` wheel where tokio's
//! timer fires) builds a [`Driver`](punctual_core::Driver) by hand.
//!
//! # Paused time
//!
//! * A deadline fires when tokio's clock reaches it, by [`tokio::time::advance`] or by
//!   auto-advance, never before, and with no real time passing.
//! * It fires less than a tick late in virtual time with a tick of whole milliseconds
//!   while tokio's clock moves by whole milliseconds. A fractional `advance` or tick lets
//!   tokio's rounding add up to 2 ms.
//! * An idle wheel holds no tokio timer, so it never makes a paused runtime auto-advance.
//!   After a wake from idle the driver keeps one timer 16 ticks ahead, which a paused
//!   clock may advance to once. A fourth driver on one wheel finds no place for its waker
//!   and keeps a one-tick timer.
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
//! # Cooperative scheduling
//!
//! * A deadline spends no tokio budget and is never `Pending` for lack of it. The driver
//!   is a task of its own, so an inner future that exhausts its budget is still cut off.
//! * A deadline around an always-ready future never yields: add
//!   [`consume_budget`](tokio::task::coop::consume_budget) to such a loop.
//! * Blocking a worker delays the driver on it: deadlines are late, never early. Move
//!   blocking work to [`spawn_blocking`](tokio::task::spawn_blocking).
//!
//! # Shutdown
//!
//! * Shutdown drops the driver task, and the tasks awaiting deadlines with their inner
//!   futures. Nothing hangs inside the runtime. The wheel stays valid.
//! * A deadline of this wheel held outside the runtime never fires after shutdown:
//!   await it on its own runtime, or turn the wheel again ([`spawn_driver_on`],
//!   [`Wheel::turn`](punctual_core::Wheel::turn)).
//!
//! # Precision
//!
//! * With a driver that is not starved, a deadline fires at most two ticks late.
//! * tokio's timer rounds sleeps up to whole milliseconds: ticks below 1 ms buy nothing.
//! * Build a wheel of your own with
//!   [`Wheel::with_precise_fires`](punctual_core::Wheel::with_precise_fires), as [`start`]
//!   does: deadlines then fire at tokio's first wake after their time.
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
