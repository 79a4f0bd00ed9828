//! Outcomes through the `metrics` facade: a counter, a histogram in seconds, a gauge.
//! * Names and kinds are `&'static str` labels: no allocation per outcome.

use punctual_core::Outcome;

pub(super) fn record(outcome: &Outcome) {
    let name = outcome.name;
    metrics::counter!(
        "punctual_deadline_outcomes_total",
        "name" => name,
        "outcome" => outcome.kind.as_str()
    )
    .increment(1);
    metrics::histogram!("punctual_deadline_used_seconds", "name" => name)
        .record(outcome.used.as_secs_f64());
    if let Some(limit) = outcome.limit {
        metrics::gauge!("punctual_deadline_limit_seconds", "name" => name).set(limit.as_secs_f64());
    }
}

#[cfg(feature = "config")]
/// The limit of `name`, as a gauge (a configured name: allocated once per install).
pub(super) fn set_limit(name: &str, limit: std::time::Duration) {
    metrics::gauge!("punctual_deadline_limit_seconds", "name" => name.to_owned())
        .set(limit.as_secs_f64());
}
