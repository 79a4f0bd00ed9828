//! Deadline budgets: one limit for a whole block of work, which every deadline inside it
//! respects.
//!
//! A [`Budgeted`] future bounds its inner future like a deadline does, and in addition
//! every deadline started inside it (on the same wheel) ends at the earlier of its own
//! limit and the budget's. So three retries of 800 ms each inside a 2 s budget can never
//! outlive the 2 s: the third attempt's deadline is cut to what is left, and when the budget
//! runs out the whole block (the retry loop included) is dropped, so no further attempt
//! starts.
//!
//! # How the budget reaches inner deadlines
//!
//! * With `std`, *ambiently*: while a `Budgeted` polls its inner future, it sets a
//!   thread-local "current budget" (the earlier of its own and any enclosing one), and
//!   restores the previous value afterwards, also when the inner future panics. A deadline
//!   reads it at its first pending poll. The budget therefore travels with the polling of
//!   the future, on any executor, across `.await`s and into nested futures, but not into
//!   tasks spawned from inside the block (they are polled by someone else). A deadline
//!   made before the block but first polled inside it (a `select!` in the block, say)
//!   takes the budget too, and keeps it after the block is done; poll it once before the
//!   block if it must keep its own limit.
//! * Without `std`, *explicitly*: make a [`Budget`] (an instant on the wheel's clock), bound
//!   the block with [`Budgeted::with_budget`], and give each inner deadline the budget
//!   with [`Deadline::within`](crate::Deadline::within).
//!
//! A budget applies only to deadlines on the wheel it was made on: instants of different
//! clocks cannot be compared.
//!
//! # Errors
//!
//! When a budget is what ends a deadline (its instant came first), the `Elapsed` says so:
//! [`Elapsed::is_budget`] is true, its duration is the budget's, and so is its name when
//! the deadline fires under that budget (polled inside the block, or given it with
//! [`Deadline::within`](crate::Deadline::within)). A deadline keeps no name of its own
//! for the budget (an unnamed deadline holds no name at all, which keeps it small): one
//! that took the budget inside the block and fires after the block is done has the
//! budget's duration but no name.

use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;

use crate::future::deadline::{DeadlineName, Unnamed};
use crate::future::timer::{Naming, RawWheel, Timer, WheelRef};
use crate::time::Limit;
use crate::{Deadline, Elapsed};

/// A budget's limit: an instant on one wheel's clock, with the duration and name that an
/// [`Elapsed`] reports when the budget ends a deadline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The wheel's address, only compared, never dereferenced.
    wheel: usize,
    at: Duration,
    duration: Duration,
    name: Option<&'static str>,
}

fn wheel_id(wheel: &dyn RawWheel) -> usize {
    (wheel as *const dyn RawWheel).cast::<()>() as usize
}

impl Budget {
    /// A budget ending at `at` on `wheel`'s clock, reported as a budget of `duration`.
    pub fn new(wheel: &dyn RawWheel, at: Duration, duration: Duration) -> Self {
        Self {
            wheel: wheel_id(wheel),
            at,
            duration,
            name: None,
        }
    }

    /// A budget of `duration` from now on `wheel`'s clock (reads the clock).
    /// `None` for `Duration::MAX`, or a `duration` whose end does not fit a `Duration`:
    /// no limit at all. A budget that ends past the clock's last reading (`u64::MAX`
    /// nanoseconds, about 584 years) is returned, and never ends.
    pub fn starting_now(wheel: &dyn RawWheel, duration: Duration) -> Option<Self> {
        let at = wheel.target(Limit::After(duration))?;
        Some(Self::new(wheel, at, duration))
    }

    /// Names the budget: the name shows in the `Elapsed` of the block it bounds, and of
    /// each deadline it ends while it is in force where the deadline fires (a deadline
    /// that took the budget inside a block and fires after the block has no name).
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// The instant the budget ends, on its wheel's clock.
    pub fn at(&self) -> Duration {
        self.at
    }

    /// The duration the budget stands for.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// The budget's name, if any.
    pub fn name(&self) -> Option<&'static str> {
        self.name
    }

    /// Whether the budget is on the wheel whose [`WheelRef::id`] is `wheel`.
    pub(crate) fn applies_to(&self, wheel: usize) -> bool {
        self.wheel == wheel
    }

    /// The earlier of two budgets on the same wheel (`self` when they are on different
    /// wheels: an enclosing budget on another clock does not apply).
    fn earlier(self, other: Option<Budget>) -> Budget {
        match other {
            Some(other) if other.wheel == self.wheel && other.at < self.at => other,
            _ => self,
        }
    }
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("at", &self.at)
            .field("duration", &self.duration)
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

    /// Set once any budget was entered on any thread, and never cleared: until then no
    /// thread can have a budget in force, and a deadline's first poll skips the
    /// thread-local (a load of a line nobody writes, instead of a thread-local access and
    /// a copy of the budget). Only ever read as a hint: a thread sees its own store.
    static EVER_ENTERED: AtomicBool = AtomicBool::new(false);

    /// The budget in force on this thread, if a `Budgeted` is polling.
    #[inline]
    pub(crate) fn current() -> Option<Budget> {
        if !EVER_ENTERED.load(Ordering::Relaxed) {
            return None;
        }
        CURRENT.with(Cell::get)
    }

    /// Sets the current budget until dropped, then restores the previous one (also while
    /// unwinding).
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

#[cfg(not(feature = "std"))]
mod ambient {
    use super::Budget;

    pub(crate) fn current() -> Option<Budget> {
        None
    }

    pub(crate) struct Scope;

    impl Scope {
        pub(crate) fn enter(_: Budget) -> Self {
            Self
        }
    }
}

/// The budget in force for a deadline started now on this thread (`std` only).
#[inline]
pub(crate) fn ambient() -> Option<Budget> {
    ambient::current()
}

pin_project! {
    /// A future bounded by a budget: like a [`Deadline`], and every deadline started inside
    /// it also ends no later than the budget (with `std` by itself; without, through
    /// [`Deadline::within`]). See the [module docs](self).
    ///
    /// Made by `punctual::budget`, [`Budgeted::new`] or [`Budgeted::with_budget`].
    ///
    /// Unlike a `Deadline`, a budget starts its clock *before* the first poll of its inner
    /// future, since the deadlines inside need its instant.
    ///
    /// # Errors
    ///
    /// Resolves to `Err(Elapsed)` (with [`Elapsed::is_budget`]) when the budget runs out
    /// before the inner future completes; the inner future has been dropped by then.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner future, as for a `Deadline`.
    ///
    /// # Panics
    ///
    /// Polling it after it returned `Ready` panics, and so does polling it again after a
    /// poll of its timer panicked.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Budgeted<'w, F, W: WheelRef = &'w dyn RawWheel> {
        #[pin]
        future: Option<F>,
        timer: Timer<W>,
        duration: Duration,
        name: Option<&'static str>,
        budget: Option<Budget>,
        wheel: PhantomData<&'w ()>,
    }
}

impl<'w, F: Future, W: WheelRef> Budgeted<'w, F, W> {
    /// Bounds `future` by `duration` from its first poll. With `std`, every deadline on
    /// `wheel` first polled inside it also ends no later than the budget; without `std`,
    /// give the inner deadlines the budget with [`Deadline::within`](crate::Deadline::within)
    /// (see [`Budgeted::with_budget`]).
    pub fn new(future: F, wheel: W, duration: Duration) -> Self {
        Self {
            future: Some(future),
            timer: Timer::new(wheel, Limit::After(duration)),
            duration,
            name: None,
            budget: None,
            wheel: PhantomData,
        }
    }

    /// Bounds `future` by an explicit `budget` (the `no_std` way; see the module docs).
    ///
    /// # Panics
    ///
    /// If `budget` was made on another wheel: its instant is a reading of that wheel's
    /// clock, which this wheel's clock cannot be compared with (read on this clock, it
    /// could end the block early, or far too late).
    #[track_caller]
    pub fn with_budget(future: F, wheel: W, budget: Budget) -> Self {
        let mut wheel = wheel;
        wheel.choose();
        assert!(
            budget.applies_to(wheel.id()),
            "`Budgeted::with_budget`: the budget was made on another wheel"
        );
        Self {
            future: Some(future),
            // The budget bounds the timer as a cap (see `poll`): its instant is a reading
            // of the wheel's own clock, which `Limit::At` may not take for every handle.
            timer: Timer::new(wheel, Limit::After(Duration::MAX)),
            duration: budget.duration,
            name: budget.name,
            budget: Some(budget),
            wheel: PhantomData,
        }
    }

    /// Names the budget.
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        if let Some(budget) = &mut self.budget {
            budget.name = Some(name);
        }
        self
    }

    /// The budget in force, once the first poll has started it.
    pub fn budget(&self) -> Option<Budget> {
        self.budget
    }
}

impl<F: Future, W: WheelRef> Future for Budgeted<'_, F, W> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if this.future.is_none() {
            panic!("`Budgeted` polled after completion");
        }
        let budget = match *this.budget {
            Some(budget) => budget,
            None => {
                let wheel = this.timer.chosen_wheel();
                let own = match wheel.get().target(Limit::After(*this.duration)) {
                    Some(at) => Budget {
                        wheel: wheel.id(),
                        at,
                        duration: *this.duration,
                        name: *this.name,
                    },
                    // Beyond any reading: no limit of its own, only an enclosing one.
                    None => Budget {
                        wheel: wheel.id(),
                        at: Duration::MAX,
                        duration: *this.duration,
                        name: *this.name,
                    },
                };
                let budget = own.earlier(ambient());
                // The timer ends at the budget's instant through its cap (a reading of
                // the wheel's own clock; see `with_budget`), with no limit of its own.
                this.timer.reset(Limit::After(Duration::MAX));
                *this.budget = Some(budget);
                budget
            }
        };
        if this.timer.has_fired(Naming::default()).is_some() {
            this.future.set(None);
            return Poll::Ready(Err(Elapsed::budget(budget.duration, budget.name)));
        }
        let future = this.future.as_mut().as_pin_mut().expect("checked above");
        let polled = {
            let _scope = ambient::Scope::enter(budget);
            future.poll(cx)
        };
        if let Poll::Ready(output) = polled {
            this.future.set(None);
            this.timer.release();
            return Poll::Ready(Ok(output));
        }
        let naming = Naming {
            name: None,
            cap: Some(&budget),
        };
        match this.timer.poll_fired(cx, naming) {
            Poll::Ready(_) => {
                this.future.set(None);
                Poll::Ready(Err(Elapsed::budget(budget.duration, budget.name)))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<F, W: WheelRef> fmt::Debug for Budgeted<'_, F, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budgeted")
            .field("running", &self.future.is_some())
            .field("budget", &self.budget)
            .field("timer", &self.timer)
            .finish()
    }
}

pin_project! {
    /// A [`Deadline`] bounded by an explicit [`Budget`] as well: made by
    /// [`Deadline::within`]. It ends at the earlier of the two; when the budget's comes
    /// first, the `Elapsed` is the budget's.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Within<'w, F, W: WheelRef = &'w dyn RawWheel, N: DeadlineName = Unnamed> {
        #[pin]
        deadline: Deadline<'w, F, W, N>,
        budget: Budget,
    }
}

impl<'w, F: Future, W: WheelRef, N: DeadlineName> Deadline<'w, F, W, N> {
    /// Bounds this deadline by `budget` too (the explicit, `no_std` way to use a budget;
    /// with `std`, deadlines inside a [`Budgeted`] pick it up by themselves).
    pub fn within(self, budget: Budget) -> Within<'w, F, W, N> {
        Within {
            deadline: self,
            budget,
        }
    }
}

impl<F: Future, W: WheelRef, N: DeadlineName> Future for Within<'_, F, W, N> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        this.deadline.poll_capped(cx, Some(this.budget))
    }
}

impl<F, W: WheelRef, N: DeadlineName> fmt::Debug for Within<'_, F, W, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Within")
            .field("deadline", &self.deadline)
            .field("budget", &self.budget)
            .finish()
    }
}

#[cfg(all(test, feature = "std", not(punctual_loom)))]
mod tests {
    use core::future::{Future, pending};
    use core::pin::pin;
    use core::task::{Context, Poll, Waker};
    use core::time::Duration;

    use super::{Budget, ambient};
    use crate::{Fixed, ManualClock, Wheel};

    /// A deadline that the ambient budget cut short names the budget when it fires under
    /// it: the deadline keeps no name for it, the budget in force is asked at the fire.
    #[test]
    fn a_deadline_cut_by_the_ambient_budget_names_it_when_it_fires_under_it() {
        let wheel: Wheel<ManualClock, Fixed<4>> =
            Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
        let budget = Budget::starting_now(&wheel, Duration::from_millis(10))
            .unwrap()
            .named("checkout");
        let mut cx = Context::from_waker(Waker::noop());
        let mut inside = pin!(wheel.deadline(Duration::from_millis(100), pending::<()>()));
        let mut outside = pin!(wheel.deadline(Duration::from_millis(100), pending::<()>()));
        {
            let _scope = ambient::Scope::enter(budget);
            assert!(inside.as_mut().poll(&mut cx).is_pending());
            assert!(outside.as_mut().poll(&mut cx).is_pending());
        }
        wheel.advance(Duration::from_millis(10));
        let fired_inside = {
            let _scope = ambient::Scope::enter(budget);
            inside.as_mut().poll(&mut cx)
        };
        let Poll::Ready(Err(inside)) = fired_inside else {
            panic!("not cut to the budget: {fired_inside:?}");
        };
        assert!(inside.is_budget());
        assert_eq!(inside.name(), Some("checkout"));
        let Poll::Ready(Err(outside)) = outside.as_mut().poll(&mut cx) else {
            panic!("not cut to the budget");
        };
        assert!(outside.is_budget());
        assert_eq!(outside.duration(), Duration::from_millis(10));
        assert_eq!(outside.name(), None, "no budget in force where it fired");
    }

    /// Another budget of the same duration in force where the deadline fires is not the
    /// one that cut it short: it lends no name.
    #[test]
    fn a_deadline_is_not_named_after_a_later_budget_of_the_same_length() {
        let wheel: Wheel<ManualClock, Fixed<4>> =
            Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
        let ten = Duration::from_millis(10);
        let first = Budget::starting_now(&wheel, ten).unwrap().named("a");
        let mut cx = Context::from_waker(Waker::noop());
        let mut d = pin!(wheel.deadline(Duration::from_millis(100), pending::<()>()));
        {
            let _scope = ambient::Scope::enter(first);
            assert!(d.as_mut().poll(&mut cx).is_pending());
        }
        wheel.advance(Duration::from_millis(5));
        let later = Budget::starting_now(&wheel, ten).unwrap().named("b");
        wheel.advance(Duration::from_millis(5));
        let fired = {
            let _scope = ambient::Scope::enter(later);
            d.as_mut().poll(&mut cx)
        };
        let Poll::Ready(Err(elapsed)) = fired else {
            panic!("not cut to the first budget: {fired:?}");
        };
        assert!(elapsed.is_budget());
        assert_eq!(elapsed.name(), None);
    }
}
