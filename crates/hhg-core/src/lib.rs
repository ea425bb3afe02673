//! hhg-core: fixed-radius neighbour search for particle simulations on hash grids.
//!
//! Points are hashed to cells 8 lanes at a time, counting-sorted by cell into SoA columns,
//! and searched cell by cell: per-point neighbour lists in CSR form ([`NeighborLists`]),
//! unique pairs by the half neighbourhood ([`PairList`]), a visitor per pair, queries of
//! arbitrary points, and several point sets with an activation table ([`NeighborSearch`]).
//!
//! A pair `(i, j)` is a neighbour pair iff `(dx*dx + dy*dy) + dz*dz <= r*r`, evaluated in
//! the input precision in exactly that order, without fused multiply-add. Every path (SIMD
//! or scalar kernel, any thread count) reports exactly the pairs a brute-force loop with that
//! formula reports.
//!
//! ```
//! use hhg_core::{Grid, NeighborLists};
//!
//! let points = [[0.0f32, 0.0, 0.0], [0.5, 0.0, 0.0], [3.0, 0.0, 0.0]];
//! let mut grid = Grid::new(1.0f32)?;
//! grid.build(&points)?;
//! let mut lists = NeighborLists::default();
//! grid.neighbor_lists(&mut lists)?;
//! assert_eq!(lists.neighbors(0), &[1]);
//! assert_eq!(lists.neighbors(1), &[0]);
//! assert!(lists.neighbors(2).is_empty());
//! # Ok::<(), hhg_core::Error>(())
//! ```

pub mod broad;
mod columns;
mod dispatch;
mod error;
mod geometry;
mod grid;
#[cfg(debug_assertions)]
mod instances;
mod kernel;
mod lists;
mod memory;
mod pairs;
mod parallel;
pub mod periodic;
pub mod plane;
mod real;
pub mod reorder;
mod scheme;
mod search;
mod simd;
mod smallsort;
mod sort;
pub mod triclinic;

pub use columns::{MAX_POINTS, PointColumns};
pub use error::Error;
pub use geometry::{Kernel, MAX_SPAN_CELLS, Points};
pub use grid::{Grid, RunTimeDispatch};
#[cfg(debug_assertions)]
#[doc(hidden)]
pub use instances::shared_entry_points;
pub use lists::{ListChunk, ListOrder, ListPass, NeighborLists, TakenLists};
pub use memory::PairSink;
pub use pairs::{PairIndex, PairList};
pub use real::Real;
pub use scheme::{CoreScheme, FixedRadiusScheme, SchemeStats};
pub use search::{NeighborSearch, NeighborSearchOn, SetGrid, SetId};

/// The pieces of the engine that the sibling crates (hhg-xor, hhg-group, the C API and the
/// test kit) build their own searches and tests from: the cell geometry, the counting sort
/// and its work units, the neighbour offsets, the per-unit pair collection and the checks
/// every search makes. A search needs none of them; they follow the workspace's needs and
/// may change with it.
pub mod building_blocks {
    pub use crate::columns::{Column, check_count};
    pub use crate::geometry::{
        Bounds, CELL_MARGIN, CellTable, FORWARD_OFFSETS, LATTICE_SHIFT, NEIGHBOURHOOD_OFFSETS,
        bounds, floor_small,
    };
    pub use crate::grid::check_radius;
    pub use crate::lists::{
        bucket_occupancy, exception_count, max_exceptions, set_exceptions_share,
    };
    pub use crate::parallel::collect_unit_pairs;
    pub use crate::real::LANES;
    pub use crate::sort::{SortScratch, counting_sort, cut_units};
}
