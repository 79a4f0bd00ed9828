#![doc = include_str!("../README.md")]
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
