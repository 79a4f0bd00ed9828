//! Nothing here: the tests in `tests/` are the point. See `Cargo.toml`.
