//! Keep running: the caller gets `Err(Elapsed)` at the deadline, the inner future runs on
//! the spawner given, its later result is reported, and the cap refuses one too many; on
//! tokio (paused clock) and on smol.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use punctual::report::{self, Keeper};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn on_tokio_kept_work_finishes_and_the_cap_refuses() {
    report::enable();
    let keeper = Keeper::new(2, |work| {
        tokio::spawn(work);
    });
    let finished = Arc::new(AtomicUsize::new(0));
    let work = |fail: bool| {
        let finished = finished.clone();
        async move {
            tokio::time::sleep(ms(50)).await;
            finished.fetch_add(1, Ordering::SeqCst);
            if fail { Err("failed late") } else { Ok(()) }
        }
    };
    let calls = [
        keeper.deadline(work(false), ms(10), "k-tokio"),
        keeper.deadline(work(true), ms(10), "k-tokio"),
        keeper.deadline(work(false), ms(10), "k-tokio"),
    ];
    let start = tokio::time::Instant::now();
    for result in futures_util::future::join_all(calls).await {
        assert!(result.is_err(), "the caller gets Elapsed at the deadline");
    }
    assert_eq!(start.elapsed(), ms(10), "not after the work");
    assert_eq!(keeper.running(), 2, "two kept, the third refused");
    tokio::time::sleep(ms(60)).await;
    assert_eq!(keeper.running(), 0);
    assert_eq!(
        finished.load(Ordering::SeqCst),
        2,
        "the refused one was dropped"
    );
    let c = report::snapshot().counts("k-tokio").unwrap();
    assert_eq!(c.elapsed, 3, "each deadline's own outcome, once");
    assert_eq!(
        (c.abandoned_succeeded, c.abandoned_failed, c.refused),
        (1, 1, 1)
    );
    assert_eq!(c.total(), 3, "later fates are not second outcomes");
}

#[tokio::test(start_paused = true)]
async fn in_time_is_ok_and_nothing_is_kept() {
    report::enable();
    let keeper = Keeper::new(1, |work| {
        tokio::spawn(work);
    });
    let out = keeper
        .deadline(async { Ok::<_, ()>(5) }, ms(10), "k-in-time")
        .await;
    assert_eq!(out, Ok(Ok(5)));
    assert_eq!(keeper.running(), 0);
    let dropped = keeper.deadline(
        std::future::pending::<Result<(), ()>>(),
        ms(10),
        "k-in-time",
    );
    drop(dropped);
    let c = report::snapshot().counts("k-in-time").unwrap();
    assert_eq!((c.succeeded, c.dropped, c.refused), (1, 1, 0));
}

#[test]
fn on_smol_kept_work_finishes() {
    report::enable();
    let ex = Arc::new(smol::Executor::new());
    let spawner = ex.clone();
    let keeper = Keeper::new(1, move |work| spawner.spawn(work).detach());
    smol::block_on(ex.run(async {
        // The kept work runs until released, so the second deadline meets a full keeper
        // however late the machine runs it.
        let (release, released) = smol::channel::bounded::<()>(1);
        let slow = async move {
            released.recv().await.unwrap();
            Ok::<_, ()>(())
        };
        let slower = async {
            smol::Timer::after(ms(30)).await;
            Ok::<_, ()>(())
        };
        assert!(keeper.deadline(slow, ms(5), "k-smol").await.is_err());
        assert!(keeper.deadline(slower, ms(5), "k-smol").await.is_err());
        assert_eq!(keeper.running(), 1, "cap 1: the second refused");
        release.send(()).await.unwrap();
        // Bounded wait: the kept one ends once released.
        for _ in 0..200 {
            if keeper.running() == 0 {
                break;
            }
            smol::Timer::after(ms(5)).await;
        }
    }));
    assert_eq!(keeper.running(), 0);
    let c = report::snapshot().counts("k-smol").unwrap();
    assert_eq!((c.elapsed, c.abandoned_succeeded, c.refused), (2, 1, 1));
}
