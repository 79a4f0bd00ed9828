//! Making a wheel for a runtime and running its driver as a tokio task.

use core::time::Duration;

use punctual_core::{Driver, Growable, Storage, Wheel};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use crate::{TokioClock, TokioSleeper};

/// The tick of the wheel made by [`start`]: tokio's own timer resolution.
pub const DEFAULT_TICK: Duration = Duration::from_millis(1);

/// A growable wheel on a [`TokioClock`]: what [`start`] makes.
pub type TokioWheel = Wheel<TokioClock, Growable>;

/// The driver future of a wheel on a [`TokioClock`], sleeping with a [`TokioSleeper`].
pub type TokioDriver<'w, S = Growable> = Driver<'w, TokioClock, S, TokioSleeper>;

/// Makes a wheel on the current runtime's clock with a 1 ms tick ([`DEFAULT_TICK`]),
/// spawns its driver on the current runtime, and returns it (leaked: call it once per
/// runtime, see the crate example).
///
/// # Panics
///
/// Outside a tokio runtime, or on one built without
/// [`enable_time`](tokio::runtime::Builder::enable_time).
#[track_caller]
pub fn start() -> &'static TokioWheel {
    start_with_tick(DEFAULT_TICK)
}

/// [`start`] with a tick of your choosing (below 1 ms buys nothing on tokio).
///
/// # Panics
///
/// As [`start`], and if `tick` is zero.
#[track_caller]
pub fn start_with_tick(tick: Duration) -> &'static TokioWheel {
    let handle = current_handle("punctual_tokio::start");
    // In the runtime's context: a paused runtime's clock is the one read.
    let clock = {
        let _context = handle.enter();
        TokioClock::new()
    };
    let wheel: &'static TokioWheel = Wheel::growable(clock, tick).with_precise_fires().leak();
    spawn_driver_on(&handle, wheel);
    wheel
}

/// Spawns the driver of `wheel` as a task on the current runtime, until aborted or the
/// runtime shuts down. Several drivers may run on one wheel; one turns it at a time.
///
/// ```
/// use std::sync::LazyLock;
/// use std::time::Duration;
/// use punctual_core::{Fixed, Wheel};
/// use punctual_tokio::TokioClock;
///
/// static WHEEL: LazyLock<Wheel<TokioClock, Fixed<1024>>> =
///     LazyLock::new(|| Wheel::fixed(TokioClock::new(), Duration::from_millis(5)));
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let driver = punctual_tokio::spawn_driver(&WHEEL);
/// let r = WHEEL.deadline(Duration::from_millis(10), std::future::pending::<()>()).await;
/// assert!(r.is_err());
/// driver.abort(); // armed deadlines stop firing until another driver turns the wheel
/// # }
/// ```
///
/// # Panics
///
/// As [`start`].
#[track_caller]
pub fn spawn_driver<S: Storage + 'static>(wheel: &'static Wheel<TokioClock, S>) -> JoinHandle<()> {
    spawn_driver_on(&current_handle("punctual_tokio::spawn_driver"), wheel)
}

/// [`spawn_driver`] on the runtime of `handle`, from anywhere. On a paused runtime, make
/// the wheel's [`TokioClock`] in that runtime's context.
///
/// # Panics
///
/// If the runtime was built without [`enable_time`](tokio::runtime::Builder::enable_time).
#[track_caller]
pub fn spawn_driver_on<S: Storage + 'static>(
    handle: &Handle,
    wheel: &'static Wheel<TokioClock, S>,
) -> JoinHandle<()> {
    // Without a time driver, panic here with tokio's message, not silently in the task.
    let context = handle.enter();
    drop(tokio::time::sleep(Duration::ZERO));
    drop(context);
    handle.spawn(async move { match driver(wheel).await {} })
}

/// The driver future of `wheel`, to run yourself (a `LocalSet`, a `select!`, a wheel that
/// is not `'static`). It never completes; poll it on a runtime with time enabled (it panics
/// elsewhere, see [`TokioSleeper`]). See the crate's rules on `with_precise_fires`.
///
/// ```
/// use std::time::Duration;
/// use punctual_core::{Fixed, Wheel};
/// use punctual_tokio::TokioClock;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let wheel: Wheel<TokioClock, Fixed<16>> = Wheel::fixed(TokioClock::new(), Duration::from_millis(1));
/// let work = wheel.deadline(Duration::from_secs(60), std::future::pending::<()>());
/// tokio::select! {
///     r = work => assert!(r.is_err()),
///     never = punctual_tokio::driver(&wheel) => match never {},
/// }
/// # }
/// ```
///
/// # Cancel safety
///
/// Dropping the driver stops the wheel: armed deadlines fire late, once another driver
/// turns it.
pub fn driver<S: Storage>(wheel: &Wheel<TokioClock, S>) -> TokioDriver<'_, S> {
    wheel.driver(TokioSleeper::new(wheel.clock()))
}

#[track_caller]
fn current_handle(what: &str) -> Handle {
    Handle::try_current().unwrap_or_else(|err| panic!("{what} needs a tokio runtime: {err}"))
}
