//! hhg-capi's integration tests in one binary, so that the test build links the library once.

// Each module was a test binary of its own; run one with `cargo test -p hhg-capi --test suite
// MODULE::`.
mod c_examples;
mod capi;
mod capi_2d;
mod common;
mod compactnsearch_layer;
mod header;
