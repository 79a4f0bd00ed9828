#!/usr/bin/env bash
# The core builds without std or alloc for microcontrollers: with native atomics on
# thumbv7em (compare-and-swap, no 64-bit atomics), and through portable-atomic +
# critical-section on thumbv6m (no compare-and-swap at all).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rustup target add thumbv7em-none-eabihf thumbv6m-none-eabi
cargo build -p punctual-core --no-default-features --target thumbv7em-none-eabihf
cargo build -p punctual-core --no-default-features --features portable-atomic --target thumbv6m-none-eabi
# Without the feature, thumbv6m's build fails with one error that says what to do.
if out=$(cargo build -p punctual-core --no-default-features --target thumbv6m-none-eabi 2>&1); then
    echo "no_std.sh: punctual-core built for thumbv6m without portable-atomic" >&2
    exit 1
fi
grep -q 'enable the `portable-atomic` feature' <<<"$out"
# The facade with the embassy adapter, as a thumbv6m firmware would depend on it.
cargo build -p punctual --no-default-features --features embassy,punctual-core/portable-atomic --target thumbv6m-none-eabi
cargo build -p punctual --no-default-features --features embassy --target thumbv7em-none-eabihf
cargo clippy -p punctual-core --no-default-features --target thumbv7em-none-eabihf -- -D warnings
# The optional parts a firmware may turn on, each alone and together.
for features in stats sub-tick stats,sub-tick; do
    cargo clippy -p punctual-core --no-default-features --features "$features" --target thumbv7em-none-eabihf -- -D warnings
done
cargo build -p punctual-embassy --features punctual-core/stats,punctual-core/sub-tick --target thumbv7em-none-eabihf
# defmt formatting for Elapsed, as firmware uses it.
cargo build -p punctual-core --no-default-features --features defmt --target thumbv7em-none-eabihf
