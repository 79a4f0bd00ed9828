//! `Deadline<F>`: a future that is given up when its time runs out.
//! * The inner future lives until the timer's `inner_dropped` mark, set before it is
//!   dropped (a panicking drop never runs twice); it is never polled after.
//! * A fire already decided wins over polling the inner future, and over a reset.
//! * On drop the inner future goes first, then the timer releases the entry.
//! * [`KeepOnElapsed`] moves its (`Unpin`) inner future out at the fire instead.
//! * [`Within`] is a deadline capped by an explicit [`Budget`] as well.

use core::fmt;
use core::future::Future;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;

use crate::Elapsed;
use crate::clock::ClockInstant;
use crate::future::budget::{self, Budget};
use crate::future::outcome::OutcomeKind;
use crate::future::timer::{Fired, RawWheel, Timer, WheelRef};
use crate::time::Limit;

pub use crate::future::outcome::{DeadlineName, Named, NamedResult, ReportsOutput, Unnamed};

/// A future bounded by a deadline: `Ok` with the inner future's output, or `Err(Elapsed)`
/// once the deadline passes, the inner future dropped first. Made by
/// `punctual::DeadlineExt` or [`Wheel::deadline`](crate::Wheel::deadline) /
/// [`Wheel::deadline_at`](crate::Wheel::deadline_at). `W` is how it reaches its wheel
/// ([`WheelRef`]); `N` its name, [`Unnamed`] until [`named`](Deadline::named).
///
/// # Semantics
///
/// * **Cancel, don't abandon**: on fire the inner future is dropped before `Err(Elapsed)`,
///   and never polled again.
/// * **Never early** on the wheel's clock; **at most two ticks late** with a driver that is
///   not starved (one of up to 8 due in a tick usually fires at its own time).
/// * **The clock starts** at the first `Pending` of the inner future, polled first: ready
///   at once, it reads no clock and arms no timer.
/// * **Decided once**: an output produced before the fire is observed is `Ok`.
/// * **Odd limits**: one passed at the first `Pending` (`Duration::ZERO`, a past instant)
///   fires then, unarmed; one of `u64::MAX` ns or more, or at or past
///   [`Reading::END`](crate::Reading::END), never fires and holds no entry.
/// * **Full wheel**: with no free entry the deadline runs *degraded*, never early, a tick
///   or two late: each poll checks the clock and tries to arm again
///   (`Wheel::degraded_polls`, with `stats`). The wheel keeps four such wakers, each woken
///   once by the next turn; a fifth task is asked to poll again at once. From 2^57 ns of
///   the clock a degraded target is rounded up to 128 ns (254 ns in the last 256 ns).
///
/// # Cancel safety
///
/// Dropping a `Deadline` drops the inner future and releases the timer, without an error
/// or event. Whether started work is lost is up to the inner future.
///
/// # Panics
///
/// Polling it after `Ready`, or again after a poll or a [reset](Deadline::reset) panicked
/// (a panicking waker or `tracing` subscriber; the entry was released as it unwound).
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Deadline<'w, F, W: WheelRef = &'w dyn RawWheel, N: DeadlineName = Unnamed> {
    // Structurally pinned: dropped in place, moved out only by value (`into_inner`,
    // `named`). Live until `timer.inner_dropped()`.
    future: ManuallyDrop<F>,
    timer: Timer<W>,
    name: N,
    wheel: PhantomData<&'w ()>,
}

impl<'w, F: Future, W: WheelRef> Deadline<'w, F, W> {
    /// Bounds `future` by `limit` on `wheel`.
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
    /// Names the deadline: its [`Elapsed`] carries the name, and its
    /// [`Outcome`](crate::Outcome) is reported when it ends
    /// ([`set_outcome_hook`](crate::set_outcome_hook)), timed from the first pending poll
    /// after naming. An `Elapsed` of a [`Budget`] that ended it first carries the budget's
    /// name ([`Elapsed::is_budget`]).
    ///
    /// # Panics
    ///
    /// If the deadline has completed, as the other accessors.
    pub fn named(self, name: &'static str) -> Deadline<'w, F, W, Named> {
        self.renamed("named", Named::new(name))
    }

    /// As [`named`](Deadline::named), its completion reported as
    /// [`Succeeded`](crate::OutcomeKind::Succeeded) or [`Failed`](crate::OutcomeKind::Failed)
    /// by the inner `Result`.
    ///
    /// # Panics
    ///
    /// If the deadline has completed, as the other accessors.
    pub fn named_result<T, E>(self, name: &'static str) -> Deadline<'w, F, W, NamedResult>
    where
        F: Future<Output = Result<T, E>>,
    {
        self.renamed("named_result", NamedResult::new(name))
    }

    /// Bounds this deadline by `budget` too: the `no_std` way (see [`Budgeted`](crate::Budgeted)).
    pub fn within(self, budget: Budget) -> Within<'w, F, W, N> {
        Within {
            deadline: self,
            budget,
        }
    }

    #[track_caller]
    fn renamed<M: DeadlineName>(self, what: &str, name: M) -> Deadline<'w, F, W, M> {
        self.check_live(what);
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so each field is read out once; taken by value,
        // so not pinned; the future is live (checked), so it may be copied.
        let (future, timer) =
            unsafe { (core::ptr::read(&this.future), core::ptr::read(&this.timer)) };
        Deadline {
            future,
            timer,
            name,
            wheel: PhantomData,
        }
    }

    /// Moves the deadline to `at` ([`ClockInstant`]), earlier or later, unless it has
    /// fired or completed: returns whether `at` is now in force. A fire that raced it wins
    /// (decided once). The next poll arms the new time, under the budget in force then:
    /// poll again after a reset.
    ///
    /// ```
    /// # use core::time::Duration;
    /// # use core::task::{Context, Poll, Waker};
    /// # use punctual_core::{Fixed, ManualClock, Wheel};
    /// # let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// # let mut cx = Context::from_waker(Waker::noop());
    /// let mut lease = core::pin::pin!(wheel.deadline(Duration::from_millis(10), core::future::pending::<()>()));
    /// assert!(lease.as_mut().poll(&mut cx).is_pending());
    /// wheel.advance(Duration::from_millis(8));
    /// // Renewed: 10 ms from now.
    /// assert!(lease.as_mut().reset(wheel.now() + Duration::from_millis(10)));
    /// wheel.advance(Duration::from_millis(9));
    /// assert!(lease.as_mut().poll(&mut cx).is_pending());
    /// wheel.advance(Duration::from_millis(1));
    /// assert!(matches!(lease.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
    /// ```
    pub fn reset(self: Pin<&mut Self>, at: impl ClockInstant<W>) -> bool {
        // SAFETY: the future is not moved; only the timer, which is not pinned, changes.
        let this = unsafe { self.get_unchecked_mut() };
        if this.timer.inner_dropped() {
            return false;
        }
        let at = at.reading_on(this.timer.wheel_ref());
        this.timer.reset_unless_fired(Limit::At(at))
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
        self.check_live("get_ref");
        &self.future
    }

    /// The inner future, mutably.
    ///
    /// # Panics
    ///
    /// If the deadline has completed (the inner future is gone).
    pub fn get_mut(&mut self) -> &mut F {
        self.check_live("get_mut");
        &mut self.future
    }

    /// The inner future, pinned.
    ///
    /// # Panics
    ///
    /// If the deadline has completed (the inner future is gone).
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut F> {
        // SAFETY: the future is structurally pinned (see the field).
        let this = unsafe { self.get_unchecked_mut() };
        this.check_live("get_pin_mut");
        // SAFETY: as above; the future is live (not gone).
        unsafe { Pin::new_unchecked(&mut *this.future) }
    }

    /// The inner future, releasing the timer.
    ///
    /// # Panics
    ///
    /// If the deadline has completed (the inner future is gone).
    pub fn into_inner(mut self) -> F {
        self.check_live("into_inner");
        self.report_dropped();
        self.timer.set_inner_dropped();
        // SAFETY: live, and now marked gone: taken exactly once, never dropped in place.
        unsafe { ManuallyDrop::take(&mut self.future) }
    }
}

impl<F, W: WheelRef, N: DeadlineName> Deadline<'_, F, W, N> {
    #[track_caller]
    fn check_live(&self, what: &str) {
        assert!(
            !self.timer.inner_dropped(),
            "`Deadline::{what}` called after completion"
        );
    }

    /// Reports a named deadline that ends without an output or a fire.
    #[inline(always)]
    fn report_dropped(&self) {
        let timer = &self.timer;
        let limit = || timer.reported_limit();
        self.name.ended(OutcomeKind::Dropped, limit, || timer.now());
    }

    /// Drops the inner future in place, marked gone first so a panicking drop runs once.
    #[inline]
    fn drop_future(&mut self) {
        debug_assert!(!self.timer.inner_dropped());
        self.timer.set_inner_dropped();
        // SAFETY: live and now marked gone: dropped exactly once, in place.
        unsafe { ManuallyDrop::drop(&mut self.future) };
    }
}

impl<F: Future, W: WheelRef, N: ReportsOutput<F::Output>> Deadline<'_, F, W, N> {
    /// `poll`, with the budget that bounds this deadline (explicit, else the ambient one).
    #[inline(always)]
    fn poll_capped(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        budget: Option<&Budget>,
    ) -> Poll<Result<F::Output, Elapsed>> {
        // SAFETY: structurally pinned: polled through a `Pin` made in place, dropped in place.
        let this = unsafe { self.get_unchecked_mut() };
        this.poll_inner(cx, budget, "Deadline", |this, fired| {
            this.drop_future();
            this.elapsed(&fired, budget)
        })
    }

    /// Polls the pinned inner future under the timer: `Ok` with its output (reported, the
    /// timer released), or `Err` with what `on_fire` makes of the fire, the inner future
    /// still live. A fire already decided wins: the inner future is not polled after it.
    #[inline(always)]
    fn poll_inner<E>(
        &mut self,
        cx: &mut Context<'_>,
        budget: Option<&Budget>,
        what: &str,
        on_fire: impl Fn(&mut Self, Fired) -> E,
    ) -> Poll<Result<F::Output, E>> {
        if self.timer.inner_dropped() {
            polled_after_completion(what);
        }
        if let Some(fired) = self.timer.has_fired() {
            return Poll::Ready(Err(on_fire(self, fired)));
        }
        // SAFETY: the callers hold the deadline pinned; the future is live (checked above).
        let future = unsafe { Pin::new_unchecked(&mut *self.future) };
        if let Poll::Ready(output) = future.poll(cx) {
            self.drop_future();
            let timer = &self.timer;
            let limit = || timer.reported_limit();
            self.name.completed(&output, limit, || timer.now());
            self.timer.release();
            return Poll::Ready(Ok(output));
        }
        let mut ambient = None;
        if !self.timer.is_started() {
            ambient = budget.is_none().then(budget::ambient).flatten();
            let timer = &mut self.timer;
            self.name.started(|| timer.chosen_wheel().get().now());
        }
        let cap = budget.or(ambient.as_ref()).map(|b| &b.cap);
        self.timer
            .poll_fired(cx, cap)
            .map(|fired| Err(on_fire(self, fired)))
    }

    /// The `Elapsed` of `fired`, with its outcome reported, the inner future gone.
    fn elapsed(&self, fired: &Fired, budget: Option<&Budget>) -> Elapsed {
        let elapsed = fired.elapsed(self.name.get(), budget);
        let now = || self.timer.now();
        self.name.ended(OutcomeKind::Elapsed, || fired.limit(), now);
        elapsed
    }
}

/// Out of line: the message's formatting stays out of every deadline's poll.
#[cold]
#[inline(never)]
#[track_caller]
fn polled_after_completion(what: &str) -> ! {
    panic!("`{what}` polled after completion")
}

impl<F, W: WheelRef, N: DeadlineName> Drop for Deadline<'_, F, W, N> {
    fn drop(&mut self) {
        if !self.timer.inner_dropped() {
            self.report_dropped();
            self.drop_future();
        }
    }
}

impl<F: Future, W: WheelRef, N: ReportsOutput<F::Output>> Future for Deadline<'_, F, W, N> {
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
            .field("running", &!self.timer.inner_dropped())
            .field("timer", &self.timer)
            .finish()
    }
}

/// The error of a [`KeepOnElapsed`]: the [`Elapsed`] and the inner future, still running.
#[derive(Debug)]
pub struct Abandoned<F> {
    /// Why: the deadline's (or a budget's) `Elapsed`.
    pub elapsed: Elapsed,
    /// The inner future, as it was at the fire.
    pub future: F,
}

/// A deadline that, at the fire, gives its inner future back in the error rather than
/// dropping it ([`Deadline::keep_on_elapsed`]).
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct KeepOnElapsed<'w, F, W: WheelRef, N: DeadlineName> {
    deadline: Deadline<'w, F, W, N>,
}

impl<'w, F: Future + Unpin, W: WheelRef, N: DeadlineName> Deadline<'w, F, W, N> {
    /// At the fire, hands the inner future back in the error ([`Abandoned`]) instead of
    /// dropping it, for work worth finishing though no one waits (a write-behind).
    ///
    /// # Panics
    ///
    /// If the deadline has completed, as the other accessors.
    pub fn keep_on_elapsed(self) -> KeepOnElapsed<'w, F, W, N> {
        self.check_live("keep_on_elapsed");
        KeepOnElapsed { deadline: self }
    }
}

impl<F: Future + Unpin, W: WheelRef, N: ReportsOutput<F::Output>> Future
    for KeepOnElapsed<'_, F, W, N>
{
    type Output = Result<F::Output, Abandoned<F>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: the deadline is not moved; its inner future is `Unpin`, and is polled
        // in place and moved out only at the fire.
        let this = unsafe { &mut self.get_unchecked_mut().deadline };
        this.poll_inner(cx, None, "KeepOnElapsed", |this, fired| {
            this.timer.set_inner_dropped();
            // SAFETY: live until just now, and marked gone: taken exactly once, never
            // dropped in place after. `F: Unpin`: it may move out of a pinned deadline.
            let future = unsafe { ManuallyDrop::take(&mut this.future) };
            let elapsed = this.elapsed(&fired, None);
            Abandoned { elapsed, future }
        })
    }
}

impl<F, W: WheelRef, N: DeadlineName> fmt::Debug for KeepOnElapsed<'_, F, W, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeepOnElapsed")
            .field("deadline", &self.deadline)
            .finish()
    }
}

pin_project! {
    /// A [`Deadline`] bounded by an explicit [`Budget`] as well ([`Deadline::within`]):
    /// it ends at the earlier; when the budget's comes first, the `Elapsed` is the budget's.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Within<'w, F, W: WheelRef = &'w dyn RawWheel, N: DeadlineName = Unnamed> {
        #[pin]
        deadline: Deadline<'w, F, W, N>,
        budget: Budget,
    }
}

impl<F: Future, W: WheelRef, N: ReportsOutput<F::Output>> Future for Within<'_, F, W, N> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        this.deadline.poll_capped(cx, Some(this.budget))
    }
}

impl<F, W: WheelRef, N: DeadlineName> fmt::Debug for Within<'_, F, W, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Within")
            .field("deadline", &self.deadline)
            .field("budget", &self.budget)
            .finish()
    }
}
