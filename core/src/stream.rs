//! Deadlines for streams: one for the whole stream, or one for each gap between items.
//!
//! * [`StreamDeadline`]: the whole stream must end within a duration of its first poll.
//!   When the time passes, the stream yields one `Err(Elapsed)` and ends; the inner stream
//!   is dropped first.
//! * [`IdleTimeout`]: each item must come within a duration of the stream going idle
//!   (returning `Pending` after the previous item, or at the start). When an item is late,
//!   the stream yields one `Err(Elapsed)` and ends, dropping the inner stream. The timer
//!   is re-armed after each item by reusing a wheel entry: nothing is allocated per item.
//!
//! Both keep every rule of [`Deadline`](crate::Deadline): never early, at most two ticks
//! late, the inner stream never polled after the fire.

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use futures_core::Stream;
use pin_project_lite::pin_project;

use crate::Elapsed;
use crate::timer::{Limit, RawWheel, Timer};

pin_project! {
    /// A stream that must end within a duration of its first poll. See the
    /// [module docs](self).
    ///
    /// # Errors
    ///
    /// Yields `Err(Elapsed)` once, then `None`, when the duration passes first.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner stream and releases the timer.
    #[must_use = "streams do nothing unless polled"]
    pub struct StreamDeadline<'w, S> {
        #[pin]
        stream: Option<S>,
        timer: Timer<'w>,
    }
}

impl<'w, S: Stream> StreamDeadline<'w, S> {
    /// Bounds the whole of `stream` by `duration` on `wheel`, from its first poll.
    pub fn new(stream: S, wheel: &'w dyn RawWheel, duration: Duration) -> Self {
        Self {
            stream: Some(stream),
            timer: Timer::new(wheel, Limit::After(duration)),
        }
    }

    /// Names the deadline (shown in `Elapsed`).
    pub fn named(mut self, name: &'static str) -> Self {
        self.timer.set_name(name);
        self
    }
}

impl<S: Stream> Stream for StreamDeadline<'_, S> {
    type Item = Result<S::Item, Elapsed>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        let Some(stream) = this.stream.as_mut().as_pin_mut() else {
            return Poll::Ready(None);
        };
        // The whole-stream clock starts at the first poll, even if items are ready.
        if !this.timer.is_started() {
            if let Poll::Ready(elapsed) = this.timer.poll_fired(cx, None) {
                this.stream.set(None);
                return Poll::Ready(Some(Err(elapsed)));
            }
        } else if let Some(elapsed) = this.timer.has_fired() {
            this.stream.set(None);
            return Poll::Ready(Some(Err(elapsed)));
        }
        match stream.poll_next(cx) {
            Poll::Ready(Some(item)) => Poll::Ready(Some(Ok(item))),
            Poll::Ready(None) => {
                this.stream.set(None);
                this.timer.release();
                Poll::Ready(None)
            }
            Poll::Pending => match this.timer.poll_fired(cx, None) {
                Poll::Ready(elapsed) => {
                    this.stream.set(None);
                    Poll::Ready(Some(Err(elapsed)))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl<S> fmt::Debug for StreamDeadline<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamDeadline")
            .field("running", &self.stream.is_some())
            .field("timer", &self.timer)
            .finish()
    }
}

pin_project! {
    /// A stream whose items must each come within a duration of it going idle. See the
    /// [module docs](self).
    ///
    /// # Errors
    ///
    /// Yields `Err(Elapsed)` once, then `None`, when an item is late.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner stream and releases the timer.
    #[must_use = "streams do nothing unless polled"]
    pub struct IdleTimeout<'w, S> {
        #[pin]
        stream: Option<S>,
        timer: Timer<'w>,
        idle: Duration,
    }
}

impl<'w, S: Stream> IdleTimeout<'w, S> {
    /// Bounds each gap between items of `stream` by `idle` on `wheel`.
    pub fn new(stream: S, wheel: &'w dyn RawWheel, idle: Duration) -> Self {
        Self {
            stream: Some(stream),
            timer: Timer::new(wheel, Limit::After(idle)),
            idle,
        }
    }

    /// Names the timeout (shown in `Elapsed`).
    pub fn named(mut self, name: &'static str) -> Self {
        self.timer.set_name(name);
        self
    }
}

impl<S: Stream> Stream for IdleTimeout<'_, S> {
    type Item = Result<S::Item, Elapsed>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        let Some(stream) = this.stream.as_mut().as_pin_mut() else {
            return Poll::Ready(None);
        };
        if let Some(elapsed) = this.timer.has_fired() {
            this.stream.set(None);
            return Poll::Ready(Some(Err(elapsed)));
        }
        match stream.poll_next(cx) {
            Poll::Ready(Some(item)) => {
                // The next gap starts when the stream next goes idle; the entry goes back
                // to the free list and the next arm takes one from there.
                this.timer.reset(Limit::After(*this.idle));
                Poll::Ready(Some(Ok(item)))
            }
            Poll::Ready(None) => {
                this.stream.set(None);
                this.timer.release();
                Poll::Ready(None)
            }
            Poll::Pending => match this.timer.poll_fired(cx, None) {
                Poll::Ready(elapsed) => {
                    this.stream.set(None);
                    Poll::Ready(Some(Err(elapsed)))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl<S> fmt::Debug for IdleTimeout<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdleTimeout")
            .field("running", &self.stream.is_some())
            .field("idle", &self.idle)
            .field("timer", &self.timer)
            .finish()
    }
}
