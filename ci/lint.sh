#!/usr/bin/env bash
# clippy with warnings denied, rustfmt, docs without warnings, and every Rust code block of
# a README or docs/ page compiled as a doc test (ci/doc_blocks.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rustup component add clippy rustfmt >/dev/null 2>&1 || true
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The core without its default features, every target: each integration test compiles out
# (`#![cfg(feature = ...)]` at its top) when a feature it needs is off.
cargo clippy -p punctual-core --no-default-features --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
# Every feature, as docs.rs builds them: links in feature-gated modules resolve too.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features
# The core's docs as a firmware or no-alloc user builds them: links to items those
# features leave out point at the full docs instead.
for features in "" "alloc"; do
    RUSTDOCFLAGS="-D warnings" cargo doc -p punctual-core --no-deps --no-default-features \
        --features "$features"
done
# The facade's docs with its default features alone, as a user's `cargo doc` builds them
# (in the workspace, other crates' dev-dependencies turn `config` on).
RUSTDOCFLAGS="-D warnings" cargo doc -p punctual --no-deps
# The core's private items, as a maintainer reads them: the links in the wheel's
# invariants resolve too.
RUSTDOCFLAGS="-D warnings" cargo doc -p punctual-core --no-deps --document-private-items
bash ci/doc_blocks.sh
