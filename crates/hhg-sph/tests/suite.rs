//! hhg-sph's integration tests in one binary, so that the test build links the solver once.

// Each module was a test binary of its own; run one with `cargo test -p hhg-sph --test suite
// MODULE::`.
mod common;
mod determinism;
mod kernel;
mod physics;
mod plane;
mod setup;
