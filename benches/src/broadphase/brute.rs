//! The oracle: every pair of boxes tested with [`overlaps`], O(n^2), parallel over the first box.

use rayon::prelude::*;

use crate::broadphase::{Aabb, overlaps};

/// The largest box count the brute force runs on in the benchmark.
pub const BRUTE_MAX_N: usize = 20_000;

/// Boxes per parallel task.
const CHUNK: usize = 256;

/// Writes every overlapping pair `[i, j]`, `i < j`, into `out` (cleared first), in lexicographic
/// order.
pub fn all_pairs(boxes: &[Aabb<f32>], out: &mut Vec<[u32; 2]>) {
    let n = boxes.len();
    let chunks: Vec<Vec<[u32; 2]>> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut found = Vec::new();
            for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                let a = &boxes[i];
                for (j, b) in boxes.iter().enumerate().skip(i + 1) {
                    if overlaps(a, b) {
                        found.push([i as u32, j as u32]);
                    }
                }
            }
            found
        })
        .collect();
    out.clear();
    out.reserve(chunks.iter().map(Vec::len).sum());
    for chunk in &chunks {
        out.extend_from_slice(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_made_example() {
        let b = |min: [f32; 3], max: [f32; 3]| Aabb { min, max };
        let boxes = [
            b([0.0; 3], [1.0; 3]),
            b([1.0, 0.0, 0.0], [2.0, 1.0, 1.0]),
            b([5.0; 3], [6.0; 3]),
            b([0.5; 3], [0.5; 3]),
        ];
        let mut out = vec![[9, 9]];
        all_pairs(&boxes, &mut out);
        assert_eq!(out, [[0, 1], [0, 3]]);
        all_pairs(&[], &mut out);
        assert!(out.is_empty());
    }
}
