//! Building a wheel. Options are `const` (for a `static`), chosen before the wheel is
//! shared; without `std` every option but the storage is off, and compiled out.

use core::time::Duration;

use super::entry::PlainLink;
use super::levels::Grain;
use super::levels::Levels;

use super::SHARDS;
use super::lists::{self, Inbox, NeverUsed};
use super::role::Plan;
use super::stats::Counters;
use super::turn::DriverState;
use super::wakers::{DegradedWakers, DriverWakers};
use super::{Fixed, Storage, Wheel, heads};
use crate::clock::Clock;
use crate::sync::{AtomicU32, UnsafeCell, padded};
use crate::time::{StoredTick, Tick, TickDivisor};

const fn tick_nanos(tick: Duration) -> u64 {
    let nanos = tick.as_nanos();
    assert!(nanos > 0, "punctual: a wheel's tick must be at least 1 ns");
    assert!(
        nanos <= u64::MAX as u128,
        "punctual: a wheel's tick must be below 584 years"
    );
    nanos as u64
}

impl<C: Clock, const N: usize, W: heads::IndexWidth, const L: usize> Wheel<C, Fixed<N, W, L>> {
    crate::sync::const_fn! {
        /// A wheel of `N` entries and the given `tick`, usable in a `static`.
        ///
        /// # Panics
        ///
        /// If `tick` is zero or 2<sup>64</sup> ns or more (at compile time in a `static`).
        pub fn fixed(clock: C, tick: Duration) -> Self {
            Self::with_storage(clock, tick, Fixed::new())
        }
    }
}

#[cfg(feature = "alloc")]
impl<C: Clock> Wheel<C, crate::Growable> {
    crate::sync::const_fn! {
        /// A wheel that grows as deadlines are armed, with the given `tick`.
        ///
        /// # Panics
        ///
        /// If `tick` is zero or 2<sup>64</sup> ns or more.
        pub fn growable(clock: C, tick: Duration) -> Self {
            Self::with_storage(clock, tick, crate::Growable::new())
        }
    }
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    crate::sync::const_fn! {
        fn with_storage(clock: C, tick: Duration, storage: S) -> Self {
            Self {
                clock,
                tick: StoredTick::new(TickDivisor::new(tick_nanos(tick))),
                storage,
                shards: crate::sync::array_of![lists::new_shard(); SHARDS],
                never_used: NeverUsed::new(),
                role: AtomicU32::new(0),
                driver_wakers: DriverWakers::new(),
                degraded_wakers: DegradedWakers::new(),
                plan: padded(Plan {
                    next_wake: AtomicU32::new(0),
                    offset: AtomicU32::new(0),
                    word: AtomicU32::new(0),
                }),
                driver: padded(UnsafeCell::new(DriverState {
                    levels: Levels::new(),
                    to_wake: PlainLink::NIL,
                    to_wake_tail: PlainLink::NIL,
                    linger_until: Tick::new(0),
                    started: false,
                    degraded_waiting: false,
                    handed_at: Tick::new(0),
                    grain: Grain::NANOS,
                    precise_fires: false,
                })),
                counters: padded(Counters::new()),
                handoff: padded(Inbox::new()),
                spares: false,
                precise_fires: core::sync::atomic::AtomicBool::new(false),
                batched_wakes: false,
            }
        }
    }

    crate::sync::const_fn! {
        /// For a wheel driven by a thread of its own: a turn wakes the first task it
        /// fired, whose poll wakes the rest on its own thread (else the next tick's turn).
        #[must_use]
        pub fn with_batched_wakes(mut self) -> Self {
            self.batched_wakes = true;
            self
        }
    }

    crate::sync::const_fn! {
        /// Fires every deadline at the first turn after its own time, in crowded slots
        /// too (else fired at their tick's end): for a driver on a timer coarser than its
        /// ticks (tokio's). A driver on a precise timer wakes at each planned instant.
        ///
        /// ```
        /// use core::time::Duration;
        /// use punctual_core::{Fixed, ManualClock, Wheel};
        ///
        /// static WHEEL: Wheel<ManualClock, Fixed<64>> =
        ///     Wheel::fixed(ManualClock::new(), Duration::from_millis(1)).with_precise_fires();
        /// ```
        #[must_use]
        pub fn with_precise_fires(mut self) -> Self {
            self.precise_fires = core::sync::atomic::AtomicBool::new(true);
            self
        }
    }

    /// Turns precise fires ([`with_precise_fires`](Self::with_precise_fires)) on or off
    /// from the next turn, for a driver that changes timers while it runs. Does nothing
    /// without `std`.
    pub fn set_precise_fires(&self, on: bool) {
        self.precise_fires
            .store(on, core::sync::atomic::Ordering::Relaxed);
    }

    /// Lets each thread keep the last entry it freed here for its next deadline. A kept
    /// entry is not [`occupied`](Wheel::occupied), yet no other thread can take it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_core::{Fixed, ManualClock, Wheel};
    ///
    /// // SAFETY: a `static` stays at its address for the rest of the process.
    /// static WHEEL: Wheel<ManualClock, Fixed<64>> = unsafe {
    ///     Wheel::fixed(ManualClock::new(), Duration::from_millis(1)).with_thread_spares()
    /// };
    /// ```
    ///
    /// # Safety
    ///
    /// Once a deadline has run on it, the wheel is never moved nor dropped (a `static`, a
    /// leaked wheel): threads give kept entries back by its address.
    #[must_use]
    pub const unsafe fn with_thread_spares(mut self) -> Self {
        self.spares = true;
        self
    }

    /// The wheel, never freed, with [`Wheel::with_thread_spares`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_core::{Growable, ManualClock, Wheel};
    ///
    /// static WHEEL: std::sync::OnceLock<&'static Wheel<ManualClock, Growable>> =
    ///     std::sync::OnceLock::new();
    /// let wheel = WHEEL.get_or_init(|| Wheel::growable(ManualClock::new(), Duration::from_millis(1)).leak());
    /// assert_eq!(wheel.occupied(), 0);
    /// ```
    #[cfg(feature = "alloc")]
    pub fn leak(self) -> &'static Self
    where
        Self: 'static,
    {
        extern crate alloc;
        // SAFETY: leaked, so never moved nor dropped.
        let wheel = unsafe { self.with_thread_spares() };
        alloc::boxed::Box::leak(alloc::boxed::Box::new(wheel))
    }

    /// Batched wakes are on (never without `std`).
    #[inline]
    pub(super) fn batched(&self) -> bool {
        cfg!(feature = "std") && self.batched_wakes
    }

    /// Precise fires are on (never without `std`).
    #[inline]
    pub(super) fn precise_fires(&self) -> bool {
        cfg!(feature = "std")
            && self
                .precise_fires
                .load(core::sync::atomic::Ordering::Relaxed)
    }
}
