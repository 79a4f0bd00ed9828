//! Drive a [punctual] timer wheel from a tokio task: no extra thread, and deadlines that
//! follow tokio's clock, including its paused test clock.
//!
//! [`start`] makes a wheel on the current runtime's clock ([`TokioClock`]), spawns its
//! driver as an ordinary task, and returns the `&'static` wheel; deadlines are made on it
//! with [`Wheel::deadline`](punctual_core::Wheel::deadline). It works on `current_thread`
//! and `multi_thread` runtimes.
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
//!     // Deadlines are `'static` on the leaked wheel: spawn them freely.
//!     let task = tokio::spawn(wheel.deadline(Duration::from_millis(1), std::future::pending::<()>()));
//!     assert!(task.await.unwrap().is_err());
//! }
//! ```
//!
//! The pieces are public for other arrangements: [`spawn_driver`] for a wheel you made
//! yourself (another tick, a fixed capacity, a `static`), [`driver`] for the driver future
//! itself (in a `LocalSet`, or `select!`ed with your own future), and [`TokioSleeper`]
//! for assembling a [`Driver`](punctual_core::Driver) by hand; wrap it in a
//! [`TurningSleeper`] to have tokio's timer turn a `'static` wheel where it fires, as
//! `punctual`'s default wheels do on a paused clock.
//!
//! # When to choose this over the default driver
//!
//! Without setup, `punctual`'s `fut.deadline(d)` uses a global wheel driven by one
//! background thread, and it works under tokio as it is. Choose this crate instead when:
//!
//! * **tests use tokio's paused clock.** The global wheel reads the real clock, so under
//!   `#[tokio::test(start_paused = true)]` its deadlines take real time and ignore
//!   `tokio::time::advance`. A wheel from this crate fires exactly when tokio's virtual
//!   time reaches the deadline.
//! * **you want no extra thread**, or want the timer's work counted and scheduled as part
//!   of your runtime (its metrics, its worker threads, its shutdown).
//! * **you want a wheel of your own** per runtime: another tick, a fixed capacity, or
//!   deadlines that stop with the runtime.
//!
//! Keep the default when deadlines must also run outside tokio, or across several
//! runtimes: a wheel from this crate is driven by one runtime only.
//!
//! # Paused time
//!
//! A [`TokioClock`] reads `tokio::time::Instant`, and the driver sleeps with
//! `tokio::time::sleep_until`, so under a paused runtime:
//!
//! * a deadline fires when tokio's time is advanced to it ([`tokio::time::advance`]) or
//!   auto-advanced to it (the runtime has nothing else to do), never before;
//! * it fires less than one tick late in virtual time, and no real time passes. (That
//!   holds with a tick of whole milliseconds, tokio's timer resolution, while tokio's
//!   clock moves by whole milliseconds, as `start_paused` and auto-advance keep it;
//!   `advance` by a fraction of a millisecond after the wheel was made, or a tick that is
//!   not whole milliseconds, lets tokio's rounding add up to 2 ms more.)
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
//! **Waiting on something other than time, with a paused clock.** With no deadline armed
//! the wheel is idle and its driver holds no tokio timer at all (the next arm wakes it), so
//! a paused runtime that waits on a socket, a channel fed by another thread or a child
//! process does not auto-advance because of punctual. That includes a new wheel: the
//! driver's first turn, with nothing ever armed, sets no timer, and the paused clock does
//! not move. (After an arm wakes it from idle, the driver keeps one timer 16 ticks ahead
//! before it goes idle again, so that a stream of short-lived deadlines does not wake it
//! once each: a paused clock may advance to it once.) While deadlines are armed, the
//! driver keeps one tokio timer for the earliest of them, exactly like a pending
//! `tokio::time::sleep` would: tokio may auto-advance to it when the runtime is idle.
//! The exception is a fourth driver on one wheel ([`start`] and [`spawn_driver`] each
//! make one): a wheel has places for the wakers of three, so the fourth turns it every
//! tick and keeps a one-tick timer even while the wheel is idle, and a paused clock
//! auto-advances tick by tick while the runtime waits on anything else.
//!
//! # Cooperative scheduling
//!
//! tokio gives each task a budget per poll; its own resources (sockets, channels,
//! `tokio::time`) spend it and return `Pending` when it runs out, so one busy task cannot
//! hold a worker. punctual's timer is not a tokio resource, and this is what that means:
//!
//! * **A deadline does not starve.** Whether a deadline fired is decided by the driver
//!   task and read with one atomic load; a `Deadline` spends no budget and never returns
//!   `Pending` for lack of it. An inner future that keeps exhausting its task's budget
//!   (and so keeps returning `Pending`) is still cut off on time: the driver runs as its
//!   own task, with its own budget. (tokio's `timeout` needs a special case for this; a
//!   deadline does not.)
//! * **The driver spends little.** Each poll of the driver task polls its tokio sleep a
//!   handful of times at most, far within one budget; it then yields like any task.
//! * **Ready futures do not yield.** A deadline around a future that is always ready is
//!   as cooperative as that future: a long loop of them never yields to tokio. Add
//!   [`consume_budget`](tokio::task::coop::consume_budget) to such a loop, or wrap it in
//!   [`cooperative`](tokio::task::coop::cooperative).
//! * **A blocked worker delays the driver.** The driver is an ordinary task: code that
//!   blocks its worker thread (long computation between `.await`s, blocking I/O) delays
//!   it when they share that worker (always, on a `current_thread` runtime). Deadlines are
//!   then late, never early, and fire as soon as the driver runs again. No async timeout
//!   can interrupt a future that does not return; move blocking work to
//!   [`spawn_blocking`](tokio::task::spawn_blocking).
//!
//! # Runtime shutdown
//!
//! When the runtime shuts down (it is dropped, or `shutdown_timeout` /
//! `shutdown_background` is called), tokio drops every task, the driver task included:
//!
//! * Tasks that were awaiting a deadline are dropped with it, like any task: their
//!   deadlines and inner futures are dropped (destructors run, no panic), and whoever
//!   awaits their `JoinHandle` gets a cancelled `JoinError`. Nothing hangs.
//! * Deadlines that are still alive elsewhere (held by another runtime or thread) **never
//!   fire** once the driver is gone: nothing turns the wheel. They can still complete
//!   with their inner future's output, and dropping them is fine, but a task that awaits
//!   only the deadline waits forever. Await a wheel's deadlines on its own runtime, so
//!   they are dropped with it; or turn the wheel again yourself, with
//!   [`spawn_driver_on`] on another runtime or [`Wheel::turn`](punctual_core::Wheel::turn).
//! * The wheel itself is leaked and stays valid; it keeps the wakers it held, which is
//!   memory, not work.
//!
//! # Precision
//!
//! With a driver that is not starved, a deadline fires at most two ticks late. On
//! real time that is measured, not promised: tokio's timer rounds its sleeps
//! up to whole milliseconds, and the driver task waits its turn on the scheduler. Ticks
//! below 1 ms do not make deadlines more precise on tokio.
//!
//! So that tokio's rounding does not come on top of the wheel's own, the wheel of
//! [`start`] is built with early looks, and so should a wheel of your own be
//! ([`Wheel::with_early_looks`](punctual_core::Wheel::with_early_looks)):
//! the driver also wakes at the earliest deadline of a tick that holds many, fires what
//! is due then, and wakes again at the earliest one left, rather than only at the tick's
//! end. Deadlines then fire at tokio's first wake after their own time, as tokio's own
//! timers do, whatever the tick.
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
