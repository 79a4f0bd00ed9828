//! A model of the millisecond timeout headers' wire format, said another way than the
//! parser says it (as text, with the standard library's integer parser): shared by the
//! property tests and the fuzz target.

use std::time::Duration;

/// What `value` stands for, if it is in the format: one to ten ASCII digits of ms.
pub(crate) fn model(value: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?;
    if text.is_empty() || text.len() > 10 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Duration::from_millis(text.parse().ok()?))
}
