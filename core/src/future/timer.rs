//! The part of a deadline that does not depend on the inner future: when it starts, arming,
//! polling and releasing its entry. Compiled once, not once per future type.
//!
//! [`RawWheel`] is the object-safe face of a [`Wheel`], so that `Deadline<'w, F>` does not
//! carry the wheel's clock and storage types: by default a deadline holds a
//! `&'w dyn RawWheel`, and each wheel operation on the pending path is one indirect call.
//! A [`WheelRef`] of a `static` wheel (such as `punctual::Global`) takes no bytes and
//! calls the wheel directly.
//!
//! A deadline that completes at its first poll must cost nothing: [`Timer::poll_fired`]
//! works on a copy of the timer and [`Timer::release`] passes its arguments by value, so
//! the deadline's address never reaches out-of-line code and the compiler may keep it in
//! registers.

use core::mem::ManuallyDrop;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use crate::Elapsed;
use crate::future::budget::Budget;
use crate::clock::Clock;
use crate::wheel::entry::Index;
use crate::wheel::storage::Storage;
use crate::wheel::Wheel;

/// What limits a deadline: a duration from its first poll, or an instant on the wheel's
/// clock (a reading of [`Clock::now`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Ends this long after the inner future first returns `Pending`.
    After(Duration),
    /// Ends when the wheel's clock reads this.
    At(Duration),
}

mod sealed {
    pub trait Sealed {}
}

/// A wheel seen through a trait object: what a [`Deadline`](crate::Deadline) needs from
/// it. Implemented by every [`Wheel`]; sealed.
pub trait RawWheel: Sync + sealed::Sealed {
    #[doc(hidden)]
    fn start(&self, limit: Limit, cap: Option<Duration>, waker: &Waker) -> Started;
    /// [`start`](RawWheel::start) for the common case, `Limit::After` a duration of
    /// `span` nanoseconds (saturated: `u64::MAX` stands for any longer one) with no
    /// budget: only the outcome, as the requested duration is the span itself. On
    /// 64-bit hosts only (see `Timer::poll_fired_slow`).
    #[doc(hidden)]
    #[cfg(target_pointer_width = "64")]
    fn start_span(&self, span: u64, waker: &Waker) -> Outcome;
    #[doc(hidden)]
    fn target(&self, limit: Limit) -> Option<Duration>;
    #[doc(hidden)]
    fn poll_armed(&self, armed: &Armed, waker: &Waker) -> bool;
    #[doc(hidden)]
    fn has_fired(&self, armed: &Armed) -> bool;
    #[doc(hidden)]
    fn release(&self, armed: &Armed) -> bool;
    #[doc(hidden)]
    fn release_fired(&self, armed: &Armed);
    #[doc(hidden)]
    fn deadline_of(&self, armed: &Armed) -> Duration;
    #[doc(hidden)]
    fn now(&self) -> Duration;
    #[doc(hidden)]
    fn wake_drivers(&self);
    #[doc(hidden)]
    fn count_degraded_poll(&self);
    #[doc(hidden)]
    #[cfg(feature = "tracing")]
    fn late_by(&self, armed: &Armed) -> Duration;
    #[doc(hidden)]
    #[cfg(feature = "count-ready")]
    fn count_ready(&self);
}

/// An armed entry, as a deadline holds it: the entry's index, and the deadline's requested
/// span in nanoseconds when the entry's deadline is its start plus that span (releasing
/// derives from the two when the deadline started; `None` when a budget cut it short or
/// it was armed after running degraded). The entry's generation is not kept: it cannot
/// change while the deadline owns the entry, so the wheel reads it there.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Armed {
    index: Index,
    span: Option<u64>,
}

/// The outcome of a deadline's first pending poll.
#[doc(hidden)]
#[derive(Debug)]
pub struct Started {
    outcome: Outcome,
    requested: Duration,
    /// Whether a budget's instant was earlier than the deadline's own, and is used.
    capped: bool,
}

#[doc(hidden)]
#[derive(Debug)]
// Public as `RawWheel::start_span` returns it, which only 64-bit hosts have.
#[cfg_attr(not(target_pointer_width = "64"), allow(unreachable_pub))]
pub enum Outcome {
    /// The deadline had already passed.
    Passed,
    /// Armed on the wheel, in the entry of this index; `true` when the drivers must be
    /// woken, which the deadline does once it holds the handle (see `Wheel::arm`).
    Armed(Index, bool),
    /// The wheel is full: the deadline checks the clock on each poll until it passes.
    Full(Duration),
    /// Beyond any tick the wheel can count: it never fires.
    Never,
}

impl<C: Clock, S: Storage> sealed::Sealed for Wheel<C, S> {}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// The clock reading at which `limit` ends, seen from `now`, and the duration it
    /// stands for. `None`: beyond any reading (never ends).
    fn resolve(&self, limit: Limit, now: Duration) -> (Option<Duration>, Duration) {
        match limit {
            // `Duration::MAX` stands for "never" (as does any limit a deadline keeps as
            // `u64::MAX` ns or more), whatever the tick: on a wheel whose tick is over a
            // second, it would otherwise be a countable tick.
            Limit::After(Duration::MAX) | Limit::At(Duration::MAX) => (None, Duration::MAX),
            // A zero-length deadline has passed at any moment at or after its start.
            Limit::After(Duration::ZERO) => (Some(now), Duration::ZERO),
            // Add the clock's granularity: `now` may lag the true time by that much.
            Limit::After(duration) => (
                now.checked_add(self.clock().resolution())
                    .and_then(|t| t.checked_add(duration)),
                duration,
            ),
            Limit::At(at) => (Some(at), at.saturating_sub(now)),
        }
    }
}

/// `d` in nanoseconds, if that fits a `u64` (below about 584 years).
#[inline]
fn nanos_u64(d: Duration) -> Option<u64> {
    d.as_secs()
        .checked_mul(1_000_000_000)?
        .checked_add(u64::from(d.subsec_nanos()))
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// The start of the common case, a relative deadline of `span` nanoseconds with no
    /// budget, from the reading `now`, in `u64` arithmetic instead of `Duration` and
    /// `u128`: the fast part of both [`RawWheel::start`] and [`RawWheel::start_span`].
    /// `None` when a quantity does not fit, before anything is armed (then the general
    /// path decides, from the same reading). Agrees with the general path wherever it
    /// answers.
    #[inline]
    fn start_after(&self, now: Duration, span: u64, waker: &Waker) -> Option<Outcome> {
        if span == 0 {
            // As `resolve`: a zero-length deadline has passed at any moment after its start.
            return Some(Outcome::Passed);
        }
        let now = nanos_u64(now)?;
        let target = now
            .checked_add(nanos_u64(self.clock().resolution())?)?
            .checked_add(span)?;
        let ticks = self.ticks();
        // Readings of `u64::MAX` ns or more never come (as in `RawWheel::start`).
        if target == u64::MAX {
            return Some(Outcome::Never);
        }
        // `target > now`, as `span` is not zero.
        let when = ticks.ceil(target);
        let start = ticks.floor(now);
        Some(self.arm_outcome(target, when, start, waker, Duration::from_nanos(target)))
    }

    /// Arms a deadline due at `due` (ns), of tick `when`, started at tick `start`: armed
    /// (with whether the drivers must be woken), or degraded until `target` if the wheel
    /// is full.
    #[inline]
    fn arm_outcome(
        &self,
        due: u64,
        when: u64,
        start: u64,
        waker: &Waker,
        target: Duration,
    ) -> Outcome {
        match self.arm(due, when, start, waker) {
            Some((index, wake)) => Outcome::Armed(index, wake),
            None => Outcome::Full(target),
        }
    }
}

impl<C: Clock, S: Storage> Wheel<C, S> {
    /// [`RawWheel::start`] from the clock reading `now`.
    #[inline]
    fn start_from(
        &self,
        now: Duration,
        limit: Limit,
        cap: Option<Duration>,
        waker: &Waker,
    ) -> Started {
        if let (Limit::After(duration), None) = (limit, cap) {
            if let Some(outcome) =
                nanos_u64(duration).and_then(|span| self.start_after(now, span, waker))
            {
                return Started {
                    outcome,
                    requested: duration,
                    capped: false,
                };
            }
        }
        let (own, requested) = self.resolve(limit, now);
        let (target, capped) = match (own, cap) {
            (Some(own), Some(cap)) if cap < own => (Some(cap), true),
            (None, Some(cap)) => (Some(cap), true),
            (own, _) => (own, false),
        };
        let outcome = match target {
            None => Outcome::Never,
            Some(target) if target <= now => Outcome::Passed,
            // Readings of `u64::MAX` ns or more (about 584 years) never come.
            Some(target) => match nanos_u64(target).filter(|&due| due != u64::MAX) {
                None => Outcome::Never,
                Some(due) => {
                    let when = self.ticks().ceil(due);
                    self.arm_outcome(due, when, self.floor_ticks(now), waker, target)
                }
            },
        };
        Started {
            outcome,
            requested,
            capped,
        }
    }
}

impl<C: Clock, S: Storage> RawWheel for Wheel<C, S> {
    fn start(&self, limit: Limit, cap: Option<Duration>, waker: &Waker) -> Started {
        self.start_from(self.clock().now(), limit, cap, waker)
    }

    #[cfg(target_pointer_width = "64")]
    fn start_span(&self, span: u64, waker: &Waker) -> Outcome {
        let now = self.clock().now();
        match self.start_after(now, span, waker) {
            Some(outcome) => outcome,
            // A reading or a deadline past `u64::MAX` ns: the general path decides, from
            // the same reading.
            None => {
                self.start_from(now, Limit::After(duration_of(span)), None, waker)
                    .outcome
            }
        }
    }

    fn target(&self, limit: Limit) -> Option<Duration> {
        self.resolve(limit, self.clock().now()).0
    }

    fn poll_armed(&self, armed: &Armed, waker: &Waker) -> bool {
        self.poll_entry(armed.index, waker)
    }

    fn has_fired(&self, armed: &Armed) -> bool {
        self.entry_fired(armed.index)
    }

    fn release(&self, armed: &Armed) -> bool {
        Wheel::release(self, armed.index, armed.span)
    }

    fn release_fired(&self, armed: &Armed) {
        Wheel::release_fired(self, armed.index);
    }

    fn deadline_of(&self, armed: &Armed) -> Duration {
        self.entry_deadline(armed.index)
    }

    fn now(&self) -> Duration {
        self.clock().now()
    }

    fn wake_drivers(&self) {
        self.wake_driver();
    }

    fn count_degraded_poll(&self) {
        Wheel::count_degraded_poll(self);
    }

    #[cfg(feature = "tracing")]
    fn late_by(&self, armed: &Armed) -> Duration {
        self.clock()
            .now()
            .saturating_sub(self.entry_deadline(armed.index))
    }

    #[cfg(feature = "count-ready")]
    fn count_ready(&self) {
        Wheel::count_ready(self);
    }
}

/// What a deadline's timer is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Not polled yet: no clock read, nothing armed. `span` is the limit: a duration from
    /// the first poll, or (`flag`) an instant on the wheel's clock.
    Idle = 0,
    /// Armed on the wheel (the payload is the entry's index); `span` is the requested
    /// duration.
    Armed = 1,
    /// Degraded: the wheel was full when the deadline started. `span` is the requested
    /// duration; the payload is the target instant (see [`State::full`]).
    Full = 2,
    /// Never fires.
    Never = 3,
    /// Fired or released.
    Done = 4,
    /// A poll of the timer panicked (a waker's `clone` or `drop`, a driver's waker that
    /// the arm woke, or a `tracing` subscriber): the work happened on a copy (see
    /// [`Timer::poll_fired`]), which owned the entry while it unwound and released it.
    /// Polling again panics, as other futures do after a panic.
    Poisoned = 5,
}

impl Phase {
    const fn of(bits: u64) -> Self {
        match bits & PHASE {
            0 => Self::Idle,
            1 => Self::Armed,
            2 => Self::Full,
            3 => Self::Never,
            4 => Self::Done,
            _ => Self::Poisoned,
        }
    }
}

/// The bits of [`State`] that hold the [`Phase`].
const PHASE: u64 = 0b111;
/// `Idle`: the limit is an instant. Otherwise: the limit in force is a budget's (then the
/// requested duration is the budget's, and `Elapsed` says so; its name is looked up at
/// the fire, see [`budget_name`]).
const FLAG: u64 = 1 << 3;
/// For the owner's use (a `Deadline` marks its inner future dropped): set once the timer
/// is done, never cleared, and kept by every change of phase.
const INNER_GONE: u64 = 1 << 4;
/// Where the payload starts: 59 bits of it.
const PAYLOAD: u32 = 5;
/// In an `Armed` payload, above the index: armed after running degraded.
const REARMED: u64 = 1 << 32;
/// A degraded deadline's target from this reading on (about 9 years of the clock) is kept
/// in units of [`COARSE_UNIT`] nanoseconds, rounded up; below, exactly.
const COARSE_FROM: u64 = 1 << (u64::BITS - PAYLOAD - 1);
/// The unit of a coarse target: any reading fits the payload in it.
const COARSE_UNIT: u64 = 1 << (PAYLOAD + 1);
/// The last coarse unit, which stands for the targets up to `u64::MAX - 1` ns.
const LAST_COARSE: u64 = (1 << (u64::BITS - PAYLOAD - 1)) - 1;

/// A deadline's timer state, one word: the phase, two flags, and a payload (the entry's
/// index while armed, the target while degraded). A plain word rather than an enum with
/// payloads, so that moving from one phase to the next is one aligned store (an enum
/// whose payloads pack around the tag was rebuilt through the stack, with overlapping
/// loads that stall store forwarding on the arm path).
#[derive(Clone, Copy)]
struct State(u64);

impl State {
    const fn idle(at: bool) -> Self {
        Self::of(Phase::Idle, at)
    }

    const fn of(phase: Phase, flag: bool) -> Self {
        Self::with_payload(phase, flag, 0)
    }

    #[inline(always)]
    const fn with_payload(phase: Phase, flag: bool, payload: u64) -> Self {
        Self(phase as u64 | if flag { FLAG } else { 0 } | payload << PAYLOAD)
    }

    #[inline(always)]
    const fn armed(index: Index, budget: bool) -> Self {
        Self::with_payload(Phase::Armed, budget, index as u64)
    }

    /// An armed state for a deadline that ran degraded first: its entry's deadline is its
    /// target, not its start plus its span.
    #[inline(always)]
    const fn rearmed(index: Index, budget: bool) -> Self {
        Self::with_payload(Phase::Armed, budget, index as u64 | REARMED)
    }

    /// Whether an `Armed` state's entry is due at the deadline's start plus its span.
    #[inline(always)]
    const fn start_and_span(self) -> bool {
        !self.flag() && (self.0 >> PAYLOAD) & REARMED == 0
    }

    /// A degraded state with `target`. The payload's lowest bit says how the rest holds
    /// it: exactly, in nanoseconds, for a target below [`COARSE_FROM`] (about 9 years of
    /// the clock); from there on in [`COARSE_UNIT`]s, rounded up (never early, and at
    /// most 63 ns late; the last unit stands for every target up to `u64::MAX - 1` ns,
    /// the last reading that comes, at most 126 ns late). `Never` for `u64::MAX` ns or
    /// more.
    fn full(target: Duration, budget: bool) -> Self {
        let payload = match nanos_u64(target) {
            Some(nanos) if nanos < COARSE_FROM => nanos << 1,
            Some(nanos) if nanos < u64::MAX => {
                (nanos.div_ceil(COARSE_UNIT).min(LAST_COARSE) << 1) | 1
            }
            _ => return Self::of(Phase::Never, budget),
        };
        Self::with_payload(Phase::Full, budget, payload)
    }

    #[inline(always)]
    const fn phase(self) -> Phase {
        Phase::of(self.0)
    }

    /// Changes the phase, keeping the flags and the payload.
    #[inline(always)]
    fn set_phase(&mut self, phase: Phase) {
        self.0 = self.0 & !PHASE | phase as u64;
    }

    #[inline(always)]
    const fn flag(self) -> bool {
        self.0 & FLAG != 0
    }

    #[inline(always)]
    const fn inner_gone(self) -> bool {
        self.0 & INNER_GONE != 0
    }

    #[inline(always)]
    fn set_inner_gone(&mut self) {
        self.0 |= INNER_GONE;
    }

    /// The entry's index of an `Armed` state.
    #[inline(always)]
    const fn index(self) -> Index {
        (self.0 >> PAYLOAD) as u32 as Index
    }

    /// The target of a `Full` state.
    fn target(self) -> Duration {
        let payload = self.0 >> PAYLOAD;
        let nanos = match (payload & 1, payload >> 1) {
            (0, nanos) => nanos,
            // The last unit stands for every target in it up to the last reading that
            // comes, `u64::MAX - 1` ns (`u64::MAX` never does).
            (_, LAST_COARSE) => u64::MAX - 1,
            (_, units) => units * COARSE_UNIT,
        };
        Duration::from_nanos(nanos)
    }
}

impl core::fmt::Debug for State {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("State")
            .field("phase", &self.phase())
            .field("flag", &self.flag())
            .field("inner_gone", &self.inner_gone())
            .field("payload", &(self.0 >> PAYLOAD))
            .finish()
    }
}

/// How a deadline reaches its wheel.
///
/// `&dyn RawWheel` reaches any wheel, with one indirect call per wheel operation and 16
/// bytes in the deadline. A zero-sized handle to a wheel in a `static` (the global wheel
/// of `punctual` is one) costs no bytes at all, and the compiler calls the wheel directly.
///
/// # Examples
///
/// A wheel of your own in a `static` (an embassy firmware's, say), reached by a handle of
/// zero bytes:
///
/// ```
/// use core::time::Duration;
/// use punctual_core::{Deadline, Fixed, Limit, ManualClock, Wheel, WheelRef};
///
/// static WHEEL: Wheel<ManualClock, Fixed<8>> =
///     Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
///
/// #[derive(Clone, Copy)]
/// struct MyWheel;
///
/// // SAFETY: always the same `static` wheel.
/// unsafe impl WheelRef for MyWheel {
///     type Target = Wheel<ManualClock, Fixed<8>>;
///     fn get(&self) -> &Self::Target {
///         &WHEEL
///     }
/// }
///
/// let limit = Limit::After(Duration::from_millis(5));
/// let wheel: &dyn punctual_core::RawWheel = &WHEEL;
/// let by_ref = Deadline::new(core::future::pending::<()>(), wheel, limit);
/// let by_handle = Deadline::new(core::future::pending::<()>(), MyWheel, limit);
/// assert_eq!(size_of_val(&by_ref) - size_of_val(&by_handle), 16);
/// ```
///
/// # Safety
///
/// From a call of [`WheelRef::choose`] until the next [`WheelRef::forget_choice`],
/// [`WheelRef::get`] must return the same wheel every time it is called, on every copy of
/// the handle, and a repeated `choose` must not change it: a deadline arms its entry on
/// the wheel it gets at its first poll and releases that entry (by index) on the wheel it
/// gets later, so a second wheel would have another deadline's entry released under it.
/// (A handle whose `choose` does nothing must return the same wheel always.)
pub unsafe trait WheelRef: Copy + Unpin {
    /// The wheel's type: a [`Wheel`], or `dyn RawWheel`.
    type Target: RawWheel + ?Sized;

    /// The wheel.
    fn get(&self) -> &Self::Target;

    /// Settles which wheel this handle reaches, for a handle that picks its wheel late.
    /// A timer calls it at each start (its first pending poll, or the first after a
    /// reset), before it calls [`get`](WheelRef::get) or [`id`](WheelRef::id); the
    /// handle it calls it on is the one the timer keeps. The default does nothing: most
    /// handles name their wheel when they are made.
    ///
    /// `punctual`'s default deadlines use it to take the wheel of the runtime they are
    /// first polled in, so that a deadline that is ready at its first poll never looks.
    #[inline(always)]
    fn choose(&mut self) {}

    /// The reading of this handle's wheel at which a deadline given `Limit::At(at)`
    /// ends: `at` itself, unless the handle's instants are readings of another clock than
    /// its wheel's (`punctual`'s default deadlines take instants on one clock for every
    /// wheel they may choose). Called at each start, after [`choose`](WheelRef::choose).
    /// It must never return a reading before the moment `at` stands for.
    #[inline(always)]
    fn reading_at(&self, at: Duration) -> Duration {
        at
    }

    /// Lets a handle that chose late choose again at the next start: a timer calls it
    /// when it starts over for a new limit while holding no entry (an idle timeout's next
    /// gap). The default does nothing.
    #[inline(always)]
    fn forget_choice(&mut self) {}

    /// The wheel's address, to tell wheels apart (budgets apply to their own wheel only).
    #[doc(hidden)]
    #[inline]
    fn id(&self) -> usize {
        (self.get() as *const Self::Target).cast::<()>() as usize
    }
}

// SAFETY: a reference always points to the same wheel.
unsafe impl<'w> WheelRef for &'w dyn RawWheel {
    type Target = dyn RawWheel + 'w;

    #[inline]
    fn get(&self) -> &Self::Target {
        *self
    }
}

// SAFETY: a reference always points to the same wheel.
unsafe impl<C: Clock, S: Storage> WheelRef for &Wheel<C, S> {
    type Target = Wheel<C, S>;

    #[inline]
    fn get(&self) -> &Self::Target {
        self
    }
}

/// A span of `u64::MAX` nanoseconds or more: beyond any clock reading (about 584 years),
/// so it never ends (as `Duration::MAX`).
const BEYOND: u64 = u64::MAX;

/// `d` in saturated nanoseconds (a `Duration` is 16 bytes; a deadline keeps 8).
const fn span_of(d: Duration) -> u64 {
    let nanos = d.as_nanos();
    if nanos >= BEYOND as u128 {
        BEYOND
    } else {
        nanos as u64
    }
}

/// The `Duration` a span stands for.
const fn duration_of(span: u64) -> Duration {
    if span == BEYOND {
        Duration::MAX
    } else {
        Duration::from_nanos(span)
    }
}

/// A poll of a timer whose earlier poll panicked.
#[cold]
#[inline(never)]
#[track_caller]
fn poisoned() -> ! {
    panic!("a deadline polled again after its poll panicked")
}

/// What a timer's poll needs besides the context: the owner's name for its `Elapsed` (a
/// timer keeps none, so that an unnamed deadline pays no bytes for one), and the budget
/// that bounds it at this poll, if any (explicit; with `std`, the ambient one is read when
/// needed).
#[derive(Clone, Copy, Default)]
pub(crate) struct Naming<'a> {
    pub(crate) name: Option<&'static str>,
    pub(crate) cap: Option<&'a Budget>,
}

/// The name of the budget that ended a deadline: the budget bounding this poll (`cap`, or
/// else with `std` the ambient one) when it is the one that cut the deadline short: on its
/// wheel, and ending at the deadline's instant `at` (kept exactly, or as a degraded
/// deadline keeps it; `None` at the poll that started the deadline, whose budget is the
/// one that cut it). A deadline that fires outside the block whose budget cut it (made
/// before the block, first polled in it, fired after it) has no name then.
#[cold]
#[inline(never)]
fn budget_name(wheel: usize, at: Option<Duration>, cap: Option<&Budget>) -> Option<&'static str> {
    let ambient;
    let budget = match cap {
        Some(budget) => Some(budget),
        None => {
            ambient = crate::future::budget::ambient();
            ambient.as_ref()
        }
    };
    let ends_at =
        |b: &Budget| at.is_none_or(|at| at == b.at() || at == State::full(b.at(), false).target());
    budget
        .filter(|b| b.applies_to(wheel) && ends_at(b))
        .and_then(Budget::name)
}

/// The part of `Deadline`, `Sleep`, `Budgeted` and the stream deadlines that does not
/// depend on the inner future (generic only over how it reaches its wheel).
pub(crate) struct Timer<W: WheelRef> {
    wheel: W,
    /// The limit while idle, the requested duration once started (see [`State`]).
    /// In nanoseconds, saturated: [`BEYOND`] stands for anything from `u64::MAX`
    /// nanoseconds on (about 584 years), which never ends.
    span: u64,
    state: State,
}

impl<W: WheelRef> Timer<W> {
    pub(crate) const fn new(wheel: W, limit: Limit) -> Self {
        let (span, at) = match limit {
            Limit::After(duration) => (span_of(duration), false),
            Limit::At(at) => (span_of(at), true),
        };
        Self {
            wheel,
            span,
            state: State::idle(at),
        }
    }

    /// The wheel, settled first ([`WheelRef::choose`]): for owners that use the wheel
    /// before the timer starts (a budget reads the clock at its first poll).
    pub(crate) fn chosen_wheel(&mut self) -> W {
        self.wheel.choose();
        self.wheel
    }

    /// [`Timer::reset`], and the wheel may be chosen again at the next start (see
    /// [`WheelRef::forget_choice`]): for an owner whose next start owes nothing to the
    /// last one (an idle timeout's next gap).
    pub(crate) fn restart(&mut self, limit: Limit) {
        self.reset(limit);
        self.wheel.forget_choice();
    }

    /// Releases the entry, if any, and starts over with `limit` at the next poll.
    pub(crate) fn reset(&mut self, limit: Limit) {
        self.release();
        let (span, at) = match limit {
            Limit::After(duration) => (span_of(duration), false),
            Limit::At(at) => (span_of(at), true),
        };
        self.span = span;
        self.state = State::idle(at);
    }

    /// Whether the deadline has fired; called only after the inner future returned
    /// `Pending` (or for `Sleep`). Starts the timer on the first call; `cap` is the
    /// instant of a budget that bounds this deadline, applied if earlier.
    ///
    /// The work happens on a copy of the timer, written back after: the deadline's own
    /// address never reaches out-of-line code, so the compiler may keep a deadline that
    /// completes at its first poll in registers (the ready path costs nothing then).
    /// While the copy works, it owns the entry and this timer is [`Phase::Poisoned`]: if
    /// the work panics, the copy is dropped as it unwinds (releasing the entry once) and
    /// this timer never releases it again.
    #[inline]
    pub(crate) fn poll_fired(&mut self, cx: &mut Context<'_>, naming: Naming<'_>) -> Poll<Elapsed> {
        let mut copy = self.lend();
        let poll = copy.poll_fired_slow(cx, naming);
        self.adopt(copy);
        poll
    }

    /// Hands the timer's state to a copy to work on (see [`Timer::poll_fired`]), leaving
    /// this one poisoned until [`Timer::adopt`] takes the copy's state back.
    #[inline(always)]
    fn lend(&mut self) -> Self {
        let copy = Self {
            wheel: self.wheel,
            span: self.span,
            state: self.state,
        };
        self.state.set_phase(Phase::Poisoned);
        copy
    }

    /// Takes back the state of a copy from [`Timer::lend`], which is forgotten: the entry
    /// is this timer's again.
    #[inline(always)]
    fn adopt(&mut self, copy: Self) {
        let copy = ManuallyDrop::new(copy);
        // The wheel too: a start may have settled it (`WheelRef::choose`).
        self.wheel = copy.wheel;
        self.span = copy.span;
        self.state = copy.state;
    }

    #[inline(never)]
    fn poll_fired_slow(&mut self, cx: &mut Context<'_>, naming: Naming<'_>) -> Poll<Elapsed> {
        match self.state.phase() {
            Phase::Idle => {
                self.wheel.choose();
                let cap = naming.cap.filter(|b| b.applies_to(self.wheel.id()));
                // A duration with no budget (most deadlines): the requested duration is
                // the span, which stays as it is, and no `Duration` is made. On 64-bit
                // hosts only: it took about 70 of the 490 instructions of an arm +
                // cancel there; on microcontrollers its second copy of the arm would
                // cost about a kilobyte of flash.
                #[cfg(target_pointer_width = "64")]
                if !self.state.flag() && cap.is_none() {
                    let outcome = self.wheel.get().start_span(self.span, cx.waker());
                    return self.started(outcome, false, cx, naming);
                }
                let limit = if self.state.flag() {
                    Limit::At(self.wheel.reading_at(duration_of(self.span)))
                } else {
                    Limit::After(duration_of(self.span))
                };
                let started = self
                    .wheel
                    .get()
                    .start(limit, cap.map(Budget::at), cx.waker());
                let mut requested = started.requested;
                let mut budget = false;
                if let (true, Some(b)) = (started.capped, cap) {
                    requested = b.duration();
                    budget = true;
                }
                self.span = span_of(requested);
                self.started(started.outcome, budget, cx, naming)
            }
            Phase::Armed => {
                if self.wheel.get().poll_armed(&self.handle(), cx.waker()) {
                    self.fired(self.state.flag(), naming)
                } else {
                    Poll::Pending
                }
            }
            Phase::Full => self.poll_full(cx, naming),
            Phase::Never | Phase::Done => Poll::Pending,
            Phase::Poisoned => poisoned(),
        }
    }

    /// Takes on the outcome of the first pending poll (`budget`: the limit in force is a
    /// budget's); `span` already holds the requested duration.
    #[inline(always)]
    fn started(
        &mut self,
        outcome: Outcome,
        budget: bool,
        cx: &mut Context<'_>,
        naming: Naming<'_>,
    ) -> Poll<Elapsed> {
        match outcome {
            Outcome::Passed => self.fired(budget, naming),
            Outcome::Armed(index, wake) => {
                self.state = State::armed(index, budget);
                // After the handle is held: a driver's waker that panics then unwinds
                // through this copy, which releases the entry.
                if wake {
                    self.wheel.get().wake_drivers();
                }
                Poll::Pending
            }
            Outcome::Full(target) => {
                self.state = State::full(target, budget);
                if self.state.phase() == Phase::Full {
                    self.poll_full(cx, naming)
                } else {
                    Poll::Pending
                }
            }
            Outcome::Never => {
                self.state = State::of(Phase::Never, budget);
                Poll::Pending
            }
        }
    }

    /// Whether an armed timer has fired, without registering a waker. Lets a deadline
    /// refuse to poll its inner future after the fire. Panics on a poisoned timer, as
    /// [`Timer::poll_fired`] does, so that nothing is polled after a panicked poll.
    ///
    /// A degraded timer (the wheel was full) answers `None`: its fire is decided at a
    /// pending poll ([`Timer::poll_fired`]), as the model of the semantics has it (see
    /// [`Timer::has_passed`] for streams).
    ///
    /// Inlined, so that a deadline that never armed pays a comparison or two (or nothing,
    /// when the compiler sees it was just made).
    #[inline]
    pub(crate) fn has_fired(&mut self, naming: Naming<'_>) -> Option<Elapsed> {
        match self.state.phase() {
            Phase::Armed => {
                let mut copy = self.lend();
                let fired = copy.armed_has_fired(naming);
                self.adopt(copy);
                fired
            }
            Phase::Poisoned => poisoned(),
            Phase::Idle | Phase::Full | Phase::Never | Phase::Done => None,
        }
    }

    /// [`Timer::has_fired`], and for a degraded timer whether its time has come by the
    /// clock. For stream deadlines: a stream that always has an item ready is never polled
    /// while pending, so a degraded deadline would otherwise never end.
    pub(crate) fn has_passed(&mut self, naming: Naming<'_>) -> Option<Elapsed> {
        if self.state.phase() == Phase::Full {
            self.full_has_passed(naming)
        } else {
            self.has_fired(naming)
        }
    }

    /// Whether a degraded timer's target has come, by the clock. A degraded timer holds no
    /// entry, so it needs no copy to work on (see [`Timer::poll_fired`]): a panic here (a
    /// `tracing` subscriber's) leaves nothing to release.
    #[cold]
    fn full_has_passed(&mut self, naming: Naming<'_>) -> Option<Elapsed> {
        debug_assert_eq!(self.state.phase(), Phase::Full);
        if self.wheel.get().now() < self.state.target() {
            return None;
        }
        match self.fired(self.state.flag(), naming) {
            Poll::Ready(elapsed) => Some(elapsed),
            Poll::Pending => None,
        }
    }

    fn armed_has_fired(&mut self, naming: Naming<'_>) -> Option<Elapsed> {
        debug_assert_eq!(self.state.phase(), Phase::Armed);
        if !self.wheel.get().has_fired(&self.handle()) {
            return None;
        }
        match self.fired(self.state.flag(), naming) {
            Poll::Ready(elapsed) => Some(elapsed),
            Poll::Pending => None,
        }
    }

    /// Degraded mode: check the clock, try to arm again, else ask to be polled again.
    fn poll_full(&mut self, cx: &mut Context<'_>, naming: Naming<'_>) -> Poll<Elapsed> {
        debug_assert_eq!(
            self.state.phase(),
            Phase::Full,
            "poll_full outside the Full state"
        );
        let budget = self.state.flag();
        let target = self.state.target();
        match self
            .wheel
            .get()
            .start(Limit::At(target), None, cx.waker())
            .outcome
        {
            Outcome::Passed => self.fired(budget, naming),
            Outcome::Armed(index, wake) => {
                self.state = State::rearmed(index, budget);
                if wake {
                    self.wheel.get().wake_drivers();
                }
                Poll::Pending
            }
            Outcome::Full(_) => {
                self.wheel.get().count_degraded_poll();
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Outcome::Never => {
                self.state = State::of(Phase::Never, budget);
                Poll::Pending
            }
        }
    }

    /// Fires: lets go of the entry and reports the requested duration (`span`).
    fn fired(&mut self, budget: bool, naming: Naming<'_>) -> Poll<Elapsed> {
        let requested = duration_of(self.span);
        // The instant a budget cut the deadline to, read while the entry is still held.
        let capped_at = match self.state.phase() {
            _ if !budget => None,
            Phase::Armed => Some(self.wheel.get().deadline_of(&self.handle())),
            Phase::Full => Some(self.state.target()),
            _ => None,
        };
        #[cfg(feature = "tracing")]
        let late = if self.state.phase() == Phase::Armed {
            self.wheel.get().late_by(&self.handle())
        } else {
            Duration::ZERO
        };
        if self.state.phase() == Phase::Armed {
            // Seen fired: the outcome is decided, so no cancel is attempted.
            self.state.set_phase(Phase::Done);
            release_fired(self.wheel, self.handle());
        }
        self.state = State::of(Phase::Done, budget);
        let elapsed = if budget {
            Elapsed::budget(
                requested,
                budget_name(self.wheel.id(), capped_at, naming.cap),
            )
        } else {
            Elapsed::new(requested, naming.name)
        };
        #[cfg(feature = "tracing")]
        tracing::debug!(
            target: "punctual",
            name = elapsed.name().unwrap_or(""),
            duration = ?elapsed.duration(),
            budget = elapsed.is_budget(),
            late = ?late,
            "deadline elapsed"
        );
        Poll::Ready(elapsed)
    }

    /// Lets go of the entry, if armed (the timer is then done). Idempotent. Inlined, so
    /// that a deadline that never armed pays one comparison, or nothing.
    #[inline]
    pub(crate) fn release(&mut self) {
        if self.state.phase() == Phase::Armed {
            self.state.set_phase(Phase::Done);
            release_armed(self.wheel, self.handle());
        }
    }

    /// Counts a deadline that completed without starting its timer.
    #[cfg(feature = "count-ready")]
    pub(crate) fn count_ready_if_unstarted(&self) {
        if self.state.phase() == Phase::Idle {
            self.wheel.get().count_ready();
        }
    }

    /// Whether the owner marked its inner future dropped ([`Timer::set_inner_gone`]).
    #[inline]
    pub(crate) fn inner_gone(&self) -> bool {
        self.state.inner_gone()
    }

    /// Marks the owner's inner future dropped. Only once the timer has no further phase
    /// change to make (the deadline completed, or is being dropped): a new phase would
    /// clear the mark.
    #[inline]
    pub(crate) fn set_inner_gone(&mut self) {
        self.state.set_inner_gone();
    }

    /// The handle of an armed timer.
    #[inline(always)]
    fn handle(&self) -> Armed {
        Armed {
            index: self.state.index(),
            span: self.state.start_and_span().then_some(self.span),
        }
    }

    /// Whether the timer has started (read the clock).
    #[inline]
    pub(crate) fn is_started(&self) -> bool {
        self.state.phase() != Phase::Idle
    }
}

/// Releases an armed entry; out of line and by value (see [`Timer::poll_fired`]).
#[inline(never)]
fn release_armed<W: WheelRef>(wheel: W, armed: Armed) {
    wheel.get().release(&armed);
}

/// Releases an entry seen fired; out of line and by value (see [`Timer::poll_fired`]).
#[inline(never)]
fn release_fired<W: WheelRef>(wheel: W, armed: Armed) {
    wheel.get().release_fired(&armed);
}

impl<W: WheelRef> Drop for Timer<W> {
    #[inline]
    fn drop(&mut self) {
        self.release();
    }
}

impl<W: WheelRef> core::fmt::Debug for Timer<W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Timer")
            .field("state", &self.state)
            .field("span", &duration_of(self.span))
            .finish()
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    #[test]
    fn a_degraded_target_is_kept_exactly_then_rounded_up() {
        let round_trip = |nanos: u64| {
            let state = State::full(Duration::from_nanos(nanos), true);
            assert!(state.flag());
            (state.phase(), state.target().as_nanos() as u64)
        };
        for nanos in [0, 1, 12_345_678_901, COARSE_FROM - 1] {
            assert_eq!(
                round_trip(nanos),
                (Phase::Full, nanos),
                "exact below 2^58 ns"
            );
        }
        for nanos in [COARSE_FROM, COARSE_FROM + 1, u64::MAX - 200, u64::MAX - 127] {
            let (phase, target) = round_trip(nanos);
            assert_eq!(phase, Phase::Full);
            assert!(
                target >= nanos && target - nanos < COARSE_UNIT,
                "{nanos} ns kept as {target}"
            );
        }
        // The last unit: up to the last reading that comes.
        for nanos in [u64::MAX - 126, u64::MAX - 62, u64::MAX - 1] {
            assert_eq!(round_trip(nanos), (Phase::Full, u64::MAX - 1));
        }
        assert_eq!(
            State::full(Duration::from_nanos(u64::MAX), false).phase(),
            Phase::Never
        );
        assert_eq!(
            State::full(Duration::MAX, false).phase(),
            Phase::Never,
            "beyond any reading"
        );
    }

    /// Memory per armed deadline (the target in docs/benchmarks.md): keep the layouts from
    /// growing unnoticed.
    #[test]
    fn layouts_stay_small() {
        assert_eq!(core::mem::size_of::<State>(), 8);
        // The limit and the state: 16 bytes, besides how the timer reaches its wheel (16
        // bytes for a `&dyn RawWheel`, none for a `static` wheel's handle).
        assert_eq!(core::mem::size_of::<Timer<&dyn RawWheel>>(), 32);
        // The inner future's "gone" mark lives in the timer, and an unnamed deadline has
        // no name: nothing beside the future.
        type Pending = core::future::Pending<()>;
        assert_eq!(size_of::<crate::Deadline<'_, Pending>>(), 32);
        assert_eq!(
            size_of::<crate::Deadline<'_, Pending, &dyn RawWheel, crate::Named>>(),
            48
        );
        // With an entry of 40 bytes: 56 bytes per armed deadline on a `static` wheel.
        assert_eq!(core::mem::size_of::<crate::wheel::entry::Entry>(), 40);
    }
}

#[cfg(all(test, feature = "std", target_pointer_width = "64"))]
mod start_span_tests {
    use super::*;
    use crate::Fixed;
    use std::format;

    /// A clock stuck at one reading, with a given resolution.
    struct Stuck(Duration, Duration);

    impl Clock for Stuck {
        fn now(&self) -> Duration {
            self.0
        }

        fn resolution(&self) -> Duration {
            self.1
        }
    }

    /// `start_span(span)` agrees with `start(Limit::After(duration_of(span)), None)` over
    /// readings, resolutions, spans and ticks up to and past the clock's end, on a wheel
    /// with room and on a full one: the same outcome, entry deadline and occupancy, and
    /// `span_of(requested) == span`, not capped (so a timer's span, state and flag come out
    /// the same either way).
    #[test]
    // About 4 500 cases: slow under Miri, and the arm and release they reach are the same
    // code the other tests run under Miri.
    #[cfg_attr(miri, ignore)]
    fn start_span_agrees_with_the_general_start() {
        let max = u64::MAX;
        let readings = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_millis(5),
            Duration::from_nanos(max - 5_000_000),
            Duration::from_nanos(max - 10),
            Duration::from_nanos(max - 1),
            Duration::from_nanos(max),
            Duration::from_nanos(max) + Duration::from_nanos(1),
            Duration::MAX,
        ];
        let resolutions = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_nanos(5),
            Duration::from_millis(2),
            Duration::from_nanos(max),
            Duration::MAX,
        ];
        let spans = [
            0,
            1,
            2,
            5,
            6,
            999_999_999,
            5_000_000,
            1 << 40,
            max - 5_000_000,
            max - 11,
            max - 10,
            max - 2,
            max - 1,
            BEYOND,
        ];
        let ticks = [
            Duration::from_nanos(1),
            Duration::from_millis(1),
            Duration::from_secs(3600),
        ];
        let waker = Waker::noop();
        for &now in &readings {
            for &res in &resolutions {
                for &tick in &ticks {
                    for &span in &spans {
                        for full in [false, true] {
                            let fast: Wheel<Stuck, Fixed<1>> = Wheel::fixed(Stuck(now, res), tick);
                            let general: Wheel<Stuck, Fixed<1>> =
                                Wheel::fixed(Stuck(now, res), tick);
                            let mut held = [None, None];
                            if full {
                                for (i, wheel) in [&fast, &general].into_iter().enumerate() {
                                    let limit = Limit::At(Duration::from_secs(1));
                                    if let Outcome::Armed(index, _) =
                                        wheel.start(limit, None, waker).outcome
                                    {
                                        held[i] = Some(index);
                                    }
                                }
                            }
                            let case = format!(
                                "now {now:?}, resolution {res:?}, tick {tick:?}, span {span}, \
                                 full {full}"
                            );
                            let a = fast.start_span(span, waker);
                            let b = general.start(Limit::After(duration_of(span)), None, waker);
                            assert_eq!(format!("{a:?}"), format!("{:?}", b.outcome), "{case}");
                            assert_eq!(span_of(b.requested), span, "{case}");
                            assert!(!b.capped, "{case}");
                            assert_eq!(fast.occupied(), general.occupied(), "{case}");
                            if let (Outcome::Armed(i, _), Outcome::Armed(j, _)) = (&a, &b.outcome) {
                                assert_eq!(
                                    fast.entry_deadline(*i),
                                    general.entry_deadline(*j),
                                    "{case}"
                                );
                                held = [Some(*i), Some(*j)];
                            }
                            for (wheel, index) in [&fast, &general].into_iter().zip(held) {
                                if let Some(index) = index {
                                    RawWheel::release(wheel, &Armed { index, span: None });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
