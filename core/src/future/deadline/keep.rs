//! [`KeepOnElapsed`]: a [`Deadline`] that moves its (`Unpin`) inner future out at the fire
//! rather than drop it; otherwise a deadline's rules and outcome.

use core::fmt;
use core::future::Future;
use core::mem::ManuallyDrop;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::{Deadline, ReportsOutput};
use crate::Elapsed;
use crate::future::timer::WheelRef;

/// The error of a [`KeepOnElapsed`]: the [`Elapsed`] and the inner future, still running.
#[derive(Debug)]
pub struct Abandoned<F> {
    /// Why: the deadline's (or a budget's) `Elapsed`.
    pub elapsed: Elapsed,
    /// The inner future, as it was at the fire.
    pub future: F,
}

/// A deadline that, at the fire, gives its inner future back in the error rather than
/// dropping it ([`Deadline::keep_on_elapsed`]).
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct KeepOnElapsed<'w, F, W: WheelRef, N: super::DeadlineName> {
    deadline: Deadline<'w, F, W, N>,
}

impl<'w, F: Future + Unpin, W: WheelRef, N: super::DeadlineName> Deadline<'w, F, W, N> {
    /// At the fire, hands the inner future back in the error ([`Abandoned`]) instead of
    /// dropping it, for work worth finishing though no one waits (a write-behind).
    ///
    /// # Panics
    ///
    /// If the deadline has completed, as the other accessors.
    pub fn keep_on_elapsed(self) -> KeepOnElapsed<'w, F, W, N> {
        self.check_live("keep_on_elapsed");
        KeepOnElapsed { deadline: self }
    }
}

impl<F: Future + Unpin, W: WheelRef, N: ReportsOutput<F::Output>> Future
    for KeepOnElapsed<'_, F, W, N>
{
    type Output = Result<F::Output, Abandoned<F>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: the deadline is not moved; its inner future is `Unpin`, and is polled
        // in place and moved out only at the fire.
        let this = unsafe { &mut self.get_unchecked_mut().deadline };
        this.poll_inner(cx, None, "KeepOnElapsed", |this, fired| {
            this.timer.set_inner_dropped();
            // SAFETY: live until just now, and marked gone: taken exactly once, never
            // dropped in place after. `F: Unpin`: it may move out of a pinned deadline.
            let future = unsafe { ManuallyDrop::take(&mut this.future) };
            let elapsed = this.elapsed(&fired, None);
            Abandoned { elapsed, future }
        })
    }
}

impl<F, W: WheelRef, N: super::DeadlineName> fmt::Debug for KeepOnElapsed<'_, F, W, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeepOnElapsed")
            .field("deadline", &self.deadline)
            .finish()
    }
}
