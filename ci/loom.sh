#!/usr/bin/env bash
# loom models of the wheel's lock-free hand-offs (core/tests/loom.rs). The namespaced cfg
# swaps the crate's atomics for loom's without flipping dependencies that key on cfg(loom).
# A separate target dir keeps the normal build's artifacts. Each model prints how many
# interleavings loom explored (and fails if it explored only one).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUSTFLAGS="--cfg punctual_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p punctual-core --test loom --release -- --nocapture
