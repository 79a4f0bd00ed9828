//! The wheel: the shared side (arming, cancelling, waking the driver) and the driver side
//! (advancing the levels and firing).
//!
//! # Layout
//!
//! This file holds the [`Wheel`] itself, its constructors and its public face, and the
//! rules below. Its parts, each a file under `wheel/`:
//!
//! * `start`: where a deadline starts (its target, a cap, the arm), and `arm`: the
//!   deadline side (arming, polling and releasing an entry, where free entries come
//!   from). Any thread runs these.
//! * `turn`: the driver side (the driver role, a turn), and `plan`: the plan arming
//!   threads read and the wheel's tick arithmetic. Only the holder of the driver role
//!   turns.
//! * `entry` (an entry's state word and waker), `levels` (the slots), `lists` (free lists
//!   and inboxes), `shards` (one set of lists per shard of threads), `spare` (a thread's
//!   kept entry), `storage` (where entries live), `stats` (the driver's counters) and
//!   `driver_wakers` (the drivers' places for their wakers).
//!
//! Time (readings, ticks, their conversions) is `crate::time`'s; the futures that arm
//! entries reach the wheel through `crate::future::timer`, which this module never names.
//!
//! # Ground rules
//!
//! * Any thread may arm, poll or release an entry, at any time, without a lock: each is a
//!   bounded number of atomic operations on the entry, a free list and one inbox. Free
//!   lists and inboxes come one set per shard of threads (see `shards`), so that threads
//!   arming at the same time do not share their cache lines.
//! * Exactly one thread at a time holds the *driver role* (`role`), and only it touches
//!   the [`Levels`]. A thread that finds the role taken does not wait: it leaves a request
//!   (the `REQUESTED` bit) that the holder honours, with a fresh clock reading, before it
//!   lets go. Taking, requesting and letting go are read-modify-writes of the one `role`
//!   word, so a request is never missed: the holder's release fails if a request came in.
//!   The requester is told to turn again by the next tick boundary at the latest: the
//!   holder may change the plan it would otherwise sleep on.
//! * Drivers leave their wakers in places of their own (see `driver_wakers`), and a wake
//!   for a sooner turn wakes them all: several drivers may run on one wheel, and one that
//!   stops takes no other's wake with it.
//! * New entries reach the driver through the arm inboxes, released ones through the
//!   cancel inboxes. A turn takes every shard's cancel inbox first, then every arm inbox,
//!   so that every entry it is asked to reclaim has already come out of whichever arm
//!   inbox it was on (a task may move between threads, so an entry may be armed through
//!   one shard and cancelled through another).
//! * The driver wakes wakers only after an entry's outcome is decided, and lets go of the
//!   entry only after it took the waker out, so it never wakes a waker of a later deadline
//!   that reused the entry. Fired entries wait on a driver-owned to-wake list until then,
//!   and wakes happen only while the levels are consistent: a waker that panics
//!   propagates to the caller of the turn, the role is let go, and the next turn wakes the
//!   rest.
//!
//! # Waking the driver
//!
//! The driver publishes the tick it plans to turn at next (`next_wake`, with how far into
//! the tick before it the driver may turn: `offset`, see "Sub-tick firing"), then checks
//! the inboxes once more with a read-modify-write of each head (Release). An arming
//! thread pushes its entry with a read-modify-write of the same head (Acquire), then reads
//! the plan, and wakes the driver if its deadline is earlier. Read-modify-writes of one
//! location are totally ordered, so one of them comes first: either the driver's check
//! finds the new entry, or the push synchronises with the check and the arming thread sees
//! the plan it must correct. Arms later than the plan wake no one. (No SeqCst fence is
//! needed, which also keeps the handshake within what loom models exactly.)
//!
//! The driver checks only the inboxes of the shards in use. It learns which from the
//! plan word, whose idle bit it publishes last with a read-modify-write; a thread that
//! finds its shard unmarked when it reads the plan after its push marks it there with a
//! read-modify-write of its own. Again one of the two comes first: either the driver's
//! read-modify-write finds the mark and checks the shard, or the mark acquires the plan
//! (see `shards`, "Shards in use").
//!
//! With nothing armed the driver is *idle*: it publishes that instead of a plan, needs no
//! timer (a runtime's virtual clock has nothing to jump to), and every arm wakes it. (It
//! goes idle only after lingering [`LINGER`] ticks; see "Taking back".)
//!
//! A turn that takes the wheel out of idle wakes every other driver once it has let go of
//! the driver role. The arm that woke a driver is not the only way out of idle: a turn made
//! by hand ([`Wheel::turn`]), or by a driver without a place for its waker, also plans
//! ahead (it lingers), and arms later than that plan wake no one. A driver that was left
//! idle, and is waiting for its waker only, would then never learn of the plan; once the
//! plan's time had passed with no one to carry it out, no arm would ever wake a driver
//! again. Woken, each driver turns and sleeps until the plan. A turn counts as taking the
//! wheel out of idle when any of its passes does (once one has, the turn lingers, and no
//! later pass publishes idle): a pass that publishes a plan over the idle word and then
//! finds an inbox not empty passes again, and the arm behind that entry may have read the
//! new plan (at or before its deadline's tick) and so woken no one; the next pass reads
//! its own plan, not idle, yet the waiting driver has still not heard of it. (The first
//! push onto a shard marks it in use, and that mark reads the word with a
//! read-modify-write, which orders it with the driver's; an arm on a shard already marked,
//! by any earlier push, and every arm on a wheel of one shard, reads it with a plain
//! load.)
//!
//! `next_wake` holds the low 32 bits of the tick (so that 32-bit targets stay lock-free).
//! The driver never plans more than [`MAX_SLEEP`] ticks ahead, and readers rebuild the full
//! tick from a nearby one, which is exact while the driver is less than 2^31 ticks overdue.
//!
//! # Reclaiming cancelled entries
//!
//! A cancelled entry sits on the cancel inbox until the driver's next turn. So that this
//! is soon, the driver plans its next turn at most one tick ahead after any turn that
//! reclaimed entries, and a cancel that finds the inbox empty while the driver plans to
//! sleep longer than a tick wakes it. A cancelled entry is therefore back on the free
//! list within about one tick of being cancelled, on a driver that is not starved; a
//! steady stream of cancels costs the driver one turn per tick, not one per cancel, and
//! the entries one turn reclaims go back to the free list as one chain (one
//! compare-and-swap).
//!
//! # Taking back
//!
//! Most deadlines are released long before they are due, often at once (an RPC that
//! answers in microseconds under a timeout of seconds). A release that finds its entry
//! still at the head of the arm inbox takes it back off ([`Inbox::unpush`]) and frees it
//! itself: the driver never sees the entry, no cancel is queued and nothing needs a
//! turn, so an arm and a release touch only this thread's cache lines. A release that
//! finds the entry taken, or below later arms, cancels it through the cancel inbox.
//!
//! On a wheel with thread spares ([`Wheel::with_thread_spares`]: one that lives for the
//! rest of the process, as the global wheel), the releasing thread keeps the entry it
//! freed in a thread-local slot and its next arm takes it from there (see `spare`): such an
//! arm and release are then two atomic read-modify-writes, the push and the take-back,
//! instead of four.
//!
//! [`Inbox::unpush`]: crate::wheel::lists::Inbox::unpush
//!
//! Arms then often reach no turn, so an idle driver woken by an arm does not go idle
//! again at once: it keeps a planned turn for [`LINGER`] ticks, so that arms later than
//! that turn do not wake it again (a steady stream of arms and releases costs one wake
//! per `LINGER` ticks, not one per arm). A new wheel is marked idle before its first
//! turn, which no arm needs to have woken: that turn does not linger, so a wheel with
//! nothing ever armed plans no turn at all (a driver on a runtime's virtual clock holds
//! no timer it could jump to).
//!
//! # Sub-tick firing
//!
//! An entry keeps its exact deadline (a reading in nanoseconds); its tick, the first tick
//! boundary at or after it, only places it in the levels. A turn fires every entry whose
//! deadline has passed that it meets: the entries of the slots it processes, and new
//! entries from the arm inboxes, even when their tick is still ahead.
//!
//! The tick in progress gets one more look. When the next slot is the level-0 slot of the
//! very next tick and it is *sparse* (at most [`SPARSE`](crate::wheel::levels::SPARSE) entries),
//! the driver plans its turn at that slot's earliest deadline (rounded up to the levels'
//! grain, 16 ns at a 1 ms tick: see `levels`, "Sparse slots") instead of at the tick
//! boundary, and such a turn walks the slot and fires the entries that are due, leaving
//! the rest. Any turn less than a grain before that plan walks the slot too: the rounding
//! may put the plan after an entry's own time, and a turn at that time (a manual clock
//! advanced to it) must fire it. So advances of a manual clock that add up to a deadline
//! fire it, however they are split. So a deadline among few fires at its own time, as late as the driver's
//! wake-up and not half a tick on average; a dense slot (the case where waking per entry
//! would cost more than it saves) still fires all at once at its tick, unless the wheel
//! has early looks (below), and the walks of a sparse one are bounded by its few entries.
//! Either way nothing fires before its deadline, and nothing later than its tick.
//!
//! Arming threads see the planned tick and how far into the tick before it the driver
//! plans to turn (`Plan::offset`). An arm into the planned tick that is due before that
//! turn wakes the driver, which plans anew; an arm due after it, or into a dense slot
//! planned at its tick, wakes no one.
//!
//! Where this falls back to the tick (never later than without it):
//!
//! * an arm into the tick of a planned turn that comes from no slot (the end of lingering,
//!   or of the one-tick horizon after a reclaiming turn): it wakes no one, and fires at
//!   that turn;
//! * offsets of more than `u32::MAX` ns (ticks over 4.29 s), which the levels do not keep;
//! * a thread that asks the driver role's holder to turn for it is told the tick.
//!
//! A wheel whose driver sleeps on a coarser timer (tokio's millisecond grid) may look at
//! dense slots early too ([`Wheel::with_early_looks`]; see `levels`, "Early looks"): a
//! dense slot is then planned and looked at as a sparse one is, at its earliest deadline
//! (so an arm into that tick due before it wakes the driver), and each look fires what is
//! due and plans the next at the earliest one left.
//!
//! A turn never uses a reading older than the start of the tick the wheel has reached (a
//! second driver, whose reading is older, may bring one): some turn read at
//! least that much, so the reading fires nothing early, and a deadline armed from an
//! older reading still, due before that tick, fires rather than going into a slot behind
//! the wheel.
//!
//! # Firing order
//!
//! A turn that passes many ticks (a driver that slept long, a virtual clock's jump) fires
//! them in tick order, and wakes the tasks in the order it fired their entries: the wake
//! list is first in, first out. The entries of a higher level's slot coming down that are
//! due in a later tick than the one reached go down the levels again rather than firing
//! at once, so they fire when the turn reaches their own tick. Within one tick, entries
//! fire in their slot's order.
//!
//! # Exclusive moments
//!
//! Between leaving the free list and the push onto the arm inbox, an entry belongs to the
//! arming thread alone, and between the clearing of its last ownership bit and its push
//! back onto the free list, to the thread that cleared it. In those moments its waker slot
//! is written and emptied without the `AtomicWaker` protocol (no read-modify-write): the
//! free list's and the inbox's Release pushes and Acquire pops order those accesses with
//! every other thread's.
//!
//! A third moment is the waker slot's alone: after a handle's cancel (its compare-and-swap
//! out of `HANDLE|WHEEL`) and before its push onto the cancel inbox, the handle empties
//! the slot the same way. The driver still reaches the entry then, but touches a waker
//! only after its own compare-and-swap to `FIRED`, which the cancel made fail, and it
//! reclaims the entry only after the push.

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
mod degraded_wakers;
pub(crate) mod driver_wakers;
pub(crate) mod entry;
mod handoff;
pub(crate) mod heads;
pub(crate) mod levels;
pub(crate) mod link;
pub(crate) mod lists;
mod plan;
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
    /// Where degraded deadlines leave their wakers for the next tick (see `degraded_wakers`).
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
