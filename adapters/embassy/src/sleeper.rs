//! `EmbassySleeper`: the driver's sleeps on `embassy_time::Timer`.

use embassy_time::Timer;
use punctual_core::{Reading, Sleeper};

use crate::EmbassyClock;

/// The driver's sleeps, on [`Timer::at`] the first embassy tick whose reading is at or
/// after the planned turn ([`EmbassyClock::instant_at_or_after`]). So a turn never comes
/// early.
///
/// [`run`](crate::run) uses it; name it only to build a [`Driver`](punctual_core::Driver)
/// yourself.
#[derive(Debug, Default, Clone, Copy)]
pub struct EmbassySleeper;

impl Sleeper for EmbassySleeper {
    type Sleep = Timer;

    fn sleep_until(&mut self, at: Reading) -> Timer {
        Timer::at(EmbassyClock::instant_at_or_after(at))
    }
}
