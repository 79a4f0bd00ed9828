#!/usr/bin/env bash
# clippy with warnings denied, rustfmt, and docs without warnings.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rustup component add clippy rustfmt >/dev/null 2>&1 || true
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
