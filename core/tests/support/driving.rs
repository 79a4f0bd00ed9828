//! Driving a wheel by hand, as an executor runs a driver: a wheel left idle, a sleeper
//! whose sleeps never end, and loops that poll a driver until the wheel is idle or until
//! a task is woken, moving the manual clock to each turn the wheel plans.

use core::future::{Pending, pending, ready};
use core::pin::{Pin, pin};
use core::task::Context;
use core::time::Duration;

use punctual_core::{Clock, Fixed, ManualClock, Reading, Sleeper, Wheel};

use super::{CountingWaker, TICK};

/// The wheel the driver tests run on.
pub(crate) type TestWheel = Wheel<ManualClock, Fixed<8>>;

/// A wheel that has been turned once, with nothing armed: idle, as a turn left it, so that
/// the next turn lingers (a new wheel's first turn does not: it was woken from no idle).
pub(crate) fn idle_wheel() -> TestWheel {
    let wheel: TestWheel = Wheel::fixed(ManualClock::new(), TICK);
    assert_eq!(
        wheel.turn(),
        Reading::END,
        "a new wheel's first turn lingered"
    );
    wheel
}

/// A runtime's sleep that never completes: the test moves the clock and polls the driver
/// by hand.
pub(crate) struct NeverSleeper;

impl Sleeper for NeverSleeper {
    type Sleep = Pending<()>;

    fn sleep_until(&mut self, _: Reading) -> Pending<()> {
        pending()
    }
}

/// Polls `driver` with an always-pending future until the wheel goes idle (the lingering
/// of a new wheel over), moving the clock to each planned turn.
pub(crate) fn poll_until_idle<T: Sleeper>(
    wheel: &TestWheel,
    mut driver: Pin<&mut punctual_core::Driver<'_, ManualClock, Fixed<8>, T>>,
    cx: &mut Context<'_>,
) {
    loop {
        let _ = driver.as_mut().poll_with(pin!(pending::<()>()), cx);
        let next = wheel.next_turn();
        if next == Reading::END {
            return;
        }
        wheel.clock().set(next.as_duration());
    }
}

/// Polls `driver` (for a future of its own, always pending), moving the clock to each
/// turn the wheel plans, until `task` is woken: what a driver polled for its future's I/O
/// sees. Panics if the wheel reads as idle, or after 100 polls.
pub(crate) fn drive_until_woken<T: Sleeper>(
    wheel: &TestWheel,
    mut driver: Pin<&mut punctual_core::Driver<'_, ManualClock, Fixed<8>, T>>,
    cx: &mut Context<'_>,
    task: &CountingWaker,
) {
    for _ in 0..100 {
        let _ = driver.as_mut().poll_with(pin!(pending::<()>()), cx);
        if task.wakes() > 0 {
            return;
        }
        let next = wheel.next_turn();
        assert!(next < Reading::END, "an armed wheel reads as idle");
        wheel.clock().set(
            next.max(Reading::since_origin(wheel.clock().now()))
                .as_duration(),
        );
    }
    panic!("not woken after 100 polls of the driver");
}
