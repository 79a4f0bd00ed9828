//! `Deadline<F>`: a future that is given up when its time runs out.
//!
//! * The inner future lives until the timer's `inner_gone` mark is set; it is never
//!   polled after.
//! * The mark is set before the future is dropped, so a panicking drop never runs twice.
//! * A fire already decided wins over polling the inner future.
//! * The ambient budget caps the timer only at its start; a capped fire asks it for a name.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use core::marker::PhantomData;
use core::mem::ManuallyDrop;

use crate::Elapsed;
use crate::future::budget::{self, Budget};
use crate::future::timer::{RawWheel, Timer, WheelRef};
use crate::time::Limit;

/// A future bounded by a deadline: it resolves to `Ok` with the inner future's output,
/// or to `Err(Elapsed)` once the deadline passes, having dropped the inner future.
///
/// Made by `punctual::DeadlineExt` (the global wheel) or by [`Wheel::deadline`] /
/// [`Wheel::deadline_at`](crate::Wheel::deadline_at) (a wheel of your own). `W` is how it
/// reaches its wheel ([`WheelRef`]), `N` its name: [`Unnamed`] (no bytes) until
/// [`named`](Deadline::named) makes it [`Named`].
///
/// # Semantics
///
/// * **Cancel, don't abandon.** When the deadline fires, the inner future is dropped
///   (its destructor runs) before `Err(Elapsed)` is returned, and it is never polled
///   again. Dropping the `Deadline` drops the inner future and releases the timer.
/// * **Never early.** `Err(Elapsed)` is never returned before the requested time has
///   passed on the wheel's clock.
/// * **When the clock starts.** The inner future is polled first. If it is ready at its
///   first poll, the result is returned and no clock is read, no timer is armed and no
///   shared memory is touched. Otherwise a relative deadline starts then.
/// * **Decided once.** A result the inner future produced before the fire was observed
///   is returned as `Ok`; after the fire is observed, the inner future is not polled.
/// * **Odd limits.** A deadline already passed when the inner future first returns
///   `Pending` (`Duration::ZERO`, an instant in the past) fires at that poll, without
///   arming. A deadline never fires and holds no entry if its limit is `u64::MAX`
///   nanoseconds or more (about 584 years; `Duration::MAX` is one), or if it ends at or
///   past the clock reading [`Reading::END`](crate::Reading::END).
/// * **Full wheel.** If a fixed-capacity wheel has no free entry, the deadline runs
///   *degraded*. Each poll checks the clock and tries to arm again; otherwise it waits
///   for the driver's next turn to wake it (counted in [`Wheel::degraded_polls`]). It
///   still never fires early, and ends within a tick or two of its time. The wheel keeps
///   the wakers of four such tasks at once. A fifth task's deadline asks to be polled
///   again at once instead: a busy task, and no auto-advance of a paused tokio clock
///   meanwhile. A kept waker is woken once by the next turn, even if its deadline was
///   dropped or armed since. From 2^57 ns of the clock on (about 4.5 years), a degraded
///   deadline keeps its target rounded up to 128 ns. It may then fire up to 127 ns late
///   (254 ns in the clock's last 256 ns): more than two ticks if a tick is under 128 ns.
///
/// # Precision
///
/// With a driver that is not starved, the deadline fires at most two ticks of the
/// wheel after the requested time. One of few (up to 8) due within the same tick usually
/// fires at its own time, as late only as the driver's wake-up; in busier ticks, at the
/// tick's end.
///
/// # Cancel safety
///
/// Dropping a `Deadline` is always safe: it drops the inner future, with whatever that
/// means for it, and releases the timer without an error or event. Whether work the
/// inner future had started is lost is up to the inner future.
///
/// # Panics
///
/// Polling a `Deadline` after it returned `Ready` panics, and so does polling it again after
/// a poll of it panicked (a waker or `tracing` subscriber that panics; the timer's entry
/// was released as that poll unwound).
///
/// [`Wheel::deadline`]: crate::Wheel::deadline
/// [`Wheel::degraded_polls`]: crate::Wheel::degraded_polls
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Deadline<'w, F, W: WheelRef = &'w dyn RawWheel, N: DeadlineName = Unnamed> {
    // Structurally pinned: never moved while pinned, only dropped in place (or moved out
    // by `into_inner` or `named`, which take the deadline by value). Live until
    // `timer.inner_gone()`: the flag sits in the timer's spare bits, which saves the word
    // an `Option<F>` tag would take beside most futures.
    future: ManuallyDrop<F>,
    timer: Timer<W>,
    name: N,
    wheel: PhantomData<&'w ()>,
}

/// A deadline's name, as part of its type: [`Unnamed`] (no bytes at all) until
/// [`Deadline::named`] makes it [`Named`]. Sealed.
pub trait DeadlineName: Copy + sealed::Sealed {
    /// The name, if any.
    fn get(&self) -> Option<&'static str>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Unnamed {}
    impl Sealed for super::Named {}
}

/// The name of a deadline that has none: zero bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unnamed;

impl DeadlineName for Unnamed {
    #[inline(always)]
    fn get(&self) -> Option<&'static str> {
        None
    }
}

/// The name of a deadline made by [`Deadline::named`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named(pub &'static str);

impl DeadlineName for Named {
    #[inline(always)]
    fn get(&self) -> Option<&'static str> {
        Some(self.0)
    }
}

impl<'w, F: Future, W: WheelRef> Deadline<'w, F, W> {
    /// Bounds `future` by `limit` on `wheel` (a `&dyn RawWheel`, or a [`WheelRef`] of a
    /// `static` wheel).
    pub const fn new(future: F, wheel: W, limit: Limit) -> Self {
        Self {
            future: ManuallyDrop::new(future),
            timer: Timer::new(wheel, limit),
            name: Unnamed,
            wheel: PhantomData,
        }
    }
}

impl<'w, F: Future, W: WheelRef, N: DeadlineName> Deadline<'w, F, W, N> {
    /// Names the deadline: the name is carried by [`Elapsed`] and shown by its `Display`.
    /// The name is part of the type (a [`Named`] deadline is 16 bytes larger), so that
    /// deadlines without one pay nothing for it.
    ///
    /// An `Elapsed` describes the limit that passed. When a [`Budget`]
    /// ends the deadline before its own duration, the `Elapsed` is the budget's
    /// ([`Elapsed::is_budget`]): the budget's duration, and the budget's name (none if
    /// the budget has none), not this one.
    ///
    /// ```
    /// # use core::time::Duration;
    /// # use punctual_core::{Fixed, ManualClock, Wheel};
    /// # let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// # let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
    /// let mut d = core::pin::pin!(wheel.deadline(Duration::ZERO, core::future::pending::<()>()).named("pricing"));
    /// let err = d.as_mut().poll(&mut cx);
    /// assert_eq!(err.map(|r| r.unwrap_err().name()), core::task::Poll::Ready(Some("pricing")));
    /// ```
    ///
    /// # Panics
    ///
    /// If the deadline has completed (the inner future is gone), as the other accessors.
    pub fn named(self, name: &'static str) -> Deadline<'w, F, W, Named> {
        assert!(
            !self.timer.inner_gone(),
            "`Deadline::named` called after completion"
        );
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so each field is read out exactly once, into
        // the new deadline; not pinned (taken by value), so moving the future is allowed;
        // and the future is live (just checked): a dropped one (a freed `Box`, say) must
        // not be copied, even into a `ManuallyDrop`.
        let (future, timer) =
            unsafe { (core::ptr::read(&this.future), core::ptr::read(&this.timer)) };
        Deadline {
            future,
            timer,
            name: Named(name),
            wheel: PhantomData,
        }
    }

    /// The deadline's name, if any.
    pub fn name(&self) -> Option<&'static str> {
        self.name.get()
    }

    /// The inner future.
    ///
    /// # Panics
    ///
    /// If the deadline has completed (the inner future is gone).
    pub fn get_ref(&self) -> &F {
        assert!(
            !self.timer.inner_gone(),
            "`Deadline::get_ref` called after completion"
        );
        &self.future
    }

    /// The inner future, mutably.
    ///
    /// # Panics
    ///
    /// If the deadline has completed (the inner future is gone).
    pub fn get_mut(&mut self) -> &mut F {
        assert!(
            !self.timer.inner_gone(),
            "`Deadline::get_mut` called after completion"
        );
        &mut self.future
    }

    /// The inner future, pinned.
    ///
    /// # Panics
    ///
    /// If the deadline has completed (the inner future is gone).
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut F> {
        // SAFETY: the future is structurally pinned (see the field): the reference given
        // out is pinned, and nothing moves the future while the deadline is pinned.
        let this = unsafe { self.get_unchecked_mut() };
        assert!(
            !this.timer.inner_gone(),
            "`Deadline::get_pin_mut` called after completion"
        );
        // SAFETY: as above; the future is live (not gone).
        unsafe { Pin::new_unchecked(&mut *this.future) }
    }

    /// The inner future, releasing the timer.
    ///
    /// # Panics
    ///
    /// If the deadline has completed (the inner future is gone).
    pub fn into_inner(self) -> F {
        assert!(
            !self.timer.inner_gone(),
            "`Deadline::into_inner` called after completion"
        );
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so each field is read out exactly once: the
        // future (live, as just checked) is returned, the timer dropped here.
        let (future, timer) = unsafe {
            (
                ManuallyDrop::take(&mut this.future),
                core::ptr::read(&this.timer),
            )
        };
        drop(timer);
        future
    }
}

impl<F: Future, W: WheelRef, N: DeadlineName> Deadline<'_, F, W, N> {
    /// `poll`, with the budget that bounds this deadline (explicit, or else the ambient
    /// one with `std`). Always inlined, with [`Future::poll`], so that a deadline whose
    /// inner future is ready at once stays in registers.
    #[inline(always)]
    pub(crate) fn poll_capped(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        budget: Option<&Budget>,
    ) -> Poll<Result<F::Output, Elapsed>> {
        // SAFETY: the future is structurally pinned: below it is only polled through a
        // `Pin` made in place, and dropped in place; nothing is moved out.
        let this = unsafe { self.get_unchecked_mut() };
        if this.timer.inner_gone() {
            panic!("`Deadline` polled after completion");
        }
        // A fire already decided wins: the inner future is not polled after it.
        let name = this.name.get();
        if let Some(fired) = this.timer.has_fired() {
            this.drop_future();
            return Poll::Ready(Err(budget::elapsed_of(&fired, name, budget)));
        }
        // SAFETY: pinned in place, live (checked above).
        let future = unsafe { Pin::new_unchecked(&mut *this.future) };
        if let Poll::Ready(output) = future.poll(cx) {
            #[cfg(feature = "count-ready")]
            this.timer.count_ready_if_unstarted();
            this.drop_future();
            this.timer.release();
            return Poll::Ready(Ok(output));
        }
        let ambient;
        let budget = match budget {
            Some(budget) => Some(budget),
            None if !this.timer.is_started() => {
                ambient = budget::ambient();
                ambient.as_ref()
            }
            None => None,
        };
        match this.timer.poll_fired(cx, budget.map(|b| &b.cap)) {
            Poll::Ready(fired) => {
                this.drop_future();
                Poll::Ready(Err(budget::elapsed_of(&fired, name, budget)))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Drops the inner future in place, once: marked gone first, so that a destructor that
    /// panics is not run twice (by `Drop for Deadline`).
    #[inline]
    fn drop_future(&mut self) {
        debug_assert!(!self.timer.inner_gone());
        self.timer.set_inner_gone();
        // SAFETY: the future was live and is now marked gone, so it is dropped exactly
        // once; dropping in place keeps the pinning guarantee.
        unsafe { ManuallyDrop::drop(&mut self.future) };
    }
}

impl<F, W: WheelRef, N: DeadlineName> Drop for Deadline<'_, F, W, N> {
    fn drop(&mut self) {
        if !self.timer.inner_gone() {
            self.timer.set_inner_gone();
            // SAFETY: live and now marked gone: dropped exactly once, in place. The timer
            // (a field) is dropped after this, releasing the entry.
            unsafe { ManuallyDrop::drop(&mut self.future) };
        }
    }
}

impl<F: Future, W: WheelRef, N: DeadlineName> Future for Deadline<'_, F, W, N> {
    type Output = Result<F::Output, Elapsed>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.poll_capped(cx, None)
    }
}

impl<F, W: WheelRef, N: DeadlineName> fmt::Debug for Deadline<'_, F, W, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deadline")
            .field("name", &self.name.get())
            .field("running", &!self.timer.inner_gone())
            .field("timer", &self.timer)
            .finish()
    }
}
