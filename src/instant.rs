//! `DeadlineInstant`: the instants a default deadline can end at.

use std::time::Instant;

use punctual_core::Reading;

use crate::global::std_clock;

/// An instant that default deadlines and sleeps accept (`deadline_at`, `timeout_at`,
/// `sleep_until`): a `std::time::Instant`, or a `tokio::time::Instant` with the `tokio`
/// feature. Sealed.
///
/// A deadline ends once the clock of its wheel reaches the instant. Inside a paused tokio
/// runtime that clock is virtual: count from `tokio::time::Instant::now()`.
pub trait DeadlineInstant: sealed::Sealed {
    /// The instant as a reading of the std clock every default wheel takes instants on.
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
