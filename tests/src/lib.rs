//! punctual's integration tests live in `tests/` beside this file; this library holds the
//! pages a user reads, so that every Rust code block in them runs as a doc test with the
//! runtimes it needs (tokio, smol, tower), which the published crates do not depend on.
//!
//! `ci/lint.sh` checks that every README and `docs/*.md` page with a Rust code block is
//! included here (a crate's own README is its crate docs instead), and that a block marked
//! `ignore` gives its reason.
#![allow(rustdoc::broken_intra_doc_links)]

/// The front page (`README.md`).
#[doc = include_str!("../../README.md")]
pub mod readme {}

/// The guide (`docs/guide.md`).
#[doc = include_str!("../../docs/guide.md")]
pub mod guide {}

/// Migrating from other timers (`docs/migrating.md`).
#[doc = include_str!("../../docs/migrating.md")]
pub mod migrating {}

/// The contract (`docs/design.md`).
#[doc = include_str!("../../docs/design.md")]
pub mod design {}

/// How each guarantee is checked (`docs/testing.md`).
#[doc = include_str!("../../docs/testing.md")]
pub mod testing {}

/// The benchmark report (`docs/benchmarks.md`).
#[doc = include_str!("../../docs/benchmarks.md")]
pub mod benchmarks {}
