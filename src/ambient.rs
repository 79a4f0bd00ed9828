//! `Ambient`: how a default deadline reaches its wheel, chosen at its first pending poll.
//!
//! A default deadline (`fut.deadline(d)`, `punctual::sleep`, `punctual::budget`, ...) does
//! not know its wheel when it is made. At its first pending poll (never on the ready
//! path, which touches no wheel) it takes, in this order:
//!
//! 1. the thread's virtual-time wheel, if the thread paused time
//!    ([`virtual_time::pause`](crate::virtual_time::pause), feature `test-util`);
//! 2. the wheel of the tokio runtime the thread is in, if any (feature `tokio`; see
//!    `tokio_wheels`), so that the runtime's clock applies, paused or not;
//! 3. the global wheel, driven by its own thread.
//!
//! The choice is kept for the deadline's life: the entry it arms lives on that wheel. An
//! idle timeout chooses again for each gap, as it holds no entry between gaps.
//!
//! Without either feature, the handle is the zero-sized [`Global`](crate::Global) handle
//! in all but name, and every call goes straight to the global wheel.

#[cfg(any(feature = "tokio", feature = "test-util"))]
mod chosen;
#[cfg(not(any(feature = "tokio", feature = "test-util")))]
mod global_only;

#[cfg(any(feature = "tokio", feature = "test-util"))]
use crate::default_wheel::DefaultWheel;

/// How a default deadline reaches its wheel: the wheel of the runtime or virtual time the
/// deadline is first polled in, or the global wheel (see [`DeadlineExt`](crate::DeadlineExt)).
///
/// Without the `tokio` and `test-util` features it is zero bytes and always the global
/// wheel (`ambient/global_only.rs`); with either, it is a reference to the wheel chosen at
/// the first pending poll (`ambient/chosen.rs`).
#[derive(Clone, Copy, Default)]
pub struct Ambient {
    #[cfg(any(feature = "tokio", feature = "test-util"))]
    chosen: Option<&'static DefaultWheel>,
}
