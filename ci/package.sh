#!/usr/bin/env bash
# Every published crate packages, and builds from its package: `cargo publish --dry-run`
# over the workspace packs punctual-core, the four adapters (tokio, smol, embassy,
# tower) and the facade, and builds each from its own `.crate` (cargo verifies the dependants against the packages it has
# just made, in a local registry under target/package/, so nothing needs to be on
# crates.io yet; it still reads the crates.io index for the other dependencies, so this
# step needs the network, as any first build does). punctual-benches is `publish = false`
# and left out. Then checks that each package holds its licenses and readme, and that the
# facade ships none of CI, benches, fuzzing, firmware or the member crates.
#
# Run from anywhere: `bash ci/package.sh`. `--allow-dirty` so it runs on a working tree
# with changes, as CI and a developer before a commit have.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo publish --dry-run --workspace --allow-dirty

status=0
for crate in punctual punctual-core punctual-tokio punctual-smol punctual-embassy punctual-tower; do
    files=$(cargo package -p "$crate" --allow-dirty --list 2>/dev/null)
    for needed in LICENSE-MIT LICENSE-APACHE README.md; do
        if ! grep -qx "$needed" <<<"$files"; then
            echo "package.sh: $crate's package has no $needed" >&2
            status=1
        fi
    done
    echo "package.sh: $crate: $(wc -l <<<"$files") files"
done
facade=$(cargo package -p punctual --allow-dirty --list 2>/dev/null)
if stray=$(grep -E '^(\.ci|ci|benches|fuzz|core|adapters|tests|examples/(firmware|embassy_host))/' <<<"$facade"); then
    echo "package.sh: the facade's package holds files users do not need:" >&2
    echo "$stray" >&2
    status=1
fi
grep -qx CHANGELOG.md <<<"$facade" || { echo "package.sh: the facade's package has no CHANGELOG.md" >&2; status=1; }
((status == 0)) && echo "package.sh: passed"
exit "$status"
