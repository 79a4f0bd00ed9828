//! The short benchmark suite, written up: measures every scenario of `common` for every peer
//! ([`measure`]), then writes `docs/benchmarks.md` ([`tables`]: the [`verdict`] per use
//! case, the tables, the targets of [`targets`] with their [`causes`]) and
//! `docs/benchmarks.svg` ([`chart`]). It writes `docs/` only.
//!
//! Run it with `bash ci/bench_report.sh`, which first measures, each in processes of its
//! own, memory (`benches/memory.rs`, with a counting allocator), a million timers
//! (`benches/million.rs`, from resident memory) and the HTTP server (`benches/http/`), and
//! hands their results over with `--memory PATH`, `--million PATH` and `--http PATH`.
//! Run without `--bench` (as `cargo test --benches` does), it does nothing.

#[path = "../common/mod.rs"]
#[macro_use]
mod common;

mod causes;
mod chart;
mod format;
mod http;
mod machine;
mod measure;
mod million;
mod peer_targets;
mod probe;
mod tables;
mod targets;
mod verdict;

use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        println!("report: not run without --bench (use `bash ci/bench_report.sh`)");
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--probe") {
        probe::probe(&args[i + 1..]);
        return;
    }
    // The repository's root: this package is its `benches/` folder.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("benches/ is inside the repository")
        .to_path_buf();
    let mut results = measure::Results::default();
    let file = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .map(|i| Path::new(&args[i + 1]).to_path_buf())
    };
    if let Some(path) = file("--memory") {
        measure::read_memory(&path, &mut results);
    }
    if let Some(path) = file("--million") {
        measure::read_million(&path, &mut results);
    }
    if let Some(path) = file("--http") {
        measure::read_http(&path, &mut results);
    }
    let mut m = machine::machine(&root);
    m.load_before = common::load_average();
    let cpu_before = common::cpu_times();
    let start = Instant::now();
    measure::measure(&mut results);
    m.load_after = common::load_average();
    m.steal =
        cpu_before
            .zip(common::cpu_times())
            .and_then(|((total0, steal0), (total1, steal1))| {
                let total = total1.checked_sub(total0).filter(|&t| t > 0)?;
                Some(steal1.saturating_sub(steal0) as f64 / total as f64)
            });
    measure::progress(&format!("measured in {:.0?}", start.elapsed()));

    let path = root.join("docs/benchmarks.md");
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let md = tables::markdown(&results, &m, verdict::firmware(&old));
    let svg = chart::chart(&results, &m);
    if args.iter().any(|a| a == "--no-write") {
        println!("{md}");
        return;
    }
    std::fs::create_dir_all(root.join("docs")).expect("docs/");
    let md = md + &kept_sections(&old);
    std::fs::write(&path, &md).expect("write docs/benchmarks.md");
    std::fs::write(root.join("docs/benchmarks.svg"), svg).expect("write docs/benchmarks.svg");
    println!("{md}");
}

/// Where the hand-written part of `docs/benchmarks.md` begins: the notes behind the core's
/// choices and the firmware sizes (written by `ci/firmware_sizes.sh`), which a run of the
/// report keeps as they are.
const KEPT: &str = "<!-- kept by the report: written by hand or by other scripts -->";

/// The part of the existing report from [`KEPT`] on (empty without one).
fn kept_sections(old: &str) -> String {
    match old.find(KEPT) {
        Some(at) => format!("\n{}", &old[at..]),
        None => String::new(),
    }
}
