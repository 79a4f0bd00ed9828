//! The `grpc-timeout` header: one to eight ASCII digits, then a unit: `H`, `M`, `S`, `m`,
//! `u` or `n`. The parser rejects anything else and never panics (the header is network
//! input); the encoder rounds down, so the callee never gets more time than was left.

use core::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

pub use crate::source::InvalidTimeout;
use crate::source::digits;

/// The header's name.
pub const GRPC_TIMEOUT: HeaderName = HeaderName::from_static("grpc-timeout");

/// Parses a `grpc-timeout` value.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::grpc_timeout::parse;
///
/// assert_eq!(parse(b"250m"), Ok(Duration::from_millis(250)));
/// assert_eq!(parse(b"99999999H"), Ok(Duration::from_secs(99_999_999 * 3600)));
/// assert!(parse(b"123456789n").is_err()); // nine digits
/// assert!(parse(b"-1S").is_err() && parse(b"1 S").is_err() && parse(b"5").is_err());
/// ```
///
/// # Errors
///
/// [`InvalidTimeout`] for anything outside the format.
pub fn parse(value: &[u8]) -> Result<Duration, InvalidTimeout> {
    let invalid = |reason| InvalidTimeout::new("grpc-timeout", reason);
    let (&unit, value) = value.split_last().ok_or_else(|| invalid("empty"))?;
    let n = digits(value, 8).map_err(invalid)?;
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

/// Encodes `left` in the finest unit whose value fits eight digits, rounded down; past
/// 99999999 hours, that value.
///
/// ```
/// use std::time::Duration;
/// use punctual_tower::grpc_timeout::encode;
///
/// assert_eq!(encode(Duration::from_millis(250)), "250000u");
/// // 123456789 µs is nine digits: milliseconds, rounded down.
/// assert_eq!(encode(Duration::from_nanos(123_456_789_999)), "123456m");
/// ```
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
