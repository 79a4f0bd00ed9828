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
/// For [`deadline_at`](crate::Wheel::deadline_at), the duration is the time from the first poll
/// to the requested instant (zero when the instant had already passed).
///
/// [named]: crate::Deadline::named
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Elapsed {
    duration: Duration,
    name: Option<&'static str>,
    budget: bool,
}

impl Elapsed {
    /// An `Elapsed` for a deadline of `duration`, named `name`.
    pub const fn new(duration: Duration, name: Option<&'static str>) -> Self {
        Self {
            duration,
            name,
            budget: false,
        }
    }

    /// An `Elapsed` for a [budget](crate::Budgeted) of `duration`, named `name`: the budget
    /// ran out, whether at its own edge or at a deadline it bounded.
    ///
    /// ```
    /// # use core::time::Duration;
    /// # use punctual_core::Elapsed;
    /// let e = Elapsed::budget(Duration::from_secs(2), Some("edge"));
    /// assert_eq!(e.to_string(), "budget 'edge' of 2s elapsed");
    /// assert!(e.is_budget());
    /// ```
    pub const fn budget(duration: Duration, name: Option<&'static str>) -> Self {
        Self {
            duration,
            name,
            budget: true,
        }
    }

    /// Whether a budget ran out (rather than the deadline's own duration).
    pub const fn is_budget(&self) -> bool {
        self.budget
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
        let what = if self.budget { "budget" } else { "deadline" };
        match self.name {
            Some(name) => write!(f, "{what} '{name}' of {:?} elapsed", self.duration),
            None => write!(f, "{what} of {:?} elapsed", self.duration),
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

#[cfg(feature = "defmt")]
impl defmt::Format for Elapsed {
    fn format(&self, f: defmt::Formatter<'_>) {
        let what = if self.budget { "budget" } else { "deadline" };
        let micros = self.duration.as_micros() as u64;
        match self.name {
            Some(name) => {
                defmt::write!(f, "{=str} '{=str}' of {=u64}us elapsed", what, name, micros)
            }
            None => defmt::write!(f, "{=str} of {=u64}us elapsed", what, micros),
        }
    }
}
