//! The global wheel's state word and its transitions.
//!
//! ```text
//! bit   3     2     1          0
//!       BOOT  STD   STARTING   RUNNING
//! ```
//!
//! * At most one clock bit is set, once, never cleared; `RUNNING` only ever with one.
//! * A reading loads the word once: on `RUNNING` it reads that clock; on `STARTING` it
//!   yields and looks again; on neither, [`claim_start`] sets `STARTING` (and `STD` if no
//!   clock is set) in one compare-and-swap, the one winner spawns the thread, and
//!   [`started`] swaps `STARTING` for `RUNNING` in one read-modify-write. If spawning
//!   panics, [`abandon_start`] clears `STARTING` and the next reading claims again.
//! * [`select`] sets a clock bit only while none is set, so racing choices agree.
//! * In a forked child, [`forget_timer_thread`] clears `RUNNING` and `STARTING`.
//!
//! `tests/tests/loom_facade.rs` models these transitions on this very file (`crate::sync`).

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

/// Sets clock `bit` (`STD` or `BOOT`) unless a clock is set. Returns the clock bit set: one
/// load once it is.
pub(crate) fn select(state: &AtomicU32, bit: u32) -> u32 {
    let set = state.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
        (word & CLOCKS == 0).then_some(word | bit)
    });
    set.map_or_else(|word| word & CLOCKS, |_| bit)
}

/// What a reading that found the timer thread not running is to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// Another thread started it meanwhile. The word, with `RUNNING` and a clock.
    Running(u32),
    /// This thread claimed the start: spawn, then [`started`] or [`abandon_start`].
    /// The word as claimed, with a clock.
    Claimed(u32),
}

/// Claims the start of the timer thread, or yields until another thread's start ends.
pub(crate) fn claim_start(state: &AtomicU32) -> Start {
    loop {
        let word = state.load(Ordering::Acquire);
        if word & STARTING != 0 {
            // The new timer thread waits here until its spawner calls `started`.
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

/// In a forked child: the timer thread and any start of it stayed in the parent.
/// Async-signal-safe: one atomic read-modify-write.
#[cfg_attr(not(all(target_os = "linux", not(miri))), allow(dead_code))]
pub(crate) fn forget_timer_thread(state: &AtomicU32) {
    state.fetch_and(!(RUNNING | STARTING), Ordering::AcqRel);
}
