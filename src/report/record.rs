//! Counts per name and the recent events, behind one lock, and snapshots of them.
//! * Each outcome is counted once and kept once; the oldest event goes when the buffer is
//!   full. A snapshot takes both under the lock at once, so they agree.
//! * A name appears in it once it has an outcome or an installed limit (`config`).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use punctual_core::{Outcome, OutcomeKind};

/// How many outcomes of each kind a name has had.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "config", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Counts {
    /// Completed in time (an output that is not a judged `Result`).
    pub completed: u64,
    /// Completed in time with `Ok`.
    pub succeeded: u64,
    /// Completed in time with `Err`.
    pub failed: u64,
    /// Ran out of time.
    pub elapsed: u64,
    /// Dropped by the caller first.
    pub dropped: u64,
    /// Kept running ([`Keeper`](super::Keeper)) past their deadline, finished `Ok`.
    pub abandoned_succeeded: u64,
    /// Kept running, finished `Err`.
    pub abandoned_failed: u64,
    /// To be kept running, refused by the cap (dropped).
    pub refused: u64,
}

impl Counts {
    /// The count of `kind`.
    pub fn get(&self, kind: OutcomeKind) -> u64 {
        let mut counts = *self;
        *counts.slot(kind)
    }

    /// All outcomes counted: one per deadline (later fates of kept ones are not outcomes).
    pub fn total(&self) -> u64 {
        self.completed + self.succeeded + self.failed + self.elapsed + self.dropped
    }

    fn slot(&mut self, kind: OutcomeKind) -> &mut u64 {
        match kind {
            OutcomeKind::Completed => &mut self.completed,
            OutcomeKind::Succeeded => &mut self.succeeded,
            OutcomeKind::Failed => &mut self.failed,
            OutcomeKind::Elapsed => &mut self.elapsed,
            OutcomeKind::AbandonedSucceeded => &mut self.abandoned_succeeded,
            OutcomeKind::AbandonedFailed => &mut self.abandoned_failed,
            OutcomeKind::Refused => &mut self.refused,
            _ => &mut self.dropped,
        }
    }
}

/// One outcome as the recent events keep it, with the wall-clock time it was reported.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "config", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Event {
    /// The deadline's name.
    pub name: &'static str,
    /// How it ended ([`OutcomeKind::as_str`]): `completed`, `succeeded`, `failed`, `elapsed`,
    /// `dropped`, or a kept future's `abandoned_succeeded`, `abandoned_failed`, `refused`.
    pub outcome: &'static str,
    /// Its limit in seconds; `None` for a deadline at an instant.
    pub limit_seconds: Option<f64>,
    /// The time it used, in seconds.
    pub used_seconds: f64,
    /// When it was reported, in milliseconds since the Unix epoch.
    pub unix_millis: u64,
}

#[derive(Debug)]
struct Record {
    /// Per name: its counts, and the last limit an outcome carried.
    names: BTreeMap<&'static str, (Counts, Option<Duration>)>,
    recent: VecDeque<Event>,
    capacity: usize,
}

static RECORD: Mutex<Record> = Mutex::new(Record {
    names: BTreeMap::new(),
    recent: VecDeque::new(),
    capacity: 256,
});

/// The record, even if a panic poisoned it (its data stay consistent: one push, one add).
fn lock() -> std::sync::MutexGuard<'static, Record> {
    RECORD.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn record(outcome: &Outcome) {
    let event = Event {
        name: outcome.name,
        outcome: outcome.kind.as_str(),
        limit_seconds: outcome.limit.map(|l| l.as_secs_f64()),
        used_seconds: outcome.used.as_secs_f64(),
        unix_millis: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    };
    let mut record = lock();
    let (counts, last_limit) = record.names.entry(outcome.name).or_default();
    *counts.slot(outcome.kind) += 1;
    if outcome.limit.is_some() {
        *last_limit = outcome.limit;
    }
    if record.capacity > 0 {
        if record.recent.len() >= record.capacity {
            record.recent.pop_front();
        }
        record.recent.push_back(event);
    }
}

/// The most recent events, oldest first.
pub fn recent() -> Vec<Event> {
    lock().recent.iter().cloned().collect()
}

/// Keeps the last `capacity` events from now on (256 by default; 0 keeps none).
pub fn set_recent_capacity(capacity: usize) {
    let mut record = lock();
    record.capacity = capacity;
    while record.recent.len() > capacity {
        record.recent.pop_front();
    }
}

/// One name: its limit in force and its counts.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "config", derive(serde::Serialize))]
#[non_exhaustive]
pub struct NameReport {
    /// The name.
    pub name: String,
    /// The limit in seconds: the installed one for the name (`config`), else the last one
    /// an outcome carried; `None` if neither.
    pub limit_seconds: Option<f64>,
    /// Whether the limit comes from installed `Limits` (`config`).
    pub configured: bool,
    /// Its outcomes so far.
    pub counts: Counts,
}

/// What [`snapshot`] returns; serializable with the `config` feature, for a handler to
/// serve as JSON.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "config", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Snapshot {
    /// The default limit of installed `Limits`, in seconds (`config`).
    pub default_limit_seconds: Option<f64>,
    /// Each name, in order.
    pub names: Vec<NameReport>,
    /// The recent events, oldest first.
    pub recent: Vec<Event>,
}

impl Snapshot {
    /// The counts of `name`, if it has a report.
    pub fn counts(&self, name: &str) -> Option<Counts> {
        self.name(name).map(|n| n.counts)
    }

    /// The report of `name`, if any.
    pub fn name(&self, name: &str) -> Option<&NameReport> {
        self.names.iter().find(|n| n.name == name)
    }
}

/// Counts per name, the limits in force and the recent events, now.
pub fn snapshot() -> Snapshot {
    #[cfg(feature = "config")]
    let limits = super::installed_limits();
    let record = lock();
    // Per name: its limit, whether installed, its counts.
    #[cfg_attr(not(feature = "config"), allow(unused_mut))]
    let mut names: BTreeMap<&str, _> = record
        .names
        .iter()
        .map(|(name, (counts, last_limit))| (*name, (*last_limit, false, *counts)))
        .collect();
    let recent = record.recent.iter().cloned().collect();
    drop(record);
    #[cfg(feature = "config")]
    for (name, limit) in limits.names() {
        let (last, configured, _) = names.entry(name).or_default();
        (*last, *configured) = (Some(limit), true);
    }
    Snapshot {
        #[cfg(feature = "config")]
        default_limit_seconds: Some(limits.default_limit().as_secs_f64()),
        #[cfg(not(feature = "config"))]
        default_limit_seconds: None,
        names: names
            .into_iter()
            .map(|(name, (limit, configured, counts))| NameReport {
                name: name.to_owned(),
                limit_seconds: limit.map(|l| l.as_secs_f64()),
                configured,
                counts,
            })
            .collect(),
        recent,
    }
}
