//! The particle suite: fixed-radius neighbour lists of hhg and its peers on the generated
//! scenes ([`crate::scenes`]) in every point order, with its engines, runner and report.

pub mod engines;
pub mod record;
pub mod report;
pub mod runner;

pub use engines::{BRUTE_MAX_N, Csr, Engine, Output};
pub use record::{Order, Record};
pub use runner::SceneRun;
