//! The futures a wheel bounds or completes, and the timer they share.
//!
//! [`Deadline`](deadline::Deadline), [`Sleep`](sleep::Sleep), the budgets and the stream
//! deadlines hold a [`Timer`](timer::Timer): the part that does not depend on the inner
//! future, compiled once. The timer reaches its wheel through [`timer::WheelRef`]; nothing
//! here touches the wheel's structure, only the operations the wheel offers a deadline.

pub(crate) mod budget;
pub(crate) mod budgeted;
pub(crate) mod deadline;
pub(crate) mod error;
pub(crate) mod sleep;
pub(crate) mod stream;
pub(crate) mod timer;
