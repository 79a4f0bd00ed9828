#!/usr/bin/env bash
# The optional features: the core's tests with `tracing` and `count-ready` on (the
# tracing event test and the ready-path counter run only then), the core's tests as a
# microcontroller build has it (`alloc` without `std`: one shard, no thread spares, no
# thread-local budgets), the facade with its adapter features, and punctual-tower without
# its default `retry` feature (the parser alone, as the fuzz target builds it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test -p punctual-core --features tracing,count-ready
cargo clippy -p punctual-core --features tracing,count-ready --all-targets -- -D warnings
# Without `std`: the code paths of firmware (one shard, entries one at a time, no spares,
# no sub-tick firing: every deadline at its tick's end, which the reference model checks),
# under the whole conformance suite on the host. `alloc` for the growable wheels most
# tests use, `stats` for the counters they read; the tests of what needs `std` or
# `sub-tick` are compiled out. (Without `stats` the counters are no-ops: ci/no_std.sh
# lints that build, and ci/firmware.sh runs it under QEMU.)
cargo test -p punctual-core --no-default-features --features alloc,stats
cargo clippy -p punctual-core --no-default-features --features alloc,stats --all-targets -- -D warnings
# Sub-tick firing without `std`, as a firmware turns it on.
cargo test -p punctual-core --no-default-features --features alloc,stats,sub-tick --test sub_tick --test model --test plans
# The facade with its adapters on: its doc tests with the `punctual::adapters::*` modules
# in (the README's and docs/ pages' examples are doc tests of the `punctual-tests` package,
# which `cargo test --workspace` runs).
cargo test -p punctual --features tokio,smol,tower,tracing,count-ready --doc
cargo clippy -p punctual --features tokio,smol,embassy,tower,tracing,count-ready --lib -- -D warnings
# `punctual::report` alone (std), with `metrics`, with `config`, and both: each builds and
# lints on its own, and the doc tests of each run (the report's tests, with both on, run in
# `cargo test --workspace`).
for features in "std" "metrics" "config" "metrics,config,tracing"; do
    cargo clippy -p punctual --features "$features" --lib -- -D warnings
done
cargo test -p punctual --features config --doc report
# `wasm` changes nothing off wasm32-unknown-unknown (ci/wasm.sh builds it there).
cargo clippy -p punctual --features wasm --lib -- -D warnings
cargo clippy -p punctual-tower --no-default-features --lib -- -D warnings
# tonic: `Elapsed` into `tonic::Status`, and `into_status` (the end-to-end tests and the
# example run in `cargo test --workspace` and .ci/run).
cargo clippy -p punctual-tower --features tonic --all-targets -- -D warnings
cargo test -p punctual-core --features tonic --doc
