//! Where a request's own limit comes from: the layer's alone, or also what the request
//! asks for (`grpc-timeout`).

use core::time::Duration;

use crate::grpc_timeout;

/// What a request asks for as its deadline, which a layer takes when it is earlier than
/// its own limit (never when later). [`OwnLimit`] asks nothing; [`GrpcTimeout`] reads the
/// `grpc-timeout` header of an `http::Request`.
pub trait RequestTimeout<Req> {
    /// The time `req` asks for, if it asks.
    fn requested(&self, req: &Req) -> Option<Duration>;
}

/// The layer's own limit only, for any request type (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnLimit;

impl<Req> RequestTimeout<Req> for OwnLimit {
    #[inline]
    fn requested(&self, _: &Req) -> Option<Duration> {
        None
    }
}

/// The request's `grpc-timeout` header, when it is earlier than the layer's limit (see
/// [`grpc_timeout::from_headers`]: a malformed value is ignored).
#[derive(Debug, Clone, Copy, Default)]
pub struct GrpcTimeout;

impl<B> RequestTimeout<http::Request<B>> for GrpcTimeout {
    fn requested(&self, req: &http::Request<B>) -> Option<Duration> {
        grpc_timeout::from_headers(req.headers())
    }
}
