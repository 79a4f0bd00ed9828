//! What the scenarios share: a counting waker, the process's CPU time, the load
//! average, a deterministic generator.

#[allow(unused_imports)]
use super::*;

/// A waker that only counts its wakes, with an identity of its own (unlike
/// `Waker::noop()`, which every timer queue keyed by waker would merge into one).
struct Distinct(Arc<AtomicUsize>);

impl Wake for Distinct {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A waker of its own whose wakes add to `wakes`. A deadline held armed far from its time
/// is never woken: a wake means its timer let go of it (embassy-time's queue of 128 wakes
/// a timer at once when it is full, for its task to poll again and re-register).
pub(crate) fn distinct_waker(wakes: &Arc<AtomicUsize>) -> Waker {
    Waker::from(Arc::new(Distinct(wakes.clone())))
}

/// The time (user + system) this process has run on any CPU, its threads included.
pub(crate) fn process_cpu() -> Duration {
    // SAFETY: `getrusage` fills the `rusage` we pass; all-zero bytes are a valid `rusage`.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let rc = libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        assert_eq!(rc, 0, "getrusage failed");
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Load average over the last minute (from `/proc/loadavg`), if readable.
pub(crate) fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The machine's CPU time so far, from `/proc/stat`'s first line (all cores, in clock
/// ticks): `(total, steal)`, where *steal* is the time a virtual machine's cores were ready
/// to run but the hypervisor ran something else. Two readings give the share of a run's
/// CPU time that was stolen: a thread woken on time then waits for its core however idle
/// the machine looks from inside (its load average does not count it).
pub(crate) fn cpu_times() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    let total = fields.iter().take(8).sum();
    Some((total, *fields.get(7)?))
}

/// A small deterministic generator (xorshift64*), so runs are comparable.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..hi`, to the nanosecond.
    pub(crate) fn duration(&mut self, lo: Duration, hi: Duration) -> Duration {
        let span = (hi - lo).as_nanos() as u64;
        lo + Duration::from_nanos(self.next() % span)
    }
}
