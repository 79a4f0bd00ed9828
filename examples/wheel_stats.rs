//! Wheel statistics after a short load run: a wheel of its own, driven by a thread, with
//! deadlines that fire, complete in time or are dropped, then `wheel.stats()`.
//!
//! Run it with `cargo run --example wheel_stats`.

use std::sync::LazyLock;
use std::time::Duration;

use futures_util::future::join_all;
use punctual::wheel::{Growable, StdClock, Wheel};

static WHEEL: LazyLock<Wheel<StdClock, Growable>> = LazyLock::new(|| {
    Wheel::growable(StdClock::new(), Duration::from_millis(1)).with_batched_wakes()
});

fn main() {
    punctual::wheel::spawn_driver(&WHEEL);
    let wheel: &'static Wheel<StdClock, Growable> = &WHEEL;
    futures_executor::block_on(async {
        let tasks = (0..3_000u64).map(|i| async move {
            match i % 3 {
                // Fires: the inner future never completes.
                0 => {
                    let _ = wheel
                        .deadline(
                            Duration::from_millis(1 + i % 20),
                            std::future::pending::<()>(),
                        )
                        .await;
                }
                // Completes in time: a short sleep under a long deadline.
                1 => {
                    let sleep = wheel.sleep(Duration::from_millis(1 + i % 5));
                    let _ = wheel.deadline(Duration::from_secs(5), sleep).await;
                }
                // Ready at once: arms nothing.
                _ => {
                    let _ = wheel.deadline(Duration::from_secs(5), async { i }).await;
                }
            }
        });
        join_all(tasks).await;
    });
    // Give the driver a tick to reclaim the last released entries.
    std::thread::sleep(Duration::from_millis(5));
    let stats = wheel.stats();
    println!("{stats}");
    assert_eq!(
        stats.fired,
        1_000 + 1_000,
        "the pending ones and the sleeps all fired"
    );
    assert_eq!(
        stats.cancelled, 1_000,
        "deadlines whose inner completed first"
    );
}
