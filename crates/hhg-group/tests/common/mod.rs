//! hhg-group's own helpers of the integration tests: the scenes and query points every operation is checked on (the shared helpers are in hhg-testkit).
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use hhg_core::Real;
use hhg_testkit::{
    Scene, SplitMix64, TestReal, gaussian_clusters, lattice, points_on_cell_borders, shuffle,
    uniform_box, uniform_cube,
};

/// The scenes every operation is checked on, each with its radius: uniform, Gaussian
/// clusters, a lattice with pairs at exactly `r`, points on cell borders, negative and
/// 1e6-scale coordinates, all points in one cell, a far outlier, coincident points, and the
/// empty and one-point sets.
pub fn scenes<T: TestReal>(seed: u64) -> Vec<Scene<T>> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    out.push(Scene::new(
        "uniform",
        &uniform_cube(&mut rng, 2000, [0.0; 3], 1.0, 30.0),
        1.0,
    ));
    out.push(Scene::new(
        "gaussian clusters",
        &gaussian_clusters(&mut rng, &[(700, 0.8), (500, 2.0), (300, 0.2)], 12.0),
        0.5,
    ));
    // Integer lattice with spacing r: axis neighbours are exactly r apart in both precisions.
    let mut points = lattice([11, 10, 9], 1.0, [-3.0, 2.0, 5.0]);
    shuffle(&mut rng, &mut points);
    out.push(Scene::new("lattice at exactly r", &points, 1.0));
    // Points on and one ulp around the cell borders (`(k + LATTICE_SHIFT) * edge`) in x or y.
    let mut points = points_on_cell_borders(&mut rng, 600, 0.75, 8);
    for p in &mut points {
        let axis = rng.below(2);
        p[axis] = match rng.below(3) {
            0 => p[axis].next_up(),
            1 => p[axis].next_down().max(0.0),
            _ => p[axis],
        };
    }
    out.push(Scene::new("cell borders", &points, 0.75));
    out.push(Scene::new(
        "negative and 1e6-scale",
        &uniform_cube(&mut rng, 1500, [-1.0e6, 2.5e6, -3.0e6], 40.0, 30.0),
        40.0,
    ));
    out.push(Scene::new(
        "all in one cell",
        &uniform_box(&mut rng, 300, [2.0; 3], [2.9; 3]),
        1.0,
    ));
    let mut points = uniform_cube(&mut rng, 1500, [0.0; 3], 1.0, 25.0);
    points.push([4.0e5, -3.0e5, 1.0e5]);
    points.push([4.0e5 + 0.5, -3.0e5, 1.0e5]);
    out.push(Scene::new("far outlier", &points, 1.0));
    let mut points = uniform_box(&mut rng, 200, [0.0; 3], [6.0; 3]);
    let copy = points[..40].to_vec();
    points.extend(copy);
    points.extend(std::iter::repeat_n([1.0, 1.0, 1.0], 20));
    shuffle(&mut rng, &mut points);
    out.push(Scene::new("coincident points", &points, 0.6));
    out.push(Scene::new("empty", &[], 1.0));
    out.push(Scene::new("one point", &[[1.0, 2.0, 3.0]], 1.0));
    out
}

/// Query points for a scene: every 7th point of the set, points near it, and random points
/// in and far around its bounding box.
pub fn queries<T: TestReal>(rng: &mut SplitMix64, points: &[[T; 3]], radius: T) -> Vec<[T; 3]> {
    let mut out: Vec<[T; 3]> = points.iter().step_by(7).copied().collect();
    let r = radius.to_f64();
    let (mut lo, mut hi) = ([0.0f64; 3], [1.0f64; 3]);
    if let Some(first) = points.first() {
        lo = first.map(Real::to_f64);
        hi = lo;
        for p in points {
            for a in 0..3 {
                lo[a] = lo[a].min(p[a].to_f64());
                hi[a] = hi[a].max(p[a].to_f64());
            }
        }
    }
    for p in points.iter().step_by(13) {
        out.push(std::array::from_fn(|a| {
            T::from_f64(p[a].to_f64() + rng.range(-r, r))
        }));
    }
    for _ in 0..40 {
        out.push(std::array::from_fn(|a| {
            T::from_f64(rng.range(lo[a] - 3.0 * r, hi[a] + 3.0 * r))
        }));
    }
    out.push(std::array::from_fn(|a| T::from_f64(hi[a] + 1.0e7 * r)));
    out.push(std::array::from_fn(|a| T::from_f64(lo[a] - 1.0e7 * r)));
    out
}
