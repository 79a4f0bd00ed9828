//! punctual's integration tests live in `tests/` beside this file; this library holds the
//! pages a user reads, so that every Rust code block in them runs as a doc test with the
//! runtimes it needs (tokio, smol, tower), which the published crates do not depend on.
//!
//! `ci/lint.sh` checks that every README and `docs/*.md` page with a Rust code block is
//! included here, and that a block marked `ignore` gives its reason.
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

/// The core's front page (`core/README.md`).
#[doc = include_str!("../../core/README.md")]
pub mod core_readme {}

/// punctual-thread's front page (`adapters/thread/README.md`).
#[doc = include_str!("../../adapters/thread/README.md")]
pub mod thread_readme {}

/// punctual-tokio's front page (`adapters/tokio/README.md`).
#[doc = include_str!("../../adapters/tokio/README.md")]
pub mod tokio_readme {}

/// punctual-smol's front page (`adapters/smol/README.md`).
#[doc = include_str!("../../adapters/smol/README.md")]
pub mod smol_readme {}

/// punctual-embassy's front page (`adapters/embassy/README.md`).
#[doc = include_str!("../../adapters/embassy/README.md")]
pub mod embassy_readme {}

/// punctual-tower's front page (`adapters/tower/README.md`).
#[doc = include_str!("../../adapters/tower/README.md")]
pub mod tower_readme {}
