//! The global wheel, for default deadlines outside a runtime or virtual time: driven by a
//! timer thread (`thread.rs`), or the host's timers on the web (`web.rs`). A deadline whose
//! future is ready at its first poll never reads its clock.

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
mod state;
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
mod thread;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
mod web;

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
pub use thread::*;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
pub use web::*;

use punctual_core::{ClockInstant, Growable, Reading, Wheel, WheelRef};

/// A handle on the global wheel: zero bytes, with calls straight to the `static` wheel.
/// Default deadlines use `punctual::wheel::DefaultWheel` instead, which may
/// pick a runtime's wheel; `Global` is always the global wheel.
#[derive(Debug, Clone, Copy, Default)]
pub struct Global;

// SAFETY: always the one `static` wheel, on every target.
unsafe impl WheelRef for Global {
    type Target = Wheel<GlobalClock, Growable>;
    type Instant = Reading;

    #[inline]
    fn get(&self) -> &Self::Target {
        global_wheel()
    }

    #[inline]
    fn instant_of(&self, at: Reading) -> Reading {
        at
    }
}

impl ClockInstant<GlobalClock> for Instant {
    #[inline]
    fn reading_on(self, _: &GlobalClock) -> Reading {
        GlobalClock::reading_of(self)
    }
}

/// The global wheel, for diagnostics ([`Wheel::occupied`]) and for
/// [`Deadline::new`](punctual_core::Deadline::new) with an explicit
/// [`Limit`](punctual_core::Limit).
#[inline]
pub const fn global_wheel() -> &'static Wheel<GlobalClock, Growable> {
    &GLOBAL
}
