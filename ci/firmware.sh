#!/usr/bin/env bash
# Builds the embassy firmware in examples/firmware and runs it on two emulated cores, a
# Cortex-M3 (QEMU mps2-an385, thumbv7m-none-eabi) and a Cortex-M0 (QEMU microbit,
# thumbv6m-none-eabi: no compare-and-swap, so the wheel's atomics go through
# portable-atomic on cortex-m's critical section). Each run must print its result line
# and a passing line for every conformance scenario of tests/conformance/portable.rs.
# The core's optional parts are off there, as in a firmware's build; the Cortex-M3 runs
# the scenarios again with them on (`stats`, which also checks the degraded polls, and
# `sub-tick`). Then builds it for thumbv7em-none-eabihf and prints the size of all three.
# Lints the crate too (rustfmt, clippy for both boards, with and without those features).
#
# Run from anywhere: `bash ci/firmware.sh`. Installs what it needs (QEMU and the ARM
# binutils from Debian, the three Rust targets) when missing.
set -euo pipefail

started=$SECONDS
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
firmware="$root/examples/firmware"
name=punctual-firmware
# One line per run: at least one scenario passed, none failed.
result_line="^$name: [1-9][0-9]* passed, 0 failed\$"
# The shared scenarios, as the `scenarios!` list of portable.rs names them: each must print
# `[pass] conformance NAME`.
mapfile -t scenarios < <(sed -n '/^macro_rules! scenarios/,/^}/p' \
    "$root/tests/conformance/portable.rs" | sed -nE 's/^ +([a-z0-9_]+),$/\1/p')
if ((${#scenarios[@]} == 0)); then
    echo "firmware.sh: found no scenario in tests/conformance/portable.rs's scenarios!" >&2
    exit 1
fi

# Cargo reads .cargo/config.toml (default target, the QEMU runner of each target) from the
# working directory, and rustup a rust-toolchain file: both must see the firmware's folder.
cd "$firmware"

# shellcheck source=ci/firmware_tools.sh
source "$root/ci/firmware_tools.sh"
install_firmware_tools firmware.sh thumbv7m-none-eabi thumbv6m-none-eabi thumbv7em-none-eabihf

# Lints and formatting here too: the root's `cargo clippy --workspace` and `cargo fmt --all`
# do not reach this crate. Both boards, since `cfg(board)` picks code for each.
cargo fmt -- --check
for target in thumbv7m-none-eabi thumbv6m-none-eabi; do
    cargo clippy --release --bins --target "$target" -- -D warnings
done
cargo clippy --release --bins --features stats,sub-tick --target thumbv7m-none-eabi -- -D warnings

log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# Builds and runs the firmware for target $1 under the runner of .cargo/config.toml:
#   timeout 60 qemu-system-arm <machine> -nographic -monitor none
#       -semihosting-config enable=on,target=native -icount shift=4,sleep=off -kernel ELF
# (virtual time follows the instruction count: the timings checked are deterministic).
# Semihosting's exit status is 0 when every scenario passed and 1 otherwise; 124 is the
# timeout of a firmware that hung.
run_on() {
    local target=$1 status missing=()
    shift
    echo "firmware.sh: $target $*"
    cargo build --release --bin "$name" --target "$target" "$@"
    if cargo run --release --bin "$name" --target "$target" "$@" | tee "$log"; then
        status=0
    else
        status=$?
    fi
    if ((status != 0)); then
        echo "firmware.sh: $target: QEMU exited with status $status" >&2
        return 1
    fi
    if ! grep -Eq "$result_line" "$log"; then
        echo "firmware.sh: $target: QEMU exited 0 but printed no line matching '$result_line'" >&2
        return 1
    fi
    for scenario in "${scenarios[@]}"; do
        grep -qx "\[pass\] conformance $scenario" "$log" || missing+=("$scenario")
    done
    if ((${#missing[@]})); then
        echo "firmware.sh: $target: no passing line for ${missing[*]}" >&2
        return 1
    fi
}

run_on thumbv7m-none-eabi
run_on thumbv6m-none-eabi
run_on thumbv7m-none-eabi --features stats,sub-tick
# The last run's features stay out of the sizes printed below.
cargo build --release --bin "$name" --target thumbv7m-none-eabi

# The same firmware must also build for a Cortex-M4F.
cargo build --release --bin "$name" --target thumbv7em-none-eabihf

for target in thumbv7m-none-eabi thumbv6m-none-eabi thumbv7em-none-eabihf; do
    arm-none-eabi-size "target/$target/release/$name" | awk -v target="$target" 'NR == 2 {
        printf "firmware.sh: %s: flash %d bytes (text + data), static RAM %d bytes (data + bss)\n",
            target, $1 + $2, $2 + $3
    }'
done
# A new wheel is all zero bytes, so its static sits in .bss (nothing stored in flash,
# nothing copied at boot): nm's type letter of the firmware's `WHEEL` must be b or B.
for target in thumbv7m-none-eabi thumbv6m-none-eabi; do
    kind=$(arm-none-eabi-nm -C "target/$target/release/$name" | awk '$3 ~ /::WHEEL$/ { print $2 }')
    if [[ $kind != [bB] ]]; then
        echo "firmware.sh: $target: the wheel's static is not in .bss (nm type '${kind:-none}')" >&2
        exit 1
    fi
done
echo "firmware.sh: the wheel's static is in .bss on both cores"
echo "firmware.sh: passed in $((SECONDS - started)) s"
