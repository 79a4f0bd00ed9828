//! The atomics that the facade's lock-free state machine uses (the global wheel's state
//! word, `global::state`): `core`'s and `std`'s here. Its loom models
//! (`tests/tests/loom_facade.rs`) include that file with a module of this name of their own,
//! which names loom's instead, so that the models check the very code that runs.

pub(crate) use core::sync::atomic::{AtomicU32, Ordering};
pub(crate) use std::thread::yield_now;
