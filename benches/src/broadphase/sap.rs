//! The sort-and-sweep peer: Pierre Terdiman's box pruning, with an 8-lane SIMD inner test.
//!
//! The boxes are sorted by `min.x` (an LSD radix sort of the `f32` keys mapped to order-preserving
//! `u32` bits, with the box index in the low half of each `u64` entry, so ties keep input order)
//! and copied into structure-of-arrays columns in that order. The sweep then visits the sorted
//! boxes in parallel chunks: box `i` is tested against the boxes after it while their `min.x`
//! does not exceed its `max.x`, eight at a time with `wide::f32x8`, and the `y` and `z` overlap
//! tests decide which of the eight are pairs. Every pair is thus tested exactly once, from the
//! box that sorts first.
//!
//! The boxes must have `min <= max` on every axis, no NaN, no `min` of `+inf` and no `max` of
//! `-inf` (the rule of `hhg_core::broad`); infinite bounds are accepted otherwise. The sweep
//! relies on `max.x >= min.x` and stops at padding lanes whose `min.x` is `+inf`: a box reaching
//! to `x = +inf` sweeps up to `f32::MAX`, which every real lower bound lies below.

use rayon::prelude::*;
use wide::f32x8;

use crate::broadphase::Aabb;

/// SIMD lanes of the inner test, and the padding after the sorted columns.
const LANES: usize = 8;

/// Sorted boxes per parallel sweep task.
const CHUNK: usize = 2048;

/// Bits per radix-sort digit; three digits cover the 32-bit key.
const RADIX_BITS: u32 = 11;

/// Buckets per radix-sort digit.
const RADIX: usize = 1 << RADIX_BITS;

/// Maps an `f32` to `u32` bits whose unsigned order is the float's total order.
#[inline]
fn order_bits(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The sort-and-sweep broad phase with its reusable buffers.
#[derive(Clone, Debug, Default)]
pub struct SweepAndPrune {
    /// `key << 32 | index`, sorted by [`SweepAndPrune::update`].
    entries: Vec<u64>,
    /// The radix sort's second buffer.
    scratch: Vec<u64>,
    /// The sorted boxes' coordinates, one column per bound, padded by [`LANES`] entries.
    min_x: Vec<f32>,
    max_x: Vec<f32>,
    min_y: Vec<f32>,
    max_y: Vec<f32>,
    min_z: Vec<f32>,
    max_z: Vec<f32>,
    /// The input index of each sorted box.
    ids: Vec<u32>,
    /// One pair buffer per sweep task, kept across steps.
    found: Vec<Vec<[u32; 2]>>,
}

impl SweepAndPrune {
    /// Creates an empty broad phase.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sorts `boxes` by `min.x` and fills the sorted columns.
    ///
    /// # Panics
    ///
    /// If there are more than `u32::MAX` boxes.
    pub fn update(&mut self, boxes: &[Aabb<f32>]) {
        let n = boxes.len();
        assert!(u32::try_from(n).is_ok(), "too many boxes for u32 indices");
        debug_assert!(
            boxes.iter().all(|b| (0..3).all(|a| b.min[a] <= b.max[a]
                && b.min[a] != f32::INFINITY
                && b.max[a] != f32::NEG_INFINITY)),
            "boxes must have min <= max, no NaN, no min of +inf and no max of -inf"
        );
        self.entries.clear();
        self.entries.par_extend(
            boxes
                .par_iter()
                .enumerate()
                .map(|(i, b)| (u64::from(order_bits(b.min[0])) << 32) | i as u64),
        );
        radix_sort_high_half(&mut self.entries, &mut self.scratch);

        let len = n + LANES;
        for column in [
            &mut self.min_x,
            &mut self.max_x,
            &mut self.min_y,
            &mut self.max_y,
            &mut self.min_z,
            &mut self.max_z,
        ] {
            // Padding: `+inf` lower bounds stop the sweep and fail every overlap test.
            column.resize(len, f32::INFINITY);
            column[n..].fill(f32::INFINITY);
        }
        self.ids.resize(len, u32::MAX);
        (
            &mut self.min_x[..n],
            &mut self.max_x[..n],
            &mut self.min_y[..n],
            &mut self.max_y[..n],
            &mut self.min_z[..n],
            &mut self.max_z[..n],
            &mut self.ids[..n],
            &self.entries[..],
        )
            .into_par_iter()
            .with_min_len(4096)
            .for_each(|(lx, hx, ly, hy, lz, hz, id, &entry)| {
                let i = entry as u32;
                let b = &boxes[i as usize];
                (*lx, *hx, *ly, *hy, *lz, *hz) =
                    (b.min[0], b.max[0], b.min[1], b.max[1], b.min[2], b.max[2]);
                *id = i;
            });
    }

    /// Writes every overlapping pair of the boxes of the last [`SweepAndPrune::update`] into
    /// `out` (cleared first), each once as `[i, j]` with `i < j`, in a deterministic order.
    pub fn pairs(&mut self, out: &mut Vec<[u32; 2]>) {
        let n = self.ids.len().saturating_sub(LANES);
        let tasks = n.div_ceil(CHUNK);
        self.found
            .resize_with(tasks.max(self.found.len()), Vec::new);
        let columns = Columns {
            min_x: &self.min_x,
            max_x: &self.max_x,
            min_y: &self.min_y,
            max_y: &self.max_y,
            min_z: &self.min_z,
            max_z: &self.max_z,
            ids: &self.ids,
        };
        self.found[..tasks]
            .par_iter_mut()
            .enumerate()
            .for_each(|(t, found)| {
                found.clear();
                for i in t * CHUNK..((t + 1) * CHUNK).min(n) {
                    columns.sweep(i, found);
                }
            });
        out.clear();
        out.reserve(self.found[..tasks].iter().map(Vec::len).sum());
        for found in &self.found[..tasks] {
            out.extend_from_slice(found);
        }
    }

    /// Heap bytes held by the sort buffers, the sorted columns and the per-task pair buffers.
    pub fn heap_bytes(&self) -> usize {
        let columns = [
            &self.min_x,
            &self.max_x,
            &self.min_y,
            &self.max_y,
            &self.min_z,
            &self.max_z,
        ];
        (self.entries.capacity() + self.scratch.capacity()) * size_of::<u64>()
            + columns.iter().map(|c| c.capacity()).sum::<usize>() * size_of::<f32>()
            + self.ids.capacity() * size_of::<u32>()
            + self.found.capacity() * size_of::<Vec<[u32; 2]>>()
            + self
                .found
                .iter()
                .map(|f| f.capacity() * size_of::<[u32; 2]>())
                .sum::<usize>()
    }
}

/// The sorted columns, borrowed for the sweep.
struct Columns<'a> {
    min_x: &'a [f32],
    max_x: &'a [f32],
    min_y: &'a [f32],
    max_y: &'a [f32],
    min_z: &'a [f32],
    max_z: &'a [f32],
    ids: &'a [u32],
}

impl Columns<'_> {
    /// Eight consecutive entries of a column from `j` on.
    #[inline(always)]
    fn lanes(column: &[f32], j: usize) -> f32x8 {
        let block: [f32; LANES] = column[j..j + LANES]
            .try_into()
            .expect("the slice has LANES entries");
        f32x8::from(block)
    }

    /// Pushes the pairs of sorted box `i` with the boxes sorted after it.
    #[inline]
    fn sweep(&self, i: usize, found: &mut Vec<[u32; 2]>) {
        // The padding's `+inf` lies above the stop even for a box that reaches `+inf`.
        let stop = f32x8::splat(self.max_x[i].min(f32::MAX));
        let (lo_y, hi_y) = (f32x8::splat(self.min_y[i]), f32x8::splat(self.max_y[i]));
        let (lo_z, hi_z) = (f32x8::splat(self.min_z[i]), f32x8::splat(self.max_z[i]));
        let id = self.ids[i];
        let mut j = i + 1;
        loop {
            // The lanes with `min.x <= max.x[i]` form a prefix, since the column is sorted; the
            // padding's `+inf` ends the prefix before the columns end.
            let in_x = Self::lanes(self.min_x, j).simd_le(stop);
            let in_y =
                Self::lanes(self.min_y, j).simd_le(hi_y) & Self::lanes(self.max_y, j).simd_ge(lo_y);
            let in_z =
                Self::lanes(self.min_z, j).simd_le(hi_z) & Self::lanes(self.max_z, j).simd_ge(lo_z);
            let mut hits = (in_x & in_y & in_z).to_bitmask();
            while hits != 0 {
                let other = self.ids[j + hits.trailing_zeros() as usize];
                found.push(if id < other { [id, other] } else { [other, id] });
                hits &= hits - 1;
            }
            if in_x.to_bitmask() != (1 << LANES) - 1 {
                return;
            }
            j += LANES;
        }
    }
}

/// Sorts `entries` by their upper 32 bits, stably, with three LSD radix passes.
///
/// All three digit histograms are counted in one pass; a digit that is the same for every entry
/// needs no pass.
fn radix_sort_high_half(entries: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    let n = entries.len();
    let mut counts = vec![[0usize; RADIX]; 3];
    for &e in entries.iter() {
        let key = (e >> 32) as u32;
        for (d, count) in counts.iter_mut().enumerate() {
            count[((key >> (d as u32 * RADIX_BITS)) as usize) & (RADIX - 1)] += 1;
        }
    }
    scratch.clear();
    scratch.resize(n, 0);
    for (d, count) in counts.iter_mut().enumerate() {
        if count.contains(&n) {
            continue;
        }
        let mut sum = 0;
        for c in count.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        let shift = 32 + d as u32 * RADIX_BITS;
        for &e in entries.iter() {
            let bucket = ((e >> shift) as usize) & (RADIX - 1);
            scratch[count[bucket]] = e;
            count[bucket] += 1;
        }
        std::mem::swap(entries, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::brute;
    use crate::broadphase::scenario::Scenario;
    use crate::rng::Rng;

    /// SAP's pairs, sorted, next to brute force's (already sorted).
    fn both(boxes: &[Aabb<f32>]) -> (Vec<[u32; 2]>, Vec<[u32; 2]>) {
        let mut sap = SweepAndPrune::new();
        sap.update(boxes);
        let mut got = Vec::new();
        sap.pairs(&mut got);
        got.sort_unstable();
        let mut want = Vec::new();
        brute::all_pairs(boxes, &mut want);
        (got, want)
    }

    #[test]
    fn order_bits_sort_like_floats() {
        let mut xs = [
            3.5f32,
            -0.0,
            0.0,
            -1e30,
            1e-40,
            -1e-40,
            f32::MIN,
            f32::MAX,
            -2.0,
        ];
        let mut by_bits = xs;
        by_bits.sort_by_key(|&x| order_bits(x));
        xs.sort_by(f32::total_cmp);
        assert_eq!(xs.map(f32::to_bits), by_bits.map(f32::to_bits));
    }

    #[test]
    fn radix_sort_is_a_stable_sort_by_key() {
        let mut rng = Rng::new(4);
        let mut entries: Vec<u64> = (0..10_000u64)
            .map(|i| (rng.next_u64() & 0xFFFF_0F00_0000_0000) | i)
            .collect();
        let mut want = entries.clone();
        want.sort_by_key(|e| e >> 32);
        radix_sort_high_half(&mut entries, &mut Vec::new());
        assert_eq!(entries, want);
    }

    #[test]
    fn agrees_with_brute_force_on_the_scenario() {
        for seed in 0..4 {
            let mut scenario = Scenario::new(1500 + 500 * seed as usize, seed);
            for _ in 0..3 {
                let (got, want) = both(scenario.boxes());
                assert!(want.len() > 1000);
                assert_eq!(got, want, "seed {seed}");
                scenario.step();
            }
        }
    }

    #[test]
    fn agrees_with_brute_force_on_degenerate_boxes() {
        for seed in [17, 18, 19] {
            let boxes = crate::broadphase::degenerate_boxes(seed);
            let (got, want) = both(&boxes);
            assert!(want.len() > 1500, "{}", want.len());
            assert_eq!(got, want);
        }
        // More than a lane block of boxes with the same `min.x`.
        let stack: Vec<Aabb<f32>> = (0..40)
            .map(|k| Aabb {
                min: [-1.0, k as f32, 0.0],
                max: [-1.0, k as f32 + 1.0, 0.0],
            })
            .collect();
        let (got, want) = both(&stack);
        assert_eq!(want.len(), 39);
        assert_eq!(got, want);
        assert_eq!(both(&[]), (vec![], vec![]));
        assert_eq!(both(&stack[..1]), (vec![], vec![]));
    }

    #[test]
    fn buffers_are_reused_across_steps() {
        let mut scenario = Scenario::new(3000, 1);
        let mut sap = SweepAndPrune::new();
        let mut out = Vec::new();
        sap.update(scenario.boxes());
        sap.pairs(&mut out);
        let bytes = sap.heap_bytes();
        assert!(bytes > 3000 * 40);
        for _ in 0..5 {
            scenario.step();
            sap.update(scenario.boxes());
            sap.pairs(&mut out);
            let mut want = Vec::new();
            brute::all_pairs(scenario.boxes(), &mut want);
            out.sort_unstable();
            assert_eq!(out, want);
        }
        // Shrinking input keeps correct padding.
        sap.update(&scenario.boxes()[..100]);
        sap.pairs(&mut out);
        let mut want = Vec::new();
        brute::all_pairs(&scenario.boxes()[..100], &mut want);
        out.sort_unstable();
        assert_eq!(out, want);
    }
}
