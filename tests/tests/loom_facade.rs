//! loom models of the facade's lock-free state machines, which the core's models
//! (`core/tests/loom/`) do not reach:
//!
//! * the global wheel's state word (`src/global/state.rs`): readings of
//!   the global clock that race to start the timer thread start exactly one, on the one
//!   clock that `GlobalClock::select` and the first reading agree on, also when a start
//!   fails;
//! * the timer threads' fork gate (`adapters/thread/src/fork_gate.rs`): a fork never
//!   overlaps a turn (it waits for the turns in progress, and turns wait for it), also
//!   when the forking thread is itself in a turn (a waker that forks);
//! * the holders of a tokio runtime's default wheel
//!   (`src/tokio_wheels/holders.rs`): its owner thread and its driver
//!   leave in any order and race, and the home is counted drained (shelved) exactly once;
//!   a driver idle on an empty wheel sees its owner leave; a claim that takes the home
//!   off the shelf while the last holder is still leaving finds its word clear.
//!
//! The files are included here as they are, with a `sync` of this test's that
//! names loom's atomics and yield (the crate's names `core`'s and `std`'s), so the models
//! check the code that runs. Run with
//! `RUSTFLAGS="--cfg punctual_loom_facade" cargo test -p punctual-tests --test loom_facade --release`
//! (`ci/loom.sh` does); without that cfg this file is empty.
#![cfg(punctual_loom_facade)]

mod sync {
    pub(crate) use loom::sync::atomic::{AtomicU8, AtomicU32, AtomicUsize, Ordering};
    pub(crate) use loom::thread::yield_now;
}

#[allow(dead_code)]
#[path = "../../src/global/state.rs"]
mod state;

#[allow(dead_code)]
#[path = "../../adapters/thread/src/fork_gate.rs"]
mod fork_gate;

#[path = "../../src/tokio_wheels/holders.rs"]
mod holders;

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use loom::thread;

use holders::Holders;
use state::{BOOT, CLOCKS, RUNNING, STARTING, STD, Start};

/// Runs `f` under loom, failing a model that loom ran only once (its threads never raced,
/// so it checked one interleaving, not all), and prints how many it explored.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = executions.clone();
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    let executions = executions.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "{}: {executions} interleavings",
        std::thread::current().name().unwrap_or("model")
    );
    assert!(executions > 1, "loom explored one interleaving");
}

/// The global state word and what happened to it: how many timer threads were spawned.
struct Global {
    state: AtomicU32,
    spawned: AtomicUsize,
}

impl Global {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            state: AtomicU32::new(0),
            spawned: AtomicUsize::new(0),
        })
    }

    /// A reading of the global clock, as `GlobalClock::now` makes it: the word it reads
    /// the clock by.
    fn read(&self) -> u32 {
        let word = self.state.load(Ordering::Acquire);
        if word & (RUNNING | STARTING) == RUNNING {
            return word;
        }
        match state::claim_start(&self.state) {
            Start::Running(word) => word,
            Start::Claimed(claimed) => {
                assert_ne!(claimed & CLOCKS, 0, "a start claimed with no clock");
                self.spawned.fetch_add(1, Ordering::Relaxed);
                state::started(&self.state)
            }
        }
    }
}

/// The word a reading used: the timer thread runs, on exactly one clock.
fn assert_running_on_one_clock(word: u32) {
    assert_eq!(word & (RUNNING | STARTING), RUNNING, "{word:#b}");
    let clock = word & CLOCKS;
    assert!(clock == STD || clock == BOOT, "{word:#b}");
}

#[test]
fn readings_that_race_start_one_timer_thread() {
    model(|| {
        let global = Global::new();
        let other = global.clone();
        let racer = thread::spawn(move || other.read());
        let mine = global.read();
        let theirs = racer.join().unwrap();
        assert_eq!(global.spawned.load(Ordering::Relaxed), 1, "timer threads");
        for word in [mine, theirs] {
            assert_running_on_one_clock(word);
            assert_eq!(word & CLOCKS, STD, "no clock was selected: StdClock");
        }
    });
}

#[test]
fn select_and_a_first_reading_agree_on_one_clock() {
    model(|| {
        let global = Global::new();
        let other = global.clone();
        let selecting = thread::spawn(move || state::select(&other.state, BOOT));
        let read = global.read();
        let selected = selecting.join().unwrap();
        let kept = global.state.load(Ordering::Acquire) & CLOCKS;
        assert!(kept == STD || kept == BOOT, "{kept:#b}");
        assert_eq!(
            selected, kept,
            "select reported another clock than the one kept"
        );
        assert_eq!(
            read & CLOCKS,
            kept,
            "a reading used another clock than the one kept"
        );
        assert_running_on_one_clock(read);
        assert_eq!(global.spawned.load(Ordering::Relaxed), 1);
    });
}

#[test]
fn failed_start_is_claimed_again_and_one_thread_runs() {
    model(|| {
        let global = Global::new();
        let other = global.clone();
        let failing = thread::spawn(move || {
            // The first attempt panics while spawning (`Unclaim` gives the claim up); the
            // next reading of the same thread tries again.
            if let Start::Claimed(_) = state::claim_start(&other.state) {
                state::abandon_start(&other.state);
            }
            other.read()
        });
        let mine = global.read();
        let theirs = failing.join().unwrap();
        assert_running_on_one_clock(mine);
        assert_running_on_one_clock(theirs);
        assert_eq!(global.spawned.load(Ordering::Relaxed), 1, "timer threads");
    });
}

/// The fork gate, and two wheels, each turned by a timer thread of its own (turns of two
/// wheels may overlap; a fork and a turn may not).
struct Gate {
    turns: AtomicUsize,
    /// Written by turns, read by forks: loom reports any access of one that overlaps the
    /// other's.
    wheels: [UnsafeCell<u32>; 2],
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            turns: AtomicUsize::new(0),
            wheels: [UnsafeCell::new(0), UnsafeCell::new(0)],
        })
    }

    /// Changes wheel `wheel`, as a turn does, in two steps between which a fork must never
    /// copy it; the caller is in a turn.
    fn change(&self, wheel: usize) {
        for _ in 0..2 {
            self.wheels[wheel].with_mut(|w| {
                // SAFETY: the gate keeps forks out while a turn is in progress, and only
                // this wheel's timer thread turns it (loom reports it if not).
                unsafe { *w += 1 }
            });
        }
    }

    /// A timer thread's turn of wheel `wheel`.
    fn turn(&self, wheel: usize) {
        fork_gate::enter(&self.turns);
        self.change(wheel);
        fork_gate::leave(&self.turns);
    }

    /// What a fork copies of wheel `wheel`, with the gate closed.
    fn copy(&self, wheel: usize) -> u32 {
        self.wheels[wheel].with(|w| {
            // SAFETY: no turn of another thread is in progress (loom reports it if not).
            unsafe { *w }
        })
    }
}

#[test]
fn fork_never_copies_a_wheel_in_the_middle_of_a_turn() {
    model(|| {
        let gate = Gate::new();
        let other = gate.clone();
        let timer = thread::spawn(move || {
            other.turn(0);
            other.turn(0);
        });
        // A fork by a thread in no turn of its own.
        fork_gate::close(&gate.turns, 0);
        let copied = gate.copy(0);
        fork_gate::open(&gate.turns);
        timer.join().unwrap();
        assert_eq!(copied % 2, 0, "the fork copied half a turn");
        assert_eq!(
            gate.turns.load(Ordering::Relaxed),
            0,
            "the gate stayed closed"
        );
    });
}

#[test]
fn waker_forking_in_a_turn_waits_only_for_other_turns() {
    model(|| {
        let gate = Gate::new();
        let other = gate.clone();
        let timer = thread::spawn(move || other.turn(1));
        // This thread's turn of wheel 0 runs a waker that forks: the fork waits for the
        // other timer thread's turn of wheel 1, not for its own (which would never end).
        fork_gate::enter(&gate.turns);
        gate.change(0);
        fork_gate::close(&gate.turns, 1);
        let copied = gate.copy(1);
        fork_gate::open(&gate.turns);
        gate.change(0);
        fork_gate::leave(&gate.turns);
        timer.join().unwrap();
        assert_eq!(copied % 2, 0, "the fork copied half of the other turn");
        assert_eq!(gate.copy(0), 4);
        assert_eq!(gate.turns.load(Ordering::Relaxed), 0);
    });
}

#[test]
fn the_child_keeps_only_the_forking_threads_own_turn() {
    // In the child only the forking thread runs: whatever the parent's word held, the
    // child's says one turn (its own, from a waker) or none, and no fork waiting.
    loom::model(|| {
        let turns = AtomicUsize::new(3 + fork_gate::FORK);
        fork_gate::reset_in_child(&turns, 1);
        assert!(fork_gate::try_enter(&turns), "the child's gate is open");
        fork_gate::leave(&turns);
        fork_gate::leave(&turns);
        assert_eq!(turns.load(Ordering::Relaxed), 0);
    });
}

/// A home, what is armed on its wheel, and how many times it was counted drained.
struct RuntimeWheel {
    state: Holders,
    armed: AtomicUsize,
    drained: AtomicUsize,
}

impl RuntimeWheel {
    fn claimed() -> Arc<Self> {
        let home = Arc::new(Self {
            state: Holders::default(),
            armed: AtomicUsize::new(0),
            drained: AtomicUsize::new(0),
        });
        home.state.claim();
        home
    }

    fn count_drained(&self) {
        assert_eq!(
            self.armed.load(Ordering::Relaxed),
            0,
            "counted with a deadline armed"
        );
        self.drained.fetch_add(1, Ordering::Relaxed);
    }

    /// The driver task, as `DriverTask::poll` runs it: registered (loom's park token
    /// stands for the waker), it retires once the owner has left and nothing is armed,
    /// and waits for a wake otherwise. loom reports a deadlock if a wake is lost.
    fn drive(&self) {
        loop {
            if self.state.owner_left() && self.armed.load(Ordering::Acquire) == 0 {
                if self.state.release_driver() {
                    self.count_drained();
                }
                return;
            }
            thread::park();
        }
    }

    /// The owner leaves, as `RuntimeWheel::disown` does: counts the home drained if the driver
    /// has stopped, and wakes it otherwise.
    fn disown(&self, driver: &thread::Thread) {
        if self.state.release_owner() {
            self.count_drained();
        } else {
            driver.unpark();
        }
    }
}

#[test]
fn waiting_driver_sees_owner_leave_home_counted_once() {
    model(|| {
        let home = RuntimeWheel::claimed();
        let other = home.clone();
        let driver = thread::spawn(move || other.drive());
        // The owner's last deadline: armed and cancelled, then the thread exits.
        home.armed.fetch_add(1, Ordering::AcqRel);
        home.armed.fetch_sub(1, Ordering::AcqRel);
        home.disown(driver.thread());
        driver.join().unwrap();
        assert_eq!(home.drained.load(Ordering::Relaxed), 1, "counted drained");
        assert!(home.state.owner_left());
    });
}

#[test]
fn owner_and_driver_leaving_together_count_home_once() {
    // The runtime shuts down with nothing armed (the driver lets go at once), while the
    // owner thread exits.
    model(|| {
        let home = RuntimeWheel::claimed();
        let other = home.clone();
        let driver = thread::spawn(move || {
            if other.state.release_driver() {
                other.count_drained();
            }
        });
        if home.state.release_owner() {
            home.count_drained();
        }
        driver.join().unwrap();
        assert_eq!(home.drained.load(Ordering::Relaxed), 1, "counted drained");
    });
}

/// A home shelved by whichever of its holders leaves last is taken off the shelf by a
/// claim on a third thread, racing with both: the shelf's lock hands it over, and the
/// claim finds the word clear (its second life's holders then leave as the first's did,
/// the last of them seeing the other gone).
#[test]
fn home_taken_off_shelf_while_holders_leave_is_clear() {
    model(|| {
        let home = RuntimeWheel::claimed();
        let shelf = Arc::new(loom::sync::Mutex::new(Vec::new()));
        let shelve = |home: &Arc<RuntimeWheel>,
                      shelf: &loom::sync::Mutex<Vec<Arc<RuntimeWheel>>>| {
            home.count_drained();
            shelf.lock().unwrap().push(home.clone());
        };
        let (other, other_shelf) = (home.clone(), shelf.clone());
        let driver = thread::spawn(move || {
            if other.state.release_driver() {
                shelve(&other, &other_shelf);
            }
        });
        let claimer_shelf = shelf.clone();
        let claimer = thread::spawn(move || {
            let home = loop {
                if let Some(home) = claimer_shelf.lock().unwrap().pop() {
                    break home;
                }
                thread::yield_now();
            };
            assert!(home.state.owner_left(), "shelved with an owner");
            home.state.claim();
            assert!(!home.state.owner_left());
            // Both bits were clear: the owner leaves first, and the driver is last.
            assert!(!home.state.release_owner(), "a driver bit was missing");
            assert!(
                home.state.release_driver(),
                "a bit of the last life was left"
            );
        });
        if home.state.release_owner() {
            shelve(&home, &shelf);
        }
        driver.join().unwrap();
        claimer.join().unwrap();
        assert_eq!(home.drained.load(Ordering::Relaxed), 1, "shelved once");
    });
}
