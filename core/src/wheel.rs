//! The wheel: the shared side (arming, cancelling, waking the driver) and the driver side
//! (advancing the levels and firing).
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
//! On a wheel with thread spares ([`Wheel::enable_thread_spares`]: one that lives for the
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
//! the driver plans its turn at that slot's earliest deadline instead of at the tick
//! boundary, and such a turn walks the slot and fires the entries that are due, leaving
//! the rest. So a deadline among few fires at its own time, as late as the driver's
//! wake-up and not half a tick on average; a dense slot (the case where waking per entry
//! would cost more than it saves) still fires all at once at its tick, and the walks of a
//! sparse one are bounded by its few entries. Either way nothing fires before its
//! deadline, and nothing later than its tick.
//!
//! Arming threads see the planned tick and how far into the tick before it the driver
//! plans to turn (`Plan::offset`). An arm into the planned tick that is due before that
//! turn wakes the driver, which plans anew; an arm due after it, or into a dense slot,
//! wakes no one.
//!
//! Where this falls back to the tick (never later than without it):
//!
//! * an arm into the tick of a planned turn that comes from no slot (the end of lingering,
//!   or of the one-tick horizon after a reclaiming turn): it wakes no one, and fires at
//!   that turn;
//! * offsets of more than `u32::MAX` ns (ticks over 4.29 s), which the levels do not keep;
//! * a thread that asks the driver role's holder to turn for it is told the tick.
//!
//! A turn never uses a reading older than the start of the tick the wheel has reached (a
//! second driver, or `advance_to` with an older time, may bring one): some turn read at
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

use crossbeam_utils::CachePadded;

use crate::clock::Clock;
use crate::sync::{AtomicU32, Ordering, UnsafeCell};
use crate::time::TickDivisor;
use driver_wakers::DriverWakers;
use entry::{CANCELLED, Entry, FIRED, HANDLE, Index, NIL, UNLINKED, WHEEL};
use levels::Levels;
use lists::Fresh;
use shards::{SHARDS, Shard};
use stats::{Counters, Stats};
use storage::{Fixed, Storage};

pub(crate) mod driver_wakers;
pub(crate) mod entry;
pub(crate) mod levels;
pub(crate) mod lists;
pub(crate) mod shards;
#[cfg(all(feature = "std", not(punctual_loom)))]
pub(crate) mod spare;
pub(crate) mod stats;
pub(crate) mod storage;

/// The driver never plans a turn further than this many ticks ahead (see "Waking the
/// driver").
pub(crate) const MAX_SLEEP: u64 = 1 << 30;

/// An idle driver woken by an arm plans a turn this many ticks ahead, even with nothing
/// armed, before it goes idle again (see "Taking back"). Not a new wheel's first turn.
pub(crate) const LINGER: u64 = 16;

/// `role`: a thread holds the driver role.
const DRIVING: u32 = 0b01;
/// `role`: a thread asked for a turn while the role was held.
const REQUESTED: u32 = 0b10;

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
    tick: TickDivisor,
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
    /// What the driver plans; written once per turn, read by every arm and cancel, so on
    /// lines of its own.
    plan: CachePadded<Plan>,
    /// Owned by the holder of the driver role; written throughout a turn, so on lines of
    /// its own (away from what the arm path reads).
    driver: CachePadded<UnsafeCell<DriverState>>,
    /// Written by the driver for each deadline it fires or reclaims: lines of their own.
    counters: CachePadded<Counters>,
    /// Whether threads may keep a free entry of this wheel aside (see `spare`): set only
    /// through a `&'static` reference ([`Wheel::enable_thread_spares`]), so only on a wheel
    /// that stays at its address for the rest of the process. Not a synchronising flag: an
    /// arm that reads it stale merely does without a spare.
    spares: core::sync::atomic::AtomicBool,
}

/// The driver's plan, as arming and cancelling threads read it.
struct Plan {
    /// Low 32 bits of the tick of the driver's next planned turn.
    next_wake: AtomicU32,
    /// How far into the tick before `next_wake` the driver plans to turn, in nanoseconds
    /// (saturating): an arm into the planned tick that is due earlier than that wakes it
    /// ("Sub-tick firing"). A whole tick when the plan is a slot of a higher level coming
    /// down (nothing in it is due before, so every arm due within the tick before wakes
    /// it). 0 when the driver turns at that tick's end whatever is armed in it: a dense
    /// slot, or a planned tick with no slot of its own (the end of lingering or of the
    /// horizon after a reclaiming turn, where waking for each arm would cost a turn per
    /// arm under a stream of short deadlines released at once).
    offset: AtomicU32,
    /// [`IDLE`] while the driver has nothing armed and plans no turn at all; above it,
    /// the shards in use, whose inboxes the driver's handshake checks (see `shards`,
    /// "Shards in use"). Published by the driver with a read-modify-write, which is
    /// its side of the handshake for the shards' first pushes.
    word: AtomicU32,
}

/// `Plan::word`: the driver is idle.
const IDLE: u32 = 1;

struct DriverState {
    levels: Levels,
    /// Fired entries whose tasks are still to be woken, linked through `slot_next`. Kept
    /// here rather than on the stack so that a waker that panics loses nothing: the next
    /// turn wakes the rest.
    to_wake: Index,
    /// The last of `to_wake` (meaningless while `to_wake` is `NIL`): fired entries are
    /// queued at the tail, so tasks wake in firing order.
    to_wake_tail: Index,
    /// The driver does not go idle before this tick (see "Taking back").
    linger_until: u64,
    /// No turn has published a plan yet: the wheel's idle mark is the one it was made
    /// with, not one a turn left, so the first turn does not linger (see "Taking back").
    fresh: bool,
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
        self.plan.word.load(Ordering::Acquire) & IDLE != 0
    }
}

/// `Wheel` with a fixed capacity of `N` entries.
pub type FixedWheel<C, const N: usize> = Wheel<C, Fixed<N>>;
/// `Wheel` that grows on demand.
#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
pub type GrowableWheel<C> = Wheel<C, crate::Growable>;

// SAFETY: `driver` is only accessed by the thread holding the driver role (`role`,
// acquired with Acquire and released with Release), which serialises every access; all other
// shared fields are atomics or `Sync` (`C: Sync` by `Clock`, `S: Sync` by `Storage`).
unsafe impl<C: Clock, S: Storage> Sync for Wheel<C, S> {}

#[cfg(not(punctual_loom))]
const fn new_shards() -> [Shard; SHARDS] {
    [const { shards::new_shard() }; SHARDS]
}

#[cfg(punctual_loom)]
fn new_shards() -> [Shard; SHARDS] {
    core::array::from_fn(|_| shards::new_shard())
}

/// A clock reading in nanoseconds, saturating at `u64::MAX` (about 584 years).
fn nanos_of(reading: Duration) -> u64 {
    u64::try_from(reading.as_nanos()).unwrap_or(u64::MAX)
}

/// A reading in nanoseconds as a `Duration`; `u64::MAX` stands for `Duration::MAX`
/// ("never", "idle").
fn reading_of(nanos: u64) -> Duration {
    if nanos == u64::MAX {
        Duration::MAX
    } else {
        Duration::from_nanos(nanos)
    }
}

const fn tick_nanos(tick: Duration) -> u64 {
    let nanos = tick.as_nanos();
    assert!(nanos > 0, "punctual: a wheel's tick must be at least 1 ns");
    assert!(
        nanos <= u64::MAX as u128,
        "punctual: a wheel's tick must be below 584 years"
    );
    nanos as u64
}

impl<C: Clock, const N: usize> Wheel<C, Fixed<N>> {
    crate::sync::const_fn! {
        /// A wheel of `N` entries and the given `tick`, usable in a `static`.
        ///
        /// # Panics
        ///
        /// If `tick` is zero, or 2<sup>64</sup> ns (about 584 years) or more (at compile
        /// time in a `static`).
        pub fn fixed(clock: C, tick: Duration) -> Self {
            Self::with_storage(clock, tick, Fixed::new())
        }
    }
}

#[cfg(feature = "alloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloc")))]
impl<C: Clock> Wheel<C, crate::Growable> {
    crate::sync::const_fn! {
        /// A wheel that grows as deadlines are armed, with the given `tick`.
        ///
        /// # Panics
        ///
        /// If `tick` is zero, or 2<sup>64</sup> ns (about 584 years) or more.
        pub fn growable(clock: C, tick: Duration) -> Self {
            Self::with_storage(clock, tick, crate::Growable::new())
        }
    }
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    crate::sync::const_fn! {
        fn with_storage(clock: C, tick: Duration, storage: S) -> Self {
            Self {
                clock,
                tick: TickDivisor::new(tick_nanos(tick)),
                storage,
                shards: new_shards(),
                fresh: Fresh::new(),
                role: AtomicU32::new(0),
                driver_wakers: DriverWakers::new(),
                plan: CachePadded::new(Plan {
                    next_wake: AtomicU32::new(MAX_SLEEP as u32),
                    offset: AtomicU32::new(0),
                    word: AtomicU32::new(IDLE),
                }),
                driver: CachePadded::new(UnsafeCell::new(DriverState {
                    levels: Levels::new(),
                    to_wake: NIL,
                    to_wake_tail: NIL,
                    linger_until: 0,
                    fresh: true,
                })),
                counters: CachePadded::new(Counters::new()),
                spares: core::sync::atomic::AtomicBool::new(false),
            }
        }
    }

    /// Lets each thread keep aside the last entry it freed on this wheel, for its next
    /// deadline: a deadline released before the driver saw it (the commonest kind) then
    /// costs two atomic read-modify-writes instead of four. A thread gives its entry back
    /// when it exits, or when it parks an entry of another wheel. Without `std` (no
    /// thread-locals) this changes nothing.
    ///
    /// Only a wheel that lives for the rest of the process can have spares (a `static`, or
    /// a leaked one), as a `&'static` reference promises: a thread that exits gives its
    /// entry back by the wheel's address.
    ///
    /// A parked entry is not in use ([`occupied`](Wheel::occupied) does not count it), but
    /// no other thread can take it: a fixed wheel lends up to one entry to each thread
    /// that used it last.
    ///
    /// ```
    /// use std::time::Duration;
    /// use punctual_core::{Fixed, ManualClock, Wheel};
    /// static WHEEL: Wheel<ManualClock, Fixed<64>> =
    ///     Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    /// WHEEL.enable_thread_spares();
    /// ```
    ///
    /// (`punctual::global_wheel()` and the wheels of `punctual_smol::leak_wheel` and
    /// `punctual_tokio` have spares.)
    pub fn enable_thread_spares(&'static self) {
        self.spares.store(true, Ordering::Relaxed);
    }

    /// The clock deadlines on this wheel are measured on.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The wheel's tick: the width of its slots, and the unit of the lateness bound. A
    /// deadline fires at most two ticks after its time on a driver that is not starved, and
    /// one of few in its slot fires at its own time, as late only as the driver's wake-up
    /// (see the module docs, "Sub-tick firing").
    pub fn tick(&self) -> Duration {
        Duration::from_nanos(self.tick.tick())
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
    /// at which the wheel wants to be turned next, `Duration::MAX` when nothing is armed
    /// (see [`Wheel::advance_to`]).
    pub fn turn(&self) -> Duration {
        self.turn_as(None)
    }

    /// [`Wheel::turn`] by the driver in waker slot `slot` (`None`: a driver with no slot,
    /// or a turn by hand), which a turn that takes the wheel out of idle then does not
    /// wake (see "Waking the driver").
    pub(crate) fn turn_as(&self, slot: Option<usize>) -> Duration {
        reading_of(self.advance_nanos(self.now_nanos(), slot))
    }

    /// Fires every deadline whose tick has come at clock reading `now` (clamped to the
    /// clock's current reading, so a driver that runs ahead can never make a deadline fire
    /// early), and those of a sparse slot whose own time has (module docs, "Sub-tick
    /// firing"); wakes their tasks, reclaims released entries, and returns the clock
    /// reading at which the wheel wants to be turned next: a tick boundary, or the time of
    /// the next sparse slot's earliest deadline.
    ///
    /// Turn the wheel again when that time comes, or earlier when the waker given to
    /// [`Wheel::register_driver`] (or to a [`DriverSlot`](crate::DriverSlot)) is woken.
    /// `Duration::MAX` means nothing is armed: wait for the waker only, with no timer
    /// (every arm wakes an idle driver).
    ///
    /// If another thread is turning the wheel at the moment, this returns at once and that
    /// thread does the work before it lets go. That thread may plan anew as it does, with
    /// no one to tell, so the time returned then is the next tick boundary at the latest
    /// (never `Duration::MAX`): turn again by then.
    pub fn advance_to(&self, now: Duration) -> Duration {
        reading_of(self.advance_nanos(nanos_of(now.min(self.clock.now())), None))
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
    /// (`Duration::MAX` while it is idle). The driver may turn earlier within the tick
    /// before, for a sparse slot ("Sub-tick firing"); this is the boundary it turns by.
    /// A boundary at or past the clock's last reading (`u64::MAX` ns) is given as the
    /// reading before it, as [`Wheel::turn`] does, so that it never reads as idle.
    pub fn next_turn(&self) -> Duration {
        let reference = self.floor_ticks(self.clock.now());
        reading_of(self.plan_reading(self.planned_turn(reference)))
    }

    // ---- time conversions -------------------------------------------------------------

    /// Divides nanoseconds by the tick.
    #[inline]
    pub(crate) fn ticks(&self) -> &TickDivisor {
        &self.tick
    }

    /// The clock's reading in nanoseconds (saturating at `u64::MAX`).
    fn now_nanos(&self) -> u64 {
        nanos_of(self.clock.now())
    }

    pub(crate) fn floor_ticks(&self, reading: Duration) -> u64 {
        self.tick.floor_u128(reading.as_nanos())
    }

    /// The reading (ns) at which a planned tick (`u64::MAX`: idle) begins: `u64::MAX` only
    /// when idle, else below it, so that a boundary past the clock's last reading is never
    /// taken for "idle".
    fn plan_reading(&self, planned: u64) -> u64 {
        match planned {
            u64::MAX => u64::MAX,
            tick => self.tick_start(tick).min(u64::MAX - 1),
        }
    }

    /// The reading, in nanoseconds, at which tick `tick` begins (saturating at `u64::MAX`).
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    fn tick_start(&self, tick: u64) -> u64 {
        u64::try_from(u128::from(tick) * u128::from(self.tick.tick())).unwrap_or(u64::MAX)
    }

    /// The tick of a deadline due at reading `due` (ns), and its offset into the tick
    /// before (see `levels`' "Sparse slots").
    // Inlined where a 64-bit multiply is one instruction; one copy elsewhere (on 32-bit
    // microcontrollers, each inlined copy of the widening multiply costs flash).
    #[cfg_attr(target_pointer_width = "64", inline)]
    #[cfg_attr(not(target_pointer_width = "64"), inline(never))]
    fn tick_of(&self, due: u64) -> (u64, u32) {
        let (q, r) = self.tick.div_rem(due);
        let (when, offset) = if r == 0 {
            (q, self.tick.tick())
        } else {
            (q + 1, r)
        };
        (when, u32::try_from(offset).unwrap_or(u32::MAX))
    }

    /// The full tick of the driver's plan, rebuilt from its low 32 bits near `reference`;
    /// `u64::MAX` while the driver is idle (then every arm wakes it), and below it
    /// otherwise (a plan rebuilt past the last tick is that tick's predecessor, which
    /// only wakes the driver for arms it would have woken it for anyway, within 1 ns of
    /// the clock's end).
    fn planned_turn(&self, reference: u64) -> u64 {
        self.plan_of(self.plan.word.load(Ordering::Relaxed), reference)
    }

    /// [`planned_turn`](Self::planned_turn), for a thread that just pushed onto an inbox
    /// of `shard`: marks the shard in use first if it is not yet (see `shards`, "Shards in
    /// use"), so that the plan read is one the driver's handshake covers.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    fn planned_turn_after_push(&self, reference: u64, shard: usize) -> u64 {
        let mut word = self.plan.word.load(Ordering::Acquire);
        let bit = shards::in_use_bit(shard);
        if word & bit != bit {
            word = self.mark_in_use(bit);
        }
        self.plan_of(word, reference)
    }

    /// Sets a shard's bit in the plan word; returns the word with it.
    #[cold]
    fn mark_in_use(&self, bit: u32) -> u32 {
        self.plan.word.fetch_or(bit, Ordering::AcqRel) | bit
    }

    /// The plan, given the plan word read just before (see `planned_turn`).
    #[inline]
    fn plan_of(&self, word: u32, reference: u64) -> u64 {
        if word & IDLE != 0 {
            return u64::MAX;
        }
        let low = self.plan.next_wake.load(Ordering::Relaxed);
        let delta = low.wrapping_sub(reference as u32) as i32 as i64;
        reference.saturating_add_signed(delta).min(u64::MAX - 1)
    }

    // ---- the deadline side ------------------------------------------------------------

    /// Arms an entry due at reading `due` (ns), of tick `when` (`⌈due / tick⌉`), for a
    /// deadline started at tick `start`. Returns the entry, and whether the drivers must be
    /// woken: the caller wakes them ([`Wheel::wake_driver`]) once it holds the entry's
    /// handle, so that a driver's waker that panics loses no entry. `None` when the storage
    /// is full.
    // Inlined into the start paths (`start_after`) on 64-bit hosts: its call and frame were
    // 4 to 5 ns of the 90 ns of an arm + cancel (interleaved runs); firmware keeps one
    // copy for size.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    pub(crate) fn arm(
        &self,
        due: u64,
        when: u64,
        start: u64,
        waker: &Waker,
    ) -> Option<(Index, bool)> {
        debug_assert_eq!(when, self.tick_of(due).0, "tick of another deadline");
        // Cloned before an entry is taken: a `clone` that panics then takes nothing with it
        // (an entry taken and never armed would be lost to the wheel for good).
        let waker = waker.clone();
        let shard = shards::current();
        let (index, entry) = match self.take_spare() {
            Some(spare) => spare,
            None => self.take_free(shard)?,
        };
        // SAFETY: just taken (off a free list, or fresh from the bump counter), so this
        // thread owns it exclusively until the push below publishes it (see `Entry`'s
        // `Sync`).
        unsafe { entry.set_due(due) };
        // SAFETY: as above; a free entry's waker slot is idle and empty (`recycle`), and the
        // Release push below publishes the waker with the entry.
        unsafe { entry.waker.set_exclusive(waker) };
        let generation = entry::generation(entry.state.load(Ordering::Relaxed));
        entry
            .state
            .store(entry::armed(generation), Ordering::Relaxed);
        self.shards[shard].arm_inbox.push(&entry.slot_next, index);
        let planned = self.planned_turn_after_push(start, shard);
        let wake = when < planned || (when == planned && self.before_planned_offset(due));
        Some((index, wake))
    }

    /// Whether a deadline due at `due`, in the tick the driver plans to turn at, is due
    /// before the driver's turn within the tick before (see `Plan::offset`).
    #[cold]
    fn before_planned_offset(&self, due: u64) -> bool {
        self.tick_of(due).1 < self.plan.offset.load(Ordering::Relaxed)
    }

    /// Polls an armed entry: ready once it fired. Registers `waker` to be woken by the fire.
    pub(crate) fn poll_entry(&self, index: Index, waker: &Waker) -> bool {
        let entry = self.storage.entry(index);
        let state = entry.state.load(Ordering::Acquire);
        debug_assert_ne!(state & HANDLE, 0, "a deadline's entry it does not own");
        if state & FIRED != 0 {
            return true;
        }
        entry.waker.register(waker);
        entry.state.load(Ordering::Acquire) & FIRED != 0
    }

    /// The clock reading at which an armed entry is due; for the entry's owner.
    pub(crate) fn entry_deadline(&self, index: Index) -> Duration {
        // SAFETY: the caller owns the entry (its HANDLE bit is set), so it is not free
        // and `due` has no writer: it is written only while the entry is exclusively
        // owned, before it is published; this thread armed it or received the deadline
        // through a synchronising move.
        Duration::from_nanos(unsafe { self.storage.entry(index).due() })
    }

    /// Whether an armed entry has fired, without registering anything.
    pub(crate) fn entry_fired(&self, index: Index) -> bool {
        self.storage.entry(index).state.load(Ordering::Acquire) & FIRED != 0
    }

    /// Lets go of an armed entry: cancels it if it has not fired, and frees it if the wheel
    /// is done with it too. Returns whether it had fired.
    ///
    /// `span` is the deadline's requested span (ns) when the entry's deadline is its start
    /// plus that span (and the clock's resolution), so that the two tell when it started;
    /// `None` when they do not (a budget cut the deadline short, or it was armed late,
    /// after running degraded).
    pub(crate) fn release(&self, index: Index, span: Option<u64>) -> bool {
        let entry = self.storage.entry(index);
        // The deadline owns the entry: its generation cannot change until it lets go.
        let generation = entry::generation(entry.state.load(Ordering::Relaxed));
        let shard_index = shards::current();
        let shard = &self.shards[shard_index];
        // Still the head of the arm inbox: the driver never saw the entry, so nothing else
        // can reach it, and it goes straight back to the free list (see "Taking back").
        // (Only the inbox it was pushed onto can have it as head: this thread's, unless
        // the deadline moved to another thread since; then it is cancelled as below.)
        if shard.arm_inbox.unpush(&entry.slot_next, index) {
            entry.state.store(generation, Ordering::Relaxed);
            // SAFETY: taken back off the inbox, so the driver never saw it, and this
            // deadline's handle is its only owner.
            unsafe { self.free_from_handle(shard, index, entry) };
            return false;
        }
        let armed = entry::armed(generation);
        match entry.state.compare_exchange(
            armed,
            generation | WHEEL | CANCELLED,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                // The waker goes with the handle, dropped on this thread once the cancel
                // is queued: not on the driver's, at the reclaim (where a drop that panics
                // would stop the turn), and not held until then.
                // SAFETY: after the cancel, nothing else touches the waker slot until the
                // entry is reclaimed, which needs the push below: the driver takes a waker
                // only after its own transition to FIRED, which now fails; this handle was
                // the slot's one registrant, and is not registering.
                let waker = unsafe { entry.waker.take_exclusive() };
                // The tick the deadline started at stands in for "now" (no clock read on
                // this path): the plan is compared against it, which can only err towards
                // an extra wake. The deadline was due `span` after its start, plus the
                // clock's resolution. Without a span that says so, the driver is woken
                // (when the inbox was empty), as the plan cannot be judged.
                let start = span.map(|span| {
                    // SAFETY: read before the push below: until then the driver cannot
                    // reclaim the entry, so nothing writes its deadline (the next one to
                    // arm it would).
                    let due = unsafe { entry.due() };
                    let resolution = self.clock.resolution().as_nanos();
                    let started = due
                        .saturating_sub(span)
                        .saturating_sub(u64::try_from(resolution).unwrap_or(u64::MAX));
                    self.ticks().floor(started)
                });
                let was_empty = shard.cancel_inbox.push(&entry.cancel_link, index);
                if was_empty
                    && start.is_none_or(|start| {
                        self.planned_turn_after_push(start, shard_index) > start + 1
                    })
                {
                    self.wake_driver();
                }
                drop(waker);
                false
            }
            Err(actual) => {
                debug_assert_eq!(actual & (FIRED | HANDLE), FIRED | HANDLE, "bad release");
                let before = entry.state.fetch_and(!HANDLE, Ordering::AcqRel);
                if before & WHEEL == 0 {
                    // SAFETY: as `free_entry`'s.
                    unsafe { self.free_from_handle(shard, index, entry) };
                }
                true
            }
        }
    }

    /// Lets go of an entry its handle has seen fired: the outcome is decided for good, so
    /// this skips the cancel attempt of [`Wheel::release`] (one locked operation less on
    /// the path of every fired deadline).
    pub(crate) fn release_fired(&self, index: Index) {
        let entry = self.storage.entry(index);
        let before = entry.state.fetch_and(!HANDLE, Ordering::AcqRel);
        debug_assert_eq!(before & (FIRED | HANDLE), FIRED | HANDLE, "not fired");
        if before & WHEEL == 0 {
            // SAFETY: as `free_entry`'s.
            unsafe { self.free_from_handle(&self.shards[shards::current()], index, entry) };
        }
    }

    #[cfg(feature = "count-ready")]
    pub(crate) fn count_ready(&self) {
        self.counters.ready();
    }

    pub(crate) fn count_degraded_poll(&self) {
        self.counters.degraded_poll();
    }

    /// Wakes every driver, to turn sooner than planned.
    pub(crate) fn wake_driver(&self) {
        self.driver_wakers.wake_all();
    }

    /// Frees `entry` (at `index`), whose last ownership bit the caller just cleared, onto
    /// this thread's shard.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    fn free_entry(&self, index: Index, entry: &Entry) {
        // SAFETY: both ownership bits are clear and the caller cleared the last one with an
        // AcqRel read-modify-write, after every access of the other owner: it owns the
        // entry exclusively until the push publishes it.
        unsafe { Self::free_to(&self.shards[shards::current()], index, entry) };
    }

    /// Frees `entry` (at `index`) from its deadline's side: into this thread's spare slot
    /// if the wheel has spares and the slot holds no entry of this wheel yet (see `spare`:
    /// another wheel's goes back to that wheel), else onto `shard`'s free list.
    ///
    /// # Safety
    ///
    /// * The caller owns the entry exclusively (as [`Entry::recycle`] requires).
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    unsafe fn free_from_handle(&self, shard: &Shard, index: Index, entry: &Entry) {
        #[cfg(all(feature = "std", not(punctual_loom)))]
        if self.spares.load(Ordering::Relaxed) {
            // SAFETY: exclusive ownership, by the caller's contract.
            let old_waker = unsafe { entry.recycle() };
            // SAFETY: the wheel has spares, so it lives at this address for the rest of
            // the process (`enable_thread_spares` takes `&'static self`);
            // `give_spare_back` is typed for it; the entry is ours, free and recycled.
            let parked =
                unsafe { crate::wheel::spare::park(self.address(), index, Self::give_spare_back) };
            if !parked {
                shard.free.push(index, entry);
            }
            drop(old_waker);
            return;
        }
        // SAFETY: the caller's contract.
        unsafe { Self::free_to(shard, index, entry) };
    }

    /// An entry this thread parked for this wheel, if any (see `spare`).
    #[inline(always)]
    fn take_spare(&self) -> Option<(Index, &Entry)> {
        #[cfg(all(feature = "std", not(punctual_loom)))]
        if self.spares.load(Ordering::Relaxed) {
            return crate::wheel::spare::take(self.address()).map(|i| (i, self.storage.entry(i)));
        }
        None
    }

    /// The wheel's address, for `spare` to tell wheels apart.
    #[cfg(all(feature = "std", not(punctual_loom)))]
    fn address(&self) -> *const () {
        core::ptr::from_ref(self).cast()
    }

    /// Gives a parked entry back to its wheel's free list (a thread with a spare exits,
    /// or parks another wheel's entry).
    ///
    /// # Safety
    ///
    /// * `wheel` is the address of a live `Self` (one with spares lives for the rest of
    ///   the process).
    /// * Entry `index` of it is free and recycled, and the caller owns it exclusively.
    #[cfg(all(feature = "std", not(punctual_loom)))]
    unsafe fn give_spare_back(wheel: *const (), index: Index) {
        // SAFETY: the caller's contract.
        let wheel = unsafe { &*wheel.cast::<Self>() };
        wheel.shards[shards::current()]
            .free
            .push(index, wheel.storage.entry(index));
    }

    /// Recycles `entry` (at `index`) onto `shard`'s free list. The last deadline's waker,
    /// if the entry still held one, is dropped after the entry is back on the free list,
    /// so that a drop that panics loses no entry.
    ///
    /// # Safety
    ///
    /// * The caller owns the entry exclusively (as [`Entry::recycle`] requires).
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    unsafe fn free_to(shard: &Shard, index: Index, entry: &Entry) {
        // SAFETY: exclusive ownership, by the caller's contract, until the push publishes it.
        let old_waker = unsafe { entry.recycle() };
        shard.free.push(index, entry);
        drop(old_waker);
    }

    /// A free entry for exclusive use, with its index: from this thread's shard, else one
    /// never used yet that the storage holds already, else from another shard, else one
    /// never used yet that the storage grows for. `None` when the storage is full.
    ///
    /// Untouched entries come in blocks of whole pairs of cache lines, one block to one
    /// shard; another shard's free list has entries in whatever order they were freed,
    /// whose neighbours in memory may be in use on a third shard (two threads that started
    /// after other work then shared lines, and together did 1.3 times the work of one
    /// instead of 1.9). So a shard steals only when the storage would otherwise have to
    /// grow: it never grows while another shard has free entries.
    #[cfg_attr(target_pointer_width = "64", inline(always))]
    fn take_free(&self, shard: usize) -> Option<(Index, &Entry)> {
        self.shards[shard]
            .free
            .pop(&self.storage)
            .or_else(|| self.take_fresh(shard, false))
            .or_else(|| self.steal(shard))
            .or_else(|| self.take_fresh(shard, true))
    }

    /// An entry from another shard's free list, with up to `FRESH_BLOCK - 1` more that go
    /// to `shard`'s list: a new thread then takes over a run of another shard's entries
    /// rather than one here and there, which another new thread would take the neighbours
    /// of (sharing their cache lines).
    #[cold]
    fn steal(&self, shard: usize) -> Option<(Index, &Entry)> {
        // Every other shard once, starting after this one (none without shards). The
        // array's length rather than `SHARDS`, whose range is empty without `std`.
        let shards = self.shards.len();
        for k in 1..shards {
            let victim = &self.shards[(shard + k) % shards].free;
            let Some(first) = victim.pop(&self.storage) else {
                continue;
            };
            let more = (1..S::FRESH_BLOCK).map_while(|_| victim.pop(&self.storage).map(|(i, _)| i));
            self.keep(shard, more);
            return Some(first);
        }
        None
    }

    /// Puts free entries this thread owns alone (just popped, or never used) on `shard`'s
    /// free list, linked into one chain and pushed with one compare-and-swap.
    fn keep(&self, shard: usize, entries: impl Iterator<Item = Index>) {
        let (mut chain, mut last) = (NIL, None);
        for index in entries {
            let entry = self.storage.entry(index);
            // Ours alone until the push below publishes the chain.
            entry.slot_next.store(chain, Ordering::Relaxed);
            last.get_or_insert(entry);
            chain = index;
        }
        if let Some(last) = last {
            self.shards[shard].free.push_chain(chain, last);
        }
    }

    /// An entry never used yet. Takes the storage's `FRESH_BLOCK` of them at once and
    /// keeps the rest on `shard`'s free list, so that the entries of two shards do not
    /// share cache lines. Only among the entries the storage holds already, unless `grow`.
    #[cold]
    fn take_fresh(&self, shard: usize, grow: bool) -> Option<(Index, &Entry)> {
        let (first, count) = self.fresh.pop_block(&self.storage, S::FRESH_BLOCK, grow)?;
        // Untouched entries, ours alone since the bump; their state is a recycled entry's.
        self.keep(shard, first + 1..first + count);
        Some((first, self.storage.entry(first)))
    }

    // ---- the driver side --------------------------------------------------------------

    /// Advances to reading `now` (ns) if the driver role is free, else leaves a request for
    /// its holder. Returns the reading (ns) of the planned next turn, `u64::MAX` if idle.
    fn advance_nanos(&self, mut now: u64, driver: Option<usize>) -> u64 {
        let mut role = self.role.load(Ordering::Relaxed);
        loop {
            let (next, success) = if role & DRIVING == 0 {
                (DRIVING, Ordering::Acquire)
            } else {
                // Release: the holder, acquiring the request, also sees our clock reading.
                (role | REQUESTED, Ordering::Release)
            };
            match self
                .role
                .compare_exchange_weak(role, next, success, Ordering::Relaxed)
            {
                Ok(_) if next == DRIVING => break,
                Ok(_) => {
                    // The holder will turn for us, and may plan anew as it does (for a
                    // deadline armed meanwhile, say), with no one to tell: the plan read
                    // now may be out of date by the time the caller sleeps on it. So ask
                    // to be turned again by the next tick boundary at the latest, never
                    // "idle".
                    let tick = self.ticks().floor(now);
                    let planned = self.plan_reading(self.planned_turn(tick));
                    let next_tick = self.tick_start(tick.saturating_add(1)).min(u64::MAX - 1);
                    return planned.min(next_tick);
                }
                Err(actual) => role = actual,
            }
        }
        // Lets go of the role if a waker panics during the turn, so the wheel keeps
        // working: its structure is consistent at every wake (see `wake_fired`).
        struct ReleaseOnUnwind<'a>(&'a AtomicU32);
        impl Drop for ReleaseOnUnwind<'_> {
            fn drop(&mut self) {
                self.0.store(0, Ordering::Release);
            }
        }
        let unwind = ReleaseOnUnwind(&self.role);
        // Whether a turn took the wheel out of idle (see "Waking the driver").
        let mut woke_from_idle = false;
        loop {
            // SAFETY: this thread holds the driver role (the compare-and-swap above, or the
            // failed release below), the only licence to touch `driver`; the reference
            // does not outlive this statement.
            let (planned, left_idle) = self
                .driver
                .with_mut(|state| unsafe { self.turn_locked(&mut *state, now) });
            woke_from_idle |= left_idle;
            match self
                .role
                .compare_exchange(DRIVING, 0, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    core::mem::forget(unwind);
                    if woke_from_idle {
                        // After the role is let go: a driver woken turns at once. The
                        // turning driver knows the plan it returns.
                        self.driver_wakers.wake_all_but(driver);
                    }
                    return planned;
                }
                Err(_) => {
                    // A request came in: keep the role, take the request, and turn again
                    // with a reading no older than the requester's.
                    self.role.fetch_and(!REQUESTED, Ordering::Acquire);
                    now = now.max(self.now_nanos());
                }
            }
        }
    }

    /// One turn at reading `now` (ns), with the driver role held. Returns the reading (ns)
    /// of the next planned turn (`u64::MAX` if idle), and whether the turn took the wheel
    /// out of idle.
    fn turn_locked(&self, state: &mut DriverState, now_nanos: u64) -> (u64, bool) {
        // A reading older than one an earlier turn used (another thread turning, or
        // `advance_to` with an older time) counts as the start of the tick already reached:
        // some turn read at least that, so it fires nothing early, and an entry armed
        // from an older reading still, due before that, fires rather than going into a
        // slot behind `elapsed`.
        let now_nanos = now_nanos.max(self.tick_start(state.levels.elapsed()));
        let now = self.ticks().floor(now_nanos);
        let mut reclaimed = false;
        // Whether a pass below published a plan over an idle word. Kept across passes: a
        // pass that takes the wheel out of idle and then finds an inbox not empty (an arm
        // that read the new plan, and woke no one since its tick was not before it) passes
        // again, and that pass reads its own plan, not idle; the driver waiting idle must
        // still be woken (see "Waking the driver").
        let mut left_idle = false;
        // A new wheel is marked idle before any turn: its first turn has not been woken
        // from an idle a turn left, and lingering then would only keep a timer (which a
        // paused runtime's clock would jump to) with nothing armed.
        let fresh = core::mem::replace(&mut state.fresh, false);
        if !fresh && self.plan.word.load(Ordering::Relaxed) & IDLE != 0 {
            // Woken from idle, most likely by an arm: linger (see "Taking back").
            state.linger_until = now.saturating_add(LINGER);
        }
        loop {
            // Advance first, so new entries are placed relative to `now` (a wheel whose
            // clock starts far from zero would otherwise park them at the top level).
            self.expire(state, now, now_nanos);
            reclaimed |= self.take_inboxes(state, now, now_nanos);
            self.fire_early(state, now_nanos);
            self.wake_fired(state);
            let elapsed = state.levels.elapsed();
            let next = state.levels.next_expiration();
            // Idle: nothing armed and nothing just reclaimed. The driver then needs no timer
            // at all (a paused tokio clock would otherwise auto-advance to it), and every
            // arm wakes it.
            let idle = next.is_none() && !reclaimed && now >= state.linger_until;
            // After reclaiming, more cancels are likely: look again within a tick. While
            // lingering, turn when the lingering ends.
            let horizon = if reclaimed {
                1
            } else if next.is_none() && now < state.linger_until {
                state.linger_until - elapsed.min(state.linger_until - 1)
            } else {
                MAX_SLEEP
            };
            let mut planned = elapsed.saturating_add(horizon);
            // The reading at which to turn: the planned tick, or earlier within the tick
            // before it, when the entries of a sparse slot are due then ("Sub-tick
            // firing"); and how far into that tick before, for arming threads (see
            // `Plan::offset`; 0 unless the plan comes from a sparse slot or a higher one).
            let mut wake = self.tick_start(planned);
            let mut offset = 0;
            if let Some(expiration) = next {
                if expiration.deadline <= planned {
                    planned = expiration.deadline;
                    wake = self.tick_start(planned);
                    if expiration.level == 0 {
                        if let Some(first) = state.levels.sparse_first(expiration.slot) {
                            let early = self.tick_start(planned - 1).saturating_add(first.into());
                            wake = wake.min(early);
                            offset = first;
                        }
                    } else {
                        // A higher slot comes down at the start of its first key's tick,
                        // with nothing in it due before (`levels`, "Slot arithmetic"):
                        // the turn is a whole tick into the tick before, and an arm due
                        // earlier in that tick wakes the driver, to fire at its own time.
                        offset = u32::try_from(self.tick.tick()).unwrap_or(u32::MAX);
                    }
                }
            }
            self.plan.next_wake.store(planned as u32, Ordering::Relaxed);
            self.plan.offset.store(offset, Ordering::Relaxed);
            // The driver's side of the handshake (see "Waking the driver"): the plan word
            // last, with a read-modify-write that also tells which shards are in use.
            let word = if idle {
                self.plan.word.fetch_or(IDLE, Ordering::AcqRel)
            } else {
                self.plan.word.fetch_and(!IDLE, Ordering::AcqRel)
            };
            left_idle |= !idle && word & IDLE != 0;
            if shards::in_use(word).all(|shard| {
                let shard = &self.shards[shard];
                shard.arm_inbox.check() & shard.cancel_inbox.check()
            }) {
                // `u64::MAX` means idle: a turn planned at or past the clock's last
                // reading (its tick boundary saturated) is the reading just before.
                return if idle {
                    (u64::MAX, false)
                } else {
                    (wake.min(u64::MAX - 1), left_idle)
                };
            }
        }
    }

    /// Takes every shard's inboxes: reclaims cancelled entries and links new ones into the
    /// levels. Returns whether anything was reclaimed.
    fn take_inboxes(&self, state: &mut DriverState, now: u64, now_nanos: u64) -> bool {
        // Cancels first, from every shard: an entry on these lists was pushed onto an arm
        // inbox before it was cancelled, so the arm inboxes taken next hold it if no
        // earlier turn took it. Every shard, not only those in use: `take_all` reads each
        // head first and swaps only a non-empty one, and no mark needs ordering here (only
        // the handshake at the end of `turn_locked` skips the shards not in use).
        let cancelled: [Index; SHARDS] =
            core::array::from_fn(|shard| self.shards[shard].cancel_inbox.take_all());
        for shard in &self.shards {
            let mut index = shard.arm_inbox.take_all();
            while index != NIL {
                let entry = self.storage.entry(index);
                // Before the entry is linked into a slot, which reuses `slot_next`.
                let next = self.next_ahead(&entry.slot_next);
                // SAFETY: driver role held; the entry came through an arm inbox.
                let due = unsafe { entry.due() };
                let (when, offset) = self.tick_of(due);
                self.counters.armed();
                if entry.state.load(Ordering::Acquire) & CANCELLED == 0 {
                    // Due at `now` (its tick may be ahead: see "Sub-tick firing"); else
                    // `when > now ≥ elapsed`, as a slot needs.
                    if due <= now_nanos {
                        self.fire(state, index, entry, now.saturating_sub(when));
                    } else {
                        state.levels.insert(&self.storage, index, when, offset);
                    }
                }
                index = next;
            }
        }
        let mut reclaimed = false;
        for (shard, &first) in self.shards.iter().zip(&cancelled) {
            reclaimed |= first != NIL;
            self.reclaim(state, shard, first);
        }
        reclaimed
    }

    /// Unlinks and frees the cancelled entries linked from `index` through `cancel_link`;
    /// they go back to `shard`'s free list as one chain, with one compare-and-swap.
    fn reclaim(&self, state: &mut DriverState, shard: &Shard, mut index: Index) {
        let (mut freed, mut freed_last) = (NIL, None);
        while index != NIL {
            let entry = self.storage.entry(index);
            let next = self.next_ahead(&entry.cancel_link);
            // SAFETY: driver role held; the entry came through an arm inbox (taken in this
            // turn or an earlier one, see `take_inboxes`).
            let (when, _) = self.tick_of(unsafe { entry.due() });
            state.levels.remove(&self.storage, index, when);
            let before = entry.state.fetch_and(!WHEEL, Ordering::AcqRel);
            debug_assert_eq!(
                before & (HANDLE | CANCELLED),
                CANCELLED,
                "reclaiming a live entry"
            );
            self.counters.cancelled();
            // SAFETY: the handle let go (CANCELLED, HANDLE clear) and this AcqRel
            // read-modify-write cleared the last ownership bit after its accesses: the
            // entry is ours alone until the chain is pushed below.
            let old_waker = unsafe { entry.recycle() };
            // The cancelling handle took its waker with it.
            debug_assert!(old_waker.is_none(), "a cancelled entry kept its waker");
            drop(old_waker);
            entry.slot_next.store(freed, Ordering::Relaxed);
            freed_last.get_or_insert(entry);
            freed = index;
            index = next;
        }
        if let Some(last) = freed_last {
            shard.free.push_chain(freed, last);
        }
    }

    /// Processes every slot that starts at or before tick `now` (reading `now_nanos`).
    fn expire(&self, state: &mut DriverState, now: u64, now_nanos: u64) {
        while let Some(expiration) = state.levels.next_expiration() {
            if expiration.deadline > now {
                break;
            }
            state.levels.reach(&expiration);
            let mut index = state.levels.take_slot(&expiration);
            while index != NIL {
                let next = Levels::next_taken(&self.storage, index);
                self.fetch_ahead(next);
                let entry = self.storage.entry(index);
                // SAFETY: driver role held; the entry came through the arm inbox.
                let due = unsafe { entry.due() };
                let (when, offset) = self.tick_of(due);
                if expiration.level > 0
                    && when > state.levels.elapsed()
                    && when <= now
                    && entry.state.load(Ordering::Acquire) & CANCELLED == 0
                {
                    // Due by now, in a later tick of the slot coming down than the one
                    // reached: down the levels again, so that this turn fires the ticks
                    // it passes in their order (a turn that passes many fires deadlines
                    // in deadline order, as a virtual clock's jump must).
                    state.levels.insert(&self.storage, index, when, offset);
                } else if due <= now_nanos {
                    self.fire(state, index, entry, now.saturating_sub(when));
                } else if entry.state.load(Ordering::Acquire) & CANCELLED == 0 {
                    // `when > now`: `due` is past this tick.
                    state.levels.insert(&self.storage, index, when, offset);
                }
                index = next;
            }
        }
        if now > state.levels.elapsed() {
            state.levels.set_elapsed(now);
        }
    }

    /// Sub-tick firing: fires the entries of the tick in progress whose own deadline has
    /// passed, if their slot is sparse (module docs, "Sub-tick firing").
    fn fire_early(&self, state: &mut DriverState, now_nanos: u64) {
        let Some(expiration) = state.levels.next_expiration() else {
            return;
        };
        let elapsed = state.levels.elapsed();
        // The slot of the very next tick (`deadline > elapsed` always, so no overflow).
        if expiration.level != 0 || expiration.deadline - 1 != elapsed {
            return;
        }
        let Some(first) = state.levels.sparse_first(expiration.slot) else {
            return;
        };
        // How far into tick `elapsed` the clock reads; every entry of the slot is due
        // that far into it or later.
        let into = now_nanos.saturating_sub(self.tick_start(elapsed));
        if u64::from(first) > into {
            return;
        }
        let mut index = state.levels.level0_head(expiration.slot);
        let mut first = u32::MAX;
        while index != NIL {
            let entry = self.storage.entry(index);
            let next = self.next_ahead(&entry.slot_next);
            // SAFETY: driver role held; the entry came through an arm inbox.
            let due = unsafe { entry.due() };
            if entry.state.load(Ordering::Acquire) & CANCELLED != 0 {
                // Stays linked until the cancel inbox brings it; its deadline no longer
                // matters.
            } else if due <= now_nanos {
                state
                    .levels
                    .remove(&self.storage, index, expiration.deadline);
                self.fire(state, index, entry, 0);
            } else {
                first = first.min(self.tick_of(due).1);
            }
            index = next;
        }
        state.levels.set_first(expiration.slot, first);
    }

    /// The entry a list link points to, asked into the cache ahead of its use: the lists
    /// are threaded through the entries, so a walk would otherwise stall on each entry's
    /// miss in turn (see [`entry::prefetch`]).
    #[inline]
    fn next_ahead(&self, link: &AtomicU32) -> Index {
        let next = link.load(Ordering::Relaxed);
        self.fetch_ahead(next);
        next
    }

    /// Asks entry `index` into the cache, unless it is `NIL`.
    #[inline]
    fn fetch_ahead(&self, index: Index) {
        if index != NIL {
            entry::prefetch(self.storage.entry(index));
        }
    }

    /// Decides `index` as fired unless it was cancelled, and queues its task to be woken.
    fn fire(&self, state: &mut DriverState, index: Index, entry: &Entry, late_ticks: u64) {
        debug_assert_eq!(entry.slot_prev.load(Ordering::Relaxed), UNLINKED);
        let word = entry.state.load(Ordering::Acquire);
        if word & CANCELLED != 0 {
            return; // the cancel inbox will reclaim it
        }
        if entry
            .state
            .compare_exchange(word, word | FIRED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return; // cancelled meanwhile
        }
        self.counters.fired(late_ticks);
        // The wheel keeps the entry (WHEEL) until its waker has been taken out. Queued at
        // the tail: tasks are woken in the order their deadlines fired.
        entry.slot_next.store(NIL, Ordering::Relaxed);
        if state.to_wake == NIL {
            state.to_wake = index;
        } else {
            self.storage
                .entry(state.to_wake_tail)
                .slot_next
                .store(index, Ordering::Relaxed);
        }
        state.to_wake_tail = index;
    }

    /// Wakes the tasks of fired entries, letting go of each entry first. The wheel's
    /// structure is consistent throughout, so a waker that panics (the panic reaches the
    /// caller of the turn) leaves the rest queued for the next turn.
    fn wake_fired(&self, state: &mut DriverState) {
        while state.to_wake != NIL {
            let index = state.to_wake;
            let entry = self.storage.entry(index);
            state.to_wake = self.next_ahead(&entry.slot_next);
            entry.slot_next.store(NIL, Ordering::Relaxed);
            // Take the waker while the wheel still owns the entry, then let go.
            let waker = entry.waker.take();
            let before = entry.state.fetch_and(!WHEEL, Ordering::AcqRel);
            if before & HANDLE == 0 {
                self.free_entry(index, entry);
            }
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl<C: fmt::Debug, S> fmt::Debug for Wheel<C, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wheel")
            .field("clock", &self.clock)
            .field("tick", &Duration::from_nanos(self.tick.tick()))
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
    pub fn advance(&self, by: Duration) -> Duration {
        let now = self.clock.advance(by);
        self.advance_to(now);
        now
    }
}
