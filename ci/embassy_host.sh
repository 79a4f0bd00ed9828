#!/usr/bin/env bash
# punctual-embassy on the host, in the crates that pick an embassy time driver and so live
# outside the root workspace (cargo would unify their driver features with everything else):
#
#   adapters/embassy/host-tests/mock     conformance suite + precision, embassy-time's mock driver
#   adapters/embassy/host-tests/coarse   the same at a 100 Hz tick, on a driver whose true time
#                                        runs between ticks (shows `with_timeout` ending early)
#   examples/embassy_host                embassy-executor + embassy-time's `std` driver
#
# Each crate builds in its own folder (its own workspace, lockfile and target dir); the
# virtual clocks are global to a test binary, so those tests run on one thread. Lints and
# formatting are checked here too, since the root's `cargo clippy --workspace` and
# `cargo fmt --all` do not reach these crates.
#
# Run from anywhere: `bash ci/embassy_host.sh`. Installs nothing beyond what cargo fetches.
set -euo pipefail

started=$SECONDS
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
host_tests="$root/adapters/embassy/host-tests"
example="$root/examples/embassy_host"

for crate in "$host_tests/mock" "$host_tests/coarse"; do
    name="${crate#"$root"/}"
    echo "embassy_host.sh: $name"
    cd "$crate"
    cargo fmt -- --check
    cargo clippy --all-targets -- -D warnings
    cargo test -- --test-threads=1
done

echo "embassy_host.sh: examples/embassy_host"
cd "$example"
cargo fmt -- --check
cargo clippy --all-targets -- -D warnings
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
timeout 60 cargo run --quiet | tee "$log"
if ! grep -qx "embassy_host: ok" "$log"; then
    echo "embassy_host.sh: the example printed no 'embassy_host: ok' line" >&2
    exit 1
fi

echo "embassy_host.sh: passed in $((SECONDS - started)) s"
