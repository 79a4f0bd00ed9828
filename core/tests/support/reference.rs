//! The reference model of the wheel, shared by the model-based property test
//! (`core/tests/model.rs`, cases drawn by proptest) and the fuzz target
//! (`fuzz/fuzz_targets/wheel.rs`, cases decoded from bytes); each includes this file with
//! `#[path]`. A case is a tick, a clock start and a sequence of operations (arm, drop,
//! complete the inner future, re-register with a new waker, advance with or without
//! polling the woken, advance near a deadline's time); [`run`] plays it on a wheel with a
//! [`ManualClock`] and checks after every operation, panicking at the first disagreement:
//!
//! * **never early**: nothing is woken or completes before the clock reaches its
//!   requested time (start reading + duration, or the `deadline_at` instant);
//! * **at most two ticks late**, and in fact **never later than its tick**: an armed
//!   deadline has been woken (and completes when polled) once the clock reaches its tick,
//!   the first tick boundary at or after its time (a manual clock turns the wheel on time;
//!   sub-tick firing may fire it sooner, never before its time); in a tick with at most 8
//!   armed deadlines (a sparse one), a turn at or after a deadline's own time, rounded up
//!   to the levels' grain (the least power of two of nanoseconds that fits a whole tick
//!   in 16 bits), fires it (unless that rounds to the last grain of the tick or past it);
//! * **no lost wakeup**: a driver loop (`Wheel::register_driver`) that was not woken since
//!   its last turn plans to turn by the tick of every armed deadline that has not fired;
//! * **decided once**: completing the inner future gives `Ok` unless the fire was already
//!   decided (its waker woken), then `Err` with the requested duration and name (and
//!   the instant, for a deadline at one);
//!   cancelled, finished and replaced wakers are never woken again;
//! * **occupancy**: `occupied()` equals the live deadlines holding an entry plus the
//!   releases not reclaimed yet (a release on top of the arm inbox takes its entry back at
//!   once), every turn reclaims those, and dropping everything leaves the wheel empty;
//! * **full wheel**: a deadline that finds no free entry runs degraded (each such poll
//!   counted exactly by `degraded_polls()`): it leaves its waker in one of the wheel's
//!   four places, unless one holds it already, and the first turn at a later tick wakes
//!   it; with every place taken by other wakers it re-wakes its task at once. It never
//!   completes early, completes when polled at or after its time, and arms once an entry
//!   is free. A waker left in a place is woken by that turn even if its deadline was
//!   dropped or polled with another waker since (once, and only then);
//! * **odd limits**: zero durations and instants in the past complete at their first
//!   poll; limits ending at or past `u64::MAX` ns never fire and hold no entry.
#![allow(dead_code)]

use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::collections::BTreeMap;
use std::rc::Rc;

use punctual_core::{Clock, Elapsed, ManualClock, Reading, Sleep, Storage, Wheel};

use crate::support::CountingWaker;

// ---- a case ---------------------------------------------------------------------------

/// A length in ticks of the case's wheel, plus a sub-tick part.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Span {
    Ticks {
        ticks: u64,
        frac: u64,
    },
    /// `Duration::MAX`.
    Max,
    /// Far beyond any reading the wheel keeps (`u64::MAX` ns and more): never fires.
    Uncountable,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Sleep,
    Deadline { named: bool },
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Limit {
    After(Span),
    /// At `now + span`, or `now - span` with `past`.
    At {
        span: Span,
        past: bool,
    },
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Near {
    OneNsBefore,
    At,
    OneNsAfter,
    OneTickAfter,
    TwoTicksAfterLessOneNs,
    TwoTicksAfter,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    /// Makes a deadline (inner future: a gate, pending until completed) or a sleep and
    /// polls it once with a fresh waker.
    Arm { kind: Kind, limit: Limit },
    /// Drops a live deadline.
    Drop { pick: u8 },
    /// Opens a deadline's gate and polls it (a sleep is just polled).
    Complete { pick: u8 },
    /// Polls a live deadline with a new waker.
    Repoll { pick: u8 },
    /// Advances the clock and turns the wheel; with `poll`, then polls every woken
    /// deadline, as an executor would.
    Advance { span: Span, poll: bool },
    /// Advances to near a live deadline's requested time (no-op if that is past).
    AdvanceNear { pick: u8, near: Near },
}

#[derive(Debug)]
pub(crate) struct Case {
    pub(crate) tick: Duration,
    /// The clock's start, in ticks plus a sub-tick part.
    pub(crate) start: (u64, u64),
    pub(crate) ops: Vec<Op>,
}

impl Case {
    pub(crate) fn start_reading(&self) -> Duration {
        Span::Ticks {
            ticks: self.start.0,
            frac: self.start.1,
        }
        .duration(self.tick.as_nanos())
    }
}

const MAX_NANOS: u128 = u64::MAX as u128;

fn nanos_to_duration(nanos: u128) -> Duration {
    let secs = nanos / 1_000_000_000;
    match u64::try_from(secs) {
        Ok(secs) => Duration::new(secs, (nanos % 1_000_000_000) as u32),
        Err(_) => Duration::MAX,
    }
}

impl Span {
    pub(crate) fn duration(self, tick: u128) -> Duration {
        match self {
            Span::Ticks { ticks, frac } => {
                nanos_to_duration(u128::from(ticks) * tick + u128::from(frac) % tick)
            }
            Span::Max => Duration::MAX,
            Span::Uncountable => Duration::from_secs(u64::MAX / 2),
        }
    }
}

// ---- the system under test ------------------------------------------------------------

/// The inner future of a deadline: pending until its gate is opened.
struct Gate(Rc<Cell<bool>>);

impl Future for Gate {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u32> {
        if self.0.get() {
            Poll::Ready(7)
        } else {
            Poll::Pending
        }
    }
}

/// A deadline around a [`Gate`], named or not (the name is part of a deadline's type).
type GatedDeadline<'w> = Pin<Box<dyn Future<Output = Result<u32, Elapsed>> + 'w>>;

enum Fut<'w> {
    Sleep(Pin<Box<Sleep<'w>>>),
    Deadline(GatedDeadline<'w>, Rc<Cell<bool>>),
}

/// What a poll returned.
#[derive(Debug, PartialEq)]
enum Polled {
    Pending,
    /// A sleep completed.
    Slept,
    Ok,
    Err(Elapsed),
}

impl Fut<'_> {
    fn poll(&mut self, waker: &Waker) -> Polled {
        let mut cx = Context::from_waker(waker);
        match self {
            Fut::Sleep(s) => match s.as_mut().poll(&mut cx) {
                Poll::Pending => Polled::Pending,
                Poll::Ready(()) => Polled::Slept,
            },
            Fut::Deadline(d, _) => match d.as_mut().poll(&mut cx) {
                Poll::Pending => Polled::Pending,
                Poll::Ready(Ok(7)) => Polled::Ok,
                Poll::Ready(Ok(other)) => panic!("the gate returned {other}"),
                Poll::Ready(Err(elapsed)) => Polled::Err(elapsed),
            },
        }
    }
}

// ---- the reference --------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Holds an entry of the wheel.
    Armed,
    /// Found the wheel full: checks the clock on each poll.
    Degraded,
    /// Beyond the last countable tick: never fires, holds no entry.
    Never,
}

struct Live<'w> {
    fut: Fut<'w>,
    waker: CountingWaker,
    /// Wakes counted when the last poll began: more since means "woken".
    wakes_at_poll: usize,
    /// Requested time, in clock nanoseconds (`None`: never).
    target: Option<u128>,
    requested: Duration,
    /// The instant of a deadline limited by one (`deadline_at`): its error reports it as
    /// given, even where `target` is the coarser one a degraded deadline keeps.
    at: Option<Reading>,
    name: Option<&'static str>,
    mode: Mode,
    /// Polled degraded at least once: armed later, its entry is due at its target as the
    /// deadline keeps it (see [`degraded_deadline`]).
    was_degraded: bool,
    /// An armed deadline whose waker the wheel woke: its fire is decided.
    fired: bool,
    op: Op,
}

impl Live<'_> {
    fn woken(&self) -> bool {
        self.waker.wakes() > self.wakes_at_poll
    }
}

struct Model<'w, S: Storage> {
    wheel: &'w Wheel<ManualClock, S>,
    capacity: Option<usize>,
    tick: u128,
    now: u128,
    live: BTreeMap<u64, Live<'w>>,
    next_id: u64,
    /// Live deadlines that hold an entry (fired ones not yet polled or dropped included).
    armed: usize,
    /// Released entries the wheel has not reclaimed yet (until its next turn).
    unreclaimed: usize,
    /// The arm inbox since the last turn, oldest first: a release whose entry is on top
    /// takes it back at once (nothing to reclaim).
    arm_inbox: Vec<u64>,
    degraded_polls: usize,
    /// Wakers that must never be woken again, with their count then.
    retired: Vec<(CountingWaker, usize, String)>,
    /// The waker of a driver loop (`Wheel::register_driver`), registered again after each
    /// turn, and its wakes then.
    driver: CountingWaker,
    driver_wakes_at_turn: usize,
    /// The wheel's places for degraded deadlines' wakers, in the wheel's order: the
    /// waker's [`CountingWaker::id`], and the tick it was left at.
    places: [Option<(usize, u128)>; PLACES],
    step: usize,
    /// The wheel looks at dense slots early too (`Wheel::with_precise_fires`): a due
    /// deadline fires at any turn after its own time, whatever its tick holds.
    precise_fires: bool,
    /// The wheel fires a sparse tick's deadlines at their own time ([`sub_tick_fires`]).
    sub_tick: bool,
}

/// Whether the wheel fires a lone deadline at its own time, inside its tick (the core's
/// `sub-tick` feature, which `std` implies; without it, at its tick's end). Learned from a
/// wheel of the build under test, so that the fuzz target, which cannot name the core's
/// features, checks the same rule; the core's `model.rs` checks it against the feature.
pub(crate) fn sub_tick_fires() -> bool {
    let wheel: Wheel<ManualClock, punctual_core::Fixed<1>> =
        Wheel::fixed(ManualClock::new(), Duration::from_millis(1));
    let mut sleep = core::pin::pin!(wheel.sleep(Duration::from_micros(1_500)));
    let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
    assert!(sleep.as_mut().poll(&mut cx).is_pending());
    // A turn places it in its slot (a turn that takes it in due fires it at once).
    wheel.turn();
    wheel.advance(Duration::from_micros(1_500));
    if sleep.as_mut().poll(&mut cx).is_ready() {
        return true;
    }
    wheel.advance(Duration::from_micros(500));
    assert!(
        sleep.as_mut().poll(&mut cx).is_ready(),
        "not fired at its tick"
    );
    false
}

/// Places for degraded deadlines' wakers per wheel (the core's `wakers::PLACES`).
const PLACES: usize = 4;

impl<'w, S: Storage> Model<'w, S> {
    fn new(wheel: &'w Wheel<ManualClock, S>, capacity: Option<usize>, precise_fires: bool) -> Self {
        Self {
            wheel,
            capacity,
            tick: wheel.tick().as_nanos(),
            now: wheel.clock().now().as_nanos(),
            live: BTreeMap::new(),
            next_id: 0,
            armed: 0,
            unreclaimed: 0,
            arm_inbox: Vec::new(),
            degraded_polls: 0,
            retired: Vec::new(),
            driver: {
                let driver = CountingWaker::new();
                wheel.register_driver(&driver.waker);
                driver
            },
            driver_wakes_at_turn: 0,
            places: Default::default(),
            step: 0,
            precise_fires,
            sub_tick: sub_tick_fires(),
        }
    }

    fn has_free_entry(&self) -> bool {
        self.capacity
            .is_none_or(|cap| self.armed + self.unreclaimed < cap)
    }

    /// An entry holds its deadline as a reading in `u64` nanoseconds; `u64::MAX` is "never".
    fn countable(&self, target: u128) -> bool {
        target < u128::from(u64::MAX)
    }

    fn pick(&self, pick: u8) -> Option<u64> {
        if self.live.is_empty() {
            return None;
        }
        self.live
            .keys()
            .nth(usize::from(pick) % self.live.len())
            .copied()
    }

    fn apply(&mut self, op: Op) {
        self.step += 1;
        match op {
            Op::Arm { kind, limit } => self.arm(op, kind, limit),
            Op::Drop { pick } => {
                if let Some(id) = self.pick(pick) {
                    self.drop_live(id);
                }
            }
            Op::Complete { pick } => {
                if let Some(id) = self.pick(pick) {
                    if let Fut::Deadline(_, gate) = &self.live[&id].fut {
                        gate.set(true);
                    }
                    self.poll(id);
                }
            }
            Op::Repoll { pick } => {
                if let Some(id) = self.pick(pick) {
                    let live = self.live.get_mut(&id).unwrap();
                    let old = core::mem::replace(&mut live.waker, CountingWaker::new());
                    let wakes = old.wakes();
                    self.retired
                        .push((old, wakes, format!("replaced waker of {:?}", live.op)));
                    self.poll(id);
                }
            }
            Op::Advance { span, poll } => {
                let by = span.duration(self.tick).as_nanos();
                self.advance(by, poll);
            }
            Op::AdvanceNear { pick, near } => {
                let target = self.pick(pick).and_then(|id| self.live[&id].target);
                let to = target.map(|t| match near {
                    Near::OneNsBefore => t.saturating_sub(1),
                    Near::At => t,
                    Near::OneNsAfter => t + 1,
                    Near::OneTickAfter => t + self.tick,
                    Near::TwoTicksAfterLessOneNs => t + 2 * self.tick - 1,
                    Near::TwoTicksAfter => t + 2 * self.tick,
                });
                let by = to.map_or(0, |to| to.saturating_sub(self.now));
                self.advance(by, true);
            }
        }
        self.check_wheel();
    }

    fn arm(&mut self, op: Op, kind: Kind, limit: Limit) {
        let now = self.now;
        let now_d = nanos_to_duration(now);
        let (target, requested) = match limit {
            Limit::After(span) => {
                let d = span.duration(self.tick);
                (now + d.as_nanos(), d)
            }
            Limit::At { span, past } => {
                let span = span.duration(self.tick).as_nanos();
                let at = if past {
                    now.saturating_sub(span)
                } else {
                    now + span
                };
                let at = nanos_to_duration(at);
                (at.as_nanos(), at.saturating_sub(now_d))
            }
        };
        let name = match kind {
            Kind::Deadline { named: true } => Some("named"),
            _ => None,
        };
        let fut = match kind {
            Kind::Sleep => Fut::Sleep(Box::pin(match limit {
                Limit::After(_) => self.wheel.sleep(requested),
                Limit::At { .. } => self
                    .wheel
                    .sleep_until(Reading::since_origin(nanos_to_duration(target))),
            })),
            Kind::Deadline { .. } => {
                let gate = Rc::new(Cell::new(false));
                let inner = Gate(gate.clone());
                let d = match limit {
                    Limit::After(_) => self.wheel.deadline(requested, inner),
                    Limit::At { .. } => self
                        .wheel
                        .deadline_at(Reading::since_origin(nanos_to_duration(target)), inner),
                };
                let d: GatedDeadline<'_> = match name {
                    Some(name) => Box::pin(d.named(name)),
                    None => Box::pin(d),
                };
                Fut::Deadline(d, gate)
            }
        };
        // A limit already past completes at the first poll, countable or not.
        // A deadline keeps its limit in `u64` nanoseconds: from `u64::MAX` on, it never
        // ends (even an instant of exactly `u64::MAX` ns on a clock that reached it).
        let kept = match limit {
            Limit::After(_) => requested.as_nanos(),
            Limit::At { .. } => target,
        };
        let countable = kept < u128::from(u64::MAX) && (self.countable(target) || target <= now);
        let id = self.next_id;
        self.next_id += 1;
        self.live.insert(
            id,
            Live {
                fut,
                waker: CountingWaker::new(),
                wakes_at_poll: 0,
                target: countable.then_some(target),
                requested,
                at: match limit {
                    Limit::At { .. } => u64::try_from(target).ok().map(Reading::from_nanos),
                    Limit::After(_) => None,
                },
                name,
                // A countable deadline starts like a degraded one: its first poll
                // completes it if its time has come, else arms it or degrades it.
                mode: if countable {
                    Mode::Degraded
                } else {
                    Mode::Never
                },
                was_degraded: false,
                fired: false,
                op,
            },
        );
        self.poll(id);
    }

    /// Polls `id` once with its current waker and checks the outcome.
    fn poll(&mut self, id: u64) {
        let now = self.now;
        let tick = self.tick;
        let has_free_entry = self.has_free_entry();
        let step = self.step;
        let live = self.live.get_mut(&id).unwrap();
        let fired = live.fired;
        let gate_open = matches!(&live.fut, Fut::Deadline(_, gate) if gate.get());
        let before = live.waker.wakes();
        live.wakes_at_poll = before;
        let result = live.fut.poll(&live.waker.waker);
        let what = format!(
            "step {step}: {:?} (mode {:?}, now {now} ns, target {:?})",
            live.op, live.mode, live.target
        );
        match result {
            Polled::Pending => {
                assert!(!gate_open, "{what}: pending with its gate open");
                match live.mode {
                    Mode::Never => {}
                    Mode::Armed => {
                        let target = live.target.unwrap();
                        assert!(!fired, "{what}: woken by the fire, yet pending");
                        assert!(now < tick_end(target, tick), "{what}: pending at its tick");
                    }
                    Mode::Degraded => {
                        let target = live.target.unwrap();
                        assert!(
                            now < degraded_deadline(target),
                            "{what}: degraded and pending after its time"
                        );
                        if has_free_entry {
                            live.mode = Mode::Armed;
                            if live.was_degraded {
                                live.target = Some(degraded_deadline(target));
                            }
                            self.armed += 1;
                            self.arm_inbox.push(id);
                        } else {
                            live.was_degraded = true;
                            self.degraded_polls += 1;
                            // Left in the first empty place, unless one holds the same
                            // waker; with neither, the task is woken again at once.
                            let waker = live.waker.id();
                            let waits = self.places.iter().flatten().any(|&(w, _)| w == waker)
                                || match self.places.iter_mut().find(|place| place.is_none()) {
                                    Some(place) => {
                                        *place = Some((waker, now / tick));
                                        true
                                    }
                                    None => false,
                                };
                            assert_eq!(
                                live.waker.wakes(),
                                before + usize::from(!waits),
                                "{what}: a degraded poll that {} woke its task {} times",
                                if waits {
                                    "waits in a place"
                                } else {
                                    "found no place"
                                },
                                live.waker.wakes() - before
                            );
                        }
                    }
                }
                return;
            }
            Polled::Ok => {
                assert!(gate_open, "{what}: Ok with its gate closed");
                assert!(!fired, "{what}: Ok after the fire was decided");
                if live.mode == Mode::Armed {
                    // Released before the fire: taken back, or reclaimed at the next turn.
                    self.release_unfired(id);
                }
            }
            Polled::Slept | Polled::Err(_) => {
                assert!(
                    live.target.is_some_and(|t| now >= t),
                    "{what}: completed early"
                );
                if let Polled::Err(elapsed) = result {
                    let expected = match live.at {
                        Some(at) => Elapsed::at_instant(at, live.name),
                        None => Elapsed::new(live.requested, live.name),
                    };
                    assert_eq!(elapsed, expected, "{what}: wrong error");
                }
                if gate_open && live.mode != Mode::Armed {
                    panic!("{what}: Err with its gate open and no fire decided");
                }
                if gate_open {
                    assert!(fired, "{what}: Err with its gate open, not woken by a fire");
                }
                if live.mode == Mode::Armed {
                    assert!(fired, "{what}: armed and complete, never woken");
                }
            }
        }
        let live = self.live.remove(&id).unwrap();
        if live.mode == Mode::Armed {
            self.armed -= 1;
        }
        let wakes = live.waker.wakes();
        self.retired
            .push((live.waker, wakes, format!("finished {:?}", live.op)));
    }

    fn drop_live(&mut self, id: u64) {
        let live = self.live.remove(&id).unwrap();
        if live.mode == Mode::Armed {
            self.armed -= 1;
            if !live.fired {
                // Not fired: taken back, or it waits for the next turn to be reclaimed.
                // (A fired one is freed by the drop itself.)
                self.release_unfired(id);
            }
        }
        let Live { fut, waker, op, .. } = live;
        drop(fut);
        let wakes = waker.wakes();
        self.retired.push((waker, wakes, format!("dropped {op:?}")));
    }

    /// An armed entry released before it fired: taken back if no turn took it in and it
    /// is on top of the arm inbox, else reclaimed at the next turn.
    fn release_unfired(&mut self, id: u64) {
        if self.arm_inbox.last() == Some(&id) {
            self.arm_inbox.pop();
        } else {
            self.unreclaimed += 1;
        }
    }

    fn advance(&mut self, by: u128, poll: bool) {
        // Before the turn: the armed deadlines not fired yet, by their tick, to tell which
        // slots are sparse.
        let mut per_tick: BTreeMap<u128, usize> = BTreeMap::new();
        let pending: Vec<(u64, u128, u128)> = self
            .live
            .iter()
            .filter(|(_, live)| live.mode == Mode::Armed && !live.fired && !live.woken())
            .filter_map(|(&id, live)| {
                let target = live.target?;
                let due = if live.was_degraded {
                    degraded_deadline(target)
                } else {
                    target
                };
                let when = due.div_ceil(self.tick);
                *per_tick.entry(when).or_default() += 1;
                Some((id, due, when))
            })
            .collect();
        let reading = self.wheel.advance(nanos_to_duration(by));
        self.wheel.register_driver(&self.driver.waker);
        self.driver_wakes_at_turn = self.driver.wakes();
        self.now = (self.now + by).min(MAX_NANOS);
        assert_eq!(
            u128::from(reading.as_nanos()),
            self.now,
            "the clock's reading"
        );
        // The turn woke the wakers left in places at an earlier tick: a retired one may
        // count that one wake.
        let now_tick = self.now / self.tick;
        for place in &mut self.places {
            if place.as_ref().is_some_and(|&(_, tick)| tick < now_tick) {
                let (waker, _) = place.take().unwrap();
                // A deadline armed since it waited there: a spurious wake, not its fire.
                for live in self.live.values_mut() {
                    if live.mode == Mode::Armed && live.waker.id() == waker {
                        live.wakes_at_poll += 1;
                    }
                }
                for (retired, wakes, _) in &mut self.retired {
                    if retired.id() == waker {
                        *wakes += 1;
                    }
                }
            }
        }
        // Sub-tick firing: a turn fires every due deadline of a sparse tick (at most
        // `SPARSE` armed in it; of any tick with precise fires) once the clock passes its
        // offset into the tick before its tick rounded up to a grain, if that is below the
        // last grain, not only at the tick's end. (The levels' count of a slot
        // saturates at 255 and then reads "many" until the slot empties; a case would need
        // over 500 operations to bring such a slot back down to `SPARSE`, and cases have
        // at most 256.)
        let grain = grain_of(self.tick);
        for (id, due, when) in pending {
            let offset = (due - (when - 1) * self.tick).min(u128::from(u32::MAX));
            let grains = offset.div_ceil(grain);
            let looked_at = (when - 1) * self.tick + grains * grain;
            let looked = self.sub_tick && (self.precise_fires || per_tick[&when] <= SPARSE);
            if looked_at <= self.now && looked && grains < 0xFFFF {
                let live = &self.live[&id];
                assert!(
                    live.woken(),
                    "step {}: {:?} (now {} ns): due at {due} in a sparse tick (or with early \
                     looks), not fired at its own time",
                    self.step,
                    live.op,
                    self.now
                );
            }
        }
        self.unreclaimed = 0;
        self.arm_inbox.clear();
        // Woken and fired: never early, and armed ones by their tick.
        for live in self.live.values_mut() {
            let Some(target) = live.target else { continue };
            if live.mode != Mode::Armed {
                continue;
            }
            let what = format!("step {}: {:?} (now {} ns)", self.step, live.op, self.now);
            if live.woken() {
                assert!(self.now >= target, "{what}: woken before {target}");
                live.fired = true;
            } else if !live.fired {
                assert!(
                    self.now < tick_end(target, self.tick),
                    "{what}: not woken at the tick of {target}"
                );
            }
        }
        if !poll {
            return;
        }
        let woken: Vec<u64> = self
            .live
            .iter()
            .filter(|(_, live)| live.woken())
            .map(|(&id, _)| id)
            .collect();
        for id in woken {
            self.poll(id);
        }
        let now_tick = self.now / self.tick;
        for live in self.live.values() {
            if let (Some(target), Mode::Degraded) = (live.target, live.mode) {
                // One waiting in a place since this tick is woken by the turn at the next.
                if self
                    .places
                    .iter()
                    .flatten()
                    .any(|&(waker, tick)| tick >= now_tick && waker == live.waker.id())
                {
                    continue;
                }
                assert!(
                    self.now < degraded_deadline(target),
                    "step {}: {:?} degraded, pending past its time {target}",
                    self.step,
                    live.op
                );
            }
        }
    }

    fn check_wheel(&self) {
        let step = self.step;
        // No lost wakeup: a driver that was not woken since its last turn plans to turn by
        // the tick of every armed deadline that has not fired (an arm earlier than the plan
        // wakes it; `next_turn` is the boundary the driver turns by).
        if self.driver.wakes() == self.driver_wakes_at_turn {
            let plan = u128::from(self.wheel.next_turn().as_nanos());
            for live in self.live.values() {
                let Some(target) = live.target else { continue };
                if live.mode != Mode::Armed || live.fired || live.woken() {
                    continue;
                }
                let due = if live.was_degraded {
                    degraded_deadline(target)
                } else {
                    target
                };
                assert!(
                    plan <= tick_end(due, self.tick),
                    "step {step}: {:?}: due at {due} ns, but the driver, not woken, plans its \
                     turn at {plan} ns",
                    live.op
                );
            }
        }
        // No lost wakeup for a degraded deadline either: a driver not woken since its last
        // turn plans one by the start of the tick after each waiting waker's.
        if self.driver.wakes() == self.driver_wakes_at_turn {
            let plan = self.wheel.next_turn().as_nanos();
            for &(_, tick) in self.places.iter().flatten() {
                assert!(
                    u128::from(plan) <= (tick + 1) * self.tick,
                    "step {step}: a degraded deadline waits from tick {tick}, but the \
                     driver, not woken, plans its turn at {plan} ns"
                );
            }
        }
        assert_eq!(
            self.wheel.occupied(),
            self.armed + self.unreclaimed,
            "step {step}: occupied(), expected {} armed + {} unreclaimed",
            self.armed,
            self.unreclaimed
        );
        assert_eq!(
            self.wheel.degraded_polls(),
            self.degraded_polls,
            "step {step}: degraded_polls()"
        );
        for (waker, wakes, what) in &self.retired {
            assert_eq!(
                waker.wakes(),
                *wakes,
                "step {step}: woken after it was retired: {what}"
            );
        }
        for live in self.live.values() {
            if live.mode == Mode::Never {
                assert!(
                    !live.woken(),
                    "step {step}: a never-firing deadline was woken"
                );
            }
        }
    }
}

/// A tick with at most this many armed deadlines fires each at its own time (the core's
/// `levels::SPARSE`).
const SPARSE: usize = 8;

/// The unit in which the levels keep a sparse slot's offset bound, for a tick of `tick`
/// ns: the least power of two of nanoseconds that fits a whole tick, or `u32::MAX` ns if
/// the tick is longer, in 16 bits (mirrors `levels::Grain`).
fn grain_of(tick: u128) -> u128 {
    let longest = tick.min(u128::from(u32::MAX));
    let bits = u128::BITS - longest.leading_zeros();
    1 << bits.saturating_sub(16)
}

/// The tick boundary at or after `target` (ns): the latest an armed deadline fires on a
/// wheel turned on time.
fn tick_end(target: u128, tick: u128) -> u128 {
    target.div_ceil(tick) * tick
}

/// Plays `case` on `wheel` (a fixed one of `capacity` entries, or a growable one) and
/// checks it against the model; panics at the first disagreement.
pub(crate) fn run<S: Storage>(wheel: &Wheel<ManualClock, S>, capacity: Option<usize>, case: &Case) {
    play(wheel, capacity, case, false);
}

/// [`run`] on a wheel built with precise fires: every deadline also fires at the first turn
/// after its own time, as a sparse tick's does.
pub(crate) fn run_with_precise_fires<S: Storage>(
    wheel: &Wheel<ManualClock, S>,
    capacity: Option<usize>,
    case: &Case,
) {
    play(wheel, capacity, case, true);
}

fn play<S: Storage>(
    wheel: &Wheel<ManualClock, S>,
    capacity: Option<usize>,
    case: &Case,
    precise_fires: bool,
) {
    let mut model = Model::new(wheel, capacity, precise_fires);
    for &op in &case.ops {
        model.apply(op);
    }
    let ids: Vec<u64> = model.live.keys().copied().collect();
    for id in ids {
        model.drop_live(id);
    }
    model.check_wheel();
    model.advance(0, true);
    model.check_wheel();
    assert_eq!(
        wheel.occupied(),
        0,
        "entries left after dropping every deadline"
    );
    let stats = wheel.stats();
    assert_eq!(stats.armed, stats.fired + stats.cancelled, "{stats}");
}

/// When a degraded deadline with `target` (ns) fires at the latest, at a pending poll: at
/// its target, except that a deadline keeps a target from 2^57 ns of the clock on (about 4.5
/// years) in units of 128 ns, rounded up, the last unit standing for every target up to
/// the last reading that comes, `u64::MAX - 1` (`State::degraded` in the core's
/// `future/timer/state.rs`).
fn degraded_deadline(target: u128) -> u128 {
    const COARSE_FROM: u128 = 1 << 57;
    const COARSE_UNIT: u128 = 128;
    // The last unit's own value, from which it stands for `u64::MAX - 1`.
    const LAST: u128 = (1 << 64) - COARSE_UNIT;
    if target < COARSE_FROM {
        target
    } else if target.next_multiple_of(COARSE_UNIT) >= LAST {
        u128::from(u64::MAX - 1)
    } else {
        target.next_multiple_of(COARSE_UNIT)
    }
}
