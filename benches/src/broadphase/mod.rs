//! The broad-phase suite: all overlapping pairs of axis-aligned boxes, hhg against its peers.
//!
//! The scene is the benchmark scenario of Schornbaum's thesis on hierarchical hash grids
//! ([`scenario`]): random cuboids of varying size that move every step. Each engine reports every
//! overlapping pair once as `[i, j]` with `i < j` in the input numbering, decided by the closed
//! interval rule of [`overlaps`], so every engine's output reduces to a pair count and the
//! order-independent checksum of [`crate::pairs::checksum_of_pairs`].

pub mod brute;
pub mod engines;
pub mod hhg;
#[cfg(feature = "parry")]
pub mod parry;
pub mod report;
pub mod runner;
pub mod sap;
pub mod scenario;

pub use engines::{BroadEngine, BroadOutput, BroadState};
pub use runner::{BroadRecord, BroadRun};
pub use scenario::Scenario;

pub use hhg_core::broad::Aabb;
use rayon::prelude::*;

use crate::pairs::{CHECKSUM_MODULUS, checksum_add};

/// The exact overlap rule shared by every engine: closed intervals on all three axes.
///
/// Boxes `a` and `b` overlap iff `a.min <= b.max && b.min <= a.max` on every axis, so boxes that
/// only touch (a shared face, edge or corner) overlap, and so do zero-size boxes on a face.
#[inline(always)]
pub fn overlaps(a: &Aabb<f32>, b: &Aabb<f32>) -> bool {
    (a.min[0] <= b.max[0] && b.min[0] <= a.max[0])
        & (a.min[1] <= b.max[1] && b.min[1] <= a.max[1])
        & (a.min[2] <= b.max[2] && b.min[2] <= a.max[2])
}

/// What a list of overlapping pairs says, reduced to numbers that can be compared across engines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PairListStats {
    /// The number of listed pairs.
    pub pairs: u64,
    /// The checksum of the pairs (see [`crate::pairs`]): the sum of `i + j` modulo `2^61 - 1`.
    pub checksum: u64,
    /// Pairs not of the form `i < j`, which no engine may report.
    pub misordered: u64,
}

impl PairListStats {
    /// Computes the statistics of a pair list in parallel.
    pub fn of(pairs: &[[u32; 2]]) -> Self {
        Self::of_mapped(pairs, None)
    }

    /// Computes the statistics of a pair list in parallel, the checksum in the input's
    /// numbering: `map[k]` is the input index of the lister's point `k` (the checksum does not
    /// depend on which end of a pair comes first). Whether a pair is listed as `i < j` is
    /// judged in the lister's own numbering.
    pub fn of_mapped(pairs: &[[u32; 2]], map: Option<&[u32]>) -> Self {
        let orig = |k: u32| u64::from(map.map_or(k, |m| m[k as usize]));
        pairs
            .par_chunks(1 << 14)
            .map(|chunk| {
                let mut stats = PairListStats {
                    pairs: chunk.len() as u64,
                    ..PairListStats::default()
                };
                for &[i, j] in chunk {
                    // Each term is below 2^33, so one reduction per term keeps the sum in range.
                    stats.checksum = checksum_add(stats.checksum, orig(i) + orig(j));
                    stats.misordered += u64::from(i >= j);
                }
                stats
            })
            .reduce(PairListStats::default, |a, b| PairListStats {
                pairs: a.pairs + b.pairs,
                checksum: checksum_add(a.checksum, b.checksum),
                misordered: a.misordered + b.misordered,
            })
    }

    /// Whether every pair is listed as `i < j`.
    pub fn is_consistent(&self) -> bool {
        self.misordered == 0 && self.checksum < CHECKSUM_MODULUS
    }
}

/// Boxes that stress the closed-interval rule, shuffled: a lattice of unit boxes sharing faces,
/// edges and corners at negative coordinates, copies of lattice boxes, zero-size boxes on
/// lattice faces, edges and corners, and random boxes with zero extent on some axes.
#[cfg(test)]
pub(crate) fn degenerate_boxes(seed: u64) -> Vec<Aabb<f32>> {
    let mut rng = crate::rng::Rng::new(seed);
    let mut boxes = Vec::new();
    for k in 0..125 {
        let min = [k % 5, (k / 5) % 5, k / 25].map(|c| c as f32 - 3.0);
        boxes.push(Aabb {
            min,
            max: min.map(|c| c + 1.0),
        });
    }
    for _ in 0..20 {
        boxes.push(boxes[rng.below(125)]);
        let p = [0; 3].map(|_| (rng.below(11) as f32) * 0.5 - 3.0);
        boxes.push(Aabb { min: p, max: p });
    }
    for _ in 0..200 {
        let min = [0; 3].map(|_| rng.uniform(-4.0, 3.0) as f32);
        let size = [0; 3].map(|_| {
            if rng.below(3) == 0 {
                0.0
            } else {
                rng.uniform(0.0, 1.5) as f32
            }
        });
        boxes.push(Aabb {
            min,
            max: [0, 1, 2].map(|a| min[a] + size[a]),
        });
    }
    rng.shuffle(&mut boxes);
    boxes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::checksum_of_pairs;

    #[test]
    fn touching_boxes_overlap_and_separated_ones_do_not() {
        let unit = Aabb {
            min: [0.0f32; 3],
            max: [1.0; 3],
        };
        let face = Aabb {
            min: [1.0, 0.0, 0.0],
            max: [2.0, 1.0, 1.0],
        };
        let corner = Aabb {
            min: [1.0; 3],
            max: [1.0; 3],
        };
        let apart = Aabb {
            min: [1.0 + f32::EPSILON * 2.0, 0.0, 0.0],
            max: [2.0, 1.0, 1.0],
        };
        assert!(overlaps(&unit, &face) && overlaps(&face, &unit));
        assert!(overlaps(&unit, &corner) && overlaps(&corner, &corner));
        assert!(!overlaps(&unit, &apart) && !overlaps(&apart, &unit));
    }

    #[test]
    fn stats_match_the_checksum_helper() {
        let pairs: Vec<[u32; 2]> = (0..100_000u32).map(|k| [k, k + 7]).collect();
        let stats = PairListStats::of(&pairs);
        assert_eq!(stats.pairs, 100_000);
        assert_eq!(
            stats.checksum,
            checksum_of_pairs(pairs.iter().map(|p| (p[0], p[1])))
        );
        assert!(stats.is_consistent());
        assert_eq!(PairListStats::of(&[[3, 3], [4, 2]]).misordered, 2);
        // Mapped, the checksum is the input's and the order is still the lister's.
        let map = [5u32, 4, 3, 2, 1, 7];
        let mapped = PairListStats::of_mapped(&[[0, 1], [2, 5]], Some(&map));
        assert_eq!(mapped.checksum, (5 + 4) + (3 + 7));
        assert_eq!(mapped.misordered, 0);
    }
}
