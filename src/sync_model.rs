//! The atomics and the yield that the facade's two lock-free state machines use (the
//! global wheel's state word, `global::state`, and the timer threads' fork gate,
//! `thread_driver::fork_gate`): `core`'s and `std`'s here. Their loom models
//! (`tests/loom_facade.rs`) include those two files with a module of this name of their
//! own, which names loom's instead, so that the models check the very code that runs.

pub(crate) use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
pub(crate) use std::thread::yield_now;
