//! [`TimerFd`]: a Linux `timerfd` on the runtime's own reactor, so that a default wheel's
//! driver wakes at a deadline's own instant, inside the runtime, with no thread of its own.
//!
//! * One per driver task, re-armed to the wheel's next turn; never one per deadline.
//! * Armed relative to a reading of the wheel's clock just taken, rounded up to whole
//!   nanoseconds: it never wakes before the time asked.
//! * A wake is only a hint: the driver reads its clock and fires what is due, so a stale
//!   or spurious wake costs a turn, never an early fire.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use tokio::io::unix::AsyncFd;

const ZERO: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

/// A `CLOCK_MONOTONIC` timerfd registered with the current runtime's reactor.
#[derive(Debug)]
pub(super) struct TimerFd {
    fd: AsyncFd<OwnedFd>,
}

impl TimerFd {
    /// A disarmed timer on the current runtime's reactor; `None` outside a runtime, on a
    /// runtime without an I/O driver, or if the kernel refuses one.
    pub(super) fn new() -> Option<Arc<Self>> {
        // SAFETY: plain syscall with constant flags; the result is checked below.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a new descriptor that nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(raw) };
        // Panics without an I/O driver: the probe answers `None`, the descriptor closed as
        // the panic unwinds. (Deprecated in newer tokio for types that may close their
        // descriptor while registered: an `OwnedFd` the `AsyncFd` owns cannot.)
        #[allow(deprecated)]
        let register = || AsyncFd::with_interest(owned, tokio::io::Interest::READABLE);
        let fd = super::probe::quietly(register)?.ok()?;
        Some(Arc::new(Self { fd }))
    }

    /// Arms the timer `after` from now (disarms it for `None`), and returns the sleep that
    /// waits for it. A zero `after` is ready at once. A failure to arm leaves the driver to
    /// be woken by the next arm, as an idle one is.
    pub(super) fn sleep(self: &Arc<Self>, after: Option<Duration>) -> FineSleep {
        if after == Some(Duration::ZERO) {
            return FineSleep(None);
        }
        let mut spec = libc::itimerspec {
            it_interval: ZERO,
            it_value: ZERO,
        };
        if let Some(after) = after {
            // At most about 68 years: `time_t` seconds never overflow.
            spec.it_value.tv_sec = after.as_secs().min(1 << 31) as libc::time_t;
            spec.it_value.tv_nsec = libc::c_long::from(after.subsec_nanos() as i32);
        }
        // SAFETY: a live descriptor of ours, and a valid `itimerspec`; no old value read.
        unsafe {
            libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, core::ptr::null_mut());
        }
        FineSleep(Some(Arc::clone(self)))
    }
}

/// A wait for a [`TimerFd`]: ready once it expired since it was last armed or read (or at
/// once, without one).
#[derive(Debug)]
pub(super) struct FineSleep(Option<Arc<TimerFd>>);

impl Future for FineSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(timer) = &self.0 else {
            return Poll::Ready(());
        };
        loop {
            let Ok(mut guard) = std::task::ready!(timer.fd.poll_read_ready(cx)) else {
                // The reactor is gone (the runtime shuts down): end the sleep; the driver
                // is dropped with its task.
                return Poll::Ready(());
            };
            let mut count = [0_u8; 8];
            let read = guard.try_io(|fd| {
                // SAFETY: reads at most 8 bytes into `count`, from a live descriptor.
                let n = unsafe { libc::read(fd.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
                (n >= 0).then_some(()).ok_or_else(io::Error::last_os_error)
            });
            if read.is_ok() {
                // A one-shot timer that expired cannot expire again before it is armed:
                // the readiness is spent, and a stale one would cost the next sleep a read.
                guard.clear_ready();
                return Poll::Ready(());
            }
            // Stale readiness, cleared by `try_io`: wait again.
        }
    }
}
