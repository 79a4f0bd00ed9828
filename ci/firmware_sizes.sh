#!/usr/bin/env bash
# What punctual costs a firmware: builds the same minimal embassy firmware (one deadline
# that fires, one that completes; examples/firmware/src/bin/) with embassy-time's own
# `with_timeout` and with punctual (an `EmbassyWheel<8>`), for the Cortex-M3 and the
# Cortex-M0, and writes their flash and static RAM, the wheel's fixed bytes and bytes per
# entry (from a second build with 16 entries) and where the wheel's bytes and code go into
# the firmware-size section of docs/benchmarks.md (replacing it, or appending it).
#
# Run from anywhere: `bash ci/firmware_sizes.sh` (the end of `ci/bench_report.sh` calls it).
# Release builds, `opt-level = "s"`, fat LTO, as examples/firmware/Cargo.toml sets them.
# Runs each measured firmware under QEMU first (it must print its `ok` line). Installs
# QEMU, the ARM binutils and the Rust targets when missing. Sizes do not depend on the
# machine's load.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
doc="$root/docs/benchmarks.md"
begin='<!-- firmware sizes: written by ci/firmware_sizes.sh, do not edit by hand -->'
end='<!-- end of firmware sizes -->'
cd "$root/examples/firmware"

# shellcheck source=ci/firmware_tools.sh
source "$root/ci/firmware_tools.sh"
install_firmware_tools firmware_sizes.sh thumbv7m-none-eabi thumbv6m-none-eabi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bins=(--bin size-punctual --bin size-with-timeout)
for target in thumbv7m-none-eabi thumbv6m-none-eabi; do
    cargo build --quiet --release "${bins[@]}" --target "$target"
    for bin in size-punctual size-with-timeout; do
        # What is measured must work: each prints `NAME: ok` under QEMU.
        cargo run --quiet --release --bin "$bin" --target "$target" | grep -x "$bin: ok" >/dev/null || {
            echo "firmware_sizes.sh: $bin on $target did not print '$bin: ok'" >&2
            exit 1
        }
        cp "target/$target/release/$bin" "$out/$bin.$target"
    done
done
# The same wheel with 16 entries: the difference is 8 entries.
cargo build --quiet --release --bin size-punctual --features wheel-16 --target thumbv7m-none-eabi
cp target/thumbv7m-none-eabi/release/size-punctual "$out/size-punctual-16.thumbv7m-none-eabi"
# The core's optional parts, off in a firmware's build, each turned on alone and together.
optional=(stats sub-tick stats,sub-tick)
for features in "${optional[@]}"; do
    cargo build --quiet --release --bin size-punctual --features "$features" --target thumbv7m-none-eabi
    cp target/thumbv7m-none-eabi/release/size-punctual "$out/size-punctual+$features.thumbv7m-none-eabi"
done

# nm prints sizes in hex; mawk (Debian's awk) has no strtonum.
hex='function hex(s,  i, v) {
    v = 0; s = tolower(s)
    for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return v
}
'
# "flash ram" of an ELF: text + data, data + bss.
flash_ram() {
    arm-none-eabi-size "$1" | awk 'NR == 2 { print $1 + $2, $2 + $3 }'
}
# "bytes section" of the wheel's static in an ELF (section from nm's type letter).
wheel_symbol() {
    arm-none-eabi-nm -S -C "$1" | awk "$hex"'
    $4 == "size_punctual::WHEEL" {
        section = ($3 ~ /^[bB]$/) ? ".bss" : ($3 ~ /^[dD]$/) ? ".data" : $3
        print hex($2), section
    }'
}
# "bytes<TAB>crate" for the text symbols of an ELF, largest first.
crate_text() {
    arm-none-eabi-nm -S -C "$1" | awk "$hex"'
        $3 ~ /^[tTwW]$/ && NF >= 4 {
            name = $4; for (i = 5; i <= NF; i++) name = name " " $i
            crate = "(no crate: startup, vectors)"
            if (match(name, /[A-Za-z_][A-Za-z0-9_]*::/)) crate = substr(name, RSTART, RLENGTH - 2)
            bytes[crate] += hex($2)
        }
        END { for (c in bytes) printf "%d\t%s\n", bytes[c], c }' | sort -rn
}
# Thousands with a space, as the rest of docs/benchmarks.md writes them.
n() {
    printf '%s' "$1" | sed -E ':a; s/^([0-9]+)([0-9]{3})/\1 \2/; ta'
}
signed() {
    if (($1 < 0)); then printf -- '-%s' "$(n $((-$1)))"; else printf '+%s' "$(n "$1")"; fi
}

section="$out/section.md"
{
    echo "$begin"
    echo
    echo "## Firmware size"
    echo
    echo "The same minimal embassy firmware (\`examples/firmware/src/bin/\`: one deadline that fires, one that completes, a SysTick time driver, semihosting output of fixed strings), release, \`opt-level = \"s\"\`, fat LTO, once with \`embassy_time::with_timeout\` and once with punctual-embassy's \`EmbassyWheel<8>\` (\`arm-none-eabi-size\`; flash is text + data, static RAM data + bss). Written by \`ci/firmware_sizes.sh\`."
    echo
    echo "| target | firmware | flash (B) | static RAM (B) |"
    echo "|---|---|---:|---:|"
    for target in thumbv7m-none-eabi thumbv6m-none-eabi; do
        read -r t_flash t_ram < <(flash_ram "$out/size-with-timeout.$target")
        read -r p_flash p_ram < <(flash_ram "$out/size-punctual.$target")
        echo "| \`$target\` | \`with_timeout\` | $(n "$t_flash") | $(n "$t_ram") |"
        echo "| \`$target\` | punctual, \`EmbassyWheel<8>\` | $(n "$p_flash") | $(n "$p_ram") |"
        echo "| \`$target\` | difference | $(signed $((p_flash - t_flash))) | $(signed $((p_ram - t_ram))) |"
    done
    echo

    read -r w8 w8_section < <(wheel_symbol "$out/size-punctual.thumbv7m-none-eabi")
    read -r w16 _ < <(wheel_symbol "$out/size-punctual-16.thumbv7m-none-eabi")
    read -r m0_w8 m0_section < <(wheel_symbol "$out/size-punctual.thumbv6m-none-eabi")
    per_entry=$(((w16 - w8) / 8))
    fixed=$((w8 - 8 * per_entry))
    echo "The wheel's static (\`arm-none-eabi-nm -S\`, \`thumbv7m\`): $(n "$w8") B for 8 entries, $(n "$w16") B for 16, so **$(n "$fixed") fixed bytes and $(n "$per_entry") per entry**, in \`$w8_section\` (on \`thumbv6m\`: $(n "$m0_w8") B, in \`$m0_section\`). A static in \`.data\` costs its size twice, in RAM and in the flash image copied to it at boot; one in \`.bss\` only in RAM, zeroed at boot."
    echo
    read -r t_flash t_ram < <(flash_ram "$out/size-with-timeout.thumbv7m-none-eabi")
    read -r p_flash p_ram < <(flash_ram "$out/size-punctual.thumbv7m-none-eabi")
    in_bss=0
    [[ $w8_section != .bss ]] || in_bss=1
    verdict() { if (($1)); then echo met; else echo "**missed**"; fi; }
    echo "Against the targets for small parts (\`thumbv7m\`):"
    echo
    echo "| target | measured | |"
    echo "|---|---:|---|"
    echo "| an 8-entry wheel's static at most 768 B, all in \`.bss\` | $(n "$w8") B in \`$w8_section\` | $(verdict $((w8 <= 768 && in_bss))) |"
    echo "| static RAM over \`with_timeout\`'s at most 1 024 B | $(signed $((p_ram - t_ram))) B | $(verdict $((p_ram - t_ram <= 1024))) |"
    echo "| flash over \`with_timeout\`'s at most 8 192 B | $(signed $((p_flash - t_flash))) B | $(verdict $((p_flash - t_flash <= 8192))) |"
    echo
    echo "What the core's optional parts cost, each turned on in the same firmware (\`thumbv7m\`; off by default on firmware, on with \`std\`; features of \`punctual-core\`):"
    echo
    echo "| features on | flash (B) | static RAM (B) | the wheel's static (B) |"
    echo "|---|---:|---:|---:|"
    echo "| none (measured above) | $(n "$p_flash") | $(n "$p_ram") | $(n "$w8") |"
    for features in "${optional[@]}"; do
        elf="$out/size-punctual+$features.thumbv7m-none-eabi"
        read -r f_flash f_ram < <(flash_ram "$elf")
        read -r f_wheel _ < <(wheel_symbol "$elf")
        echo "| \`${features//,/\`, \`}\` | $(n "$f_flash") ($(signed $((f_flash - p_flash)))) | $(n "$f_ram") ($(signed $((f_ram - p_ram)))) | $(n "$f_wheel") ($(signed $((f_wheel - w8)))) |"
    done
    echo
    echo "Code by crate (\`thumbv7m\`; text symbols summed by the crate that names them, so generic code counts where it was written, and inlined code where it landed): what the difference in flash is made of."
    echo
    echo "| crate | \`with_timeout\` (B) | punctual (B) | difference (B) |"
    echo "|---|---:|---:|---:|"
    declare -A with_timeout_text=() punctual_text=()
    while IFS=$'\t' read -r bytes crate; do
        with_timeout_text[$crate]=$bytes
    done < <(crate_text "$out/size-with-timeout.thumbv7m-none-eabi")
    while IFS=$'\t' read -r bytes crate; do
        punctual_text[$crate]=$bytes
        t=${with_timeout_text[$crate]:-0}
        echo "| \`$crate\` | $(n "$t") | $(n "$bytes") | $(signed $((bytes - t))) |"
    done < <(crate_text "$out/size-punctual.thumbv7m-none-eabi" | head -8)
    echo
    data_diff=$(($(arm-none-eabi-size "$out/size-punctual.thumbv7m-none-eabi" | awk 'NR == 2 { print $2 }') -
        $(arm-none-eabi-size "$out/size-with-timeout.thumbv7m-none-eabi" | awk 'NR == 2 { print $2 }')))
    echo "Besides code, the flash difference holds $(signed "$data_diff") B of \`.data\` image (initial values copied to RAM at boot); read-only data (panic messages, vtables, constants) counts in text."
    echo
    echo "The largest functions of punctual's (\`thumbv7m\`):"
    echo
    echo "| function | text (B) |"
    echo "|---|---:|"
    arm-none-eabi-nm -S -C --size-sort "$out/size-punctual.thumbv7m-none-eabi" |
        awk "$hex"'$3 ~ /^[tT]$/ && /punctual_/ {
            name = $4; for (i = 5; i <= NF; i++) name = name " " $i
            printf "%d\t%s\n", hex($2), name
        }' | sort -rn | head -5 |
        while IFS=$'\t' read -r bytes name; do
            echo "| \`$name\` | $(n "$bytes") |"
        done
    echo
    cat "$root/examples/firmware/wheel-size.md"
    echo
    echo "$end"
} >"$section"

# Replace the section between the markers, or append it.
if grep -qxF "$begin" "$doc" 2>/dev/null; then
    awk -v begin="$begin" -v end="$end" -v section="$section" '
        $0 == begin { while ((getline line < section) > 0) print line; skip = 1; next }
        $0 == end { skip = 0; next }
        !skip' "$doc" >"$out/doc.md"
    cp "$out/doc.md" "$doc"
else
    { echo; cat "$section"; } >>"$doc"
fi
echo "firmware_sizes.sh: wrote the firmware sizes into docs/benchmarks.md"
