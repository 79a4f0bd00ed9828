//! A tower error as a `tonic::Status`, for tonic clients behind punctual's layers.

use std::error::Error;

use punctual_core::Elapsed;

use crate::BoxError;

/// Maps a middleware error into the `tonic::Status` a gRPC client expects, for a
/// `map_err` outside the deadline layers: an [`Elapsed`] or tonic's own `TimeoutExpired`
/// (a `Channel`'s timer for the `grpc-timeout` it sends) anywhere in the source chain is
/// `DEADLINE_EXCEEDED`; any other error is what `tonic::Status::from_error` makes of it.
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
