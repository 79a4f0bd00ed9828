//! [`Budgeted`], a future bounded by a budget that every deadline inside it respects, and
//! [`Within`], a deadline bounded by an explicit budget too. See the budget module's docs
//! (`budget.rs`) for how a budget reaches the deadlines inside it.

use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;

use crate::future::budget::{Budget, Scope, ambient};
use crate::future::deadline::{DeadlineName, Unnamed};
use crate::future::timer::{Cap, RawWheel, Timer, WheelRef};
use crate::time::{Limit, Reading};
use crate::{Deadline, Elapsed};

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
            duration: budget.cap.duration,
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
                // Beyond any reading: no limit of its own, only an enclosing one.
                let at = wheel
                    .get()
                    .target(Limit::After(*this.duration))
                    .unwrap_or(Reading::END);
                let own = Budget {
                    cap: Cap {
                        wheel: wheel.id(),
                        at,
                        duration: *this.duration,
                    },
                    name: *this.name,
                };
                let budget = own.earlier(ambient());
                // The timer ends at the budget's instant through its cap (a reading of
                // the wheel's own clock; see `with_budget`), with no limit of its own.
                this.timer.reset(Limit::After(Duration::MAX));
                *this.budget = Some(budget);
                budget
            }
        };
        if let Some(fired) = this.timer.has_fired() {
            this.future.set(None);
            let elapsed = Elapsed::budget(budget.cap.duration, budget.name);
            fired.trace(&elapsed);
            return Poll::Ready(Err(elapsed));
        }
        let future = this.future.as_mut().as_pin_mut().expect("checked above");
        let polled = {
            let _scope = Scope::enter(budget);
            future.poll(cx)
        };
        if let Poll::Ready(output) = polled {
            this.future.set(None);
            this.timer.release();
            return Poll::Ready(Ok(output));
        }
        match this.timer.poll_fired(cx, Some(&budget.cap)) {
            Poll::Ready(fired) => {
                this.future.set(None);
                let elapsed = Elapsed::budget(budget.cap.duration, budget.name);
                fired.trace(&elapsed);
                Poll::Ready(Err(elapsed))
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
