//! The global wheel across `fork`: a child process forked after the parent used deadlines
//! gets a timer thread of its own at its first deadline that needs one, and deadlines
//! armed before the fork fire in the child too (`global`, "Across fork").
//!
//! Each check runs in a forked child, which exits with status 0 when it passed; an alarm
//! kills a child that hangs (a deadline that never fires), and the parent checks the exit
//! status. The child uses only the thread that forked it, and `_exit`s without running
//! the test harness's exit code.
//!
//! One test, so that no other test of this binary arms deadlines while it forks, except
//! the threads it starts itself.
//!
//! Linux only: `libc` (a dependency of the facade on Linux) provides `fork`, and the fork
//! handlers are registered there. Not under Miri, which cannot fork. Not under
//! ThreadSanitizer (ci/sanitize.sh does not run it): it does not support starting threads
//! in the child of a multithreaded process, which is what this test exists to check.
#![cfg(all(target_os = "linux", not(miri)))]

use core::future::{Future, pending};
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Waker};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use futures_executor::block_on;
use punctual::DeadlineExt;
use punctual::wheel::global_wheel;

/// A child still running after this many seconds is killed (`SIGALRM`): on a loaded
/// machine each child needs well under a second.
const CHILD_ALARM_SECS: u32 = 30;

/// Runs `check` in a forked child and returns the child's status as `waitpid` gives it.
fn in_child(check: impl FnOnce()) -> libc::c_int {
    // SAFETY: the child only runs `check`, on the one thread it has, then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        // SAFETY: `alarm` only arms a timer for this process.
        unsafe { libc::alarm(CHILD_ALARM_SECS) };
        let passed = panic::catch_unwind(AssertUnwindSafe(check)).is_ok();
        // SAFETY: ends the child at once, without the parent's exit handlers.
        unsafe { libc::_exit(if passed { 0 } else { 101 }) };
    }
    let mut status = 0;
    // SAFETY: `status` is valid for a write; `pid` is our child.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid, "waitpid: {}", std::io::Error::last_os_error());
    status
}

/// Panics unless `status` says the child exited with 0.
fn assert_passed(status: libc::c_int, what: &str) {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        panic!(
            "{what}: the child was killed by signal {signal}{}",
            if signal == libc::SIGALRM {
                " (its alarm: a deadline never fired)"
            } else {
                ""
            }
        );
    }
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{what}: the child failed (status {status:#x})"
    );
}

/// What the child checks: deadlines arm, fire (never early) and are cancelled, on the
/// child's own timer thread.
fn arm_fire_and_cancel() {
    for requested in [20, 1, 50].map(Duration::from_millis) {
        let started = Instant::now();
        let fired = block_on(pending::<()>().deadline(requested));
        assert!(fired.is_err(), "a pending future's deadline fires");
        assert!(started.elapsed() >= requested, "never early");
    }
    // Cancelled: the inner sleep ends first, the 10 s deadline around it is released.
    let met = block_on(punctual::sleep(Duration::from_millis(5)).deadline(Duration::from_secs(10)));
    assert_eq!(met, Ok(()));
    // And from another thread of the child, on the same timer thread.
    let other = thread::spawn(|| block_on(pending::<()>().deadline(Duration::from_millis(10))));
    assert!(other.join().expect("no panic").is_err());
}

#[test]
fn the_global_wheel_survives_fork() {
    // The parent uses the global wheel first, so that its timer thread runs.
    assert!(block_on(pending::<()>().deadline(Duration::from_millis(1))).is_err());

    // A deadline armed before the fork: polled once (it arms), then awaited in both
    // processes. It fires in each.
    let mut armed = Box::pin(pending::<()>().deadline(Duration::from_millis(200)));
    let started = Instant::now();
    assert!(
        armed
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_pending()
    );
    assert!(global_wheel().occupied() >= 1);

    let status = in_child(|| {
        arm_fire_and_cancel();
        assert!(block_on(armed.as_mut()).is_err(), "armed before the fork");
        assert!(
            started.elapsed() >= Duration::from_millis(200),
            "never early"
        );
        // And a child of the child.
        assert_passed(in_child(arm_fire_and_cancel), "grandchild");
    });
    assert_passed(status, "child");
    // In the parent, as if nothing had happened.
    assert!(block_on(armed).is_err());
    assert!(started.elapsed() >= Duration::from_millis(200));
    arm_fire_and_cancel();

    forks_under_load();
}

/// Forks while other threads keep the timer thread busy firing thousands of deadlines,
/// so that many forks come while it is in the middle of a turn: the fork must wait for
/// the turn, or the child's wheel would stay held by a thread it does not have.
fn forks_under_load() {
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = (0..2)
        .map(|_| {
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    block_on(futures_util::future::join_all((0..2_000u64).map(|i| {
                        punctual::sleep(Duration::from_micros(500 + i % 1_500))
                    })));
                }
            })
        })
        .collect();
    // Let the load build up.
    thread::sleep(Duration::from_millis(50));
    for round in 0..30 {
        let status = in_child(|| {
            let started = Instant::now();
            let fired = block_on(pending::<()>().deadline(Duration::from_millis(10)));
            assert!(fired.is_err());
            assert!(started.elapsed() >= Duration::from_millis(10));
        });
        assert_passed(status, &format!("child {round} under load"));
        thread::sleep(Duration::from_millis(3));
    }
    stop.store(true, Ordering::Relaxed);
    for thread in load {
        thread.join().expect("no panic");
    }
}
