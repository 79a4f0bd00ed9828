//! `EmbassySleeper`: the driver's sleeps on `embassy_time::Timer`.

use embassy_time::Timer;
use punctual_core::{Reading, Sleeper};

use crate::EmbassyClock;

/// The driver's sleeps ([`run`](crate::run)'s): [`Timer::at`] the first embassy tick at or
/// after the planned turn ([`EmbassyClock::instant_at_or_after`]), never early.
#[derive(Debug, Default, Clone, Copy)]
pub struct EmbassySleeper;

impl Sleeper for EmbassySleeper {
    type Sleep = Timer;

    fn sleep_until(&mut self, at: Reading) -> Timer {
        Timer::at(EmbassyClock::instant_at_or_after(at))
    }
}
