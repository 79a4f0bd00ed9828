//! Millisecond timeout headers, Envoy's `x-envoy-expected-rq-timeout-ms` and Connect's
//! `connect-timeout-ms`: one to ten ASCII digits. The parser rejects anything else and
//! never panics (the header is network input); the encoder rounds down to a whole
//! millisecond, so the callee never gets more time than was left.

use core::time::Duration;

use http::{HeaderName, HeaderValue};

pub use crate::source::InvalidTimeout;
use crate::source::digits;

/// Envoy's header: the time the proxy will wait for the response.
pub const ENVOY_EXPECTED_RQ_TIMEOUT_MS: HeaderName =
    HeaderName::from_static("x-envoy-expected-rq-timeout-ms");

/// Connect's header: the client's timeout for the call.
pub const CONNECT_TIMEOUT_MS: HeaderName = HeaderName::from_static("connect-timeout-ms");

/// Parses a millisecond timeout value.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::timeout_ms::parse;
///
/// assert_eq!(parse(b"250"), Ok(Duration::from_millis(250)));
/// assert!(parse(b"12345678901").is_err()); // eleven digits
/// assert!(parse(b"-1").is_err() && parse(b"1.5").is_err() && parse(b"").is_err());
/// ```
///
/// # Errors
///
/// [`InvalidTimeout`] for anything outside the format.
pub fn parse(value: &[u8]) -> Result<Duration, InvalidTimeout> {
    digits(value, 10)
        .map(Duration::from_millis)
        .map_err(|reason| InvalidTimeout::new("millisecond timeout", reason))
}

/// Encodes `left` in whole milliseconds, rounded down, at most ten digits.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::timeout_ms::encode;
///
/// assert_eq!(encode(Duration::from_micros(1_999)), "1");
/// assert_eq!(encode(Duration::MAX), "9999999999");
/// ```
pub fn encode(left: Duration) -> HeaderValue {
    HeaderValue::from(left.as_millis().min(9_999_999_999) as u64)
}
