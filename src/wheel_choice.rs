//! [`WheelChoice`]: a wheel a default deadline may choose, as `DefaultWheel` holds it.

use punctual_core::{RawWheel, Reading};

/// A wheel a default deadline may choose: the global wheel, a tokio runtime's or a paused
/// thread's, with how its clock reads the global clock's readings.
///
/// * It and its wheel live for the rest of the process; a deadline may outlive its thread.
/// * A wheel is reused only once its thread is gone and nothing is armed on it.
pub(crate) struct WheelChoice {
    pub(crate) wheel: &'static dyn RawWheel,
    /// A runtime's clock, which reads behind the global clock by a fraction of a tick.
    /// `None` when the wheel reads the global clock's readings.
    #[cfg(feature = "tokio")]
    pub(crate) runtime_clock: Option<&'static crate::tokio_wheels::RuntimeClock>,
    /// The wheel's clock reads what the global wheel's reads, at every moment. Budgets
    /// started on either then apply on the other.
    pub(crate) on_global_timeline: bool,
}

impl WheelChoice {
    /// `at`, a reading of the global clock, as a reading of this wheel's clock.
    #[inline]
    pub(crate) fn reading_at(&self, at: Reading) -> Reading {
        #[cfg(feature = "tokio")]
        if let Some(clock) = self.runtime_clock {
            if at != Reading::END {
                return at - clock.behind();
            }
        }
        at
    }
}
