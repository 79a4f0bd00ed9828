//! `DeadlineInstant`: the instants a default deadline can end at; `Now`: the instant
//! default futures report (tokio's with `tokio`, `web_time`'s on the web, else `std`'s).
//! * Default readings are on the std clock of the global wheel; `instant_of` inverts
//!   `reading` exactly, so instants come back equal.

use punctual_core::{ClockInstant, Reading};

use crate::default_wheel::DefaultWheel;

/// An instant default deadlines and sleeps accept (sealed): a `std::time::Instant`, or a
/// `tokio::time::Instant` with `tokio` (count from its `now()` inside a paused runtime); on
/// `wasm32-unknown-unknown`, where `std::time::Instant::now()` panics, a
/// [`web_time::Instant`] instead.
///
/// [`web_time::Instant`]: https://docs.rs/web-time/1/web_time/struct.Instant.html
pub trait DeadlineInstant: sealed::Sealed {
    /// The instant as a reading of the std clock every default wheel takes instants on.
    #[doc(hidden)]
    fn reading(self) -> Reading;
}

mod sealed {
    pub trait Sealed {}
}

/// `DeadlineInstant` for `$ty`, read as `$reading`, and the same reading as the instant a
/// default deadline is reset to (`deadline_at`).
macro_rules! deadline_instant {
    (#[$cfg:meta] $ty:ty, |$instant:ident| $reading:expr) => {
        #[$cfg]
        impl sealed::Sealed for $ty {}

        #[$cfg]
        impl DeadlineInstant for $ty {
            #[inline]
            fn reading(self) -> Reading {
                let $instant = self;
                $reading
            }
        }

        #[$cfg]
        impl ClockInstant<DefaultWheel> for $ty {
            #[inline]
            fn reading_on(self, _: &DefaultWheel) -> Reading {
                self.reading()
            }
        }
    };
}

deadline_instant!(
    #[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
    std::time::Instant,
    |instant| crate::global::std_clock().reading_of(instant)
);
deadline_instant!(
    #[cfg(all(target_family = "wasm", target_os = "unknown"))]
    web_time::Instant,
    |instant| crate::global::GlobalClock::reading_of(instant)
);
deadline_instant!(
    #[cfg(feature = "tokio")]
    tokio::time::Instant,
    |instant| crate::global::std_clock().reading_of(instant.into_std())
);

/// The instant default futures report (`Interval::tick`, `Sleep::deadline`).
#[cfg(feature = "tokio")]
pub(crate) type Now = tokio::time::Instant;
#[cfg(not(feature = "tokio"))]
pub(crate) type Now = crate::global::Instant;

/// Three centuries: where past the origin an instant stands for a reading `Now` cannot
/// hold, or `Reading::END` (never). Ten times tokio's "far future".
const FAR: std::time::Duration = std::time::Duration::from_secs(86_400 * 365 * 300);

/// The instant of `at`, a reading of the std clock default instants are read on.
pub(crate) fn instant_of(at: Reading) -> Now {
    #[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
    let (exact, origin) = {
        // The inverse of `reading_of`, exactly: a tokio instant given comes back equal.
        let origin = crate::global::std_clock().origin();
        let exact = (at != Reading::END)
            .then(|| origin.checked_add(at.as_duration()))
            .flatten();
        (exact, origin)
    };
    #[cfg(all(target_family = "wasm", target_os = "unknown"))]
    let (exact, origin) = (
        crate::global::GlobalClock::instant_of(at),
        crate::global::GlobalClock::instant_of(Reading::ZERO).unwrap_or_else(Now::now),
    );
    let instant = exact.or_else(|| origin.checked_add(FAR)).unwrap_or(origin);
    #[allow(clippy::useless_conversion)]
    Now::from(instant)
}
