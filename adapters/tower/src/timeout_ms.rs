//! Millisecond timeout headers: Envoy's `x-envoy-expected-rq-timeout-ms` and Connect's
//! `connect-timeout-ms`, their parser and their encoder.
//!
//! The wire format of both is one to ten ASCII digits: whole milliseconds. No sign, no
//! space, no unit.
//!
//! * The parser rejects anything else and never panics: the header is network input.
//!   Ten digits of milliseconds fit a `Duration`.
//! * The encoder rounds *down* to a whole millisecond, so the callee never gets more time
//!   than the caller has left.

use core::fmt;
use core::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

/// Envoy's header: the time the proxy will wait for the response.
pub const ENVOY_EXPECTED_RQ_TIMEOUT_MS: HeaderName =
    HeaderName::from_static("x-envoy-expected-rq-timeout-ms");

/// Connect's header: the client's timeout for the call.
pub const CONNECT_TIMEOUT_MS: HeaderName = HeaderName::from_static("connect-timeout-ms");

/// The largest value the format allows: ten digits.
const MAX_VALUE: u64 = 9_999_999_999;

/// Why a millisecond timeout value was rejected (see [`parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidTimeoutMs {
    reason: &'static str,
}

impl fmt::Display for InvalidTimeoutMs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid millisecond timeout: {}", self.reason)
    }
}

impl core::error::Error for InvalidTimeoutMs {}

/// Parses a millisecond timeout value: one to ten ASCII digits.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::timeout_ms::parse;
///
/// assert_eq!(parse(b"250"), Ok(Duration::from_millis(250)));
/// assert_eq!(parse(b"9999999999"), Ok(Duration::from_millis(9_999_999_999)));
/// assert!(parse(b"12345678901").is_err()); // eleven digits
/// assert!(parse(b"-1").is_err());
/// assert!(parse(b"1.5").is_err());
/// assert!(parse(b"").is_err());
/// ```
///
/// # Errors
///
/// [`InvalidTimeoutMs`] for anything outside that format: empty, more than ten digits,
/// or a byte that is not a digit.
pub fn parse(value: &[u8]) -> Result<Duration, InvalidTimeoutMs> {
    if value.is_empty() {
        return Err(InvalidTimeoutMs { reason: "empty" });
    }
    if value.len() > 10 {
        return Err(InvalidTimeoutMs {
            reason: "more than ten digits",
        });
    }
    let mut millis: u64 = 0;
    for &byte in value {
        if !byte.is_ascii_digit() {
            return Err(InvalidTimeoutMs {
                reason: "not a digit",
            });
        }
        // Ten digits fit a `u64`.
        millis = millis * 10 + u64::from(byte - b'0');
    }
    Ok(Duration::from_millis(millis))
}

/// Writes `left` in whole milliseconds, rounded down (at most ten digits).
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::timeout_ms::encode;
///
/// assert_eq!(encode(Duration::from_micros(1_999)), "1");
/// assert_eq!(encode(Duration::MAX), "9999999999");
/// ```
pub fn encode(left: Duration) -> HeaderValue {
    HeaderValue::from(whole_millis(left))
}

/// `left`, rounded down as [`encode`] writes it.
pub(crate) fn round_down(left: Duration) -> Duration {
    Duration::from_millis(whole_millis(left))
}

/// `left` in whole milliseconds, rounded down, at most ten digits.
fn whole_millis(left: Duration) -> u64 {
    u64::try_from(left.as_millis()).map_or(MAX_VALUE, |ms| ms.min(MAX_VALUE))
}

/// The timeout `name` in `headers` asks for. A malformed value gives `None` and a
/// debug-level `tracing` event with its length and what is wrong, never its bytes.
pub fn from_headers(headers: &HeaderMap, name: &HeaderName) -> Option<Duration> {
    let value = headers.get(name)?;
    match parse(value.as_bytes()) {
        Ok(timeout) => Some(timeout),
        Err(error) => {
            tracing::debug!(
                target: "punctual_tower",
                header = name.as_str(),
                len = value.len(),
                %error,
                "ignoring a malformed timeout header"
            );
            None
        }
    }
}

/// Writes `left` into `headers` as `name`, unless they already ask for less.
pub(crate) fn write_at_most(headers: &mut HeaderMap, name: &HeaderName, left: Duration) {
    if let Some(asked) = headers.get(name).and_then(|v| parse(v.as_bytes()).ok()) {
        if asked <= left {
            return;
        }
    }
    headers.insert(name, encode(left));
}
