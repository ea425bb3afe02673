//! The point orders of the particle suite besides the generator's own: a seeded shuffle, a
//! drift (or a single step's move) after hhg's cell order, and the Morton (Z) order of the
//! cells of edge `r`.
//!
//! Each order is given as a permutation `order` with `order[k]` the input index of the point
//! that comes `k`-th, as `hhg_core::reorder::apply_order` takes it and as the pair checksum
//! maps it back ([`crate::pairs::pair_stats`]). The drift also moves the points: it stands for
//! a solver that reordered its particles by cell some time steps ago.

use rayon::prelude::*;

use crate::rng::{Rng, splitmix64};

/// The largest drift offset per axis, as a fraction of the search radius: what an SPH solver's
/// particles travel in about ten time steps (a CFL number near 0.1 moves each by at most a
/// hundredth of the smoothing length per step).
pub const DRIFT_FRACTION: f32 = 0.1;

/// The largest offset per axis of a single solver step's move, as a fraction of the search
/// radius: a twentieth of [`DRIFT_FRACTION`].
pub const STEP_FRACTION: f32 = 0.005;

/// Mixed into a case's seed to draw its drift offsets, so that they do not repeat the stream
/// the scene was generated from.
const DRIFT_SALT: u64 = 0xD81F_7000_0000_0000;

/// Mixed into a seed to draw a shuffle, for the same reason.
const SHUFFLE_SALT: u64 = 0x5B0F_F1E0_0000_0000;

/// The seed of the drift offsets of a case whose points were generated from `seed`.
pub fn drift_seed(seed: u64) -> u64 {
    let mut state = seed ^ DRIFT_SALT;
    splitmix64(&mut state)
}

/// The seed of the shuffle of a case whose points were generated (or read) with `seed`.
pub fn shuffle_seed(seed: u64) -> u64 {
    let mut state = seed ^ SHUFFLE_SALT;
    splitmix64(&mut state)
}

/// A seeded random permutation of `0..n` (Fisher-Yates).
pub fn shuffled_order(n: usize, seed: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    Rng::new(seed).shuffle(&mut order);
    order
}

/// Moves every point by an offset drawn uniformly from `[-reach, reach)` on each axis (for
/// example [`DRIFT_FRACTION`] or [`STEP_FRACTION`] times the radius), in the points' order
/// from one generator seeded with `seed`.
///
/// In a periodic box `0..lengths` a moved point is wrapped back into the box (each offset is
/// far shorter than the box); a point that rounding would put on the upper face goes to the
/// lower one, which is the same place.
pub fn drift(points: &mut [[f32; 3]], reach: f32, periodic: Option<[f32; 3]>, seed: u64) {
    let reach = f64::from(reach);
    let mut rng = Rng::new(seed);
    for point in points.iter_mut() {
        for axis in 0..3 {
            let moved = point[axis] + rng.uniform(-reach, reach) as f32;
            point[axis] = match periodic {
                Some(lengths) => wrap(moved, lengths[axis]),
                None => moved,
            };
        }
    }
}

/// `x` moved by at most one box length into `[0, length)`.
fn wrap(x: f32, length: f32) -> f32 {
    let inside = if x < 0.0 {
        x + length
    } else if x >= length {
        x - length
    } else {
        x
    };
    if (0.0..length).contains(&inside) {
        inside
    } else {
        0.0
    }
}

/// Spreads the 8 bits of a byte three bits apart: bit `b` goes to bit `3 b`.
const fn spread_byte(byte: u32) -> u32 {
    let mut spread = 0;
    let mut bit = 0;
    while bit < 8 {
        spread |= ((byte >> bit) & 1) << (3 * bit);
        bit += 1;
    }
    spread
}

/// [`spread_byte`] of every byte.
const SPREAD: [u32; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = spread_byte(byte as u32);
        byte += 1;
    }
    table
};

/// Spreads the 32 bits of `v` three bits apart: bit `b` goes to bit `3 b`.
fn spread(v: u32) -> u128 {
    (0..4).fold(0u128, |acc, k| {
        acc | u128::from(SPREAD[((v >> (8 * k)) & 0xff) as usize]) << (24 * k)
    })
}

/// The Morton code of a cell: the bits of its three coordinates interleaved, `x` lowest
/// (bit `b` of `x` is bit `3 b` of the code, of `y` bit `3 b + 1`, of `z` bit `3 b + 2`).
pub fn morton_code(cell: [u32; 3]) -> u128 {
    spread(cell[0]) | spread(cell[1]) << 1 | spread(cell[2]) << 2
}

/// The permutation that sorts `points` by the Morton code of their cell of edge `edge`, cells
/// counted from the minimum of the points' bounding box; points of one cell keep their input
/// order (a stable sort).
///
/// Cell coordinates saturate at `u32::MAX` (a cloud more than four billion cells across);
/// non-finite coordinates count as cell 0.
pub fn morton_order(points: &[[f32; 3]], edge: f32) -> Vec<u32> {
    let lower = points.iter().fold([f32::INFINITY; 3], |lower, p| {
        [0, 1, 2].map(|axis| lower[axis].min(p[axis]))
    });
    let edge = f64::from(edge);
    let mut keyed: Vec<(u128, u32)> = points
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            // `as u32` saturates, and takes NaN to 0.
            let cell = [0, 1, 2]
                .map(|axis| ((f64::from(p[axis]) - f64::from(lower[axis])) / edge).floor() as u32);
            (morton_code(cell), i as u32)
        })
        .collect();
    // The index breaks ties, so this unstable sort of distinct keys is the stable sort by code.
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morton_codes_interleave_with_x_lowest() {
        assert_eq!(morton_code([0, 0, 0]), 0);
        assert_eq!(morton_code([1, 0, 0]), 0b001);
        assert_eq!(morton_code([0, 1, 0]), 0b010);
        assert_eq!(morton_code([0, 0, 1]), 0b100);
        assert_eq!(morton_code([2, 0, 0]), 0b001_000);
        assert_eq!(morton_code([3, 5, 6]), 0b110_101_011);
        // Every bit of all three coordinates lands in a place of its own.
        assert_eq!(morton_code([u32::MAX; 3]), (1u128 << 96) - 1);
        assert_eq!(morton_code([1 << 31, 0, 0]), 1u128 << 93);
        assert_eq!(morton_code([0, 0, 1 << 31]), 1u128 << 95);
    }

    #[test]
    fn morton_order_walks_the_cells_in_z_order_and_keeps_ties() {
        // Cells of edge 1 from the minimum (10, 20, 30): the points sit in cells (1, 0, 0),
        // (0, 0, 0), (0, 1, 0), (0, 0, 0), (1, 1, 0) and (0, 0, 1).
        let points = [
            [11.5, 20.5, 30.5],
            [10.0, 20.0, 30.0],
            [10.5, 21.0, 30.5],
            [10.9, 20.9, 30.9],
            [11.0, 21.0, 30.0],
            [10.5, 20.5, 31.5],
        ];
        assert_eq!(morton_order(&points, 1.0), [1, 3, 0, 2, 4, 5]);
        // Twice the edge puts everything in one cell: the input order is kept.
        assert_eq!(morton_order(&points, 2.0), [0, 1, 2, 3, 4, 5]);
        assert!(morton_order(&[], 1.0).is_empty());
        // Far and non-finite coordinates neither panic nor lose a point.
        let odd = [[0.0, 0.0, 0.0], [f32::NAN, 1.0, 1.0], [1e30, 0.0, 0.0]];
        let mut order = morton_order(&odd, 1e-6);
        order.sort_unstable();
        assert_eq!(order, [0, 1, 2]);
    }

    #[test]
    fn drift_moves_every_point_a_little_and_is_seeded() {
        let points: Vec<[f32; 3]> = (0..1000).map(|i| [i as f32 * 0.01, 0.5, -3.0]).collect();
        let mut moved = points.clone();
        let reach = DRIFT_FRACTION * 2.0;
        drift(&mut moved, reach, None, 7);
        let mut largest = 0.0f32;
        for (p, q) in points.iter().zip(&moved) {
            for axis in 0..3 {
                let d = (p[axis] - q[axis]).abs();
                assert!(d <= reach * 1.0001 + 1e-6, "{p:?} moved to {q:?}");
                largest = largest.max(d);
            }
        }
        assert!(largest > 0.9 * reach, "the offsets fill their range");
        let mut again = points.clone();
        drift(&mut again, reach, None, 7);
        assert_eq!(again, moved);
        drift(&mut again, reach, None, 8);
        assert_ne!(again, moved);
        assert_ne!(drift_seed(1), drift_seed(2));
        assert_ne!(drift_seed(1), shuffle_seed(1));
    }

    #[test]
    fn drift_in_a_periodic_box_stays_in_the_box() {
        let length = 3.0f32;
        let mut points: Vec<[f32; 3]> = (0..3000)
            .map(|i| {
                let x = [0.0, 1e-7, length - 1e-6][i % 3];
                [x, length - 1e-6, 0.0]
            })
            .collect();
        drift(&mut points, DRIFT_FRACTION, Some([length; 3]), 3);
        assert!(points.iter().flatten().all(|&c| (0.0..length).contains(&c)));
        assert_eq!(wrap(-1e-9, length), 0.0, "rounding onto the upper face");
        assert_eq!(wrap(length + 0.25, length), 0.25);
        assert_eq!(wrap(-0.25, length), length - 0.25);
    }

    #[test]
    fn shuffles_are_seeded_permutations() {
        let order = shuffled_order(500, 9);
        assert_eq!(order, shuffled_order(500, 9));
        assert_ne!(order, shuffled_order(500, 10));
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..500).collect::<Vec<u32>>());
    }
}
