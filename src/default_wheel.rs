//! [`DefaultWheel`]: how a default deadline reaches its wheel, chosen at its first pending
//! poll, never on the ready path: a paused thread's, a tokio runtime's, else the global one.
//! * `choose` settles the choice for the deadline's life; only `forget_choice` clears it
//!   (an idle timeout chooses again for each gap, holding no entry between gaps).
//! * Budgets on a wheel on the global timeline name the global wheel (`budget_wheel`).
//! * Its instants are `Now` (tokio's with `tokio`, `web_time`'s on the web, else `std`'s),
//!   made from readings of the global wheel's std clock by `instant_of`.

use punctual_core::{RawWheel, Reading, WheelRef};

#[cfg(any(feature = "tokio", feature = "test-util"))]
use crate::wheel_choice::WheelChoice;

/// How a default deadline reaches its wheel: the wheel of the runtime or virtual time it is
/// first polled in, or the global wheel (see [`DeadlineExt`](crate::DeadlineExt)). Without
/// the `tokio` and `test-util` features it is zero bytes and always the global wheel.
#[derive(Clone, Copy, Default)]
pub struct DefaultWheel {
    #[cfg(any(feature = "tokio", feature = "test-util"))]
    chosen: Option<&'static WheelChoice>,
}

impl core::fmt::Debug for DefaultWheel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        #[cfg(any(feature = "tokio", feature = "test-util"))]
        let chosen = self
            .chosen
            .map(|chosen| (chosen.wheel as *const dyn RawWheel).cast::<()>());
        #[cfg(not(any(feature = "tokio", feature = "test-util")))]
        let chosen = "the global wheel";
        f.debug_struct("DefaultWheel")
            .field("chosen", &chosen)
            .finish()
    }
}

// SAFETY: without `tokio` and `test-util`, always the global wheel. With them, `choose`
// settles `chosen` (the global wheel included, stored as any other) and a repeated `choose`
// keeps it; only `forget_choice` clears it. So from a `choose` to the next `forget_choice`,
// `get` returns the one wheel chosen, on every copy. `reading_at` only ever moves an
// instant later on the chosen wheel's clock (it reads behind), or carries it over to the
// global wheel's clock (`global::reading_at`).
unsafe impl WheelRef for DefaultWheel {
    #[cfg(any(feature = "tokio", feature = "test-util"))]
    type Target = dyn RawWheel;
    #[cfg(not(any(feature = "tokio", feature = "test-util")))]
    type Target = <crate::global::Global as WheelRef>::Target;
    type Instant = Now;

    #[inline(always)]
    fn get(&self) -> &Self::Target {
        #[cfg(any(feature = "tokio", feature = "test-util"))]
        if let Some(chosen) = self.chosen {
            return chosen.wheel;
        }
        crate::global::global_wheel()
    }

    #[inline]
    fn instant_of(&self, at: Reading) -> Self::Instant {
        instant_of(self.global_reading(at))
    }

    #[cfg(any(feature = "tokio", feature = "test-util"))]
    #[inline]
    fn choose(&mut self) {
        self.chosen.get_or_insert_with(choose);
    }

    #[inline]
    fn reading_at(&self, at: Reading) -> Reading {
        #[cfg(any(feature = "tokio", feature = "test-util"))]
        if let Some(chosen) = self.chosen.filter(|c| !core::ptr::eq(*c, &GLOBAL_DEFAULT)) {
            return chosen.reading_at(at);
        }
        // The global wheel's clock may be `BootClock` (`global::reading_at`).
        crate::global::reading_at(at)
    }

    #[cfg(any(feature = "tokio", feature = "test-util"))]
    #[inline]
    fn forget_choice(&mut self) {
        self.chosen = None;
    }

    /// Wheels on the global timeline answer the global wheel's address, so budgets apply
    /// across them (`WheelChoice::on_global_timeline`).
    #[inline]
    fn id(&self) -> usize {
        (self.budget_wheel() as *const dyn RawWheel).cast::<()>() as usize
    }
}

impl DefaultWheel {
    /// A handle that has not chosen yet.
    pub const fn new() -> Self {
        Self {
            #[cfg(any(feature = "tokio", feature = "test-util"))]
            chosen: None,
        }
    }

    /// The wheel a budget made for this handle names (`Budget::new`): the chosen one, or the
    /// global wheel for a wheel on the global timeline (see [`WheelRef::id`]).
    pub(crate) fn budget_wheel(&self) -> &'static dyn RawWheel {
        #[cfg(any(feature = "tokio", feature = "test-util"))]
        if let Some(chosen) = self.chosen.filter(|chosen| !chosen.on_global_timeline) {
            return chosen.wheel;
        }
        crate::global::global_wheel()
    }

    /// `at`, a reading of the chosen wheel's clock, as a reading of the global clock.
    /// The inverse of `reading_at`: it moves an instant between default wheels.
    pub(crate) fn global_reading(&self, at: Reading) -> Reading {
        #[cfg(any(feature = "tokio", feature = "test-util"))]
        if let Some(chosen) = self.chosen.filter(|c| !core::ptr::eq(*c, &GLOBAL_DEFAULT)) {
            #[cfg(feature = "tokio")]
            if let Some(clock) = chosen.runtime_clock {
                return clock.reference_reading(at);
            }
            let _ = chosen;
            return at;
        }
        // The global wheel's clock may be another than the std reference.
        crate::global::std_reading(at)
    }
}

/// The global wheel, as a default deadline chooses it.
#[cfg(any(feature = "tokio", feature = "test-util"))]
static GLOBAL_DEFAULT: WheelChoice = WheelChoice {
    wheel: crate::global::global_wheel(),
    #[cfg(feature = "tokio")]
    runtime_clock: None,
    on_global_timeline: true,
};

/// The wheel for a deadline that starts now on this thread.
#[cfg(any(feature = "tokio", feature = "test-util"))]
#[inline(never)]
fn choose() -> &'static WheelChoice {
    #[cfg(feature = "test-util")]
    if let Some(wheel) = crate::virtual_time::current() {
        return wheel;
    }
    #[cfg(feature = "tokio")]
    if let Some(wheel) = crate::tokio_wheels::current() {
        return wheel;
    }
    &GLOBAL_DEFAULT
}

/// A default deadline: on the wheel of the runtime it is first polled in, or the global
/// wheel ([`DefaultWheel`]). See [`punctual_core::Deadline`] for the rules.
pub type Deadline<F> = punctual_core::Deadline<'static, F, DefaultWheel>;

/// A default deadline with a name ([`punctual_core::Deadline::named`]). The name is part
/// of the type, so deadlines without one carry no bytes for it.
pub type NamedDeadline<F> = punctual_core::Deadline<'static, F, DefaultWheel, punctual_core::Named>;

/// A default sleep. See [`punctual_core::Sleep`].
pub type Sleep = punctual_core::Sleep<'static, DefaultWheel>;

/// A default whole-stream deadline. See [`punctual_core::StreamDeadline`].
pub type StreamDeadline<S> = punctual_core::StreamDeadline<'static, S, DefaultWheel>;

/// A default idle timeout for a stream. See [`punctual_core::IdleTimeout`].
pub type IdleTimeout<S> = punctual_core::IdleTimeout<'static, S, DefaultWheel>;

/// A default interval. See [`punctual_core::Interval`].
pub type Interval = punctual_core::Interval<'static, DefaultWheel>;

/// The instant default futures report (`Interval::tick`, `Sleep::deadline`).
#[cfg(feature = "tokio")]
pub(crate) type Now = tokio::time::Instant;
#[cfg(not(feature = "tokio"))]
pub(crate) type Now = crate::global::Instant;

/// Three centuries: where past the origin an instant stands for a reading `Now` cannot
/// hold, or `Reading::END` (never). Ten times tokio's "far future".
const FAR: std::time::Duration = std::time::Duration::from_secs(86_400 * 365 * 300);

/// The instant of `at`, a reading of the std clock default instants are read on.
pub(crate) fn instant_of(at: Reading) -> Now {
    #[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
    let (exact, origin) = {
        // The inverse of `reading_of`, exactly: a tokio instant given comes back equal.
        let origin = crate::global::std_clock().origin();
        let exact = (at != Reading::END)
            .then(|| origin.checked_add(at.as_duration()))
            .flatten();
        (exact, origin)
    };
    #[cfg(all(target_family = "wasm", target_os = "unknown"))]
    let (exact, origin) = (
        crate::global::GlobalClock::instant_of(at),
        crate::global::GlobalClock::instant_of(Reading::ZERO).unwrap_or_else(Now::now),
    );
    let instant = exact.or_else(|| origin.checked_add(FAR)).unwrap_or(origin);
    #[allow(clippy::useless_conversion)]
    Now::from(instant)
}
