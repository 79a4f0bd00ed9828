//! How numbers are written in the tables.

use std::time::Duration;

/// One decimal below 10, none above.
fn short(x: f64) -> String {
    let digits = if x.abs() < 10.0 { 1 } else { 0 };
    format!("{x:.digits$}")
}

pub(crate) fn fmt_ns(ns: f64) -> String {
    short(ns)
}

/// A difference in nanoseconds, with its sign (a ready deadline can measure a hair faster
/// than the bare future: that is noise).
pub(crate) fn fmt_delta_ns(ns: f64) -> String {
    let sign = if ns < 0.0 { "−" } else { "+" };
    format!("{sign}{}", fmt_ns(ns.abs()))
}

pub(crate) fn fmt_us(ns: i64) -> String {
    short(ns as f64 / 1000.0)
}

/// Two medians side by side, with as many decimals as it takes to tell them apart (up to
/// nanoseconds), so that a verdict between two equal-looking numbers can be checked.
pub(crate) fn fmt_us_pair(a: i64, b: i64) -> String {
    let (fa, fb) = (fmt_us(a), fmt_us(b));
    if fa != fb || a == b {
        return format!("{fa} vs {fb} µs");
    }
    let (a, b) = (a as f64 / 1000.0, b as f64 / 1000.0);
    (2..=3)
        .map(|digits| format!("{a:.digits$} vs {b:.digits$} µs"))
        .find(|pair| {
            let mut halves = pair.trim_end_matches(" µs").split(" vs ");
            halves.next() != halves.next()
        })
        .unwrap_or_else(|| format!("{a:.3} vs {b:.3} µs"))
}

pub(crate) fn fmt_ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

pub(crate) fn fmt_ratio(x: f64) -> String {
    short(x) + "×"
}
