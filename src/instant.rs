//! `DeadlineInstant`: the instants a default deadline can end at.

use punctual_core::Reading;

/// An instant that default deadlines and sleeps accept (`deadline_at`, `timeout_at`,
/// `sleep_until`): a `std::time::Instant`, or a `tokio::time::Instant` with the `tokio`
/// feature. Sealed.
///
/// A deadline ends once the clock of its wheel reaches the instant. Inside a paused tokio
/// runtime that clock is virtual: count from `tokio::time::Instant::now()`.
///
/// On `wasm32-unknown-unknown` with the `wasm` feature, it is a [`web_time::Instant`]
/// instead: `std::time::Instant::now()` panics there. Add the `web-time` crate to name
/// it; on other targets `web_time::Instant` is `std::time::Instant`, so the same code
/// builds everywhere.
///
/// [`web_time::Instant`]: https://docs.rs/web-time/1/web_time/struct.Instant.html
pub trait DeadlineInstant: sealed::Sealed {
    /// The instant as a reading of the std clock every default wheel takes instants on.
    #[doc(hidden)]
    fn reading(self) -> Reading;
}

mod sealed {
    pub trait Sealed {}
    #[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
    impl Sealed for std::time::Instant {}
    #[cfg(feature = "tokio")]
    impl Sealed for tokio::time::Instant {}
    #[cfg(all(target_family = "wasm", target_os = "unknown"))]
    impl Sealed for web_time::Instant {}
}

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
impl DeadlineInstant for std::time::Instant {
    #[inline]
    fn reading(self) -> Reading {
        crate::global::std_clock().reading_of(self)
    }
}

/// On `wasm32-unknown-unknown`: the instant read on the global wheel's clock, exactly.
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
impl DeadlineInstant for web_time::Instant {
    #[inline]
    fn reading(self) -> Reading {
        crate::global::GlobalClock::reading_of(self)
    }
}

#[cfg(feature = "tokio")]
impl DeadlineInstant for tokio::time::Instant {
    #[inline]
    fn reading(self) -> Reading {
        crate::global::std_clock().reading_of(self.into_std())
    }
}
