//! Where a request's limit comes from: the layer's alone, or also the request's `grpc-timeout`.

use core::time::Duration;

use crate::grpc_timeout;

/// What a request asks for as its deadline. A layer takes it only when earlier than its
/// own limit. [`OwnLimit`] asks nothing; [`GrpcTimeout`] reads an `http::Request`'s
/// `grpc-timeout` header.
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

/// The request's `grpc-timeout` header, when earlier than the layer's limit. A malformed
/// value is ignored ([`grpc_timeout::from_headers`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct GrpcTimeout;

impl<B> RequestTimeout<http::Request<B>> for GrpcTimeout {
    fn requested(&self, req: &http::Request<B>) -> Option<Duration> {
        grpc_timeout::from_headers(req.headers())
    }
}
