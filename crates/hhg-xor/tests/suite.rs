//! hhg-xor's integration tests in one binary, so that the test build links the schemes'
//! instantiations once.

// Each module was a test binary of its own; run one with `cargo test -p hhg-xor --test suite
// MODULE::`.
mod common;
mod errors;
mod hashing;
mod multilevel;
mod pouchol;
mod properties;
mod xor;
