//! hhg-group's integration tests in one binary, so that the test build links the schemes'
//! instantiations once.

// Each module was a test binary of its own; run one with `cargo test -p hhg-group --test suite
// MODULE::`.
mod common;
mod differential;
mod errors;
mod hashing;
mod properties;
mod stats;
