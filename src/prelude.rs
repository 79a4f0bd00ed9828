//! The extension traits and the error, for a glob import that shadows nothing:
//! `use punctual::prelude::*;` brings `.deadline(d)` to every future and
//! `.idle_timeout(d)` / `.total_deadline(d)` to every stream, next to `#[tokio::main]` and
//! any `core` or `tokio` path.

pub use crate::{DeadlineExt, Elapsed, StreamDeadlineExt};
