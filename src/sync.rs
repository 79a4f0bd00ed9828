//! The atomics that the facade's lock-free state machines use (the global wheel's state
//! word, `global::state`; the holders of a tokio runtime's default wheel,
//! `tokio_wheels::holders`): `core`'s and `std`'s here. Their loom models
//! (`tests/tests/loom_facade.rs`) include those files with a module of this name of their own,
//! which names loom's instead, so that the models check the very code that runs.

#[cfg(feature = "tokio")]
pub(crate) use core::sync::atomic::AtomicU8;
pub(crate) use core::sync::atomic::{AtomicU32, Ordering};
pub(crate) use std::thread::yield_now;
