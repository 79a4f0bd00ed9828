//! punctual-tokio: work in progress.
