//! The error a deadline returns when it fires.

use core::fmt;
use core::time::Duration;

use crate::time::Reading;

/// The deadline passed before the inner future completed, which was dropped. Carries the
/// requested duration and the [name](crate::Deadline::named), if any:
///
/// ```
/// use core::time::Duration;
/// use punctual_core::Elapsed;
/// let e = Elapsed::new(Duration::from_millis(800), Some("pricing"));
/// assert_eq!(e.to_string(), "deadline 'pricing' of 800ms elapsed");
/// assert_eq!(Elapsed::new(Duration::from_secs(2), None).to_string(), "deadline of 2s elapsed");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Elapsed {
    duration: Duration,
    name: Option<&'static str>,
    /// The instant of a deadline at an instant; [`Reading::END`] for a duration.
    at: Reading,
    budget: bool,
}

/// The fields a user reads: the instant only for a deadline at an instant.
impl fmt::Debug for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Elapsed");
        out.field("duration", &self.duration)
            .field("name", &self.name);
        if self.at != Reading::END {
            out.field("instant", &self.at);
        }
        out.field("budget", &self.budget).finish()
    }
}

impl Elapsed {
    /// An `Elapsed` for a deadline of `duration`, named `name`.
    pub const fn new(duration: Duration, name: Option<&'static str>) -> Self {
        Self::of(duration, name, Reading::END, false)
    }

    const fn of(duration: Duration, name: Option<&'static str>, at: Reading, budget: bool) -> Self {
        Self {
            duration,
            name,
            at,
            budget,
        }
    }

    /// An `Elapsed` for a [budget](crate::Budgeted) of `duration` that ran out, named `name`.
    pub const fn budget(duration: Duration, name: Option<&'static str>) -> Self {
        Self::of(duration, name, Reading::END, true)
    }

    /// Whether a budget ran out (rather than the deadline's own duration).
    pub const fn is_budget(&self) -> bool {
        self.budget
    }

    /// An `Elapsed` for a deadline at `at` (duration zero), named `name`. [`Reading::END`]
    /// stands for no instant, as [`Elapsed::new`] with a zero duration.
    pub const fn at_instant(at: Reading, name: Option<&'static str>) -> Self {
        Self::of(Duration::ZERO, name, at, false)
    }

    /// The duration allowed: the deadline's, or the budget's; zero for an instant.
    pub const fn duration(&self) -> Duration {
        self.duration
    }

    /// The instant a deadline was given, on its wheel's clock (`punctual::GlobalClock` for
    /// a default deadline); `None` for a duration, a budget, or a deadline a budget ended.
    pub const fn instant(&self) -> Option<Reading> {
        match self.at {
            Reading::END => None,
            at => Some(at),
        }
    }

    /// The deadline's name, if it was given one.
    pub const fn name(&self) -> Option<&'static str> {
        self.name
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.budget { "budget " } else { "deadline " })?;
        if let Some(name) = self.name {
            write!(f, "'{name}' ")?;
        }
        match self.instant() {
            Some(_) => f.write_str("at an instant elapsed"),
            None => write!(f, "of {:?} elapsed", self.duration),
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

#[cfg(feature = "tonic")]
impl From<Elapsed> for tonic::Status {
    /// A status `DEADLINE_EXCEEDED` (never `CANCELLED`), with the `Elapsed` as message and
    /// source: `?` in a tonic handler answers as gRPC asks.
    fn from(elapsed: Elapsed) -> Self {
        let mut status =
            tonic::Status::deadline_exceeded(std::string::ToString::to_string(&elapsed));
        status.set_source(std::sync::Arc::new(elapsed));
        status
    }
}

/// `duration` in the largest unit (s, ms, us, ns) that holds it exactly, if it fits a `u64`.
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
impl defmt::Format for Elapsed {
    /// As `Display`, the duration in its largest exact unit (`"of 1500us"`), else as
    /// seconds and nanoseconds.
    fn format(&self, f: defmt::Formatter<'_>) {
        let what = if self.budget { "budget" } else { "deadline" };
        match self.name {
            Some(name) => defmt::write!(f, "{=str} '{=str}' ", what, name),
            None => defmt::write!(f, "{=str} ", what),
        }
        if self.instant().is_some() {
            return defmt::write!(f, "at an instant elapsed");
        }
        match whole_units(self.duration) {
            Some((count, unit)) => defmt::write!(f, "of {=u64}{=str} elapsed", count, unit),
            None => defmt::write!(
                f,
                "of {=u64}s {=u32}ns elapsed",
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
