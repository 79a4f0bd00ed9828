//! The extension traits and the error, for a glob import that shadows nothing:
//! `use punctual::prelude::*;` brings `.deadline(d)` to every future and
//! `.idle_timeout(d)` / `.total_deadline(d)` to every stream, next to `#[tokio::main]` and
//! any `core` or `tokio` path.
//!
//! ```
//! use std::time::Duration;
//! use punctual::prelude::*;
//!
//! # futures_executor::block_on(async {
//! let r: Result<u8, Elapsed> = async { 1 }.deadline(Duration::from_secs(1)).await;
//! assert_eq!(r, Ok(1));
//! # });
//! ```

pub use crate::{DeadlineExt, Elapsed, StreamDeadlineExt};
