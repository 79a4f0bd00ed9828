//! What operators see and tune: outcomes of named deadlines, and limits by name.
//!
//! A deadline with a name ([`Deadline::named`](punctual_core::Deadline::named),
//! [`named_result`](punctual_core::Deadline::named_result),
//! `deadline_named` with `config`) reports one [`Outcome`] when it
//! ends. After [`enable`], each outcome is counted per name, kept among the
//! [recent events](recent) (see [`snapshot`]), given to the [listener](set_listener) and
//! to the `metrics` facade ([below](self#metrics)). With `tracing`, it is also a `debug`
//! event (target `punctual::outcome`), enabled or not.
//!
//! ```
//! use std::time::Duration;
//! use punctual::DeadlineExt;
//! use punctual::report::{self, OutcomeKind};
//!
//! report::enable();
//! # futures_executor::block_on(async {
//! let _ = std::future::pending::<()>().deadline(Duration::from_millis(5)).named("doc-slow").await;
//! let _ = async { 1 }.deadline(Duration::from_millis(5)).named("doc-fast").await;
//! # });
//! let snapshot = report::snapshot();
//! assert_eq!(snapshot.counts("doc-slow").unwrap().get(OutcomeKind::Elapsed), 1);
//! assert_eq!(snapshot.counts("doc-fast").unwrap().get(OutcomeKind::Completed), 1);
//! ```
//!
//! # Invariants
//! * A named deadline reports exactly one outcome: what its caller saw. Unnamed ones
//!   report nothing. Before [`enable`], a named deadline's end costs one relaxed load.
//! * The counts and the recent events sit behind one lock, held briefly; the listener and
//!   the metrics run outside it, on the task that ended the deadline.
//! * Names are `&'static str`: a process has as many as its code names.
//!
//! # Metrics
//! With the `metrics` feature, through the recorder the process installed:
//! * `punctual_deadline_outcomes_total{name, outcome}`: a counter, `outcome` as
//!   [`OutcomeKind::as_str`] names it ([`Event::outcome`] lists them).
//! * `punctual_deadline_used_seconds{name}`: a histogram of the time used, in seconds.
//! * `punctual_deadline_limit_seconds{name}`: a gauge, the last limit seen or installed.

mod keep;
#[cfg(feature = "config")]
mod limits;
#[cfg(feature = "metrics")]
mod metrics;
mod record;

use std::sync::{Arc, RwLock};

pub use keep::{Keeper, Kept, KeptFuture};
#[cfg(feature = "config")]
pub use limits::{Limits, LimitsError, install_limits, installed_limits, limit_for};
pub use punctual_core::{Outcome, OutcomeKind};
pub use record::{Counts, Event, NameReport, Snapshot, recent, set_recent_capacity, snapshot};

type Listener = Arc<dyn Fn(&Outcome) + Send + Sync>;

static LISTENER: RwLock<Option<Listener>> = RwLock::new(None);

/// Routes named deadlines' outcomes here from now on. Idempotent; replaces a hook set by
/// [`punctual_core::set_outcome_hook`].
pub fn enable() {
    punctual_core::set_outcome_hook(Some(dispatch));
}

/// Stops routing outcomes here (not to `tracing`); counts and recent events are kept.
pub fn disable() {
    punctual_core::set_outcome_hook(None);
}

/// Calls `listener` with each outcome from now on, replacing the listener before, and
/// [enables](enable) reporting. It runs on the task that ends the deadline, inside its
/// poll or drop: keep it short, and do not panic in it.
pub fn set_listener(listener: impl Fn(&Outcome) + Send + Sync + 'static) {
    *LISTENER.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(listener));
    enable();
}

/// Removes the listener, if any.
pub fn clear_listener() {
    *LISTENER.write().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Reports a kept future's later fate (not a deadline's outcome: the core never sees it).
fn later_fate(name: &'static str, kind: OutcomeKind, used: std::time::Duration) {
    dispatch(&Outcome::new(name, kind, None, used));
}

/// The hook given to the core: every named deadline's end, once.
fn dispatch(outcome: &Outcome) {
    record::record(outcome);
    #[cfg(feature = "metrics")]
    metrics::record(outcome);
    let listener = LISTENER.read().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(listener) = listener {
        listener(outcome);
    }
}
