//! The [`Budget`] value and a thread's ambient budget.
//! * A budget caps only deadlines on its own wheel.
//! * With `std`, a [`Budgeted`] sets the thread's budget while it polls its future, and a
//!   scope restores the previous one, also on unwind. A deadline reads it once, at its
//!   first pending poll.
//! * At the fire, the budget in force lends its name only if it cut the deadline.

use core::fmt;
use core::time::Duration;

#[cfg(doc)]
use crate::Budgeted;
use crate::future::timer::{Cap, RawWheel, WheelRef};
use crate::time::{Limit, Reading};

pub(crate) mod block;

/// A budget's limit: an instant on one wheel's clock, with the duration and name that an
/// [`Elapsed`](crate::Elapsed) reports when it ends a deadline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub(crate) cap: Cap,
    pub(crate) name: Option<&'static str>,
}

impl Budget {
    /// A budget ending at `at` on `wheel`'s clock, reported as a budget of `duration`.
    pub fn new(wheel: &dyn RawWheel, at: Reading, duration: Duration) -> Self {
        Self {
            cap: Cap {
                wheel: (wheel as *const dyn RawWheel).cast::<()>() as usize,
                at,
                duration,
            },
            name: None,
        }
    }

    /// A budget of `duration` from now on `wheel`'s clock: `None` for `Duration::MAX`; one
    /// at or past [`Reading::END`] never ends.
    pub fn starting_now(wheel: &dyn RawWheel, duration: Duration) -> Option<Self> {
        if duration == Duration::MAX {
            return None;
        }
        let at = wheel.target(Limit::After(duration)).unwrap_or(Reading::END);
        Some(Self::new(wheel, at, duration))
    }

    /// Names the budget, for the `Elapsed` of each deadline it ends.
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// The instant the budget ends, on its wheel's clock.
    pub fn at(&self) -> Reading {
        self.cap.at
    }

    /// The duration the budget stands for.
    pub fn duration(&self) -> Duration {
        self.cap.duration
    }

    /// The budget's name, if any.
    pub fn name(&self) -> Option<&'static str> {
        self.name
    }

    /// The budget a [`Budgeted`] polling on this thread set (`std` only), to carry on into
    /// a spawned task or an outgoing request.
    #[cfg(feature = "std")]
    pub fn current() -> Option<Self> {
        ambient()
    }

    /// What is left of the budget on `wheel` (zero once ended); `None` on another wheel. A
    /// handle that chooses late must have chosen ([`WheelRef::choose`]).
    pub fn remaining<W: WheelRef>(&self, wheel: &W) -> Option<Duration> {
        let on = self.cap.wheel == wheel.id();
        on.then(|| self.cap.at.saturating_duration_since(wheel.get().now()))
    }

    /// Runs `f` with this budget in force on this thread, as inside a [`Budgeted`] (an
    /// earlier one on the same wheel stays in force), the one before back when `f` ends.
    ///
    /// ```
    /// use core::time::Duration;
    /// use punctual_core::{Budget, Growable, ManualClock, Wheel};
    ///
    /// let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), Duration::from_millis(1));
    /// let budget = Budget::starting_now(&wheel, Duration::from_millis(5)).unwrap();
    /// let left = budget.enter(|| Budget::current().unwrap().remaining(&&wheel));
    /// assert_eq!(left, Some(Duration::from_millis(5)));
    /// assert!(Budget::current().is_none());
    /// ```
    #[cfg(feature = "std")]
    pub fn enter<R>(self, f: impl FnOnce() -> R) -> R {
        let _scope = ambient::Scope::enter(self.earlier(ambient()));
        f()
    }

    /// The earlier of two budgets on the same wheel; `self` across wheels.
    pub(crate) fn earlier(self, other: Option<Budget>) -> Budget {
        match other {
            Some(other) if other.cap.wheel == self.cap.wheel && other.cap.at < self.cap.at => other,
            _ => self,
        }
    }
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("at", &self.cap.at)
            .field("duration", &self.cap.duration)
            .field("name", &self.name)
            .finish()
    }
}

#[cfg(feature = "std")]
mod ambient {
    use core::cell::Cell;
    use core::sync::atomic::{AtomicBool, Ordering};

    use super::Budget;

    std::thread_local! {
        static CURRENT: Cell<Option<Budget>> = const { Cell::new(None) };
    }

    /// Set once any thread entered a budget, never cleared: until then `current` skips the
    /// thread-local. `Relaxed`: a thread sees its own store.
    static EVER_ENTERED: AtomicBool = AtomicBool::new(false);

    /// The budget in force on this thread, if a `Budgeted` is polling.
    #[inline]
    pub(crate) fn current() -> Option<Budget> {
        if !EVER_ENTERED.load(Ordering::Relaxed) {
            return None;
        }
        CURRENT.with(Cell::get)
    }

    /// Sets the current budget until dropped, then restores the previous one.
    pub(crate) struct Scope(Option<Budget>);

    impl Scope {
        pub(crate) fn enter(budget: Budget) -> Self {
            if !EVER_ENTERED.load(Ordering::Relaxed) {
                EVER_ENTERED.store(true, Ordering::Relaxed);
            }
            Self(CURRENT.with(|c| c.replace(Some(budget))))
        }
    }

    impl Drop for Scope {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
}

/// The budget in force for a deadline started now on this thread (`std` only).
#[cfg(feature = "std")]
pub(crate) use ambient::{Scope, current as ambient};

/// No thread, no ambient budget.
#[cfg(not(feature = "std"))]
pub(crate) fn ambient() -> Option<Budget> {
    None
}
