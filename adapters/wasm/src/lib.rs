//! Drive a [punctual] timer wheel from JavaScript timers on `wasm32-unknown-unknown`, in
//! browsers, web workers and Node: no thread, and the timer's work done on the host's
//! event loop.
//!
//! * [`HostClock`] reads the host's monotonic time, `performance.now()`, as
//!   [`web_time::Instant`] does. `std::time::Instant::now()` panics on this target.
//! * [`driver`] is the wheel's [`Driver`](punctual_core::Driver): it turns the wheel,
//!   then sleeps on one `setTimeout` until the wheel's next planned turn.
//! * [`spawn_driver`] runs it as a task of `wasm-bindgen-futures`' executor, forever.
//! * An arm earlier than the planned turn wakes the driver's task, which turns the wheel
//!   in a microtask and sets a new `setTimeout` for the earlier turn. Other arms wake
//!   no one.
//! * Idle (nothing armed), the driver keeps no timer set.
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
//! Most programs want `punctual` instead: on this target its `fut.deadline(d)`,
//! `sleep`, `timeout` and budgets run on a global wheel that this crate drives, with no
//! setup.
//!
//! # Precision
//!
//! * **Never early** on the wheel's clock: a sleep completes only once the clock reads
//!   its time. A `setTimeout` that fires early (Node's may, by under a millisecond) is set
//!   again for the rest.
//! * **At most two ticks late** while the host runs timers on time. Browsers clamp a
//!   timer shorter than 4 ms to 4 ms when it is set from a chain of more than five nested
//!   timers, as a driver turning the wheel tick after tick would be: so the driver sets
//!   such a timer from a task of its own (a message on a `MessageChannel`), where the
//!   chain starts anew. Timers wait at most 2<sup>31</sup> − 1 ms (about 24.8 days); a
//!   longer sleep sets a new timer then.
//! * **Starved**, the driver is late by as much: browsers run timers of background tabs
//!   once a second or less, and a task that runs long without yielding holds up the
//!   event loop. `performance.now()` itself is rounded to 100 µs or coarser in browsers.
//!
//! # Threads
//!
//! Built for single-threaded wasm. With threads (`+atomics`), the driver runs on the
//! thread that spawned it, and that thread's event loop must keep running.
//!
//! # Other targets
//!
//! The crate builds everywhere, for `cargo check` and docs of code that targets the web,
//! but it needs a JavaScript host: off wasm, its driver and clock panic when used.
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
