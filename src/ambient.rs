//! `Ambient`: how a default deadline reaches its wheel, chosen at its first pending poll.
//!
//! A default deadline (`fut.deadline(d)`, `punctual::sleep`, `punctual::budget`, ...) does
//! not know its wheel when it is made. At its first pending poll (never on the ready
//! path, which touches no wheel) it takes, in this order:
//!
//! 1. the thread's virtual-time wheel, if the thread paused time
//!    ([`virtual_time::pause`](crate::virtual_time::pause), feature `test-util`);
//! 2. the wheel of the tokio runtime the thread is in, if any (feature `tokio`; see
//!    `tokio_default`), so that the runtime's clock applies, paused or not;
//! 3. the global wheel, driven by its own thread.
//!
//! The choice is kept for the deadline's life: the entry it arms lives on that wheel. An
//! idle timeout chooses again for each gap, as it holds no entry between gaps.
//!
//! Without either feature, the handle is the zero-sized [`Global`](crate::Global) handle
//! in all but name, and every call goes straight to the global wheel.

use punctual_core::WheelRef;
#[cfg(any(feature = "tokio", feature = "test-util"))]
use punctual_core::{RawWheel, Reading};

#[cfg(not(any(feature = "tokio", feature = "test-util")))]
use crate::global::Global;

/// How a default deadline reaches its wheel: the wheel of the runtime or virtual time the
/// deadline is first polled in, or the global wheel (see [`DeadlineExt`](crate::DeadlineExt)).
///
/// Without the `tokio` and `test-util` features it is zero bytes and always the global
/// wheel; with either, it is a reference to the wheel chosen at the first pending poll.
#[derive(Clone, Copy, Default)]
pub struct Ambient {
    #[cfg(any(feature = "tokio", feature = "test-util"))]
    chosen: Option<&'static Chosen>,
}

/// A wheel a default deadline may choose, with how its clock reads the instants that
/// default deadlines are given (readings of the global clock).
#[cfg(any(feature = "tokio", feature = "test-util"))]
pub(crate) struct Chosen {
    pub(crate) wheel: &'static dyn RawWheel,
    /// A runtime's clock, which reads behind the global clock by a fraction of a tick;
    /// `None` for a clock that reads the global clock's readings.
    #[cfg(feature = "tokio")]
    pub(crate) runtime_clock: Option<&'static crate::tokio_default::RuntimeClock>,
}

#[cfg(any(feature = "tokio", feature = "test-util"))]
impl Chosen {
    /// `at`, a reading of the global clock, as a reading of this wheel's clock.
    #[inline]
    fn reading_at(&self, at: Reading) -> Reading {
        #[cfg(feature = "tokio")]
        if let Some(clock) = self.runtime_clock {
            if at != Reading::END {
                return at - clock.behind();
            }
        }
        at
    }
}

impl core::fmt::Debug for Ambient {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        #[cfg(any(feature = "tokio", feature = "test-util"))]
        let chosen = self
            .chosen
            .map(|chosen| (chosen.wheel as *const dyn RawWheel).cast::<()>());
        #[cfg(not(any(feature = "tokio", feature = "test-util")))]
        let chosen = Some("the global wheel");
        f.debug_struct("Ambient").field("chosen", &chosen).finish()
    }
}

impl Ambient {
    /// A handle that has not chosen yet.
    pub const fn new() -> Self {
        Self {
            #[cfg(any(feature = "tokio", feature = "test-util"))]
            chosen: None,
        }
    }
}

#[cfg(not(any(feature = "tokio", feature = "test-util")))]
// SAFETY: always the global wheel (`Global`'s).
unsafe impl WheelRef for Ambient {
    type Target = <Global as WheelRef>::Target;

    #[inline(always)]
    fn get(&self) -> &Self::Target {
        Global.get()
    }
}

#[cfg(any(feature = "tokio", feature = "test-util"))]
// SAFETY: `choose` settles `chosen` (the global wheel included, stored as any other) and
// a repeated `choose` keeps it; only `forget_choice` clears it. So from a `choose` to the
// next `forget_choice`, `get` returns the one wheel chosen, on every copy. `reading_at`
// only ever moves an instant later on the chosen wheel's clock (it reads behind).
unsafe impl WheelRef for Ambient {
    type Target = dyn RawWheel;

    #[inline]
    fn get(&self) -> &Self::Target {
        match self.chosen {
            Some(chosen) => chosen.wheel,
            None => crate::global::global_wheel(),
        }
    }

    #[inline]
    fn choose(&mut self) {
        if self.chosen.is_none() {
            self.chosen = Some(choose());
        }
    }

    #[inline]
    fn reading_at(&self, at: Reading) -> Reading {
        match self.chosen {
            Some(chosen) => chosen.reading_at(at),
            None => at,
        }
    }

    #[inline]
    fn forget_choice(&mut self) {
        self.chosen = None;
    }
}

/// The global wheel, as a default deadline chooses it.
#[cfg(any(feature = "tokio", feature = "test-util"))]
static GLOBAL_CHOSEN: Chosen = Chosen {
    wheel: crate::global::global_wheel_static(),
    #[cfg(feature = "tokio")]
    runtime_clock: None,
};

/// The wheel for a deadline that starts now on this thread.
#[cfg(any(feature = "tokio", feature = "test-util"))]
#[inline(never)]
fn choose() -> &'static Chosen {
    #[cfg(feature = "test-util")]
    if let Some(wheel) = crate::virtual_time::current() {
        return wheel;
    }
    #[cfg(feature = "tokio")]
    if let Some(wheel) = crate::tokio_default::current() {
        return wheel;
    }
    &GLOBAL_CHOSEN
}
