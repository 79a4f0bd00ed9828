//! The futures a wheel bounds or completes, and the `Timer` they share, which reaches its
//! wheel through a [`timer::WheelRef`] and never touches the wheel's structure.

pub(crate) mod budget;
pub(crate) mod deadline;
pub(crate) mod error;
pub(crate) mod interval;
pub(crate) mod outcome;
pub(crate) mod sleep;
pub(crate) mod stream;
pub(crate) mod timer;
