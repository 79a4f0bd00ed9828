#![doc = include_str!("../README.md")]
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
