#!/usr/bin/env bash
# The project's test command, the same one the README gives: every crate's unit,
# integration and doc tests on the host.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo test --workspace
