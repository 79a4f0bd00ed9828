//! The CPU time of the server's worker threads only (not the load generator's, which runs
//! in the same process): each worker records itself when it starts
//! (`Builder::on_thread_start`); its time is read from its thread CPU clock.

use std::sync::Mutex;
use std::time::Duration;

/// The server runtime's threads, as they started.
static THREADS: Mutex<Vec<libc::pthread_t>> = Mutex::new(Vec::new());

/// Records the calling thread as one of the server's (for `on_thread_start`).
pub(crate) fn record_this_thread() {
    // SAFETY: `pthread_self` has no preconditions.
    let me = unsafe { libc::pthread_self() };
    THREADS.lock().expect("the thread list").push(me);
}

/// The CPU time the recorded threads have used so far (they live as long as the process:
/// the server's runtime is never shut down before the last reading).
pub(crate) fn server_cpu() -> Duration {
    let threads = THREADS.lock().expect("the thread list");
    let clock = |&thread| {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: `thread` is a live thread of this process (see above), and `clock` is a
        // valid place for the id.
        let rc = unsafe { libc::pthread_getcpuclockid(thread, &mut clock) };
        assert_eq!(rc, 0, "pthread_getcpuclockid failed");
        crate::common::clock(clock)
    };
    threads.iter().map(clock).sum()
}
