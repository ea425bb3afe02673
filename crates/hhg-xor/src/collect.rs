//! Deterministic parallel pair collection: each work unit fills its own buffer, and the
//! buffers are concatenated in unit order, so the output does not depend on the thread count.

use std::sync::Mutex;

/// Per-unit pair buffers, kept across searches so that a repeated search allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct PairParts {
    parts: Mutex<Vec<Vec<[u32; 2]>>>,
}

impl PairParts {
    /// Runs `fill(u, buffer)` for every unit `u < units` in parallel (each buffer cleared
    /// first), then writes the buffers back to back into `out` in unit order.
    pub(crate) fn collect(
        &self,
        units: usize,
        fill: impl Fn(usize, &mut Vec<[u32; 2]>) + Sync,
        out: &mut Vec<[u32; 2]>,
    ) {
        let mut parts = self
            .parts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        hhg_core::collect_unit_pairs(&mut parts, units, fill, out);
    }
}
