//! Where default deadlines run: the edges of the tokio default (runtime shutdown, several
//! runtimes, blocking threads, a runtime without time) and virtual time on any executor.

use std::future::pending;
use std::time::{Duration, Instant};

use futures_util::future::join;
use punctual::prelude::*;
use punctual::virtual_time;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A deadline started inside a runtime and still pending when the runtime shuts down is
/// fired on real time by the orphan driver: never early, and not lost.
#[test]
fn a_deadline_outliving_its_runtime_still_fires() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let started = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut deadline = Box::pin(pending::<()>().deadline(ms(80)));
    // First polled inside the runtime: it chooses the runtime's wheel.
    rt.block_on(async {
        let waker = futures_util::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(deadline.as_mut().poll(&mut cx).is_pending());
    });
    drop(rt);
    std::thread::spawn(move || {
        tx.send(futures_executor::block_on(deadline)).unwrap();
    });
    let outcome = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("lost: never fired");
    assert!(outcome.is_err());
    assert!(started.elapsed() >= ms(80), "early");
}

/// A default deadline started in the context of a runtime that has shut down (a thread
/// still inside its `enter()`) runs on the global wheel: it fires, never early.
#[test]
fn a_deadline_in_a_runtime_shut_down_fires() {
    for multi_thread in [false, true] {
        let rt = if multi_thread {
            tokio::runtime::Runtime::new().unwrap()
        } else {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
        };
        let handle = rt.handle().clone();
        rt.shutdown_background();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _entered = handle.enter();
            let start = Instant::now();
            let ended = futures_executor::block_on(pending::<()>().deadline(ms(20)));
            tx.send((ended.is_err(), start.elapsed())).unwrap();
        });
        let (fired, after) = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("never fired");
        assert!(fired && after >= ms(20), "fired {fired} after {after:?}");
    }
}

/// A thread that runs one runtime after another gets the clock of each: paused time in
/// the second after real time in the first.
#[test]
fn runtimes_one_after_another_on_one_thread() {
    for paused in [false, true, false, true] {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(paused)
            .build()
            .unwrap();
        let real = Instant::now();
        rt.block_on(async {
            let start = tokio::time::Instant::now();
            let d = if paused {
                Duration::from_secs(3600)
            } else {
                ms(20)
            };
            assert!(pending::<()>().deadline(d).await.is_err());
            assert!(start.elapsed() >= d);
            if paused {
                assert_eq!(start.elapsed(), d);
            }
        });
        if paused {
            assert!(real.elapsed() < Duration::from_secs(60));
        }
    }
}

/// A thread that left a live runtime for another takes the other's wheel and clock: its
/// deadlines fire in the second runtime's `block_on` and tasks, paused or not, while the
/// first runtime is not running; and again in the first when the thread comes back.
#[test]
fn a_thread_between_two_live_runtimes() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let current = |paused| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .start_paused(paused)
                .build()
                .unwrap()
        };
        let first = current(false);
        assert!(first.block_on(pending::<()>().deadline(ms(5))).is_err());
        for paused in [false, true] {
            current(paused).block_on(async {
                let start = tokio::time::Instant::now();
                assert!(pending::<()>().deadline(ms(30)).await.is_err());
                let task = tokio::spawn(pending::<()>().deadline(ms(30)));
                assert!(task.await.unwrap().is_err());
                assert!(start.elapsed() >= ms(60), "early");
                if paused {
                    assert_eq!(start.elapsed(), ms(60), "not on the paused clock");
                }
            });
        }
        let multi = tokio::runtime::Runtime::new().unwrap();
        assert!(multi.block_on(pending::<()>().deadline(ms(30))).is_err());
        assert!(first.block_on(pending::<()>().deadline(ms(5))).is_err());
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("a deadline never fired, or the thread panicked");
}

/// A thread that visits another runtime keeps the wheel of the one it left: an interval
/// there, waiting between its ticks (no entry armed), goes on ticking.
#[test]
fn a_visit_to_another_runtime_keeps_the_first_wheel() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let ticks = Arc::new(AtomicUsize::new(0));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let other = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let counted = ticks.clone();
    rt.block_on(async move {
        let mut interval = punctual::interval(ms(20));
        interval.tick().await; // on this thread's wheel in `rt`
        tokio::spawn(async move {
            tokio::time::sleep(ms(10)).await;
            loop {
                interval.tick().await;
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
    });
    other.block_on(punctual::sleep(ms(1)));
    let start = Instant::now();
    while ticks.load(Ordering::SeqCst) < 5 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the interval stopped"
        );
        std::thread::sleep(ms(5));
    }
}

/// Runtimes dropped with deadlines in flight on their workers, one after another: quiet,
/// with no panic in the default wheels' hand-over (a worker may arm while its runtime's
/// driver lets go), and the wheels reused after stay on time.
#[test]
fn runtimes_dropped_with_deadlines_in_flight() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static PANICS: AtomicUsize = AtomicUsize::new(0);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        if matches!(thread.name(), Some("churned-worker" | "punctual-orphans")) {
            PANICS.fetch_add(1, Ordering::SeqCst);
        }
        previous(info);
    }));
    for round in 0..200u64 {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("churned-worker")
            .enable_all()
            .build()
            .unwrap();
        for i in 0..64u64 {
            rt.spawn(async move {
                loop {
                    let _ = tokio::task::yield_now().deadline(ms(1 + i % 3)).await;
                    let _ = pending::<()>()
                        .deadline(Duration::from_micros(300 + i))
                        .await;
                }
            });
        }
        std::thread::sleep(Duration::from_micros(200 * (round % 10)));
        drop(rt);
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a worker panicked");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let start = Instant::now();
    let ended = rt.block_on(async {
        let deadline = pending::<()>().deadline(ms(20));
        tokio::time::timeout(Duration::from_secs(20), deadline).await
    });
    assert!(ended.expect("never fired").is_err());
    assert!(start.elapsed() >= ms(20), "early");
}

/// `spawn_blocking` threads and `block_in_place` use the runtime's clock too.
#[test]
fn blocking_threads_and_block_in_place() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let blocking = tokio::task::spawn_blocking(|| {
            let start = Instant::now();
            let r = futures_executor::block_on(pending::<()>().deadline(ms(15)));
            (r.is_err(), start.elapsed())
        });
        let (fired, took) = blocking.await.unwrap();
        assert!(fired);
        assert!(took >= ms(15));
        let in_place = tokio::spawn(async {
            tokio::task::block_in_place(|| {
                futures_executor::block_on(pending::<()>().deadline(ms(10))).is_err()
            })
        });
        assert!(in_place.await.unwrap());
    });
}

/// A runtime without a time driver: default deadlines run on a wheel of the runtime's
/// whose driver asks tokio for no timer (one would panic there), on both flavours, in
/// `block_on` and in a task. (`ci/panic_abort.sh` checks that nothing panics, caught or
/// not, with a release build that aborts on a panic.)
#[test]
fn a_runtime_without_time_serves_default_deadlines() {
    let current = || tokio::runtime::Builder::new_current_thread().build();
    let multi = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
    };
    for build in [
        current as fn() -> std::io::Result<tokio::runtime::Runtime>,
        multi,
    ] {
        let rt = build().unwrap();
        let start = Instant::now();
        let r = rt.block_on(pending::<()>().deadline(ms(10)));
        assert!(r.is_err());
        assert!(start.elapsed() >= ms(10));
        let in_task = rt.block_on(async {
            tokio::spawn(async {
                assert!(punctual::wheel::runtime_wheel().is_some());
                let start = Instant::now();
                let r = pending::<()>().deadline(ms(5)).await;
                r.is_err() && start.elapsed() >= ms(5)
            })
            .await
            .unwrap()
        });
        assert!(in_task);
    }
}

/// A `current_thread` runtime whose clock is paused after its wheel's driver started on
/// real time: the driver sees the pause at its next wake and sleeps on tokio's timer from
/// then on, so tokio auto-advances to a deadline started after the pause.
#[test]
fn clock_paused_after_driver_started_auto_advances() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let real = Instant::now();
    rt.block_on(async {
        assert!(pending::<()>().deadline(ms(2)).await.is_err());
        tokio::time::pause();
        let start = tokio::time::Instant::now();
        let d = Duration::from_secs(3600);
        assert!(pending::<()>().deadline(d).await.is_err());
        // Within the contract's two ticks, not to the tick: the wheel's tick grid was
        // laid on the real time, not on the paused clock's millisecond grid.
        let took = start.elapsed();
        assert!(took >= d && took <= d + ms(2), "{took:?}");
    });
    assert!(real.elapsed() < Duration::from_secs(60));
}

/// Virtual time under `futures::executor::block_on`: nothing moves until the test says so,
/// and deadlines fire in deadline order.
#[test]
fn virtual_time_under_block_on() {
    virtual_time::pause();
    assert!(virtual_time::is_paused());
    let real = Instant::now();
    futures_executor::block_on(async {
        let long = pending::<()>().deadline(Duration::from_secs(3600));
        let (r, ()) = join(long, async {
            virtual_time::advance(Duration::from_secs(3599));
            virtual_time::advance(Duration::from_secs(1));
        })
        .await;
        assert!(r.is_err());
        // advance_to_next jumps straight to the next deadline.
        let start = virtual_time::now();
        let d = pending::<()>().deadline(ms(250));
        let (r, jumped) = join(d, async { virtual_time::advance_to_next() }).await;
        assert!(r.is_err());
        let jumped = jumped.expect("a deadline was pending");
        assert!(jumped >= ms(250) && jumped <= ms(251), "{jumped:?}");
        assert!(virtual_time::now() - start >= ms(250));
        assert_eq!(virtual_time::advance_to_next(), None);
    });
    assert!(
        real.elapsed() < Duration::from_secs(60),
        "no real time passes"
    );
}

/// Virtual time is per thread: two paused threads at once never see each other's time.
#[test]
fn virtual_time_is_per_thread() {
    let other = std::thread::spawn(|| {
        virtual_time::pause();
        futures_executor::block_on(async {
            let d = pending::<()>().deadline(ms(100));
            let (r, ()) = join(d, async { virtual_time::advance(ms(100)) }).await;
            r.is_err()
        })
    });
    virtual_time::pause();
    futures_executor::block_on(async {
        let mut d = Box::pin(pending::<()>().deadline(ms(100)));
        let waker = futures_util::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(d.as_mut().poll(&mut cx).is_pending());
        assert!(other.join().unwrap());
        // The other thread's advance did not move this one's clock.
        assert!(d.as_mut().poll(&mut cx).is_pending());
        virtual_time::advance(ms(100));
        assert!(d.as_mut().poll(&mut cx).is_ready());
    });
}

/// Virtual time on smol's executor and a tokio current-thread runtime.
#[test]
fn virtual_time_under_smol_and_tokio() {
    std::thread::spawn(|| {
        virtual_time::pause();
        smol::block_on(async {
            let (r, ()) = join(punctual::sleep(Duration::from_secs(30)), async {
                virtual_time::advance(Duration::from_secs(30));
            })
            .await;
            let () = r;
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let (r, ()) = join(pending::<()>().deadline(Duration::from_secs(30)), async {
                tokio::task::yield_now().await;
                virtual_time::advance(Duration::from_secs(30));
            })
            .await;
            assert!(r.is_err());
        });
    })
    .join()
    .unwrap();
}

/// `use punctual::*` next to `#[tokio::main]`: nothing in the root shadows `tokio`.
mod glob_import {
    #[allow(unused_imports)]
    use punctual::*;

    #[tokio::main(flavor = "current_thread")]
    async fn main_with_the_glob() -> bool {
        async { true }
            .deadline(std::time::Duration::from_secs(1))
            .await
            .unwrap()
    }

    #[test]
    fn compiles_and_runs() {
        assert!(main_with_the_glob());
    }
}

/// On a multi-thread runtime every worker has a wheel of its own, all reading the real
/// clock as the global wheel does: a budget started on one worker is in force on whichever
/// worker its task is polled after an `.await` moved it (what is left of it is what a
/// deadline started there is cut to, by the same test). Budgets once applied to their own
/// wheel only: after a few hops, tasks on the other worker saw none.
#[test]
fn budget_follows_task_across_multi_thread_workers() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                tokio::spawn(async {
                    punctual::budget(Duration::from_secs(20), async {
                        let mut seen = 0;
                        for _ in 0..6 {
                            tokio::task::yield_now().await;
                            tokio::time::sleep(Duration::from_millis(1)).await;
                            let left = punctual::adapters::tower::remaining_budget();
                            seen += usize::from(left.is_some_and(|left| {
                                left <= Duration::from_secs(20) && left > Duration::from_secs(10)
                            }));
                        }
                        seen
                    })
                    .await
                    .unwrap()
                })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.unwrap(), 6, "the budget was lost on a worker");
        }
    });
}
