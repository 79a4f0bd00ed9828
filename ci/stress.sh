#!/usr/bin/env bash
# Stress (tests/tests/stress.rs), optimised: threads arm deadlines on one wheel while others
# complete or cancel them at random times, on the default thread driver, on the global wheel
# under tokio's multi-thread runtime, and on the punctual-tokio driver; 300 000 deadlines
# each. Every deadline must end exactly once, none early, none hung (a watchdog names them),
# and the wheel must hold no entry at the end. Prints a summary per scenario.
#
# The longer soak is the same test, scaled (20 times here, about 18 million deadlines):
#
#     PUNCTUAL_STRESS_SCALE=20 bash ci/stress.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
echo "stress: PUNCTUAL_STRESS_SCALE=${PUNCTUAL_STRESS_SCALE:-1}"
cargo test --release -p punctual-tests --test stress -- --nocapture
