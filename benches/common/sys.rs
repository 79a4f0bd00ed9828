//! Helpers of the bench binaries: the command line, measurements in processes of their
//! own, CPU clocks, the machine's load, a counting waker and a deterministic generator.

#[allow(unused_imports)]
use super::*;

/// The command line of a bench binary.
pub(crate) struct Args(Vec<String>);

impl Args {
    /// The command line, or `None` (said on stdout) without `--bench`, as
    /// `cargo test --benches` runs the binary: it takes real time and means little there.
    pub(crate) fn bench(name: &str) -> Option<Args> {
        let args: Vec<String> = std::env::args().collect();
        if args.iter().any(|a| a == "--bench") {
            return Some(Args(args));
        }
        println!(
            "{name}: not run without --bench (`cargo bench -p punctual-benches --bench {name}`)"
        );
        None
    }

    /// The arguments after `flag`, if given.
    pub(crate) fn after(&self, flag: &str) -> Option<&[String]> {
        let at = self.0.iter().position(|a| a == flag)?;
        Some(&self.0[at + 1..])
    }

    /// Runs this binary again with `--bench --one` and each of `runs`, each in a process
    /// of its own (a fresh runtime, allocator and resident size), and prints their rows;
    /// writes them under `header` to the path after `--tsv`, if given (for
    /// `ci/bench_report.sh`).
    pub(crate) fn runs_apart(&self, header: &str, runs: impl Iterator<Item = Vec<String>>) {
        let exe = std::env::current_exe().expect("this benchmark's path");
        let mut tsv = format!("{header}\n");
        for args in runs {
            let mut run = std::process::Command::new(&exe);
            let out = run.args(["--bench", "--one"]).args(&args).output();
            let out = out.expect("run a measurement");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "measuring {args:?} failed: {err}");
            let rows = String::from_utf8(out.stdout).expect("UTF-8");
            print!("{rows}");
            tsv.push_str(&rows);
        }
        if let Some([path, ..]) = self.after("--tsv") {
            std::fs::write(path, tsv).expect("write the TSV");
        }
    }
}

/// A clock's reading: `CLOCK_PROCESS_CPUTIME_ID`, a thread's CPU clock, `CLOCK_MONOTONIC`.
pub(crate) fn clock(clock: libc::clockid_t) -> Duration {
    // SAFETY: all-zero bytes are a valid `timespec`, which `clock_gettime` fills.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a valid place for the time.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The CPU time (user + system) of this process so far, every thread included.
pub(crate) fn process_cpu() -> Duration {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// Load average over the last minute (`/proc/loadavg`), if readable.
pub(crate) fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The machine's CPU time so far, `(total, steal)` in clock ticks, from `/proc/stat`.
/// Steal is time a virtual machine's cores were ready to run but the hypervisor ran
/// something else: a thread woken on time then waits, though the load average is low.
pub(crate) fn cpu_times() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    Some((fields.iter().take(8).sum(), *fields.get(7)?))
}

/// A waker that counts its wakes, each with an identity of its own (`Waker::noop()`
/// would be one waker to a timer queue keyed by waker). A deadline held armed far from
/// its time is never woken: a wake means its timer let go of it.
pub(crate) fn distinct_waker(wakes: &Arc<AtomicUsize>) -> Waker {
    struct Distinct(Arc<AtomicUsize>);
    impl Wake for Distinct {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    Waker::from(Arc::new(Distinct(wakes.clone())))
}

/// A small deterministic generator (xorshift64*), so that runs are comparable.
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
        lo + Duration::from_nanos(self.next() % (hi - lo).as_nanos() as u64)
    }

    /// `0..n` shuffled.
    pub(crate) fn order(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            order.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
        order
    }
}

/// The median of some values (the upper one of an even count).
pub(crate) fn median<T: Copy + PartialOrd>(mut xs: Vec<T>) -> T {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    xs[xs.len() / 2]
}

/// The value at quantile `q` (0 to 1) of a sorted sample.
pub(crate) fn quantile<T: Copy>(sorted: &[T], q: f64) -> T {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}
