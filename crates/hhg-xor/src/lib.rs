//! hhg-xor: fixed-radius search with XOR-of-primes cell hashing, multilevel hashing and Pouchol's hierarchical hashing, on hhg-core's columns, kernels and counting sort.
//!
//! The schemes of this crate differ from hhg-core's only in how cells map to buckets, so
//! that benchmarks compare hashing schemes and nothing else: they validate input with
//! hhg-core's checks (and return its errors), compute cells like hhg-core (cubes of edge
//! `r * (1 + CELL_MARGIN)` from the bounding box's minimum), sort with
//! [`hhg_core::building_blocks::counting_sort`], store the sorted points in [`hhg_core::PointColumns`], and
//! test distances with the 8-lane kernels of [`hhg_core::Real`] (or their scalar references,
//! [`hhg_core::Kernel::Scalar`], which give identical results).
//!
//! - [`XorScheme`] (`"xor"`): a cell goes to bucket `((ix * p1) ^ (iy * p2) ^ (iz * p3)) mod
//!   n` ([`Primes::Teschner`] or [`Primes::Mueller`], `n` a power of two, about 2 buckets per
//!   point by default, see [`TableSize`]).
//! - [`PoucholScheme`] (`"pouchol"`): Pouchol et al.'s top-down additive key over nested
//!   classes with a `has_children` flag per bucket; neighbour search by the paper's on-the-fly
//!   NNS and a broad-phase box query ([`PoucholScheme::query_aabb`]).
//! - [`MultilevelSearch`]: Eitz and Lixu's multilevel hashing for particles with their own
//!   radii (`|xi - xj| <= max(ri, rj)`), one XOR-hashed table per level.
//!
//! The two fixed-radius schemes implement [`hhg_core::FixedRadiusScheme`], like hhg-core's
//! [`hhg_core::CoreScheme`]: a pair `(i, j)` is reported iff `(dx*dx + dy*dy) + dz*dz <= r*r`
//! in the input precision, exactly once, in an order that does not depend on the thread
//! count.
//!
//! # Cells, buckets and collisions
//!
//! With these hashes, neighbouring cells are not neighbouring buckets, and several cells may
//! share a bucket. Every table stores each point's cell beside the sorted columns and orders
//! the points of a bucket by cell, so a cell is one contiguous run of sorted positions: a
//! search hashes a neighbour cell to its bucket and takes that cell's run, skipping the
//! foreign cells of the bucket by comparing cells (never by distance tests). Distinct cells
//! have disjoint runs, so no pair is reported twice or missed, even when two neighbour cells
//! of one cell share a bucket, and the candidates of a cell are always contiguous for the
//! 8-lane kernels. [`XorScheme::foreign_candidates`] reports what scanning whole buckets
//! with a cell filter would have tested in addition.
//!
//! # Example
//!
//! ```
//! use hhg_core::{CoreScheme, FixedRadiusScheme, NeighborLists, PairList};
//! use hhg_xor::{PoucholScheme, Primes, XorScheme};
//!
//! let points = [[0.0f64, 0.0, 0.0], [0.6, 0.0, 0.0], [0.6, 0.8, 0.0], [5.0, 5.0, 5.0]];
//! let schemes: Vec<Box<dyn FixedRadiusScheme<f64>>> = vec![
//!     Box::new(CoreScheme::new(1.0)?),
//!     Box::new(XorScheme::new(1.0, Primes::Teschner)?),
//!     Box::new(PoucholScheme::new(1.0, Primes::Mueller)?),
//! ];
//! for mut scheme in schemes {
//!     scheme.build(&points)?;
//!     let mut pairs = PairList::default();
//!     scheme.pairs(&mut pairs)?;
//!     let mut found = pairs.pairs().to_vec();
//!     found.sort_unstable();
//!     // (0, 2) is at distance exactly 1.
//!     assert_eq!(found, [[0, 1], [0, 2], [1, 2]], "{}", scheme.name());
//!     let mut lists = NeighborLists::default();
//!     scheme.neighbor_lists(&mut lists)?;
//!     assert_eq!(lists.neighbors(0), &[1, 2]);
//!     let mut near = Vec::new();
//!     scheme.query_point([5.0, 5.0, 4.5], &mut near)?;
//!     assert_eq!(near, vec![3]);
//! }
//! # Ok::<(), hhg_core::Error>(())
//! ```

mod hash;
mod kernel;
pub mod multilevel;
pub mod pouchol;
mod table;
pub mod xor;

pub use hash::{CellHasher, KeyRule, MAX_BUCKETS, Primes, XorHash};
pub use multilevel::{MultilevelLevel, MultilevelSearch};
pub use pouchol::{Levels, MAX_LEVELS, PoucholScheme};
pub use table::TableSize;
pub use xor::XorScheme;
