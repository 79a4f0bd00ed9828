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
//! Any smol executor works: `smol::spawn` as above, a [`smol::Executor`] or `LocalExecutor`
//! of your own (`ex.spawn(driver(&wheel))`, also for a borrowed wheel), or no spawn at all
//! (`smol::block_on(with_driver(wheel, main()))`).
//!
//! [`smol::Executor`]: https://docs.rs/smol/2/smol/struct.Executor.html
//!
//! # When to choose this over the default driver
//!
//! `punctual`'s `fut.deadline(d)` works under smol as it is, on a global wheel driven by
//! one background thread. Choose this crate when you want:
//!
//! * **no extra thread**: the driver is a task of your executor, sleeping on async-io
//!   timers in the reactor smol already runs;
//! * **the timer to live and die with your executor**, such as one wheel per `Executor`
//!   in tests;
//! * **a wheel of your own**: another tick, a fixed capacity.
//!
//! Both use `std::time::Instant`, so time is the same. A wheel made here can even be
//! driven by `punctual::wheel::spawn_driver`'s thread instead, or by both.
//!
//! # When the executor stops
//!
//! The driver turns the wheel only while some executor polls it. When its executor is
//! dropped or stops running, or the `with_driver` future completes:
//!
//! * Tasks on that executor are dropped with it, their deadlines and inner futures too
//!   (destructors run, no panic).
//! * Deadlines alive elsewhere **never fire** while nothing drives the wheel. They can
//!   still complete with their inner future's output, and dropping them is fine. They fire
//!   once a driver runs again (spawn [`driver`] anew, or call
//!   [`Wheel::turn`](punctual_core::Wheel::turn)): late, never early.
//!
//! # Precision
//!
//! With a driver that is not starved, a deadline fires at most two ticks late
//! ([rule 3](https://github.com/punctual-rs/punctual/blob/main/docs/design.md)). On real
//! time that is measured, not promised: the driver's timer is as punctual as async-io's
//! reactor, and the driver task waits its turn on its executor.
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
