//! [`DeadlineBody`]: a response body bounded by its request's deadline.

use core::fmt;
use core::future::{Pending, pending};
use core::pin::Pin;
use core::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use punctual_core::{Budget, Budgeted, WheelRef};

use crate::BoxError;

pin_project! {
    /// The body of a response from [`HttpDeadlineService`](crate::HttpDeadlineService):
    /// a timed-out response's empty body, or the inner one, which ends with an
    /// [`Elapsed`](punctual_core::Elapsed) error (gRPC: `grpc-status: 4` trailers) if the
    /// deadline passes first, checked before each frame; the inner body is then dropped.
    ///
    /// # Errors
    ///
    /// The inner body's errors, boxed, and the `Elapsed` of the request's deadline.
    pub struct DeadlineBody<B, W: WheelRef> {
        #[pin]
        state: State<B, W>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<B, W: WheelRef> {
        // A timed-out response's empty body, or a bounded body after its deadline.
        Done,
        Streaming {
            #[pin]
            body: B,
            // A budget over a never-ready future, polled for its timer alone.
            #[pin]
            limit: Option<Budgeted<'static, Pending<()>, W>>,
            // A gRPC response: it ends with DEADLINE_EXCEEDED trailers, not an error.
            grpc: bool,
        },
    }
}

impl<B, W: WheelRef> DeadlineBody<B, W> {
    /// `body`, bounded by `limit`'s budget on its wheel, a handle that has chosen.
    /// A budget on another wheel leaves the body unbounded: its instant is another clock's.
    pub(crate) fn bounded(body: B, limit: Option<(W, Budget)>, grpc: bool) -> Self {
        let limit = limit.and_then(|(wheel, budget)| {
            budget.remaining(&wheel)?;
            Some(Budgeted::with_budget(pending(), wheel, budget))
        });
        Self {
            state: State::Streaming { body, limit, grpc },
        }
    }

    /// The empty body of a timed-out response.
    pub(crate) fn expired() -> Self {
        Self { state: State::Done }
    }
}

impl<B, W> Body for DeadlineBody<B, W>
where
    B: Body,
    B::Error: Into<BoxError>,
    W: WheelRef,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let mut state = self.project().state;
        let StateProj::Streaming { body, limit, grpc } = state.as_mut().project() else {
            return Poll::Ready(None);
        };
        if let Some(limit) = limit.as_pin_mut() {
            if let Poll::Ready(Err(elapsed)) = limit.poll(cx) {
                let grpc = *grpc;
                state.set(State::Done);
                if grpc {
                    let mut trailers = http::HeaderMap::new();
                    crate::grpc_timeout::deadline_exceeded(&mut trailers);
                    return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
                }
                return Poll::Ready(Some(Err(Box::new(elapsed))));
            }
        }
        body.poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        match &self.state {
            State::Done => true,
            State::Streaming { body, .. } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.state {
            State::Done => SizeHint::with_exact(0),
            State::Streaming { body, .. } => body.size_hint(),
        }
    }
}

impl<B, W: WheelRef> fmt::Debug for DeadlineBody<B, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Done => "done",
            State::Streaming { limit: None, .. } => "streaming, unbounded",
            State::Streaming { limit: Some(_), .. } => "streaming, bounded",
        };
        f.debug_struct("DeadlineBody")
            .field("state", &state)
            .finish()
    }
}
