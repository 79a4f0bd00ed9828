#!/usr/bin/env bash
# The optional features: the core's tests with `tracing` and `count-ready` on (the
# tracing event test and the ready-path counter run only then).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test -p punctual-core --features tracing,count-ready
cargo clippy -p punctual-core --features tracing,count-ready --all-targets -- -D warnings
