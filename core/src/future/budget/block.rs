//! [`Budgeted`]: a future, and every deadline polled inside it, bounded by a budget.
//!
//! * A `Budgeted` fixes its budget at its first poll, before polling its inner future.
//! * Its timer has no limit of its own: the budget caps it.
//! * While the inner future is polled, the budget is the thread's ambient one (`std`).

use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;

use crate::Elapsed;
use crate::future::budget::{Budget, Scope, ambient};
use crate::future::timer::{Cap, RawWheel, Timer, WheelRef};
use crate::time::{Limit, Reading};

pin_project! {
    /// A future bounded by a budget: like a [`Deadline`], and every deadline started inside
    /// it (on the same wheel) also ends no later than the budget. So three retries of
    /// 800 ms each inside a 2 s budget never outlive the 2 s: the third attempt is cut to
    /// what is left, and when the budget runs out the whole block is dropped.
    ///
    /// Made by `punctual::budget`, [`Budgeted::new`] or [`Budgeted::with_budget`].
    ///
    /// Unlike a `Deadline`, a budget starts its clock *before* the first poll of its inner
    /// future, since the deadlines inside need its instant.
    ///
    /// # How the budget reaches inner deadlines
    ///
    /// * With `std`, by itself. While it polls its inner future, it sets the thread's
    ///   current budget: the earlier of its own and any enclosing one. A deadline reads it
    ///   at its first pending poll. So the budget travels with the polling, on any
    ///   executor, across `.await`s and into nested futures. It does not reach tasks
    ///   spawned inside the block, which others poll. A deadline made before the block
    ///   but first polled inside it takes the budget too, and keeps it after the block;
    ///   poll it once before the block if it must keep its own limit.
    /// * Without `std`, explicitly: make a [`Budget`], bound the block with
    ///   [`Budgeted::with_budget`], and give each inner deadline the budget with
    ///   [`Deadline::within`].
    ///
    /// A budget applies only to deadlines on the wheel it was made on: instants of two
    /// clocks cannot be compared.
    ///
    /// # Errors
    ///
    /// Resolves to `Err(Elapsed)` (with [`Elapsed::is_budget`]) when the budget runs out
    /// before the inner future completes; the inner future has been dropped by then.
    ///
    /// An inner deadline that the budget ends reports the budget: `is_budget`, the
    /// budget's duration, and the budget's name if it fires under the budget (polled
    /// inside the block, or given it with [`Deadline::within`]). One that took the budget
    /// inside the block and fires after the block has the budget's duration but no name.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner future, as for a `Deadline`.
    ///
    /// # Panics
    ///
    /// Polling it after it returned `Ready` panics, and so does polling it again after a
    /// poll of its timer panicked.
    ///
    /// [`Deadline`]: crate::Deadline
    /// [`Deadline::within`]: crate::Deadline::within
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

    /// Bounds `future` by an explicit `budget`: the `no_std` way (see [`Budgeted`]).
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
