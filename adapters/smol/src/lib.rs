//! Drive a [punctual] timer wheel from async-io timers, on any smol executor: no extra
//! thread, and the timer's work done by your executor.
//!
//! [`driver`] is a future that turns a wheel on a [`StdClock`] (`std::time::Instant`, as
//! async-io's timers) and sleeps on an [`async_io::Timer`] until its next turn. Spawn it,
//! or run it alongside your own future with [`with_driver`]. Make deadlines with
//! [`Wheel::deadline`](punctual_core::Wheel::deadline).
//!
//! ```
//! use std::time::Duration;
//!
//! // Once per program: a 'static wheel, driven by a task on smol's global executor.
//! let wheel = punctual_smol::leak_wheel(punctual_smol::DEFAULT_TICK);
//! smol::spawn(punctual_smol::driver(wheel)).detach();
//!
//! smol::block_on(async {
//!     // Met: Ok with the output.
//!     let fast = wheel.deadline(Duration::from_millis(100), async { 42 }).await;
//!     assert_eq!(fast, Ok(42));
//!
//!     // Missed: Err(Elapsed), and the inner future has been dropped.
//!     let slow = smol::Timer::after(Duration::from_secs(5));
//!     let err = wheel.deadline(Duration::from_millis(10), slow).await.unwrap_err();
//!     assert_eq!(err.duration(), Duration::from_millis(10));
//! });
//! ```
//!
//! Any smol executor works: `smol::spawn`, an `Executor` or `LocalExecutor` of your own
//! (`ex.spawn(driver(&wheel))`, also for a borrowed wheel), or none
//! (`smol::block_on(with_driver(wheel, main()))`).
//!
//! `punctual`'s `fut.deadline(d)` works under smol as it is, on the global wheel and its
//! thread. Choose this crate for no extra thread, a timer that lives and dies with your
//! executor, or a wheel of your own (another tick, a fixed capacity). Both count on
//! `std::time::Instant`.
//!
//! # When the executor stops
//!
//! * Tasks on that executor are dropped with their deadlines and inner futures.
//! * Deadlines alive elsewhere never fire while nothing drives the wheel; they fire, late
//!   and never early, once a driver runs again ([`driver`] or
//!   [`Wheel::turn`](punctual_core::Wheel::turn)).
//! * With a driver that is not starved, a deadline fires at most two ticks late.
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
