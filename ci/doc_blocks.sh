#!/usr/bin/env bash
# Every Rust code block in a README or a docs/ page is a doc test: the page is included in
# tests/src/lib.rs (the `punctual-tests` package) or is its crate's docs, and a block
# marked `ignore` says why on the line before it (`<!-- ignore: reason -->`). Prints each
# ignored block's reason, and fails on a page that is not included or a block ignored
# without a reason.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
status=0
for page in README.md docs/*.md core/README.md adapters/*/README.md; do
    # Opening fences of Rust blocks: a bare fence is Rust to rustdoc, as is `rust,...`.
    rust_blocks=$(awk '/^```/ { if (open) { open = 0; next } open = 1;
        tag = substr($0, 4); if (tag == "" || tag ~ /^rust/) print NR ": " $0 }' "$page")
    [ -n "$rust_blocks" ] || continue
    # A crate's README is its crate docs (`#![doc = include_str!("../README.md")]`), so its
    # blocks are that crate's doc tests; every other page is included in tests/src/lib.rs.
    crate_lib="$(dirname "$page")/src/lib.rs"
    if ! grep -qF "include_str!(\"../../$page\")" tests/src/lib.rs &&
        ! { [ "$page" != README.md ] && grep -qxF '#![doc = include_str!("../README.md")]' "$crate_lib"; }; then
        echo "doc_blocks: $page has Rust code blocks but neither tests/src/lib.rs nor its crate's docs include it" >&2
        status=1
    fi
    while IFS= read -r block; do
        line=${block%%:*}
        case $block in
        *ignore*)
            reason=$(sed -n "$((line - 1))p" "$page" | sed -nE 's/^<!-- ignore: (.+) -->$/\1/p')
            if [ -z "$reason" ]; then
                echo "doc_blocks: $page:$line is ignored without a reason (<!-- ignore: ... --> before it)" >&2
                status=1
            else
                echo "doc_blocks: $page:$line not compiled: $reason"
            fi
            ;;
        esac
    done <<<"$rust_blocks"
done
exit $status
