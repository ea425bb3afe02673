//! The brute-force engine: every pair tested with the exact predicate, in open space and, by
//! the minimum-image rule, in a periodic box; the reference of every small scene.

use std::time::Instant;

use rayon::prelude::*;

use crate::pairs::within;

use super::output::{Csr, Lists, Output};
use super::{Radius, neighbours};

/// The pair `a`, `b` in the periodic box of edge `lengths` at its minimum image: the two
/// positions to measure and the shift `s` of `b` (`b + s L` is the image nearest `a`). Per
/// axis, of `s = 0`, `-1` and `1` (in that order, a later one only when strictly nearer), with
/// `s = 1` measured as `a` against `b + L` and `s = -1` as `a + L` against `b` (each rounded
/// to f32): the point below is moved up, so the distance is the same from either side (hhg's
/// `PeriodicBox::image_distance_squared`). Both points must lie in the box.
pub fn minimum_image(
    a: &[f32; 3],
    b: &[f32; 3],
    lengths: [f32; 3],
) -> ([f32; 3], [f32; 3], [i32; 3]) {
    let (mut from, mut to) = (*a, *b);
    let mut shift = [0i32; 3];
    for axis in 0..3 {
        let (x, y, l) = (a[axis], b[axis], lengths[axis]);
        let mut best = (x - y).abs();
        for (s, moved_a, moved_b) in [(-1i32, x + l, y), (1, x, y + l)] {
            if (moved_a - moved_b).abs() < best {
                best = (moved_a - moved_b).abs();
                (from[axis], to[axis], shift[axis]) = (moved_a, moved_b, s);
            }
        }
    }
    (from, to, shift)
}

/// Brute force in a periodic box: every pair `i < j` tested once, by the exact predicate on
/// `xi` and the minimum image of `xj`, parallel over `i`; the pairs keep their shifts.
pub(super) fn run_brute_periodic(points: &[[f32; 3]], radius: f32, lengths: [f32; 3]) -> Output {
    let r2 = radius * radius;
    let start = Instant::now();
    let pairs: Vec<(u32, u32, [i32; 3])> = (0..points.len())
        .into_par_iter()
        .flat_map_iter(|i| {
            (i + 1..points.len()).filter_map(move |j| {
                let (from, to, shift) = minimum_image(&points[i], &points[j], lengths);
                within(&from, &to, r2).then_some((i as u32, j as u32, shift))
            })
        })
        .collect();
    let done = Instant::now();
    Output {
        build_s: 0.0,
        query_s: (done - start).as_secs_f64(),
        lists: Lists::Shifted {
            n: points.len(),
            pairs,
        },
    }
}

/// Brute force: every point is tested against every other, parallel over the query point.
pub(super) fn run_brute(points: &[[f32; 3]], radius: Radius<'_>) -> Output {
    let r = radius.max();
    let r2 = r * r;
    let start = Instant::now();
    let csr = Csr::fill_parallel(points.len(), |i, out| {
        for j in 0..points.len() {
            if neighbours(points, radius, r2, i, j) && j != i {
                out.push(j as u32);
            }
        }
    });
    let done = Instant::now();
    Output {
        build_s: 0.0,
        query_s: (done - start).as_secs_f64(),
        lists: Lists::Csr(csr),
    }
}
