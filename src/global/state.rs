//! The global wheel's state word: whether this process's timer thread runs (`RUNNING`) or
//! is being started (`STARTING`), and which clock was chosen (`STD` or `BOOT`; at most
//! one, set once, never cleared).
//!
//! Every reading of the global clock reads the word once; what it may do next:
//!
//! * `RUNNING` (with a clock bit, which `RUNNING` is only ever set with): read that clock.
//! * neither `RUNNING` nor `STARTING`: claim the start with one compare-and-swap that sets
//!   `STARTING` and, if none is chosen, `STD` ([`claim_start`]). The one thread whose
//!   swap succeeds spawns the timer thread, then swaps `STARTING` for `RUNNING` in one
//!   read-modify-write ([`started`]); if spawning panics, it clears `STARTING`
//!   ([`abandon_start`]) and the next reading claims again.
//! * `STARTING`: another thread is starting it; yield and look again.
//!
//! [`select`] sets a clock bit only while none is set, so two threads choosing different
//! clocks agree on the one that won, and no reading ever uses a clock other than the one
//! the word keeps for good. In a forked child, the fork handler clears `RUNNING` and
//! `STARTING` ([`forget_timer_thread`]): the child's first reading starts a thread of its
//! own, on the same clock.
//!
//! The loom models of these transitions are in `tests/tests/loom_facade.rs`.

use crate::sync::{AtomicU32, Ordering, yield_now};

/// This process's timer thread was started.
pub(crate) const RUNNING: u32 = 1;
/// A thread is starting the timer thread.
pub(crate) const STARTING: u32 = 2;
/// The clock is `StdClock`.
pub(crate) const STD: u32 = 4;
/// The clock is `BootClock`.
pub(crate) const BOOT: u32 = 8;
/// Both clock bits.
pub(crate) const CLOCKS: u32 = STD | BOOT;

/// Chooses clock `bit` (`STD` or `BOOT`) unless a clock was chosen already; returns the
/// chosen clock's bit.
pub(crate) fn select(state: &AtomicU32, bit: u32) -> u32 {
    let _ = state.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
        (word & CLOCKS == 0).then_some(word | bit)
    });
    state.load(Ordering::Acquire) & CLOCKS
}

/// The chosen clock's bit, choosing `STD` if none was chosen: the clock is in use from
/// here on.
pub(crate) fn chosen(state: &AtomicU32) -> u32 {
    let word = state.load(Ordering::Acquire);
    if word & CLOCKS != 0 {
        return word & CLOCKS;
    }
    select(state, STD)
}

/// What a reading that found the timer thread not running is to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// It runs (another thread started it meanwhile): the word, with `RUNNING` and a clock.
    Running(u32),
    /// This thread claimed the start: spawn the timer thread, then [`started`] (or
    /// [`abandon_start`] if that fails). The word as claimed, with a clock.
    Claimed(u32),
}

/// Claims the start of the timer thread, or waits (yielding) for the start another thread
/// is making; see the module docs.
pub(crate) fn claim_start(state: &AtomicU32) -> Start {
    loop {
        let word = state.load(Ordering::Acquire);
        if word & STARTING != 0 {
            // The timer thread itself comes here at its first reading, while the thread
            // that spawned it finishes: a few microseconds.
            yield_now();
            continue;
        }
        if word & RUNNING != 0 {
            return Start::Running(word);
        }
        let clock = if word & CLOCKS == 0 { STD } else { 0 };
        let claimed = word | STARTING | clock;
        if state
            .compare_exchange(word, claimed, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return Start::Claimed(claimed);
        }
    }
}

/// The claimed start is done: `STARTING` becomes `RUNNING`. Returns the new word.
pub(crate) fn started(state: &AtomicU32) -> u32 {
    state.fetch_xor(STARTING | RUNNING, Ordering::AcqRel) ^ (STARTING | RUNNING)
}

/// The claimed start failed: the next reading claims it again.
pub(crate) fn abandon_start(state: &AtomicU32) {
    state.fetch_and(!STARTING, Ordering::AcqRel);
}

/// In a forked child: the timer thread, and any start of it in progress, stayed in the
/// parent. Async-signal-safe: one atomic read-modify-write.
#[cfg_attr(not(all(target_os = "linux", not(miri))), allow(dead_code))]
pub(crate) fn forget_timer_thread(state: &AtomicU32) {
    state.fetch_and(!(RUNNING | STARTING), Ordering::AcqRel);
}
