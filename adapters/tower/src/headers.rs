//! The timeout headers: parsers reject anything outside the wire format and never panic
//! (network input); encoders round down, so a callee never gets more time than was left.

use core::fmt;
use core::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

/// What a request asks for as its deadline (taken only when earlier than the layer's).
pub trait RequestTimeout<Req> {
    /// The time `req` asks for, if it asks.
    fn requested(&self, req: &Req) -> Option<Duration>;
}

/// The layer's own limit only, for any request type (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnLimit;

impl<Req> RequestTimeout<Req> for OwnLimit {
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
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeoutHeaders;

impl<B> RequestTimeout<http::Request<B>> for TimeoutHeaders {
    fn requested(&self, req: &http::Request<B>) -> Option<Duration> {
        use TimeoutHeader::{Connect, Envoy, Grpc};
        let read = |header: TimeoutHeader| header.read(req.headers());
        [Grpc, Envoy, Connect].into_iter().filter_map(read).min()
    }
}

/// A timeout header: one to read, or the one a
/// [`PropagateDeadlineLayer`](crate::PropagateDeadlineLayer) writes (the downstream's).
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

type Parse = fn(&[u8]) -> Result<Duration, InvalidTimeout>;

impl TimeoutHeader {
    /// The timeout this header asks for in `headers` (its first value). A malformed value
    /// gives `None` and a debug-level `tracing` event, without its bytes (peer input).
    pub fn read(self, headers: &HeaderMap) -> Option<Duration> {
        let (name, parse, _) = self.wire();
        let value = headers.get(&name)?;
        let error = |error| {
            tracing::debug!(
                target: "punctual_tower",
                header = name.as_str(),
                len = value.len(),
                %error,
                "ignoring a malformed timeout header"
            );
        };
        parse(value.as_bytes()).map_err(error).ok()
    }

    /// Writes `left`, rounded down, into `headers` unless they already ask for less.
    /// Writes nothing and returns `false` when that rounds down to zero.
    pub(crate) fn write_at_most(self, headers: &mut HeaderMap, left: Duration) -> bool {
        let (name, parse, encode) = self.wire();
        let value = encode(left);
        let sent = parse(value.as_bytes()).expect("the encoder writes the wire format");
        let asked = headers.get(&name).and_then(|v| parse(v.as_bytes()).ok());
        if !sent.is_zero() && asked.is_none_or(|asked| asked > sent) {
            headers.insert(name, value);
        }
        !sent.is_zero()
    }

    /// The header's name, parser and encoder.
    fn wire(self) -> (HeaderName, Parse, fn(Duration) -> HeaderValue) {
        use {grpc_timeout as grpc, timeout_ms as ms};
        match self {
            Self::Grpc => (grpc::GRPC_TIMEOUT, grpc::parse, grpc::encode),
            Self::Envoy => (ms::ENVOY_EXPECTED_RQ_TIMEOUT_MS, ms::parse, ms::encode),
            Self::Connect => (ms::CONNECT_TIMEOUT_MS, ms::parse, ms::encode),
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

impl fmt::Display for InvalidTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {}: {}", self.format, self.reason)
    }
}

impl core::error::Error for InvalidTimeout {}

/// One to `most` (at most ten, so within a `u64`) ASCII digits, as a number.
fn digits(value: &[u8], most: usize, format: &'static str) -> Result<u64, InvalidTimeout> {
    let invalid = |reason| InvalidTimeout { format, reason };
    match value.len() {
        0 => return Err(invalid("no digits")),
        len if len > most => return Err(invalid("too many digits")),
        _ => {}
    }
    value.iter().try_fold(0, |n: u64, &digit| match digit {
        b'0'..=b'9' => Ok(n * 10 + u64::from(digit - b'0')),
        _ => Err(invalid("not a digit")),
    })
}

pub mod grpc_timeout {
    //! The `grpc-timeout` header: one to eight ASCII digits, then a unit: `H`, `M`, `S`,
    //! `m`, `u` or `n`.

    use core::time::Duration;

    use http::{HeaderMap, HeaderName, HeaderValue};

    pub use super::InvalidTimeout;

    /// The header's name.
    pub const GRPC_TIMEOUT: HeaderName = HeaderName::from_static("grpc-timeout");

    /// Parses a `grpc-timeout` value.
    ///
    /// # Errors
    ///
    /// [`InvalidTimeout`] for anything outside the format.
    pub fn parse(value: &[u8]) -> Result<Duration, InvalidTimeout> {
        let format = "grpc-timeout";
        let invalid = |reason| InvalidTimeout { format, reason };
        let (&unit, value) = value.split_last().ok_or(invalid("empty"))?;
        let n = super::digits(value, 8, format)?;
        // n < 10^8, so n * 3600 < 3.6 * 10^11: no overflow.
        Ok(match unit {
            b'H' => Duration::from_secs(n * 3600),
            b'M' => Duration::from_secs(n * 60),
            b'S' => Duration::from_secs(n),
            b'm' => Duration::from_millis(n),
            b'u' => Duration::from_micros(n),
            b'n' => Duration::from_nanos(n),
            _ => return Err(invalid("unknown unit")),
        })
    }

    /// Encodes `left` in the finest unit that fits eight digits, rounded down (at most
    /// 99999999 hours).
    pub fn encode(left: Duration) -> HeaderValue {
        const UNITS: [(u128, char); 6] = [
            (1, 'n'),
            (1_000, 'u'),
            (1_000_000, 'm'),
            (1_000_000_000, 'S'),
            (60_000_000_000, 'M'),
            (3_600_000_000_000, 'H'),
        ];
        let nanos = left.as_nanos();
        let (value, unit) = UNITS
            .iter()
            .map(|&(per, unit)| (nanos / per, unit))
            .find(|&(value, _)| value < 100_000_000)
            .unwrap_or((99_999_999, 'H'));
        HeaderValue::try_from(format!("{value}{unit}")).expect("digits and a letter are valid")
    }

    /// gRPC's status for a call that ran out of time, in headers or trailers.
    pub(crate) fn deadline_exceeded(headers: &mut HeaderMap) {
        headers.insert("grpc-status", HeaderValue::from_static("4"));
        let message = HeaderValue::from_static("deadline%20exceeded");
        headers.insert("grpc-message", message);
    }
}

pub mod timeout_ms {
    //! Millisecond timeout headers, Envoy's `x-envoy-expected-rq-timeout-ms` and Connect's
    //! `connect-timeout-ms`: one to ten ASCII digits.

    use core::time::Duration;

    use http::{HeaderName, HeaderValue};

    pub use super::InvalidTimeout;

    /// Envoy's header: the time the proxy will wait for the response.
    pub const ENVOY_EXPECTED_RQ_TIMEOUT_MS: HeaderName =
        HeaderName::from_static("x-envoy-expected-rq-timeout-ms");

    /// Connect's header: the client's timeout for the call.
    pub const CONNECT_TIMEOUT_MS: HeaderName = HeaderName::from_static("connect-timeout-ms");

    /// Parses a millisecond timeout value.
    ///
    /// # Errors
    ///
    /// [`InvalidTimeout`] for anything outside the format.
    pub fn parse(value: &[u8]) -> Result<Duration, InvalidTimeout> {
        super::digits(value, 10, "millisecond timeout").map(Duration::from_millis)
    }

    /// Encodes `left` in whole milliseconds, rounded down, at most ten digits.
    pub fn encode(left: Duration) -> HeaderValue {
        HeaderValue::from(left.as_millis().min(9_999_999_999) as u64)
    }
}
