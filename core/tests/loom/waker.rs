//! A waker slot registered again while the driver fires its deadline: the latest waker is
//! woken, or the poll that registered it sees the fire itself.

use loom::thread;
use punctual_core::Reading;

use crate::support::TICK;
use crate::{counter, lend, model, poll, wheel, woken};

/// Re-registering a waker while the driver fires: the latest waker is woken, or the poll
/// that registered it sees the fire itself.
#[test]
fn waker_update_vs_fire() {
    model(|| {
        let wheel = wheel();
        let (_old, old_waker) = counter();
        let (new, new_waker) = counter();
        let mut sleep = lend(&wheel).sleep_until(Reading::since_origin(TICK));
        assert!(poll(&mut sleep, &old_waker).is_pending());
        wheel.turn();
        wheel.clock().set(TICK);

        // The sleep comes back from the thread: dropping it would cancel it.
        let poller = thread::spawn(move || {
            let ready = poll(&mut sleep, &new_waker).is_ready();
            (ready, sleep)
        });
        let driver = {
            let wheel = wheel.clone();
            thread::spawn(move || {
                wheel.turn();
            })
        };
        let (ready, sleep) = poller.join().unwrap();
        driver.join().unwrap();
        assert!(
            ready || woken(&new) == 1,
            "the new waker was not woken and the poll missed the fire"
        );
        // The old waker may be woken too: the fire can take it just before the new one is
        // stored, and the register then wakes the new one itself. Spurious, never lost.
        assert!(woken(&new) <= 1, "new waker woken twice");
        drop(sleep);
    });
}
