//! Drive a [punctual] timer wheel from an embassy task, on embassy-time's clock (`no_std`).
//!
//! Deadlines live on a `static` wheel whose clock is [`EmbassyClock`]
//! (`embassy_time::Instant`). One embassy task of your firmware awaits [`run`], which turns
//! the wheel and sleeps on one [`embassy_time::Timer`] until the next deadline. Any task
//! bounds a future with [`Wheel::deadline`], which resolves to `Err(`[`Elapsed`]`)` once the
//! time has passed, **having dropped the inner future**. No allocation, no lock, one
//! embassy timer however many deadlines are pending.
//!
//! The semantics are punctual's on every target: cancel on fire, never early (see
//! [Precision](#precision)), at most two wheel ticks late with a driver that is not
//! starved, the clock started at the first poll, a ready future costing nothing. See
//! [`Deadline`](punctual_core::Deadline).
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
//! the last two take an `embassy_time::Instant` as it is, or a reading of the clock
//! ([`EmbassyClock::reading_of`]).
//!
//! # Precision
//!
//! embassy-time counts whole ticks of its driver (`TICK_HZ`: 1 kHz on many boards,
//! 32 768 Hz on RTC-driven ones, 1 MHz for the `std` and `mock-driver` drivers).
//! `Instant::now()` rounds the true time **down** to the tick, so a timeout measured from
//! it can end early: `embassy_time::with_timeout(d, fut)` started 0.9 tick into a tick
//! ends `d - 0.9` ticks later. At `tick-hz-100`, a 50 ms timeout can end after 41 ms.
//! This crate never ends early:
//!
//! * [`EmbassyClock`]'s [`resolution`](punctual_core::Clock::resolution) is one embassy
//!   tick ([`RESOLUTION`]), which the wheel adds to every relative deadline. A deadline of
//!   `d` started at reading `r` ends once the clock reads `r + RESOLUTION + d`: after `d`
//!   of true time, wherever in its tick `r` was taken.
//! * The driver sleeps until the first embassy tick whose reading is at or after the
//!   planned turn ([`EmbassyClock::instant_at_or_after`], rounding **up**).
//! * Readings round ticks down to a whole nanosecond. When a tick is not whole nanoseconds
//!   (1 024 Hz: 976 562.5 ns), `RESOLUTION` covers that half nanosecond too.
//!
//! The price is bounded lateness. When the wheel's tick is whole embassy ticks, as [`TICK`]
//! is, and the driver is not starved, a deadline ends at most two wheel ticks after
//! `r + d`, in true time too: one for the resolution, one for rounding up to the tick.
//! At `tick-hz-100` with `TICK` (10 ms), a 50 ms deadline ends after more than 50 and at
//! most 60 ms of true time: never 41. The host tests in `adapters/embassy/host-tests/coarse`
//! check this against `with_timeout`, from every point in a tick.
//!
//! A driver whose `now()` lags true time by the same amount at a deadline's start and end
//! only makes it later. A lag that *shrinks* in between makes it early. A driver that
//! counts tick interrupts, with the interrupt held off when the deadline starts, reads a
//! start too early by the hold-off; the deadline then ends early by that, less
//! [`RESOLUTION`]. So a driver's `now()` must count a tick whose interrupt is pending, as
//! embassy's own drivers do (they read a hardware counter); the firmware example's does.
//!
//! # Choosing the tick
//!
//! [`wheel`] uses [`TICK`]: the shortest whole number of embassy ticks that is at least
//! 1 ms and whole nanoseconds. For another tick, use [`Wheel::fixed`]`(EmbassyClock, tick)`.
//! A multiple of `TICK` turns less often, at the cost of precision. Whole embassy ticks
//! below 1 ms are more precise and turn more often. A tick below [`RESOLUTION`] buys
//! nothing, and the two-tick bound then no longer holds in wheel ticks. Deadlines are
//! never early with any tick.
//!
//! # Timer queue
//!
//! The driver registers one waker with embassy-time: that of the task awaiting [`run`].
//! An embassy task's waker works with embassy's executor-integrated timer queue. Polling
//! the driver from anything else (a host test's `block_on`, say) needs a
//! `generic-queue-N` feature of embassy-time in the final binary. Tasks that await
//! deadlines are woken by the wheel, not by embassy-time.
//!
//! # Compared with `embassy_time::with_timeout`
//!
//! | | `with_timeout` | `WHEEL.deadline` |
//! |---|---|---|
//! | clock starts | when the future is created | at its first pending poll |
//! | ends early | up to one tick | never |
//! | inner future dropped on timeout | with the outer future (at once under `.await`) | before `Err` is returned |
//! | embassy timer queue entries | one per waiting task | one for the whole wheel |
//! | limit on pending timeouts | none, or a generic queue's `N` | the wheel's `N` (then degrades: busy, never early) |
//! | cost of a future ready at its first poll | a clock read | nothing |
//!
//! # Features
//!
//! * `portable-atomic`: for targets without compare-and-swap (thumbv6m). The wheel's
//!   atomics go through `portable-atomic`; the final binary provides `critical-section`.
//! * `stats`: the wheel's counters, `Wheel::stats` and `Wheel::degraded_polls` (off: a
//!   firmware keeps none, 32 bytes of RAM and their code less).
//! * `sub-tick`: a deadline among few in its wheel tick fires at its own time, not at the
//!   tick's end. Off, every deadline fires at its tick's end: never early and at most two
//!   ticks late all the same. At `tick-hz-1_000` with [`TICK`] (one embassy tick) it gains
//!   nothing, since the driver's timer ends on embassy ticks anyway; where `TICK` is many
//!   embassy ticks (64 at `tick-hz-32_768`) it fires within an embassy tick of each
//!   deadline instead of up to a wheel tick later. It costs 192 bytes of RAM and about
//!   1 KB of code.
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
/// `L` is the number of levels of 64 slots (see [`Fixed`]): 3 by default, a range of
/// 2<sup>18</sup> ticks. That is 4.4 minutes at the 1 ms [`TICK`] of most tick rates,
/// 8.5 minutes at 1.95 ms, 44 minutes at 10 ms. A longer deadline still fires on time,
/// never early: it waits at the top level, costing the driver one turn per rotation. Each
/// level more costs 72 bytes and multiplies the range by 64; `EmbassyWheel<N, u8, 4>`
/// reaches 4.6 hours. With the defaults, an 8-entry wheel is about 680 bytes on a 32-bit
/// part, all in `.bss` (zeroed at boot, nothing copied from flash); the `sub-tick` and
/// `stats` features add 224.
pub type EmbassyWheel<const N: usize, W = u8, const L: usize = 3> =
    FixedWheel<EmbassyClock, N, W, L>;

/// The future [`run`] returns: punctual's [`Driver`] sleeping on embassy timers.
pub type EmbassyDriver<'w, S> = Driver<'w, EmbassyClock, S, EmbassySleeper>;

/// A wheel of `N` deadlines on [`EmbassyClock`] with the recommended [`TICK`], for a
/// `static`.
///
/// Holds at most `N` pending deadlines at once. A deadline started while the wheel is full
/// still never ends early nor misses its time, but polls its task busily until an entry
/// frees (see [`Deadline`](punctual_core::Deadline)). Size `N` for the deadlines your tasks
/// await at the same time.
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
/// Await it from one embassy task of your firmware, never of a library, on the executor
/// whose time driver `embassy_time` uses. Deadlines on the wheel fire only while it runs. It never completes: its output is
/// [`Infallible`](core::convert::Infallible), so `match run(&WHEEL).await {}` has type `!`,
/// the return type of an embassy task that never ends:
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
