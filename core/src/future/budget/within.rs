//! [`Within`], a deadline capped by an explicit [`Budget`] as well.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;

use crate::future::budget::Budget;
use crate::future::deadline::{DeadlineName, ReportsOutput, Unnamed};
use crate::future::timer::{RawWheel, WheelRef};
use crate::{Deadline, Elapsed};

pin_project! {
    /// A [`Deadline`] bounded by an explicit [`Budget`] as well ([`Deadline::within`]):
    /// it ends at the earlier; when the budget's comes first, the `Elapsed` is the budget's.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Within<'w, F, W: WheelRef = &'w dyn RawWheel, N: DeadlineName = Unnamed> {
        #[pin]
        deadline: Deadline<'w, F, W, N>,
        budget: Budget,
    }
}

impl<'w, F: Future, W: WheelRef, N: DeadlineName> Deadline<'w, F, W, N> {
    /// Bounds this deadline by `budget` too: the `no_std` way (see [`Budgeted`](crate::Budgeted)).
    pub fn within(self, budget: Budget) -> Within<'w, F, W, N> {
        Within {
            deadline: self,
            budget,
        }
    }
}

impl<F: Future, W: WheelRef, N: ReportsOutput<F::Output>> Future for Within<'_, F, W, N> {
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
