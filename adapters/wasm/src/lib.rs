#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod clock;
mod driver;
mod hop;
mod sleeper;

pub use clock::HostClock;
pub use driver::{DEFAULT_TICK, HostWheel, WasmDriver, driver, leak_wheel, spawn_driver};
pub use sleeper::{MAX_TIMEOUT, TimeoutSleep, TimeoutSleeper};
