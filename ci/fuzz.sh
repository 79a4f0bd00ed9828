#!/usr/bin/env bash
# Fuzzing, three targets in turn. cargo-fuzz (libFuzzer) on nightly, built with debug
# assertions, overflow checks and AddressSanitizer; libFuzzer itself needs a C++ compiler.
#
# * `wheel` (fuzz/fuzz_targets/wheel.rs) decodes its input into arm / drop / complete /
#   re-register / advance operations on a fixed and a growable wheel with a manual clock,
#   and checks every step against a reference model.
# * `grpc_timeout` (fuzz/fuzz_targets/grpc_timeout.rs) feeds any bytes to punctual-tower's
#   `grpc-timeout` parser, which reads network input: it must not panic, must agree with a
#   model of the wire format, and what the encoder writes must parse back to no more.
# * `timeout_ms` (fuzz/fuzz_targets/timeout_ms.rs) does the same for the parser of Envoy's
#   `x-envoy-expected-rq-timeout-ms` and Connect's `connect-timeout-ms`.
#
# Each runs for a fixed short time from its committed seed corpus (fuzz/corpus/<target>).
# New inputs go to a scratch corpus (fuzz/corpus-work, ignored by git), a crash to
# fuzz/artifacts/<target>/ (replay it with `cargo +nightly fuzz run <target> <file>`). A
# longer run is one command (the seconds are per target):
#
#     PUNCTUAL_FUZZ_SECONDS=3600 bash ci/fuzz.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${PUNCTUAL_FUZZ_SECONDS:-60}
# The parser's inputs are short: its own, shorter time and length.
parser_seconds=${PUNCTUAL_FUZZ_PARSER_SECONDS:-$(((seconds + 1) / 2))}

rustup toolchain install nightly --profile minimal
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
if ! command -v c++ >/dev/null 2>&1; then
    apt-get update
    apt-get install -y g++
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
fuzz() {
    local target=$1 secs=$2 max_len=$3
    mkdir -p "fuzz/corpus-work/$target"
    echo "fuzz: target $target for ${secs} s"
    if cargo +nightly fuzz run "$target" "fuzz/corpus-work/$target" "fuzz/corpus/$target" -- \
        -max_total_time="$secs" -max_len="$max_len" -print_final_stats=1 >"$log" 2>&1; then
        grep -E "^(INFO: seed corpus|#[0-9]+ +DONE|Done [0-9]+ runs|stat::number_of_executed_units)" "$log" || true
        echo "fuzz: $target: no failure"
    else
        tail -n 120 "$log"
        echo "fuzz: $target: FAILED (inputs in fuzz/artifacts/$target/)"
        status=1
    fi
}
fuzz wheel "$seconds" 512
fuzz grpc_timeout "$parser_seconds" 64
fuzz timeout_ms "$parser_seconds" 32
exit "$status"
