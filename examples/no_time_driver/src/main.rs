//! Default deadlines inside tokio runtimes built without a time driver (no
//! `enable_time`): ready, fired and cancelled as in any other runtime, in a task, in
//! `block_on`, on a blocking thread, on both runtime flavours. Nothing here may panic or
//! print to stderr: `ci/panic_abort.sh` runs it as a release build with `panic = "abort"`
//! (where a panic ends the process with SIGABRT) and checks its exit status and stderr.

use std::future::pending;
use std::time::{Duration, Instant};

use punctual::prelude::*;
use tokio::runtime::{Builder, Runtime};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Deadlines that complete, fire and are cancelled, here: returns how many fired.
async fn deadlines() -> usize {
    let mut fired = 0;
    // Ready at the first poll.
    assert_eq!(async { 7 }.deadline(ms(50)).await, Ok(7));
    // Pending, then ready before the deadline: armed and cancelled.
    for _ in 0..20 {
        let outcome = tokio::task::yield_now().deadline(ms(200)).await;
        assert!(outcome.is_ok(), "a yield outlived 200 ms");
    }
    // Fired.
    for d in [1, 5, 20] {
        let start = Instant::now();
        assert!(pending::<()>().deadline(ms(d)).await.is_err());
        assert!(start.elapsed() >= ms(d), "fired early");
        fired += 1;
    }
    // A sleep, and a deadline dropped while armed.
    punctual::sleep(ms(2)).await;
    let mut armed = Box::pin(pending::<()>().deadline(ms(10_000)));
    let waker = std::task::Waker::noop();
    assert!(
        armed
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker))
            .is_pending()
    );
    drop(armed);
    fired
}

/// In `block_on`, in a spawned task, and on a blocking thread of `rt`.
fn run(rt: &Runtime) -> usize {
    let mut fired = rt.block_on(deadlines());
    fired += rt.block_on(async { tokio::spawn(deadlines()).await.expect("the task") });
    let handle = rt.handle().clone();
    fired += rt.block_on(async move {
        tokio::task::spawn_blocking(move || handle.block_on(deadlines()))
            .await
            .expect("the blocking task")
    });
    fired
}

/// A named way to build a runtime.
type Recipe = (&'static str, fn() -> Builder);

fn main() {
    // Each runtime is dropped before the next starts: a thread that goes back and forth
    // between live runtimes keeps the first one's wheel (see the guide).
    let builders: [Recipe; 3] = [
        // The configuration of the report: a current-thread runtime with IO, no time.
        ("current-thread with IO", || {
            let mut builder = Builder::new_current_thread();
            builder.enable_io();
            builder
        }),
        (
            "current-thread with nothing enabled",
            Builder::new_current_thread,
        ),
        ("multi-thread with IO", || {
            let mut builder = Builder::new_multi_thread();
            builder.worker_threads(2).enable_io();
            builder
        }),
    ];
    let mut fired = 0;
    for (name, builder) in builders {
        let rt = builder().build().expect("a runtime");
        fired += run(&rt);
        drop(rt);
        println!("{name}: done");
    }
    println!("no time driver: {fired} default deadlines fired, none panicked");
}
