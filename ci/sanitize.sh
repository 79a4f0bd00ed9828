#!/usr/bin/env bash
# ThreadSanitizer over the concurrent tests, at a reduced size: the stress test
# (tests/tests/stress.rs: the thread driver, the global wheel and the tokio driver, 4 000
# deadlines each here) and the core's threaded tests (core/tests/threads.rs: deadlines
# hopping threads, dropped while fired, a full wheel under threads). Any data race fails the
# run. The core's single-threaded tests run under Miri (ci/miri.sh).
#
# Nightly, `-Zsanitizer=thread` with `-Zbuild-std` (the standard library rebuilt with the
# sanitizer, from rust-src), for x86_64-unknown-linux-gnu, in its own target directory.
# PUNCTUAL_STRESS_SCALE changes the stress test's size (2 here; 1 is 2 000 per scenario).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rustup toolchain install nightly --profile minimal --component rust-src
target=x86_64-unknown-linux-gnu
export RUSTFLAGS="-Zsanitizer=thread"
export RUSTDOCFLAGS="-Zsanitizer=thread"
export CARGO_TARGET_DIR=target/tsan
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
export PUNCTUAL_STRESS_SCALE=${PUNCTUAL_STRESS_SCALE:-2}
cargo +nightly test -Zbuild-std --target "$target" -p punctual-tests --test stress -- --nocapture
# The default wheels inside tokio: a task's driver, the turn from tokio's timer waker, the
# hand-over at runtime shutdown, threads that leave their wheel. Not the churn of 200
# runtimes: its timerfd registrations race tokio's I/O driver as ThreadSanitizer sees it
# (tokio publishes a registration to the driver through epoll, which it cannot see), a
# report inside tokio's code; it runs natively in `cargo test --workspace`.
cargo +nightly test -Zbuild-std --target "$target" -p punctual-tests --test tokio_timeout \
    --test default_wheels --test conformance_tokio_default \
    -- --skip runtimes_dropped_with_deadlines_in_flight
# The core's threaded tests (the others are single-threaded).
cargo +nightly test -Zbuild-std --target "$target" -p punctual-core --test threads
