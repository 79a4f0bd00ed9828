//! punctual-smol: work in progress.
