//! [`Budgeted`]: a future, and every deadline polled inside it, bounded by a budget.
//! * It fixes its budget at its first poll, before polling its inner future.
//! * Its timer has no limit of its own: the budget caps it.
//! * A named one reports one outcome (`crate::future::outcome`) when it ends: completed,
//!   elapsed or dropped; an unnamed one pays one predictable branch for it.

use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;

use crate::Elapsed;
use crate::future::budget::{Budget, Scope, ambient};
use crate::future::outcome::{self, NOT_STARTED, OutcomeKind};
use crate::future::timer::{Cap, RawWheel, Timer, WheelRef};
use crate::time::{Limit, Reading, span_of};

pin_project! {
    /// A future bounded by a budget, like a [`Deadline`](crate::Deadline); every deadline
    /// started inside it on the same wheel also ends by the budget. Three retries of 800 ms
    /// in a 2 s budget never outlive the 2 s; when it runs out, the whole block is dropped.
    ///
    /// Made by `punctual::budget`, [`Budgeted::new`] or [`Budgeted::with_budget`]. Unlike a
    /// `Deadline`, its clock starts *before* the first poll of its inner future.
    ///
    /// # How the budget reaches inner deadlines
    ///
    /// * With `std`, by itself: while it polls its inner future, the thread's budget is the
    ///   earlier of its own and any enclosing one, which a deadline reads at its first
    ///   pending poll. It travels with the polling on any executor, but not into tasks
    ///   spawned inside. A deadline made before the block but first polled inside it takes
    ///   the budget too; poll it once before if it must keep its own limit.
    /// * Without `std`, explicitly: bound the block with [`Budgeted::with_budget`] and give
    ///   each inner deadline the [`Budget`] with [`Deadline::within`](crate::Deadline::within).
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)` ([`Elapsed::is_budget`]) when the budget runs out first; the inner
    /// future has been dropped by then. An inner deadline the budget ends reports the
    /// budget's duration, and its name if it fires under the budget (inside the block, or
    /// through `Deadline::within`).
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
        name: Option<&'static str>,
        budget: Option<Budget>,
        // The name its outcome is reported under: set by `named` only, not taken from a
        // budget given to `with_budget` (that budget's owner reports it).
        reported: Option<&'static str>,
        // The first poll's reading when reported, for its outcome; `NOT_STARTED` before.
        start: u64,
        wheel: PhantomData<&'w ()>,
    }

    impl<'w, F, W: WheelRef> PinnedDrop for Budgeted<'w, F, W> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let (Some(name), true) = (*this.reported, this.future.is_some()) {
                let limit = this.budget.map_or(*this.duration, |b| b.cap.duration);
                let timer = &*this.timer;
                outcome::report_since(name, OutcomeKind::Dropped, Some(limit), *this.start, || {
                    timer.now()
                });
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
            name: None,
            budget: None,
            reported: None,
            start: NOT_STARTED,
            wheel: PhantomData,
        }
    }

    /// Bounds `future` by an explicit `budget`: the `no_std` way (see [`Budgeted`]).
    ///
    /// # Panics
    ///
    /// If `budget` was made on another wheel.
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
            // The budget caps the timer: `Limit::At` may not take its reading on every handle.
            timer: Timer::new(wheel, Limit::After(Duration::MAX)),
            duration: budget.cap.duration,
            name: budget.name,
            budget: Some(budget),
            reported: None,
            start: NOT_STARTED,
            wheel: PhantomData,
        }
    }

    /// Names the budget: the name its `Elapsed` carries, and under which its
    /// [`Outcome`](crate::Outcome) is reported when it ends (completed, elapsed or dropped,
    /// timed from its first poll; see [`set_outcome_hook`](crate::set_outcome_hook)). A
    /// budget given to [`with_budget`](Budgeted::with_budget) lends its name to the
    /// `Elapsed` only: its outcome is its owner's to report, unless this is named.
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self.reported = Some(name);
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
                if this.reported.is_some() && at != Reading::END {
                    // The reading `target` took (and the resolution it adds): no second read.
                    *this.start = at.before(span_of(*this.duration)).as_nanos();
                }
                let budget = own.earlier(ambient());
                this.timer.reset(Limit::After(Duration::MAX));
                *this.budget = Some(budget);
                budget
            }
        };
        if this.reported.is_some() && *this.start == NOT_STARTED {
            *this.start = this.timer.chosen_wheel().get().now().as_nanos();
        }
        let fired = match this.timer.has_fired() {
            Some(fired) => fired,
            None => {
                let future = this.future.as_mut().as_pin_mut().expect("checked above");
                let polled = {
                    let _scope = Scope::enter(budget);
                    future.poll(cx)
                };
                if let Poll::Ready(output) = polled {
                    this.future.set(None);
                    report(
                        *this.reported,
                        OutcomeKind::Completed,
                        &budget,
                        *this.start,
                        this.timer,
                    );
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
        report(
            *this.reported,
            OutcomeKind::Elapsed,
            &budget,
            *this.start,
            this.timer,
        );
        Poll::Ready(Err(elapsed))
    }
}

/// Reports a named budget's end; nothing for an unnamed one.
#[inline(always)]
fn report<W: WheelRef>(
    name: Option<&'static str>,
    kind: OutcomeKind,
    budget: &Budget,
    start: u64,
    timer: &Timer<W>,
) {
    if let Some(name) = name {
        outcome::report_since(name, kind, Some(budget.cap.duration), start, || timer.now());
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
