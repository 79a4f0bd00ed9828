//! [`DefaultWheel`]: how a default deadline reaches its wheel.
//!
//! A default deadline picks its wheel at its first pending poll, never on the ready path:
//!
//! 1. the thread's virtual-time wheel, if the thread paused time (`virtual_time::pause`,
//!    feature `test-util`);
//! 2. else the wheel of the tokio runtime the thread is in (feature `tokio`, `tokio_wheels`);
//! 3. else the global wheel.
//!
//! * The choice holds for the deadline's life: its entry lives on that wheel.
//! * An idle timeout chooses again for each gap; it holds no entry between gaps.
//! * Without either feature, `DefaultWheel` is zero bytes and always the global wheel.

#[cfg(not(any(feature = "tokio", feature = "test-util")))]
mod global_only;
#[cfg(any(feature = "tokio", feature = "test-util"))]
mod several_wheels;

#[cfg(any(feature = "tokio", feature = "test-util"))]
use crate::wheel_choice::WheelChoice;

/// How a default deadline reaches its wheel: the wheel of the runtime or virtual time it is
/// first polled in, or the global wheel (see [`DeadlineExt`](crate::DeadlineExt)).
///
/// Without the `tokio` and `test-util` features it is zero bytes and always the global wheel.
#[derive(Clone, Copy, Default)]
pub struct DefaultWheel {
    #[cfg(any(feature = "tokio", feature = "test-util"))]
    chosen: Option<&'static WheelChoice>,
}
