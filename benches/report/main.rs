//! The short benchmark suite, written up by `bash ci/bench_report.sh`: measures every
//! in-process scenario ([`measure`]), reads the TSVs of the benches that run in processes
//! of their own (`--memory`, `--million`, `--http`: [`results`]), and writes the measured
//! part of `docs/benchmarks.md` ([`tables`]), keeping the rest from [`KEPT`] on.
//! `--no-write` only prints.

#[path = "../common/mod.rs"]
#[macro_use]
mod common;

mod causes;
mod format;
mod http;
mod machine;
mod measure;
mod million;
mod results;
mod tables;
mod targets;
mod verdict;

use std::path::Path;
use std::time::Instant;

/// Where the hand-written part of `docs/benchmarks.md` begins (how each peer is measured,
/// the causes, notes from other benches, the firmware sizes of `ci/firmware_sizes.sh`),
/// which a run of the report keeps as it is.
const KEPT: &str = "<!-- kept by the report: written by hand or by other scripts -->";

fn main() {
    let Some(args) = common::Args::bench("report") else {
        return;
    };
    // The repository's root: this package is its `benches/` folder.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository");
    let mut results = results::Results::default();
    if let Some([path, ..]) = args.after("--memory") {
        results.read_memory(Path::new(path));
    }
    if let Some([path, ..]) = args.after("--million") {
        results.read_million(Path::new(path));
    }
    if let Some([path, ..]) = args.after("--http") {
        results.read_http(Path::new(path));
    }
    let mut m = machine::machine(root);
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
    if args.after("--no-write").is_some() {
        println!("{md}");
        return;
    }
    // The hand-written part, from the marker on (none without one).
    let kept = old
        .find(KEPT)
        .map_or(String::new(), |at| format!("\n{}", &old[at..]));
    let md = md + &kept;
    std::fs::write(&path, &md).expect("write docs/benchmarks.md");
    println!("{md}");
}
