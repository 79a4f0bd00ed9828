#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod driver;
mod sleeper;

pub use driver::{
    DEFAULT_TICK, SmolDriver, SmolWheel, WithDriver, driver, leak_wheel, with_driver,
};
pub use punctual_core::StdClock;
pub use sleeper::{AsyncIoSleeper, TimerSleep};
