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
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::future::{Pending, pending};
use core::task::{Context, Waker};
use core::time::Duration;

use punctual_core::{Deadline, Growable, ManualClock, Wheel};
use support::{TICK, poll_pending};

const THIRTY_SECONDS: Duration = Duration::from_secs(30);

fn total() -> usize {
    std::env::var("PUNCTUAL_MEMORY_DEADLINES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
}

#[test]
fn million_cancels_keep_occupancy_within_a_batch() {
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
fn reclaiming_turns_keep_occupancy_at_live_count() {
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
