//! `tokio` as the ports of tokio's tests import it: tokio itself, with the timers of
//! `tokio::time` replaced by punctual's default ones. A port declares `mod tokio;` from
//! here, so `tokio::time::sleep` in a test body is punctual's and `tokio::test` is tokio's.
//! * Everything but the timer names is tokio's own (`pause`, `advance`, `Instant`, ...).
//! * The timers run on the default wheel of the runtime, driven by its clock, paused or not.

#![allow(unused_imports, unreachable_pub)]

pub use ::tokio::*;

/// tokio's `time`, with punctual's sleeps, intervals and timeouts.
pub mod time {
    pub use ::tokio::time::{Duration, Instant, advance, error, pause, resume};
    pub use punctual::{
        Interval, MissedTickBehavior, Sleep, interval, interval_at, sleep, sleep_until, timeout,
        timeout_at,
    };
}
