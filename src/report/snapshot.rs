//! A snapshot: counts per name, the limits in force, the recent events.
//! * Taken under the record's lock at once: counts and events agree.
//! * A name appears once it has an outcome or an installed limit (`config`).

use super::record::{self, Counts, Event};

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
    /// Whether the limit comes from installed [`Limits`](super::Limits) (`config`).
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
    /// The default limit of installed [`Limits`](super::Limits), in seconds (`config`).
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
    let record = record::lock();
    #[cfg_attr(not(feature = "config"), allow(unused_mut))]
    let mut names: Vec<NameReport> = record
        .names
        .iter()
        .map(|(name, per)| NameReport {
            name: (*name).to_owned(),
            limit_seconds: per.last_limit.map(|l| l.as_secs_f64()),
            configured: false,
            counts: per.counts,
        })
        .collect();
    let recent = record.recent.iter().cloned().collect();
    drop(record);
    #[cfg(not(feature = "config"))]
    let default_limit_seconds = None;
    #[cfg(feature = "config")]
    let default_limit_seconds = Some(limits.default_limit().as_secs_f64());
    #[cfg(feature = "config")]
    {
        for (name, limit) in limits.names() {
            let secs = Some(limit.as_secs_f64());
            match names.iter_mut().find(|n| n.name == name) {
                Some(report) => {
                    report.limit_seconds = secs;
                    report.configured = true;
                }
                None => names.push(NameReport {
                    name: name.to_owned(),
                    limit_seconds: secs,
                    configured: true,
                    counts: Counts::default(),
                }),
            }
        }
        names.sort_by(|a, b| a.name.cmp(&b.name));
    }
    Snapshot {
        default_limit_seconds,
        names,
        recent,
    }
}
