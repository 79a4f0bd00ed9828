#!/usr/bin/env bash
# The optional features: the core's tests with `tracing` and `count-ready` on (the
# tracing event test and the ready-path counter run only then), and the facade with its
# adapter features.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test -p punctual-core --features tracing,count-ready
cargo clippy -p punctual-core --features tracing,count-ready --all-targets -- -D warnings
# The facade with its adapters on: the README's tokio and smol examples run as doctests.
cargo test -p punctual --features tokio,smol,tracing,count-ready --doc
cargo clippy -p punctual --features tokio,smol,embassy,tracing,count-ready --lib -- -D warnings
