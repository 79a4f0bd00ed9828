//! The error a deadline returns when it fires.

use core::fmt;
use core::time::Duration;

/// The deadline passed before the inner future completed; the inner future has been dropped.
///
/// Carries the requested duration and, when the deadline was [named], its name:
///
/// ```
/// use core::time::Duration;
/// use punctual_core::Elapsed;
/// let e = Elapsed::new(Duration::from_millis(800), Some("pricing"));
/// assert_eq!(e.to_string(), "deadline 'pricing' of 800ms elapsed");
/// assert_eq!(Elapsed::new(Duration::from_secs(2), None).to_string(), "deadline of 2s elapsed");
/// ```
///
/// For [`deadline_at`](crate::Deadline::at), the duration is the time from the first poll
/// to the requested instant (zero when the instant had already passed).
///
/// [named]: crate::Deadline::named
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Elapsed {
    duration: Duration,
    name: Option<&'static str>,
}

impl Elapsed {
    /// An `Elapsed` for a deadline of `duration`, named `name`.
    pub const fn new(duration: Duration, name: Option<&'static str>) -> Self {
        Self { duration, name }
    }

    /// The duration the deadline allowed.
    pub const fn duration(&self) -> Duration {
        self.duration
    }

    /// The deadline's name, if it was given one.
    pub const fn name(&self) -> Option<&'static str> {
        self.name
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(name) => write!(f, "deadline '{name}' of {:?} elapsed", self.duration),
            None => write!(f, "deadline of {:?} elapsed", self.duration),
        }
    }
}

impl core::error::Error for Elapsed {}

#[cfg(feature = "std")]
impl From<Elapsed> for std::io::Error {
    /// An error of kind [`TimedOut`](std::io::ErrorKind::TimedOut) that carries the `Elapsed`.
    fn from(elapsed: Elapsed) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, elapsed)
    }
}
