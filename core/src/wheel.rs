//! The wheel: any thread arms deadlines, and one driver at a time advances the levels.
//!
//! # Ground rules
//!
//! * Any thread may arm, poll or release an entry at any time, without a lock, in a
//!   bounded number of atomic operations: the entry, a free list, one inbox.
//! * One thread at a time holds the driver role; only it touches the levels.
//! * The driver wakes a waker only after the entry's outcome is decided, and lets go of
//!   the entry only after taking its waker out.
//! * Wakes happen only while the levels are consistent. A panicking waker unwinds to the
//!   turn's caller, the role is let go, and the next turn wakes the rest.
//!
//! # Waking the driver
//!
//! * The driver publishes `next_wake`, `offset`, then the plan word by read-modify-write,
//!   then checks each inbox head of the shards in use by read-modify-write. An arm pushes
//!   by read-modify-write of the same head, then reads the plan and wakes the drivers if
//!   its deadline is earlier: the check finds the entry, or the arm sees the plan.
//! * Idle (`ACTIVE` clear): nothing armed, no timer, every arm wakes the driver; entered
//!   after lingering [`LINGER`] ticks (not on a new wheel's first turn). A turn out of
//!   idle, in any pass, wakes every other driver after letting go of the role.
//! * `next_wake` holds the tick's low 32 bits; with plans at most [`MAX_SLEEP`] ahead,
//!   readers rebuild it exactly while the driver is less than 2^31 ticks overdue.
//! * A cancel that finds its inbox empty wakes the driver if it plans beyond a tick
//!   (`arm`'s `trusted_start`).
//! * A release that finds its entry at its arm inbox's head takes it back
//!   ([`Inbox::unpush`]) and frees it: the driver never sees it.
//!
//! # Sub-tick firing (feature `sub-tick`; without it every slot fires at its tick)
//!
//! * An entry keeps its exact deadline; its tick only places it. A turn fires every due
//!   entry it meets. Nothing fires before its deadline, nor later than its tick.
//! * A sparse level-0 slot is planned at its earliest deadline, rounded up to a grain
//!   (`levels`); an arm into the planned tick wakes the driver only if due before
//!   `Plan::offset`. An arm into a plan from no slot (lingering, reclaim horizon), an
//!   offset over `u32::MAX` ns, or a turn asked of the role's holder fires at the tick.
//!
//! # Exclusive moments
//!
//! Only an entry's sole owner writes its waker slot outside the `AtomicWaker` protocol,
//! ordered by the lists' Release pushes and Acquire pops: the arming thread until its
//! arm-inbox push; the thread that cleared the last ownership bit until its free-list
//! push; a cancelling handle from its CAS to `CANCELLED` to its cancel-inbox push.
//!
//! [`Inbox::unpush`]: crate::wheel::lists::Inbox::unpush

use core::fmt;
use core::task::Waker;
use core::time::Duration;

use crate::clock::Clock;
use crate::sync::{AtomicU32, Ordering, Padded, UnsafeCell};
use crate::time::{Reading, StoredTick};
use entry::{HANDLE, WHEEL};
use lists::{NeverUsed, Shard};
use role::{ACTIVE, Plan};
use stats::Counters;
#[cfg(feature = "stats")]
use stats::Stats;
use storage::{Fixed, Storage};
use turn::DriverState;
use wakers::{DegradedWakers, DriverWakers};

mod arm;
mod build;
pub(crate) mod entry;
mod fire;
pub(crate) mod heads;
pub(crate) mod levels;
pub(crate) mod lists;
mod role;
#[cfg(all(feature = "std", not(punctual_loom)))]
pub(crate) mod spare;
pub(crate) mod start;
pub(crate) mod stats;
pub(crate) mod storage;
mod turn;
mod wakers;

/// The driver never plans a turn further than this many ticks ahead.
pub(crate) const MAX_SLEEP: u64 = 1 << 30;

/// Shards per wheel.
#[cfg(all(feature = "std", not(punctual_loom)))]
pub(crate) const SHARDS: usize = 8;
/// Two under loom: enough to model entries crossing shards.
#[cfg(all(punctual_loom, not(punctual_loom_one_shard)))]
pub(crate) const SHARDS: usize = 2;
/// One under loom with `punctual_loom_one_shard`, to model firmware's single shard.
#[cfg(all(punctual_loom, punctual_loom_one_shard))]
pub(crate) const SHARDS: usize = 1;
/// Shards per wheel.
#[cfg(all(not(feature = "std"), not(punctual_loom)))]
pub(crate) const SHARDS: usize = 1;

const _: () = assert!(
    SHARDS <= 30,
    "one bit per shard beside the plan word's idle bit and its top bit"
);

/// Ticks a driver woken from idle keeps a turn planned, even with nothing armed.
pub(crate) const LINGER: u64 = 16;

/// A hierarchical timer wheel: deadlines are armed on it, and a driver turns it.
///
/// * `C`: the [`Clock`] deadlines are measured on.
/// * `S`: where entries live: [`Fixed<N>`](Fixed) (no allocation, `no_std`) or
///   [`Growable`] (with `alloc`).
///
/// Something must turn it: `punctual`'s global wheel thread, an adapter's task through
/// [`Wheel::driver`], or a test's [`Wheel::advance`] on a [`ManualClock`](crate::ManualClock).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{Fixed, ManualClock, Wheel};
///
/// let wheel: Wheel<ManualClock, Fixed<16>> = Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
/// let mut sleep = core::pin::pin!(wheel.sleep(Duration::from_millis(10)));
/// let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
/// assert!(sleep.as_mut().poll(&mut cx).is_pending());
/// wheel.advance(Duration::from_millis(10));
/// assert!(sleep.as_mut().poll(&mut cx).is_ready());
/// ```
#[cfg_attr(feature = "alloc", doc = "\n[`Growable`]: crate::Growable")]
#[cfg_attr(
    not(feature = "alloc"),
    doc = "\n[`Growable`]: https://docs.rs/punctual-core/latest/punctual_core/struct.Growable.html"
)]
pub struct Wheel<C, S> {
    clock: C,
    /// The tick, in nanoseconds, with its reciprocal.
    tick: StoredTick,
    storage: S,
    /// One free list and two inboxes per shard of threads.
    shards: [Shard; SHARDS],
    never_used: NeverUsed,
    role: AtomicU32,
    driver_wakers: DriverWakers,
    degraded_wakers: DegradedWakers,
    /// Written once per turn, read by every arm and cancel: lines of its own.
    plan: Padded<Plan>,
    /// The role holder's, written throughout a turn: lines of its own.
    driver: Padded<UnsafeCell<DriverState>>,
    /// Written by the driver per fire or reclaim: lines of their own. No bytes without
    /// the `stats` feature.
    counters: Padded<Counters>,
    handoff: Padded<lists::Inbox>,
    /// Threads may keep a free entry aside (`spare`): only on a wheel that never moves.
    spares: bool,
    /// Read at the start of each turn; any thread may switch it
    /// ([`Wheel::set_precise_fires`]). A hint, not a hand-off: relaxed.
    precise_fires: core::sync::atomic::AtomicBool,
    batched_wakes: bool,
}

impl<C, S> Wheel<C, S> {
    /// For [`DriverSlot`](crate::DriverSlot)'s `Drop`, which has no bounds on `C` and `S`.
    pub(crate) fn driver_wakers(&self) -> &DriverWakers {
        &self.driver_wakers
    }

    /// Whether the last turn left the wheel idle: every arm then wakes the drivers.
    pub(crate) fn is_idle(&self) -> bool {
        self.plan.word.load(Ordering::Acquire) & ACTIVE == 0
    }
}

/// `Wheel` with a fixed capacity of `N` entries.
pub type FixedWheel<C, const N: usize, W = u32, const L: usize = 6> = Wheel<C, Fixed<N, W, L>>;
/// `Wheel` that grows on demand.
#[cfg(feature = "alloc")]
pub type GrowableWheel<C> = Wheel<C, crate::Growable>;

// SAFETY: only the driver role's holder (Acquire to take, Release to let go) touches
// `driver`; every other field is atomic or `Sync` (`Clock: Sync`, `Storage: Sync`).
unsafe impl<C: Clock, S: Storage> Sync for Wheel<C, S> {}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// The clock deadlines on this wheel are measured on.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// [`Clock::reading`]: [`Clock::now`] as a [`Reading`] (saturating at [`Reading::END`]).
    ///
    /// ```
    /// use core::time::Duration;
    /// use punctual_core::{Fixed, ManualClock, Reading, Wheel};
    ///
    /// let wheel: Wheel<ManualClock, Fixed<4>> =
    ///     Wheel::fixed(ManualClock::starting_at(Duration::from_secs(2)), Duration::from_millis(1));
    /// assert_eq!(wheel.now(), Reading::from_nanos(2_000_000_000));
    /// ```
    // Out of line on 32-bit targets: a firmware's clock read (a critical section around a
    // tick counter) would otherwise be copied into every caller.
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    pub fn now(&self) -> Reading {
        self.clock.reading()
    }

    /// The wheel's tick: a deadline fires at most two ticks late on a driver not starved.
    pub fn tick(&self) -> Duration {
        crate::time::nanos_to_duration(self.ticks().tick())
    }

    /// Entries in use: armed, or fired or cancelled and not yet reclaimed. Scans the slab.
    pub fn occupied(&self) -> usize {
        (0..self.never_used.touched())
            .filter(|&i| {
                self.storage.entry(i).state.load(Ordering::Acquire) & (HANDLE | WHEEL) != 0
            })
            .count()
    }

    /// Entries the wheel can hold now (`N`, or what a growable one has allocated).
    pub fn capacity(&self) -> usize {
        self.storage.usable()
    }

    /// How many polls found the wheel full and fell back to checking the clock.
    #[cfg(feature = "stats")]
    pub fn degraded_polls(&self) -> usize {
        self.counters.get(stats::DEGRADED_POLLS)
    }

    /// What the wheel has done so far (see [`Stats`]). Scans the slab for `occupied`.
    #[cfg(feature = "stats")]
    pub fn stats(&self) -> Stats {
        self.counters
            .snapshot(self.never_used.touched() as usize, self.occupied())
    }

    /// Fires every deadline that has come due by its tick (or, in a sparse slot, its own
    /// time) and returns the reading to turn again at, or sooner if the driver's waker is
    /// woken. [`Reading::END`]: nothing is armed, wait for the waker only. If another
    /// thread is turning, returns at once, by the next tick boundary at the latest.
    pub fn turn(&self) -> Reading {
        self.turn_as(None)
    }

    /// [`Wheel::turn`] by the driver in waker slot `slot`, which a turn out of idle skips.
    pub(crate) fn turn_as(&self, slot: Option<usize>) -> Reading {
        self.turn_at(self.now(), slot)
    }

    /// Registers the waker to wake when the wheel must be turned sooner than planned.
    /// Register before turning, so a wake during the turn is not lost.
    ///
    /// One such loop per wheel; drivers side by side each use a [`Wheel::driver_slot`].
    /// Each of this loop's own turns out of idle also wakes it once.
    pub fn register_driver(&self, waker: &Waker) {
        self.driver_wakers.register_shared(waker);
    }

    /// The tick boundary the driver's next planned turn is by ([`Reading::END`]: idle).
    pub fn next_turn(&self) -> Reading {
        let reference = self.ticks().floor(self.now());
        self.plan_reading(self.planned_turn(reference))
    }
}

impl<C: fmt::Debug, S> fmt::Debug for Wheel<C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wheel")
            .field("clock", &self.clock)
            .field("tick", &Duration::from_nanos(self.tick.get().tick()))
            .finish_non_exhaustive()
    }
}

#[cfg(any(target_has_atomic = "64", feature = "portable-atomic"))]
impl<S: Storage> Wheel<crate::ManualClock, S> {
    /// Moves the clock forward by `by` and turns the wheel here; returns the new reading.
    pub fn advance(&self, by: Duration) -> Reading {
        let now = Reading::since_origin(self.clock.advance(by));
        self.turn_at(now, None);
        now
    }
}
