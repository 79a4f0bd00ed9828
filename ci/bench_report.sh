#!/usr/bin/env bash
# The short benchmark suite, written up: measures punctual beside tokio, async-io,
# futures-timer, futures-time and embassy-time, then writes docs/benchmarks.md,
# docs/benchmarks.svg and the README's `## Benchmarks` section. A few minutes, most of it
# building in release mode. Not part of .ci/run: its numbers depend on the machine's load.
#
# The full criterion suites: `cargo bench --bench timers` (ready, arm + cancel,
# contention) and `cargo bench --bench fire`; `cargo bench --bench lateness` and
# `cargo bench --bench memory` print their tables.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p target/bench-report
# Memory first, in a process of its own: it counts allocations with its own global
# allocator, which no timing bench should pay for.
cargo bench --bench memory -- --tsv target/bench-report/memory.tsv
cargo bench --bench report -- --memory target/bench-report/memory.tsv
