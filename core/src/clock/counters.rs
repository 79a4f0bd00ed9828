//! The counters behind `StdClock` and `BootClock`.
//! * On Linux, `clock_gettime` read directly: `Monotonic` counts `CLOCK_MONOTONIC` from
//!   just after an `Instant` origin, so a direct reading is behind `Instant`'s of the same
//!   moment by at most its `slack`; `Boot` counts `CLOCK_BOOTTIME` from when it was made.
//! * Off Linux, and the boot counter under Miri: `std::time::Instant`.

#[cfg(any(not(target_os = "linux"), miri))]
pub(super) use instant::Boot;
#[cfg(not(target_os = "linux"))]
pub(super) use instant::Monotonic;
#[cfg(all(target_os = "linux", not(miri)))]
pub(super) use linux::Boot;
#[cfg(target_os = "linux")]
pub(super) use linux::Monotonic;

#[cfg(target_os = "linux")]
mod linux {
    use core::time::Duration;
    use std::time::Instant;

    /// `CLOCK_MONOTONIC`, counted from just after an `Instant` origin.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Monotonic {
        /// `CLOCK_MONOTONIC` ns just after the origin: readings count from it.
        origin_nanos: u64,
        /// How far after the origin `origin_nanos` may be.
        slack: Duration,
    }

    impl Monotonic {
        /// An origin `Instant`, and a counter from just after it: `CLOCK_MONOTONIC` read
        /// before and after `Instant::now()`, up to four times until the two are tight.
        pub(crate) fn new() -> (Instant, Self) {
            /// A bracket this tight was not preempted.
            const TIGHT: u64 = 1_000;
            let bracket = || {
                let before = monotonic_nanos();
                let origin = Instant::now();
                let after = monotonic_nanos();
                (origin, after, after - before)
            };
            let mut best = bracket();
            for _ in 1..4 {
                if best.2 <= TIGHT {
                    break;
                }
                let next = bracket();
                if next.2 < best.2 {
                    best = next;
                }
            }
            let (origin, origin_nanos, slack) = best;
            let slack = Duration::from_nanos(slack);
            (
                origin,
                Self {
                    origin_nanos,
                    slack,
                },
            )
        }

        /// How far after the origin the counter may start.
        pub(crate) fn slack(&self) -> Duration {
            self.slack
        }

        /// The most the origin may move back: to boot.
        pub(crate) fn max_backdate(&self) -> Duration {
            Duration::from_nanos(self.origin_nanos)
        }

        /// Moves the counter's origin back by `by`, at most [`max_backdate`](Self::max_backdate).
        pub(crate) fn backdate(&mut self, by: Duration) {
            // At most `origin_nanos`, so under 2^64 ns.
            self.origin_nanos -= by.as_nanos() as u64;
        }

        /// The time since the origin.
        #[inline]
        pub(crate) fn elapsed(&self, _origin: Instant) -> Duration {
            Duration::from_nanos(monotonic_nanos().saturating_sub(self.origin_nanos))
        }
    }

    /// `CLOCK_BOOTTIME`, counted from when it was made.
    #[cfg(not(miri))]
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Boot {
        origin_nanos: u64,
    }

    #[cfg(not(miri))]
    impl Boot {
        /// A counter from now.
        pub(crate) fn new() -> Self {
            Self {
                origin_nanos: boottime_nanos(),
            }
        }

        /// The time since it was made, suspends included.
        #[inline]
        pub(crate) fn elapsed(&self) -> Duration {
            Duration::from_nanos(boottime_nanos().saturating_sub(self.origin_nanos))
        }
    }

    /// `CLOCK_MONOTONIC` in nanoseconds.
    #[inline]
    fn monotonic_nanos() -> u64 {
        clock_nanos(libc::CLOCK_MONOTONIC, "CLOCK_MONOTONIC")
    }

    /// `CLOCK_BOOTTIME` in nanoseconds.
    #[cfg(not(miri))]
    #[inline]
    fn boottime_nanos() -> u64 {
        clock_nanos(libc::CLOCK_BOOTTIME, "CLOCK_BOOTTIME")
    }

    /// A Linux clock counting from boot, in nanoseconds; panics (naming it `name`) on failure.
    #[inline]
    fn clock_nanos(clock: libc::clockid_t, name: &str) -> u64 {
        let mut ts = core::mem::MaybeUninit::<libc::timespec>::uninit();
        // SAFETY: `ts` is valid for a write; a failure (checked below) leaves it unread.
        let rc = unsafe { libc::clock_gettime(clock, ts.as_mut_ptr()) };
        assert_eq!(
            rc,
            0,
            "punctual: clock_gettime({name}) failed: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: `clock_gettime` succeeded, so it wrote the whole `timespec`.
        let ts = unsafe { ts.assume_init() };
        nanos_of(ts.tv_sec as u64, ts.tv_nsec as u64)
    }

    /// `secs` seconds and `nanos` nanoseconds, in nanoseconds (fits a `u64` for 584 years).
    #[inline]
    fn nanos_of(secs: u64, nanos: u64) -> u64 {
        secs.wrapping_mul(1_000_000_000).wrapping_add(nanos)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// `CLOCK_MONOTONIC` as `Instant` holds it, parsed from its `Debug` output.
        #[cfg(not(miri))]
        fn monotonic_of(instant: Instant) -> u64 {
            let text = std::format!("{instant:?}");
            let field = |name: &str| -> u64 {
                let start = text
                    .find(name)
                    .unwrap_or_else(|| panic!("no {name} in Instant's Debug output: {text}"))
                    + name.len();
                let digits: std::string::String = text[start..]
                    .chars()
                    .skip_while(|c| !c.is_ascii_digit())
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().expect("a number")
            };
            nanos_of(field("tv_sec"), field("tv_nsec"))
        }

        #[test]
        #[cfg(not(miri))]
        fn direct_origin_is_within_slack_after_instant() {
            for _ in 0..1_000 {
                let (origin, counter) = Monotonic::new();
                let origin = monotonic_of(origin);
                assert!(
                    counter.origin_nanos >= origin,
                    "direct origin before Instant's"
                );
                let gap = Duration::from_nanos(counter.origin_nanos - origin);
                assert!(
                    gap <= counter.slack(),
                    "{gap:?} > slack {:?}",
                    counter.slack()
                );
            }
        }

        #[test]
        fn nanoseconds_carry_across_whole_seconds() {
            assert_eq!(nanos_of(0, 999_999_999), 999_999_999);
            assert_eq!(nanos_of(1, 0), 1_000_000_000);
            assert_eq!(nanos_of(3, 5), 3_000_000_005);
        }

        #[test]
        #[cfg(not(miri))]
        fn boot_counts_from_clock_boottime() {
            // The origin lies between two direct readings (`CLOCK_MONOTONIC`'s would not).
            for _ in 0..1_000 {
                let before = boottime_nanos();
                let counter = Boot::new();
                let after = boottime_nanos();
                assert!((before..=after).contains(&counter.origin_nanos));
                let reading = counter.elapsed();
                let later = boottime_nanos();
                assert!(Duration::from_nanos(later - counter.origin_nanos) >= reading);
            }
        }
    }
}

#[cfg(any(not(target_os = "linux"), miri))]
mod instant {
    use core::time::Duration;
    use std::time::Instant;

    /// `Instant`'s own clock, counted from the origin.
    #[cfg(not(target_os = "linux"))]
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Monotonic;

    #[cfg(not(target_os = "linux"))]
    impl Monotonic {
        /// An origin `Instant`, and its counter.
        pub(crate) fn new() -> (Instant, Self) {
            (Instant::now(), Self)
        }

        /// Readings go through `Instant`: no slack.
        pub(crate) fn slack(&self) -> Duration {
            Duration::ZERO
        }

        /// As far back as `Instant` allows.
        pub(crate) fn max_backdate(&self) -> Duration {
            Duration::MAX
        }

        /// Nothing to move: readings count from the origin.
        pub(crate) fn backdate(&mut self, _by: Duration) {}

        /// The time since `origin`.
        #[inline]
        pub(crate) fn elapsed(&self, origin: Instant) -> Duration {
            origin.elapsed()
        }
    }

    /// `Instant`'s clock, which counts suspends on Windows and not on macOS.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Boot {
        origin: Instant,
    }

    impl Boot {
        /// A counter from now.
        pub(crate) fn new() -> Self {
            Self {
                origin: Instant::now(),
            }
        }

        /// The time since it was made.
        #[inline]
        pub(crate) fn elapsed(&self) -> Duration {
            self.origin.elapsed()
        }
    }
}
