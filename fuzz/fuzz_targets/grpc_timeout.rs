//! Fuzz target `grpc_timeout`: the `grpc-timeout` parser on any bytes, which is network
//! input. It must never panic, must accept exactly the wire format (one to eight ASCII
//! digits and a unit of `H`, `M`, `S`, `m`, `u` or `n`) with the value that format says,
//! and the value the encoder writes for what it parsed must parse back to no more.
//! The model is the property tests' (`adapters/tower/tests/support/grpc_model.rs`).
//! `ci/fuzz.sh` runs it from the seed corpus in `fuzz/corpus/grpc_timeout`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use punctual_tower::grpc_timeout::{encode, parse};

#[path = "../../adapters/tower/tests/support/grpc_model.rs"]
mod grpc_model;
use grpc_model::model;

fuzz_target!(|data: &[u8]| {
    let parsed = parse(data);
    assert_eq!(parsed.ok(), model(data), "input {data:?}");
    if let Ok(timeout) = parsed {
        let value = encode(timeout);
        let back = parse(value.as_bytes()).expect("the encoder writes the wire format");
        assert!(back <= timeout, "{value:?} promises more than {timeout:?}");
    }
});
