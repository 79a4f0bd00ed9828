#![doc = include_str!("../README.md")]
#![cfg_attr(not(feature = "std"), no_std)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub use punctual_core::{
    Budget, Clock, DeadlineName, Driver, Elapsed, Fixed, FixedWheel, IdleTimeout, Limit, Named,
    RawWheel, Sleeper, Stats, Storage, StreamDeadline, Unnamed, Wheel, WheelRef, Within,
};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use punctual_core::{Growable, GrowableWheel, ManualClock, StdClock};

/// The core crate, for everything not re-exported here.
pub use punctual_core as core;

#[cfg(feature = "std")]
mod global;
#[cfg(feature = "std")]
mod thread_driver;
#[cfg(feature = "std")]
mod wake_lead;

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use global::{
    Budgeted, Deadline, DeadlineExt, Global, GlobalClock, NamedDeadline, Sleep, StreamDeadlineExt,
    budget, global_wheel, sleep, sleep_until,
};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use thread_driver::spawn_driver;

/// Drive a wheel from a tokio task. See [`punctual_tokio`].
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use punctual_tokio as tokio;

/// Drive a wheel from async-io timers on any smol executor. See [`punctual_smol`].
#[cfg(feature = "smol")]
#[cfg_attr(docsrs, doc(cfg(feature = "smol")))]
pub use punctual_smol as smol;

/// Drive a static wheel from an embassy task. See [`punctual_embassy`].
#[cfg(feature = "embassy")]
#[cfg_attr(docsrs, doc(cfg(feature = "embassy")))]
pub use punctual_embassy as embassy;

/// The guide to choosing deadlines (`docs/guide.md`), here so its examples are tested.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
#[doc = include_str!("../docs/guide.md")]
pub mod guide {}
