//! Wheel statistics (`Wheel::stats`): what the wheel armed, fired, cancelled and reclaimed,
//! its high-water mark, and lateness counted in ticks.
#![cfg(all(feature = "alloc", feature = "stats"))]

mod support;

use core::pin::pin;
use core::task::Poll;
use core::time::Duration;

use support::{growable, ms, poll};

#[test]
fn stats_count_what_the_wheel_did() {
    let wheel = growable();
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
    assert!(stats.to_string().contains("fired 3"));
}

#[test]
fn lateness_is_counted_in_ticks() {
    let wheel = growable();
    let mut late = pin!(wheel.sleep(ms(10)));
    assert!(poll(late.as_mut()).is_pending());
    wheel.advance(ms(15)); // one turn, five ticks after the edge
    assert!(poll(late.as_mut()).is_ready());
    assert_eq!(wheel.stats().lateness, [0, 0, 0, 1]);
}
