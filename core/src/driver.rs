//! One driver future for every runtime: it turns a wheel and sleeps until the next turn,
//! with the sleeping supplied by the runtime through [`Sleeper`].

use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;

use pin_project_lite::pin_project;

use crate::clock::Clock;
use crate::storage::Storage;
use crate::wheel::Wheel;

/// What a runtime supplies to drive a wheel: a future that completes once the wheel's
/// clock reads at least a given time.
///
/// The future should complete once the wheel's clock reads `at`: completing late makes
/// deadlines late, completing early only costs a spurious turn (deadlines never fire
/// early either way, since the wheel checks its own clock). The driver never asks for
/// `Duration::MAX`: with nothing armed it waits for its waker alone.
pub trait Sleeper {
    /// The sleep future.
    type Sleep: Future<Output = ()>;

    /// A future that completes when the wheel's clock reads `at` or later.
    fn sleep_until(&mut self, at: Duration) -> Self::Sleep;
}

/// Turns the wheel. With `std`, a waker that panics during the turn does not take the
/// driver down with it (the hook has reported the panic; the wheel let go of its role and
/// keeps the remaining wakes for the next turn, which comes at once).
fn turn<C: Clock, S: Storage>(wheel: &Wheel<C, S>) -> Duration {
    #[cfg(feature = "std")]
    {
        std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| wheel.turn()))
            .unwrap_or(Duration::ZERO)
    }
    #[cfg(not(feature = "std"))]
    {
        wheel.turn()
    }
}

/// At most this many turns per poll before the driver yields to its executor.
const TURNS_PER_POLL: usize = 16;

pin_project! {
    /// A future that drives a wheel forever: it turns the wheel, sleeps until the next
    /// turn (or until an arm or a cancel wakes it sooner), and repeats. Spawn it on the
    /// runtime whose clock the wheel uses. Made by [`Wheel::driver`].
    ///
    /// Several drivers may run on one wheel: only one turns it at a time, and none waits
    /// for another.
    ///
    /// # Cancel safety
    ///
    /// Dropping the driver stops the wheel: armed deadlines no longer fire until another
    /// driver (or [`Wheel::turn`]) turns it. Nothing is lost; they fire late, once it does.
    #[must_use = "a driver does nothing unless spawned or polled"]
    pub struct Driver<'w, C, S, T: Sleeper> {
        wheel: &'w Wheel<C, S>,
        sleeper: T,
        #[pin]
        sleep: Option<T::Sleep>,
        planned: Duration,
    }
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// A driver future for this wheel, sleeping with `sleeper`.
    pub fn driver<T: Sleeper>(&self, sleeper: T) -> Driver<'_, C, S, T> {
        Driver {
            wheel: self,
            sleeper,
            sleep: None,
            planned: Duration::ZERO,
        }
    }
}

impl<C: Clock, S: Storage, T: Sleeper> Future for Driver<'_, C, S, T> {
    type Output = Infallible;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Infallible> {
        let mut this = self.project();
        for _ in 0..TURNS_PER_POLL {
            // Register first: a wake during the turn then leads to another poll.
            this.wheel.register_driver(cx.waker());
            let next = turn(this.wheel);
            if next == Duration::MAX {
                // Idle: no timer at all; the next arm wakes us.
                this.sleep.set(None);
                return Poll::Pending;
            }
            if this.sleep.is_none() || next != *this.planned {
                *this.planned = next;
                let sleep = this.sleeper.sleep_until(next);
                this.sleep.set(Some(sleep));
            }
            let sleep = this
                .sleep
                .as_mut()
                .as_pin_mut()
                .expect("sleep was just set");
            match sleep.poll(cx) {
                Poll::Ready(()) => this.sleep.set(None),
                Poll::Pending => return Poll::Pending,
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
