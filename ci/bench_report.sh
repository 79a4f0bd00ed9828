#!/usr/bin/env bash
# The short benchmark suite, written up: measures punctual beside tokio (its default and
# futures-timer, futures-time and embassy-time, then writes docs/benchmarks.md,
# docs/benchmarks.svg and the comparison table in the README's "Why punctual". A few
# minutes, most of it building in release mode. Not part of .ci/run: its numbers depend on
# the machine's load.
#
# The benchmarks are the package `punctual-benches` (benches/), so that the facade's own
# builds never compile criterion or the peers. The full criterion suites:
# `cargo bench -p punctual-benches --bench timers` (ready, arm + cancel, contention) and
# `--bench fire`; `--bench lateness` and `--bench memory` print their tables.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Absolute: cargo runs each bench in its package's folder (benches/).
out="$PWD/target/bench-report"
mkdir -p "$out"
# Memory first, in a process of its own: it counts allocations with its own global
# allocator, which no timing bench should pay for.
cargo bench -p punctual-benches --bench memory -- --tsv "$out/memory.tsv"
cargo bench -p punctual-benches --bench report -- --memory "$out/memory.tsv"
