//! The gate that timer-thread turns pass and forks close (see the crate docs, "Across
//! fork"): one word, the turns in progress in its low half and the forks waiting for them
//! in its high half (in units of [`FORK`]).
//!
//! * A turn adds one ([`try_enter`]); if a fork was waiting it takes the one back and
//!   waits for the gate to open ([`enter`]). It takes one away when done ([`leave`]).
//! * A fork adds [`FORK`], which turns that come after see and back out of, then waits
//!   until no turn other than its own thread's is in progress ([`close`]); the parent
//!   takes its [`FORK`] away after the fork ([`open`]), and the child, where only the
//!   forking thread runs, sets the word to that thread's own turn ([`reset_in_child`]).
//!
//! Acquire on entering and Release on leaving order a turn and a fork whole: a fork never
//! copies a wheel mid-turn. The loom models are in `tests/tests/loom_facade.rs`.

use crate::sync::{AtomicUsize, Ordering, yield_now};

/// One fork in the gate's word.
pub(crate) const FORK: usize = 1 << (usize::BITS / 2);

/// Enters a turn unless a fork waits or is in progress: whether it entered.
pub(crate) fn try_enter(turns: &AtomicUsize) -> bool {
    // Acquire: a turn after a fork's parent handler sees what came before it.
    if turns.fetch_add(1, Ordering::Acquire) < FORK {
        return true;
    }
    // A fork waits: step back.
    turns.fetch_sub(1, Ordering::Release);
    false
}

/// Enters a turn, waiting (yielding) while a fork waits or is in progress.
pub(crate) fn enter(turns: &AtomicUsize) {
    while !try_enter(turns) {
        while turns.load(Ordering::Relaxed) >= FORK {
            yield_now();
        }
    }
}

/// Leaves a turn.
pub(crate) fn leave(turns: &AtomicUsize) {
    // Release: the fork that sees the count drop sees the whole turn.
    turns.fetch_sub(1, Ordering::Release);
}

/// Before a fork: closes the gate to new turns and waits (yielding) for the turns in
/// progress, other than the forking thread's own (`own`: 1 if a waker that its turn runs
/// forks, else 0).
#[cfg_attr(not(all(target_os = "linux", not(miri))), allow(dead_code))]
pub(crate) fn close(turns: &AtomicUsize, own: usize) {
    turns.fetch_add(FORK, Ordering::AcqRel);
    while turns.load(Ordering::Acquire) % FORK > own {
        yield_now();
    }
}

/// After a fork, in the parent: opens the gate.
#[cfg_attr(not(all(target_os = "linux", not(miri))), allow(dead_code))]
pub(crate) fn open(turns: &AtomicUsize) {
    turns.fetch_sub(FORK, Ordering::Release);
}

/// After a fork, in the child: no other turn is in progress and no other fork waits; the
/// forking thread's own turn (`own`), if it forked from a waker, is still its own.
/// Async-signal-safe: one atomic store.
#[cfg_attr(not(all(target_os = "linux", not(miri))), allow(dead_code))]
pub(crate) fn reset_in_child(turns: &AtomicUsize, own: usize) {
    turns.store(own, Ordering::Release);
}
