//! Benchmarks for hhg: seeded scenes, peer engines (kiddo, rstar, brute force, Python peers),
//! hashing schemes, the broad phase, the runners and their reports and plots.
//!
//! The `hhg-bench` binary (see `cargo xtask bench`) drives these modules; the criterion benches
//! in `benches/` use the scene generators. Every engine's output is reduced to an unordered
//! pair count and a checksum ([`pairs`]), so any disagreement between engines shows.

pub mod broadphase;
pub mod cli;
pub mod compare;
pub mod io;
pub mod json;
pub mod memory;
pub mod orders;
pub mod pairs;
pub mod particles;
pub mod plots;
pub mod points;
pub mod progress;
pub mod report;
pub mod rng;
pub mod scenes;
pub mod schemes;
pub mod stream;
pub mod suite;
pub mod table;

pub use pairs::{CHECKSUM_MODULUS, PairStats, checksum_of_pairs, pair_stats, within};
pub use particles::{BRUTE_MAX_N, Csr, Engine, Order, Output, Record, SceneRun};
pub use points::PointRun;
pub use rng::Rng;
pub use scenes::{RADIUS, Scene};
pub use suite::Agreement;
