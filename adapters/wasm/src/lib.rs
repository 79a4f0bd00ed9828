//! Drive a [punctual] timer wheel from JavaScript timers on `wasm32-unknown-unknown`, in
//! browsers, web workers and Node: no thread, and the timer's work done on the host's
//! event loop.
//!
//! [`HostClock`] reads `performance.now()` (`std::time::Instant::now()` panics on this
//! target); [`driver`] turns the wheel and sleeps on one `setTimeout` until its next turn,
//! none while idle; [`spawn_driver`] runs it on `wasm-bindgen-futures`' executor.
//!
//! ```no_run
//! use std::time::Duration;
//! use wasm_bindgen_futures::spawn_local;
//!
//! // Once per program: a 'static wheel, driven on the host's timers.
//! let wheel = punctual_wasm::leak_wheel(punctual_wasm::DEFAULT_TICK);
//! punctual_wasm::spawn_driver(wheel);
//!
//! spawn_local(async move {
//!     // Missed: Err(Elapsed), and the inner future has been dropped.
//!     let r = wheel.deadline(Duration::from_millis(10), std::future::pending::<()>()).await;
//!     assert!(r.is_err());
//! });
//! ```
//!
//! (`punctual`'s own deadlines run on a global wheel this crate drives, with no setup.)
//!
//! # Precision
//!
//! * **Never early**: a sleep completes only once the clock reads its time; a `setTimeout`
//!   that fires early (Node's may) is set again for the rest.
//! * **At most two ticks late** while the host runs timers on time: short timers are set
//!   from a `MessageChannel` task, so browsers do not clamp nested timers to 4 ms.
//! * **Starved** (a background tab, a long task), the driver is late by as much.
//!
//! With `+atomics`, the driver runs on the thread that spawned it. Off wasm the crate
//! builds (for `cargo check` and docs), but its driver and clock panic when used.
//!
//! [punctual]: https://docs.rs/punctual
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod clock;
mod driver;
mod hop;
mod sleeper;

pub use clock::HostClock;
pub use driver::{DEFAULT_TICK, HostWheel, WasmDriver, driver, leak_wheel, spawn_driver};
pub use sleeper::{MAX_TIMEOUT, TimeoutSleep, TimeoutSleeper};
