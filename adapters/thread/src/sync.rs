//! The atomics and the yield of the fork gate: `core`'s and `std`'s. Its loom models
//! include `fork_gate.rs` beside a `sync` module of their own that names loom's.

pub(crate) use core::sync::atomic::{AtomicUsize, Ordering};
pub(crate) use std::thread::yield_now;
