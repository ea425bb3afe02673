//! Point scenes: named point sets with their radius, and the generators that make them.

use hhg_core::Real;
use hhg_core::building_blocks::{CELL_MARGIN, LATTICE_SHIFT};

use crate::{SplitMix64, TestReal};

/// A named point set with its search radius.
#[derive(Clone, Debug)]
pub struct Scene<T> {
    /// What the scene is, for messages.
    pub name: String,
    /// The points, in the caller's numbering.
    pub points: Vec<[T; 3]>,
    /// The search radius.
    pub radius: T,
}

impl<T: TestReal> Scene<T> {
    /// Converts `f64` points (rounding to nearest) into a scene of `T`.
    pub fn new(name: impl Into<String>, points: &[[f64; 3]], radius: f64) -> Self {
        Self {
            name: format!("{} ({}, n = {})", name.into(), T::NAME, points.len()),
            points: to_real(points),
            radius: T::from_f64(radius),
        }
    }
}

/// Rounds `f64` points to `T`.
pub fn to_real<T: Real>(points: &[[f64; 3]]) -> Vec<[T; 3]> {
    points.iter().map(|p| p.map(T::from_f64)).collect()
}

/// `n` points uniform in the box `min..max` (an axis with `min == max` is degenerate).
pub fn uniform_box(rng: &mut SplitMix64, n: usize, min: [f64; 3], max: [f64; 3]) -> Vec<[f64; 3]> {
    (0..n)
        .map(|_| std::array::from_fn(|a| rng.range(min[a], max[a])))
        .collect()
}

/// The edge of a cube holding `n` uniform points with about `neighbours` neighbours each
/// within `radius`.
pub fn cube_edge(n: usize, radius: f64, neighbours: f64) -> f64 {
    let volume = n as f64 * (4.0 / 3.0) * std::f64::consts::PI * radius.powi(3) / neighbours;
    volume.cbrt()
}

/// `n` points uniform in a cube centred at `centre` with about `neighbours` neighbours each.
pub fn uniform_cube(
    rng: &mut SplitMix64,
    n: usize,
    centre: [f64; 3],
    radius: f64,
    neighbours: f64,
) -> Vec<[f64; 3]> {
    let half = cube_edge(n.max(1), radius, neighbours) / 2.0;
    uniform_box(rng, n, centre.map(|c| c - half), centre.map(|c| c + half))
}

/// Gaussian clusters `(count, sigma)` with centres uniform in `[0, side)^3`.
pub fn gaussian_clusters(
    rng: &mut SplitMix64,
    clusters: &[(usize, f64)],
    side: f64,
) -> Vec<[f64; 3]> {
    let mut points = Vec::new();
    for &(count, sigma) in clusters {
        let centre: [f64; 3] = std::array::from_fn(|_| rng.range(0.0, side));
        for _ in 0..count {
            points.push(std::array::from_fn(|a| centre[a] + sigma * rng.gaussian()));
        }
    }
    points
}

/// `count` points exactly where cells start for radius `r`: `x` and `y` at
/// `(k + LATTICE_SHIFT) * cell` for whole `k` in `0..cells`, with `cell = r * (1 + CELL_MARGIN)`
/// hhg-core's cell edge, and `z` anywhere in those `cells` cells; about a third of them again,
/// moved by exactly `r` along x; and the origin, which pins the box's minimum. Shuffled.
///
/// The cell-border scene of hhg-core's differential tests, hhg-xor's and hhg-group's scenes.
pub fn points_on_cell_borders(
    rng: &mut SplitMix64,
    count: usize,
    r: f64,
    cells: usize,
) -> Vec<[f64; 3]> {
    let cell = r * (1.0 + CELL_MARGIN);
    let border = |k: f64| (k + LATTICE_SHIFT) * cell;
    let mut points = Vec::new();
    for _ in 0..count {
        // Three draws, of which z's is unused, so that the scenes stay those the tests had
        // before they shared this generator.
        let k: [f64; 3] = std::array::from_fn(|_| rng.below(cells) as f64);
        let p = [
            border(k[0]),
            border(k[1]),
            rng.range(0.0, cells as f64 * cell),
        ];
        points.push(p);
        if rng.below(3) == 0 {
            points.push([p[0] + r, p[1], p[2]]);
        }
    }
    points.push([0.0; 3]);
    shuffle(rng, &mut points);
    points
}

/// A `counts[0] x counts[1] x counts[2]` lattice with the given spacing from `origin`.
pub fn lattice(counts: [usize; 3], spacing: f64, origin: [f64; 3]) -> Vec<[f64; 3]> {
    let mut points = Vec::with_capacity(counts.iter().product());
    for k in 0..counts[2] {
        for j in 0..counts[1] {
            for i in 0..counts[0] {
                points.push([
                    origin[0] + i as f64 * spacing,
                    origin[1] + j as f64 * spacing,
                    origin[2] + k as f64 * spacing,
                ]);
            }
        }
    }
    points
}

/// Shuffles in place (Fisher-Yates), so that the caller's numbering is not spatial.
pub fn shuffle<V>(rng: &mut SplitMix64, values: &mut [V]) {
    for i in (1..values.len()).rev() {
        values.swap(i, rng.below(i + 1));
    }
}
