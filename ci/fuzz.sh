#!/usr/bin/env bash
# Fuzzing: the `wheel` target (fuzz/fuzz_targets/wheel.rs) decodes its input into arm /
# drop / complete / re-register / advance operations on a fixed and a growable wheel with a
# manual clock, and checks every step against a reference model. cargo-fuzz (libFuzzer) on
# nightly, built with debug assertions, overflow checks and AddressSanitizer; libFuzzer
# itself needs a C++ compiler.
#
# Runs for a fixed short time from the committed seed corpus (fuzz/corpus/wheel). New inputs
# go to a scratch corpus (fuzz/corpus-work, ignored by git), a crash to fuzz/artifacts/wheel/
# (replay it with `cargo +nightly fuzz run wheel <file>`). A longer run is one command:
#
#     PUNCTUAL_FUZZ_SECONDS=3600 bash ci/fuzz.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${PUNCTUAL_FUZZ_SECONDS:-60}

rustup toolchain install nightly --profile minimal
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
if ! command -v c++ >/dev/null 2>&1; then
    apt-get update
    apt-get install -y g++
fi

mkdir -p fuzz/corpus-work/wheel
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "fuzz: target wheel for ${seconds} s"
if cargo +nightly fuzz run wheel fuzz/corpus-work/wheel fuzz/corpus/wheel -- \
    -max_total_time="$seconds" -max_len=512 -print_final_stats=1 >"$log" 2>&1; then
    grep -E "^(INFO: seed corpus|#[0-9]+ +DONE|Done [0-9]+ runs|stat::number_of_executed_units)" "$log" || true
    echo "fuzz: no failure"
else
    tail -n 120 "$log"
    echo "fuzz: FAILED (inputs in fuzz/artifacts/wheel/)"
    exit 1
fi
