//! Where a deadline starts: the clock reading at which its limit ends, whether a cap
//! (a budget's instant) comes first, and the arm. What a deadline asks of the wheel at its
//! first pending poll, in the wheel's terms; [`RawWheel`](crate::RawWheel) passes it on.

use core::task::Waker;
use core::time::Duration;

use super::Wheel;
use super::entry::Index;
use super::storage::Storage;
use crate::clock::Clock;
use crate::time::{Limit, nanos_u64};

/// The outcome of a deadline's first pending poll.
#[doc(hidden)]
#[derive(Debug)]
pub struct Started {
    pub(crate) outcome: Outcome,
    pub(crate) requested: Duration,
    /// Whether a budget's instant was earlier than the deadline's own, and is used.
    pub(crate) capped: bool,
}

#[doc(hidden)]
#[derive(Debug)]
// Public as `RawWheel::start_span` returns it, which only 64-bit hosts have.
#[cfg_attr(not(target_pointer_width = "64"), allow(unreachable_pub))]
pub enum Outcome {
    /// The deadline had already passed.
    Passed,
    /// Armed on the wheel, in the entry of this index; `true` when the drivers must be
    /// woken, which the deadline does once it holds the handle (see `Wheel::arm`).
    Armed(Index, bool),
    /// The wheel is full: the deadline checks the clock on each poll until it passes.
    Full(Duration),
    /// Beyond any tick the wheel can count: it never fires.
    Never,
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// The clock reading at which `limit` ends, seen from `now`, and the duration it
    /// stands for. `None`: beyond any reading (never ends).
    pub(crate) fn resolve(&self, limit: Limit, now: Duration) -> (Option<Duration>, Duration) {
        match limit {
            // `Duration::MAX` stands for "never" (as does any limit a deadline keeps as
            // `u64::MAX` ns or more), whatever the tick: on a wheel whose tick is over a
            // second, it would otherwise be a countable tick.
            Limit::After(Duration::MAX) | Limit::At(Duration::MAX) => (None, Duration::MAX),
            // A zero-length deadline has passed at any moment at or after its start.
            Limit::After(Duration::ZERO) => (Some(now), Duration::ZERO),
            // Add the clock's granularity: `now` may lag the true time by that much.
            Limit::After(duration) => (
                now.checked_add(self.clock().resolution())
                    .and_then(|t| t.checked_add(duration)),
                duration,
            ),
            Limit::At(at) => (Some(at), at.saturating_sub(now)),
        }
    }
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// The start of the common case, a relative deadline of `span` nanoseconds with no
    /// budget, from the reading `now`, in `u64` arithmetic instead of `Duration` and
    /// `u128`: the fast part of both [`RawWheel::start`] and [`RawWheel::start_span`].
    /// `None` when a quantity does not fit, before anything is armed (then the general
    /// path decides, from the same reading). Agrees with the general path wherever it
    /// answers.
    #[inline]
    pub(crate) fn start_after(&self, now: Duration, span: u64, waker: &Waker) -> Option<Outcome> {
        if span == 0 {
            // As `resolve`: a zero-length deadline has passed at any moment after its start.
            return Some(Outcome::Passed);
        }
        let now = nanos_u64(now)?;
        let target = now
            .checked_add(nanos_u64(self.clock().resolution())?)?
            .checked_add(span)?;
        let ticks = self.ticks();
        // Readings of `u64::MAX` ns or more never come (as in `RawWheel::start`).
        if target == u64::MAX {
            return Some(Outcome::Never);
        }
        // `target > now`, as `span` is not zero.
        let when = ticks.ceil(target);
        let start = ticks.floor(now);
        Some(self.arm_outcome(target, when, start, waker, Duration::from_nanos(target)))
    }

    /// Arms a deadline due at `due` (ns), of tick `when`, started at tick `start`: armed
    /// (with whether the drivers must be woken), or degraded until `target` if the wheel
    /// is full.
    #[inline]
    pub(crate) fn arm_outcome(
        &self,
        due: u64,
        when: u64,
        start: u64,
        waker: &Waker,
        target: Duration,
    ) -> Outcome {
        match self.arm(due, when, start, waker) {
            Some((index, wake)) => Outcome::Armed(index, wake),
            None => Outcome::Full(target),
        }
    }
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// [`RawWheel::start`] from the clock reading `now`.
    #[inline]
    pub(crate) fn start_from(
        &self,
        now: Duration,
        limit: Limit,
        cap: Option<Duration>,
        waker: &Waker,
    ) -> Started {
        if let (Limit::After(duration), None) = (limit, cap) {
            if let Some(outcome) =
                nanos_u64(duration).and_then(|span| self.start_after(now, span, waker))
            {
                return Started {
                    outcome,
                    requested: duration,
                    capped: false,
                };
            }
        }
        let (own, requested) = self.resolve(limit, now);
        let (target, capped) = match (own, cap) {
            (Some(own), Some(cap)) if cap < own => (Some(cap), true),
            (None, Some(cap)) => (Some(cap), true),
            (own, _) => (own, false),
        };
        let outcome = match target {
            None => Outcome::Never,
            Some(target) if target <= now => Outcome::Passed,
            // Readings of `u64::MAX` ns or more (about 584 years) never come.
            Some(target) => match nanos_u64(target).filter(|&due| due != u64::MAX) {
                None => Outcome::Never,
                Some(due) => {
                    let when = self.ticks().ceil(due);
                    self.arm_outcome(due, when, self.floor_ticks(now), waker, target)
                }
            },
        };
        Started {
            outcome,
            requested,
            capped,
        }
    }
}

#[cfg(all(test, feature = "std", target_pointer_width = "64"))]
mod start_span_tests {
    use super::*;
    use crate::future::timer::Armed;
    use crate::time::{BEYOND, duration_of, span_of};
    use crate::{Fixed, RawWheel};
    use std::format;

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

    /// `start_span(span)` agrees with `start(Limit::After(duration_of(span)), None)` over
    /// readings, resolutions, spans and ticks up to and past the clock's end, on a wheel
    /// with room and on a full one: the same outcome, entry deadline and occupancy, and
    /// `span_of(requested) == span`, not capped (so a timer's span, state and flag come out
    /// the same either way).
    #[test]
    // About 4 500 cases: slow under Miri, and the arm and release they reach are the same
    // code the other tests run under Miri.
    #[cfg_attr(miri, ignore)]
    pub(crate) fn start_span_agrees_with_the_general_start() {
        let max = u64::MAX;
        let readings = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_millis(5),
            Duration::from_nanos(max - 5_000_000),
            Duration::from_nanos(max - 10),
            Duration::from_nanos(max - 1),
            Duration::from_nanos(max),
            Duration::from_nanos(max) + Duration::from_nanos(1),
            Duration::MAX,
        ];
        let resolutions = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_nanos(5),
            Duration::from_millis(2),
            Duration::from_nanos(max),
            Duration::MAX,
        ];
        let spans = [
            0,
            1,
            2,
            5,
            6,
            999_999_999,
            5_000_000,
            1 << 40,
            max - 5_000_000,
            max - 11,
            max - 10,
            max - 2,
            max - 1,
            BEYOND,
        ];
        let ticks = [
            Duration::from_nanos(1),
            Duration::from_millis(1),
            Duration::from_secs(3600),
        ];
        let waker = Waker::noop();
        for &now in &readings {
            for &res in &resolutions {
                for &tick in &ticks {
                    for &span in &spans {
                        for full in [false, true] {
                            let fast: Wheel<Stuck, Fixed<1>> = Wheel::fixed(Stuck(now, res), tick);
                            let general: Wheel<Stuck, Fixed<1>> =
                                Wheel::fixed(Stuck(now, res), tick);
                            let mut held = [None, None];
                            if full {
                                for (i, wheel) in [&fast, &general].into_iter().enumerate() {
                                    let limit = Limit::At(Duration::from_secs(1));
                                    if let Outcome::Armed(index, _) =
                                        wheel.start(limit, None, waker).outcome
                                    {
                                        held[i] = Some(index);
                                    }
                                }
                            }
                            let case = format!(
                                "now {now:?}, resolution {res:?}, tick {tick:?}, span {span}, \
                                 full {full}"
                            );
                            let a = fast.start_span(span, waker);
                            let b = general.start(Limit::After(duration_of(span)), None, waker);
                            assert_eq!(format!("{a:?}"), format!("{:?}", b.outcome), "{case}");
                            assert_eq!(span_of(b.requested), span, "{case}");
                            assert!(!b.capped, "{case}");
                            assert_eq!(fast.occupied(), general.occupied(), "{case}");
                            if let (Outcome::Armed(i, _), Outcome::Armed(j, _)) = (&a, &b.outcome) {
                                assert_eq!(
                                    fast.entry_deadline(*i),
                                    general.entry_deadline(*j),
                                    "{case}"
                                );
                                held = [Some(*i), Some(*j)];
                            }
                            for (wheel, index) in [&fast, &general].into_iter().zip(held) {
                                if let Some(index) = index {
                                    RawWheel::release(wheel, &Armed { index, span: None });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
