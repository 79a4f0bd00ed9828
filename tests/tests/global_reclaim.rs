//! Dropping a pending deadline releases its entry on the global wheel promptly, not when
//! its time would have come (docs/design.md, "The wheel": a 30 s deadline cancelled after
//! 1 ms must not hold memory for 30 s).
//!
//! This binary holds one test only: `global_wheel().occupied()` counts every entry of the
//! process-wide wheel, so no other test may arm deadlines while it is checked.

use core::future::{self, Future};
use core::pin::Pin;
use core::task::{Context, Waker};
use core::time::Duration;
use std::thread;
use std::time::Instant;

use punctual::DeadlineExt;
use punctual::wheel::global_wheel;

#[test]
fn dropping_pending_deadlines_releases_their_entries() {
    const ARMED: usize = 8;
    let wheel = global_wheel();
    let before = wheel.occupied();

    let mut cx = Context::from_waker(Waker::noop());
    let mut deadlines: Vec<Pin<Box<_>>> = (0..ARMED)
        .map(|_| Box::pin(future::pending::<()>().deadline(Duration::from_secs(30))))
        .collect();
    // The first poll starts each deadline and arms its entry.
    for deadline in &mut deadlines {
        assert!(deadline.as_mut().poll(&mut cx).is_pending());
    }
    assert_eq!(
        wheel.occupied(),
        before + ARMED,
        "each pending deadline holds one entry"
    );

    let dropped = Instant::now();
    drop(deadlines);
    // Reclaimed within about a tick on a driver that is not starved; allow two seconds.
    let give_up = dropped + Duration::from_secs(2);
    while wheel.occupied() != before && Instant::now() < give_up {
        thread::sleep(Duration::from_millis(1));
    }
    let occupied = wheel.occupied();
    assert_eq!(
        occupied,
        before,
        "cancelled 30 s deadlines still hold {} entries after {:?}",
        occupied - before,
        dropped.elapsed(),
    );
}
