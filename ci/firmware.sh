#!/usr/bin/env bash
# Builds the embassy firmware in examples/firmware, runs it on an emulated Cortex-M3 and
# checks its result line; then builds it for thumbv7em-none-eabihf and prints the size of both.
#
# Run from anywhere: `bash ci/firmware.sh`. Installs what it needs (QEMU and the ARM
# binutils from Debian, the two Rust targets) when missing.
set -euo pipefail

started=$SECONDS
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
firmware="$root/examples/firmware"
name=punctual-firmware
# One line per run: at least one scenario passed, none failed.
result_line="^$name: [1-9][0-9]* passed, 0 failed\$"

# Cargo reads .cargo/config.toml (target, QEMU runner) from the working directory, and
# rustup a rust-toolchain file: both must see the firmware's folder.
cd "$firmware"

packages=()
command -v qemu-system-arm >/dev/null || packages+=(qemu-system-arm)
command -v arm-none-eabi-size >/dev/null || packages+=(binutils-arm-none-eabi)
if ((${#packages[@]})); then
    sudo=()
    [[ "$(id -u)" -eq 0 ]] || sudo=(sudo)
    echo "firmware.sh: installing ${packages[*]}"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${packages[@]}" >/dev/null
fi
rustup target add thumbv7m-none-eabi thumbv7em-none-eabihf

# Build, then run under the runner of .cargo/config.toml:
#   timeout 60 qemu-system-arm -cpu cortex-m3 -machine mps2-an385 -nographic
#       -monitor none -semihosting-config enable=on,target=native
#       -icount shift=4,sleep=off -kernel ELF
# (virtual time follows the instruction count: the timings checked are deterministic).
# Semihosting's exit status is 0 when every scenario passed and 1 otherwise; 124 is the
# timeout of a firmware that hung.
cargo build --release
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if cargo run --release | tee "$log"; then
    status=0
else
    status=$?
fi
if ((status != 0)); then
    echo "firmware.sh: QEMU exited with status $status" >&2
    exit 1
fi
if ! grep -Eq "$result_line" "$log"; then
    echo "firmware.sh: QEMU exited 0 but printed no line matching '$result_line'" >&2
    exit 1
fi

# The same firmware must also build for a Cortex-M4F.
cargo build --release --target thumbv7em-none-eabihf

for target in thumbv7m-none-eabi thumbv7em-none-eabihf; do
    echo "firmware.sh: size of the $target firmware"
    arm-none-eabi-size "target/$target/release/$name"
    arm-none-eabi-size "target/$target/release/$name" | awk -v target="$target" 'NR == 2 {
        printf "firmware.sh: %s: flash %d bytes (text + data), static RAM %d bytes (data + bss)\n",
            target, $1 + $2, $2 + $3
    }'
done
echo "firmware.sh: passed in $((SECONDS - started)) s"
