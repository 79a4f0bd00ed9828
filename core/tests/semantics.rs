//! Deterministic tests, on a manual clock, of every rule of the contract's semantics
//! (docs/design.md, rules 1 to 7): cancel on fire, never early, at most two ticks late, when the clock starts,
//! decided once, bad input, the error, plus waker replacement, clock resolution, long
//! uptimes and auto traits.

mod support;

use core::future::{Future, pending, ready};
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::{Arc, Mutex};

use punctual_core::{
    Clock, Deadline, Elapsed, Fixed, Growable, ManualClock, Sleep, Storage, Wheel,
};

const TICK: Duration = Duration::from_millis(1);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

fn fixed<const N: usize>() -> Wheel<ManualClock, Fixed<N>> {
    Wheel::fixed(ManualClock::new(), TICK)
}

fn growable() -> Wheel<ManualClock, Growable> {
    Wheel::growable(ManualClock::new(), TICK)
}

// ---- helpers --------------------------------------------------------------------------

use support::CountingWaker;

/// An inner future that records its polls and its drop, and becomes ready on request.
#[derive(Clone, Default)]
struct ProbeState {
    polls: Arc<AtomicUsize>,
    dropped: Arc<AtomicBool>,
    ready: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<&'static str>>>,
}

impl ProbeState {
    fn probe(&self) -> Probe {
        Probe(self.clone())
    }

    fn polls(&self) -> usize {
        self.polls.load(SeqCst)
    }

    fn dropped(&self) -> bool {
        self.dropped.load(SeqCst)
    }

    fn log(&self, event: &'static str) {
        self.log.lock().unwrap().push(event);
    }

    fn events(&self) -> Vec<&'static str> {
        self.log.lock().unwrap().clone()
    }
}

struct Probe(ProbeState);

impl Future for Probe {
    type Output = u32;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u32> {
        assert!(!self.0.dropped(), "polled after drop");
        self.0.polls.fetch_add(1, SeqCst);
        self.0.log("poll");
        if self.0.ready.load(SeqCst) {
            Poll::Ready(7)
        } else {
            Poll::Pending
        }
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.0.dropped.store(true, SeqCst);
        self.0.log("drop");
    }
}

fn is_elapsed<T: core::fmt::Debug>(poll: Poll<Result<T, Elapsed>>) -> Elapsed {
    match poll {
        Poll::Ready(Err(elapsed)) => elapsed,
        other => panic!("expected Ready(Err(Elapsed)), got {other:?}"),
    }
}

// ---- rule 1: cancel, don't abandon ----------------------------------------------------

#[test]
fn fire_drops_the_inner_future_before_returning_elapsed_and_never_polls_it_again() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(probe.polls(), 1);

    wheel.advance(ms(10));
    assert_eq!(
        w.wakes(),
        1,
        "the advancing thread fired the deadline and woke the task"
    );
    assert!(
        !probe.dropped(),
        "the inner future lives until the deadline is polled"
    );

    let result = w.poll(d.as_mut());
    probe.log("err returned");
    let elapsed = is_elapsed(result);
    assert_eq!(elapsed.duration(), ms(10));
    assert_eq!(probe.events(), ["poll", "drop", "err returned"]);
    assert_eq!(
        probe.polls(),
        1,
        "the inner future is not polled after the fire"
    );
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn fire_observed_in_the_same_poll_drops_the_inner_future_after_one_poll() {
    // Duration::ZERO: the inner future is polled (pending), then the deadline fires in
    // the same poll; the inner future is dropped before `Err` is returned.
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::ZERO, probe.probe()));
    let result = w.poll(d.as_mut());
    probe.log("err returned");
    is_elapsed(result);
    assert_eq!(probe.events(), ["poll", "drop", "err returned"]);
}

#[test]
fn dropping_the_deadline_drops_the_inner_future_and_releases_the_entry_silently() {
    fn check<S: Storage>(wheel: &Wheel<ManualClock, S>) {
        let probe = ProbeState::default();
        let w = CountingWaker::new();
        let mut d = Box::pin(wheel.deadline(ms(10), probe.probe()));
        assert!(w.poll(d.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 1);
        wheel.advance(ms(3));
        drop(d);
        assert!(probe.dropped());
        wheel.advance(Duration::ZERO);
        assert_eq!(wheel.occupied(), 0);
        wheel.advance(ms(100));
        assert_eq!(w.wakes(), 0, "a dropped deadline causes no event");
        assert_eq!(wheel.occupied(), 0);
        assert_eq!(probe.polls(), 1);
    }
    check(&fixed::<1>());
    check(&growable());
}

#[test]
fn dropping_a_fired_but_unobserved_deadline_frees_its_entry() {
    let wheel = fixed::<1>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.deadline(ms(5), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(5));
    assert_eq!(w.wakes(), 1);
    drop(d);
    assert!(probe.dropped());
    assert_eq!(
        wheel.occupied(),
        0,
        "the last owner frees the entry at once"
    );
    // The one entry is reusable: the next deadline arms, not degraded.
    let mut s = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(s.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 0);
    assert_eq!(wheel.occupied(), 1);
}

// ---- rule 2: never early --------------------------------------------------------------

#[test]
fn never_early_pending_at_requested_minus_1ns_ready_at_requested() {
    for duration in [
        ms(1),
        ms(10),
        ms(63),
        ms(64),
        ms(65),
        ms(4095),
        ms(4096),
        ms(300_000),
    ] {
        let wheel = growable();
        let w = CountingWaker::new();
        let ws = CountingWaker::new();
        let mut d = pin!(wheel.deadline(duration, pending::<()>()));
        let mut s = pin!(wheel.sleep(duration));
        assert!(w.poll(d.as_mut()).is_pending());
        assert!(ws.poll(s.as_mut()).is_pending());
        wheel.advance(duration - ns(1));
        assert_eq!((w.wakes(), ws.wakes()), (0, 0), "{duration:?}: woken early");
        assert!(
            w.poll(d.as_mut()).is_pending(),
            "{duration:?}: deadline early"
        );
        assert!(
            ws.poll(s.as_mut()).is_pending(),
            "{duration:?}: sleep early"
        );
        wheel.advance(ns(1));
        assert_eq!(
            (w.wakes(), ws.wakes()),
            (1, 1),
            "{duration:?}: not woken on time"
        );
        assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), duration);
        assert!(ws.poll(s.as_mut()).is_ready());
        assert_eq!(wheel.occupied(), 0);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn never_early_with_sub_tick_start_and_duration() {
    // Started 0.3 ms into a tick, for 1.5 ms: requested time 1.8 ms.
    let wheel = fixed::<4>();
    wheel.advance(Duration::from_micros(300));
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::from_micros(1500), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(Duration::from_micros(1500) - ns(1));
    assert_eq!(w.wakes(), 0);
    assert!(w.poll(d.as_mut()).is_pending());
    // Step by 1 µs up to 2 ticks past the requested time: fires somewhere in there.
    let requested = Duration::from_micros(1800);
    let mut fired_at = None;
    while wheel.clock().now() < requested + 2 * TICK {
        let now = wheel.advance(Duration::from_micros(1));
        if w.wakes() > 0 {
            fired_at = Some(now);
            break;
        }
    }
    let fired_at = fired_at.expect("not fired within two ticks");
    assert!(fired_at >= requested, "fired early at {fired_at:?}");
    is_elapsed(w.poll(d.as_mut()));
}

// ---- rule 3: at most two ticks late ---------------------------------------------------

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn at_most_two_ticks_late_across_levels_and_start_offsets() {
    let starts = [
        ns(0),
        ns(1),
        Duration::from_micros(500),
        TICK - ns(1),
        ms(63),
        ms(4095),
    ];
    let durations = [
        ns(1),
        TICK - ns(1),
        TICK,
        TICK + ns(1),
        ms(63),
        ms(64),
        ms(64) + ns(1),
        ms(4095),
        ms(4096),
        ms(4097),
        ms(262_144) + Duration::from_micros(1),
        ms(1 << 24) + ns(3),
        ms(1 << 30) - ns(3),
    ];
    for start in starts {
        for duration in durations {
            // Once jumping straight to the bound, once in tick-sized steps after the
            // requested time; both must fire by requested + 2 ticks.
            for stepped in [false, true] {
                let wheel: Wheel<ManualClock, Fixed<2>> =
                    Wheel::fixed(ManualClock::starting_at(start), TICK);
                let w = CountingWaker::new();
                let mut s = pin!(wheel.sleep(duration));
                assert!(w.poll(s.as_mut()).is_pending());
                let requested = start + duration;
                let bound = requested + 2 * TICK;
                wheel.advance_to_manual(requested - ns(1));
                let case = format!("start {start:?} duration {duration:?} stepped {stepped}");
                assert_eq!(w.wakes(), 0, "{case}: early");
                assert!(w.poll(s.as_mut()).is_pending(), "{case}: early");
                if stepped {
                    while wheel.clock().now() < bound && w.wakes() == 0 {
                        let next = (wheel.clock().now() + TICK).min(bound);
                        wheel.advance_to_manual(next);
                    }
                } else {
                    wheel.advance_to_manual(bound);
                }
                assert_eq!(w.wakes(), 1, "{case}: not fired by requested + 2 ticks");
                assert!(w.poll(s.as_mut()).is_ready(), "{case}");
                assert_eq!(wheel.occupied(), 0, "{case}");
            }
        }
    }
}

// ---- sub-tick firing ------------------------------------------------------------------

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

#[test]
fn a_deadline_alone_in_its_slot_fires_at_its_own_time_not_at_the_tick() {
    // Due at 2.3 ms, in the slot of tick 3: the driver plans its turn at 2.3 ms, and the
    // deadline fires then, not at 3 ms.
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(us(2300), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.turn(), us(2300));
    wheel.advance_to_manual(us(2300) - ns(1));
    assert_eq!(wheel.turn(), us(2300));
    assert_eq!(w.wakes(), 0, "early");
    assert!(w.poll(d.as_mut()).is_pending(), "early");
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 1, "not fired at its own time");
    assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), us(2300));
    assert_eq!(wheel.occupied(), 0);
    let stats = wheel.stats();
    assert_eq!((stats.fired, stats.lateness[0]), (1, 1), "{stats}");
}

#[test]
fn a_deadline_due_in_the_last_tick_before_a_level_boundary_fires_at_its_own_time() {
    // Ticks 63, 4095 and 127 end blocks of 64 (and of 4096): a deadline due during one of
    // them has its tick (64, 4096, 128) on the far side of the boundary. It must still be
    // on level 0 during the tick it comes due in, and fire at its own time, not wait for
    // its slot on level 1 or 2 to come down at the boundary (up to a tick late).
    for (started, duration) in [
        (us(0), us(63_500)),
        (us(0), us(4_095_300)),
        (us(100_000), us(27_700)),
        (us(100_400), us(27_001)),
    ] {
        let wheel = growable();
        wheel.advance_to_manual(started);
        let due = started + duration;
        let w = CountingWaker::new();
        let mut d = pin!(wheel.deadline(duration, pending::<()>()));
        assert!(w.poll(d.as_mut()).is_pending());
        wheel.advance_to_manual(due - ns(1));
        assert_eq!(w.wakes(), 0, "early ({duration:?} from {started:?})");
        assert_eq!(
            wheel.turn(),
            due,
            "not planned at its own time ({duration:?} from {started:?})"
        );
        wheel.advance(ns(1));
        assert_eq!(
            w.wakes(),
            1,
            "not fired at its own time ({duration:?} from {started:?})"
        );
        assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), duration);
        assert_eq!(wheel.stats().lateness[0], 1);
    }
}

#[test]
fn a_sparse_slot_fires_each_deadline_at_its_own_time() {
    let wheel = fixed::<8>();
    let wakers: Vec<CountingWaker> = (0..3).map(|_| CountingWaker::new()).collect();
    let mut sleeps: Vec<_> = [us(2600), us(2200), us(2900)]
        .into_iter()
        .map(|d| Box::pin(wheel.sleep(d)))
        .collect();
    for (w, s) in wakers.iter().zip(&mut sleeps) {
        assert!(w.poll(s.as_mut()).is_pending());
    }
    let woken = || wakers.iter().map(CountingWaker::wakes).collect::<Vec<_>>();
    assert_eq!(wheel.turn(), us(2200));
    wheel.advance_to_manual(us(2200));
    assert_eq!(wheel.turn(), us(2600));
    assert_eq!(woken(), [0, 1, 0]);
    wheel.advance_to_manual(us(2899));
    assert_eq!(wheel.turn(), us(2900));
    assert_eq!(woken(), [1, 1, 0]);
    wheel.advance_to_manual(us(2900));
    assert_eq!(woken(), [1, 1, 1]);
}

#[test]
fn a_cancelled_deadline_stops_steering_its_slots_turns() {
    // Two deadlines in the slot of tick 3; the earlier one is dropped after the driver took
    // it. The turn it would have needed comes once, finds nothing due, and plans the other.
    let wheel = fixed::<4>();
    let (w1, w2) = (CountingWaker::new(), CountingWaker::new());
    let mut early = Box::pin(wheel.sleep(us(2200)));
    let mut late = pin!(wheel.sleep(us(2700)));
    assert!(w1.poll(early.as_mut()).is_pending());
    assert!(w2.poll(late.as_mut()).is_pending());
    assert_eq!(wheel.turn(), us(2200));
    drop(early);
    wheel.advance_to_manual(us(2200));
    assert_eq!(wheel.turn(), us(2700));
    assert_eq!((w1.wakes(), w2.wakes()), (0, 0));
    wheel.advance_to_manual(us(2700));
    assert_eq!((w1.wakes(), w2.wakes()), (0, 1));
    assert!(w2.poll(late.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn an_arm_due_before_the_planned_turn_within_its_tick_wakes_the_driver() {
    // The driver plans its turn at 2.6 ms (tick 3). An arm into tick 3 due at 2.2 ms
    // wakes it, and fires at 2.2 ms; an arm due at 2.8 ms, after the planned turn, and an
    // arm far ahead wake no one.
    let wheel = fixed::<8>();
    let driver = CountingWaker::new();
    let (w1, w2, w3, w4) = (
        CountingWaker::new(),
        CountingWaker::new(),
        CountingWaker::new(),
        CountingWaker::new(),
    );
    let mut planned = pin!(wheel.sleep(us(2600)));
    assert!(w1.poll(planned.as_mut()).is_pending());
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), us(2600));
    // That turn took the new wheel out of idle, which wakes the drivers: a hand-written
    // loop's too, as it turns through `Wheel::turn`. It registers again.
    assert_eq!(driver.wakes(), 1);
    wheel.register_driver(&driver.waker);
    let mut after = pin!(wheel.sleep(us(2800)));
    let mut far = pin!(wheel.sleep(ms(50)));
    assert!(w2.poll(after.as_mut()).is_pending());
    assert!(w3.poll(far.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        1,
        "an arm after the planned turn woke the driver"
    );
    let mut before = pin!(wheel.sleep(us(2200)));
    assert!(w4.poll(before.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        2,
        "an arm before the planned turn did not wake the driver"
    );
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), us(2200));
    wheel.advance_to_manual(us(2200));
    assert_eq!((w1.wakes(), w2.wakes(), w4.wakes()), (0, 0, 1));
    assert_eq!(wheel.turn(), us(2600));
}

#[test]
fn an_arm_due_before_a_higher_slot_comes_down_wakes_the_driver_and_fires_at_its_own_time() {
    // At 10 ms the only deadline is due at 69.5 ms, in a slot of level 1 that comes down
    // at 64 ms: the driver plans that turn. An arm due at 63.5 ms, in the tick before,
    // must wake it (else it waits for the 64 ms turn), and fires at 63.5 ms; an arm due
    // exactly at 64 ms wakes no one (that turn is on time for it).
    let wheel = growable();
    wheel.advance_to_manual(ms(10));
    let driver = CountingWaker::new();
    let (w1, w2, w3) = (
        CountingWaker::new(),
        CountingWaker::new(),
        CountingWaker::new(),
    );
    let mut later = pin!(wheel.sleep(us(59_500)));
    assert!(w1.poll(later.as_mut()).is_pending());
    wheel.register_driver(&driver.waker);
    assert_eq!(wheel.turn(), ms(64));
    wheel.register_driver(&driver.waker);
    let wakes = driver.wakes();
    let mut at_boundary = pin!(wheel.sleep(ms(54)));
    assert!(w2.poll(at_boundary.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        wakes,
        "an arm due at the planned turn woke the driver"
    );
    let mut before = pin!(wheel.sleep(us(53_500)));
    assert!(w3.poll(before.as_mut()).is_pending());
    assert_eq!(
        driver.wakes(),
        wakes + 1,
        "an arm due before the higher slot's turn did not wake the driver"
    );
    assert_eq!(wheel.turn(), us(63_500));
    wheel.advance_to_manual(us(63_500) - ns(1));
    assert_eq!(w3.wakes(), 0, "early");
    wheel.advance(ns(1));
    assert_eq!((w1.wakes(), w2.wakes(), w3.wakes()), (0, 0, 1));
    wheel.advance_to_manual(ms(64));
    assert_eq!((w1.wakes(), w2.wakes(), w3.wakes()), (0, 1, 1));
}

#[test]
fn short_deadlines_released_at_once_do_not_wake_a_reclaiming_driver() {
    // A steady stream of cancels makes every turn reclaim and plan the next one a tick
    // ahead, with no slot of its own. Deadlines shorter than a tick, armed into that tick
    // and released at once, must not wake the driver each time (one turn per tick, not
    // one per arm).
    let wheel = growable();
    let w = CountingWaker::new();
    let driver = CountingWaker::new();
    let mut long: Vec<_> = (0..40).map(|_| Box::pin(wheel.sleep(ms(10_000)))).collect();
    for sleep in &mut long {
        assert!(w.poll(sleep.as_mut()).is_pending());
    }
    wheel.turn();
    let mut woken_by_arms = 0;
    for _ in 0..30 {
        // A cancel (which may wake the driver itself), then the turn that reclaims it.
        drop(long.pop());
        wheel.advance(ms(1));
        wheel.register_driver(&driver.waker);
        let before = driver.wakes();
        let mut short = Box::pin(wheel.sleep(us(400)));
        assert!(w.poll(short.as_mut()).is_pending());
        drop(short);
        woken_by_arms += driver.wakes() - before;
    }
    assert_eq!(woken_by_arms, 0, "short deadlines woke the driver");
    assert_eq!(w.wakes(), 0);
}

/// `count` sleeps due at 2.1 ms, 2.2 ms and on, 100 µs apart (all in the slot of tick 3
/// for a count up to 9), each polled once (pending) with the waker of `wakers` at its
/// position, cycled.
fn sleeps_in_the_slot_of_tick_3<'w>(
    wheel: &'w Wheel<ManualClock, Fixed<16>>,
    wakers: &[CountingWaker],
    count: u64,
) -> Vec<Pin<Box<Sleep<'w>>>> {
    let mut sleeps: Vec<_> = (0..count)
        .map(|k| Box::pin(wheel.sleep(us(2100 + 100 * k))))
        .collect();
    for (w, s) in wakers.iter().cycle().zip(&mut sleeps) {
        assert!(w.poll(s.as_mut()).is_pending());
    }
    sleeps
}

#[test]
fn a_dense_slot_fires_all_at_once_at_its_tick() {
    // More deadlines in one slot than a sparse slot holds: the driver does not turn for
    // each one, and all fire at the tick, none before its own time.
    let wheel = fixed::<16>();
    let wakers: Vec<CountingWaker> = (0..9).map(|_| CountingWaker::new()).collect();
    let _sleeps = sleeps_in_the_slot_of_tick_3(&wheel, &wakers, 9);
    let woken = || wakers.iter().map(CountingWaker::wakes).sum::<usize>();
    assert_eq!(wheel.turn(), ms(3));
    wheel.advance_to_manual(ms(3) - ns(1));
    assert_eq!(wheel.turn(), ms(3));
    assert_eq!(woken(), 0);
    wheel.advance_to_manual(ms(3));
    assert_eq!(woken(), 9);
}

trait AdvanceToManual {
    /// Moves the manual clock to `to` and turns the wheel.
    fn advance_to_manual(&self, to: Duration);
}

impl<S: Storage> AdvanceToManual for Wheel<ManualClock, S> {
    fn advance_to_manual(&self, to: Duration) {
        let now = self.clock().now();
        assert!(to >= now);
        self.advance(to - now);
    }
}

// ---- rule 4: when the clock starts ----------------------------------------------------

#[test]
fn a_relative_deadline_starts_at_its_first_poll_not_at_creation() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    let mut s = pin!(wheel.sleep(ms(10)));
    wheel.advance(ms(100));
    assert!(
        w.poll(d.as_mut()).is_pending(),
        "time before the first poll was not used up"
    );
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ms(10) - ns(1));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 2);
    assert!(w.poll(d.as_mut()).is_ready());
    assert!(w.poll(s.as_mut()).is_ready());
}

#[test]
fn deadline_at_is_absolute_from_creation() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline_at(ms(150), pending::<()>()));
    let mut s = pin!(wheel.sleep_until(ms(150)));
    wheel.advance(ms(100));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ms(50) - ns(1));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(w.wakes(), 2);
    // The error carries the time from the first poll to the instant.
    assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), ms(50));
    assert!(w.poll(s.as_mut()).is_ready());
}

/// A manual clock that counts its reads and has a configurable resolution.
#[derive(Default)]
struct CountingClock {
    nanos: AtomicU64,
    reads: AtomicUsize,
    resolution: Duration,
}

impl CountingClock {
    fn with_resolution(resolution: Duration) -> Self {
        Self {
            resolution,
            ..Self::default()
        }
    }

    fn reads(&self) -> usize {
        self.reads.load(SeqCst)
    }

    fn set(&self, to: Duration) {
        self.nanos.store(to.as_nanos() as u64, SeqCst);
    }
}

impl Clock for CountingClock {
    fn now(&self) -> Duration {
        self.reads.fetch_add(1, SeqCst);
        Duration::from_nanos(self.nanos.load(SeqCst))
    }

    fn resolution(&self) -> Duration {
        self.resolution
    }
}

#[test]
fn a_future_ready_at_first_poll_reads_no_clock_and_arms_nothing() {
    let wheel: Wheel<CountingClock, Fixed<4>> = Wheel::fixed(CountingClock::default(), TICK);
    let w = CountingWaker::new();
    let probe = ProbeState::default();
    probe.ready.store(true, SeqCst);

    let mut d = pin!(wheel.deadline(ms(10), ready(5)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(5)));
    let mut d = pin!(wheel.deadline_at(ms(10), probe.probe()));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(7)));
    assert!(probe.dropped());
    // Bad input does not change that: the ready future wins, with no clock read.
    let mut d = pin!(wheel.deadline(Duration::ZERO, ready(1)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(1)));
    let mut d = pin!(wheel.deadline(Duration::MAX, ready(2)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(2)));
    let mut d = pin!(wheel.deadline_at(Duration::ZERO, ready(3)));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(3)));

    assert_eq!(wheel.clock().reads(), 0, "the clock was read");
    assert_eq!(wheel.occupied(), 0, "an entry was armed");
    assert_eq!(w.wakes(), 0);
    assert_eq!(wheel.degraded_polls(), 0);
}

// ---- rule 5: decided once -------------------------------------------------------------

#[test]
fn after_the_fire_the_result_is_err_even_if_the_inner_future_became_ready() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(10));
    probe.ready.store(true, SeqCst);
    is_elapsed(w.poll(d.as_mut()));
    assert_eq!(
        probe.polls(),
        1,
        "the inner future was polled after the fire"
    );
    assert!(probe.dropped());
}

#[test]
fn a_result_produced_before_the_fire_is_observed_is_ok() {
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(9));
    probe.ready.store(true, SeqCst);
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(7)));
    assert!(probe.dropped());
    wheel.advance(ms(5));
    assert_eq!(w.wakes(), 0, "a completed deadline fires nothing");
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn a_result_produced_while_the_clock_passed_but_the_wheel_did_not_fire_is_ok() {
    // The clock moved past the deadline, but no one turned the wheel: the fire was not
    // decided, so the inner future's result wins, and the entry is released as cancelled.
    let wheel = fixed::<4>();
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.clock().advance(ms(20));
    probe.ready.store(true, SeqCst);
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok(7)));
    wheel.advance(Duration::ZERO);
    assert_eq!(
        w.wakes(),
        0,
        "a deadline decided as cancelled must not wake"
    );
    assert_eq!(wheel.occupied(), 0);
}

// ---- rule 6: bad input ----------------------------------------------------------------

#[test]
fn duration_zero_fires_at_the_first_pending_poll_without_an_entry() {
    let wheel = fixed::<4>();
    wheel.advance(ms(3));
    let probe = ProbeState::default();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::ZERO, probe.probe()).named("zero"));
    let elapsed = is_elapsed(w.poll(d.as_mut()));
    assert_eq!(elapsed, Elapsed::new(Duration::ZERO, Some("zero")));
    assert_eq!(probe.polls(), 1);
    assert!(probe.dropped());
    let mut s = pin!(wheel.sleep(Duration::ZERO));
    assert!(w.poll(s.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
    assert_eq!(w.wakes(), 0);
}

#[test]
fn duration_zero_loses_to_a_ready_inner_future() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::ZERO, ready("done")));
    assert_eq!(w.poll(d.as_mut()), Poll::Ready(Ok("done")));
}

#[test]
fn duration_max_never_fires_and_holds_no_entry() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(Duration::MAX, pending::<()>()));
    let mut s = pin!(wheel.sleep(Duration::MAX));
    let mut a = pin!(wheel.deadline_at(Duration::MAX, pending::<()>()));
    let mut u = pin!(wheel.sleep_until(Duration::MAX));
    wheel.advance(ms(5));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(w.poll(s.as_mut()).is_pending());
    assert!(w.poll(a.as_mut()).is_pending());
    assert!(w.poll(u.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 0);
    assert_eq!(wheel.degraded_polls(), 0);
    // The single entry is still free for a real deadline.
    {
        let other = CountingWaker::new();
        let mut x = pin!(wheel.sleep(ms(1)));
        assert!(other.poll(x.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 1);
    }
    assert_eq!(wheel.degraded_polls(), 0);
    // Far into the future (the manual clock saturates at u64::MAX ns): still pending.
    for _ in 0..3 {
        wheel.advance(Duration::from_secs(1 << 40));
        assert!(w.poll(d.as_mut()).is_pending());
        assert!(w.poll(s.as_mut()).is_pending());
        assert!(w.poll(a.as_mut()).is_pending());
        assert!(w.poll(u.as_mut()).is_pending());
    }
    assert_eq!(w.wakes(), 0);
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn beyond_the_wheels_range_is_parked_and_never_early() {
    // 2^40 ticks: beyond the top level (2^36 ticks), but a tick the wheel can count.
    let duration = ms(1 << 40);
    let wheel = growable();
    wheel.advance(Duration::from_micros(700));
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(duration, pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 1);
    let requested = wheel.clock().now() + duration;
    // Cross several rotations of the top level in uneven jumps.
    for jump in [
        ms(1 << 36),
        ms((1 << 37) + 12_345),
        ms(1 << 38),
        ms(3 << 36),
    ] {
        wheel.advance(jump);
        assert!(wheel.clock().now() < requested);
        assert_eq!(w.wakes(), 0);
        assert!(w.poll(d.as_mut()).is_pending());
    }
    wheel.advance_to_manual(requested - ns(1));
    assert_eq!(w.wakes(), 0);
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance_to_manual(requested + 2 * TICK);
    assert_eq!(w.wakes(), 1);
    assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), duration);
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn a_deadline_parked_beyond_the_range_does_not_delay_earlier_top_level_ones() {
    // `far` is beyond the top level (2^36 ticks) and parks in the top level's slot 0, the
    // current one; `near` (2^30 + 5 ticks, top level slot 1) is due long before it.
    let wheel = growable();
    let w = CountingWaker::new();
    let mut far = pin!(wheel.sleep(ms((1 << 36) + 5)));
    let near_at = ms((1 << 30) + 5);
    let mut near = pin!(wheel.sleep(near_at));
    assert!(w.poll(far.as_mut()).is_pending());
    assert!(w.poll(near.as_mut()).is_pending());
    wheel.advance(ms(1 << 30) - ns(1));
    assert!(w.poll(near.as_mut()).is_pending());
    wheel.advance_to_manual(near_at + 2 * TICK);
    assert_eq!(
        w.wakes(),
        1,
        "the 2^30-tick deadline did not fire within two ticks"
    );
    assert!(w.poll(near.as_mut()).is_ready());
    assert!(w.poll(far.as_mut()).is_pending());
}

#[test]
fn cancelling_a_deadline_does_not_unlink_another_one() {
    // `far` parks beyond the range in the top level's current slot; `e` sits on the top
    // level (slot 1) and `l` on level 0, both due at tick 2^30 + 10. Dropping `e` must
    // unlink `e` and nothing else: `l` must still fire.
    let wheel = growable();
    let w = CountingWaker::new();
    let mut far = pin!(wheel.sleep(ms((1 << 36) + 5)));
    assert!(w.poll(far.as_mut()).is_pending());
    let due = (1 << 30) + 10;
    let mut e = Box::pin(wheel.sleep(ms(due)));
    assert!(w.poll(e.as_mut()).is_pending());
    wheel.advance(ms((1 << 30) - 1));
    wheel.advance(ms(8));
    assert_eq!(wheel.clock().now(), ms(due - 3));
    let wl = CountingWaker::new();
    let mut l = pin!(wheel.sleep(ms(3)));
    assert!(wl.poll(l.as_mut()).is_pending());
    wheel.advance(Duration::ZERO);
    drop(e);
    wheel.advance(Duration::ZERO);
    wheel.advance(ms(3) + 2 * TICK);
    assert_eq!(wl.wakes(), 1, "`l` was lost");
    assert!(wl.poll(l.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 1);
}

#[test]
fn deadline_at_in_the_past_fires_at_the_first_pending_poll() {
    let wheel = fixed::<4>();
    wheel.advance(ms(100));
    let w = CountingWaker::new();
    let probe = ProbeState::default();
    let mut d = pin!(wheel.deadline_at(ms(50), probe.probe()));
    let elapsed = is_elapsed(w.poll(d.as_mut()));
    assert_eq!(
        elapsed.duration(),
        Duration::ZERO,
        "the instant had already passed"
    );
    assert_eq!(probe.polls(), 1);
    assert!(probe.dropped());
    // "Now" has passed too.
    let mut d = pin!(wheel.deadline_at(ms(100), pending::<()>()));
    is_elapsed(w.poll(d.as_mut()));
    let mut s = pin!(wheel.sleep_until(Duration::ZERO));
    assert!(w.poll(s.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn a_full_fixed_wheel_degrades_never_early_and_completes_after_its_time() {
    let wheel = fixed::<2>();
    let w = CountingWaker::new();
    let mut a = pin!(wheel.sleep(ms(30)));
    let mut b = pin!(wheel.sleep(ms(30)));
    assert!(w.poll(a.as_mut()).is_pending());
    assert!(w.poll(b.as_mut()).is_pending());
    assert_eq!(wheel.occupied(), 2);

    let probe = ProbeState::default();
    let wd = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), probe.probe()));
    assert!(wd.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 1);
    assert_eq!(wd.wakes(), 1, "a degraded poll asks to be polled again");
    assert_eq!(wheel.occupied(), 2);

    wheel.advance(ms(5));
    assert!(wd.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 2);
    assert_eq!(wd.wakes(), 2);

    wheel.advance(ms(5) - ns(1));
    assert!(
        wd.poll(d.as_mut()).is_pending(),
        "degraded deadline fired early"
    );
    assert_eq!(wheel.degraded_polls(), 3);
    assert_eq!(wd.wakes(), 3);

    wheel.advance(ns(1));
    let elapsed = is_elapsed(wd.poll(d.as_mut()));
    assert_eq!(elapsed.duration(), ms(10));
    assert_eq!(
        wheel.degraded_polls(),
        3,
        "the completing poll is not degraded"
    );
    assert!(probe.dropped());
    assert_eq!(probe.polls(), 4);
    assert_eq!(wheel.occupied(), 2);

    // Much later than its time, a degraded sleep completes on its first poll.
    let mut late = pin!(wheel.sleep(ms(1)));
    assert!(wd.poll(late.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 4);
    wheel.advance(ms(15));
    assert!(wd.poll(late.as_mut()).is_ready());
    assert_eq!(w.wakes(), 0, "the 30 ms sleeps are not due yet");
    wheel.advance(ms(10));
    assert_eq!(w.wakes(), 2);
    assert!(w.poll(a.as_mut()).is_ready());
    assert!(w.poll(b.as_mut()).is_ready());
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn a_degraded_deadline_arms_once_an_entry_is_free_and_then_fires_from_the_wheel() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut blocker = Box::pin(wheel.sleep(Duration::from_secs(30)));
    assert!(w.poll(blocker.as_mut()).is_pending());

    let wd = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    assert!(wd.poll(d.as_mut()).is_pending());
    assert_eq!(wheel.degraded_polls(), 1);

    drop(blocker);
    wheel.advance(ms(1)); // reclaims the cancelled entry
    assert_eq!(wheel.occupied(), 0);
    assert!(wd.poll(d.as_mut()).is_pending());
    assert_eq!(
        wheel.degraded_polls(),
        1,
        "the entry was free: this poll armed"
    );
    assert_eq!(wheel.occupied(), 1);
    let wakes = wd.wakes();

    wheel.advance(ms(9) - ns(1));
    assert_eq!(wd.wakes(), wakes, "woken early");
    assert!(wd.poll(d.as_mut()).is_pending());
    wheel.advance(ns(1));
    assert_eq!(
        wd.wakes(),
        wakes + 1,
        "the wheel must wake the re-armed deadline"
    );
    assert_eq!(is_elapsed(wd.poll(d.as_mut())).duration(), ms(10));
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn a_cancelled_30s_deadline_is_reclaimed_on_the_next_turn() {
    // wheel.rs: "A cancelled entry sits on the cancel inbox until the driver's next turn";
    // `advance(Duration::ZERO)` is such a turn.
    fn check<S: Storage>(wheel: &Wheel<ManualClock, S>) {
        let w = CountingWaker::new();
        let mut d = Box::pin(wheel.deadline(Duration::from_secs(30), pending::<()>()));
        assert!(w.poll(d.as_mut()).is_pending());
        assert_eq!(wheel.occupied(), 1);
        wheel.advance(ms(1));
        drop(d);
        wheel.advance(Duration::ZERO);
        assert_eq!(wheel.occupied(), 0, "not reclaimed by the next turn");

        // The same through `turn()`, and within one tick.
        let mut d = Box::pin(wheel.deadline(Duration::from_secs(30), pending::<()>()));
        assert!(w.poll(d.as_mut()).is_pending());
        drop(d);
        let _ = wheel.turn();
        assert_eq!(wheel.occupied(), 0, "not reclaimed by turn()");

        let mut d = Box::pin(wheel.sleep(Duration::from_secs(30)));
        assert!(w.poll(d.as_mut()).is_pending());
        drop(d);
        wheel.advance(TICK);
        assert_eq!(wheel.occupied(), 0, "not reclaimed within a tick");
        assert_eq!(w.wakes(), 0);
    }
    check(&fixed::<1>());
    check(&growable());
    // On a one-entry wheel the reclaimed entry is reused without degrading.
    let wheel = fixed::<1>();
    check(&wheel);
    assert_eq!(wheel.degraded_polls(), 0);
}

#[test]
fn after_a_reclaiming_turn_the_wheel_plans_a_turn_within_a_tick() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(Duration::from_secs(30)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(1));
    drop(d);
    wheel.advance(Duration::ZERO);
    assert!(
        wheel.next_turn() <= wheel.clock().now() + TICK,
        "{:?}",
        wheel.next_turn()
    );
}

#[test]
#[should_panic(expected = "`Deadline` polled after completion")]
fn polling_a_deadline_after_ok_panics() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(1), ready(())));
    assert!(w.poll(d.as_mut()).is_ready());
    let _ = w.poll(d.as_mut());
}

#[test]
#[should_panic(expected = "`Deadline` polled after completion")]
fn polling_a_deadline_after_err_panics() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(1), pending::<()>()));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.advance(ms(1));
    assert!(w.poll(d.as_mut()).is_ready());
    let _ = w.poll(d.as_mut());
}

#[test]
#[should_panic(expected = "`Sleep` polled after completion")]
fn polling_a_sleep_after_completion_panics() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut s = pin!(wheel.sleep(ms(1)));
    assert!(w.poll(s.as_mut()).is_pending());
    wheel.advance(ms(1));
    assert!(w.poll(s.as_mut()).is_ready());
    let _ = w.poll(s.as_mut());
}

#[test]
#[should_panic(expected = "`Sleep` polled after completion")]
fn polling_a_zero_sleep_after_completion_panics() {
    let wheel = fixed::<1>();
    let w = CountingWaker::new();
    let mut s = pin!(wheel.sleep(Duration::ZERO));
    assert!(w.poll(s.as_mut()).is_ready());
    let _ = w.poll(s.as_mut());
}

// ---- rule 7: the error ----------------------------------------------------------------

#[test]
fn elapsed_display_names_the_duration_and_the_name() {
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut named = pin!(wheel.deadline(ms(800), pending::<()>()).named("pricing"));
    let mut plain = pin!(wheel.deadline(Duration::from_secs(2), pending::<()>()));
    assert_eq!(named.name(), Some("pricing"));
    assert_eq!(plain.name(), None);
    assert!(w.poll(named.as_mut()).is_pending());
    assert!(w.poll(plain.as_mut()).is_pending());
    wheel.advance(Duration::from_secs(2));
    let named = is_elapsed(w.poll(named.as_mut()));
    let plain = is_elapsed(w.poll(plain.as_mut()));
    assert_eq!(named.to_string(), "deadline 'pricing' of 800ms elapsed");
    assert_eq!(named.name(), Some("pricing"));
    assert_eq!(named.duration(), ms(800));
    assert_eq!(plain.to_string(), "deadline of 2s elapsed");
    assert_eq!(plain.name(), None);

    // The conversion into `std::io::Error` comes with the `std` feature.
    #[cfg(feature = "std")]
    {
        let io: std::io::Error = named.into();
        assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(io.to_string(), "deadline 'pricing' of 800ms elapsed");
        let inner = io.get_ref().and_then(|e| e.downcast_ref::<Elapsed>());
        assert_eq!(inner, Some(&named));
    }

    fn is_error<E: core::error::Error + Send + Sync + 'static>(_: &E) {}
    is_error(&plain);
}

// ---- waker replacement ----------------------------------------------------------------

#[test]
fn the_latest_waker_is_woken_not_an_earlier_one() {
    let wheel = fixed::<4>();
    let a = CountingWaker::new();
    let b = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    let mut s = pin!(wheel.sleep(ms(10)));
    assert!(a.poll(d.as_mut()).is_pending());
    assert!(a.poll(s.as_mut()).is_pending());
    wheel.advance(ms(4));
    assert!(b.poll(d.as_mut()).is_pending());
    assert!(b.poll(s.as_mut()).is_pending());
    wheel.advance(ms(6));
    assert_eq!(a.wakes(), 0, "the replaced waker was woken");
    assert_eq!(b.wakes(), 2, "the current waker was not woken");
    assert!(b.poll(d.as_mut()).is_ready());
    assert!(b.poll(s.as_mut()).is_ready());
}

#[test]
fn switching_back_to_the_first_waker_wakes_only_it() {
    let wheel = growable();
    let a = CountingWaker::new();
    let b = CountingWaker::new();
    let mut s = pin!(wheel.sleep(ms(10)));
    assert!(a.poll(s.as_mut()).is_pending());
    assert!(b.poll(s.as_mut()).is_pending());
    assert!(a.poll(s.as_mut()).is_pending());
    wheel.advance(ms(10));
    assert_eq!((a.wakes(), b.wakes()), (1, 0));
}

// ---- clock resolution -----------------------------------------------------------------

#[test]
fn a_coarse_clock_adds_its_resolution_to_relative_deadlines() {
    let resolution = ms(2);
    let clock = CountingClock::with_resolution(resolution);
    let wheel: Wheel<CountingClock, Fixed<4>> = Wheel::fixed(clock, TICK);
    let reading = ms(5) + Duration::from_micros(250);
    wheel.clock().set(reading);
    let _ = wheel.turn();

    let w = CountingWaker::new();
    let ws = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()));
    let mut s = pin!(wheel.sleep(ms(10)));
    assert!(w.poll(d.as_mut()).is_pending());
    assert!(ws.poll(s.as_mut()).is_pending());
    let earliest = reading + ms(10) + resolution;

    // Just short of duration + resolution after the reading: pending.
    for at in [reading + ms(10), earliest - ns(1)] {
        wheel.clock().set(at);
        let _ = wheel.turn();
        assert_eq!(
            (w.wakes(), ws.wakes()),
            (0, 0),
            "fired at {at:?}, before {earliest:?}"
        );
        assert!(w.poll(d.as_mut()).is_pending());
        assert!(ws.poll(s.as_mut()).is_pending());
    }
    wheel.clock().set(earliest + 2 * TICK);
    let _ = wheel.turn();
    assert_eq!((w.wakes(), ws.wakes()), (1, 1));
    assert_eq!(is_elapsed(w.poll(d.as_mut())).duration(), ms(10));
    assert!(ws.poll(s.as_mut()).is_ready());
}

// ---- long uptimes ---------------------------------------------------------------------

/// `n` ticks of `tick`.
fn ticks(tick: Duration, n: u64) -> Duration {
    Duration::from_nanos(u64::try_from(tick.as_nanos() * u128::from(n)).unwrap())
}

/// Starts a wheel's clock at `start`, arms sleeps of every duration in `durations` (in
/// ticks), and steps the clock by `step` until all are due, checking after every step that
/// each is never early, and fired (woken, ready) at most two ticks late.
fn run_long_uptime(tick: Duration, start: Duration, durations: &[u64], step: Duration) {
    let wheel: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), tick);
    let mut sleeps: Vec<(Pin<Box<Sleep<'_>>>, CountingWaker, Duration, bool)> = durations
        .iter()
        .map(|&t| {
            let duration = ticks(tick, t);
            let w = CountingWaker::new();
            let mut s = Box::pin(wheel.sleep(duration));
            assert!(w.poll(s.as_mut()).is_pending());
            (s, w, start + duration, false)
        })
        .collect();
    assert_eq!(wheel.occupied(), durations.len());
    let last = sleeps.iter().map(|s| s.2).max().unwrap();
    while wheel.clock().now() < last + 2 * tick {
        let now = wheel.advance(step);
        for (s, w, requested, done) in &mut sleeps {
            if *done {
                continue;
            }
            let case = format!("start {start:?} requested {requested:?} now {now:?}");
            if now < *requested {
                assert_eq!(w.wakes(), 0, "{case}: woken early");
                assert!(w.poll(s.as_mut()).is_pending(), "{case}: early");
            } else if w.wakes() > 0 {
                assert!(w.poll(s.as_mut()).is_ready(), "{case}: woken but not ready");
                *done = true;
            } else {
                assert!(
                    now < *requested + 2 * tick,
                    "{case}: lost or more than 2 ticks late"
                );
            }
        }
    }
    assert!(sleeps.iter().all(|s| s.3), "a deadline was lost");
    assert_eq!(wheel.occupied(), 0);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn long_uptime_tick_counts_around_2_pow_32() {
    let durations = [1, 2, 3, 4, 5, 6, 7, 8, 10, 63, 64, 65, 100];
    for tick in [TICK, Duration::from_micros(1)] {
        for below in [1u64, 3, 5, 64] {
            let start = ticks(tick, (1 << 32) - below);
            run_long_uptime(tick, start, &durations, tick);
            run_long_uptime(tick, start + tick / 3, &durations, tick / 2);
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of turns; the same code paths run under Miri in the smaller tests"
)]
fn long_uptime_tick_counts_just_below_multiples_of_2_pow_36() {
    let durations = [1, 2, 5, 63, 64, 4095, 4096, 4097];
    for multiple in [1u64, 2, 5] {
        for below in [1u64, 2, 4096] {
            let start = ticks(TICK, (multiple << 36) - below);
            run_long_uptime(TICK, start, &durations, ms(1));
        }
    }
    // Larger jumps across the top level's rotation.
    let start = ticks(TICK, (3 << 36) - 7);
    run_long_uptime(
        TICK,
        start,
        &[10, 1 << 20, (1 << 30) + 5, (1 << 36) + 9],
        ms(1 << 19),
    );
}

#[test]
fn long_uptime_near_the_manual_clocks_saturation() {
    let end = Duration::from_nanos(u64::MAX);
    let start = end - ms(50);
    let wheel: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::starting_at(start), TICK);
    let w = CountingWaker::new();
    let wl = CountingWaker::new();
    let mut soon = pin!(wheel.sleep(ms(20)));
    let mut past_end = pin!(wheel.sleep(ms(100)));
    assert!(w.poll(soon.as_mut()).is_pending());
    assert!(wl.poll(past_end.as_mut()).is_pending());
    wheel.advance(ms(20) - ns(1));
    assert_eq!(w.wakes(), 0);
    wheel.advance(2 * TICK);
    assert_eq!(w.wakes(), 1);
    assert!(w.poll(soon.as_mut()).is_ready());
    // The clock saturates short of the second deadline: it never fires early.
    assert_eq!(wheel.advance(Duration::from_secs(10)), end);
    assert_eq!(wl.wakes(), 0);
    assert!(wl.poll(past_end.as_mut()).is_pending());
}

// ---- auto traits ----------------------------------------------------------------------

fn assert_send<T: Send>() {}
fn assert_sync<T: Sync>() {}
fn assert_unpin<T: Unpin>() {}

/// Resolves to the blanket impl only when `T` is not `Unpin`: with an `Unpin` type, both
/// impls apply and the call below is ambiguous, which fails to compile.
trait AmbiguousIfUnpin<A> {
    fn check() {}
}
impl<T: ?Sized> AmbiguousIfUnpin<()> for T {}
impl<T: ?Sized + Unpin> AmbiguousIfUnpin<u8> for T {}

trait AmbiguousIfSend<A> {
    fn check() {}
}
impl<T: ?Sized> AmbiguousIfSend<()> for T {}
impl<T: ?Sized + Send> AmbiguousIfSend<u8> for T {}

/// A future that is neither `Unpin` nor `Send`.
struct PinnedLocal {
    _pin: core::marker::PhantomPinned,
    _local: std::rc::Rc<()>,
}

impl Future for PinnedLocal {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

#[test]
fn auto_traits_follow_the_inner_future() {
    type Plain = core::future::Ready<u8>;
    assert_send::<Deadline<'static, Plain>>();
    assert_sync::<Deadline<'static, Plain>>();
    assert_unpin::<Deadline<'static, Plain>>();
    assert_send::<Deadline<'static, core::future::Pending<()>>>();
    assert_unpin::<Deadline<'static, core::future::Pending<()>>>();
    assert_send::<Sleep<'static>>();
    assert_sync::<Sleep<'static>>();
    assert_unpin::<Sleep<'static>>();
    assert_send::<Elapsed>();
    assert_sync::<Elapsed>();
    assert_send::<Wheel<ManualClock, Fixed<4>>>();
    assert_sync::<Wheel<ManualClock, Fixed<4>>>();
    assert_send::<Wheel<ManualClock, Growable>>();
    assert_sync::<Wheel<ManualClock, Growable>>();

    // And they are not claimed when the inner future lacks them.
    <Deadline<'static, PinnedLocal> as AmbiguousIfUnpin<_>>::check();
    <Deadline<'static, PinnedLocal> as AmbiguousIfSend<_>>::check();

    // A deadline borrowed from a wheel in a `static` is `'static`.
    static WHEEL: Wheel<ManualClock, Fixed<4>> = Wheel::fixed(ManualClock::new(), TICK);
    let d = WHEEL.deadline(ms(1), ready(1u8));
    fn is_static_send<T: Send + 'static>(_: &T) {}
    is_static_send(&d);
}

#[test]
fn a_reclaiming_turn_after_lingering_plans_a_turn_within_a_tick_not_idle() {
    // wheel.rs: "Idle: nothing armed and nothing just reclaimed". Past the lingering
    // (16 ticks after the turn that left idle), a turn that reclaims the last entry still
    // plans a turn one tick ahead; only the turn after that, with nothing to reclaim,
    // goes idle.
    let wheel = fixed::<4>();
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(Duration::from_secs(30)));
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.turn(); // out of idle: lingers until tick 16
    wheel.advance(ms(20));
    drop(d);
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0);
    assert_eq!(
        wheel.next_turn(),
        ms(21),
        "a reclaiming turn left the wheel idle"
    );
    wheel.advance(ms(1));
    assert_eq!(
        wheel.next_turn(),
        Duration::MAX,
        "idle once nothing was reclaimed"
    );
}

#[test]
fn a_slot_of_exactly_sparse_deadlines_fires_each_at_its_own_time() {
    // SPARSE is 8: a slot of eight is still sparse (nine is dense, see
    // `a_dense_slot_fires_all_at_once_at_its_tick`).
    let wheel = fixed::<16>();
    let wakers: Vec<CountingWaker> = (0..8).map(|_| CountingWaker::new()).collect();
    let _sleeps = sleeps_in_the_slot_of_tick_3(&wheel, &wakers, 8);
    let woken = || wakers.iter().map(CountingWaker::wakes).sum::<usize>();
    assert_eq!(wheel.turn(), us(2100), "eight in a slot planned as dense");
    wheel.advance_to_manual(us(2100));
    assert_eq!(woken(), 1);
    assert_eq!(wheel.turn(), us(2200));
}

#[test]
fn a_dense_slot_thinned_by_a_cancel_is_sparse_again() {
    // Nine in the slot of tick 3 (dense); one is dropped and reclaimed: eight are left,
    // and the slot's earliest fires at its own time again.
    let wheel = fixed::<16>();
    let w = CountingWaker::new();
    let mut sleeps = sleeps_in_the_slot_of_tick_3(&wheel, core::slice::from_ref(&w), 9);
    assert_eq!(wheel.turn(), ms(3), "nine in a slot are dense");
    drop(sleeps.pop()); // the 2.9 ms one
    wheel.turn(); // reclaims it (and plans a turn within a tick)
    wheel.advance_to_manual(ms(1));
    assert_eq!(
        wheel.turn(),
        us(2100),
        "the count did not come down with the cancel"
    );
    wheel.advance_to_manual(us(2100));
    assert_eq!(w.wakes(), 1);
}

#[test]
fn a_level0_slot_taken_whole_starts_afresh_when_its_index_comes_round() {
    // Nine deadlines fill the slot of tick 3 (index 2) and fire all at once at 3 ms. 64
    // ticks later the same index holds one deadline due at 66.3 ms: alone in its slot, it
    // fires at its own time (the slot's count and offset bound start over).
    let wheel = fixed::<16>();
    let w = CountingWaker::new();
    let sleeps = sleeps_in_the_slot_of_tick_3(&wheel, core::slice::from_ref(&w), 9);
    assert_eq!(wheel.turn(), ms(3), "nine in a slot are dense");
    wheel.advance_to_manual(ms(3));
    assert_eq!(w.wakes(), 9);
    drop(sleeps);
    wheel.advance_to_manual(ms(65));
    let mut alone = pin!(wheel.sleep(us(1300)));
    assert!(w.poll(alone.as_mut()).is_pending());
    assert_eq!(
        wheel.turn(),
        us(66_300),
        "stale count or offset of the slot's last use"
    );
    wheel.advance_to_manual(us(66_300));
    assert!(w.poll(alone.as_mut()).is_ready());
}

#[test]
fn a_coarse_clock_adds_its_resolution_to_deadlines_a_budget_bounds_too() {
    // A budget in force (here one far off) takes the general path of starting a deadline:
    // the clock's resolution is added there as well, and to a budget made on that clock.
    let resolution = ms(2);
    let clock = CountingClock::with_resolution(resolution);
    let wheel: Wheel<CountingClock, Fixed<4>> = Wheel::fixed(clock, TICK);
    let reading = ms(5) + Duration::from_micros(250);
    wheel.clock().set(reading);
    let _ = wheel.turn();
    let far =
        punctual_core::Budget::new(&wheel, Duration::from_secs(100), Duration::from_secs(100));
    let w = CountingWaker::new();
    let mut d = pin!(wheel.deadline(ms(10), pending::<()>()).within(far));
    assert!(w.poll(d.as_mut()).is_pending());
    let earliest = reading + ms(10) + resolution;
    wheel.clock().set(earliest - ns(1));
    let _ = wheel.turn();
    assert_eq!(w.wakes(), 0, "fired before {earliest:?}");
    assert!(w.poll(d.as_mut()).is_pending());
    wheel.clock().set(earliest + 2 * TICK);
    let _ = wheel.turn();
    let elapsed = is_elapsed(w.poll(d.as_mut()));
    assert_eq!((elapsed.duration(), elapsed.is_budget()), (ms(10), false));
    let budget = punctual_core::Budget::starting_now(&wheel, ms(10)).unwrap();
    assert_eq!(budget.at(), earliest + 2 * TICK + ms(10) + resolution);
}

#[test]
fn a_new_wheels_first_turn_with_nothing_armed_plans_no_turn() {
    // A new wheel is marked idle before any turn; its first turn was woken from no idle
    // (no arm woke it), so it does not linger: with nothing armed it plans nothing, and
    // a driver on a runtime's virtual clock holds no timer.
    let wheel = fixed::<4>();
    assert_eq!(wheel.turn(), Duration::MAX, "the first turn lingered");
    assert_eq!(wheel.next_turn(), Duration::MAX);
    // Woken from that idle by an arm (released at once, so the turn finds nothing), the
    // next turn lingers as before (wheel.rs, "Taking back").
    let w = CountingWaker::new();
    let mut d = Box::pin(wheel.sleep(ms(5)));
    assert!(w.poll(d.as_mut()).is_pending());
    drop(d);
    assert_eq!(
        wheel.turn(),
        ms(16),
        "woken from idle, the turn did not linger"
    );
    wheel.advance(ms(16));
    assert_eq!(wheel.next_turn(), Duration::MAX);
}

/// A waker that records its deadline's duration, in milliseconds, when woken.
struct RecordingWaker {
    millis: u64,
    woken: Arc<Mutex<Vec<u64>>>,
}

impl std::task::Wake for RecordingWaker {
    fn wake(self: Arc<Self>) {
        self.woken.lock().unwrap().push(self.millis);
    }
}

/// One turn that passes many deadlines (as a virtual clock's jump does) wakes their tasks
/// in deadline order: tick by tick, also across the slots of higher levels that come down
/// in it, whatever the order they were armed in.
#[test]
fn one_turn_that_passes_many_deadlines_wakes_them_in_deadline_order() {
    let wheel = growable();
    let woken = Arc::new(Mutex::new(Vec::new()));
    // 200 distinct durations from 1 to 400 ms, armed out of order.
    let durations: Vec<u64> = (0..200u64).map(|k| (k * 7919) % 400 + 1).collect();
    let mut deadlines: Vec<_> = durations
        .iter()
        .map(|&millis| {
            let waker = std::task::Waker::from(Arc::new(RecordingWaker {
                millis,
                woken: Arc::clone(&woken),
            }));
            let mut d = Box::pin(wheel.deadline(ms(millis), pending::<()>()));
            assert!(
                d.as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_pending()
            );
            d
        })
        .collect();
    wheel.turn();
    wheel.advance(ms(400));
    let woken = woken.lock().unwrap().clone();
    assert_eq!(woken.len(), 200, "every deadline fired");
    let inversions = woken.windows(2).filter(|w| w[0] > w[1]).count();
    assert_eq!(inversions, 0, "woken out of deadline order: {woken:?}");
    let cx = &mut Context::from_waker(std::task::Waker::noop());
    for d in &mut deadlines {
        assert!(matches!(d.as_mut().poll(cx), Poll::Ready(Err(_))));
    }
}
