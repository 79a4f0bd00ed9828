//! Quickstart: bound any future with `.deadline(d)`, with no runtime and no setup.
//!
//! `use punctual::DeadlineExt;` is all it takes: the deadlines below run on the global
//! wheel, whose driver thread starts by itself the first time a deadline needs it, so they
//! work under `futures_executor::block_on` as under any other executor. The example shows:
//!
//! 1. A deadline that fires: the inner future never completes, so after 50 ms the deadline
//!    drops it (its `Drop` prints "inner future dropped") and only *then* returns
//!    `Err(Elapsed)`.
//! 2. A deadline that is met: the inner future finishes in 10 ms, well within 1 s, and the
//!    deadline returns `Ok` with its output.
//! 3. A named deadline: the name travels in `Elapsed` and shows in its message.
//! 4. A plain `punctual::sleep`, which never completes early.
//!
//! Run it with `cargo run --example quickstart`.

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;
use std::time::Instant;

use punctual::DeadlineExt;

/// Set by [`NeverDone`]'s destructor.
static DROPPED: AtomicBool = AtomicBool::new(false);

/// A future that never completes, and says so when it is dropped.
struct NeverDone;

impl Future for NeverDone {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for NeverDone {
    fn drop(&mut self) {
        DROPPED.store(true, Ordering::SeqCst);
        println!("    inner future dropped");
    }
}

fn main() {
    futures_executor::block_on(async {
        println!("1. a future that never completes, under a 50 ms deadline");
        let result = NeverDone.deadline(Duration::from_millis(50)).await;
        // The inner future was dropped before the error reached us.
        let dropped_first = DROPPED.load(Ordering::SeqCst);
        match &result {
            Ok(()) => println!("    Ok(())"),
            Err(elapsed) => println!("    Err: {elapsed}"),
        }
        println!("    dropped before the error was seen: {dropped_first}");
        assert!(result.is_err() && dropped_first);

        println!("2. a 10 ms task under a 1 s deadline");
        let result = async {
            punctual::sleep(Duration::from_millis(10)).await;
            "priced"
        }
        .deadline(Duration::from_secs(1))
        .await;
        println!("    {result:?}");
        assert_eq!(result, Ok("priced"));

        println!("3. a named deadline");
        let result = core::future::pending::<u32>()
            .deadline(Duration::from_millis(10))
            .named("pricing")
            .await;
        match result {
            Ok(price) => println!("    Ok({price})"),
            Err(elapsed) => println!("    Err: {elapsed}"),
        }
        assert_eq!(result.unwrap_err().name(), Some("pricing"));

        println!("4. punctual::sleep(20 ms)");
        let start = Instant::now();
        punctual::sleep(Duration::from_millis(20)).await;
        let slept = start.elapsed();
        println!("    woke after {slept:.1?}");
        assert!(slept >= Duration::from_millis(20));
    });
}
