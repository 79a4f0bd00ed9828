//! Where a request's limit comes from: the layer's alone, or also the request's headers.

use core::time::Duration;

use crate::{grpc_timeout, timeout_ms};

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

/// Every timeout header a request may carry: `grpc-timeout`, Envoy's
/// `x-envoy-expected-rq-timeout-ms` and Connect's `connect-timeout-ms`. The shortest
/// wins, and a layer takes it only when earlier than its own limit. A malformed value is
/// ignored, with a `tracing` event ([`grpc_timeout::from_headers`],
/// [`timeout_ms::from_headers`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeoutHeaders;

impl<B> RequestTimeout<http::Request<B>> for TimeoutHeaders {
    fn requested(&self, req: &http::Request<B>) -> Option<Duration> {
        let headers = req.headers();
        [
            grpc_timeout::from_headers(headers),
            timeout_ms::from_headers(headers, &timeout_ms::ENVOY_EXPECTED_RQ_TIMEOUT_MS),
            timeout_ms::from_headers(headers, &timeout_ms::CONNECT_TIMEOUT_MS),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}

/// The header a [`PropagateDeadlineLayer`](crate::PropagateDeadlineLayer) writes the
/// remaining budget into: the one the downstream reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TimeoutHeader {
    /// `grpc-timeout` (the default), to the nanosecond at best.
    #[default]
    Grpc,
    /// Envoy's `x-envoy-expected-rq-timeout-ms`, in whole milliseconds.
    Envoy,
    /// Connect's `connect-timeout-ms`, in whole milliseconds.
    Connect,
}

impl TimeoutHeader {
    /// `left`, rounded down as the header carries it.
    pub(crate) fn round_down(self, left: Duration) -> Duration {
        match self {
            Self::Grpc => grpc_timeout::round_down(left),
            Self::Envoy | Self::Connect => timeout_ms::round_down(left),
        }
    }

    /// Writes `left` into `headers`, unless they already ask for less.
    pub(crate) fn write_at_most(self, headers: &mut http::HeaderMap, left: Duration) {
        match self {
            Self::Grpc => grpc_timeout::write_at_most(headers, left),
            Self::Envoy => {
                timeout_ms::write_at_most(headers, &timeout_ms::ENVOY_EXPECTED_RQ_TIMEOUT_MS, left)
            }
            Self::Connect => {
                timeout_ms::write_at_most(headers, &timeout_ms::CONNECT_TIMEOUT_MS, left)
            }
        }
    }
}
