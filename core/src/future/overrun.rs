//! Overrun reports: a deadline whose task saw its fire later than a process threshold.
//! * Off costs one relaxed load per fire, nothing on arm, cancel or ready.
//! * Each deadline is reported at most once, at the poll that sees it fired.

use core::sync::atomic::{AtomicU32, Ordering};
use core::time::Duration;

/// The threshold in microseconds; 0: off.
static AFTER_MICROS: AtomicU32 = AtomicU32::new(0);

/// Reports deadlines whose task polls them more than `after` past their time (a task that
/// does not yield), or stops reporting (`None`, the default). Each is counted in
/// [`Stats::overruns`](crate::Stats::overruns) and, with `tracing`, reported by a `warn`
/// event (target `punctual`). Applies to every wheel, from the next fire on; `after` is
/// kept in whole microseconds, rounded up, up to `u32::MAX` µs.
pub fn report_overruns(after: Option<Duration>) {
    let micros = after.map_or(0, |after| {
        let micros = after.as_nanos().div_ceil(1_000).max(1);
        u32::try_from(micros).unwrap_or(u32::MAX)
    });
    AFTER_MICROS.store(micros, Ordering::Relaxed);
}

/// The threshold [`report_overruns`] set, if any.
pub fn overrun_threshold() -> Option<Duration> {
    match AFTER_MICROS.load(Ordering::Relaxed) {
        0 => None,
        micros => Some(Duration::from_micros(micros.into())),
    }
}
