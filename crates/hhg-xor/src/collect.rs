//! Deterministic parallel pair collection: each work unit fills its own buffer, and the
//! buffers are concatenated in unit order, so the output does not depend on the thread count.

use std::sync::Mutex;

use rayon::prelude::*;

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
        let mut guard = self
            .parts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let parts = &mut *guard;
        if parts.len() < units {
            parts.resize_with(units, Vec::new);
        }
        parts[..units]
            .par_iter_mut()
            .enumerate()
            .for_each(|(u, part)| {
                part.clear();
                fill(u, part);
            });
        let total = parts[..units].iter().map(Vec::len).sum();
        // Only growth writes: every pair below `total` is overwritten by the copies.
        out.resize(total, [0, 0]);
        let mut rest = &mut out[..];
        let mut pieces = Vec::with_capacity(units);
        for part in &parts[..units] {
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(part.len());
            pieces.push(piece);
            rest = tail;
        }
        pieces
            .into_par_iter()
            .zip(parts[..units].par_iter())
            .for_each(|(piece, part)| piece.copy_from_slice(part));
    }
}
