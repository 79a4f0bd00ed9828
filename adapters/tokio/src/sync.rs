//! The atomics of the default wheels' holders: `core`'s. Their loom models
//! (`tests/tests/loom_facade.rs`) include `default_wheels/holders.rs` beside a `sync`
//! module of their own that names loom's.

pub(crate) use core::sync::atomic::{AtomicU8, Ordering};
