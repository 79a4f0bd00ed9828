//! The default wheels of runtimes and paused threads that have come and gone are reused,
//! not leaked: a reused wheel fires its first deadlines on its new clock's time (not
//! late after the clock it last served, and not early after one that ran ahead), and
//! resident memory stays level over thousands of short-lived runtimes, churning blocking
//! threads and paused threads.
//!
//! The tests run one at a time (`SERIAL`): which wheel a claim takes, and the process's
//! resident memory, are the process's.

use std::future::pending;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use futures_util::future::join;
use punctual::prelude::*;
use punctual::virtual_time;
use punctual::wheel::{paused_wheels_made, runtime_wheel, runtime_wheels_made};
use tokio::runtime::{Builder, Runtime};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn current_thread(paused: bool) -> Runtime {
    Builder::new_current_thread()
        .enable_time()
        .start_paused(paused)
        .build()
        .expect("a current-thread runtime")
}

/// The address of the wheel default deadlines on this thread use now.
fn this_runtime_wheel() -> usize {
    std::ptr::from_ref(runtime_wheel().expect("inside a runtime")) as usize
}

/// Runs `body` on a thread of its own, to its end (its thread-locals dropped too).
fn on_a_thread<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    thread::spawn(body).join().expect("the thread")
}

/// Waits (a bounded while) until `ready`.
fn wait_until(ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() && start.elapsed() < Duration::from_secs(10) {
        thread::sleep(ms(1));
    }
}

#[test]
fn reused_runtime_wheel_fires_first_deadlines_on_time() {
    let _serial = serial();
    // The first runtime's paused clock runs an hour ahead of the real time.
    let first = on_a_thread(|| {
        current_thread(true).block_on(async {
            let wheel = this_runtime_wheel();
            tokio::time::advance(Duration::from_secs(3600)).await;
            assert!(pending::<()>().deadline(ms(5)).await.is_err());
            wheel
        })
    });
    // The next one, paused from the real time: its first deadlines fire at their time
    // exactly, neither at once (from the hour the wheel had reached) nor a tick late.
    let again = |first: usize| {
        on_a_thread(move || {
            current_thread(true).block_on(async move {
                assert_eq!(this_runtime_wheel(), first, "the wheel was not reused");
                let fires_on_time = |d| async move {
                    let start = tokio::time::Instant::now();
                    assert!(pending::<()>().deadline(ms(d)).await.is_err());
                    assert_eq!(start.elapsed(), ms(d), "a {d} ms deadline");
                };
                fires_on_time(1).await;
                // One cancelled: a later deadline's turn reclaims it, so the wheel is
                // drained when the runtime ends, and shelved by the thread's exit.
                let start = tokio::time::Instant::now();
                assert!(tokio::time::sleep(ms(1)).deadline(ms(5)).await.is_ok());
                assert_eq!(start.elapsed(), ms(1));
                for d in [2, 5, 3] {
                    fires_on_time(d).await;
                }
            });
        });
    };
    again(first);
    // And after a runtime on real time.
    let real = on_a_thread(move || {
        current_thread(false).block_on(async move {
            assert_eq!(this_runtime_wheel(), first, "the wheel was not reused");
            assert!(pending::<()>().deadline(ms(2)).await.is_err());
            first
        })
    });
    again(real);
}

#[test]
fn a_reused_paused_wheel_starts_at_the_real_time() {
    let _serial = serial();
    on_a_thread(|| {
        virtual_time::pause();
        virtual_time::advance(Duration::from_secs(3600));
        futures_executor::block_on(async {
            let d = pending::<()>().deadline(ms(5));
            let (r, ()) = join(d, async { virtual_time::advance(ms(5)) }).await;
            assert!(r.is_err());
        });
    });
    let made = paused_wheels_made();
    on_a_thread(|| {
        virtual_time::pause();
        // The clock starts at the real time of this pause, not an hour ahead.
        let lead = virtual_time::now().saturating_duration_since(Instant::now());
        assert!(lead < Duration::from_secs(60), "{lead:?} ahead");
        futures_executor::block_on(async {
            let mut d = Box::pin(pending::<()>().deadline(ms(5)));
            let waker = futures_util::task::noop_waker();
            let mut cx = std::task::Context::from_waker(&waker);
            assert!(d.as_mut().poll(&mut cx).is_pending());
            virtual_time::advance(ms(4));
            assert!(d.as_mut().poll(&mut cx).is_pending(), "fired early");
            // By the end of its tick, as on a new wheel (the clock started off the grid).
            let jumped = virtual_time::advance_to_next().expect("a deadline was pending");
            assert!(jumped >= ms(1) && jumped <= ms(2), "{jumped:?}");
            assert!(d.as_mut().poll(&mut cx).is_ready(), "fired late");
        });
    });
    assert_eq!(paused_wheels_made(), made, "the wheel was not reused");
}

/// Resident memory, in bytes; `None` where `/proc/self/statm` cannot be read. With
/// glibc, its free memory is handed back to the system first (`malloc_trim`): a figure of
/// memory in use, not of the allocator's reserve, which grows in steps of 128 KiB or so
/// at moments of its own. A leak stays in use and is counted.
fn resident() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        #[cfg(target_env = "gnu")]
        // SAFETY: `malloc_trim` only returns free memory to the system.
        unsafe {
            libc::malloc_trim(0);
        }
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
        // SAFETY: `sysconf` only reads a system constant.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(pages * usize::try_from(page).ok()?)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Resident memory once threads that are exiting have gone: the least of a few readings
/// over 50 ms (a thread's stack stays mapped until it has exited).
fn settled_resident() -> usize {
    (0..5)
        .map(|_| {
            std::thread::sleep(ms(10));
            resident().expect("read resident memory")
        })
        .min()
        .expect("five readings")
}

const RUNS: usize = 3000;
const WARM_UP: usize = 200;
/// The most resident memory may grow per run after the warm-up: far below a leaked wheel
/// (some kilobytes each, about 6.8 KB before wheels were reused).
const BOUND: usize = 64;

/// Runs `one` `RUNS` times and checks that resident memory after them is within `BOUND`
/// bytes per run of where it was after the first `WARM_UP` (or, failing that, that the
/// next `RUNS - WARM_UP` runs are); prints the figures.
fn level_memory(what: &str, mut one: impl FnMut()) {
    let Some(_) = resident() else {
        println!("{what}: skipped, no /proc/self/statm to read resident memory from");
        for _ in 0..WARM_UP {
            one();
        }
        return;
    };
    for _ in 0..WARM_UP {
        one();
    }
    let mut warm = settled_resident();
    // A leak grows in every batch; a one-off growth (an allocator arena, a page of a
    // table) does not: a batch over the bound is measured once more from its end.
    for batch in 1..=2 {
        for _ in WARM_UP..RUNS {
            one();
        }
        let after = settled_resident();
        let runs = RUNS - WARM_UP;
        let grown = after.saturating_sub(warm);
        println!(
            "{what}: resident memory {warm} B after {WARM_UP} runs, {after} B after {RUNS} \
             (batch {batch}): {} B per run (bound {BOUND})",
            grown / runs
        );
        if grown <= BOUND * runs {
            return;
        }
        assert!(
            batch < 2,
            "{what}: resident memory grew by {grown} B over {runs} runs, {} B per run, \
             in two batches running",
            grown / runs
        );
        warm = after;
    }
}

/// Default deadlines that are ready at once, are cancelled and fire, in a task and in
/// `block_on`. A fire last: its turn reclaims the cancelled entries, so the wheel is
/// drained when the runtime ends (no orphan driver to wait for).
async fn deadlines() {
    let task = tokio::spawn(async {
        assert!(tokio::task::yield_now().deadline(ms(500)).await.is_ok());
        assert!(pending::<()>().deadline(ms(1)).await.is_err());
    });
    assert_eq!(async { 1 }.deadline(ms(5)).await, Ok(1));
    assert!(tokio::task::yield_now().deadline(ms(500)).await.is_ok());
    task.await.expect("the task");
    assert!(pending::<()>().deadline(ms(1)).await.is_err());
}

#[test]
fn short_lived_runtimes_leave_no_memory_behind() {
    let _serial = serial();
    let made = runtime_wheels_made();
    level_memory("a current-thread runtime on a thread of its own", || {
        on_a_thread(|| current_thread(false).block_on(deadlines()));
    });
    // A runtime on a paused clock too (its driver sleeps on tokio's timer).
    for _ in 0..WARM_UP {
        on_a_thread(|| current_thread(true).block_on(deadlines()));
    }
    let made = runtime_wheels_made() - made;
    println!(
        "runtime wheels made for {} runtimes: {made}",
        RUNS + WARM_UP
    );
    assert!(
        made <= 16,
        "{made} wheels for runtimes that ran one at a time"
    );
}

#[test]
fn a_churning_blocking_pool_leaves_no_memory_behind() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let _serial = serial();
    /// Blocking threads that have exited.
    static EXITED: AtomicUsize = AtomicUsize::new(0);
    struct Exit;
    impl Drop for Exit {
        fn drop(&mut self) {
            EXITED.fetch_add(1, Ordering::SeqCst);
        }
    }
    thread_local! {
        static EXIT: Exit = const { Exit };
    }
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(1)
        .thread_keep_alive(ms(1))
        .enable_time()
        .build()
        .expect("a multi-thread runtime");
    let made = runtime_wheels_made();
    let mut started = 0;
    level_memory("a blocking thread of a churning pool", || {
        let handle = rt.handle().clone();
        started += 1;
        rt.block_on(async {
            tokio::task::spawn_blocking(move || {
                EXIT.with(|_| ());
                handle.block_on(deadlines());
            })
            .await
            .expect("the blocking task");
        });
        // The next one on a thread of its own: this one idles past its keep-alive, exits.
        wait_until(|| EXITED.load(Ordering::SeqCst) == started);
        assert_eq!(
            EXITED.load(Ordering::SeqCst),
            started,
            "a blocking thread stayed"
        );
    });
    let made = runtime_wheels_made() - made;
    println!("runtime wheels made for {started} blocking threads: {made}");
    assert!(
        made <= 16,
        "{made} wheels for blocking threads that ran one at a time"
    );
}

#[test]
fn paused_threads_leave_no_memory_behind() {
    let _serial = serial();
    let made = paused_wheels_made();
    level_memory("a thread that paused time", || {
        on_a_thread(|| {
            virtual_time::pause();
            futures_executor::block_on(async {
                let d = pending::<()>().deadline(ms(5));
                let (r, ()) = join(d, async { virtual_time::advance(ms(5)) }).await;
                assert!(r.is_err());
                assert!(async { 1 }.deadline(ms(5)).await.is_ok());
                let mut armed = Box::pin(pending::<()>().deadline(ms(50)));
                let waker = futures_util::task::noop_waker();
                let mut cx = std::task::Context::from_waker(&waker);
                assert!(armed.as_mut().poll(&mut cx).is_pending());
            });
        });
    });
    let made = paused_wheels_made() - made;
    println!("paused wheels made for {RUNS} threads: {made}");
    assert!(
        made <= 2,
        "{made} wheels for paused threads that ran one at a time"
    );
}
