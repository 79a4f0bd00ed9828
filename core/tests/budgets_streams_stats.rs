//! Budgets, stream deadlines and wheel statistics, on the manual clock.

use core::future::{Future, pending};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::cell::Cell;

use futures_core::Stream;
use punctual_core::{Budget, Budgeted, Elapsed, Fixed, Growable, ManualClock, Wheel};

const TICK: Duration = Duration::from_millis(1);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn wheel() -> Wheel<ManualClock, Growable> {
    Wheel::growable(ManualClock::new(), TICK)
}

fn poll<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

fn poll_next<S: Stream>(s: Pin<&mut S>) -> Poll<Option<S::Item>> {
    s.poll_next(&mut Context::from_waker(Waker::noop()))
}

/// Polls `f` and advances the clock one tick at a time until it completes; returns the
/// output and the clock reading then.
fn run<F: Future>(wheel: &Wheel<ManualClock, Growable>, f: F) -> (F::Output, Duration) {
    let mut f = pin!(f);
    for _ in 0..100_000 {
        if let Poll::Ready(out) = poll(f.as_mut()) {
            return (out, punctual_core::Clock::now(wheel.clock()));
        }
        wheel.advance(TICK);
    }
    panic!("did not complete within 100 s of virtual time");
}

#[test]
fn an_inner_deadline_is_cut_to_what_is_left_of_the_budget() {
    let wheel = wheel();
    let block = async {
        wheel.sleep(ms(150)).await;
        // 100 ms of its own, but only 50 ms are left of the budget.
        wheel
            .deadline(ms(100), pending::<()>())
            .named("inner")
            .await
    };
    let (out, at) = run(&wheel, wheel.budget(ms(200), block).named("edge"));
    // The inner deadline fired at the budget's edge (or the budget itself did, on the
    // same tick): either way, at 200 ms, and the error names the budget.
    assert!(at >= ms(200) && at <= ms(202), "ended at {at:?}");
    let err: Elapsed = out.and_then(|inner| inner).unwrap_err();
    assert!(err.is_budget());
    assert_eq!(err.name(), Some("edge"));
    assert_eq!(err.duration(), ms(200));
    assert_eq!(err.to_string(), "budget 'edge' of 200ms elapsed");
}

#[test]
fn an_inner_deadline_shorter_than_the_budget_keeps_its_own_name() {
    let wheel = wheel();
    let block = async {
        wheel
            .deadline(ms(30), pending::<()>())
            .named("pricing")
            .await
    };
    let (out, at) = run(&wheel, wheel.budget(ms(200), block));
    assert!(at >= ms(30) && at <= ms(32));
    let err = out.unwrap().unwrap_err();
    assert!(!err.is_budget());
    assert_eq!(err.name(), Some("pricing"));
    assert_eq!(err.to_string(), "deadline 'pricing' of 30ms elapsed");
}

#[test]
fn retries_stop_when_the_budget_runs_out() {
    let wheel = wheel();
    let attempts = Cell::new(0);
    let retries = async {
        loop {
            attempts.set(attempts.get() + 1);
            match wheel.deadline(ms(80), pending::<()>()).await {
                Ok(()) => return Ok(()),
                Err(e) if e.is_budget() => return Err(e),
                Err(_) => continue,
            }
        }
    };
    let (out, at) = run(&wheel, wheel.budget(ms(200), retries));
    // 80 + 80 + 40: the third attempt is cut to what is left, and no fourth starts.
    assert!(at >= ms(200) && at <= ms(202), "ended at {at:?}");
    assert!(out.and_then(|r| r).unwrap_err().is_budget());
    assert_eq!(attempts.get(), 3);
    // The retry loop was dropped: nothing is left armed.
    wheel.advance(ms(1));
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn nested_budgets_take_the_earlier_edge() {
    let wheel = wheel();
    let inner_budget = async {
        // The inner budget asks for 500 ms, but the outer one leaves only 100.
        wheel
            .budget(ms(500), async {
                wheel.deadline(ms(400), pending::<()>()).await
            })
            .named("inner")
            .await
    };
    let (out, at) = run(&wheel, wheel.budget(ms(100), inner_budget).named("outer"));
    assert!(at >= ms(100) && at <= ms(102), "ended at {at:?}");
    let err = match out {
        Err(e) | Ok(Err(e)) | Ok(Ok(Err(e))) => e,
        Ok(Ok(Ok(()))) => panic!("a pending future completed"),
    };
    assert!(err.is_budget());
    assert_eq!(err.name(), Some("outer"));
}

#[test]
fn a_budget_on_another_wheel_does_not_apply() {
    let wheel = wheel();
    let other = self::wheel();
    let mut d = pin!(other.budget(ms(10), wheel.deadline(ms(50), pending::<()>())));
    assert!(poll(d.as_mut()).is_pending());
    // The deadline on `wheel` is not cut by the budget on `other`.
    wheel.advance(ms(20));
    assert!(poll(d.as_mut()).is_pending());
    other.advance(ms(10));
    assert!(
        poll(d.as_mut()).is_ready(),
        "the budget itself still bounds the block"
    );
}

#[test]
#[should_panic(expected = "the budget was made on another wheel")]
fn an_explicit_budget_of_another_wheel_is_refused() {
    // `other`'s clock reads 1000 s; a budget of 10 ms taken there, read on `wheel`'s
    // clock (at 0), would look 1000 s away, and one the other way round would end the
    // block at once: refused at construction.
    let wheel = wheel();
    let other: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(Duration::from_secs(1000)), TICK);
    let budget = Budget::starting_now(&wheel, ms(10)).expect("a budget");
    let _block = Budgeted::with_budget(pending::<()>(), &other, budget);
}

#[test]
fn a_named_deadline_a_budget_ends_reports_the_budget() {
    let wheel = wheel();
    let budget = Budget::starting_now(&wheel, ms(10)).expect("a budget");
    let mut d = pin!(
        wheel
            .deadline(ms(100), pending::<()>())
            .named("pricing")
            .within(budget)
    );
    assert!(poll(d.as_mut()).is_pending());
    wheel.advance(ms(10));
    let Poll::Ready(Err(err)) = poll(d.as_mut()) else {
        panic!("the budget ends the deadline at 10 ms");
    };
    assert!(err.is_budget());
    assert_eq!(err.duration(), ms(10));
    assert_eq!(
        err.name(),
        None,
        "the budget's name (it has none), not the deadline's"
    );
}

#[test]
fn a_budget_past_the_clock_s_last_reading_is_made_and_never_ends() {
    let wheel = wheel();
    let forever = Duration::from_secs(1000 * 365 * 86_400);
    assert!(Budget::starting_now(&wheel, Duration::MAX).is_none());
    let budget = Budget::starting_now(&wheel, forever).expect("a budget past the clock");
    let mut block = pin!(Budgeted::with_budget(pending::<()>(), &wheel, budget));
    assert!(poll(block.as_mut()).is_pending());
    wheel.advance(Duration::from_secs(365 * 86_400));
    assert!(poll(block.as_mut()).is_pending());
}

#[test]
fn an_explicit_budget_bounds_deadlines_without_std_magic() {
    let wheel: Wheel<ManualClock, Fixed<8>> = Wheel::fixed(ManualClock::new(), TICK);
    let budget = Budget::starting_now(&wheel, ms(40)).unwrap().named("edge");
    let mut d = pin!(wheel.deadline(ms(100), pending::<()>()).within(budget));
    assert!(poll(d.as_mut()).is_pending());
    wheel.advance(ms(39));
    assert!(poll(d.as_mut()).is_pending(), "never early");
    wheel.advance(ms(1));
    let err = match poll(d.as_mut()) {
        Poll::Ready(Err(e)) => e,
        other => panic!("expected the budget to fire, got {other:?}"),
    };
    assert!(err.is_budget());
    assert_eq!(err.name(), Some("edge"));
    // And the block as a whole, the explicit way.
    let mut block = pin!(Budgeted::with_budget(pending::<()>(), &wheel, budget));
    assert!(
        poll(block.as_mut()).is_ready(),
        "the budget has already run out"
    );
}

/// A stream that yields an item every `every` of the manual clock, forever.
struct Ticker<'a> {
    wheel: &'a Wheel<ManualClock, Growable>,
    every: Duration,
    next: Duration,
    count: u32,
}

impl Stream for Ticker<'_> {
    type Item = u32;
    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<u32>> {
        if punctual_core::Clock::now(self.wheel.clock()) >= self.next {
            let every = self.every;
            self.next += every;
            self.count += 1;
            Poll::Ready(Some(self.count))
        } else {
            Poll::Pending
        }
    }
}

#[test]
fn a_whole_stream_deadline_ends_with_one_error() {
    let wheel = wheel();
    let ticker = Ticker {
        wheel: &wheel,
        every: ms(10),
        next: ms(10),
        count: 0,
    };
    let mut s = pin!(wheel.stream_deadline(ms(35), ticker).named("feed"));
    let mut items = Vec::new();
    for _ in 0..100 {
        match poll_next(s.as_mut()) {
            Poll::Ready(Some(item)) => items.push(item),
            Poll::Ready(None) => break,
            Poll::Pending => {
                wheel.advance(TICK);
            }
        }
    }
    assert_eq!(
        items.len(),
        4,
        "three items in 35 ms, then the error: {items:?}"
    );
    assert_eq!(items[..3], [Ok(1), Ok(2), Ok(3)]);
    let err = items[3].unwrap_err();
    assert_eq!(err.name(), Some("feed"));
    assert!(punctual_core::Clock::now(wheel.clock()) >= ms(35));
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(None), "ended for good");
}

/// A stream of the given items, all ready at once.
struct Ready(std::vec::IntoIter<u32>);

impl Stream for Ready {
    type Item = u32;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<u32>> {
        Poll::Ready(self.0.next())
    }
}

#[test]
fn a_zero_whole_stream_deadline_ends_before_the_stream_is_polled() {
    let wheel = wheel();
    let mut s = pin!(wheel.stream_deadline(Duration::ZERO, Ready(vec![1, 2, 3].into_iter())));
    let Poll::Ready(Some(Err(err))) = poll_next(s.as_mut()) else {
        panic!("a zero deadline yields its error at the first poll");
    };
    assert_eq!(err.duration(), Duration::ZERO);
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(None));
    // A deadline of 1 ns lets the ready items through (the clock has not moved).
    let mut s = pin!(wheel.stream_deadline(Duration::from_nanos(1), Ready(vec![1, 2].into_iter())));
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(Some(Ok(1))));
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(Some(Ok(2))));
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(None));
}

// The ambient budget that a deadline takes at its first poll is a thread-local: `std` only
// (without it, a budget bounds its block and reaches inner deadlines through `within`).
#[cfg(feature = "std")]
#[test]
fn a_deadline_first_polled_inside_a_budget_keeps_it_after_the_block() {
    // As documented (module `budget`, "How the budget reaches inner deadlines"): a
    // deadline takes the budget at its first pending poll, wherever it was made, and keeps
    // it. One made before the block but first polled inside it (a `select!` in the block)
    // ends with the budget, even after the block is done; one polled once before the
    // block keeps its own limit.
    let wheel = wheel();
    let mut taken = Box::pin(wheel.deadline(ms(100), pending::<()>()));
    let mut kept = Box::pin(wheel.deadline(ms(100), pending::<()>()));
    assert!(poll(kept.as_mut()).is_pending());
    {
        let block = core::future::poll_fn(|cx| {
            assert!(taken.as_mut().poll(cx).is_pending());
            assert!(kept.as_mut().poll(cx).is_pending());
            Poll::Ready(())
        });
        let mut budgeted = pin!(wheel.budget(ms(10), block).named("checkout"));
        assert!(matches!(poll(budgeted.as_mut()), Poll::Ready(Ok(()))));
    }
    wheel.advance(ms(10));
    let err = match poll(taken.as_mut()) {
        Poll::Ready(Err(err)) => err,
        other => panic!("the deadline did not take the budget: {other:?}"),
    };
    assert!(err.is_budget());
    assert_eq!(err.duration(), ms(10));
    // A deadline keeps no name of its own for the budget: the budget's name is read from
    // the budget in force where the deadline fires, and out here there is none.
    assert_eq!(err.name(), None);
    assert!(
        poll(kept.as_mut()).is_pending(),
        "the budget reached a deadline started before it"
    );
    wheel.advance(ms(90));
    assert!(matches!(poll(kept.as_mut()), Poll::Ready(Err(e)) if !e.is_budget()));
}

/// A stream that always has an item ready.
struct Endless;

impl Stream for Endless {
    type Item = u32;
    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<u32>> {
        Poll::Ready(Some(7))
    }
}

#[test]
fn a_whole_stream_deadline_on_a_full_wheel_ends_even_if_items_never_stop() {
    // The wheel's only entry is taken, so the stream's deadline runs degraded (checking
    // the clock). A stream that is never pending must still end once its time has come:
    // the fire is checked before each item, as it is for an armed deadline.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    let mut taken = pin!(wheel.sleep(ms(500)));
    assert!(poll(taken.as_mut()).is_pending());
    let mut s = pin!(wheel.stream_deadline(ms(5), Endless));
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(Some(Ok(7))));
    wheel.advance(ms(5) - Duration::from_nanos(1));
    assert_eq!(
        poll_next(s.as_mut()),
        Poll::Ready(Some(Ok(7))),
        "ended early"
    );
    wheel.advance(Duration::from_nanos(1));
    let ended = poll_next(s.as_mut());
    assert!(
        matches!(ended, Poll::Ready(Some(Err(_)))),
        "5 ms past its start, the stream went on: {ended:?}"
    );
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(None));
}

#[test]
fn an_idle_timeout_rearms_after_each_item_without_growing() {
    let wheel = wheel();
    let ticker = Ticker {
        wheel: &wheel,
        every: ms(10),
        next: ms(10),
        count: 0,
    };
    let mut s = pin!(wheel.idle_timeout(ms(15), ticker));
    let mut items = 0;
    while items < 200 {
        match poll_next(s.as_mut()) {
            Poll::Ready(Some(Ok(_))) => items += 1,
            other => {
                assert!(
                    other.is_pending(),
                    "gaps of 10 ms under a 15 ms idle timeout: {other:?}"
                );
                wheel.advance(TICK);
            }
        }
    }
    // Nothing allocated per item: the gaps take turns on two entries (the one released
    // after an item is reclaimed at the driver's next turn, so the next gap takes the
    // other), however many items pass. A growable slab hands out entries a block at a
    // time (16 of 40 bytes on 64-bit targets, whole pairs of cache lines) to this thread's
    // shard.
    assert!(wheel.stats().high_water <= 16, "{}", wheel.stats());
    assert!(wheel.stats().armed >= 199);
}

#[test]
fn an_idle_timeout_fires_on_a_stalled_stream() {
    let wheel = wheel();
    let ticker = Ticker {
        wheel: &wheel,
        every: ms(50),
        next: ms(5),
        count: 0,
    };
    let mut s = pin!(wheel.idle_timeout(ms(20), ticker).named("idle"));
    let mut seen = Vec::new();
    for _ in 0..200 {
        match poll_next(s.as_mut()) {
            Poll::Ready(Some(item)) => seen.push((item, punctual_core::Clock::now(wheel.clock()))),
            Poll::Ready(None) => break,
            Poll::Pending => {
                wheel.advance(TICK);
            }
        }
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].0, Ok(1));
    assert_eq!(seen[1].0.unwrap_err().name(), Some("idle"));
    // Idle from the first item (5 ms): fired at 25 ms, never before.
    assert!(
        seen[1].1 >= ms(25) && seen[1].1 <= ms(27),
        "{:?}",
        seen[1].1
    );
}

#[test]
fn stats_count_what_the_wheel_did() {
    let wheel = wheel();
    let mut fires: Vec<_> = (1..=3).map(|i| Box::pin(wheel.sleep(ms(i * 10)))).collect();
    let mut cancelled = Box::pin(wheel.sleep(ms(1000)));
    for f in &mut fires {
        assert!(poll(f.as_mut()).is_pending());
    }
    assert!(poll(cancelled.as_mut()).is_pending());
    assert_eq!(wheel.stats().occupied, 4);
    // A turn takes the four in; the cancel of one of them then goes through the driver.
    wheel.advance(Duration::ZERO);
    drop(cancelled);
    // Armed and released before any turn: taken back off the arm inbox, counted nowhere.
    let mut taken_back = Box::pin(wheel.sleep(ms(1000)));
    assert!(poll(taken_back.as_mut()).is_pending());
    drop(taken_back);
    // One ready-at-first-poll deadline: arms nothing.
    assert_eq!(
        poll(pin!(wheel.deadline(ms(5), async { 1 }))),
        Poll::Ready(Ok(1))
    );
    for _ in 0..3 {
        wheel.advance(ms(10)); // exactly to each edge: zero ticks late
    }
    for f in &mut fires {
        assert!(poll(f.as_mut()).is_ready());
    }
    let stats = wheel.stats();
    assert_eq!(stats.armed, 4);
    assert_eq!(stats.fired, 3);
    assert_eq!(stats.cancelled, 1);
    assert_eq!(stats.lateness, [3, 0, 0, 0], "each fired on its own tick");
    assert_eq!(stats.occupied, 0);
    // Five entries were in use at once: the taken-back deadline needed one while the
    // cancelled one still waited on the cancel inbox for the driver. With `std`, a
    // growable slab hands them out a block at a time (16 of 40 bytes on 64-bit targets) to
    // this thread's shard; without it there is one shard, and entries go one at a time.
    let block = if !cfg!(feature = "std") {
        5
    } else if cfg!(target_pointer_width = "64") {
        16
    } else {
        8
    };
    assert_eq!(stats.high_water, block);
    assert_eq!(stats.degraded_polls, 0);
    #[cfg(feature = "count-ready")]
    assert_eq!(stats.ready_without_arming, Some(1));
    #[cfg(not(feature = "count-ready"))]
    assert_eq!(stats.ready_without_arming, None);
    assert!(stats.to_string().contains("fired 3"));
}

#[test]
fn lateness_is_counted_in_ticks() {
    let wheel = wheel();
    let mut late = pin!(wheel.sleep(ms(10)));
    assert!(poll(late.as_mut()).is_pending());
    wheel.advance(ms(15)); // one turn, five ticks after the edge
    assert!(poll(late.as_mut()).is_ready());
    assert_eq!(wheel.stats().lateness, [0, 0, 0, 1]);
}

/// Drops `deadline`, whose entry a turn took in, and checks that the cancel woke the
/// wheel's driver (registered with `register_driver`) and that the next turn reclaims the
/// entry.
fn assert_cancel_wakes_the_driver<S: punctual_core::Storage, D>(
    wheel: &Wheel<ManualClock, S>,
    deadline: D,
) {
    struct Count(std::sync::atomic::AtomicUsize);
    impl std::task::Wake for Count {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let count = std::sync::Arc::new(Count(std::sync::atomic::AtomicUsize::new(0)));
    wheel.register_driver(&Waker::from(count.clone()));
    drop(deadline);
    assert_eq!(
        count.0.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the driver was not woken to reclaim the entry"
    );
    wheel.turn();
    assert_eq!(wheel.occupied(), 0);
}

#[test]
fn a_cancel_of_a_deadline_a_budget_cut_short_wakes_the_driver_to_reclaim_it() {
    // A budget's duration need not be the time to its instant (`Budget::new`): a deadline
    // it cut short cannot tell its start from its entry, so its cancel wakes the driver
    // rather than trust the plan.
    let wheel = wheel();
    let budget = Budget::new(&wheel, ms(10_000), Duration::ZERO);
    let mut d = Box::pin(wheel.deadline(ms(30_000), pending::<()>()).within(budget));
    assert!(poll(d.as_mut()).is_pending());
    wheel.turn(); // takes the entry in: the cancel goes through the cancel inbox
    assert_cancel_wakes_the_driver(&wheel, d);
}

#[test]
fn a_cancel_of_a_deadline_armed_after_running_degraded_wakes_the_driver_to_reclaim_it() {
    // Armed late, its entry is due at its target, not at its start plus its span: its
    // start cannot be told from the entry (here it lies 2.4e9 ticks back, more than the
    // plan's 32-bit ticks reach), so its cancel wakes the driver.
    let wheel: Wheel<ManualClock, Fixed<1>> =
        Wheel::fixed(ManualClock::new(), Duration::from_micros(1));
    let mut taken = Box::pin(wheel.sleep(ms(1)));
    assert!(poll(taken.as_mut()).is_pending());
    let mut d = Box::pin(wheel.deadline(Duration::from_secs(3600), pending::<()>()));
    assert!(poll(d.as_mut()).is_pending(), "degraded");
    drop(taken);
    wheel.advance(Duration::from_secs(2400));
    assert!(poll(d.as_mut()).is_pending(), "armed now");
    assert_eq!(wheel.occupied(), 1);
    wheel.turn();
    assert_cancel_wakes_the_driver(&wheel, d);
}

#[test]
fn a_never_ending_deadline_within_a_budget_ends_with_the_budget() {
    // `Duration::MAX` alone never fires; within a budget it is bounded like any other.
    let wheel = wheel();
    let budget = Budget::new(&wheel, ms(10), ms(10)).named("request");
    let mut d = pin!(
        wheel
            .deadline(Duration::MAX, pending::<()>())
            .within(budget)
    );
    assert!(poll(d.as_mut()).is_pending());
    wheel.advance(ms(10) - Duration::from_nanos(1));
    assert!(poll(d.as_mut()).is_pending(), "early");
    wheel.advance(Duration::from_nanos(1));
    match poll(d.as_mut()) {
        Poll::Ready(Err(e)) => {
            assert!(e.is_budget());
            assert_eq!((e.duration(), e.name()), (ms(10), Some("request")));
        }
        other => panic!("the budget did not end a never-ending deadline: {other:?}"),
    }
    // The same for an instant beyond any reading.
    let budget = Budget::new(&wheel, ms(20), ms(10));
    let (out, at) = run(
        &wheel,
        wheel
            .deadline_at(Duration::MAX, pending::<()>())
            .within(budget),
    );
    assert!(out.unwrap_err().is_budget());
    assert_eq!(at, ms(20));
}

#[test]
fn a_budget_ending_at_the_deadline_s_own_instant_leaves_it_its_own_name() {
    // Only a budget that ends a deadline *before* its own time makes the `Elapsed` the
    // budget's; at the same instant the deadline's own duration and name stand.
    let wheel = wheel();
    let budget = Budget::new(&wheel, ms(10), ms(7)).named("budget");
    let d = wheel
        .deadline(ms(10), pending::<()>())
        .named("own")
        .within(budget);
    let (out, at) = run(&wheel, d);
    let e = out.unwrap_err();
    assert_eq!(at, ms(10));
    assert!(!e.is_budget());
    assert_eq!((e.duration(), e.name()), (ms(10), Some("own")));
}

#[test]
fn a_budget_ending_with_the_enclosing_one_stays_the_one_in_force() {
    // Of two budgets ending at the same instant, the inner one is not replaced by the
    // enclosing one (only an earlier ambient budget is): its own name stays in force.
    let wheel = wheel();
    let seen = Cell::new(None);
    let outer = Budgeted::new(
        async {
            let mut inner = pin!(Budgeted::new(pending::<()>(), &wheel, ms(10)).named("inner"));
            assert!(poll(inner.as_mut()).is_pending());
            seen.set(inner.budget().map(|b| b.name()));
            pending::<()>().await
        },
        &wheel,
        ms(10),
    )
    .named("outer");
    let mut outer = pin!(outer);
    assert!(poll(outer.as_mut()).is_pending());
    assert_eq!(seen.get(), Some(Some("inner")));
}
