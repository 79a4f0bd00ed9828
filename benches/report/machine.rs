//! The machine and the versions the report names: what it measured on, never when or
//! from which commit.

use std::path::Path;
use std::process::Command;

pub(crate) struct Machine {
    pub(crate) cpu: String,
    pub(crate) cores: usize,
    pub(crate) rustc: String,
    pub(crate) load_before: Option<f64>,
    pub(crate) load_after: Option<f64>,
    /// The share of the machine's CPU time stolen by its hypervisor during the run.
    pub(crate) steal: Option<f64>,
    pub(crate) versions: Vec<(String, String)>,
}

pub(crate) fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

pub(crate) fn machine(root: &Path) -> Machine {
    let cpu = command_output("lscpu", &[])
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Model name:"))
                .map(|l| l["Model name:".len()..].trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    // The version alone: the report says what it measured, not when or from which commit.
    let rustc = command_output("rustc", &["--version"])
        .map(|v| v.split(" (").next().unwrap_or_default().to_string())
        .unwrap_or_else(|| "rustc ?".into());
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    let crates = [
        "tokio",
        "async-io",
        "futures-timer",
        "futures-time",
        "embassy-time",
    ];
    let versions = crates
        .into_iter()
        .chain(["hyper", "tower", "criterion"])
        .filter_map(|name| {
            let needle = format!("name = \"{name}\"\nversion = \"");
            let rest = &lock[lock.find(&needle)? + needle.len()..];
            Some((name.to_string(), rest.split('"').next()?.to_string()))
        });
    let ours = (
        "punctual".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    );
    let versions = [ours].into_iter().chain(versions).collect();
    let (load_before, load_after, steal) = (None, None, None);
    Machine {
        cpu,
        cores,
        rustc,
        load_before,
        load_after,
        steal,
        versions,
    }
}
