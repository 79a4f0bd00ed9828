#!/usr/bin/env bash
# Every published crate packages, and builds from its package: `cargo publish --dry-run`
# over the workspace packs punctual-core, the six adapters (thread, tokio, smol, embassy,
# tower, wasm) and the facade, and builds each from its own `.crate` (cargo verifies the dependants against the packages it has
# just made, in a local registry under target/package-check/, so nothing needs to be on
# crates.io yet; it still reads the crates.io index for the other dependencies, so this
# step needs the network, as any first build does). punctual-benches is `publish = false`
# and left out. Then checks that each package holds its licenses and readme, and that the
# facade ships none of CI, benches, fuzzing, firmware or the member crates.
#
# Run from anywhere: `bash ci/package.sh`. `--allow-dirty` so it runs on a working tree
# with changes, as CI and a developer before a commit have.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each verification asks the crates.io index again: more retries than cargo's default 3
# for a registry that drops a request, and one more whole attempt if the dry run still
# fails (a real packaging error fails both attempts the same way).
export CARGO_NET_RETRY=${CARGO_NET_RETRY:-6}

# cargo unpacks the packages it verifies the dependants against into its registry cache,
# once per name and version, and reuses them: an earlier run's package of the same
# version would stand in for today's sources. Local registries' caches are the folders
# whose names start with '-' (crates.io's starts with its host); clear ours there.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
for cache in "$cargo_home"/registry/src/-*/; do
    [[ -d $cache ]] && rm -rf "$cache"punctual-*
done
# Likewise the builds of those packages, which cargo takes as unchanged once it has built
# a name and version: the verification builds in a target directory of its own, anew.
export CARGO_TARGET_DIR=target/package-check
rm -rf "$CARGO_TARGET_DIR"
if ! cargo publish --dry-run --workspace --allow-dirty; then
    echo "package.sh: the dry run failed; trying once more" >&2
    cargo publish --dry-run --workspace --allow-dirty
fi

# The file list of one package; cargo's own error is shown if it cannot make it.
package_files() {
    local err
    err=$(mktemp)
    if ! cargo package -p "$1" --allow-dirty --list 2>"$err"; then
        echo "package.sh: cannot list the files of $1's package:" >&2
        cat "$err" >&2
        rm -f "$err"
        return 1
    fi
    rm -f "$err"
}

status=0
for crate in punctual punctual-core punctual-thread punctual-tokio punctual-smol punctual-embassy punctual-tower punctual-wasm; do
    files=$(package_files "$crate")
    for needed in LICENSE-MIT LICENSE-APACHE README.md; do
        if ! grep -qx "$needed" <<<"$files"; then
            echo "package.sh: $crate's package has no $needed" >&2
            status=1
        fi
    done
    echo "package.sh: $crate: $(wc -l <<<"$files") files"
done
facade=$(package_files punctual)
if stray=$(grep -E '^(\.ci|ci|benches|fuzz|core|adapters|tests|examples/(firmware|embassy_host))/' <<<"$facade"); then
    echo "package.sh: the facade's package holds files users do not need:" >&2
    echo "$stray" >&2
    status=1
fi
grep -qx CHANGELOG.md <<<"$facade" || { echo "package.sh: the facade's package has no CHANGELOG.md" >&2; status=1; }
((status == 0)) && echo "package.sh: passed"
exit "$status"
