#!/usr/bin/env bash
# The short benchmark suite, written up: measures punctual beside tokio (its default timer
# and its alternative one), async-io, futures-timer, futures-time and embassy-time, then
# writes docs/benchmarks.md (docs/ only). Most of its time is the
# first release build; the measuring itself takes a few minutes. Not part of .ci/run:
# its numbers depend on the machine's load.
#
# tokio's alternative timer needs `--cfg tokio_unstable`: this command alone builds so, in
# a target directory of its own (target/unstable), so that the workspace's ordinary
# builds keep theirs. Built without it, the benches leave that peer out.
#
# The benchmarks are the package `punctual-benches` (benches/), so that the facade's own
# builds never compile criterion or the peers. The full criterion suites:
# `cargo bench -p punctual-benches --bench timers` (ready, arm + cancel, named, contention,
# reset) and `--bench fire`; `--bench memory`, `--bench million` and `--bench http` print
# their rows.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Absolute: cargo runs each bench in its package's folder (benches/).
out="$PWD/target/bench-report"
mkdir -p "$out"
export RUSTFLAGS="${RUSTFLAGS:-} --cfg tokio_unstable"
export CARGO_TARGET_DIR="$PWD/target/unstable"
bench() { cargo bench -p punctual-benches --bench "$@"; }
cargo bench -p punctual-benches --no-run
# Firmware sizes first, with the firmware's own build settings (not this report's cfg):
# the report's verdict reads them from the page.
env -u RUSTFLAGS -u CARGO_TARGET_DIR bash ci/firmware_sizes.sh
start=$(date +%s)
# Memory, a million timers and the HTTP server first, each measurement in a process of its
# own: memory counts allocations with its own global allocator, which no timing bench
# should pay for; a million timers reads resident memory, which never shrinks; the HTTP
# server wants a fresh runtime per peer.
bench memory -- --tsv "$out/memory.tsv"
bench million -- --tsv "$out/million.tsv"
bench http -- --tsv "$out/http.tsv"
bench report -- --memory "$out/memory.tsv" --million "$out/million.tsv" --http "$out/http.tsv"
echo "bench_report: measured in $(( $(date +%s) - start )) s" >&2
