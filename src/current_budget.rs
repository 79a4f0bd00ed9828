//! [`CurrentBudget`]: a budget carried into work that another task polls.
//!
//! * A budget reaches inner deadlines through a thread-local, set while its future is polled.
//!   So it does not reach a spawned task by itself.
//! * `CurrentBudget` takes the budget in force where it is made, on the spawner's thread.
//! * Its first poll sets that budget on the default wheel of the polling thread.
//! * The end travels as a reading of the global clock, which every default wheel converts
//!   exactly. So the end stays the same instant on every wheel.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::{Budget, Elapsed, WheelRef};

use crate::default_wheel::DefaultWheel;
use crate::defaults::Budgeted;

/// The budget to carry: its end on the global clock, and what its `Elapsed` reports.
#[derive(Debug, Clone, Copy)]
struct Carried {
    end: punctual_core::Reading,
    duration: Duration,
    name: Option<&'static str>,
}

pin_project! {
    /// A future carrying the budget that was in force where it was made: made by
    /// [`DeadlineExt::with_current_budget`](crate::DeadlineExt::with_current_budget).
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)`, a budget's, when the carried budget runs out first. The inner
    /// future has been dropped by then.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner future.
    ///
    /// # Panics
    ///
    /// Polling it after it returned `Ready` panics.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct CurrentBudget<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    /// `Made` until the first poll, then `Bounded` or `Unbounded` for good.
    /// `Poisoned` only during that move, and after a panic in it.
    #[project = StateProj]
    #[project_replace = StateReplace]
    enum State<F> {
        Made { future: F, carried: Option<Carried> },
        Bounded { #[pin] budgeted: Budgeted<F> },
        Unbounded { #[pin] future: F },
        Poisoned,
    }
}

/// `future`, carrying the budget in force here.
pub(crate) fn carry<F: Future>(future: F) -> CurrentBudget<F> {
    let mut wheel = DefaultWheel::new();
    wheel.choose();
    let carried = Budget::current().and_then(|budget| {
        budget.remaining(&wheel)?;
        // A budget that never ends bounds nothing.
        (budget.at() != punctual_core::Reading::END).then(|| Carried {
            end: wheel.global_reading(budget.at()),
            duration: budget.duration(),
            name: budget.name(),
        })
    });
    CurrentBudget {
        state: State::Made { future, carried },
    }
}

/// The carried budget, set on this thread's default wheel.
fn budget_here(carried: Carried) -> (DefaultWheel, Budget) {
    let mut wheel = DefaultWheel::new();
    wheel.choose();
    let budget = Budget::new(
        wheel.budget_wheel(),
        wheel.reading_at(carried.end),
        carried.duration,
    );
    let budget = match carried.name {
        Some(name) => budget.named(name),
        None => budget,
    };
    (wheel, budget)
}

impl<F: Future> Future for CurrentBudget<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        if let StateProj::Made { .. } = state.as_mut().project() {
            let StateReplace::Made { future, carried } =
                state.as_mut().project_replace(State::Poisoned)
            else {
                unreachable!("checked above")
            };
            state.set(match carried {
                Some(carried) => {
                    let (wheel, budget) = budget_here(carried);
                    State::Bounded {
                        budgeted: Budgeted::with_budget(future, wheel, budget),
                    }
                }
                None => State::Unbounded { future },
            });
        }
        match state.project() {
            StateProj::Bounded { budgeted } => budgeted.poll(cx),
            StateProj::Unbounded { future } => future.poll(cx).map(Ok),
            StateProj::Made { .. } | StateProj::Poisoned => {
                panic!("`CurrentBudget` polled after a poll panicked")
            }
        }
    }
}

impl<F> fmt::Debug for CurrentBudget<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Made { carried, .. } => match carried {
                Some(_) => "not polled yet, carrying a budget",
                None => "not polled yet, no budget",
            },
            State::Bounded { .. } => "bounded",
            State::Unbounded { .. } => "unbounded",
            State::Poisoned => "poisoned",
        };
        f.debug_struct("CurrentBudget")
            .field("state", &state)
            .finish()
    }
}
