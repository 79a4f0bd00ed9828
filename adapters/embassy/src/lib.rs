//! Drive a [punctual] timer wheel from an embassy task, on embassy-time's clock (`no_std`).
//!
//! One task of your firmware awaits [`run`], which turns a `static` wheel on
//! [`EmbassyClock`] and sleeps on one [`embassy_time::Timer`] until the next deadline; any
//! task bounds a future with [`Wheel::deadline`] (`Err(`[`Elapsed`]`)`, the inner future
//! dropped). No allocation, no lock. The final binary picks embassy-time's tick rate and
//! time driver; a library never does.
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
//! [`Wheel::sleep_until`] and [`Wheel::deadline_at`] take an `embassy_time::Instant`.
//!
//! # Precision
//!
//! `with_timeout(d, fut)` can end up to an embassy tick early (`Instant::now()` floors);
//! this crate never does:
//! * [`EmbassyClock`]'s resolution, one embassy tick ([`RESOLUTION`]), is added to every
//!   relative deadline, and the driver's sleeps round up to the next embassy tick.
//! * With a wheel tick of whole embassy ticks, as [`TICK`] (what [`wheel`] uses) is, a
//!   deadline ends at most two wheel ticks late, in true time too. A tick below
//!   [`RESOLUTION`] buys nothing.
//! * The time driver's `now()` must count a tick whose interrupt is pending (embassy's own
//!   drivers do); one that lags more at a deadline's end than at its start makes it early.
//! * Polling the driver from anything but an embassy task (a host test's `block_on`) needs
//!   a `generic-queue-N` feature of embassy-time in the final binary.
//!
//! Unlike `with_timeout`'s, a deadline's clock starts at its first pending poll (a future
//! ready at once costs nothing), and one embassy timer serves the whole wheel.
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
/// `W`, the width of the slot heads ([`Fixed`]), is `u8` by default: at most 255 entries.
/// For more, name a wider one (a capacity the width cannot hold fails to compile):
///
/// ```
/// use punctual_embassy::EmbassyWheel;
///
/// static LARGE: EmbassyWheel<1000, u16> = punctual_embassy::wheel();
/// assert_eq!(LARGE.capacity(), 1000);
/// ```
///
/// `L` levels of 64 slots: 3 by default, 2<sup>18</sup> ticks (4.4 minutes at 1 ms); a
/// longer deadline is re-placed once per rotation. Each level costs 72 bytes. An 8-entry
/// wheel is about 680 bytes on a 32-bit part, all in `.bss`.
pub type EmbassyWheel<const N: usize, W = u8, const L: usize = 3> =
    FixedWheel<EmbassyClock, N, W, L>;

/// The future [`run`] returns: punctual's [`Driver`] sleeping on embassy timers.
pub type EmbassyDriver<'w, S> = Driver<'w, EmbassyClock, S, EmbassySleeper>;

/// A wheel of `N` deadlines on [`EmbassyClock`] with the recommended [`TICK`], for a
/// `static`. A deadline started while it is full is never early nor missed, but polls its
/// task busily until an entry frees.
pub const fn wheel<const N: usize, W: IndexWidth, const L: usize>() -> EmbassyWheel<N, W, L> {
    Wheel::<EmbassyClock, Fixed<N, W, L>>::fixed(EmbassyClock, TICK)
}

/// Drives `wheel` forever (see the crate example): turns it, and sleeps on an
/// [`embassy_time::Timer`] until the next deadline or an earlier arm. Await it from one
/// task of your firmware (never of a library).
///
/// # Cancel safety
///
/// Dropping the driver stops the wheel: pending deadlines fire late, never early, once a
/// driver runs again.
pub fn run<S: Storage>(wheel: &Wheel<EmbassyClock, S>) -> EmbassyDriver<'_, S> {
    wheel.driver(EmbassySleeper)
}
