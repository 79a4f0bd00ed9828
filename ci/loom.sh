#!/usr/bin/env bash
# loom models of the wheel's lock-free hand-offs: one test binary, core/tests/loom/, with a
# module per hand-off (its main.rs lists them), so every model of every module runs below.
# The namespaced cfg swaps the crate's atomics for loom's without flipping dependencies that
# key on cfg(loom). A separate target dir keeps the normal build's artifacts. Each model
# prints how many interleavings loom explored (and fails if it explored only one).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUSTFLAGS="--cfg punctual_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p punctual-core --test loom --release -- --nocapture
# The same models as firmware compiles the wheel: one shard (no `std`), where every arm
# reads the driver's plan with a plain load (no shard to mark). Models that are about
# several shards, or about the lists alone (the same code with any number of shards), are
# left to the run above: with every thread on one shard they explore millions of
# interleavings for nothing new (13 minutes instead of seconds).
RUSTFLAGS="--cfg punctual_loom --cfg punctual_loom_one_shard" CARGO_TARGET_DIR=target/loom-one-shard \
    cargo test -p punctual-core --test loom --release -- --nocapture \
    --skip take_back_vs_take_and_push --skip take_back_under_a_push_on_the_same_shard \
    --skip second_arm_on_new_shard --skip fresh_blocks_and_steals_across_shards \
    --skip free_list_aba
# The facade's own state machines (the global wheel's state word, the timer threads' fork
# gate, the holders of a tokio runtime's default wheel): their files included in a test of
# their own with loom's atomics, under a cfg of their own, so that the facade (whose
# statics need the core's const constructors) builds as it always does.
RUSTFLAGS="--cfg punctual_loom_facade" CARGO_TARGET_DIR=target/loom-facade \
    cargo test -p punctual-tests --test loom_facade --release -- --nocapture
