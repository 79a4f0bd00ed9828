//! [`Budget`], the budget in force as a plain value, and [`Budgeted`], a future under a
//! budget given (`punctual::budget`) or carried (`with_current_budget`).
//! * A budget reaches inner deadlines through a thread-local set while its future is
//!   polled, not a spawned task or another thread: carry it there.
//! * A carried budget's end travels as a reading of the global clock, which every default
//!   wheel converts exactly; its first poll (or `enter`) sets it on the thread's wheel.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::{Elapsed, WheelRef};

use crate::default_wheel::DefaultWheel;

type OnDefaultWheel<F> = punctual_core::Budgeted<'static, F, DefaultWheel>;

/// The budget to carry: its end on the global clock, and what its `Elapsed` reports.
#[derive(Debug, Clone, Copy)]
struct Carried {
    end: punctual_core::Reading,
    duration: Duration,
    name: Option<&'static str>,
}

pin_project! {
    /// A future run under a budget: of [`punctual::budget`](crate::budget) or
    /// [`DeadlineExt::with_current_budget`](crate::DeadlineExt::with_current_budget).
    ///
    /// # Errors
    ///
    /// `Err(Elapsed)`, a budget's ([`Elapsed::is_budget`]), when the budget runs out first.
    /// The inner future has been dropped by then.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner future.
    ///
    /// # Panics
    ///
    /// Polling it after it returned `Ready` panics.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Budgeted<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    /// `Carrying` until the first poll, then `Bounded` or `Unbounded` for good (`Poisoned`
    /// only during that move, and after a panic in it).
    #[project = StateProj]
    #[project_replace = StateReplace]
    enum State<F> {
        Carrying { future: F, carried: Option<Carried>, name: Option<&'static str> },
        Bounded { #[pin] budgeted: OnDefaultWheel<F> },
        Unbounded { #[pin] future: F },
        Poisoned,
    }
}

impl<F: Future> Budgeted<F> {
    /// `future` under a budget of `duration` from its first poll.
    pub(crate) fn new(future: F, duration: Duration) -> Self {
        let budgeted = OnDefaultWheel::new(future, DefaultWheel::new(), duration);
        let state = State::Bounded { budgeted };
        Self { state }
    }

    /// `future`, carrying the budget in force here.
    pub(crate) fn carrying(future: F) -> Self {
        Self {
            state: State::Carrying {
                future,
                carried: carried_here(),
                name: None,
            },
        }
    }

    /// Names the budget: the name its `Elapsed` carries, and under which its outcome is
    /// reported when it ends (see [`report`](crate::report)). A carried budget keeps its
    /// own name unless this renames it; with no budget to carry, the name is unused.
    pub fn named(mut self, name: &'static str) -> Self {
        if let State::Carrying { name: own, .. } = &mut self.state {
            *own = Some(name);
        }
        if let State::Bounded { budgeted } = self.state {
            let budgeted = budgeted.named(name);
            self.state = State::Bounded { budgeted };
        }
        self
    }
}

/// The budget in force here, on the default wheel, if it ever ends.
fn carried_here() -> Option<Carried> {
    let mut wheel = DefaultWheel::new();
    wheel.choose();
    punctual_core::Budget::current().and_then(|budget| {
        budget.remaining(&wheel)?;
        // A budget that never ends bounds nothing.
        (budget.at() != punctual_core::Reading::END).then(|| Carried {
            end: wheel.global_reading(budget.at()),
            duration: budget.duration(),
            name: budget.name(),
        })
    })
}

/// The carried budget, set on this thread's default wheel.
fn budget_here(carried: Carried) -> (DefaultWheel, punctual_core::Budget) {
    let mut wheel = DefaultWheel::new();
    wheel.choose();
    let mut budget = punctual_core::Budget::new(
        wheel.budget_wheel(),
        wheel.reading_at(carried.end),
        carried.duration,
    );
    if let Some(name) = carried.name {
        budget = budget.named(name);
    }
    (wheel, budget)
}

impl<F: Future> Future for Budgeted<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        if let StateProj::Carrying { .. } = state.as_mut().project() {
            let StateReplace::Carrying {
                future,
                carried,
                name,
            } = state.as_mut().project_replace(State::Poisoned)
            else {
                unreachable!("checked above")
            };
            state.set(match carried {
                Some(carried) => {
                    let (wheel, budget) = budget_here(carried);
                    let mut budgeted = OnDefaultWheel::with_budget(future, wheel, budget);
                    if let Some(name) = name {
                        budgeted = budgeted.named(name);
                    }
                    State::Bounded { budgeted }
                }
                None => State::Unbounded { future },
            });
        }
        match state.project() {
            StateProj::Bounded { budgeted } => budgeted.poll(cx),
            StateProj::Unbounded { future } => future.poll(cx).map(Ok),
            StateProj::Carrying { .. } | StateProj::Poisoned => {
                panic!("`Budgeted` polled after a poll panicked")
            }
        }
    }
}

impl<F> fmt::Debug for Budgeted<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Carrying {
                carried: Some(_), ..
            } => "not polled yet, carrying a budget",
            State::Carrying { .. } => "not polled yet, no budget",
            State::Bounded { .. } => "bounded",
            State::Unbounded { .. } => "unbounded",
            State::Poisoned => "poisoned",
        };
        f.debug_struct("Budgeted").field("state", &state).finish()
    }
}

/// The budget in force as a plain value (`Copy`, `Send`), taken with [`Budget::current`]
/// and checked on any thread, as blocking code does in its loop (the [guide](crate::guide)
/// shows it on tokio's blocking pool). A check reads the clock of the thread's default
/// wheel: no lock, no allocation once the thread has its wheel.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    carried: Option<Carried>,
}

impl Budget {
    /// The budget in force here: inside a [`punctual::budget`](crate::budget) block, a
    /// request under a `punctual-tower` layer, or [`enter`](Self::enter). With none, a
    /// value that never expires.
    pub fn current() -> Self {
        Self {
            carried: carried_here(),
        }
    }

    /// What is left of the budget now, on this thread's default wheel; `None` without one.
    pub fn remaining(&self) -> Option<Duration> {
        let (wheel, budget) = budget_here(self.carried?);
        budget.remaining(&wheel)
    }

    /// Whether the budget has run out; never without one.
    pub fn expired(&self) -> bool {
        self.remaining().is_some_and(|left| left.is_zero())
    }

    /// For `?` in a loop.
    ///
    /// # Errors
    ///
    /// The budget's [`Elapsed`] ([`Elapsed::is_budget`]) once it has run out.
    pub fn check(&self) -> Result<(), Elapsed> {
        match self.carried {
            Some(carried) if self.expired() => Err(Elapsed::budget(carried.duration, carried.name)),
            _ => Ok(()),
        }
    }

    /// Runs `f` with the budget in force on this thread: default deadlines first polled
    /// inside it (in a `block_on`, say) end by it, and [`Budget::current`] there is it.
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.carried {
            Some(carried) => budget_here(carried).1.enter(f),
            None => f(),
        }
    }
}
