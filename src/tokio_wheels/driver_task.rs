//! The driver task of a runtime's default wheel: the core's [`Driver`], and its sleeps.
//!
//! * On real time it sleeps on the global wheel, on the tick grid: tokio cannot be asked
//!   whether a runtime has a time driver, and a tokio timer panics on one without.
//! * Once the runtime's clock reads virtual time (tokio paused or moved it), it sleeps
//!   on tokio's timer, whose wake turns the wheel at once ([`TurningSleeper`]).
//! * It stops once its wheel's owner left and nothing is armed. It checks that after
//!   each poll of the driver, which registered its waker first: an owner that leaves
//!   wakes it, so it never waits idle on a wheel it should let go.
//! * Dropped by tokio at shutdown, it hands what is still armed to the orphan driver.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;
use punctual_core::{Driver, Growable, Limit, Reading, Sleeper};
use punctual_tokio::{RuntimeClock, RuntimeSleeper, TurningSleep, TurningSleeper};
use tokio::runtime::Handle;

use super::runtime_wheel::{RuntimeWheel, TICK, on_tick_grid};
use crate::global::Global;

type RuntimeDriver = Driver<'static, RuntimeClock, Growable, DefaultSleeper>;

/// The driver task of a runtime wheel (see the module docs).
pub(super) struct DriverTask {
    rw: &'static RuntimeWheel,
    /// To read the runtime's clock one last time while the task is dropped.
    handle: Handle,
    /// `None` once the task let go of the wheel.
    driver: Option<Pin<Box<RuntimeDriver>>>,
}

impl DriverTask {
    pub(super) fn new(rw: &'static RuntimeWheel, handle: Handle) -> Self {
        let sleeper = DefaultSleeper {
            clock: rw.wheel.clock(),
            on_tokio: TurningSleeper::new(RuntimeSleeper::new(rw.wheel.clock()), &rw.wheel),
            on_tokio_timer: false,
        };
        Self {
            rw,
            handle,
            driver: Some(Box::pin(rw.wheel.driver(sleeper))),
        }
    }
}

impl Future for DriverTask {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(driver) = self.driver.as_mut() else {
            return Poll::Ready(());
        };
        let Poll::Pending = driver.as_mut().poll(cx);
        if !self.rw.retirable() {
            return Poll::Pending;
        }
        // Let go of everything that reaches the wheel (timers, the place for a waker)
        // before the wheel is let go: it may serve another runtime next.
        self.driver = None;
        self.rw.wheel.clock().switch_to_real();
        self.rw.undrive();
        Poll::Ready(())
    }
}

impl Drop for DriverTask {
    fn drop(&mut self) {
        if self.driver.is_none() {
            return; // retired
        }
        // The last reading must be the runtime's: tokio may drop tasks outside its context.
        let _context = self.handle.enter();
        self.driver = None;
        self.rw.wheel.clock().switch_to_real();
        if self.rw.wheel.occupied() == 0 {
            self.rw.undrive();
        } else {
            super::orphans::hand_over(self.rw);
        }
    }
}

/// The sleeps of a runtime wheel's driver (see the module docs).
struct DefaultSleeper {
    clock: &'static RuntimeClock,
    on_tokio: TurningSleeper<RuntimeSleeper, RuntimeClock, Growable>,
    /// The clock has read virtual time: tokio's timer from now on.
    on_tokio_timer: bool,
}

impl Sleeper for DefaultSleeper {
    type Sleep = DefaultSleep;

    fn sleep_until(&mut self, at: Reading) -> DefaultSleep {
        if !self.on_tokio_timer && self.clock.reads_virtual_time() {
            self.on_tokio_timer = true;
        }
        if self.on_tokio_timer {
            return DefaultSleep::Tokio {
                sleep: self.on_tokio.sleep_until(at),
            };
        }
        // On the tick grid: the wheel looks at crowded ticks early (for tokio's timer),
        // and a wake at each of their deadlines would walk the tick once per deadline.
        let at = Reading::since_origin(on_tick_grid(at.as_duration(), TICK));
        let at = crate::global::reading_at(self.clock.reference_reading(at));
        DefaultSleep::Alarm {
            sleep: punctual_core::Sleep::new(Global, Limit::At(at)),
        }
    }
}

pin_project! {
    /// A sleep of [`DefaultSleeper`].
    #[project = DefaultSleepProj]
    enum DefaultSleep {
        Tokio { #[pin] sleep: TurningSleep<RuntimeClock, Growable> },
        Alarm { #[pin] sleep: punctual_core::Sleep<'static, Global> },
    }
}

impl Future for DefaultSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project() {
            DefaultSleepProj::Tokio { sleep } => sleep.poll(cx),
            DefaultSleepProj::Alarm { sleep } => sleep.poll(cx),
        }
    }
}
