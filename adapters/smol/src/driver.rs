//! Making a wheel for smol and running its driver on an executor.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;
use punctual_core::{Driver, Growable, StdClock, Storage, Wheel};

use crate::AsyncIoSleeper;

/// The tick of a wheel made by [`leak_wheel`] with no other wish: 1 ms.
pub const DEFAULT_TICK: Duration = Duration::from_millis(1);

/// A growable wheel on a [`StdClock`] (`std::time::Instant`, as async-io's timers): what
/// [`leak_wheel`] makes.
pub type SmolWheel = Wheel<StdClock, Growable>;

/// The driver future of a wheel on a [`StdClock`], sleeping on async-io timers.
pub type SmolDriver<'w, S = Growable> = Driver<'w, StdClock, S, AsyncIoSleeper>;

/// Makes a growable wheel on a fresh [`StdClock`] and leaks it (about 3.7 KB on 64-bit
/// targets, plus the entries it grew to hold: one per program), so that its deadlines are
/// `'static`. Drive it with [`driver`] (see the crate example).
///
/// # Panics
///
/// If `tick` is zero, or 2<sup>64</sup> ns (about 584 years) or more.
pub fn leak_wheel(tick: Duration) -> &'static SmolWheel {
    Wheel::growable(StdClock::new(), tick).leak()
}

/// The driver future of `wheel`, for any executor; it never completes. Its
/// [`async_io::Timer`]s need no runtime context.
///
/// ```
/// use std::time::Duration;
/// use punctual_core::{Fixed, StdClock, Wheel};
///
/// // A borrowed wheel: it must outlive the executor that drives it.
/// let wheel: Wheel<StdClock, Fixed<64>> = Wheel::fixed(StdClock::new(), Duration::from_millis(1));
/// let ex = smol::Executor::new();
/// ex.spawn(punctual_smol::driver(&wheel)).detach();
///
/// smol::block_on(ex.run(async {
///     let r = wheel.deadline(Duration::from_millis(3), std::future::pending::<()>()).await;
///     assert!(r.is_err());
/// }));
/// ```
///
/// # Cancel safety
///
/// Dropping the driver stops the wheel: armed deadlines fire late, once another driver
/// turns it.
pub fn driver<S: Storage>(wheel: &Wheel<StdClock, S>) -> SmolDriver<'_, S> {
    wheel.driver(AsyncIoSleeper::new(wheel.clock()))
}

/// Runs `future` with the driver of `wheel` beside it, in the same task, and completes
/// with its output. The wheel turns only while this is polled: for a wheel shared by many
/// tasks, spawn [`driver`].
///
/// * Each poll turns the wheel, polls `future`, then sets the timer
///   ([`Driver::poll_with`](punctual_core::Driver::poll_with)): `future` sees what the
///   turn fired in the same poll.
/// * A wheel holds the wakers of three drivers; a fourth turns it every tick instead.
///
/// ```
/// use std::time::Duration;
///
/// let wheel = punctual_smol::leak_wheel(Duration::from_millis(1));
/// let out = smol::block_on(punctual_smol::with_driver(wheel, async {
///     let slow = wheel.deadline(Duration::from_millis(5), std::future::pending::<()>()).await;
///     let fast = wheel.deadline(Duration::from_secs(1), async { 7 }).await;
///     (slow.is_err(), fast)
/// }));
/// assert_eq!(out, (true, Ok(7)));
/// ```
///
/// # Cancel safety
///
/// Dropping it drops `future` and stops this driver; see [`driver`].
pub fn with_driver<S: Storage, F: Future>(
    wheel: &Wheel<StdClock, S>,
    future: F,
) -> WithDriver<'_, S, F> {
    WithDriver {
        future,
        driver: driver(wheel),
    }
}

pin_project! {
    /// A future run together with a wheel's driver. Made by [`with_driver`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct WithDriver<'w, S: Storage, F> {
        #[pin]
        future: F,
        #[pin]
        driver: SmolDriver<'w, S>,
    }
}

impl<S: Storage, F: Future> Future for WithDriver<'_, S, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // Turn, then `future`, then the driver's timer (see `with_driver`).
        this.driver.poll_with(this.future, cx)
    }
}

impl<S: Storage, F> core::fmt::Debug for WithDriver<'_, S, F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WithDriver")
            .field("driver", &self.driver)
            .finish_non_exhaustive()
    }
}
