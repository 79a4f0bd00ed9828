//! punctual-smol on smol's executors, and what happens to armed deadlines when the
//! executor that drives the wheel goes away.

use core::future::Future;
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, Waker};
use std::sync::Arc;
use std::time::{Duration, Instant};

use punctual_core::{Fixed, StdClock, Wheel};
use smol::future::FutureExt as _;

/// A future that never completes and sets its flag when dropped.
struct NeverWithDropFlag(Arc<AtomicBool>);

impl Future for NeverWithDropFlag {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for NeverWithDropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn flag() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

/// Deadlines from many tasks: all fire, none early, each inner future dropped first.
async fn many_deadlines(wheel: &'static punctual_smol::SmolWheel) {
    let tasks: Vec<_> = (0..64u32)
        .map(|i| {
            smol::spawn(async move {
                let requested = Duration::from_millis(u64::from(1 + i % 20));
                let dropped = flag();
                let start = Instant::now();
                let r = wheel
                    .deadline(requested, NeverWithDropFlag(dropped.clone()))
                    .await;
                assert!(r.is_err());
                assert!(dropped.load(Ordering::SeqCst), "inner alive after Err");
                assert!(start.elapsed() >= requested, "fired early");
            })
        })
        .collect();
    for task in tasks {
        task.await;
    }
}

#[test]
fn global_executor() {
    let wheel = punctual_smol::leak_wheel(punctual_smol::DEFAULT_TICK);
    smol::spawn(punctual_smol::driver(wheel)).detach();
    smol::block_on(many_deadlines(wheel));
}

#[test]
fn with_driver_in_block_on() {
    let wheel = punctual_smol::leak_wheel(Duration::from_millis(1));
    smol::block_on(punctual_smol::with_driver(wheel, many_deadlines(wheel)));
}

#[test]
fn local_executor_with_a_borrowed_fixed_wheel() {
    let wheel: Wheel<StdClock, Fixed<32>> = Wheel::fixed(StdClock::new(), Duration::from_millis(2));
    let ex = smol::LocalExecutor::new();
    ex.spawn(punctual_smol::driver(&wheel)).detach();
    smol::block_on(ex.run(async {
        let start = Instant::now();
        let r = wheel
            .deadline(Duration::from_millis(5), std::future::pending::<()>())
            .await;
        assert!(r.is_err());
        assert!(start.elapsed() >= Duration::from_millis(5));
        assert_eq!(
            wheel.deadline(Duration::from_secs(5), async { 3 }).await,
            Ok(3)
        );
    }));
}

#[test]
fn executor_dropped_with_armed_deadlines() {
    let wheel = punctual_smol::leak_wheel(Duration::from_millis(1));
    let ex = smol::Executor::new();
    ex.spawn(punctual_smol::driver(wheel)).detach();
    let flags: Vec<_> = (0..4).map(|_| flag()).collect();
    for dropped in &flags {
        let inner = NeverWithDropFlag(dropped.clone());
        ex.spawn(async move {
            let _ = wheel.deadline(Duration::from_secs(3600), inner).await;
            unreachable!("an hour-long deadline completed");
        })
        .detach();
    }
    // Run the executor until all four are armed (bounded), then drop it.
    smol::block_on(ex.run(async {
        let start = Instant::now();
        while wheel.occupied() < 4 {
            assert!(start.elapsed() < Duration::from_secs(10), "not armed");
            smol::Timer::after(Duration::from_millis(1)).await;
        }
    }));
    drop(ex);
    for dropped in &flags {
        assert!(
            dropped.load(Ordering::SeqCst),
            "task not dropped with its executor"
        );
    }

    // Nothing drives the wheel now: a deadline never fires, and dropping it is fine.
    let mut cx = Context::from_waker(Waker::noop());
    let mut orphan = pin!(wheel.deadline(Duration::from_millis(1), std::future::pending::<()>()));
    assert!(orphan.as_mut().poll(&mut cx).is_pending());
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        orphan.as_mut().poll(&mut cx).is_pending(),
        "fired without a driver"
    );

    // A new driver picks the wheel up again: the deadline fires, late, never early.
    smol::block_on(punctual_smol::with_driver(wheel, async {
        assert!(orphan.as_mut().await.is_err());
    }));
    let mut abandoned = pin!(wheel.sleep(Duration::from_secs(60)));
    assert!(abandoned.as_mut().poll(&mut cx).is_pending());
}

#[test]
fn with_driver_stops_driving_when_done() {
    let wheel = punctual_smol::leak_wheel(Duration::from_millis(1));
    smol::block_on(punctual_smol::with_driver(wheel, async {}));
    let mut cx = Context::from_waker(Waker::noop());
    let mut d = pin!(wheel.deadline(Duration::from_millis(1), std::future::pending::<()>()));
    assert!(d.as_mut().poll(&mut cx).is_pending());
    std::thread::sleep(Duration::from_millis(10));
    assert!(d.as_mut().poll(&mut cx).is_pending());
    wheel.turn();
    assert!(matches!(d.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
}

#[test]
fn spawned_driver_keeps_going_after_with_driver_ends() {
    // Two drivers on one wheel: a spawned one, and `with_driver` around a block that
    // ends. Deadlines armed afterwards are fired by the spawned driver (each driver keeps
    // a waker of its own on the wheel, so the one that ended took nothing with it).
    let wheel = punctual_smol::leak_wheel(Duration::from_millis(1));
    smol::spawn(punctual_smol::driver(wheel)).detach();
    smol::block_on(async {
        smol::Timer::after(Duration::from_millis(5)).await;
        // Long enough for both drivers to go idle; `with_driver`'s is polled last, when
        // the block's timer wakes it.
        punctual_smol::with_driver(wheel, smol::Timer::after(Duration::from_millis(40))).await;
        let start = Instant::now();
        let r = wheel
            .deadline(Duration::from_millis(5), std::future::pending::<()>())
            .or(async {
                smol::Timer::after(Duration::from_secs(10)).await;
                panic!("the 5 ms deadline had not fired after 10 s");
            })
            .await;
        assert!(r.is_err());
        assert!(start.elapsed() >= Duration::from_millis(5));
    });
}
