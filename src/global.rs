//! The global wheel, for default deadlines outside a runtime or virtual time: driven by a
//! timer thread (`thread.rs`), or the host's timers on the web (`web.rs`), the same items.

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

use punctual_core::{Growable, Reading, Wheel, WheelRef};

/// A handle on the global wheel: zero bytes, with calls straight to the `static` wheel.
/// Default deadlines use [`DefaultWheel`](crate::wheel::DefaultWheel) instead, which may
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
