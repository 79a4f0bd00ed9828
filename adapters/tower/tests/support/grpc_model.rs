//! A model of the `grpc-timeout` wire format, said another way than the parser says it
//! (as text, with the standard library's integer parser): shared by the property tests
//! and the fuzz target.

use std::time::Duration;

/// What `value` stands for, if it is in the format: one to eight ASCII digits and a unit
/// of `H`, `M`, `S`, `m`, `u` or `n`.
pub(crate) fn model(value: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?;
    let unit = text.chars().last()?;
    let digits = &text[..text.len() - unit.len_utf8()];
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let nanos_per = match unit {
        'H' => 3_600_000_000_000u128,
        'M' => 60_000_000_000,
        'S' => 1_000_000_000,
        'm' => 1_000_000,
        'u' => 1_000,
        'n' => 1,
        _ => return None,
    };
    let nanos = u128::from(n) * nanos_per;
    let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
    let subsec = u32::try_from(nanos % 1_000_000_000).ok()?;
    Some(Duration::new(secs, subsec))
}
