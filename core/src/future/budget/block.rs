//! [`Budgeted`]: a future, and every deadline polled inside it, bounded by a budget.
//! * It fixes its budget at its first poll, before polling its inner future.
//! * Its timer has no limit of its own: the budget caps it.
//! * A named one reports one outcome when it ends: completed, elapsed or dropped.

use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;

use crate::Elapsed;
#[cfg(feature = "std")]
use crate::future::budget::Scope;
use crate::future::budget::{Budget, ambient};
use crate::future::outcome::{DeadlineName, Named, OutcomeKind};
use crate::future::timer::{Cap, RawWheel, Timer, WheelRef};
use crate::time::{Limit, Reading, span_of};

pin_project! {
    /// A future bounded by a budget, like a [`Deadline`](crate::Deadline); every deadline
    /// started inside it on the same wheel ends by the budget too (three retries of 800 ms
    /// in a 2 s budget never outlive the 2 s). Its clock starts *before* the first poll of
    /// its future.
    ///
    /// # How the budget reaches inner deadlines
    ///
    /// * With `std`, by itself: while it polls its future, the thread's budget is the
    ///   earlier of its own and any enclosing one, read by a deadline at its first pending
    ///   poll (not in tasks spawned inside). A deadline made before the block but first
    ///   polled inside takes the budget too.
    /// * Without `std`: give each inner deadline the [`Budget`] with
    ///   [`Deadline::within`](crate::Deadline::within).
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` ([`Elapsed::is_budget`]) when the budget runs out first, the inner
    /// future dropped. An inner deadline it ends reports the budget's duration, and its
    /// name if it fires under the budget.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner future.
    ///
    /// # Panics
    ///
    /// Polling it after `Ready`, or again after a poll of its timer panicked.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Budgeted<'w, F, W: WheelRef = &'w dyn RawWheel> {
        #[pin]
        future: Option<F>,
        timer: Timer<W>,
        duration: Duration,
        budget: Option<Budget>,
        // Set by `named` only: a budget given to `with_budget` is its owner's to report.
        reported: Option<Named>,
        wheel: PhantomData<&'w ()>,
    }

    impl<'w, F, W: WheelRef> PinnedDrop for Budgeted<'w, F, W> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let (Some(named), true) = (this.reported, this.future.is_some()) {
                let limit = this.budget.map_or(*this.duration, |b| b.cap.duration);
                let timer = &*this.timer;
                named.ended(OutcomeKind::Dropped, || Some(limit), || timer.now());
            }
        }
    }
}

impl<'w, F: Future, W: WheelRef> Budgeted<'w, F, W> {
    /// Bounds `future`, and the deadlines on `wheel` inside it, by `duration` from its first poll.
    pub fn new(future: F, wheel: W, duration: Duration) -> Self {
        Self {
            future: Some(future),
            timer: Timer::new(wheel, Limit::After(duration)),
            duration,
            budget: None,
            reported: None,
            wheel: PhantomData,
        }
    }

    /// Bounds `future` by an explicit `budget`: the `no_std` way (see [`Budgeted`]).
    ///
    /// # Panics
    ///
    /// If `budget` was made on another wheel.
    #[track_caller]
    pub fn with_budget(future: F, mut wheel: W, budget: Budget) -> Self {
        wheel.choose();
        assert!(
            budget.cap.wheel == wheel.id(),
            "`Budgeted::with_budget`: the budget was made on another wheel"
        );
        // The budget caps the timer: `Limit::At` may not take its reading on every handle.
        let mut this = Self::new(future, wheel, Duration::MAX);
        (this.duration, this.budget) = (budget.cap.duration, Some(budget));
        this
    }

    /// Names the budget: its `Elapsed` carries the name, and its
    /// [`Outcome`](crate::Outcome) is reported under it, timed from the first poll. Without
    /// it, a [`with_budget`](Budgeted::with_budget) budget's name is on the `Elapsed` only.
    pub fn named(mut self, name: &'static str) -> Self {
        self.reported = Some(Named::new(name));
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
        let Some(future) = this.future.as_mut().as_pin_mut() else {
            panic!("`Budgeted` polled after completion");
        };
        let budget = match *this.budget {
            Some(budget) => budget,
            None => {
                let wheel = this.timer.chosen_wheel();
                let limit = Limit::After(*this.duration);
                let at = wheel.get().target(limit).unwrap_or(Reading::END);
                let own = Budget {
                    cap: Cap {
                        wheel: wheel.id(),
                        at,
                        duration: *this.duration,
                    },
                    name: this.reported.map(|named| named.name()),
                };
                if let (Some(named), false) = (this.reported.as_mut(), at == Reading::END) {
                    // The reading `target` took (and the resolution it adds): no second read.
                    named.started(|| at.before(span_of(*this.duration)));
                }
                let budget = own.earlier(ambient());
                this.timer.reset(Limit::After(Duration::MAX));
                *this.budget = Some(budget);
                budget
            }
        };
        if let Some(named) = this.reported.as_mut() {
            let timer = &mut *this.timer;
            named.started(|| timer.chosen_wheel().get().now());
        }
        let limit = || Some(budget.cap.duration);
        let fired = match this.timer.has_fired() {
            Some(fired) => fired,
            None => {
                let polled = {
                    #[cfg(feature = "std")]
                    let _scope = Scope::enter(budget);
                    future.poll(cx)
                };
                if let Poll::Ready(output) = polled {
                    this.future.set(None);
                    if let Some(named) = &this.reported {
                        named.ended(OutcomeKind::Completed, limit, || this.timer.now());
                    }
                    this.timer.release();
                    return Poll::Ready(Ok(output));
                }
                match this.timer.poll_fired(cx, Some(&budget.cap)) {
                    Poll::Ready(fired) => fired,
                    Poll::Pending => return Poll::Pending,
                }
            }
        };
        this.future.set(None);
        let elapsed = Elapsed::budget(budget.cap.duration, budget.name);
        fired.trace(&elapsed);
        if let Some(named) = &this.reported {
            named.ended(OutcomeKind::Elapsed, limit, || this.timer.now());
        }
        Poll::Ready(Err(elapsed))
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
