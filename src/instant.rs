//! `DeadlineInstant`: the instants a default deadline can end at, and be reset to.
//! * Default readings are on the std clock of the global wheel; `default_wheel::instant_of`
//!   inverts `reading` exactly, so instants come back equal.

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
