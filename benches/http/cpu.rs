//! The CPU time of the server's worker threads only (not the load generator's, which runs
//! in the same process): each worker records itself when it starts
//! (`Builder::on_thread_start`), and its time is read from its thread CPU clock.

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
    threads
        .iter()
        .map(|&thread| {
            let mut clock: libc::clockid_t = 0;
            // SAFETY: `thread` is a live thread of this process (see above), and `clock`
            // is a valid place for the id.
            let rc = unsafe { libc::pthread_getcpuclockid(thread, &mut clock) };
            assert_eq!(rc, 0, "pthread_getcpuclockid failed");
            // SAFETY: all-zero bytes are a valid `timespec`, which `clock_gettime` fills.
            let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
            // SAFETY: `clock` is a valid clock id and `ts` a valid place for the time.
            let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
            assert_eq!(rc, 0, "clock_gettime failed");
            Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        })
        .sum()
}

/// The CPU time of the whole process so far, every thread included (a timer thread of a
/// peer's too): what an external load generator's server costs.
pub(crate) fn process_cpu() -> Duration {
    // SAFETY: all-zero bytes are a valid `timespec`, which `clock_gettime` fills.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a valid place for the time.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
