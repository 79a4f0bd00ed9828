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
//! Most programs want `punctual`'s `wasm` feature instead: its `fut.deadline(d)`,
//! `sleep`, `timeout` and budgets then run on a global wheel driven by this crate, with
//! no setup.
//!
//! # Precision
//!
//! * **Never early** on the wheel's clock: a sleep completes only once the clock reads
//!   its time. A `setTimeout` that fires early (Node's may, by under a millisecond) is set
//!   again for the rest.
//! * **At most two ticks late** while the host runs timers on time, which it does not
//!   always do. Browsers clamp a timer set from within a chain of more than five nested
//!   timers to 4 ms, throttle timers in background tabs to once a second or less, and
//!   round `performance.now()` to 100 µs or coarser. A driver turning the wheel every
//!   tick for long is such a chain, so its turns may come up to 4 ms apart. Timers wait
//!   at most 2<sup>31</sup> − 1 ms (about 24.8 days); a longer sleep sets a new one then.
//! * A task that runs for long without yielding starves the event loop and the driver.
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
mod sleeper;

pub use clock::HostClock;
pub use driver::{DEFAULT_TICK, HostWheel, WasmDriver, driver, leak_wheel, spawn_driver};
pub use sleeper::{MAX_TIMEOUT, TimeoutSleep, TimeoutSleeper};
