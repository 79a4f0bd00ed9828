//! Batched wakes on a real timer thread (`spawn_driver`): deadlines fired in one turn are
//! all woken although no task ever polls its deadline, so the one woken first (whose poll
//! would have woken the rest) never takes the batch, and the timer thread's next-tick turn
//! must.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Waker};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::Wake;
use std::time::{Duration, Instant};

use punctual::wheel::{Growable, StdClock, Wheel};

static WHEEL: LazyLock<Wheel<StdClock, Growable>> = LazyLock::new(|| {
    Wheel::growable(StdClock::new(), Duration::from_millis(1)).with_batched_wakes()
});

struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn batch_whose_first_task_never_polls_is_still_woken() {
    punctual::wheel::spawn_driver(&WHEEL);
    let counts: Vec<Arc<Count>> = (0..16)
        .map(|_| Arc::new(Count(AtomicUsize::new(0))))
        .collect();
    // One `deadline_at` for all: they fire in the same turn.
    let at = WHEEL.now() + Duration::from_millis(20);
    let mut deadlines: Vec<Pin<Box<_>>> = (0..16)
        .map(|_| Box::pin(WHEEL.deadline_at(at, core::future::pending::<()>())))
        .collect();
    for (d, count) in deadlines.iter_mut().zip(&counts) {
        let waker = Waker::from(Arc::clone(count));
        assert!(
            d.as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
    }
    // No deadline is polled again: every wake must come from the timer thread.
    let started = Instant::now();
    while counts.iter().any(|c| c.0.load(Ordering::SeqCst) == 0) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "lost wakeups: {:?}",
            counts
                .iter()
                .map(|c| c.0.load(Ordering::SeqCst))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(counts.iter().all(|c| c.0.load(Ordering::SeqCst) == 1));
}
