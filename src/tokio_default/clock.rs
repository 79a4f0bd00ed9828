//! `RuntimeClock`: the clock of a runtime's default wheel, and the sleeps of its driver.
//!
//! A reading is the global clock's reading ([`std_clock`]) of the instant tokio reports:
//! `tokio::time::Instant::now()`, which is the real time, or the runtime's virtual time
//! when it is paused. So an instant is the same reading on every default wheel, and
//! `deadline_at(instant)` needs no conversion that depends on the wheel it ends up on.
//!
//! A wheel outlives its runtime (a deadline may still hold it), which changes where
//! readings come from, so the clock has two sources:
//!
//! * **tokio**, while it serves a runtime whose clock may be paused (a `current_thread`
//!   runtime): the instant tokio reports to the reading thread, which is in that runtime's
//!   context (see `tokio_default` for why);
//! * **real**: the global clock itself, readable anywhere. After its runtime shut down;
//!   and from the start for a multi-thread runtime, whose clock tokio never pauses (it
//!   refuses `pause` and `start_paused` there), so that its instants are the real time's:
//!   the same readings, without the cost of going through tokio's `Instant` and
//!   converting it (most of what a deadline on a worker thread paid beyond the global
//!   wheel's).
//!
//! Readings never go backwards across a change of source: each change records the last
//! reading as a floor, and a reading is never below it. A paused runtime whose virtual
//! time ran ahead of the real time hands over at its virtual reading, which the real
//! source then reaches later: the deadlines left are late, never early.
//!
//! # State word
//!
//! ```text
//!  63                                              1   0
//! +-------------------------------------------------+---+
//! | floor: the lowest reading allowed, nanoseconds   | R |
//! +-------------------------------------------------+---+
//! ```
//!
//! `R` (bit 0) is set for the real source. The floor is kept to 2 ns (its low bit is the
//! flag), rounded down: a floor only ever lowers a reading's bound. Whether the runtime is
//! gone is kept apart (`gone`): a multi-thread runtime's wheel reads the real source while
//! its runtime lives.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use core::time::Duration;

use punctual_core::{Clock, Reading, Sleeper};

use crate::default_wheel::ReadsBehind;
use crate::global::std_clock;

const REAL: u64 = 1;

/// The clock of a runtime's default wheel (see the module docs).
#[derive(Debug)]
pub struct RuntimeClock {
    state: AtomicU64,
    /// How far behind the global clock's readings this clock reads, in nanoseconds (less
    /// than a tick): chosen when the wheel starts serving a runtime, so that the runtime's
    /// time then reads a whole number of ticks. A paused clock moves in whole
    /// milliseconds from where it started, and tokio rounds its timers up to those: on
    /// this grid, a wheel's tick boundaries are instants tokio can sleep to exactly.
    /// (Behind, never ahead: `deadline_at` instants, read on the global clock, then end
    /// late by less than a tick, never early.)
    behind: AtomicU64,
    /// The runtime this clock served has shut down (see `switch_to_real`).
    gone: AtomicBool,
}

impl RuntimeClock {
    /// A clock reading tokio's time, from no floor.
    pub(crate) const fn new() -> Self {
        Self {
            state: AtomicU64::new(0),
            behind: AtomicU64::new(0),
            gone: AtomicBool::new(false),
        }
    }

    /// Whether the runtime this clock served has shut down: readings come from the real
    /// source for good.
    pub(crate) fn runtime_gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// The runtime is gone: reads from the real source from now on, continuing from the
    /// reading now. Called by the one party that changes the source at that moment (see
    /// `Home`).
    pub(crate) fn switch_to_real(&self) {
        let floor = nanos(self.now());
        self.gone.store(true, Ordering::Relaxed);
        self.state.store((floor & !REAL) | REAL, Ordering::Release);
    }

    /// Serves the caller's runtime from now on, on the runtime's grid of `tick` (see
    /// `behind`): reading tokio's time, or the real source directly when `pausable` is
    /// false (a multi-thread runtime, whose time tokio never pauses). Only for a wheel
    /// that holds no entry and has no driver: a new one, or one started over for its new
    /// runtime (`Wheel::restart`), whose earlier readings no longer bound the new ones.
    pub(crate) fn switch_to_tokio(&self, tick: Duration, pausable: bool) {
        // On the real source, no offset: the readings are then the global clock's own, and
        // budgets carry over between such wheels (see `DefaultWheel::on_global_timeline`). tokio
        // rounds a real-time sleep up to its millisecond anyway.
        let behind = if pausable {
            nanos(tokio_reading()) % nanos(tick).max(1)
        } else {
            0
        };
        self.behind.store(behind, Ordering::Relaxed);
        self.gone.store(false, Ordering::Relaxed);
        self.state
            .store(if pausable { 0 } else { REAL }, Ordering::Release);
    }

    /// Whether this clock reads virtual time now: it reads tokio's time (a
    /// `current_thread` runtime's), and tokio's clock has been paused or moved, so that
    /// it no longer reads the real time. Read in the runtime's context. Once tokio's
    /// clock has left the real time it does not come back to it (a resume keeps the
    /// offset an advance or a pause made), so the answer stays `true`, but for the
    /// nanosecond coincidence of a pause made just then.
    pub(crate) fn reads_virtual_time(&self) -> bool {
        if self.state.load(Ordering::Acquire) & REAL != 0 {
            return false;
        }
        // Unmoved, tokio's clock is the real one read through an `Instant` of its own:
        // its reading falls between two real readings taken around it. A paused clock
        // stands still before the first; one that was moved, or resumed, reads off by
        // what it was moved or stood still.
        let before = std::time::Instant::now();
        let tokio_now = tokio::time::Instant::now().into_std();
        let after = std::time::Instant::now();
        !(before <= tokio_now && tokio_now <= after)
    }

    /// `at`, a reading of this clock, as a reading of the global clock (`std_clock`): at
    /// or after the moment this clock reads `at`, while it reads the real time.
    pub(crate) fn global_reading(&self, at: Reading) -> Reading {
        at.checked_add(self.behind()).unwrap_or(Reading::END)
    }
}

impl ReadsBehind for RuntimeClock {
    /// How far behind the global clock this clock reads (see `behind`).
    fn behind(&self) -> Duration {
        Duration::from_nanos(self.behind.load(Ordering::Relaxed))
    }
}

impl Clock for RuntimeClock {
    #[inline]
    fn now(&self) -> Duration {
        let state = self.state.load(Ordering::Acquire);
        let raw = if state & REAL != 0 {
            std_clock().now()
        } else {
            tokio_reading()
        };
        raw.saturating_sub(self.behind())
            .max(Duration::from_nanos(state & !REAL))
    }
}

/// The global clock's reading of the instant tokio reports to this thread.
#[inline]
fn tokio_reading() -> Duration {
    std_clock()
        .reading_of(tokio::time::Instant::now().into_std())
        .as_duration()
}

/// `d` in nanoseconds, saturated.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// How far ahead a sleep to an instant tokio cannot represent goes instead (what tokio
/// itself uses for "never"). Waking then only costs the driver a spurious turn.
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// The driver's sleeps: `tokio::time::sleep_until` the instant at which the clock reads
/// the wheel's next turn. Readings from tokio are `Instant` arithmetic on the global
/// clock's origin (`reading_of`), so the origin plus the reading (plus how far behind
/// the clock reads) is exactly that instant: never before it, and not a nanosecond after,
/// which matters on a paused clock, where tokio would round a nanosecond late up to a
/// whole millisecond.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuntimeSleeper {
    clock: &'static RuntimeClock,
}

impl RuntimeSleeper {
    pub(crate) const fn new(clock: &'static RuntimeClock) -> Self {
        Self { clock }
    }
}

impl Sleeper for RuntimeSleeper {
    type Sleep = tokio::time::Sleep;

    fn sleep_until(&mut self, at: Reading) -> Self::Sleep {
        let origin = std_clock().origin();
        // Direct readings of the real source may be behind `Instant`'s by the global
        // clock's slack: its `instant_of` allows for that.
        let start = if self.clock.state.load(Ordering::Relaxed) & REAL != 0 {
            origin.checked_add(std_clock().slack())
        } else {
            Some(origin)
        };
        let instant = start
            .and_then(|start| start.checked_add(self.clock.behind()))
            .and_then(|shifted| shifted.checked_add(at.as_duration()))
            .or_else(|| origin.checked_add(FAR_FUTURE))
            .unwrap_or(origin);
        tokio::time::sleep_until(tokio::time::Instant::from_std(instant))
    }
}
