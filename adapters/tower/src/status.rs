//! A tower error as a `tonic::Status`, for tonic clients behind punctual's layers.
//! * An [`Elapsed`] or a `tonic::TimeoutExpired` anywhere in the error's source chain
//!   becomes `DEADLINE_EXCEEDED`.
//! * Anything else goes through `tonic::Status::from_error`, as tonic would map it.

use std::error::Error;

use punctual_core::Elapsed;

use crate::BoxError;

/// Maps a middleware error into the `tonic::Status` a gRPC client expects: an [`Elapsed`]
/// (a [`PropagateDeadline`](crate::PropagateDeadline) call whose budget was spent, a
/// [`DeadlineService`](crate::DeadlineService) that fired) is `DEADLINE_EXCEEDED`; any other error is
/// what tonic itself makes of it (`Status::from_error`), except tonic's own
/// `TimeoutExpired`, also `DEADLINE_EXCEEDED`: a tonic `Channel` enforces the
/// `grpc-timeout` it sends with a timer of its own, and reports `CANCELLED` when that
/// timer wins the race with the server's answer.
///
/// tonic maps an error it does not know to `UNKNOWN`. Put this in a `map_err` outside the
/// deadline layers, and a tonic client sees the code gRPC asks for:
///
/// ```
/// use punctual_tower::{PropagateDeadlineLayer, into_status};
/// use tower::ServiceBuilder;
///
/// # fn wrap<S>(channel: S) -> impl Sized
/// # where S: tower::Service<http::Request<()>> , S::Error: Into<punctual_tower::BoxError> {
/// let channel = ServiceBuilder::new()
///     .map_err(into_status)
///     .layer(PropagateDeadlineLayer::<punctual::wheel::DefaultWheel>::new())
///     .service(channel);
/// # channel }
/// ```
pub fn into_status(error: BoxError) -> tonic::Status {
    let mut cause: Option<&(dyn Error + 'static)> = Some(&*error);
    while let Some(error) = cause {
        if let Some(elapsed) = error.downcast_ref::<Elapsed>() {
            return (*elapsed).into();
        }
        if error.is::<tonic::TimeoutExpired>() {
            return tonic::Status::deadline_exceeded("the call's grpc-timeout passed");
        }
        cause = error.source();
    }
    tonic::Status::from_error(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_errors_map_as_tonic_does() {
        let status = into_status("refused".into());
        assert_eq!(status.code(), tonic::Code::Unknown);
        assert_eq!(status.message(), "refused");
        let status = into_status(Box::new(tonic::Status::unavailable("down")));
        assert_eq!(status.code(), tonic::Code::Unavailable);
    }

    #[test]
    fn tonic_timeouts_are_deadline_exceeded() {
        let status = into_status(Box::new(tonic::TimeoutExpired(())));
        assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
    }
}
