//! The futures a wheel bounds or completes, and the timer they share.
//!
//! * Each holds a `Timer`, which reaches its wheel through a [`timer::WheelRef`] and uses
//!   only the operations the wheel offers a deadline, never its structure.

pub(crate) mod budget;
pub(crate) mod deadline;
pub(crate) mod error;
pub(crate) mod sleep;
pub(crate) mod stream;
pub(crate) mod timer;
