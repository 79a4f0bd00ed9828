//! The atomics and the yield of the lock-free state machines (the fork gate, the global
//! wheel's state word): `core`'s and `std`'s. Their loom models include `fork_gate.rs` and
//! `global/state.rs` beside a `sync` module of their own that names loom's.

pub(crate) use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
pub(crate) use std::thread::yield_now;
