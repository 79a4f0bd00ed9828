#!/usr/bin/env bash
# The core builds without std or alloc for microcontrollers: with native atomics on
# thumbv7em (compare-and-swap, no 64-bit atomics), and through portable-atomic +
# critical-section on thumbv6m (no compare-and-swap at all).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rustup target add thumbv7em-none-eabihf thumbv6m-none-eabi
cargo build -p punctual-core --no-default-features --target thumbv7em-none-eabihf
cargo build -p punctual-core --no-default-features --features portable-atomic --target thumbv6m-none-eabi
cargo clippy -p punctual-core --no-default-features --target thumbv7em-none-eabihf -- -D warnings
# defmt formatting for Elapsed, as firmware uses it.
cargo build -p punctual-core --no-default-features --features defmt --target thumbv7em-none-eabihf
