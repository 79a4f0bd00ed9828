//! The atomics and the yield of the facade's lock-free state machines (the global wheel's
//! state word, the holders of a tokio runtime's default wheel): `core`'s and `std`'s.
//! Their loom models (`tests/tests/loom_facade.rs`) include `global/state.rs` and
//! `tokio_wheels/holders.rs` beside a `sync` module of their own that names loom's.

#[cfg(feature = "tokio")]
pub(crate) use core::sync::atomic::AtomicU8;
pub(crate) use core::sync::atomic::{AtomicU32, Ordering};
pub(crate) use std::thread::yield_now;
