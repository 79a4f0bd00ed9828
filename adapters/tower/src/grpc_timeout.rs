//! The `grpc-timeout` header: its parser, its encoder, and gRPC's status for a call out of time.
//!
//! The wire format is an ASCII integer of one to eight digits, then one unit: `H` (hours),
//! `M` (minutes), `S` (seconds), `m` (milliseconds), `u` (microseconds) or `n`
//! (nanoseconds). No sign, no space, no second unit.
//!
//! * The parser rejects anything else and never panics: the header is network input.
//!   Eight digits of hours fit a `Duration`, so its arithmetic cannot overflow.
//! * The encoder rounds *down*, so the callee never gets more time than the caller has left.

use core::fmt;
use core::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

/// The header's name.
pub const GRPC_TIMEOUT: HeaderName = HeaderName::from_static("grpc-timeout");

/// The largest value the format allows: eight digits.
const MAX_VALUE: u64 = 99_999_999;

/// Why a `grpc-timeout` value was rejected (see [`parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidGrpcTimeout {
    reason: &'static str,
}

impl fmt::Display for InvalidGrpcTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid grpc-timeout: {}", self.reason)
    }
}

impl core::error::Error for InvalidGrpcTimeout {}

const fn invalid(reason: &'static str) -> InvalidGrpcTimeout {
    InvalidGrpcTimeout { reason }
}

/// Parses a `grpc-timeout` value: one to eight ASCII digits and a unit (`H`, `M`, `S`,
/// `m`, `u`, `n`).
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::grpc_timeout::parse;
///
/// assert_eq!(parse(b"250m"), Ok(Duration::from_millis(250)));
/// assert_eq!(parse(b"99999999H"), Ok(Duration::from_secs(99_999_999 * 3600)));
/// assert!(parse(b"123456789n").is_err()); // nine digits
/// assert!(parse(b"-1S").is_err());
/// assert!(parse(b"1 S").is_err());
/// assert!(parse(b"5").is_err()); // no unit
/// ```
///
/// # Errors
///
/// [`InvalidGrpcTimeout`] for anything outside that format: empty, no digits, more than
/// eight digits, a byte that is not a digit, or an unknown unit.
pub fn parse(value: &[u8]) -> Result<Duration, InvalidGrpcTimeout> {
    let Some((&unit, digits)) = value.split_last() else {
        return Err(invalid("empty"));
    };
    if digits.is_empty() {
        return Err(invalid("no digits"));
    }
    if digits.len() > 8 {
        return Err(invalid("more than eight digits"));
    }
    let mut n: u64 = 0;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return Err(invalid("not a digit"));
        }
        // At most eight digits: n stays below 10^8.
        n = n * 10 + u64::from(digit - b'0');
    }
    Ok(match unit {
        // n < 10^8, so n * 3600 < 3.6 * 10^11: no overflow.
        b'H' => Duration::from_secs(n * 3600),
        b'M' => Duration::from_secs(n * 60),
        b'S' => Duration::from_secs(n),
        b'm' => Duration::from_millis(n),
        b'u' => Duration::from_micros(n),
        b'n' => Duration::from_nanos(n),
        _ => return Err(invalid("unknown unit")),
    })
}

/// Encodes `left` as a `grpc-timeout` value, rounded down: in the finest unit whose value
/// fits eight digits, so that no more than `left` is ever promised. Past the largest value
/// the format holds (99999999 hours), that largest value.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::grpc_timeout::{encode, parse};
///
/// assert_eq!(encode(Duration::from_millis(250)), "250000u");
/// // 123.456789 s is 123456789 µs, nine digits: milliseconds, rounded down.
/// let value = encode(Duration::from_nanos(123_456_789_999));
/// assert_eq!(value, "123456m");
/// assert!(parse(value.as_bytes()).unwrap() <= Duration::from_nanos(123_456_789_999));
/// ```
pub fn encode(left: Duration) -> HeaderValue {
    let (value, _, unit) = rounded(left);
    let text = format!("{value}{unit}");
    HeaderValue::try_from(text).expect("digits and an ASCII letter are a valid header value")
}

/// `left`, rounded down as [`encode`] writes it.
pub(crate) fn round_down(left: Duration) -> Duration {
    let (value, per, _) = rounded(left);
    // At most eight digits of hours: within a `Duration`.
    let nanos = value * per;
    Duration::new(
        u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX),
        (nanos % 1_000_000_000) as u32,
    )
}

/// The value, the nanoseconds per unit and the unit [`encode`] writes for `left`: the
/// finest unit whose value has at most eight digits, rounded down.
fn rounded(left: Duration) -> (u128, u128, char) {
    const UNITS: [(u128, char); 6] = [
        (1, 'n'),
        (1_000, 'u'),
        (1_000_000, 'm'),
        (1_000_000_000, 'S'),
        (60_000_000_000, 'M'),
        (3_600_000_000_000, 'H'),
    ];
    let nanos = left.as_nanos();
    UNITS
        .iter()
        .map(|&(per, unit)| (nanos / per, per, unit))
        .find(|&(value, ..)| value <= u128::from(MAX_VALUE))
        .unwrap_or((u128::from(MAX_VALUE), 3_600_000_000_000, 'H'))
}

/// The timeout a request's headers ask for: the first `grpc-timeout` value, parsed.
/// A malformed value gives `None` and a debug-level `tracing` event with its length and
/// what is wrong, never its bytes: they are the peer's input, kept out of logs.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::grpc_timeout::{GRPC_TIMEOUT, from_headers};
///
/// let mut headers = http::HeaderMap::new();
/// assert_eq!(from_headers(&headers), None);
/// headers.insert(GRPC_TIMEOUT, http::HeaderValue::from_static("3S"));
/// assert_eq!(from_headers(&headers), Some(Duration::from_secs(3)));
/// headers.insert(GRPC_TIMEOUT, http::HeaderValue::from_static("3 seconds"));
/// assert_eq!(from_headers(&headers), None);
/// ```
pub fn from_headers(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(GRPC_TIMEOUT)?;
    match parse(value.as_bytes()) {
        Ok(timeout) => Some(timeout),
        Err(error) => {
            tracing::debug!(
                target: "punctual_tower",
                len = value.len(),
                %error,
                "ignoring a malformed grpc-timeout header"
            );
            None
        }
    }
}

/// Writes `left` into `headers` as `grpc-timeout`, unless they already ask for less.
pub(crate) fn write_at_most(headers: &mut HeaderMap, left: Duration) {
    if let Some(asked) = headers
        .get(GRPC_TIMEOUT)
        .and_then(|v| parse(v.as_bytes()).ok())
    {
        if asked <= left {
            return;
        }
    }
    headers.insert(GRPC_TIMEOUT, encode(left));
}

/// gRPC's status for a call that ran out of time, in headers or trailers.
pub(crate) fn deadline_exceeded(headers: &mut HeaderMap) {
    headers.insert("grpc-status", HeaderValue::from_static("4"));
    headers.insert(
        "grpc-message",
        HeaderValue::from_static("deadline%20exceeded"),
    );
}
