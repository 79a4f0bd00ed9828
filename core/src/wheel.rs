//! The wheel: any thread arms deadlines, and one driver at a time advances the levels.
//!
//! # Layout
//!
//! This file holds [`Wheel`], its public face, and the rules below. Its parts:
//!
//! * Any thread: `start` (where a deadline starts) and `arm` (arm, poll, release).
//! * The driver role: `role` (taking it, letting go), `turn` (one turn, pass by pass).
//! * A turn's steps: `cascade` (slots that come up), `intake` (the inboxes), `fire`.
//! * `plan`: the plan arming threads read, and the wheel's tick arithmetic.
//! * Shared structures: `entry`, `lists`, `shards`, `spare`, `storage`, `handoff`.
//! * The driver's: `levels`, `grain` and `heads` (the slots), `stats` (its counters).
//! * Places for wakers: `driver_wakers` (drivers') and `degraded_wakers` (full wheel).
//!
//! Time is `crate::time`'s. Futures reach the wheel through `crate::future::timer`,
//! which this module never names.
//!
//! # Ground rules
//!
//! * Any thread may arm, poll or release an entry at any time, without a lock.
//! * Each costs a bounded number of atomic operations: the entry, a free list, one inbox.
//! * Each shard of threads has its own free list and inboxes (see `shards`).
//! * One thread at a time holds the *driver role* (`role`). Only it touches [`Levels`].
//! * A thread that finds the role taken sets `REQUESTED` and returns without waiting.
//! * The holder honours a request with a fresh reading before it lets go.
//! * Taking, requesting and letting go are read-modify-writes of `role`.
//!   So a request is never missed: the holder's release fails if one came in.
//! * A requester is told to turn again by the next tick boundary at the latest.
//! * Drivers keep their wakers in places of their own (see `driver_wakers`).
//!   A wake for a sooner turn wakes them all.
//! * New entries reach the driver through arm inboxes, released ones through cancel
//!   inboxes.
//! * A turn takes every cancel inbox before any arm inbox. An entry it reclaims has
//!   then left its arm inbox, even one armed and cancelled through different shards.
//! * The driver wakes a waker only after the entry's outcome is decided.
//! * It lets go of an entry only after taking its waker out. So it never wakes the
//!   waker of a later deadline that reused the entry.
//! * Fired entries wait on the driver's to-wake list. Wakes happen only while the
//!   levels are consistent.
//! * A panicking waker unwinds to the turn's caller. The role is let go, and the next
//!   turn wakes the rest.
//!
//! # Waking the driver
//!
//! * The driver publishes its plan: the tick `next_wake`, and `offset` ("Sub-tick firing").
//! * It then checks each inbox head with a read-modify-write (Release).
//! * An arming thread pushes with a read-modify-write of the same head (Acquire).
//!   It then reads the plan, and wakes the drivers if its deadline is earlier.
//! * Read-modify-writes of one head are totally ordered. Either the check finds the
//!   entry, or the push synchronises with it and the arm sees the plan. No SeqCst fence.
//! * The driver checks only the shards in use, named in the plan word (see `shards`,
//!   "Shards in use"). It publishes that word last, with a read-modify-write.
//! * A thread that finds its shard unmarked after its push marks it by read-modify-write.
//!   Either the driver's write finds the mark, or the mark acquires the plan.
//!
//! With nothing armed the driver is *idle* (`ACTIVE` clear). It needs no timer, and
//! every arm wakes it. It goes idle only after lingering [`LINGER`] ticks ("Taking back").
//!
//! A turn that takes the wheel out of idle wakes every other driver, after letting go of
//! the role. Arms later than the new plan wake no one, so an idle driver must hear of it.
//! A turn counts as leaving idle when any of its passes does.
//!
//! `next_wake` holds the tick's low 32 bits, so 32-bit targets stay lock-free. The driver
//! plans at most [`MAX_SLEEP`] ticks ahead. Readers rebuild the tick from a nearby one,
//! exactly while the driver is less than 2^31 ticks overdue.
//!
//! # Reclaiming cancelled entries
//!
//! * A cancelled entry waits on a cancel inbox until the driver's next turn.
//! * After a turn that reclaimed entries, the next turn is planned at most a tick ahead.
//! * A cancel that finds the inbox empty wakes the driver if it plans longer than a tick.
//! * So a cancelled entry is free again within about a tick, unless the driver starves.
//! * One turn's reclaimed entries go back to a free list as one chain, in one CAS.
//!
//! # Taking back
//!
//! * A release that finds its entry at the arm inbox's head takes it back
//!   ([`Inbox::unpush`]) and frees it itself. The driver never sees it.
//! * Otherwise (taken, or under later arms) the release cancels through a cancel inbox.
//! * With thread spares ([`Wheel::with_thread_spares`]) the thread keeps the freed entry
//!   for its next arm (see `spare`).
//! * A driver woken from idle keeps a planned turn for [`LINGER`] ticks before idling.
//! * A new wheel is marked idle before its first turn, and that turn does not linger.
//!   So a wheel with nothing ever armed plans no turn at all.
//!
//! [`Inbox::unpush`]: crate::wheel::lists::Inbox::unpush
//!
//! # Sub-tick firing
//!
//! * An entry keeps its exact deadline, in nanoseconds. Its tick only places it.
//! * A turn fires every entry it meets whose deadline has passed. That includes new
//!   entries from the arm inboxes whose tick is still ahead.
//! * The next slot may be the level-0 slot of the very next tick, and *sparse*: at most
//!   [`SPARSE`](crate::wheel::levels::SPARSE) entries. The driver then plans its turn at
//!   the slot's earliest deadline, rounded up to a grain (`levels`, "Sparse slots").
//! * Such a turn walks the slot, fires the entries due and leaves the rest.
//! * Any turn less than a grain before that plan walks the slot too. So manual clock
//!   advances that add up to a deadline fire it, however they are split.
//! * A dense slot fires at its tick, unless the wheel has early looks
//!   ([`Wheel::with_early_looks`]; `levels`, "Early looks").
//! * Nothing fires before its deadline, and nothing later than its tick.
//!
//! Arming threads read the planned tick and `Plan::offset`: how far into the tick before
//! it the driver turns. An arm into that tick due before the offset wakes the driver.
//! One due after it, or into a dense slot planned at its tick, wakes no one.
//!
//! Firing falls back to the tick, never later than without sub-tick firing, for:
//!
//! * an arm into the tick of a plan from no slot (end of lingering, reclaim horizon);
//! * offsets over `u32::MAX` ns (ticks over 4.29 s), which the levels do not keep;
//! * a thread that asks the role's holder to turn for it: it is told the tick.
//!
//! A turn never uses a reading older than the start of the tick already reached. Some
//! turn read that much, so nothing fires early. A deadline armed from an older reading
//! still fires, rather than going into a slot behind the wheel.
//!
//! # Firing order
//!
//! * A turn that passes many ticks fires them in tick order.
//! * Tasks wake in firing order: the to-wake list is first in, first out.
//! * A higher slot's entries due in a later tick than the one reached go down the
//!   levels again. They fire when the turn reaches their own tick.
//! * Within one tick, entries fire in their slot's order.
//!
//! # Exclusive moments
//!
//! An entry's waker slot is written without the `AtomicWaker` protocol only by its sole
//! owner:
//!
//! * the arming thread, from leaving the free list to the push onto the arm inbox;
//! * the thread that cleared the last ownership bit, until the push onto the free list;
//! * a cancelling handle, from its CAS out of `HANDLE|WHEEL` to its cancel-inbox push.
//!
//! The Release pushes and Acquire pops of the lists order those writes with other threads.
//! In the third moment the driver may still reach the entry. It touches a waker only
//! after its own CAS to `FIRED`, which the cancel made fail. It reclaims the entry only
//! after the push.

use core::fmt;
use core::task::Waker;
use core::time::Duration;

use crate::sync::Padded;

use crate::clock::Clock;
use crate::sync::{AtomicU32, Ordering, UnsafeCell};
use crate::time::{Reading, StoredTick};
use degraded_wakers::DegradedWakers;
use driver_wakers::DriverWakers;
use entry::{HANDLE, WHEEL};
use lists::Fresh;
use plan::{ACTIVE, Plan};
use shards::{SHARDS, Shard};
use stats::{Counters, Stats};
use storage::{Fixed, Storage};
use turn::DriverState;

mod arm;
mod build;
mod cascade;
mod degraded_wakers;
pub(crate) mod driver_wakers;
pub(crate) mod entry;
mod fire;
mod grain;
mod handoff;
pub(crate) mod heads;
mod intake;
pub(crate) mod levels;
pub(crate) mod link;
pub(crate) mod lists;
mod plan;
mod role;
pub(crate) mod shards;
#[cfg(all(feature = "std", not(punctual_loom)))]
pub(crate) mod spare;
pub(crate) mod start;
pub(crate) mod stats;
pub(crate) mod storage;
mod turn;

/// The driver never plans a turn further than this many ticks ahead (see "Waking the
/// driver").
pub(crate) const MAX_SLEEP: u64 = 1 << 30;

/// An idle driver woken by an arm plans a turn this many ticks ahead, even with nothing
/// armed, before it goes idle again (see "Taking back"). Not a new wheel's first turn.
pub(crate) const LINGER: u64 = 16;

/// A hierarchical timer wheel: deadlines are armed on it, and a driver turns it.
///
/// * `C`: the [`Clock`] deadlines are measured on.
/// * `S`: where entries live: [`Fixed<N>`](Fixed) (no allocation, `no_std`) or
///   [`Growable`] (with `alloc`).
///
/// A wheel does nothing on its own: something must turn it. With `std`, the facade crate
/// `punctual` provides a global wheel with its own thread; the adapters turn a wheel from a
/// tokio, smol or embassy task through [`Wheel::driver`]; tests turn a wheel on a
/// [`ManualClock`](crate::ManualClock) with [`Wheel::advance`].
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
    /// Free lists and inboxes, one set per shard of threads (see `shards`).
    shards: [Shard; SHARDS],
    /// Entries never used yet.
    fresh: Fresh,
    /// The driver role: `DRIVING` while a thread owns `levels`, `REQUESTED` when another
    /// thread wanted to advance meanwhile.
    role: AtomicU32,
    /// The drivers' wakers, woken when an arm or a cancel needs a turn sooner than
    /// planned.
    driver_wakers: DriverWakers,
    /// Where degraded deadlines leave their wakers for the next tick (see
    /// `degraded_wakers`).
    degraded_wakers: DegradedWakers,
    /// What the driver plans; written once per turn, read by every arm and cancel, so on
    /// lines of its own.
    plan: Padded<Plan>,
    /// Owned by the holder of the driver role; written throughout a turn, so on lines of
    /// its own (away from what the arm path reads).
    driver: Padded<UnsafeCell<DriverState>>,
    /// Written by the driver for each deadline it fires or reclaims: lines of their own.
    counters: Padded<Counters>,
    /// Fired entries handed to a polling thread (see `handoff`): lines of their own.
    handoff: Padded<handoff::Handoff>,
    /// Threads may keep a free entry of this wheel aside (see `spare`): set only on a wheel
    /// that stays at its address for the rest of the process.
    spares: bool,
    /// The driver looks at dense level-0 slots before their tick too.
    early_looks: bool,
    /// A turn hands its fired deadlines' wakes to the first task it wakes (see `handoff`).
    batched_wakes: bool,
}

impl<C, S> Wheel<C, S> {
    /// The drivers' wakers, for [`DriverSlot`](crate::DriverSlot) (whose `Drop` has no
    /// bounds on the wheel's types).
    pub(crate) fn driver_wakers(&self) -> &DriverWakers {
        &self.driver_wakers
    }

    /// Whether the last turn left the wheel idle (nothing armed, no turn planned): then
    /// every arm wakes the drivers.
    pub(crate) fn is_idle(&self) -> bool {
        self.plan.word.load(Ordering::Acquire) & ACTIVE == 0
    }
}

/// `Wheel` with a fixed capacity of `N` entries.
pub type FixedWheel<C, const N: usize, W = u32, const L: usize = 6> = Wheel<C, Fixed<N, W, L>>;
/// `Wheel` that grows on demand.
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub type GrowableWheel<C> = Wheel<C, crate::Growable>;

// SAFETY: `driver` is only accessed by the thread holding the driver role (`role`,
// acquired with Acquire and released with Release), which serialises every access; all other
// shared fields are atomics or `Sync` (`C: Sync` by `Clock`, `S: Sync` by `Storage`).
unsafe impl<C: Clock, S: Storage> Sync for Wheel<C, S> {}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// The clock deadlines on this wheel are measured on.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The clock's reading now: [`Clock::now`] as a [`Reading`], the instant deadlines on
    /// this wheel are measured in (saturating at [`Reading::END`]).
    ///
    /// ```
    /// use core::time::Duration;
    /// use punctual_core::{Fixed, ManualClock, Reading, Wheel};
    ///
    /// let wheel: Wheel<ManualClock, Fixed<4>> =
    ///     Wheel::fixed(ManualClock::starting_at(Duration::from_secs(2)), Duration::from_millis(1));
    /// assert_eq!(wheel.now(), Reading::from_nanos(2_000_000_000));
    /// ```
    #[inline]
    pub fn now(&self) -> Reading {
        Reading::since_origin(self.clock.now())
    }

    /// The wheel's tick: the width of its slots, and the unit of the lateness bound. A
    /// deadline fires at most two ticks after its time on a driver that is not starved, and
    /// one of few in its slot fires at its own time, as late only as the driver's wake-up
    /// (see the module docs, "Sub-tick firing").
    pub fn tick(&self) -> Duration {
        Duration::from_nanos(self.ticks().tick())
    }

    /// How many entries are in use: armed deadlines, plus fired or cancelled ones the wheel
    /// has not reclaimed yet. Scans the slab; meant for tests and diagnostics.
    pub fn occupied(&self) -> usize {
        (0..self.fresh.touched())
            .filter(|&i| {
                self.storage.entry(i).state.load(Ordering::Acquire) & (HANDLE | WHEEL) != 0
            })
            .count()
    }

    /// How many entries the wheel can hold right now (all `N` for a fixed wheel; what has
    /// been allocated so far for a growable one).
    pub fn capacity(&self) -> usize {
        self.storage.usable()
    }

    /// How many polls found the wheel full and fell back to checking the clock.
    pub fn degraded_polls(&self) -> usize {
        self.counters.degraded_polls.load(Ordering::Relaxed)
    }

    /// What the wheel has done so far: deadlines armed, fired, cancelled, the lateness
    /// histogram, degraded polls, and entries in use (now and at most). Scans the slab for
    /// `occupied`; the counters themselves cost the arm and cancel paths nothing.
    pub fn stats(&self) -> Stats {
        self.counters
            .snapshot(self.fresh.touched() as usize, self.occupied())
    }

    /// Fires every deadline whose tick has come by the clock's current time (and those of
    /// a sparse slot whose own time has: "Sub-tick firing") and returns the clock reading
    /// at which the wheel wants to be turned next: a tick boundary, or the time of the
    /// next sparse slot's earliest deadline.
    ///
    /// Turn the wheel again when that time comes, or earlier when the waker given to
    /// [`Wheel::register_driver`] (or to a [`DriverSlot`](crate::DriverSlot)) is woken.
    /// [`Reading::END`] means nothing is armed: wait for the waker only, with no timer
    /// (every arm wakes an idle driver).
    ///
    /// If another thread is turning the wheel at the moment, this returns at once and that
    /// thread does the work before it lets go. That thread may plan anew as it does, with
    /// no one to tell, so the time returned then is the next tick boundary at the latest
    /// (never `END`): turn again by then.
    pub fn turn(&self) -> Reading {
        self.turn_as(None)
    }

    /// [`Wheel::turn`] by the driver in waker slot `slot` (`None`: a driver with no slot,
    /// or a turn by hand), which a turn that takes the wheel out of idle then does not
    /// wake (see "Waking the driver").
    pub(crate) fn turn_as(&self, slot: Option<usize>) -> Reading {
        self.turn_at(self.now(), slot)
    }

    /// Registers the waker to wake when the wheel must be turned sooner than planned: a
    /// deadline earlier than the planned turn was armed, or cancelled entries wait to be
    /// reclaimed. Register before turning, so a wake during the turn is not lost.
    ///
    /// This is the one place of a hand-written driver loop: one such loop per wheel (a
    /// second one's registration would replace the first's). Drivers that may run
    /// side by side each take a place of their own with [`Wheel::driver_slot`], as
    /// [`Wheel::driver`]'s futures and `punctual`'s timer threads do, and turn through
    /// [`DriverSlot::turn`](crate::DriverSlot::turn). A turn that takes the wheel out of
    /// idle wakes every driver, so that none waits idle on a plan it was not told of; it
    /// cannot tell a hand-written loop's own turn from another's, so the loop is woken
    /// once by each of its own turns out of idle.
    pub fn register_driver(&self, waker: &Waker) {
        self.driver_wakers.register_shared(waker);
    }

    /// The clock reading of the tick of the driver's next planned turn, as of its last turn
    /// ([`Reading::END`] while it is idle). The driver may turn earlier within the tick
    /// before, for a sparse slot ("Sub-tick firing"); this is the boundary it turns by.
    /// A boundary at or past the clock's last reading (`u64::MAX` ns) is given as the
    /// reading before it, as [`Wheel::turn`] does, so that it never reads as idle.
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
#[cfg_attr(
    docsrs,
    doc(cfg(any(target_has_atomic = "64", feature = "portable-atomic")))
)]
impl<S: Storage> Wheel<crate::ManualClock, S> {
    /// Moves the manual clock forward by `by` and turns the wheel on this thread: when this
    /// returns, every deadline whose tick has come by the new time (and each one of a
    /// sparse slot whose own time has) has fired and its task was woken (unless
    /// another thread is turning the wheel at this moment; that thread then does it before
    /// it lets go). Returns the new clock reading.
    pub fn advance(&self, by: Duration) -> Reading {
        let now = Reading::since_origin(self.clock.advance(by));
        self.turn_at(now, None);
        now
    }
}
