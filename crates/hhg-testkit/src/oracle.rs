//! Brute-force oracles: every answer by testing every pair.

use hhg_core::Real;
use hhg_core::broad::{RadiusRule, sphere_pair_within};

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
