//! Deterministic parallel pair collection: each work unit fills its own buffer, and the
//! buffers are concatenated in unit order, so the output does not depend on the thread count.

use std::sync::{Mutex, PoisonError};

use hhg_core::{NeighborLists, Real};

/// The pair buffers of a search, kept across searches so that a repeated search allocates
/// nothing: one per work unit, and the whole pair list behind the neighbour lists.
#[derive(Debug, Default)]
pub(crate) struct PairBuffers {
    parts: Mutex<Vec<Vec<[u32; 2]>>>,
    pairs: Mutex<Vec<[u32; 2]>>,
}

impl PairBuffers {
    /// Runs `fill(u, buffer)` for every unit `u < units` in parallel (each buffer cleared
    /// first), then writes the buffers back to back into `out` in unit order.
    pub(crate) fn collect(
        &self,
        units: usize,
        fill: impl Fn(usize, &mut Vec<[u32; 2]>) + Sync,
        out: &mut Vec<[u32; 2]>,
    ) {
        let mut parts = self.parts.lock().unwrap_or_else(PoisonError::into_inner);
        hhg_core::building_blocks::collect_unit_pairs(&mut parts, units, fill, out);
    }

    /// Replaces `out` by the lists of `n` objects with the unique pairs that `pairs` writes
    /// into the kept pair buffer.
    pub(crate) fn neighbor_lists<T: Real>(
        &self,
        n: usize,
        pairs: impl FnOnce(&mut Vec<[u32; 2]>),
        out: &mut NeighborLists<T>,
    ) {
        let mut buffer = self.pairs.lock().unwrap_or_else(PoisonError::into_inner);
        pairs(&mut buffer);
        lists_from_pairs(n, &buffer, out);
    }
}

/// Replaces `out` by the lists of `n` objects with the unique pairs `pairs`.
///
/// [`NeighborLists::assign_from_pairs`] cannot count-sort into zero lists, so no object at
/// all is answered by an empty grid's lists.
fn lists_from_pairs<T: Real>(n: usize, pairs: &[[u32; 2]], out: &mut NeighborLists<T>) {
    if n == 0 {
        let grid = hhg_core::Grid::new(T::from_f64(1.0)).expect("radius 1 is valid");
        grid.neighbor_lists(out);
    } else {
        out.assign_from_pairs(n, pairs)
            .expect("the table's pairs index its points");
    }
}
