#!/usr/bin/env bash
# The optional features: the core's tests with `tracing` on (the tracing event test runs
# only then), the core's tests as a microcontroller build has it (`alloc` without `std`:
# one shard, no thread spares, no thread-local budgets), and the facade with its adapter
# features.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test -p punctual-core --features tracing
cargo clippy -p punctual-core --features tracing --all-targets -- -D warnings
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
cargo test -p punctual --features tokio,tower,tracing --doc
cargo clippy -p punctual --features tokio,embassy,tower,tracing --lib -- -D warnings
# The facade alone, as most users build it, and with virtual time only.
cargo clippy -p punctual --lib -- -D warnings
cargo clippy -p punctual --features test-util --lib -- -D warnings

# punctual-tower's tests and examples (tonic's `into_status` among them; the end-to-end
# tests and the examples run in `cargo test --workspace` and .ci/run), and the core's
# `Elapsed` into `tonic::Status`.
# `punctual::report` alone (std), with `metrics`, with `config`, and both: each builds and
# lints on its own, and the doc tests of each run (the report's tests, with both on, run in
# `cargo test --workspace`).
for features in "std" "metrics" "config" "metrics,config,tracing"; do
    cargo clippy -p punctual --features "$features" --lib -- -D warnings
done
cargo test -p punctual --features config --doc report
cargo clippy -p punctual-tower --features tonic --all-targets -- -D warnings
cargo test -p punctual-core --features tonic --doc
