//! hhg-mpi: distributed fixed-radius neighbour search on MPI (rsmpi over Open MPI).
//!
//! Particles are spread over the ranks of a communicator. Each rank owns a box of space
//! (`Decomposition`, recursive coordinate bisection balanced by particle count or by a
//! weight per particle, `DistributedSearch::balance_by`), holds the
//! particles inside it, and receives as *ghosts* the particles of other ranks (and the
//! periodic images of any particle) within the search radius of its box: the *halo*. The
//! search itself is hhg-core's [`hhg_core::Grid`] over local and ghost particles, so a
//! distributed search finds exactly the pairs of the single-process search, decided by the
//! same predicate on the same coordinates.
//!
//! A time step of a solver:
//!
//! ```text
//! let mut search = DistributedSearch::new(&world, radius, None)?;
//! loop {
//!     // move the particles ...
//!     search.migrate(&mut positions, &mut ids, &mut [&mut velocities, &mut masses])?;
//!     search.update(&positions, &ids)?;            // halo exchange + grid build
//!     search.neighbor_lists(&mut lists)?;           // or search.pairs(&mut pairs)
//!     search.exchange_ghost_values(&densities, &mut ghost_densities)?;
//!     // sum over lists.neighbors(i): j < local_count() is local, else ghost j - local_count()
//! }
//! ```
//!
//! See docs/distributed.md in the repository for the design, the measured halo volumes and
//! a model at scale.
//!
//! # The `mpi` feature
//!
//! Everything that talks to MPI (`DistributedSearch`, `Decomposition`, the points client and
//! the tests under `mpirun`) needs the `mpi` feature, which links Open MPI; without it the
//! crate builds on any machine (as `cargo test --workspace` builds it) and holds only the
//! [`Column`] trait, the [`Error`] type and the pair checksum. `.ci/mpi` enables it.

mod column;
#[cfg(feature = "mpi")]
mod decomposition;
mod error;
#[cfg(feature = "mpi")]
mod search;
#[cfg(feature = "mpi")]
pub mod testing;

pub use column::Column;
#[cfg(feature = "mpi")]
pub use decomposition::{Bounds, Decomposition};
pub use error::Error;
/// rsmpi, re-exported so that a solver on hhg-mpi names the same MPI types (communicators,
/// collectives) without a dependency of its own.
#[cfg(feature = "mpi")]
pub use mpi;
#[cfg(feature = "mpi")]
pub use search::{
    DEFAULT_REBALANCE_THRESHOLD, DistributedLists, DistributedSearch, GhostOrigin, HaloStats,
    MigrationStats, Timings,
};

/// The checksum of a pair set in the points client and the tests: `sum (i + j)` modulo the
/// Mersenne prime `2^61 - 1`.
pub const CHECKSUM_MODULUS: u64 = (1 << 61) - 1;

/// Adds the pair `(i, j)` to a checksum modulo [`CHECKSUM_MODULUS`].
pub fn checksum_add(sum: u64, i: u64, j: u64) -> u64 {
    let term = (u128::from(i) + u128::from(j)) % u128::from(CHECKSUM_MODULUS);
    ((u128::from(sum) + term) % u128::from(CHECKSUM_MODULUS)) as u64
}
