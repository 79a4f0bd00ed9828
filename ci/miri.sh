#!/usr/bin/env bash
# The core's tests under Miri (undefined behaviour, data races, leaks), with strict
# provenance. The property test runs with fewer cases there; loom models do not run.
# Most tests here run on one thread; the threaded ones at the end (smaller under Miri)
# hand entries, their deadlines and waker slots between threads, and run on several
# scheduling seeds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rustup toolchain install nightly --profile minimal --component miri,rust-src
cargo +nightly miri setup
# Isolation hides the environment from the program: forward the case count explicitly.
export MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-env-forward=PROPTEST_CASES"
export PROPTEST_CASES=${PROPTEST_CASES:-8}
cargo +nightly miri test -p punctual-core --lib --test semantics --test model --test budgets_streams_stats --test poll_with --test spares
# The inner future's destructor panicking at each place a deadline drops it (the
# `ManuallyDrop` in `Deadline`).
cargo +nightly miri test -p punctual-core --test faults an_inner_future_that_panics
# A waker that panics while the timer is worked on through its copy (`Shadow`).
cargo +nightly miri test -p punctual-core --test faults a_waker_that_panics_when_replaced
# A waker whose `clone` panics, as a deadline arms and as a waker slot registers it.
cargo +nightly miri test -p punctual-core --test faults a_waker_whose_clone_panics
# A waker whose drop panics, dropped with its cancelled deadline.
cargo +nightly miri test -p punctual-core --test faults a_waker_that_panics_when_dropped_with
# A driver's waker that panics when an arm wakes it.
cargo +nightly miri test -p punctual-core --test faults a_driver_waker_that_panics
# The accessors of a deadline, running and completed.
cargo +nightly miri test -p punctual-core --test faults accessors_of
# Threads: deadlines hopping between threads while another turns the wheel (a waker slot
# registered while a fire takes it), deadlines dropped on other threads while the driver
# fires them, and two threads growing a growable wheel at once (one frees its segment).
MIRIFLAGS="$MIRIFLAGS -Zmiri-many-seeds=0..4" cargo +nightly miri test -p punctual-core \
    --test faults -- hopping_threads dropped_on_other_threads two_threads_arming
cargo +nightly miri test -p punctual-core --doc
