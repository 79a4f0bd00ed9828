//! Where a request's limit comes from, and the timeout headers read and written.

use core::fmt;
use core::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::{grpc_timeout, timeout_ms};

/// What a request asks for as its deadline; a layer takes it only when earlier than its
/// own limit.
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

/// An `http::Request`'s `grpc-timeout` header; a malformed value is ignored
/// ([`TimeoutHeader::read`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct GrpcTimeout;

impl<B> RequestTimeout<http::Request<B>> for GrpcTimeout {
    fn requested(&self, req: &http::Request<B>) -> Option<Duration> {
        TimeoutHeader::Grpc.read(req.headers())
    }
}

/// The shortest of an `http::Request`'s timeout headers: `grpc-timeout`, Envoy's
/// `x-envoy-expected-rq-timeout-ms` and Connect's `connect-timeout-ms`. Malformed values
/// are ignored ([`TimeoutHeader::read`]).
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::{RequestTimeout, TimeoutHeaders};
///
/// let request = http::Request::builder()
///     .header("grpc-timeout", "2S")
///     .header("x-envoy-expected-rq-timeout-ms", "300")
///     .header("connect-timeout-ms", "soon")
///     .body(())
///     .unwrap();
/// assert_eq!(TimeoutHeaders.requested(&request), Some(Duration::from_millis(300)));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeoutHeaders;

impl<B> RequestTimeout<http::Request<B>> for TimeoutHeaders {
    fn requested(&self, req: &http::Request<B>) -> Option<Duration> {
        [
            TimeoutHeader::Grpc,
            TimeoutHeader::Envoy,
            TimeoutHeader::Connect,
        ]
        .into_iter()
        .filter_map(|header| header.read(req.headers()))
        .min()
    }
}

/// A timeout header: the one a [`PropagateDeadlineLayer`](crate::PropagateDeadlineLayer)
/// writes (the one the downstream reads), or one to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TimeoutHeader {
    /// `grpc-timeout` (the default), to the nanosecond at best ([`grpc_timeout`]).
    #[default]
    Grpc,
    /// Envoy's `x-envoy-expected-rq-timeout-ms`, in whole milliseconds ([`timeout_ms`]).
    Envoy,
    /// Connect's `connect-timeout-ms`, in whole milliseconds ([`timeout_ms`]).
    Connect,
}

impl TimeoutHeader {
    /// The timeout this header asks for in `headers` (its first value). A malformed value
    /// gives `None` and a debug-level `tracing` event with its length and what is wrong,
    /// never its bytes: they are the peer's input, kept out of logs.
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_tower::TimeoutHeader;
    ///
    /// let mut headers = http::HeaderMap::new();
    /// assert_eq!(TimeoutHeader::Grpc.read(&headers), None);
    /// headers.insert("grpc-timeout", http::HeaderValue::from_static("3S"));
    /// assert_eq!(TimeoutHeader::Grpc.read(&headers), Some(Duration::from_secs(3)));
    /// headers.insert("grpc-timeout", http::HeaderValue::from_static("3 seconds"));
    /// assert_eq!(TimeoutHeader::Grpc.read(&headers), None);
    /// ```
    pub fn read(self, headers: &HeaderMap) -> Option<Duration> {
        let value = headers.get(self.name())?;
        self.parse(value)
            .map_err(|error| {
                tracing::debug!(
                    target: "punctual_tower",
                    header = self.name().as_str(),
                    len = value.len(),
                    %error,
                    "ignoring a malformed timeout header"
                );
            })
            .ok()
    }

    /// `left`, rounded down as this header carries it, and its value.
    pub(crate) fn encode(self, left: Duration) -> (Duration, HeaderValue) {
        let value = match self {
            Self::Grpc => grpc_timeout::encode(left),
            Self::Envoy | Self::Connect => timeout_ms::encode(left),
        };
        let sent = self
            .parse(&value)
            .expect("the encoder writes the wire format");
        (sent, value)
    }

    /// Writes `value`, `sent` rounded down, into `headers`, unless they ask for less.
    pub(crate) fn write_at_most(self, headers: &mut HeaderMap, sent: Duration, value: HeaderValue) {
        if let Some(asked) = headers.get(self.name()) {
            if self.parse(asked).is_ok_and(|asked| asked <= sent) {
                return;
            }
        }
        headers.insert(self.name(), value);
    }

    fn name(self) -> HeaderName {
        match self {
            Self::Grpc => grpc_timeout::GRPC_TIMEOUT,
            Self::Envoy => timeout_ms::ENVOY_EXPECTED_RQ_TIMEOUT_MS,
            Self::Connect => timeout_ms::CONNECT_TIMEOUT_MS,
        }
    }

    fn parse(self, value: &HeaderValue) -> Result<Duration, InvalidTimeout> {
        match self {
            Self::Grpc => grpc_timeout::parse(value.as_bytes()),
            Self::Envoy | Self::Connect => timeout_ms::parse(value.as_bytes()),
        }
    }
}

/// Why a timeout header's value was rejected ([`grpc_timeout::parse`],
/// [`timeout_ms::parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidTimeout {
    format: &'static str,
    reason: &'static str,
}

impl InvalidTimeout {
    pub(crate) const fn new(format: &'static str, reason: &'static str) -> Self {
        Self { format, reason }
    }
}

impl fmt::Display for InvalidTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: {}", self.format, self.reason)
    }
}

impl core::error::Error for InvalidTimeout {}

/// One to `most` ASCII digits (at most ten, so within a `u64`), as a number.
pub(crate) fn digits(value: &[u8], most: usize) -> Result<u64, &'static str> {
    if value.is_empty() {
        return Err("no digits");
    }
    if value.len() > most {
        return Err("too many digits");
    }
    value.iter().try_fold(0, |n: u64, &digit| match digit {
        b'0'..=b'9' => Ok(n * 10 + u64::from(digit - b'0')),
        _ => Err("not a digit"),
    })
}
