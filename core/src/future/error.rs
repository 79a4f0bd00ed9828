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
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl From<Elapsed> for std::io::Error {
    /// An error of kind [`TimedOut`](std::io::ErrorKind::TimedOut) that carries the `Elapsed`.
    fn from(elapsed: Elapsed) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, elapsed)
    }
}

/// `duration` as a whole number of the largest unit that holds it exactly (s, ms, us, ns),
/// for output without `Debug` formatting; `None` when that count does not fit a `u64`
/// (`Duration::MAX`, for one: about 1.8·10<sup>28</sup> nanoseconds).
#[cfg(any(feature = "defmt", test))]
fn whole_units(duration: Duration) -> Option<(u64, &'static str)> {
    let nanos = duration.subsec_nanos();
    let (count, unit) = if nanos == 0 {
        (duration.as_secs().into(), "s")
    } else if nanos % 1_000_000 == 0 {
        (duration.as_millis(), "ms")
    } else if nanos % 1_000 == 0 {
        (duration.as_micros(), "us")
    } else {
        (duration.as_nanos(), "ns")
    };
    Some((u64::try_from(count).ok()?, unit))
}

#[cfg(feature = "defmt")]
#[cfg_attr(docsrs, doc(cfg(feature = "defmt")))]
impl defmt::Format for Elapsed {
    /// As `Display`, with the duration in whole seconds, milliseconds, microseconds or
    /// nanoseconds, whichever is the largest that holds it exactly (`"deadline of 1500us
    /// elapsed"`); past the range of those, as seconds and nanoseconds.
    fn format(&self, f: defmt::Formatter<'_>) {
        let what = if self.budget { "budget" } else { "deadline" };
        match self.name {
            Some(name) => defmt::write!(f, "{=str} '{=str}' of ", what, name),
            None => defmt::write!(f, "{=str} of ", what),
        }
        match whole_units(self.duration) {
            Some((count, unit)) => defmt::write!(f, "{=u64}{=str} elapsed", count, unit),
            None => defmt::write!(
                f,
                "{=u64}s {=u32}ns elapsed",
                self.duration.as_secs(),
                self.duration.subsec_nanos()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_units_pick_the_largest_exact_unit() {
        assert_eq!(whole_units(Duration::ZERO), Some((0, "s")));
        assert_eq!(whole_units(Duration::from_secs(2)), Some((2, "s")));
        assert_eq!(whole_units(Duration::from_millis(1500)), Some((1500, "ms")));
        assert_eq!(whole_units(Duration::from_micros(1500)), Some((1500, "us")));
        assert_eq!(whole_units(Duration::from_nanos(500)), Some((500, "ns")));
        assert_eq!(
            whole_units(Duration::from_nanos(1_000_000_001)),
            Some((1_000_000_001, "ns"))
        );
        // The largest durations: whole seconds fit, a count of nanoseconds does not.
        assert_eq!(
            whole_units(Duration::from_secs(u64::MAX)),
            Some((u64::MAX, "s"))
        );
        assert_eq!(whole_units(Duration::MAX), None);
        assert_eq!(whole_units(Duration::new(u64::MAX, 1_000_000)), None);
        let near = Duration::from_millis(u64::MAX);
        assert_eq!(whole_units(near), Some((u64::MAX, "ms")));
    }
}
