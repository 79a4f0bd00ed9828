//! [`CurrentBudget`] and [`BlockingBudget`]: a budget carried into work that another task
//! polls, or that another thread runs.
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

/// The budget in force here, on the default wheel, if it ever ends.
fn carried_here() -> Option<Carried> {
    let mut wheel = DefaultWheel::new();
    wheel.choose();
    Budget::current().and_then(|budget| {
        budget.remaining(&wheel)?;
        // A budget that never ends bounds nothing.
        (budget.at() != punctual_core::Reading::END).then(|| Carried {
            end: wheel.global_reading(budget.at()),
            duration: budget.duration(),
            name: budget.name(),
        })
    })
}

/// `future`, carrying the budget in force here.
pub(crate) fn carry<F: Future>(future: F) -> CurrentBudget<F> {
    CurrentBudget {
        state: State::Made {
            future,
            carried: carried_here(),
        },
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

/// The budget in force where it was taken, for work on another thread: blocking code,
/// `spawn_blocking`, a thread pool. No runtime can stop such work from outside; it stops
/// itself by checking its budget in its loop.
///
/// It is a plain value (`Copy`, `Send`): the budget's end as an instant, its duration and
/// its name. [`expired`](Self::expired) and [`remaining`](Self::remaining) read the
/// clock of the thread's default wheel: no lock, no allocation once the thread has its
/// wheel (inside a tokio runtime, the first use on a thread claims one). [`carry_budget`] runs a
/// closure with the budget in force, so that default deadlines inside it end by it too.
///
/// ```
/// use std::time::Duration;
/// use punctual::BlockingBudget;
///
/// # futures_executor::block_on(async {
/// let outcome = punctual::budget(Duration::from_millis(20), async {
///     // `tokio::task::spawn_blocking(punctual::carry_budget(..))` in a tokio service.
///     let work = std::thread::spawn(punctual::carry_budget(|| {
///         let budget = BlockingBudget::current();
///         let mut slices = 0;
///         while !budget.expired() {
///             slices += 1; // a slice of blocking work
///             std::thread::sleep(Duration::from_millis(1));
///         }
///         budget.check().map(|()| slices)
///     }));
///     work.join().unwrap() // blocks this task: only to keep the example short
/// })
/// .await;
/// // The blocking work saw the budget run out, and stopped.
/// assert!(outcome.and_then(|inner| inner).unwrap_err().is_budget());
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct BlockingBudget {
    carried: Option<Carried>,
}

impl BlockingBudget {
    /// The budget in force here: inside a `punctual::budget` block, a request under a
    /// `punctual-tower` layer, or a closure of [`carry_budget`]. With none, a value that
    /// never expires.
    pub fn current() -> Self {
        Self {
            carried: carried_here(),
        }
    }

    /// What is left of the budget now, on this thread's default wheel; `None` without a
    /// budget.
    pub fn remaining(&self) -> Option<Duration> {
        let (wheel, budget) = budget_here(self.carried?);
        budget.remaining(&wheel)
    }

    /// Whether the budget has run out; never without one.
    pub fn expired(&self) -> bool {
        self.remaining().is_some_and(|left| left.is_zero())
    }

    /// `Err` with the budget's [`Elapsed`] once it has run out, for `?` in a loop.
    ///
    /// # Errors
    ///
    /// The budget's `Elapsed` ([`Elapsed::is_budget`]) once it has run out.
    pub fn check(&self) -> Result<(), Elapsed> {
        match self.carried {
            Some(carried) if self.expired() => Err(Elapsed::budget(carried.duration, carried.name)),
            _ => Ok(()),
        }
    }

    /// Runs `f` with the budget in force on this thread: default deadlines first polled
    /// inside it (in a `block_on`, say) end by it, and [`BlockingBudget::current`] inside
    /// it is this budget.
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.carried {
            Some(carried) => budget_here(carried).1.enter(f),
            None => f(),
        }
    }
}

/// `f`, carrying the budget in force here into the thread that runs it
/// ([`BlockingBudget::enter`]): `tokio::task::spawn_blocking(punctual::carry_budget(f))`,
/// `std::thread::spawn(punctual::carry_budget(f))`. See [`BlockingBudget`].
pub fn carry_budget<R>(f: impl FnOnce() -> R) -> impl FnOnce() -> R {
    let budget = BlockingBudget::current();
    move || budget.enter(f)
}
