//! Stream deadlines, on the manual clock: a whole-stream deadline ends the stream with one
//! error (at once when zero, and also on a full wheel whose stream never stops yielding);
//! an idle timeout re-arms after each item without growing, and fires on a stalled
//! stream.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use futures_core::Stream;
use punctual_core::{Fixed, Growable, ManualClock, Wheel};
use support::{TICK, growable, ms, poll};

fn poll_next<S: Stream>(s: Pin<&mut S>) -> Poll<Option<S::Item>> {
    s.poll_next(&mut Context::from_waker(Waker::noop()))
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
    let wheel = growable();
    let ticker = Ticker {
        wheel: &wheel,
        every: ms(10),
        next: ms(10),
        count: 0,
    };
    let mut s = pin!(wheel.total_deadline(ms(35), ticker).named("feed"));
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
fn zero_stream_deadline_ends_before_polling_stream() {
    let wheel = growable();
    let mut s = pin!(wheel.total_deadline(Duration::ZERO, Ready(vec![1, 2, 3].into_iter())));
    let Poll::Ready(Some(Err(err))) = poll_next(s.as_mut()) else {
        panic!("a zero deadline yields its error at the first poll");
    };
    assert_eq!(err.duration(), Duration::ZERO);
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(None));
    // A deadline of 1 ns lets the ready items through (the clock has not moved).
    let mut s = pin!(wheel.total_deadline(Duration::from_nanos(1), Ready(vec![1, 2].into_iter())));
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(Some(Ok(1))));
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(Some(Ok(2))));
    assert_eq!(poll_next(s.as_mut()), Poll::Ready(None));
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
fn stream_deadline_on_full_wheel_ends_despite_items() {
    // The wheel's only entry is taken, so the stream's deadline runs degraded (checking
    // the clock). A stream that is never pending must still end once its time has come:
    // the fire is checked before each item, as it is for an armed deadline.
    let wheel: Wheel<ManualClock, Fixed<1>> = Wheel::fixed(ManualClock::new(), TICK);
    let mut taken = pin!(wheel.sleep(ms(500)));
    assert!(poll(taken.as_mut()).is_pending());
    let mut s = pin!(wheel.total_deadline(ms(5), Endless));
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
fn idle_timeout_rearms_per_item_without_growing() {
    let wheel = growable();
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
    let wheel = growable();
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
