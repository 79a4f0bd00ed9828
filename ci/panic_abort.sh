#!/usr/bin/env bash
# Default deadlines inside tokio runtimes without a time driver, in a release build with
# `panic = "abort"` (examples/no_time_driver): the binary must exit 0 and print nothing on
# stderr. A panic anywhere, caught or not, ends such a process with SIGABRT (exit status
# 134), and a caught one would still print its message through the panic hook. In a
# target dir of its own, so the normal release build's artifacts stay.
#
# Run from anywhere: `bash ci/panic_abort.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CARGO_TARGET_DIR=target/panic-abort
export CARGO_PROFILE_RELEASE_PANIC=abort
cargo build --release --locked -p punctual-no-time-driver
binary="$CARGO_TARGET_DIR/release/punctual-no-time-driver"

stderr=$(mktemp)
trap 'rm -f "$stderr"' EXIT
status=0
"$binary" 2>"$stderr" || status=$?
if ((status != 0)); then
    echo "panic_abort.sh: FAILED: exit status $status (134: aborted by a panic); stderr:"
    cat "$stderr"
    exit 1
fi
if [[ -s "$stderr" ]]; then
    echo "panic_abort.sh: FAILED: exit status 0, but stderr is not empty:"
    cat "$stderr"
    exit 1
fi
echo "panic_abort.sh: exit status 0, stderr empty"
