#!/usr/bin/env bash
# The core's tests under Miri (undefined behaviour, data races, leaks), with strict
# provenance. The property tests run with fewer cases there; loom models do not run.
# Most tests here run on one thread; the threaded ones at the end (smaller under Miri)
# hand entries, their deadlines and waker slots between threads, and run on several
# scheduling seeds. The two-tick stress (`core/tests/two_ticks.rs`) does not run here: its
# driver spins until the workers are between polls, which some of Miri's schedules
# stretch past any CI budget; it runs natively in `cargo test --workspace`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rustup toolchain install nightly --profile minimal --component miri,rust-src
cargo +nightly miri setup
# Isolation hides the environment from the program: forward the case count explicitly.
export MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-env-forward=PROPTEST_CASES"
export PROPTEST_CASES=${PROPTEST_CASES:-8}

# The tests of the contract's rules and of the wheel's behaviour, one file each, on one
# thread: the whole of each runs here (the few with thousands of turns are ignored under
# Miri; smaller ones run the same code paths). Among them the panics: an inner future's
# destructor panicking at each place a deadline drops it (the `ManuallyDrop` in
# `Deadline`), a waker that panics when its deadline fires, when it is replaced, in
# `clone` as a deadline arms and as a waker slot registers it, in `drop` with its
# cancelled deadline, a driver's waker that panics when an arm wakes it; the accessors
# of a deadline, running and completed; and batched wakes (a turn's fired entries handed
# to a deadline's poll, and taken back by the next tick's turn); cancels and degraded
# waits across the plan's 32-bit wrap (fewer ticks under Miri); resets of sleeps and
# deadlines.
behaviour=(--test cancel --test on_time --test sub_tick --test plans --test reclaim
    --test clocks --test decided_once --test limits --test full_wheel --test after_completion
    --test accessors --test elapsed --test wakers --test uptime --test auto_traits
    --test firing_order --test panics --test drivers --test batched_wakes --test precise_fires
    --test late_cancels --test degraded_reads --test outcomes --test resets)

# The intervals, the delay queue (and its property test, smaller under Miri) and the
# budgets, on both targets below.
queues=(--test intervals --test delay_queue --test delay_queue_model --test budgets)

# The core's unit tests, the behaviour tests above, those of `queues` and the poll_order and
# spares tests on a 32-bit target as well (i686: the pointer width of the microcontrollers,
# whose code paths differ: the one general start path, 32-bit entry indices and
# generations), interpreted by Miri, so no 32-bit C toolchain is needed. In the background,
# in a target directory of its own (cargo locks one per run), while the 64-bit runs below
# take the other core; its log is printed, and its status checked, at the end.
i686_log=$(mktemp)
CARGO_TARGET_DIR=target/miri-i686 setsid cargo +nightly miri test -p punctual-core \
    --target i686-unknown-linux-gnu --lib "${behaviour[@]}" "${queues[@]}" --test poll_order \
    --test spares >"$i686_log" 2>&1 &
i686_pid=$!
# If a step below fails, the script stops there: the background run stops with it, Miri
# processes included (`setsid` gave it a process group of its own).
trap 'kill -- -"$i686_pid" 2>/dev/null || true' EXIT
# The model's 2- and 3-level wheels, and its wheel with precise fires, run natively only:
# under Miri they would add to the model's time for the same unsafe code (the heads and
# entries at any level count are reached through the same accessors, which the 6-level
# wheels cover; an early look walks a slot as a sparse slot's look does, and
# `precise_fires` runs under Miri).
cargo +nightly miri test -p punctual-core --lib "${behaviour[@]}" "${queues[@]}" --test model \
    --test streams --test stats --test poll_order --test spares \
    -- --skip two_level_fixed_wheel --skip three_level_fixed_wheel \
    --skip precise_firing_wheel --skip when_crowded
# Threads: deadlines hopping between threads while another turns the wheel (a waker slot
# registered while a fire takes it), deadlines dropped on other threads while the driver
# fires them, and two threads growing a growable wheel at once (one frees its segment).
MIRIFLAGS="$MIRIFLAGS -Zmiri-many-seeds=0..4" cargo +nightly miri test -p punctual-core \
    --test threads -- hopping_deadline deadlines_dropped_elsewhere first_arms_on_growable_wheel
# The doc tests: every public example of the core.
cargo +nightly miri test -p punctual-core --doc
echo "--- the same on i686 (32-bit):"
i686_status=0
wait "$i686_pid" || i686_status=$?
cat "$i686_log"
rm -f "$i686_log"
exit "$i686_status"
