//! Drive a [punctual] timer wheel from an embassy task, on embassy-time's clock (`no_std`).
//!
//! Deadlines live on a `static` wheel whose clock is [`EmbassyClock`]
//! (`embassy_time::Instant`). One embassy task of your firmware awaits [`run`], which turns
//! the wheel and sleeps on one [`embassy_time::Timer`] until the next deadline. Any task
//! bounds a future with [`Wheel::deadline`], which resolves to `Err(`[`Elapsed`]`)` once the
//! time has passed, **having dropped the inner future**. No allocation, no lock, one
//! embassy timer however many deadlines are pending.
//!
//! The semantics are punctual's on every target (see [`Deadline`](punctual_core::Deadline)).
//!
//! # Examples
//!
//! A firmware picks the wheel's capacity, spawns the driver, and bounds what it awaits. The
//! final binary also picks embassy-time's tick rate and time driver; a library never does.
//!
//! ```no_run
//! use core::time::Duration;
//! use embassy_executor::Spawner;
//! use punctual_embassy::EmbassyWheel;
//!
//! /// At most 16 deadlines pending at once, on the recommended tick.
//! static WHEEL: EmbassyWheel<16> = punctual_embassy::wheel();
//!
//! /// Turns the wheel, forever.
//! #[embassy_executor::task]
//! async fn punctual_driver() -> ! {
//!     match punctual_embassy::run(&WHEEL).await {}
//! }
//!
//! // In `#[embassy_executor::main] async fn main(spawner: Spawner)`, or any task:
//! async fn app(spawner: Spawner) {
//!     spawner.spawn(punctual_driver().unwrap());
//!
//!     match WHEEL.deadline(Duration::from_millis(50), read_sensor()).await {
//!         Ok(value) => { /* in time */ }
//!         Err(elapsed) => { /* 50 ms passed; `read_sensor()` has been dropped */ }
//!     }
//! }
//! # async fn read_sensor() -> u16 { 0 }
//! # fn main() {}
//! ```
//!
//! [`Wheel::sleep`], [`Wheel::sleep_until`] and [`Wheel::deadline_at`] work the same way;
//! the last two take an `embassy_time::Instant`, or a reading ([`EmbassyClock::reading_of`]).
//!
//! # Precision
//!
//! `Instant::now()` floors the true time to embassy's tick, so `with_timeout(d, fut)` can
//! end up to a tick early (a 50 ms timeout after 41 ms at `tick-hz-100`). This crate never
//! ends early:
//! * [`EmbassyClock`]'s resolution is one embassy tick ([`RESOLUTION`]), which the wheel adds
//!   to every relative deadline.
//! * The driver sleeps until the first embassy tick at or after the planned turn
//!   ([`EmbassyClock::instant_at_or_after`] rounds up).
//! * With a wheel tick of whole embassy ticks, as [`TICK`] is, a deadline ends at most two
//!   wheel ticks late, in true time too.
//! * The time driver's `now()` must count a tick whose interrupt is pending (embassy's own
//!   drivers read a hardware counter); one that lags more at a deadline's end than at its
//!   start makes it early.
//!
//! [`wheel`] uses [`TICK`]: the shortest whole number of embassy ticks of at least 1 ms and
//! whole nanoseconds. [`Wheel::fixed`]`(EmbassyClock, tick)` takes another; a tick below
//! [`RESOLUTION`] buys nothing.
//!
//! # Timer queue
//!
//! The driver registers one waker with embassy-time, that of the task awaiting [`run`].
//! Polling the driver from anything but an embassy task (a host test's `block_on`) needs a
//! `generic-queue-N` feature of embassy-time in the final binary.
//!
//! # Compared with `embassy_time::with_timeout`
//!
//! | | `with_timeout` | `WHEEL.deadline` |
//! |---|---|---|
//! | clock starts | when the future is created | at its first pending poll |
//! | ends early | up to one tick | never |
//! | inner future dropped on timeout | with the outer future | before `Err` is returned |
//! | embassy timer queue entries | one per waiting task | one for the whole wheel |
//! | limit on pending timeouts | none, or a generic queue's `N` | the wheel's `N` (then busy, never early) |
//! | cost of a future ready at its first poll | a clock read | nothing |
//!
//! # Features
//!
//! * `portable-atomic`: for targets without compare-and-swap (thumbv6m); the final binary
//!   provides `critical-section`.
//! * `stats`: `Wheel::stats` and `Wheel::degraded_polls` (32 bytes of RAM).
//! * `sub-tick`: a deadline among few in its wheel tick fires at its own time, not at the
//!   tick's end; it matters where [`TICK`] is many embassy ticks (192 bytes of RAM, about
//!   1 KB of code).
//!
//! [punctual]: https://docs.rs/punctual
//! [`Elapsed`]: punctual_core::Elapsed
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

mod clock;
mod convert;
mod sleeper;

pub use clock::EmbassyClock;
pub use convert::{RESOLUTION, TICK};
pub use sleeper::EmbassySleeper;

use punctual_core::{Driver, Fixed, FixedWheel, IndexWidth, Storage, Wheel};

/// A wheel of `N` deadlines on embassy-time's clock: what [`wheel`] makes and [`run`] drives.
///
/// `W` is the width of the storage's slot heads (see [`Fixed`]): `u8` by default, for at
/// most 255 entries. For more, name a wider one:
///
/// ```
/// use punctual_embassy::EmbassyWheel;
///
/// static LARGE: EmbassyWheel<1000, u16> = punctual_embassy::wheel();
/// assert_eq!(LARGE.capacity(), 1000);
/// ```
///
/// A capacity the width cannot hold (`EmbassyWheel<300>`) fails to compile.
///
/// `L` is the number of levels of 64 slots: 3 by default, 2<sup>18</sup> ticks (4.4
/// minutes at a 1 ms [`TICK`]). A longer deadline still fires on time, re-placed once per
/// rotation. Each level more costs 72 bytes and multiplies the range by 64. An 8-entry
/// wheel is about 680 bytes on a 32-bit part, all in `.bss`.
pub type EmbassyWheel<const N: usize, W = u8, const L: usize = 3> =
    FixedWheel<EmbassyClock, N, W, L>;

/// The future [`run`] returns: punctual's [`Driver`] sleeping on embassy timers.
pub type EmbassyDriver<'w, S> = Driver<'w, EmbassyClock, S, EmbassySleeper>;

/// A wheel of `N` deadlines on [`EmbassyClock`] with the recommended [`TICK`], for a
/// `static`.
///
/// Holds at most `N` pending deadlines. One started while the wheel is full is still never
/// early nor missed, but polls its task busily until an entry frees.
///
/// ```
/// use punctual_embassy::EmbassyWheel;
///
/// static WHEEL: EmbassyWheel<8> = punctual_embassy::wheel();
/// assert_eq!(WHEEL.capacity(), 8);
/// assert_eq!(WHEEL.tick(), punctual_embassy::TICK);
/// ```
pub const fn wheel<const N: usize, W: IndexWidth, const L: usize>() -> EmbassyWheel<N, W, L> {
    Wheel::<EmbassyClock, Fixed<N, W, L>>::fixed(EmbassyClock, TICK)
}

/// Drives `wheel` forever: turns it, fires every deadline that is due, and sleeps on an
/// [`embassy_time::Timer`] until the next one (or until a task arms an earlier deadline).
///
/// Await it from one task of your firmware (never of a library). Deadlines fire only while
/// it runs. Its output is [`Infallible`](core::convert::Infallible), so
/// `match run(&WHEEL).await {}` has type `!`:
///
/// ```no_run
/// # static WHEEL: punctual_embassy::EmbassyWheel<4> = punctual_embassy::wheel();
/// #[embassy_executor::task]
/// async fn punctual_driver() -> ! {
///     match punctual_embassy::run(&WHEEL).await {}
/// }
/// ```
///
/// # Cancel safety
///
/// Dropping the driver stops the wheel: pending deadlines fire late, once a driver runs
/// again. None is lost and none fires early. Two drivers on one wheel are harmless but
/// useless.
pub fn run<S: Storage>(wheel: &Wheel<EmbassyClock, S>) -> EmbassyDriver<'_, S> {
    wheel.driver(EmbassySleeper)
}
