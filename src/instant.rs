//! `DeadlineInstant`: the instants a default deadline can end at.

use std::time::Instant;

use punctual_core::Reading;

use crate::global::std_clock;

/// An instant that default deadlines and sleeps accept (`deadline_at`, `timeout_at`,
/// `sleep_until`): a `std::time::Instant`, or with the `tokio` feature a
/// `tokio::time::Instant`. Sealed.
///
/// A deadline ends once the clock of the wheel it runs on reaches the instant: the real
/// clock, or inside a paused tokio runtime its virtual clock, on which
/// `tokio::time::Instant::now()` is the instant to count from.
pub trait DeadlineInstant: sealed::Sealed {
    /// The instant as a reading of the default wheels' clock (the same on each).
    #[doc(hidden)]
    fn reading(self) -> Reading;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for std::time::Instant {}
    #[cfg(feature = "tokio")]
    impl Sealed for tokio::time::Instant {}
}

impl DeadlineInstant for Instant {
    #[inline]
    fn reading(self) -> Reading {
        std_clock().reading_of(self)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[cfg(feature = "tokio")]
impl DeadlineInstant for tokio::time::Instant {
    #[inline]
    fn reading(self) -> Reading {
        std_clock().reading_of(self.into_std())
    }
}
