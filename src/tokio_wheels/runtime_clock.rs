//! `RuntimeClock`: the clock of `punctual`'s default wheels inside a tokio runtime.
//! * A reading is the reference clock's reading of tokio's instant (real or paused), less
//!   `behind`, under a tick: a paused runtime's time reads whole ticks.
//! * A multi-thread runtime (never paused) and a runtime shut down read the reference
//!   clock directly. Each change of source sets a floor: readings never go backwards.
//! * The state word is that floor in nanoseconds (kept to 2 ns, rounded down) with bit 0,
//!   `REAL`, set for the reference source.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use core::time::Duration;

use punctual_core::{Clock, Reading, Sleeper, StdClock};
use punctual_tokio::{TokioClock, TokioSleeper};

const REAL: u64 = 1;

/// The clock of a default wheel inside a tokio runtime: tokio's time on the timeline of a
/// reference [`StdClock`], which outlives the runtime. Public only to name the wheel
/// [`runtime_wheel`](crate::wheel::runtime_wheel) returns (`TokioClock` is for yours).
#[derive(Debug)]
pub struct RuntimeClock {
    reference: &'static StdClock,
    state: AtomicU64,
    /// How far behind the reference clock this clock reads, in nanoseconds.
    behind: AtomicU64,
    /// The runtime this clock served has shut down.
    gone: AtomicBool,
}

impl RuntimeClock {
    /// A clock on the timeline of `reference`, reading tokio's time, from no floor.
    pub(crate) const fn new(reference: &'static StdClock) -> Self {
        Self {
            reference,
            state: AtomicU64::new(0),
            behind: AtomicU64::new(0),
            gone: AtomicBool::new(false),
        }
    }

    pub(crate) fn runtime_gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// The runtime is gone: reads the reference clock from now on, from the reading now.
    pub(crate) fn switch_to_real(&self) {
        let floor = nanos(self.now());
        self.gone.store(true, Ordering::Relaxed);
        self.state.store((floor & !REAL) | REAL, Ordering::Release);
    }

    /// Serves the caller's runtime from now on, on its grid of `tick`. `pausable` is false
    /// for a multi-thread runtime, which then reads the reference clock directly. Only for
    /// a wheel that holds no entry and has no driver: its earlier readings are no floor.
    pub(crate) fn switch_to_tokio(&self, tick: Duration, pausable: bool) {
        let behind = if pausable {
            nanos(self.tokio().now()) % nanos(tick).max(1)
        } else {
            0
        };
        self.behind.store(behind, Ordering::Relaxed);
        self.gone.store(false, Ordering::Relaxed);
        self.state
            .store(if pausable { 0 } else { REAL }, Ordering::Release);
    }

    /// Whether this clock reads virtual time now: it reads tokio's time, and tokio's clock
    /// was paused or moved. Read in the runtime's context. Once true, it stays true.
    pub(crate) fn reads_virtual_time(&self) -> bool {
        if self.state.load(Ordering::Acquire) & REAL != 0 {
            return false;
        }
        // An unmoved tokio clock reads between two real readings taken around it.
        let before = std::time::Instant::now();
        let tokio_now = tokio::time::Instant::now().into_std();
        let after = std::time::Instant::now();
        !(before <= tokio_now && tokio_now <= after)
    }

    pub(crate) fn behind(&self) -> Duration {
        Duration::from_nanos(self.behind.load(Ordering::Relaxed))
    }

    /// `at`, a reading of this clock, as a reading of the reference clock.
    pub(crate) fn reference_reading(&self, at: Reading) -> Reading {
        at.checked_add(self.behind()).unwrap_or(Reading::END)
    }

    /// tokio's clock on the reference clock's origin.
    fn tokio(&self) -> TokioClock {
        TokioClock::with_origin(tokio::time::Instant::from_std(self.reference.origin()))
    }
}

impl Clock for RuntimeClock {
    #[inline]
    fn now(&self) -> Duration {
        let state = self.state.load(Ordering::Acquire);
        let raw = if state & REAL != 0 {
            self.reference.now()
        } else {
            self.tokio().now()
        };
        raw.saturating_sub(self.behind())
            .max(Duration::from_nanos(state & !REAL))
    }
}

/// `d` in nanoseconds, saturated.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Sleeps on tokio's timer until the clock reads a time: exactly the instant, so a paused
/// clock does not round a nanosecond late up to a millisecond. Only while the clock reads
/// tokio's time.
impl Sleeper for &'static RuntimeClock {
    type Sleep = tokio::time::Sleep;

    fn sleep_until(&mut self, at: Reading) -> tokio::time::Sleep {
        let tokio = self.tokio();
        let at = self.reference_reading(at);
        TokioSleeper::new(&tokio).sleep_until(at)
    }
}
