//! The group table itself: the greedy mapping replayed independently, bucket loads and their
//! statistics against a direct count, the candidate count against a brute-force count, the
//! layout, and the balancing effect of more candidates.

use crate::common;

use std::collections::{HashMap, HashSet};

use common::scenes;
use hhg_core::{FixedRadiusScheme, Kernel, SchemeStats};
use hhg_group::{GroupConfig, GroupScheme, MAX_CANDIDATES};
use hhg_testkit::{Scene, SplitMix64, TestReal, for_both_precisions, uniform_cube};

/// Candidate counts and bucket fractions under test.
const CONFIGS: [(usize, f64); 5] = [(3, 0.2), (4, 0.2), (3, 0.002), (2, 3.0), (1, 0.2)];

/// A group scheme over the scene's points.
fn build<T: TestReal>(scene: &Scene<T>, candidates: usize, fraction: f64) -> GroupScheme<T> {
    let config = GroupConfig {
        candidates,
        bucket_fraction: fraction,
        kernel: Kernel::Simd,
    };
    let mut scheme = GroupScheme::with_config(scene.radius, config).unwrap();
    scheme.build(&scene.points).unwrap();
    scheme
}

/// Checks one build's table against direct counts.
fn check_table<T: TestReal>(what: &str, scene: &Scene<T>, scheme: &GroupScheme<T>) {
    let n = scene.points.len();
    let Some(table) = scheme.table() else {
        assert_eq!(n, 0, "{what}: no table for a non-empty set");
        assert_eq!(
            scheme.stats(),
            SchemeStats::default(),
            "{what}: stats of nothing"
        );
        assert_eq!(scheme.assignments().len(), 0);
        return;
    };
    let hasher = *scheme.hasher().unwrap();
    let g = hasher.candidates();
    let buckets = scheme.bucket_count();
    assert_eq!(
        buckets,
        scheme.config().buckets_for(n) as usize,
        "{what}: bucket count"
    );

    // The cells of the points, counted directly.
    let cells: Vec<[i32; 3]> = scene.points.iter().map(|&p| table.coords(p)).collect();
    let mut per_cell: HashMap<[i32; 3], u32> = HashMap::new();
    for &c in &cells {
        *per_cell.entry(c).or_default() += 1;
    }

    // The greedy mapping, replayed: each cell once, with its own point count, into the
    // least loaded of its candidates (the first on ties).
    let mut loads = vec![0u32; buckets];
    let mut seen = HashSet::new();
    for a in scheme.assignments() {
        assert!(
            seen.insert(a.cell),
            "{what}: cell {:?} mapped twice",
            a.cell
        );
        assert_eq!(
            Some(&a.points),
            per_cell.get(&a.cell),
            "{what}: points of {:?}",
            a.cell
        );
        let candidates = hasher.candidates_of(a.cell);
        assert!(candidates[g..].iter().all(|&b| b == 0));
        let mut best = candidates[0];
        for &b in &candidates[1..g] {
            if loads[b as usize] < loads[best as usize] {
                best = b;
            }
        }
        assert_eq!(
            a.bucket, best,
            "{what}: cell {:?} is not in its least loaded candidate",
            a.cell
        );
        loads[best as usize] += a.points;
    }
    assert_eq!(seen.len(), per_cell.len(), "{what}: distinct cells");
    assert_eq!(scheme.cell_count(), per_cell.len());
    assert_eq!(
        scheme.loads(),
        &loads[..],
        "{what}: loads against the replay"
    );

    // Loads counted point by point through the public lookup.
    let mut direct = vec![0usize; buckets];
    for &c in &cells {
        direct[scheme.bucket_of(c).expect("an occupied cell") as usize] += 1;
    }
    assert_eq!(direct.iter().sum::<usize>(), n);
    let expected = SchemeStats::from_loads(buckets, direct.iter().copied());
    assert_eq!(scheme.load_stats(), expected, "{what}: load statistics");
    let stats = scheme.stats();
    assert_eq!(stats.buckets, buckets);
    assert_eq!(stats.max_load, direct.iter().copied().max().unwrap());
    assert_eq!(stats.occupied, direct.iter().filter(|&&l| l > 0).count());
    assert_eq!(
        stats.overloaded,
        direct
            .iter()
            .filter(|&&l| l > SchemeStats::OVERLOAD)
            .count()
    );
    let mean = n as f64 / stats.occupied as f64;
    assert!(
        (stats.mean_load - mean).abs() <= 1e-9 * mean,
        "{what}: mean"
    );
    let occupied: Vec<f64> = direct
        .iter()
        .filter(|&&l| l > 0)
        .map(|&l| l as f64)
        .collect();
    let variance = occupied.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / occupied.len() as f64;
    assert!(
        (stats.load_variance - variance).abs() <= 1e-9 * (1.0 + variance),
        "{what}: variance"
    );

    // Empty cells around the occupied ones have no bucket.
    for c in per_cell.keys().take(50) {
        for d in [[-1, 0, 0], [0, 1, 0], [0, 0, 7]] {
            let other = [c[0] + d[0], c[1] + d[1], c[2] + d[2]];
            assert_eq!(
                scheme.bucket_of(other).is_some(),
                per_cell.contains_key(&other),
                "{what}: lookup of {other:?}"
            );
        }
    }

    // Candidates: every unordered pair of points in the same or adjacent cells, once.
    let mut brute = 0u64;
    for i in 0..n {
        for j in i + 1..n {
            if (0..3).all(|a| (cells[i][a] - cells[j][a]).abs() <= 1) {
                brute += 1;
            }
        }
    }
    assert_eq!(stats.pair_candidates, brute, "{what}: candidate count");

    // The layout: a permutation, the columns in its order, each cell contiguous.
    let order = scheme.order();
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    assert!(
        sorted.iter().enumerate().all(|(k, &i)| k == i as usize),
        "{what}: order"
    );
    let columns = scheme.sorted_points();
    let mut finished = HashSet::new();
    let mut current = None;
    for (k, &i) in order.iter().enumerate() {
        let p = scene.points[i as usize];
        assert_eq!(
            columns.point(k).map(|v| v.bits()),
            p.map(|v| v.bits()),
            "{what}: column {k}"
        );
        let c = cells[i as usize];
        if current != Some(c) {
            if let Some(previous) = current {
                finished.insert(previous);
            }
            assert!(
                !finished.contains(&c),
                "{what}: cell {c:?} is not contiguous"
            );
            current = Some(c);
        }
    }
}

/// Every scene and configuration: the table against direct counts.
fn table_matches_direct_counts<T: TestReal>() {
    for scene in scenes::<T>(21) {
        for (candidates, fraction) in CONFIGS {
            let scheme = build(&scene, candidates, fraction);
            check_table(
                &format!("{} g={candidates} f={fraction}", scene.name),
                &scene,
                &scheme,
            );
        }
    }
}

/// A tiny bucket fraction really makes cells share buckets (so the foreign-cell filter is
/// exercised by the differential tests), and more candidates balance the loads.
fn sharing_and_balance<T: TestReal>() {
    let mut rng = SplitMix64::new(22);
    let scene = Scene::<T>::new(
        "uniform",
        &uniform_cube(&mut rng, 20_000, [0.0; 3], 1.0, 20.0),
        1.0,
    );
    let shared = build(&scene, 3, 0.002);
    let mut cells_per_bucket = vec![0usize; shared.bucket_count()];
    for a in shared.assignments() {
        cells_per_bucket[a.bucket as usize] += 1;
    }
    assert!(
        cells_per_bucket.iter().all(|&c| c >= 10),
        "a tiny fraction should put many cells in every bucket: {cells_per_bucket:?}"
    );

    let plain = build(&scene, 1, 0.2).stats();
    let three = build(&scene, 3, 0.2).stats();
    let four = build(&scene, MAX_CANDIDATES, 0.2).stats();
    assert!(
        three.load_variance < plain.load_variance && four.load_variance < plain.load_variance,
        "candidates should flatten the loads: g=1 {plain:?}, g=3 {three:?}, g=4 {four:?}"
    );
    assert!(
        three.max_load < plain.max_load,
        "g=1 {plain:?}, g=3 {three:?}"
    );
    assert!(
        three.occupied > plain.occupied,
        "g=1 {plain:?}, g=3 {three:?}"
    );
}

/// The profile of a build names its phases, and the greedy pass is part of the total.
fn build_profile_adds_up<T: TestReal>() {
    let mut rng = SplitMix64::new(23);
    let scene = Scene::<T>::new(
        "uniform",
        &uniform_cube(&mut rng, 5000, [0.0; 3], 1.0, 20.0),
        1.0,
    );
    let scheme = build(&scene, 3, 0.2);
    let p = scheme.build_profile();
    let parts = p.validate + p.sort + p.cells + p.candidates + p.greedy + p.layout;
    assert!(parts <= p.total, "{p:?}");
    assert!((0.0..=1.0).contains(&p.greedy_share()), "{p:?}");
}

for_both_precisions!(
    table_matches_direct_counts,
    sharing_and_balance,
    build_profile_adds_up
);
