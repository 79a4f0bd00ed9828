//! Deadlines for streams: one for the whole stream, or one for each gap between items.
//! * A fire already decided wins over polling the stream, dropped before the one `Err`.
//! * No budget caps a stream deadline.
//! * A degraded one checks its target at every poll (`has_passed`): a stream that always
//!   has an item ready is never pending.

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
        self.poll_bounded(cx, None)
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
    /// A stream whose items must each come within a duration of its going idle (its first
    /// `Pending` after an item or the start), with the rules of a
    /// [`Deadline`](crate::Deadline). Each gap takes a wheel entry, free again at the
    /// driver's turn after the next item.
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
        gaps: StreamDeadline<'w, S, W>,
        idle: Duration,
    }
}

impl<'w, S: Stream, W: WheelRef> IdleTimeout<'w, S, W> {
    /// Bounds each gap between items of `stream` by `idle` on `wheel`.
    pub fn new(stream: S, wheel: W, idle: Duration) -> Self {
        let gaps = StreamDeadline::new(stream, wheel, idle);
        Self { gaps, idle }
    }

    /// Names the timeout (shown in `Elapsed`).
    pub fn named(mut self, name: &'static str) -> Self {
        self.gaps.name = Some(name);
        self
    }
}

impl<S: Stream, W: WheelRef> Stream for IdleTimeout<'_, S, W> {
    type Item = Result<S::Item, Elapsed>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        this.gaps.poll_bounded(cx, Some(*this.idle))
    }
}

impl<S, W: WheelRef> fmt::Debug for IdleTimeout<'_, S, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdleTimeout")
            .field("gaps", &self.gaps)
            .field("idle", &self.idle)
            .finish()
    }
}

impl<S: Stream, W: WheelRef> StreamDeadline<'_, S, W> {
    /// Polls the stream under the timer: one `Err(Elapsed)` on fire. The clock starts at the
    /// first poll; with `idle`, at each `Pending`, and restarts after each item.
    fn poll_bounded(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        idle: Option<Duration>,
    ) -> Poll<Option<Result<S::Item, Elapsed>>> {
        let this = self.project();
        let (mut stream, timer, name) = (this.stream, this.timer, *this.name);
        let Some(inner) = stream.as_mut().as_pin_mut() else {
            return Poll::Ready(None);
        };
        let fired = match timer.is_started() || idle.is_some() {
            true => timer.has_passed(),
            false => match timer.poll_fired(cx, None) {
                Poll::Ready(fired) => Some(fired),
                Poll::Pending => None,
            },
        };
        let polled = match fired {
            Some(fired) => Poll::Ready(Err(fired)),
            None => match inner.poll_next(cx) {
                Poll::Ready(Some(item)) => {
                    if let Some(idle) = idle {
                        timer.restart(Limit::After(idle));
                    }
                    return Poll::Ready(Some(Ok(item)));
                }
                Poll::Ready(None) => Poll::Ready(Ok(())),
                Poll::Pending => timer.poll_fired(cx, None).map(Err),
            },
        };
        polled.map(|ended| {
            stream.set(None);
            timer.release();
            ended.err().map(|fired| Err(fired.elapsed(name, None)))
        })
    }
}
