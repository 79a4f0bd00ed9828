//! The driver task of a runtime's default wheel: the core's [`Driver`], and its sleeps.
//! * On real time: a [`TimerFd`] (Linux, with an I/O driver), else tokio's timer, else
//!   (neither driver) a sleep on the global wheel; on virtual time, tokio's timer, whose
//!   wake turns the wheel at once ([`TurningSleeper`]).
//! * It stops once its wheel's owner left and nothing is armed, checked after each poll of
//!   the driver (which registered its waker first; an owner that leaves wakes it).
//! * Dropped at shutdown, it hands what is armed to the orphan driver: one thread, started
//!   at the first such shutdown, that lets go of each wheel once drained.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::{Mutex, OnceLock};
use std::thread::{self, Thread};

use pin_project_lite::pin_project;
use punctual_core::{Clock, Driver, DriverSlot, Growable, Limit, Reading, Sleep, Sleeper, Wheel};
use punctual_thread::Driven;
use punctual_tokio::{TurningSleep, TurningSleeper};
use tokio::runtime::Handle;

use super::runtime_clock::RuntimeClock;
#[cfg(target_os = "linux")]
use super::timer_fd::{FineSleep, TimerFd};
use super::{DEFAULT_TICK, RuntimeWheel, on_tick_grid};
use crate::wheel::Global;

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
        let wheel = rw.wheel;
        #[cfg(target_os = "linux")]
        let fine = TimerFd::new();
        #[cfg(not(target_os = "linux"))]
        let fine = None::<()>;
        let on_tokio_timer = wheel.clock().reads_virtual_time()
            || (fine.is_none() && super::probe::runtime_has_time());
        // A precise timer wakes at a sparse tick's own deadline and at a crowded tick's
        // end; a coarse one (tokio's, or the alarm on the tick grid) looks early too.
        wheel.set_precise_fires(on_tokio_timer || fine.is_none());
        let sleeper = DefaultSleeper {
            wheel,
            on_tokio: TurningSleeper::new(wheel.clock(), wheel),
            on_tokio_timer,
            #[cfg(target_os = "linux")]
            fine,
        };
        Self {
            rw,
            handle,
            driver: Some(Box::pin(wheel.driver(sleeper))),
        }
    }

    /// Lets go of the wheel: shelves it if drained, else hands it to the orphan driver.
    fn let_go(&mut self) {
        // The last reading must be the runtime's: tokio may drop tasks outside its context.
        let _context = self.handle.enter();
        // Let go of everything that reaches the wheel (timers, the place for a waker)
        // before the wheel is let go: it may serve another runtime next.
        self.driver = None;
        self.rw.wheel.clock().switch_to_real();
        if self.rw.wheel.occupied() == 0 {
            self.rw.stop_driving();
        } else {
            hand_over(self.rw);
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
        // The owner has left, so new deadlines no longer arm here (see `holders`).
        if !self.rw.state.owner_left() || self.rw.wheel.occupied() != 0 {
            return Poll::Pending;
        }
        self.let_go();
        Poll::Ready(())
    }
}

impl Drop for DriverTask {
    fn drop(&mut self) {
        if self.driver.is_some() {
            self.let_go();
        }
    }
}

/// The sleeps of a runtime wheel's driver (see the module docs).
struct DefaultSleeper {
    wheel: &'static Wheel<RuntimeClock, Growable>,
    on_tokio: TurningSleeper<&'static RuntimeClock, RuntimeClock, Growable>,
    /// tokio's timer from now on: the clock has read virtual time, or the runtime has a
    /// time driver and no fine timer.
    on_tokio_timer: bool,
    /// The fine timer on real time, if the runtime's reactor took one.
    #[cfg(target_os = "linux")]
    fine: Option<std::sync::Arc<TimerFd>>,
}

impl Sleeper for DefaultSleeper {
    type Sleep = DefaultSleep;

    fn sleep_until(&mut self, mut at: Reading) -> Self::Sleep {
        let clock = self.wheel.clock();
        if !self.on_tokio_timer && clock.reads_virtual_time() {
            // The plan `at` was made without precise fires: turn again at once with them.
            self.on_tokio_timer = true;
            self.wheel.set_precise_fires(true);
            at = at.min(Reading::since_origin(clock.now()));
        }
        if self.on_tokio_timer {
            return DefaultSleep::Tokio {
                sleep: self.on_tokio.sleep_until(at),
            };
        }
        #[cfg(target_os = "linux")]
        if let Some(fine) = &self.fine {
            let after = (at != Reading::END)
                .then(|| at.saturating_duration_since(Reading::since_origin(clock.now())));
            return DefaultSleep::Fine {
                sleep: fine.sleep(after),
            };
        }
        // On the tick grid: the wheel looks at crowded ticks early (for tokio's timer),
        // and a wake at each of their deadlines would walk the tick once per deadline.
        let at = Reading::since_origin(on_tick_grid(at.as_duration(), DEFAULT_TICK));
        let at = crate::global::reading_at(clock.reference_reading(at));
        DefaultSleep::Alarm {
            sleep: Sleep::new(Global, Limit::At(at)),
        }
    }
}

pin_project! {
    /// A sleep of [`DefaultSleeper`].
    #[project = DefaultSleepProj]
    enum DefaultSleep {
        Tokio { #[pin] sleep: TurningSleep<RuntimeClock, Growable> },
        #[cfg(target_os = "linux")]
        Fine { #[pin] sleep: FineSleep },
        Alarm { #[pin] sleep: Sleep<'static, Global> },
    }
}

impl Future for DefaultSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project() {
            DefaultSleepProj::Tokio { sleep } => sleep.poll(cx),
            #[cfg(target_os = "linux")]
            DefaultSleepProj::Fine { sleep } => sleep.poll(cx),
            DefaultSleepProj::Alarm { sleep } => sleep.poll(cx),
        }
    }
}

/// Wheels handed over (their clocks already on real time), not yet taken in by the thread.
static INBOX: Mutex<Vec<&'static RuntimeWheel>> = Mutex::new(Vec::new());
static THREAD: OnceLock<Thread> = OnceLock::new();

/// Hands `orphan` (its clock already on real time) to the orphan driver.
pub(super) fn hand_over(orphan: &'static RuntimeWheel) {
    INBOX.lock().unwrap_or_else(|p| p.into_inner()).push(orphan);
    let thread = THREAD.get_or_init(|| {
        punctual_thread::handle_forks();
        thread::Builder::new()
            .name("punctual-orphans".into())
            .spawn(run)
            .expect("punctual: could not start the thread that fires the deadlines of a runtime that shut down")
            .thread()
            .clone()
    });
    thread.unpark();
}

/// An orphaned wheel, driven until it drains. The slot is `None` once it is let go.
struct Orphan {
    orphan: &'static RuntimeWheel,
    slot: Option<DriverSlot<'static, RuntimeClock, Growable>>,
}

impl Driven for Orphan {
    type Clock = RuntimeClock;
    type Storage = Growable;

    fn wheel(&self) -> &'static Wheel<RuntimeClock, Growable> {
        self.orphan.wheel
    }

    fn slot(&mut self) -> &mut DriverSlot<'static, RuntimeClock, Growable> {
        self.slot
            .as_mut()
            .expect("a runtime wheel is not driven after it is let go")
    }

    fn next_turn(&self, next: Reading) -> Reading {
        Reading::since_origin(on_tick_grid(next.as_duration(), self.orphan.wheel.tick()))
    }

    fn finished(&mut self) -> bool {
        if self.orphan.wheel.occupied() != 0 {
            return false;
        }
        // The place for the waker first: the wheel may serve another runtime as soon as
        // it is let go.
        self.slot = None;
        self.orphan.stop_driving();
        true
    }
}

fn run() -> ! {
    punctual_thread::run(
        |driving: &mut Vec<Orphan>| {
            let mut inbox = INBOX.lock().unwrap_or_else(|p| p.into_inner());
            for orphan in inbox.drain(..) {
                let slot = Some(orphan.wheel.driver_slot());
                driving.push(Orphan { orphan, slot });
            }
        },
        Duration::MAX,
    )
}
