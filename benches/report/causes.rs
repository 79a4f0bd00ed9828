//! Which cause a row links to. The causes are prose in the hand-written part of
//! `docs/benchmarks.md` ("Causes"), one section each; the verdict's rows where punctual is
//! behind and the targets it misses link to one, chosen here by the row's words.

/// `(the row starts with, the peer's name starts with, the cause's title)`: the first
/// match wins; a target has no peer ("").
const CAUSES: &[(&str, &str, &str)] = &[
    ("HTTP", "", "the HTTP harness"),
    ("gRPC", "", "the HTTP harness"),
    ("lateness: median, 1 ms tick", "", "the tick"),
    (
        "lateness: median, punctual-smol",
        "",
        "a wheel driven in the executor",
    ),
    (
        "lateness: at a 100 µs tick",
        "",
        "a wheel driven in the executor",
    ),
    ("lateness: p99", "", "the machine's load"),
    ("contention", "", "the machine's load"),
    ("fire 100 000", "tokio", "the fired entry's state word"),
    (
        "fire: the timer's own CPU",
        "",
        "the fired entry's state word",
    ),
    ("fire: process CPU ≤ half", "", "the fire harness"),
    (
        "fire: process CPU ≤ tokio's (the default wheel inside",
        "",
        "fire inside tokio",
    ),
    (
        "fire: process CPU ≤ tokio's",
        "",
        "fire on the global wheel",
    ),
    ("firmware flash", "", "firmware flash"),
    ("firmware static RAM", "", "firmware static RAM"),
    ("arm + cancel", "embassy-time", "embassy-time's queue"),
    (
        "arm + cancel inside tokio",
        "",
        "arm and cancel inside tokio",
    ),
    (
        "arm + cancel, one thread: ≤ 1.3×",
        "",
        "instructions over the floor",
    ),
    ("arm + cancel", "", "the floor"),
    ("memory: ≤ 56", "", "the entry and the future"),
    ("a million timers: arm", "", "a million arms"),
    ("a million timers: cancel", "", "a million cancels"),
    ("a million timers: bytes", "", "resident bytes"),
];

/// A link to the cause of the row `what` against `peer`, or that none was found yet.
pub(crate) fn cause(what: &str, peer: &str) -> String {
    let found = CAUSES
        .iter()
        .find(|(w, p, _)| what.starts_with(w) && peer.starts_with(p));
    let Some((_, _, title)) = found else {
        return "Not profiled yet.".into();
    };
    // The heading's anchor, as GitHub and rustdoc make it.
    let slug: String = format!("cause: {title}")
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect();
    format!("see [{title}](#{slug})")
}
