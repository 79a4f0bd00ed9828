//! Where a deadline starts ([`RawWheel::start`](crate::RawWheel::start)), at its first
//! pending poll: its end reading, any earlier cap (a budget's instant), and the arm; one
//! path for all.
//!
//! # Never
//!
//! * A target at [`Reading::END`] never comes and holds no entry: a span of [`BEYOND`],
//!   an instant at `END`, or a relative limit that runs into it.
//! * A zero span has passed at any moment at or after its start, even at `END`.

use super::Wheel;
use super::entry::Index;
use super::storage::Storage;
use crate::clock::Clock;
use crate::time::{BEYOND, Due, Reading};

/// The outcome of a deadline's first pending poll, its own span, and whether the cap won.
#[doc(hidden)]
#[derive(Debug)]
pub struct Started {
    pub(crate) outcome: Outcome,
    pub(crate) requested: u64,
    pub(crate) capped: bool,
}

#[derive(Debug)]
pub(crate) enum Outcome {
    /// The deadline had already passed.
    Passed,
    /// Armed in this entry; `true`: wake the drivers once holding the handle.
    Armed(Index, bool),
    /// The wheel is full: the deadline checks the clock on each poll. The target, and the
    /// reading it was compared with (for [`degraded_poll`](crate::RawWheel::degraded_poll)).
    Full(Reading, Reading),
    /// Beyond any reading: it never fires.
    Never,
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// The reading `due` ends at, started at `now` (`None`: never), and its span.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub(crate) fn resolve(&self, due: Due, now: Reading) -> (Option<Reading>, u64) {
        match due {
            Due::After(0) => (Some(now), 0),
            // Add the clock's granularity: `now` may lag the true time by that much.
            Due::After(span) => {
                let target = now.after(self.resolution()).after(span);
                ((target != Reading::END).then_some(target), span)
            }
            Due::At(Reading::END) => (None, BEYOND),
            Due::At(at) => (Some(at), at.as_nanos().saturating_sub(now.as_nanos())),
        }
    }
}

#[cfg(test)]
mod tests {
    use core::task::Waker;
    use core::time::Duration;

    use super::Outcome;
    use crate::time::{BEYOND, Due, Reading};
    use crate::{Clock, Fixed, RawWheel, Wheel};

    /// A clock stuck at one reading, with a given resolution.
    struct Stuck(Duration, Duration);

    impl Clock for Stuck {
        fn now(&self) -> Duration {
            self.0
        }

        fn resolution(&self) -> Duration {
            self.1
        }
    }

    fn outcome(
        now: Duration,
        resolution: Duration,
        due: Due,
        cap: Option<Reading>,
    ) -> (&'static str, bool) {
        let wheel: Wheel<Stuck, Fixed<1>> =
            Wheel::fixed(Stuck(now, resolution), Duration::from_millis(1));
        let started = wheel.start(due, cap, Waker::noop());
        let outcome = match started.outcome {
            Outcome::Passed => "passed",
            Outcome::Armed(..) => "armed",
            Outcome::Full(..) => "full",
            Outcome::Never => "never",
        };
        (outcome, started.capped)
    }

    /// The rules of the module docs' "Never", at the clock's end and before it.
    #[test]
    fn end_target_never_comes_but_zero_span_passed() {
        let end = Duration::MAX;
        let near_end = Duration::from_nanos(u64::MAX - 10);
        let zero = Duration::ZERO;
        let ms = Duration::from_millis(1);
        let cases = [
            // A zero span has passed at any moment, even at the end.
            (end, zero, Due::After(0), None, "passed"),
            (zero, zero, Due::After(0), None, "passed"),
            // A span that reaches the end, or never ends, holds no entry.
            (near_end, zero, Due::After(10), None, "never"),
            (near_end, zero, Due::After(9), None, "armed"),
            (near_end, ms, Due::After(1), None, "never"),
            (zero, zero, Due::After(BEYOND), None, "never"),
            (end, zero, Due::After(1), None, "never"),
            // An instant at the end never comes, even when the clock reads it.
            (end, zero, Due::At(Reading::END), None, "never"),
            (end, zero, Due::At(Reading::from_nanos(5)), None, "passed"),
            (zero, zero, Due::At(Reading::from_nanos(5)), None, "armed"),
            // A cap at the end bounds nothing; an earlier one cuts the deadline short.
            (zero, zero, Due::After(BEYOND), Some(Reading::END), "never"),
            (
                zero,
                zero,
                Due::After(BEYOND),
                Some(Reading::from_nanos(9)),
                "armed capped",
            ),
            (
                ms,
                zero,
                Due::After(5),
                Some(Reading::from_nanos(1)),
                "passed capped",
            ),
            (
                zero,
                zero,
                Due::After(5),
                Some(Reading::from_nanos(9)),
                "armed",
            ),
        ];
        for (now, resolution, due, cap, expected) in cases {
            let (outcome, capped) = outcome(now, resolution, due, cap);
            let expected = expected
                .split_once(' ')
                .map_or((expected, false), |(o, _)| (o, true));
            assert_eq!(
                (outcome, capped),
                expected,
                "now {now:?}, resolution {resolution:?}, {due:?}, cap {cap:?}"
            );
        }
    }
}
