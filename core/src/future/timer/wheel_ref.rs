//! How a deadline reaches its [`Wheel`]: [`RawWheel`] and [`WheelRef`].

use core::task::Waker;

use crate::clock::Clock;
use crate::time::{Due, Limit, Reading};
use crate::wheel::Wheel;
use crate::wheel::entry::Index;
use crate::wheel::start::Started;
use crate::wheel::storage::Storage;

mod sealed {
    pub trait Sealed {}
}

/// What a [`Deadline`](crate::Deadline) needs of a [`Wheel`], as a trait object. Sealed.
pub trait RawWheel: Sync + sealed::Sealed {
    #[doc(hidden)]
    fn start(&self, due: Due, cap: Option<Reading>, waker: &Waker) -> Started;
    #[doc(hidden)]
    fn target(&self, limit: Limit) -> Option<Reading>;
    #[doc(hidden)]
    fn poll_armed(&self, armed: &Armed, waker: &Waker) -> bool;
    #[doc(hidden)]
    fn has_fired(&self, armed: &Armed) -> bool;
    #[doc(hidden)]
    fn release(&self, armed: &Armed) -> bool;
    #[doc(hidden)]
    fn release_fired(&self, armed: &Armed);
    #[doc(hidden)]
    fn deadline_of(&self, armed: &Armed) -> Reading;
    #[doc(hidden)]
    fn now(&self) -> Reading;
    #[doc(hidden)]
    fn tick(&self) -> core::time::Duration;
    #[doc(hidden)]
    fn wake_drivers(&self);
    #[doc(hidden)]
    fn degraded_poll(&self, waker: &Waker, now: Reading) -> bool;
    /// Counts a request refused for too little time left, as `punctual-tower`'s admission
    /// does ([`Stats::refused`](crate::Stats::refused)); without `stats`, nothing.
    fn count_refused(&self);
    /// Counts a fire seen past the overrun threshold ([`Stats::overruns`](crate::Stats::overruns)).
    #[doc(hidden)]
    fn count_overrun(&self);
}

/// An armed entry, as a deadline holds it: the index (its generation cannot change while
/// owned), and the requested span if the entry is due at its start plus that span (`None`
/// for a cap in force, an instant, or after running degraded).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Armed {
    pub(crate) index: Index,
    pub(crate) span: Option<u64>,
}

impl<C: Clock, S: Storage> sealed::Sealed for Wheel<C, S> {}

/// How a deadline reaches its wheel: `&dyn RawWheel` reaches any wheel (16 bytes, an
/// indirect call per operation); a zero-sized handle to a `static` wheel costs nothing.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{Deadline, Fixed, Limit, ManualClock, Wheel, WheelRef};
///
/// static WHEEL: Wheel<ManualClock, Fixed<8>> =
///     Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
///
/// #[derive(Clone, Copy)]
/// struct MyWheel;
///
/// // SAFETY: always the same `static` wheel.
/// unsafe impl WheelRef for MyWheel {
///     type Target = Wheel<ManualClock, Fixed<8>>;
///     type Instant = punctual_core::Reading;
///     fn get(&self) -> &Self::Target {
///         &WHEEL
///     }
///     fn instant_of(&self, at: punctual_core::Reading) -> Self::Instant {
///         at
///     }
/// }
///
/// let limit = Limit::After(Duration::from_millis(5));
/// let wheel: &dyn punctual_core::RawWheel = &WHEEL;
/// let by_ref = Deadline::new(core::future::pending::<()>(), wheel, limit);
/// let by_handle = Deadline::new(core::future::pending::<()>(), MyWheel, limit);
/// assert_eq!(size_of_val(&by_ref) - size_of_val(&by_handle), 16);
/// ```
///
/// # Safety
///
/// From a [`WheelRef::choose`] until the next [`WheelRef::forget_choice`] (always, if
/// `choose` does nothing), [`WheelRef::get`] must return the same wheel on every call and
/// copy, and `choose` again must not change it: a deadline releases its entry, by index,
/// on the wheel it gets later.
pub unsafe trait WheelRef: Copy + Unpin {
    /// The wheel's type: a [`Wheel`], or `dyn RawWheel`.
    type Target: RawWheel + ?Sized;

    /// What [`Interval::tick`] and [`Sleep::deadline`] report: [`Reading`] on a wheel
    /// reached directly; the runtime's instant on `punctual`'s default handle.
    ///
    /// [`Interval::tick`]: crate::Interval::tick
    /// [`Sleep::deadline`]: crate::Sleep::deadline
    type Instant: Copy + core::fmt::Debug;

    /// The wheel.
    fn get(&self) -> &Self::Target;

    /// `at`, a reading of the chosen wheel's clock, as this handle's
    /// [`Instant`](WheelRef::Instant): an instant given comes back equal. One too far for
    /// the type (or [`Reading::END`]) gives one centuries on.
    fn instant_of(&self, at: Reading) -> Self::Instant;

    /// Settles which wheel a handle that picks late reaches (`punctual`'s default handle:
    /// its runtime's). A timer calls it at each start, before [`get`](WheelRef::get), on
    /// the copy it keeps. The default does nothing.
    #[inline(always)]
    fn choose(&mut self) {}

    /// The reading of this wheel at which `Limit::At(at)` ends: `at`, unless the handle's
    /// instants are another clock's. Called after [`choose`](WheelRef::choose), never
    /// before the moment `at` stands for.
    #[inline(always)]
    fn reading_at(&self, at: Reading) -> Reading {
        at
    }

    /// Lets the handle choose again (a timer starting over with no entry). Default: nothing.
    #[inline(always)]
    fn forget_choice(&mut self) {}

    /// The wheel's address, to tell wheels apart (budgets apply to their own wheel only).
    #[doc(hidden)]
    #[inline]
    fn id(&self) -> usize {
        (self.get() as *const Self::Target).cast::<()>() as usize
    }
}

// SAFETY: a reference always points to the same wheel.
unsafe impl<T: RawWheel + ?Sized> WheelRef for &T {
    type Target = T;
    type Instant = Reading;

    #[inline]
    fn get(&self) -> &T {
        self
    }

    #[inline]
    fn instant_of(&self, at: Reading) -> Reading {
        at
    }
}
