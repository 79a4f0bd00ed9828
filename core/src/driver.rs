//! One driver future for every runtime: it turns a wheel and sleeps until the next turn.
//! * A driver registers its waker before each turn, so a wake during the turn is not lost.
//! * A driver without a place for its waker turns within a tick, and never waits idle.
//! * With `std`, a waker that panics during a turn does not stop the driver.

use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use pin_project_lite::pin_project;

use crate::clock::Clock;
use crate::time::Reading;
use crate::wheel::Wheel;
use crate::wheel::storage::Storage;

/// What a runtime supplies to drive a wheel: sleeps until the wheel's clock reads a time.
/// A late sleep makes deadlines late, an early one costs a spurious turn. The driver never
/// asks for [`Reading::END`]: idle, it waits for its waker alone.
pub trait Sleeper {
    /// The sleep future.
    type Sleep: Future<Output = ()>;

    /// A future that completes when the wheel's clock reads `at` or later.
    fn sleep_until(&mut self, at: Reading) -> Self::Sleep;
}

/// Turns the wheel as `slot`'s driver; with `std`, a panicking waker does not stop it.
fn turn<C: Clock, S: Storage>(slot: &DriverSlot<'_, C, S>) -> Reading {
    #[cfg(feature = "std")]
    {
        std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| slot.turn()))
            .unwrap_or(Reading::ZERO)
    }
    #[cfg(not(feature = "std"))]
    {
        slot.turn()
    }
}

/// At most this many turns per poll before the driver yields to its executor.
const TURNS_PER_POLL: usize = 16;

/// A driver's own place for its waker, woken when the wheel needs a turn sooner than
/// planned, so that several drivers may share a wheel (one turns it at a time). Claimed at
/// the first [`register`](DriverSlot::register), given back when dropped (waking the
/// others). A wheel has three (besides [`Wheel::register_driver`]'s): a driver without one
/// must turn at least once a tick.
///
/// # Examples
///
/// A driver loop of your own, beside any other driver of the same wheel:
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{Fixed, ManualClock, Reading, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let waker = core::task::Waker::noop();
/// let mut others = [wheel.driver_slot(), wheel.driver_slot(), wheel.driver_slot()];
/// for other in &mut others {
///     assert!(other.register(waker));
/// }
///
/// let mut mine = wheel.driver_slot();
/// // Register, then turn: a wake between the two is not lost.
/// let woken_when_needed = mine.register(waker);
/// let next = mine.turn();
/// // Three drivers hold the places: nothing will wake this one, so it turns within a tick.
/// assert!(!woken_when_needed);
/// let sleep_until = next.min(wheel.now() + wheel.tick());
/// assert!(sleep_until <= Reading::from_nanos(1_000_000));
///
/// drop(others); // those drivers stop: their places are free again
/// assert!(mine.register(waker));
/// ```
pub struct DriverSlot<'w, C, S> {
    wheel: &'w Wheel<C, S>,
    /// The claimed slot, once claimed.
    slot: Option<usize>,
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// A place of its own for a driver's waker (see [`DriverSlot`]).
    pub fn driver_slot(&self) -> DriverSlot<'_, C, S> {
        DriverSlot {
            wheel: self,
            slot: None,
        }
    }

    /// A driver future for this wheel, sleeping with `sleeper`.
    pub fn driver<T: Sleeper>(&self, sleeper: T) -> Driver<'_, C, S, T> {
        Driver {
            slot: self.driver_slot(),
            sleeper,
            sleep: None,
            planned: Reading::ZERO,
            idle: false,
        }
    }
}

impl<C: Clock, S: Storage> DriverSlot<'_, C, S> {
    /// Registers `waker` to be woken when the wheel must turn sooner than planned, before
    /// each turn. Returns `false` without a free place (turn again within a tick).
    pub fn register(&mut self, waker: &Waker) -> bool {
        self.register_untouched(waker).is_some()
    }

    /// Turns the wheel as [`Wheel::turn`] does; a turn out of idle wakes the other drivers,
    /// not this one. Register before turning.
    pub fn turn(&self) -> Reading {
        self.wheel.turn_as(self.slot)
    }

    /// [`register`](Self::register): `None` without a place, `Some(true)` if untouched.
    fn register_untouched(&mut self, waker: &Waker) -> Option<bool> {
        let wakers = self.wheel.driver_wakers();
        if self.slot.is_none() {
            self.slot = wakers.claim();
        }
        self.slot.map(|slot| wakers.register(slot, waker))
    }
}

impl<C, S> Drop for DriverSlot<'_, C, S> {
    /// Gives the place back and wakes the other drivers, to carry out this one's plan.
    fn drop(&mut self) {
        match self.slot {
            Some(slot) => self.wheel.driver_wakers().release(slot),
            None => self.wheel.driver_wakers().wake_all(),
        }
    }
}

impl<C, S> fmt::Debug for DriverSlot<'_, C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriverSlot")
            .field("slot", &self.slot)
            .finish_non_exhaustive()
    }
}

pin_project! {
    #[project = DriverProj]
    /// A future that drives a wheel forever: it turns the wheel, sleeps until the next turn
    /// (or an arm or cancel wakes it), and repeats. Spawn it on the runtime whose clock the
    /// wheel uses. Several may share a wheel ([`DriverSlot`]).
    ///
    /// # Cancel safety
    ///
    /// Dropping it stops its turns: deadlines fire late, at another driver's (woken as it
    /// goes) or [`Wheel::turn`]'s turn. Nothing is lost.
    #[must_use = "a driver does nothing unless spawned or polled"]
    pub struct Driver<'w, C, S, T: Sleeper> {
        slot: DriverSlot<'w, C, S>,
        sleeper: T,
        #[pin]
        sleep: Option<T::Sleep>,
        planned: Reading,
        // The last turn left the wheel idle (no sleep set).
        idle: bool,
    }
}

impl<C: Clock, S: Storage, T: Sleeper> Driver<'_, C, S, T> {
    /// Polls `future` with this driver in the caller's task: the wheel turns, `future` is
    /// polled (seeing what the turn fired), and only then is the next sleep set.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::future::Future;
    /// use core::pin::pin;
    /// use core::task::{Context, Poll};
    /// use core::time::Duration;
    /// use punctual_core::{Fixed, ManualClock, Reading, Sleeper, Wheel};
    ///
    /// /// Sleeps that never end: this example turns the manual clock by hand.
    /// struct Never;
    /// impl Sleeper for Never {
    ///     type Sleep = core::future::Pending<()>;
    ///     fn sleep_until(&mut self, _: Reading) -> Self::Sleep {
    ///         core::future::pending()
    ///     }
    /// }
    ///
    /// let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// let mut driver = pin!(wheel.driver(Never));
    /// let mut work = pin!(wheel.deadline(Duration::from_millis(3), core::future::pending::<()>()));
    /// let mut cx = Context::from_waker(core::task::Waker::noop());
    ///
    /// assert!(driver.as_mut().poll_with(work.as_mut(), &mut cx).is_pending());
    /// wheel.clock().advance(Duration::from_millis(3));
    /// // One poll turns the wheel, which fires the deadline, and then polls the future.
    /// assert!(matches!(driver.as_mut().poll_with(work.as_mut(), &mut cx), Poll::Ready(Err(_))));
    /// ```
    pub fn poll_with<F: Future>(
        self: Pin<&mut Self>,
        future: Pin<&mut F>,
        cx: &mut Context<'_>,
    ) -> Poll<F::Output> {
        let mut this = self.project();
        let next = turn_once(this.slot, this.idle, cx);
        if let Poll::Ready(output) = future.poll(cx) {
            return Poll::Ready(output);
        }
        if poll_sleep(&mut this, next, cx).is_ready() {
            // The next turn is due already: come back at once.
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

/// Registers the driver's waker, then turns the wheel; returns when to turn next
/// ([`Reading::END`]: idle). Skips the turn while idle and untouched since the last.
fn turn_once<C: Clock, S: Storage>(
    slot: &mut DriverSlot<'_, C, S>,
    idle: &mut bool,
    cx: &Context<'_>,
) -> Reading {
    let wheel = slot.wheel;
    // Register first: a wake during the turn then leads to another poll.
    let next = match slot.register_untouched(cx.waker()) {
        // A take after the registration wakes this task again, as a wake would.
        Some(true) if *idle && wheel.is_idle() => Reading::END,
        Some(_) => turn(slot),
        // No place: nothing wakes us, so turn again within a tick.
        None => turn(slot).min(wheel.now().after(wheel.ticks().tick())),
    };
    // Recorded here, not once the sleep is set: `poll_with` may return before that.
    *idle = next == Reading::END;
    next
}

/// Polls the sleep until `next`, made anew if the plan changed.
fn poll_sleep<C, S, T: Sleeper>(
    this: &mut DriverProj<'_, '_, C, S, T>,
    next: Reading,
    cx: &mut Context<'_>,
) -> Poll<()> {
    if next == Reading::END {
        // Idle: no timer at all; the next arm wakes us.
        this.sleep.set(None);
        return Poll::Pending;
    }
    if this.sleep.is_none() || next != *this.planned {
        *this.planned = next;
        this.sleep.set(Some(this.sleeper.sleep_until(next)));
    }
    let sleep = this.sleep.as_mut().as_pin_mut();
    let done = sleep.expect("sleep was just set").poll(cx);
    if done.is_ready() {
        this.sleep.set(None);
    }
    done
}

impl<C: Clock, S: Storage, T: Sleeper> Future for Driver<'_, C, S, T> {
    type Output = Infallible;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Infallible> {
        let mut this = self.project();
        for _ in 0..TURNS_PER_POLL {
            let next = turn_once(this.slot, this.idle, cx);
            if poll_sleep(&mut this, next, cx).is_pending() {
                return Poll::Pending;
            }
        }
        // The runtime's sleeps keep completing at once: yield, then go on.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<C, S, T: Sleeper> fmt::Debug for Driver<'_, C, S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("planned", &self.planned)
            .finish_non_exhaustive()
    }
}
