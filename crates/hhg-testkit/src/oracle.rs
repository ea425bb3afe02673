//! Brute-force oracles: every answer by testing every pair.

use hhg_core::Real;
use hhg_core::broad::{RadiusRule, sphere_pair_within};
use hhg_core::periodic::{PeriodicBox, PeriodicPair};

/// The neighbour predicate, exactly as the contract states it.
#[inline]
pub fn within<T: Real>(p: [T; 3], q: [T; 3], radius: T) -> bool {
    T::distance_squared(p, q) <= radius * radius
}

/// Brute force: for every point `i`, every `j != i` within the radius, ascending.
pub fn oracle_self<T: Real>(points: &[[T; 3]], radius: T) -> Vec<Vec<u32>> {
    (0..points.len())
        .map(|i| {
            (0..points.len())
                .filter(|&j| j != i && within(points[i], points[j], radius))
                .map(|j| j as u32)
                .collect()
        })
        .collect()
}

/// Brute force: for every searching point, every searched point within the radius, ascending.
pub fn oracle_cross<T: Real>(
    searching: &[[T; 3]],
    searched: &[[T; 3]],
    radius: T,
) -> Vec<Vec<u32>> {
    searching
        .iter()
        .map(|&p| {
            (0..searched.len())
                .filter(|&j| within(p, searched[j], radius))
                .map(|j| j as u32)
                .collect()
        })
        .collect()
}

/// Brute force: every pair `i < j` within the radius, in lexicographic order.
pub fn oracle_pairs<T: Real>(points: &[[T; 3]], radius: T) -> Vec<[u32; 2]> {
    let mut pairs = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            if within(points[i], points[j], radius) {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    pairs
}

/// The neighbours of an arbitrary point by brute force, ascending.
pub fn oracle_point<T: Real>(points: &[[T; 3]], p: [T; 3], radius: T) -> Vec<u32> {
    (0..points.len() as u32)
        .filter(|&j| within(p, points[j as usize], radius))
        .collect()
}

/// Brute force over particles with their own radii: every pair `i < j` that `rule` makes
/// neighbours (by hhg-core's predicate), in lexicographic order.
pub fn oracle_sphere_pairs<T: Real, const D: usize>(
    points: &[[T; D]],
    radii: &[T],
    rule: RadiusRule,
) -> Vec<[u32; 2]> {
    let mean = rule == RadiusRule::Mean;
    let mut pairs = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            if sphere_pair_within(points[i], radii[i], points[j], radii[j], mean) {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    pairs
}

/// Brute force under periodic boundaries: every minimum-image pair, on the wrapped points, with the shift for the
/// caller's positions and the squared distance between the two images (in the input
/// precision); sorted by pair.
pub fn oracle_periodic_pairs<T: Real, const D: usize>(
    points: &[[T; D]],
    radius: T,
    domain: &PeriodicBox<T, D>,
) -> Vec<(PeriodicPair<D>, T)> {
    let wrapped: Vec<([T; D], [i64; D])> =
        points.iter().map(|&p| domain.wrap(p).unwrap()).collect();
    // Every shift of -1, 0 or 1 per axis (0 only along open axes), as a number in base 3.
    let shifts: Vec<[i64; D]> = (0..3usize.pow(D as u32))
        .map(|code| std::array::from_fn(|a| (code / 3usize.pow(a as u32) % 3) as i64 - 1))
        .filter(|s: &[i64; D]| (0..D).all(|a| domain.periodic[a] || s[a] == 0))
        .collect();
    let mut pairs = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            let mut found: Vec<([i64; D], T)> = Vec::new();
            for &s in &shifts {
                // The documented rule: per axis, the point below is moved up by L.
                let a = domain.shifted(wrapped[i].0, s.map(|v| i64::from(v < 0)));
                let b = domain.shifted(wrapped[j].0, s.map(|v| i64::from(v > 0)));
                // Summed from the first axis on: `(dx*dx + dy*dy) + dz*dz` in 3-D.
                let d2 = (1..D).fold((b[0] - a[0]) * (b[0] - a[0]), |sum, k| {
                    sum + (b[k] - a[k]) * (b[k] - a[k])
                });
                if d2 <= radius * radius {
                    found.push((s, d2));
                }
            }
            assert!(found.len() <= 1, "pair ({i}, {j}) within r in two images");
            if let Some(&(s, d2)) = found.first() {
                let shift = std::array::from_fn(|a| s[a] + wrapped[j].1[a] - wrapped[i].1[a]);
                let pair = PeriodicPair {
                    i: i as u32,
                    j: j as u32,
                    shift,
                };
                pairs.push((pair, d2));
            }
        }
    }
    pairs.sort_unstable_by_key(|&(pair, _)| pair);
    pairs
}

/// Brute force over every periodic image: each `(i, j, S)` (including `i == j` with `S != 0`,
/// and with `S` zero along open axes) whose vector `D = (x[j] - x[i]) + S . vectors` (in
/// `f64`, per component `(x[j] - x[i]) + ((S0 * a + S1 * b) + S2 * c)`) has
/// `(D0*D0 + D1*D1) + D2*D2 <= cutoff^2`; with `full`, both `(i, j, S)` and `(j, i, -S)`,
/// else the pair with `i < j`, or for `i == j` the shift whose first nonzero of
/// `S0 + S1 + S2`, `S2`, `S1` is positive. Sorted by pair, each with its vector.
///
/// Every pair's vector is that formula for the pair as listed, the mirror `(j, i, -S)`'s
/// too: `(x[i] - x[j]) + (-S) . vectors`, which is `-D` except that a zero component is
/// `+0.0` from both sides where `-D` would have `-0.0` (points on a face and their images
/// on the opposite one, an equal coordinate).
///
/// The shifts tried per pair come from the dual vectors of the periodic cell vectors (no
/// wrapping): along periodic axis `k`, `S_k = g_k . D - g_k . (x[j] - x[i])` with
/// `|g_k . D| <= |g_k| cutoff`, one more on each side for rounding.
pub fn oracle_all_images_pairs<T: Real>(
    points: &[[T; 3]],
    cutoff: f64,
    vectors: [[f64; 3]; 3],
    periodic: [bool; 3],
    full: bool,
) -> Vec<(PeriodicPair, [f64; 3])> {
    let duals = dual_vectors(vectors, periodic);
    let limit = cutoff * cutoff;
    let mut found = Vec::new();
    for i in 0..points.len() {
        for j in i..points.len() {
            let (xi, xj) = (points[i].map(T::to_f64), points[j].map(T::to_f64));
            let apart: [f64; 3] = std::array::from_fn(|c| xj[c] - xi[c]);
            let range = |k: usize| -> std::ops::RangeInclusive<i64> {
                if !periodic[k] {
                    return 0..=0;
                }
                let g = duals[k];
                let centre = -((apart[0] * g[0] + apart[1] * g[1]) + apart[2] * g[2]);
                let spread = cutoff * (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
                ((centre - spread).floor() as i64 - 1)..=((centre + spread).ceil() as i64 + 1)
            };
            for s0 in range(0) {
                for s1 in range(1) {
                    for s2 in range(2) {
                        let shift = [s0, s1, s2];
                        if i == j && shift == [0; 3] {
                            continue;
                        }
                        let d = image_vector(xi, xj, shift, vectors);
                        if (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2] > limit {
                            continue;
                        }
                        let (i, j) = (i as u32, j as u32);
                        let keep_half = i < j || {
                            let sum = s0 + s1 + s2;
                            sum > 0 || (sum == 0 && (s2 > 0 || (s2 == 0 && s1 > 0)))
                        };
                        if full || keep_half {
                            found.push((PeriodicPair { i, j, shift }, d));
                        }
                        if full && i != j {
                            let mirrored = PeriodicPair {
                                i: j,
                                j: i,
                                shift: shift.map(|v| -v),
                            };
                            found.push((mirrored, image_vector(xj, xi, mirrored.shift, vectors)));
                        }
                    }
                }
            }
        }
    }
    found.sort_unstable_by_key(|&(pair, _)| pair);
    found
}

/// The vector `(xj - xi) + shift . vectors`, per component
/// `(xj - xi) + ((S0 * a + S1 * b) + S2 * c)` in `f64`: the contract's formula, term by term.
fn image_vector(xi: [f64; 3], xj: [f64; 3], shift: [i64; 3], vectors: [[f64; 3]; 3]) -> [f64; 3] {
    let s = shift.map(|v| v as f64);
    std::array::from_fn(|c| {
        (xj[c] - xi[c]) + ((s[0] * vectors[0][c] + s[1] * vectors[1][c]) + s[2] * vectors[2][c])
    })
}

/// Per periodic axis `k`, a vector `g_k` with `g_k . vectors[l] = (k == l)` for the periodic
/// `l`, in their span (the pseudo-inverse by the Gram matrix, solved by Gauss-Jordan).
fn dual_vectors(vectors: [[f64; 3]; 3], periodic: [bool; 3]) -> [[f64; 3]; 3] {
    let axes: Vec<usize> = (0..3).filter(|&k| periodic[k]).collect();
    let p = axes.len();
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    // The Gram matrix with the identity beside it.
    let mut m = vec![vec![0.0; 2 * p]; p];
    for r in 0..p {
        for c in 0..p {
            m[r][c] = dot(vectors[axes[r]], vectors[axes[c]]);
        }
        m[r][p + r] = 1.0;
    }
    for col in 0..p {
        let pivot = (col..p)
            .max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))
            .unwrap();
        m.swap(col, pivot);
        let lead = m[col][col];
        assert!(lead != 0.0, "the periodic cell vectors are dependent");
        for v in m[col].iter_mut() {
            *v /= lead;
        }
        for r in 0..p {
            if r != col {
                let factor = m[r][col];
                for c in 0..2 * p {
                    m[r][c] -= factor * m[col][c];
                }
            }
        }
    }
    let mut duals = [[0.0; 3]; 3];
    for (r, &k) in axes.iter().enumerate() {
        for (c, &l) in axes.iter().enumerate() {
            for d in 0..3 {
                duals[k][d] += m[r][p + c] * vectors[l][d];
            }
        }
    }
    duals
}
