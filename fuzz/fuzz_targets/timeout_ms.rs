//! Fuzz target `timeout_ms`: the parser of Envoy's `x-envoy-expected-rq-timeout-ms` and
//! Connect's `connect-timeout-ms` on any bytes, which are network input. It must never
//! panic, must accept exactly the wire format (one to ten ASCII digits of milliseconds)
//! with the value that format says, and the value the encoder writes for what it parsed
//! must parse back to no more. The model is the property tests'
//! (`adapters/tower/tests/support/timeout_ms_model.rs`). `ci/fuzz.sh` runs it from the
//! seed corpus in `fuzz/corpus/timeout_ms`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use punctual_tower::timeout_ms::{encode, parse};

#[path = "../../adapters/tower/tests/support/timeout_ms_model.rs"]
mod timeout_ms_model;
use timeout_ms_model::model;

fuzz_target!(|data: &[u8]| {
    let parsed = parse(data);
    assert_eq!(parsed.ok(), model(data), "input {data:?}");
    if let Ok(timeout) = parsed {
        let value = encode(timeout);
        let back = parse(value.as_bytes()).expect("the encoder writes the wire format");
        assert!(back <= timeout, "{value:?} promises more than {timeout:?}");
    }
});
