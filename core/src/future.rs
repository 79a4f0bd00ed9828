//! The futures a wheel bounds or completes, and the timer they share.
//!
//! * Each future here holds a `Timer`: the part that does not depend on the inner future.
//! * A timer reaches its wheel through a [`timer::WheelRef`].
//! * Nothing here touches the wheel's structure, only the operations it offers a deadline.

pub(crate) mod budget;
pub(crate) mod deadline;
pub(crate) mod error;
pub(crate) mod sleep;
pub(crate) mod stream;
pub(crate) mod timer;
