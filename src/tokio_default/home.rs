//! `Home`: a default wheel for one thread of a tokio runtime, its driver task, and the
//! shelves of homes let go, which later claims take again.
//!
//! # Life of a home
//!
//! ```text
//!   new ──claim──▶ owned + driven ──owner leaves──▶ driven ──drained──▶ shelved ──claim──▶ …
//!                        │                               ▲
//!                        └──runtime shuts down──▶ orphan driver (real time) ──drained──▶ shelved
//! ```
//!
//! * **Claimed** by a thread at its first pending default deadline inside a runtime: a
//!   shelved home of the runtime's flavour if there is one, else a new one. The wheel
//!   starts over (`Wheel::restart`), the clock reads that runtime's time, and a driver
//!   task is spawned on it.
//! * **Owner leaves** when the thread exits, or when its runtime shut down and the thread
//!   starts a deadline again (it claims another home then): the driver task goes on
//!   until the wheel is drained, then ends.
//! * **Runtime shuts down**: tokio drops the driver task. Its guard switches the clock to
//!   real time (from the reading it had, never backwards), and if deadlines are still
//!   armed on the wheel (held by futures outside the runtime), hands the wheel to the
//!   orphan driver thread, which fires them on real time and lets go once drained.
//! * **Shelved** by the last of the owner and the driver to leave, for the next claim.
//!
//! # Why homes are shelved, not freed
//!
//! `'static` references to a home are handed out and outlive it: every deadline that
//! chose it keeps its [`DefaultWheel`] (and a budget, its wheel) for life, finished or not; a
//! thread keeps a spare entry of the wheel in a thread-local slot, which it gives back by
//! the wheel's address when it exits; tokio may still hold a clone of the driver's
//! waker. So a home is never freed: memory stays bounded by the homes in use at once,
//! since each claim takes a shelved home first. What a home on the shelf guarantees:
//!
//! * nothing armed on it (a home is drained before it is shelved; a claim that finds
//!   the wheel in use again refuses it: see below);
//! * no driver and no one turning it: the task, or the orphan driver, dropped its timers,
//!   its place for a waker and the waker's right to turn (see `DriverTask::let_go`)
//!   before it let go;
//! * its wheel starts over before it serves again (`Wheel::restart`): a wheel that
//!   served another clock keeps the plan of its last turn and the tick it reached, from
//!   which the new clock's first deadlines would fire late, or early when the last
//!   clock (a paused one) ran ahead.
//!
//! A deadline that outlived its thread and starts again after its reset
//! (`Sleep::reset`) arms on the home it chose, which may serve another runtime by then
//! (or, shelved, no runtime: it then waits until a claim, which refuses such a home, so
//! the deadline waits for good, as it did before homes were shelved).
//!
//! # State
//!
//! Who still holds the home, its owner or its driver, is a word of two bits
//! ([`HomeState`]): the one that leaves last shelves the home.

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Wake, Waker};

use punctual_core::{DriverSlot, Growable, RawWheel, Reading, Sleeper, Wheel};
use tokio::runtime::Handle;

use super::clock::{RuntimeClock, RuntimeSleeper};
use super::home_state::HomeState;
use crate::default_wheel::DefaultWheel;

/// The tick of every runtime's default wheel: tokio's own timer resolution, and the
/// global wheel's tick.
pub(crate) const TICK: Duration = Duration::from_millis(1);

/// A default wheel for one thread of a runtime (see the module docs).
pub(crate) struct Home {
    pub(crate) wheel: Wheel<RuntimeClock, Growable>,
    /// How default deadlines reach `wheel` (set once the home is leaked).
    pub(crate) chosen: OnceLock<DefaultWheel>,
    state: HomeState,
    /// Made for a runtime whose clock tokio may pause (a `current_thread` one): `chosen`
    /// depends on it, so a home serves runtimes of its flavour only.
    pausable: bool,
}

/// Homes let go by their owner and their driver, with nothing armed, for the next claim
/// of a runtime of their flavour: `[multi-thread, pausable]`. A lock, not a lock-free
/// list: a claim or a shelving comes once per thread and runtime.
static SHELVES: [Mutex<Vec<&'static Home>>; 2] = [Mutex::new(Vec::new()), Mutex::new(Vec::new())];

/// Homes ever made (leaked): bounded by the homes in use at once (see the module docs).
static MADE: AtomicUsize = AtomicUsize::new(0);

/// How many homes have been made in this process: for the tests of their reuse.
pub(crate) fn made() -> usize {
    MADE.load(Ordering::Relaxed)
}

fn shelf(pausable: bool) -> std::sync::MutexGuard<'static, Vec<&'static Home>> {
    SHELVES[usize::from(pausable)]
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Home {
    /// A home for the calling thread, in the runtime of `handle` (whose context the
    /// thread is in): a shelved one started over, or a new one. Spawns its driver task,
    /// which needs no time driver of the runtime's (see [`DriverTask`]).
    pub(crate) fn claim(handle: &Handle) -> &'static Home {
        // tokio pauses the clock of a `current_thread` runtime only (`pause` and
        // `start_paused` refuse the others).
        let pausable = !matches!(
            handle.runtime_flavor(),
            tokio::runtime::RuntimeFlavor::MultiThread
        );
        let home = Self::unshelve(pausable).unwrap_or_else(|| Self::make(pausable));
        home.wheel.clock().switch_to_tokio(TICK, pausable);
        home.state.claim();
        handle.spawn(DriverTask::new(home, handle.clone()));
        home
    }

    /// A shelved home of the flavour, its wheel started over; `None` if the shelf is
    /// empty.
    fn unshelve(pausable: bool) -> Option<&'static Home> {
        loop {
            let home = shelf(pausable).pop()?;
            // Refused only if the wheel is in use again: a deadline that outlived its
            // thread armed there after a reset (see the module docs). It stays off the
            // shelf, holding that deadline.
            if home.wheel.restart() {
                return Some(home);
            }
        }
    }

    /// A new home (leaked: see the module docs).
    fn make(pausable: bool) -> &'static Home {
        // Its driver sleeps on tokio's timer, which rounds each sleep up to a millisecond
        // grid of its own, or on the tick grid: without early looks, tokio's rounding
        // would come on top of the wheel's tick boundary.
        let wheel = Wheel::growable(RuntimeClock::new(), TICK).with_early_looks();
        let home: &'static Home = Box::leak(Box::new(Home {
            // SAFETY: the home is leaked, so its wheel stays where it is for good.
            wheel: unsafe { wheel.with_thread_spares() },
            chosen: OnceLock::new(),
            state: HomeState::new(),
            pausable,
        }));
        MADE.fetch_add(1, Ordering::Relaxed);
        home.chosen.get_or_init(|| DefaultWheel {
            wheel: &home.wheel,
            reads_behind: Some(home.wheel.clock()),
            // Settles the global wheel's clock (`StdClock` unless another was selected):
            // a budget started here may then end a deadline on the global wheel.
            on_global_timeline: !pausable && crate::global::reads_std_clock(),
        });
        home
    }

    /// How default deadlines reach this home's wheel.
    pub(crate) fn chosen(&'static self) -> &'static DefaultWheel {
        self.chosen.get().expect("set when the home was made")
    }

    /// Whether the runtime this home served has shut down.
    pub(crate) fn runtime_gone(&self) -> bool {
        self.wheel.clock().runtime_gone()
    }

    /// The owner lets go (thread exit, or its runtime is gone). Wakes the driver, which
    /// lets go once the home is drained; shelves it now if no driver is left.
    pub(crate) fn disown(&'static self) {
        if self.state.release_owner() {
            self.shelve();
        } else {
            // The driver may be idle, waiting for an arm: let it look at the state.
            RawWheel::wake_drivers(&self.wheel);
        }
    }

    /// A driver stops driving a drained home (it let go of everything that reaches the
    /// wheel first); shelves it if the owner has left too.
    fn undrive(&'static self) {
        if self.state.release_driver() {
            self.shelve();
        }
    }

    /// The last holder shelves the home: no owner, no driver, nothing armed.
    fn shelve(&'static self) {
        debug_assert_eq!(self.wheel.occupied(), 0);
        shelf(self.pausable).push(self);
    }

    /// Whether the driver task may stop: the owner has left and nothing is armed.
    fn retirable(&self) -> bool {
        self.state.owner_left() && self.wheel.occupied() == 0
    }

    /// Called once the driver task is gone without retiring (its runtime shut down):
    /// real time from here on, and the orphan driver takes what is still armed.
    fn runtime_shut_down(&'static self) {
        self.wheel.clock().switch_to_real();
        if self.wheel.occupied() == 0 {
            self.undrive();
        } else {
            super::orphans::adopt(self);
        }
    }

    /// The orphan driver is done with this home (drained).
    pub(crate) fn orphan_drained(&'static self) {
        self.undrive();
    }
}

/// The driver task of a home: turns the wheel and sleeps until its next turn, until the
/// home retires; if tokio drops it first (the runtime shuts down), hands the home over
/// (see `Home::runtime_shut_down`).
///
/// # Which timer it sleeps on
///
/// tokio cannot be asked whether a runtime has a time driver: a tokio timer made on a
/// runtime without one panics (and a `panic = "abort"` build aborts). So the task makes
/// a tokio timer only where one must exist to be any use: once the runtime's clock
/// reads virtual time (tokio paused or moved it, which only tests do, on a runtime built
/// with time). While the clock reads the real time, the task sleeps on the global
/// wheel instead ([`Alarm`]), woken there on the wheel's tick grid, as tokio's timer
/// wakes on its millisecond grid; the turn, and every wake of a task that a deadline
/// fired, stays in the runtime. A runtime without a time driver is then served as any
/// other: none of its deadlines asks tokio for a timer.
///
/// On virtual time the sleep is tokio's, polled with a waker of its own
/// ([`TurnThenWake`]): when tokio's timer fires it, the wheel is turned at once, where
/// tokio fires its own timers, and then the task is woken. So a deadline fires in the
/// same step as a tokio timer of the same instant would: `tokio::time::advance(d).await`
/// returns with both fired, which a paused test observes (a turn left to the task would
/// come one scheduling round later, after the code that called `advance` looked), and a
/// paused runtime with nothing else to do auto-advances to the wheel's next turn.
///
/// A clock paused while the task sleeps on the global wheel is seen at its next wake
/// (an arm earlier than its plan, or the alarm), and tokio's timer is used from then
/// on; until then tokio's auto-advance does not stop at the wheel's plan.
struct DriverTask {
    home: &'static Home,
    /// To read the runtime's clock one last time while the task is dropped.
    handle: Handle,
    /// `None` once the task let go of the home.
    slot: Option<DriverSlot<'static, RuntimeClock, Growable>>,
    sleeper: RuntimeSleeper,
    /// tokio's timer, on virtual time only.
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The sleep on the global wheel, on real time.
    alarm: Option<Alarm>,
    /// The reading `sleep` or `alarm` was made for.
    planned: Duration,
    /// The runtime's clock has read virtual time: tokio's timer from now on.
    on_tokio_timer: bool,
    turn_then_wake: Arc<TurnThenWake>,
    retired: bool,
}

/// A sleep on the global wheel, until a reading of the global clock.
type Alarm = Pin<Box<punctual_core::Sleep<'static, crate::global::Global>>>;

/// At most this many turns per poll before the task yields to its runtime.
const TURNS_PER_POLL: usize = 16;

impl DriverTask {
    fn new(home: &'static Home, handle: Handle) -> Self {
        Self {
            home,
            handle,
            slot: Some(home.wheel.driver_slot()),
            sleeper: RuntimeSleeper::new(home.wheel.clock()),
            sleep: None,
            alarm: None,
            planned: Duration::ZERO,
            on_tokio_timer: false,
            turn_then_wake: Arc::new(TurnThenWake {
                wheel: &home.wheel,
                task: Mutex::new(Some(None)),
            }),
            retired: false,
        }
    }

    /// Registers, turns, and returns the reading of the next turn (`Duration::MAX`:
    /// idle, wait for an arm to wake the task).
    fn turn(&mut self, cx: &Context<'_>) -> Duration {
        let slot = self.slot.as_mut().expect("held until the task lets go");
        let has_place = slot.register(cx.waker());
        // A waker that panics must not stop the driver (the hook has reported it; the
        // wheel keeps the remaining wakes for the next turn, which comes at once).
        let next = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| slot.turn()))
            .unwrap_or(Reading::ZERO);
        if has_place {
            next.as_duration()
        } else {
            // No place for the waker (three other drivers hold theirs): turn again
            // within a tick, and never wait idle.
            next.min(self.home.wheel.now() + TICK).as_duration()
        }
    }
}

impl DriverTask {
    /// Lets go of everything that reaches the wheel from this task (its timers, the
    /// waker of tokio's timer, its place for a waker), before the home is let go: a
    /// home let go may serve another runtime next.
    fn let_go(&mut self) {
        self.sleep = None;
        self.alarm = None;
        self.turn_then_wake.let_go();
        self.slot = None;
    }

    /// Sleeps until reading `next` of the wheel's clock: whether the sleep is still
    /// pending.
    fn sleep_until(&mut self, next: Duration, cx: &mut Context<'_>) -> bool {
        if !self.on_tokio_timer && self.home.wheel.clock().reads_virtual_time() {
            self.on_tokio_timer = true;
            self.alarm = None;
        }
        if self.on_tokio_timer {
            if self.sleep.is_none() || next != self.planned {
                self.planned = next;
                self.sleep = Some(Box::pin(
                    self.sleeper.sleep_until(Reading::since_origin(next)),
                ));
            }
            let waker = Waker::from(Arc::clone(&self.turn_then_wake));
            let sleep = self.sleep.as_mut().expect("just set");
            if sleep
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
            {
                return true;
            }
            self.sleep = None;
        } else {
            // On the tick grid: the wheel looks at crowded ticks early (for tokio's
            // timer), and a precise wake at each of their deadlines would walk the tick
            // once per deadline; on the grid, each fires by the end of its tick.
            let next = on_tick_grid(next, TICK);
            if self.alarm.is_none() || next != self.planned {
                self.planned = next;
                let clock = self.home.wheel.clock();
                let at =
                    crate::global::reading_at(clock.global_reading(Reading::since_origin(next)));
                self.alarm = Some(Box::pin(punctual_core::Sleep::new(
                    crate::global::Global,
                    punctual_core::Limit::At(at),
                )));
            }
            let alarm = self.alarm.as_mut().expect("just set");
            if alarm.as_mut().poll(cx).is_pending() {
                return true;
            }
            self.alarm = None;
        }
        false
    }
}

impl Future for DriverTask {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        this.turn_then_wake.set_task(cx.waker());
        for _ in 0..TURNS_PER_POLL {
            let next = this.turn(cx);
            if this.home.retirable() {
                // Retiring: the clock stops reading this runtime, so that the drained
                // home can be read from anywhere.
                this.let_go();
                this.home.wheel.clock().switch_to_real();
                this.retired = true;
                this.home.undrive();
                return Poll::Ready(());
            }
            if next == Duration::MAX {
                this.sleep = None;
                this.alarm = None;
                return Poll::Pending;
            }
            if this.sleep_until(next, cx) {
                return Poll::Pending;
            }
        }
        // The sleeps keep completing at once: yield, then go on.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// `at` rounded up to a whole number of `tick`s (saturating).
pub(crate) fn on_tick_grid(at: Duration, tick: Duration) -> Duration {
    let tick = tick.as_nanos().max(1);
    let rounded = at.as_nanos().div_ceil(tick).saturating_mul(tick);
    u64::try_from(rounded).map_or(Duration::MAX, Duration::from_nanos)
}

/// The waker of the driver task's sleep on tokio's timer: turns the wheel, then wakes
/// the task.
struct TurnThenWake {
    wheel: &'static Wheel<RuntimeClock, Growable>,
    /// The task's waker; the outer `None` once the task let go of the home. A wake holds
    /// the lock through its turn, so that none is still turning once the task let go:
    /// tokio's timer may still wake a clone of this waker then (its wake may be on its
    /// way from another thread), and the wheel may serve another runtime by then, on
    /// whose clock a reading taken here would be another runtime's.
    task: Mutex<Option<Option<Waker>>>,
}

impl TurnThenWake {
    fn set_task(&self, waker: &Waker) {
        let mut task = self.task.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(task) = task.as_mut() {
            if !task.as_ref().is_some_and(|t| t.will_wake(waker)) {
                *task = Some(waker.clone());
            }
        }
    }

    /// From now on a wake turns nothing (see `task`).
    fn let_go(&self) {
        *self.task.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl Wake for TurnThenWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // tokio wakes a timer from its time driver, in the runtime's context: the clock
        // reads the runtime's time here. A turn that finds another in progress leaves it
        // to that one. A waker that panics while this turn fires is reported by the hook
        // and must not unwind into tokio's timer.
        let held = self.task.lock().unwrap_or_else(|p| p.into_inner());
        let Some(task) = held.as_ref() else {
            return;
        };
        let task = task.clone();
        let _ = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| self.wheel.turn()));
        drop(held);
        if let Some(task) = task {
            task.wake();
        }
    }
}
impl Drop for DriverTask {
    fn drop(&mut self) {
        if self.retired {
            return;
        }
        // The last reading must be the runtime's (virtual, if paused): tokio may drop
        // tasks outside its context while it shuts down.
        let _context = self.handle.enter();
        self.let_go();
        self.home.runtime_shut_down();
    }
}
