//! Fuzz targets of hhg, each a function of arbitrary bytes that panics only on a finding, and
//! the seeded mutation driver that `cargo test` runs them with for a bounded time.
//!
//! The targets:
//! - [`targets::point_files`]: the point-file readers of `hhg-pointfile` (raw `f32`, `.xyz`,
//!   `.ply`) on arbitrary bytes: an error or points, never a panic, a hang or an allocation
//!   the bytes do not justify.
//! - [`targets::capi_calls`]: the C API (`hhg-capi`) on an arbitrary sequence of calls with
//!   arbitrary arguments (NULL and misaligned pointers, freed, doubly freed and made-up
//!   handles, wrong precisions, unknown sets, bad radii and coordinates): every call returns
//!   a documented status with a message, and every list it returns equals the brute force.
//! - [`targets::search_coordinates`]: `Grid` and `PeriodicSearch` on arbitrary bytes as
//!   coordinates, radius and box, in `f32` and `f64`, SIMD and scalar kernels: every result
//!   equals the brute-force oracle of `hhg-testkit`, every refusal is the documented one.
//!
//! Two drivers run them: [`driver::run`], a deterministic mutation loop over the targets'
//! seed inputs (the tests in `tests/fuzz.rs`, a few seconds by default, more with
//! `HHG_FUZZ_CASES`), and libFuzzer through the cargo-fuzz project in `fuzz/` (coverage
//! guided, for hours: `cargo xtask fuzz TARGET --time SECONDS`, see `docs/fuzzing.md`).

pub mod driver;
pub mod input;
pub mod targets;

/// A fuzz target: a function of arbitrary bytes that panics only on a finding.
pub type Target = fn(&[u8]);

/// A function that gives a target's seed inputs.
pub type Seeds = fn() -> Vec<Vec<u8>>;

/// Every target by name, with its seed inputs.
pub const TARGETS: [(&str, Target, Seeds); 3] = [
    (
        "point_files",
        targets::point_files,
        targets::point_file_seeds,
    ),
    ("capi_calls", targets::capi_calls, targets::capi_seeds),
    (
        "search_coordinates",
        targets::search_coordinates,
        targets::search_seeds,
    ),
];
