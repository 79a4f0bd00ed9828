//! `DefaultWheel` without the `tokio` and `test-util` features: zero bytes, always the global
//! wheel.

use punctual_core::{RawWheel, Reading, WheelRef};

use super::DefaultWheel;
use crate::global::Global;

impl core::fmt::Debug for DefaultWheel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DefaultWheel")
            .field("chosen", &"the global wheel")
            .finish()
    }
}

impl DefaultWheel {
    /// A handle; there is nothing to choose.
    pub const fn new() -> Self {
        Self {}
    }
}

// SAFETY: always the global wheel (`Global`'s).
unsafe impl WheelRef for DefaultWheel {
    type Target = <Global as WheelRef>::Target;
    type Instant = crate::instant::Now;

    #[inline(always)]
    fn get(&self) -> &Self::Target {
        Global.get()
    }

    #[inline]
    fn instant_of(&self, at: Reading) -> Self::Instant {
        crate::instant::instant_of(self.global_reading(at))
    }

    #[inline]
    fn reading_at(&self, at: Reading) -> Reading {
        // The global wheel's clock may be `BootClock` (`global::reading_at`).
        crate::global::reading_at(at)
    }
}

impl DefaultWheel {
    /// The wheel a budget made for this handle names: the global wheel.
    pub(crate) fn budget_wheel(&self) -> &'static dyn RawWheel {
        crate::global::global_wheel()
    }
}

impl DefaultWheel {
    /// `at`, a reading of the global wheel's clock, on the std reference.
    pub(crate) fn global_reading(&self, at: Reading) -> Reading {
        crate::global::std_reading(at)
    }
}
