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
pub fn oracle_sphere_pairs<T: Real>(
    points: &[[T; 3]],
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
pub fn oracle_periodic_pairs<T: Real>(
    points: &[[T; 3]],
    radius: T,
    domain: &PeriodicBox<T>,
) -> Vec<(PeriodicPair, T)> {
    let wrapped: Vec<([T; 3], [i64; 3])> =
        points.iter().map(|&p| domain.wrap(p).unwrap()).collect();
    let range = |a: usize| if domain.periodic[a] { -1..=1 } else { 0..=0 };
    let mut pairs = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            let mut found: Vec<([i64; 3], T)> = Vec::new();
            for sx in range(0) {
                for sy in range(1) {
                    for sz in range(2) {
                        let s = [sx, sy, sz];
                        // The documented rule: per axis, the point below is moved up by L.
                        let a = domain.shifted(wrapped[i].0, s.map(|v| i64::from(v < 0)));
                        let b = domain.shifted(wrapped[j].0, s.map(|v| i64::from(v > 0)));
                        let d2 = T::distance_squared(a, b);
                        if d2 <= radius * radius {
                            found.push((s, d2));
                        }
                    }
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
