// The README is the front page on docs.rs; its examples need runtimes this crate does not
// depend on, so they run as doc tests of the `punctual-tests` package (tests/src/lib.rs).
#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
#![cfg_attr(not(feature = "std"), no_std)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub use punctual_core::{Elapsed, MissedTickBehavior};

/// The core crate, for everything not re-exported here.
pub use punctual_core;

#[cfg(feature = "std")]
mod budget;
#[cfg(feature = "std")]
mod default_wheel;
#[cfg(feature = "std")]
pub mod delay_queue;
#[cfg(feature = "std")]
mod ext;
#[cfg(feature = "std")]
mod global;
#[cfg(all(
    target_family = "wasm",
    target_os = "unknown",
    any(feature = "tokio", feature = "test-util")
))]
compile_error!(
    "punctual: on wasm32-unknown-unknown the global wheel on the host's timers is the only \
     default wheel; the `tokio` and `test-util` features need threads and \
     `std::time::Instant`: turn them off for this target"
);
#[cfg(feature = "std")]
mod instant;
#[cfg(feature = "std")]
pub mod prelude;
#[cfg(feature = "std")]
pub mod report;
#[cfg(all(
    feature = "std",
    not(all(target_family = "wasm", target_os = "unknown"))
))]
mod sync;
#[cfg(feature = "tokio")]
mod tokio_wheels;
#[cfg(feature = "test-util")]
pub mod virtual_time;
pub mod wheel;
#[cfg(any(feature = "tokio", feature = "test-util"))]
mod wheel_choice;

#[cfg(feature = "std")]
pub use crate::{
    budget::{Budget, Budgeted},
    default_wheel::{Deadline, IdleTimeout, Interval, NamedDeadline, Sleep, StreamDeadline},
    delay_queue::DelayQueue,
    ext::{
        DeadlineExt, StreamDeadlineExt, budget, interval, interval_at, sleep, sleep_until, timeout,
        timeout_at,
    },
    instant::DeadlineInstant,
};

/// The runtime adapters, for a wheel of your own driven by a runtime: each its own crate,
/// re-exported behind the feature of its name (here, so that `use punctual::*` shadows no
/// crate named `tokio`). Others: `punctual-smol`, `punctual-wasm`.
pub mod adapters {
    /// Drive a wheel from a tokio task. See [`punctual_tokio`].
    #[cfg(feature = "tokio")]
    pub use punctual_tokio as tokio;

    #[cfg(feature = "tower")]
    pub mod tower;

    /// Drive a wheel from JavaScript timers on `wasm32-unknown-unknown`. See [`punctual_wasm`].
    #[cfg(all(feature = "std", target_family = "wasm", target_os = "unknown"))]
    pub use punctual_wasm as wasm;

    /// Drive a static wheel from an embassy task. See [`punctual_embassy`].
    #[cfg(feature = "embassy")]
    pub use punctual_embassy as embassy;
}

/// Migrating from tokio, tokio-stream, tower, embassy-time, async-io and futures-timer
/// (`docs/migrating.md`). Its examples run as doc tests of the `punctual-tests` package.
#[cfg(all(feature = "tokio", feature = "test-util", feature = "tower"))]
#[cfg_attr(not(doctest), doc = include_str!("../docs/migrating.md"))]
pub mod migrating {}

/// The guide to choosing deadlines (`docs/guide.md`). Its examples run as doc tests of the
/// `punctual-tests` package.
#[cfg(feature = "std")]
#[cfg_attr(not(doctest), doc = include_str!("../docs/guide.md"))]
pub mod guide {}
