//! Applying the locality permutation to a solver's own arrays.

use rayon::prelude::*;

/// Elements per rayon task when permuting.
const REORDER_CHUNK: usize = 1 << 14;

/// Reorders `data` into cell order: afterwards `data[k]` is what `data[order[k]]` was.
///
/// `order` is [`crate::Grid::order`] (or any permutation of `0..data.len()`). SPH codes call
/// this on every per-particle array every few steps so that neighbours sit close in memory.
/// The old buffer is swapped for a new one: pass a `scratch` vector to
/// [`apply_order_with`] to avoid the allocation.
///
/// # Panics
/// When `order.len() != data.len()`.
pub fn apply_order<V: Copy + Send + Sync>(order: &[u32], data: &mut Vec<V>) {
    let mut scratch = Vec::new();
    apply_order_with(order, data, &mut scratch);
}

/// Like [`apply_order`], reusing `scratch` (which ends up holding the old contents).
///
/// # Panics
/// When `order.len() != data.len()`.
pub fn apply_order_with<V: Copy + Send + Sync>(
    order: &[u32],
    data: &mut Vec<V>,
    scratch: &mut Vec<V>,
) {
    assert_eq!(
        order.len(),
        data.len(),
        "the permutation and the data differ in length"
    );
    scratch.clear();
    scratch.reserve(data.len());
    let source = &data[..];
    scratch.par_extend(
        order
            .par_iter()
            .with_min_len(REORDER_CHUNK)
            .map(|&i| source[i as usize]),
    );
    std::mem::swap(data, scratch);
}

/// Writes `data` reordered into `out`: `out[k] = data[order[k]]`.
///
/// # Panics
/// When the three lengths differ.
pub fn gather_into<V: Copy + Send + Sync>(order: &[u32], data: &[V], out: &mut [V]) {
    assert!(
        order.len() == data.len() && data.len() == out.len(),
        "the permutation, the data and the output differ in length"
    );
    out.par_chunks_mut(REORDER_CHUNK)
        .zip(order.par_chunks(REORDER_CHUNK))
        .for_each(|(out, order)| {
            for (o, &i) in out.iter_mut().zip(order) {
                *o = data[i as usize];
            }
        });
}
