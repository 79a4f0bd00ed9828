//! [`DefaultWheel`]: a wheel a default deadline may choose (the global wheel, a tokio
//! runtime's, a paused thread's), as `Ambient` holds it.

use punctual_core::{RawWheel, Reading};

/// A wheel a default deadline may choose, with how its clock reads the instants that
/// default deadlines are given (readings of the global clock).
///
/// Lives for the rest of the process, as its wheel does: a runtime's or a paused
/// thread's wheel is never freed, so a deadline may keep its choice past its thread. Such
/// a wheel is reused once its thread is gone and nothing is armed on it (it may then
/// serve another runtime or thread), which only a deadline that starts again after a
/// reset, past its thread, ever sees.
pub(crate) struct DefaultWheel {
    pub(crate) wheel: &'static dyn RawWheel,
    /// A runtime's clock, which reads behind the global clock by a fraction of a tick;
    /// `None` for a clock that reads the global clock's readings.
    #[cfg(feature = "tokio")]
    pub(crate) reads_behind: Option<&'static punctual_tokio::RuntimeClock>,
    /// The wheel's clock reads what the global wheel's reads, at every moment (a
    /// multi-thread runtime's wheel, on the real source with no offset, while the global
    /// wheel is on `StdClock`): a budget started on either applies on the other, so that
    /// a request's budget follows its task from worker to worker.
    pub(crate) on_global_timeline: bool,
}

impl DefaultWheel {
    /// `at`, a reading of the global clock, as a reading of this wheel's clock.
    #[inline]
    pub(crate) fn reading_at(&self, at: Reading) -> Reading {
        #[cfg(feature = "tokio")]
        if let Some(clock) = self.reads_behind {
            if at != Reading::END {
                return at - clock.behind();
            }
        }
        at
    }
}
