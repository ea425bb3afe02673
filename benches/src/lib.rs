//! Benchmarks for hhg: seeded scenes, peer engines (kiddo, rstar, brute force, Python peers),
//! hashing schemes, the broad phase, the runners and their reports and plots.
//!
//! The `hhg-bench` binary (see `cargo xtask bench`) drives these modules; the criterion benches
//! in `benches/` use the scene generators. Every engine's output is reduced to an unordered
//! pair count and a checksum ([`pairs`]), so any disagreement between engines shows.

pub mod broadphase;
pub mod cli;
pub mod compare;
pub mod engines;
pub mod io;
pub mod memory;
pub mod orders;
pub mod pairs;
pub mod plots;
pub mod progress;
pub mod python;
pub mod report;
pub mod rng;
pub mod runner;
pub mod scenes;
pub mod schemes;

pub use engines::{BRUTE_MAX_N, Csr, Engine, Output};
pub use pairs::{CHECKSUM_MODULUS, PairStats, checksum_of_pairs, pair_stats, within};
pub use rng::Rng;
pub use runner::{Agreement, Order, PointRun, Record, SceneRun};
pub use scenes::{RADIUS, Scene};
