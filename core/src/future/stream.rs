//! Deadlines for streams: one for the whole stream, or one for each gap between items.
//! * Both poll through `poll_bounded`: a fire already decided wins over polling the
//!   stream, which is dropped before the one `Err(Elapsed)`.
//! * No budget caps a stream deadline.
//! * A degraded stream deadline checks its target at every poll (`has_passed`), not only
//!   at a pending one: a stream that always has an item ready is never pending.

use core::fmt;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use futures_core::Stream;
use pin_project_lite::pin_project;

use crate::Elapsed;
use crate::future::timer::{RawWheel, Timer, WheelRef};
use crate::time::Limit;

pin_project! {
    /// A stream that must end within a duration of its first poll, with the rules of a
    /// [`Deadline`](crate::Deadline). The clock starts at the first poll, even if items are
    /// ready: a duration of zero yields `Err(Elapsed)` before the stream is polled.
    ///
    /// # Errors
    ///
    /// Yields `Err(Elapsed)` once, then `None`, when the duration passes first.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner stream and releases the timer.
    #[must_use = "streams do nothing unless polled"]
    pub struct StreamDeadline<'w, S, W: WheelRef = &'w dyn RawWheel> {
        #[pin]
        stream: Option<S>,
        timer: Timer<W>,
        name: Option<&'static str>,
        wheel: PhantomData<&'w ()>,
    }
}

impl<'w, S: Stream, W: WheelRef> StreamDeadline<'w, S, W> {
    /// Bounds the whole of `stream` by `duration` on `wheel`, from its first poll.
    pub fn new(stream: S, wheel: W, duration: Duration) -> Self {
        Self {
            stream: Some(stream),
            timer: Timer::new(wheel, Limit::After(duration)),
            name: None,
            wheel: PhantomData,
        }
    }

    /// Names the deadline (shown in `Elapsed`).
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }
}

impl<S: Stream, W: WheelRef> Stream for StreamDeadline<'_, S, W> {
    type Item = Result<S::Item, Elapsed>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        let name = *this.name;
        poll_bounded(
            this.stream,
            this.timer,
            name,
            cx,
            Start::AtFirstPoll,
            |_| {},
        )
    }
}

impl<S, W: WheelRef> fmt::Debug for StreamDeadline<'_, S, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamDeadline")
            .field("running", &self.stream.is_some())
            .field("name", &self.name)
            .field("timer", &self.timer)
            .finish()
    }
}

pin_project! {
    /// A stream whose items must each come within a duration of its going idle (returning
    /// `Pending`, after an item or at the start), with the rules of a
    /// [`Deadline`](crate::Deadline).
    ///
    /// Each gap takes a wheel entry and gives it back after the next item; nothing is
    /// allocated. An entry the driver already took in is free again only at its next turn,
    /// so on a full [`Fixed`](crate::Fixed) wheel the next gap may run degraded until then.
    ///
    /// # Errors
    ///
    /// Yields `Err(Elapsed)` once, then `None`, when an item is late.
    ///
    /// # Cancel safety
    ///
    /// Dropping it drops the inner stream and releases the timer.
    #[must_use = "streams do nothing unless polled"]
    pub struct IdleTimeout<'w, S, W: WheelRef = &'w dyn RawWheel> {
        #[pin]
        stream: Option<S>,
        timer: Timer<W>,
        idle: Duration,
        name: Option<&'static str>,
        wheel: PhantomData<&'w ()>,
    }
}

impl<'w, S: Stream, W: WheelRef> IdleTimeout<'w, S, W> {
    /// Bounds each gap between items of `stream` by `idle` on `wheel`.
    pub fn new(stream: S, wheel: W, idle: Duration) -> Self {
        Self {
            stream: Some(stream),
            timer: Timer::new(wheel, Limit::After(idle)),
            idle,
            name: None,
            wheel: PhantomData,
        }
    }

    /// Names the timeout (shown in `Elapsed`).
    pub fn named(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }
}

impl<S: Stream, W: WheelRef> Stream for IdleTimeout<'_, S, W> {
    type Item = Result<S::Item, Elapsed>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        let idle = *this.idle;
        poll_bounded(
            this.stream,
            this.timer,
            *this.name,
            cx,
            Start::WhenPending,
            |timer| {
                timer.restart(Limit::After(idle));
            },
        )
    }
}

impl<S, W: WheelRef> fmt::Debug for IdleTimeout<'_, S, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdleTimeout")
            .field("running", &self.stream.is_some())
            .field("idle", &self.idle)
            .field("name", &self.name)
            .field("timer", &self.timer)
            .finish()
    }
}

/// When a stream deadline's clock starts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// At the first poll, even if items are ready (a whole-stream deadline).
    AtFirstPoll,
    /// When the stream first returns `Pending` (each gap of an idle timeout).
    WhenPending,
}

/// Polls `stream` under `timer`: one `Err(Elapsed)` on fire, `after_item` after each item.
fn poll_bounded<S: Stream, W: WheelRef>(
    mut stream: Pin<&mut Option<S>>,
    timer: &mut Timer<W>,
    name: Option<&'static str>,
    cx: &mut Context<'_>,
    start: Start,
    after_item: impl FnOnce(&mut Timer<W>),
) -> Poll<Option<Result<S::Item, Elapsed>>> {
    let Some(inner) = stream.as_mut().as_pin_mut() else {
        return Poll::Ready(None);
    };
    // A fire already decided wins: the stream is not polled after it.
    let fired = if start == Start::AtFirstPoll && !timer.is_started() {
        match timer.poll_fired(cx, None) {
            Poll::Ready(fired) => Some(fired),
            Poll::Pending => None,
        }
    } else {
        timer.has_passed()
    };
    if let Some(fired) = fired {
        stream.set(None);
        return Poll::Ready(Some(Err(fired.elapsed(name))));
    }
    match inner.poll_next(cx) {
        Poll::Ready(Some(item)) => {
            after_item(timer);
            Poll::Ready(Some(Ok(item)))
        }
        Poll::Ready(None) => {
            stream.set(None);
            timer.release();
            Poll::Ready(None)
        }
        Poll::Pending => match timer.poll_fired(cx, None) {
            Poll::Ready(fired) => {
                stream.set(None);
                Poll::Ready(Some(Err(fired.elapsed(name))))
            }
            Poll::Pending => Poll::Pending,
        },
    }
}
