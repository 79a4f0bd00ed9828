//! The default futures: the core's futures on the [`DefaultWheel`] handle.

use punctual_core::{ClockInstant, Reading};

use crate::default_wheel::DefaultWheel;
use crate::instant::DeadlineInstant;

/// A default deadline: on the wheel of the runtime it is first polled in, or the global
/// wheel ([`DefaultWheel`]). See [`punctual_core::Deadline`] for the rules.
pub type Deadline<F> = punctual_core::Deadline<'static, F, DefaultWheel>;

/// A default deadline with a name ([`punctual_core::Deadline::named`]). The name is part
/// of the type, so deadlines without one carry no bytes for it.
pub type NamedDeadline<F> = punctual_core::Deadline<'static, F, DefaultWheel, punctual_core::Named>;

/// A default sleep. See [`punctual_core::Sleep`].
pub type Sleep = punctual_core::Sleep<'static, DefaultWheel>;

/// A default whole-stream deadline. See [`punctual_core::StreamDeadline`].
pub type StreamDeadline<S> = punctual_core::StreamDeadline<'static, S, DefaultWheel>;

/// A default idle timeout for a stream. See [`punctual_core::IdleTimeout`].
pub type IdleTimeout<S> = punctual_core::IdleTimeout<'static, S, DefaultWheel>;

/// A default interval: on the wheel of the runtime its first tick is polled in, or the
/// global wheel. See [`punctual_core::Interval`].
pub type Interval = punctual_core::Interval<'static, DefaultWheel>;

/// The instants a default sleep or deadline is reset to ([`punctual_core::Sleep::reset`],
/// [`punctual_core::Deadline::reset`]), as `deadline_at` takes them.
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
impl ClockInstant<DefaultWheel> for std::time::Instant {
    #[inline]
    fn reading_on(self, _: &DefaultWheel) -> Reading {
        self.reading()
    }
}

/// As `std::time::Instant`'s, on the web (`std::time::Instant::now()` panics there).
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
impl ClockInstant<DefaultWheel> for web_time::Instant {
    #[inline]
    fn reading_on(self, _: &DefaultWheel) -> Reading {
        self.reading()
    }
}

/// As `std::time::Instant`'s: on a paused runtime, count from tokio's `Instant::now()`.
#[cfg(feature = "tokio")]
impl ClockInstant<DefaultWheel> for tokio::time::Instant {
    #[inline]
    fn reading_on(self, _: &DefaultWheel) -> Reading {
        self.reading()
    }
}
