//! `Sleep`: a deadline on nothing.

use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::future::timer::{RawWheel, Timer, WheelRef};
use crate::time::Limit;

/// A future that completes when its time has passed: a deadline on nothing, with the
/// rules of a [`Deadline`](crate::Deadline). Made by `punctual::sleep` or
/// [`Wheel::sleep`](crate::Wheel::sleep).
///
/// # Panics
///
/// Polling it after `Ready`, or again after a poll panicked.
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sleep<'w, W: WheelRef = &'w dyn RawWheel> {
    timer: Timer<W>,
    done: bool,
    wheel: PhantomData<&'w ()>,
}

impl<'w, W: WheelRef> Sleep<'w, W> {
    /// Sleeps until `limit` on `wheel`.
    pub const fn new(wheel: W, limit: Limit) -> Self {
        Self {
            timer: Timer::new(wheel, limit),
            done: false,
            wheel: PhantomData,
        }
    }

    /// Whether the sleep has started (been polled once).
    pub fn is_started(&self) -> bool {
        self.timer.is_started()
    }
}

impl<W: WheelRef> Future for Sleep<'_, W> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        assert!(!self.done, "`Sleep` polled after completion");
        match self.timer.poll_fired(cx, None) {
            Poll::Ready(fired) => {
                fired.elapsed(None);
                self.done = true;
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<W: WheelRef> fmt::Debug for Sleep<'_, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sleep")
            .field("timer", &self.timer)
            .field("done", &self.done)
            .finish()
    }
}
