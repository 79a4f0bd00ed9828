//! Memory (docs/design.md, "The wheel"): the number of occupied entries tracks the *live*
//! deadlines, not the ones ever armed, nor how far away their time is.
//!
//! A million deadlines of 30 s each, armed and cancelled a moment later (in batches, the
//! wheel turning between them, as a driver would), leave the wheel's occupancy, its
//! high-water mark and its allocated capacity bounded by a small constant (the batch),
//! never by the million. The manual clock only moves a millisecond per batch, so none of
//! them comes anywhere near its 30 s.
//!
//! Set `PUNCTUAL_MEMORY_DEADLINES` to change the million.

use core::future::{Pending, pending};
use core::pin::Pin;
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use core::task::{Context, Waker};
use core::time::Duration;
use std::sync::Arc;
use std::task::Wake;

use punctual_core::{Clock, Deadline, Growable, ManualClock, Wheel};

const TICK: Duration = Duration::from_millis(1);
const THIRTY_SECONDS: Duration = Duration::from_secs(30);

fn total() -> usize {
    std::env::var("PUNCTUAL_MEMORY_DEADLINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
}

fn poll_pending(deadline: &mut Deadline<'_, Pending<()>>, cx: &mut Context<'_>) {
    assert!(Pin::new(deadline).poll(cx).is_pending());
}

#[test]
fn a_million_cancelled_30s_deadlines_leave_occupancy_bounded_by_the_batch() {
    const BATCH: usize = 1000;
    let total = total();
    let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), TICK);
    let mut cx = Context::from_waker(Waker::noop());
    let mut batch: Vec<Deadline<'_, Pending<()>>> = Vec::with_capacity(BATCH);
    let mut armed = 0;
    while armed < total {
        let n = BATCH.min(total - armed);
        batch.extend((0..n).map(|_| wheel.deadline(THIRTY_SECONDS, pending())));
        for deadline in &mut batch {
            poll_pending(deadline, &mut cx);
        }
        armed += n;
        // A moment later (the driver turns meanwhile), they are all cancelled.
        wheel.advance(TICK);
        assert_eq!(wheel.occupied(), n, "each pending deadline holds one entry");
        batch.clear();
        // The next turn reclaims them all.
        wheel.advance(Duration::ZERO);
        let occupied = wheel.occupied();
        assert_eq!(occupied, 0, "after {armed} deadlines: {}", wheel.stats());
    }
    let stats = wheel.stats();
    assert_eq!(stats.armed, total, "{stats}");
    assert_eq!(stats.cancelled, total, "{stats}");
    assert_eq!(stats.fired, 0, "{stats}");
    assert_eq!(stats.occupied, 0, "{stats}");
    // One batch, rounded up to the block of 16 untouched entries a shard takes at once.
    assert!(
        stats.high_water <= BATCH.next_multiple_of(16),
        "the slab grew past one batch: {stats}"
    );
    // Growable storage doubles; one batch fits in less than twice the batch.
    assert!(
        wheel.capacity() < 2 * BATCH + 64,
        "capacity {}",
        wheel.capacity()
    );
}

#[test]
fn cancels_reclaimed_by_every_turn_keep_occupancy_at_the_live_count() {
    // A sliding window: every tick, a few hundred new 30 s deadlines start and the oldest
    // ones are cancelled, so about `LIVE` are alive at any moment. Occupancy after each
    // turn equals the live count exactly, and the slab never grows past the live count
    // plus one tick's cancels.
    const LIVE: usize = 2000;
    const PER_TICK: usize = 250;
    let ticks = (total() / PER_TICK).min(2000);
    let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), TICK);
    let mut cx = Context::from_waker(Waker::noop());
    let mut live: std::collections::VecDeque<Deadline<'_, Pending<()>>> =
        std::collections::VecDeque::new();
    for _ in 0..ticks {
        for _ in 0..PER_TICK {
            let mut deadline = wheel.deadline(THIRTY_SECONDS, pending());
            poll_pending(&mut deadline, &mut cx);
            live.push_back(deadline);
        }
        while live.len() > LIVE {
            live.pop_front();
        }
        wheel.advance(TICK);
        assert_eq!(wheel.occupied(), live.len(), "{}", wheel.stats());
    }
    let stats = wheel.stats();
    assert!(
        stats.high_water <= LIVE + 2 * PER_TICK,
        "the slab grew past the live deadlines: {stats}"
    );
    drop(live);
    wheel.advance(Duration::ZERO);
    assert_eq!(wheel.occupied(), 0);
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Counter(AtomicUsize);

impl Wake for Counter {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn a_cancel_wakes_a_driver_that_sleeps_for_longer_than_a_tick_once_per_tick() {
    // Reclaiming "within about one tick" needs the driver to turn: a cancel that finds the
    // inbox empty while the driver plans to sleep longer than a tick wakes it (wheel.rs,
    // "Reclaiming cancelled entries"); further cancels before that turn wake no one.
    let wheel: Wheel<ManualClock, Growable> = Wheel::growable(ManualClock::new(), TICK);
    let counter = Arc::new(Counter::default());
    let driver = Waker::from(counter.clone());
    let wakes = || counter.0.load(SeqCst);
    let mut cx = Context::from_waker(Waker::noop());

    let mut deadlines: Vec<_> = (0..100)
        .map(|_| wheel.deadline(THIRTY_SECONDS, pending::<()>()))
        .collect();
    for deadline in &mut deadlines {
        poll_pending(deadline, &mut cx);
    }
    wheel.register_driver(&driver);
    let _ = wheel.turn();
    wheel.register_driver(&driver);
    let before = wakes();
    assert!(
        wheel.next_turn() > wheel.clock().now() + TICK,
        "plans to sleep long"
    );

    deadlines.truncate(50); // 50 cancels
    assert_eq!(wakes(), before + 1, "the cancels woke the driver once");
    assert_eq!(wheel.occupied(), 100);
    wheel.register_driver(&driver);
    let _ = wheel.turn();
    assert_eq!(wheel.occupied(), 50);
    // Right after a reclaiming turn the driver plans to look again within a tick, so the
    // next cancels need not wake it; that turn reclaims them.
    assert!(wheel.next_turn() <= wheel.clock().now() + TICK);
    let before = wakes();
    deadlines.truncate(10);
    assert_eq!(wakes(), before, "a cancel woke a driver due within a tick");
    wheel.advance(TICK);
    assert_eq!(wheel.occupied(), 10);
}
