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
///
/// Lives for the rest of the process, as its wheel does: a runtime's or a paused
/// thread's wheel is never freed, so a deadline may keep its choice past its thread. Such
/// a wheel is reused once its thread is gone and nothing is armed on it (it may then
/// serve another runtime or thread), which only a deadline that starts again after a
/// reset, past its thread, ever sees.
#[cfg(any(feature = "tokio", feature = "test-util"))]
pub(crate) struct Chosen {
    pub(crate) wheel: &'static dyn RawWheel,
    /// A runtime's clock, which reads behind the global clock by a fraction of a tick;
    /// `None` for a clock that reads the global clock's readings.
    #[cfg(feature = "tokio")]
    pub(crate) runtime_clock: Option<&'static crate::tokio_default::RuntimeClock>,
    /// The wheel's clock reads what the global wheel's reads, at every moment (a
    /// multi-thread runtime's wheel, on the real source with no offset, while the global
    /// wheel is on `StdClock`): a budget started on either applies on the other, so that
    /// a request's budget follows its task from worker to worker.
    pub(crate) on_global_timeline: bool,
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

    #[inline]
    fn reading_at(&self, at: punctual_core::Reading) -> punctual_core::Reading {
        // Instants come as readings of the std reference: the global wheel's clock may be
        // another (`global::reading_at`).
        crate::global::reading_at(at)
    }
}

#[cfg(any(feature = "tokio", feature = "test-util"))]
// SAFETY: `choose` settles `chosen` (the global wheel included, stored as any other) and
// a repeated `choose` keeps it; only `forget_choice` clears it. So from a `choose` to the
// next `forget_choice`, `get` returns the one wheel chosen, on every copy. `reading_at`
// only ever moves an instant later on the chosen wheel's clock (it reads behind), or
// carries it over to the global wheel's clock (`global::reading_at`).
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
            // The global wheel's clock may be another than the std reference
            // (`global::reading_at`).
            Some(chosen) if core::ptr::eq(chosen, &GLOBAL_CHOSEN) => crate::global::reading_at(at),
            Some(chosen) => chosen.reading_at(at),
            None => crate::global::reading_at(at),
        }
    }

    #[inline]
    fn forget_choice(&mut self) {
        self.chosen = None;
    }

    /// Budgets apply across the wheels whose clocks read the same (see
    /// `Chosen::on_global_timeline`): those answer the global wheel's address.
    #[inline]
    fn id(&self) -> usize {
        (self.budget_wheel() as *const dyn RawWheel).cast::<()>() as usize
    }
}

#[cfg(any(feature = "tokio", feature = "test-util"))]
impl Ambient {
    /// The wheel a budget made for this handle names (`Budget::new`): the chosen one, or
    /// the global wheel for every wheel that reads the global wheel's clock (see
    /// [`WheelRef::id`]).
    pub(crate) fn budget_wheel(&self) -> &'static dyn RawWheel {
        match self.chosen {
            Some(chosen) if !chosen.on_global_timeline => chosen.wheel,
            _ => crate::global::global_wheel(),
        }
    }
}

#[cfg(not(any(feature = "tokio", feature = "test-util")))]
impl Ambient {
    /// The wheel a budget made for this handle names: the global wheel.
    pub(crate) fn budget_wheel(&self) -> &'static dyn punctual_core::RawWheel {
        crate::global::global_wheel()
    }
}

impl Ambient {
    /// `at`, a reading of the chosen wheel's clock, as a reading of the global clock: the
    /// inverse of `reading_at`, so that an instant can move from one default wheel to
    /// another (a budget carried into a task polled on another thread).
    #[cfg(any(feature = "tokio", feature = "test-util"))]
    pub(crate) fn global_reading(&self, at: Reading) -> Reading {
        #[cfg(feature = "tokio")]
        if let Some(clock) = self.chosen.and_then(|chosen| chosen.runtime_clock) {
            return at.checked_add(clock.behind()).unwrap_or(Reading::END);
        }
        at
    }

    /// The global wheel's readings are the global clock's.
    #[cfg(not(any(feature = "tokio", feature = "test-util")))]
    pub(crate) fn global_reading(&self, at: punctual_core::Reading) -> punctual_core::Reading {
        at
    }
}

/// The global wheel, as a default deadline chooses it.
#[cfg(any(feature = "tokio", feature = "test-util"))]
static GLOBAL_CHOSEN: Chosen = Chosen {
    wheel: crate::global::global_wheel_static(),
    #[cfg(feature = "tokio")]
    runtime_clock: None,
    on_global_timeline: true,
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
