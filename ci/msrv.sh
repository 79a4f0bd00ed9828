#!/usr/bin/env bash
# The libraries build with the oldest Rust the manifests promise (`rust-version` in the
# root Cargo.toml): punctual-core (with and without std), the four adapters, and the
# facade with every feature, against the committed Cargo.lock. Libraries only: the tests'
# dev-dependencies (proptest, heapless) need a newer Rust than the libraries do, which a
# user of the crates never builds. In a target dir of its own, so the normal build's
# artifacts stay.
#
# Installs the toolchain with rustup. When it cannot be installed (no rustup, or its
# download server unreachable), says so and skips, since then this machine cannot check
# the MSRV at all; a check that fails on an installed toolchain fails the step.
#
# Run from anywhere: `bash ci/msrv.sh`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

msrv=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
if [[ -z "$msrv" ]]; then
    echo "msrv.sh: no rust-version in Cargo.toml" >&2
    exit 1
fi
if ! command -v rustup >/dev/null 2>&1; then
    echo "msrv.sh: SKIPPED: no rustup to install Rust $msrv with"
    exit 0
fi
# An installed toolchain is used as it is (installing again would ask the server).
if ! rustc "+$msrv" --version >/dev/null 2>&1 &&
    ! rustup toolchain install "$msrv" --profile minimal; then
    echo "msrv.sh: SKIPPED: Rust $msrv could not be installed (is rustup's download server reachable?)"
    exit 0
fi

export CARGO_TARGET_DIR=target/msrv
echo "msrv.sh: $(rustc "+$msrv" --version)"
cargo "+$msrv" check --locked -p punctual-core -p punctual-tokio -p punctual-smol \
    -p punctual-embassy -p punctual-tower -p punctual
# Not `tonic`: the tonic release in Cargo.lock needs a newer Rust than ours.
cargo "+$msrv" check --locked -p punctual --features tokio,embassy,tower,tracing,test-util,metrics,config
cargo "+$msrv" check --locked -p punctual-core --no-default-features --features alloc
cargo "+$msrv" check --locked -p punctual-core --no-default-features
echo "msrv.sh: the libraries build with Rust $msrv"
