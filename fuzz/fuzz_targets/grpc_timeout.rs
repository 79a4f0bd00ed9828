//! Fuzz target `grpc_timeout`: the `grpc-timeout` parser on any bytes, which is network
//! input. It must never panic, must accept exactly the wire format (one to eight ASCII
//! digits and a unit of `H`, `M`, `S`, `m`, `u` or `n`) with the value that format says,
//! and the value the encoder writes for what it parsed must parse back to no more.
//! `ci/fuzz.sh` runs it from the seed corpus in `fuzz/corpus/grpc_timeout`.
#![no_main]

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use punctual_tower::grpc_timeout::{encode, parse};

fuzz_target!(|data: &[u8]| {
    let parsed = parse(data);
    assert_eq!(parsed.ok(), model(data), "input {data:?}");
    if let Ok(timeout) = parsed {
        let value = encode(timeout);
        let back = parse(value.as_bytes()).expect("the encoder writes the wire format");
        assert!(back <= timeout, "{value:?} promises more than {timeout:?}");
    }
});

/// The format, checked another way: as text, with the standard library's integer parser.
fn model(data: &[u8]) -> Option<Duration> {
    let text = core::str::from_utf8(data).ok()?;
    let unit = text.chars().last()?;
    let digits = &text[..text.len() - unit.len_utf8()];
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let secs_per = match unit {
        'H' => 3600,
        'M' => 60,
        'S' => 1,
        'm' => return Some(Duration::from_millis(n)),
        'u' => return Some(Duration::from_micros(n)),
        'n' => return Some(Duration::from_nanos(n)),
        _ => return None,
    };
    Some(Duration::from_secs(n * secs_per))
}
