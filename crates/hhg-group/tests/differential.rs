//! Randomized differential tests: every operation of the group scheme against the
//! brute-force oracle on every scene, for both precisions, several candidate counts and
//! bucket fractions (down to heavy sharing), both kernels and several thread counts.

use crate::common;

use common::{queries, scenes};
use hhg_core::{CoreScheme, FixedRadiusScheme, Kernel, NeighborLists, PairList};
use hhg_group::{CellAssignment, GroupConfig, GroupScheme};
use hhg_testkit::{
    Scene, SplitMix64, THREAD_COUNTS, TestReal, assert_same_seq, check_lists, check_pairs,
    for_both_precisions, in_pool, oracle_pairs, oracle_point, oracle_self,
};

/// Candidate counts and bucket fractions under test: the paper's settings, plain hashing,
/// and a tiny fraction that puts many cells into each bucket.
const CONFIGS: [(usize, f64); 5] = [(3, 0.2), (4, 0.2), (3, 0.002), (4, 0.0001), (1, 0.2)];

/// A group scheme over the scene's points.
fn build<T: TestReal>(
    scene: &Scene<T>,
    candidates: usize,
    fraction: f64,
    kernel: Kernel,
) -> GroupScheme<T> {
    let config = GroupConfig {
        candidates,
        bucket_fraction: fraction,
        kernel,
    };
    let mut scheme = GroupScheme::with_config(scene.radius, config).expect("valid settings");
    scheme.build(&scene.points).expect("a valid scene");
    scheme
}

/// Everything one build reports, for comparing builds exactly.
#[derive(Debug, PartialEq)]
struct Outcome {
    pairs: Vec<[u32; 2]>,
    visited: Vec<[u32; 2]>,
    offsets: Vec<usize>,
    indices: Vec<u32>,
    queries: Vec<Vec<u32>>,
    assignments: Vec<CellAssignment>,
    order: Vec<u32>,
    loads: Vec<u32>,
    candidates: u64,
}

/// Runs every operation of a built scheme.
fn outcome<T: TestReal>(scheme: &GroupScheme<T>, queries: &[[T; 3]]) -> Outcome {
    let mut pair_list = PairList::default();
    scheme.pairs(&mut pair_list).unwrap();
    let pairs = pair_list.pairs().to_vec();
    let mut visited = Vec::new();
    scheme.for_each_pair(&mut |i, j| visited.push([i, j]));
    let mut lists = NeighborLists::default();
    scheme.neighbor_lists(&mut lists).unwrap();
    let queries = queries
        .iter()
        .map(|&q| {
            let mut out = vec![u32::MAX; 3];
            scheme.query_point(q, &mut out).expect("a finite query");
            out
        })
        .collect();
    Outcome {
        pairs,
        visited,
        offsets: lists.offsets().to_vec(),
        indices: lists.indices().to_vec(),
        queries,
        assignments: scheme.assignments().collect(),
        order: scheme.order().to_vec(),
        loads: scheme.loads().to_vec(),
        candidates: scheme.stats().pair_candidates,
    }
}

/// Every scene, every configuration, against the oracle (SIMD kernel, default pool).
fn matches_the_oracle<T: TestReal>() {
    let mut rng = SplitMix64::new(11);
    for scene in scenes::<T>(5) {
        let expected_pairs = oracle_pairs(&scene.points, scene.radius);
        let expected_lists = oracle_self(&scene.points, scene.radius);
        let queries = queries(&mut rng, &scene.points, scene.radius);
        for (candidates, fraction) in CONFIGS {
            let what = format!("{} g={candidates} f={fraction}", scene.name);
            let scheme = build(&scene, candidates, fraction, Kernel::Simd);
            assert_eq!(scheme.name(), "group");
            assert_eq!(scheme.len(), scene.points.len(), "{what}: len");
            assert_eq!(
                scheme.is_empty(),
                scene.points.is_empty(),
                "{what}: is_empty"
            );
            assert_eq!(scheme.radius().to_f64(), scene.radius.to_f64());
            let got = outcome(&scheme, &queries);
            check_pairs(&format!("{what}: pairs"), &got.pairs, &expected_pairs);
            assert_same_seq(&format!("{what}: visitor order"), &got.visited, &got.pairs);
            let mut lists = NeighborLists::default();
            scheme.neighbor_lists(&mut lists).unwrap();
            check_lists(&format!("{what}: lists"), &lists, &expected_lists);
            for (k, (&q, found)) in queries.iter().zip(&got.queries).enumerate() {
                let want = oracle_point(&scene.points, q, scene.radius);
                assert_eq!(found, &want, "{what}: query {k} at {q:?}");
            }
        }
    }
}

/// The scalar reference kernels give the same output, mapping and layout as the SIMD ones.
fn scalar_matches_simd<T: TestReal>() {
    let mut rng = SplitMix64::new(12);
    for scene in scenes::<T>(6) {
        let queries = queries(&mut rng, &scene.points, scene.radius);
        for (candidates, fraction) in CONFIGS {
            let what = format!("{} g={candidates} f={fraction}", scene.name);
            let simd = outcome(&build(&scene, candidates, fraction, Kernel::Simd), &queries);
            let scalar = outcome(
                &build(&scene, candidates, fraction, Kernel::Scalar),
                &queries,
            );
            assert!(
                simd == scalar,
                "{what}: the scalar kernels differ from the SIMD ones"
            );
        }
    }
}

/// 1, 2 and 16 threads give the same output, in the same order, and the same mapping.
fn thread_count_does_not_matter<T: TestReal>() {
    let mut rng = SplitMix64::new(13);
    let mut all = scenes::<T>(7);
    // A scene large enough for several sort parts (more than 32768 points) and many units.
    all.push(Scene::new(
        "large uniform",
        &hhg_testkit::uniform_cube(&mut rng, 40_000, [1.0, -2.0, 3.0], 1.0, 8.0),
        1.0,
    ));
    for scene in all {
        let mut queries = queries(&mut rng, &scene.points, scene.radius);
        queries.truncate(400);
        // Heavy sharing only on the small scenes: its lookups scan long bucket directories.
        let configs: &[(usize, f64)] = if scene.points.len() > 10_000 {
            &[(3, 0.2)]
        } else {
            &[(3, 0.2), (4, 0.002)]
        };
        for &(candidates, fraction) in configs {
            let what = format!("{} g={candidates} f={fraction}", scene.name);
            let reference = in_pool(1, || {
                outcome(&build(&scene, candidates, fraction, Kernel::Simd), &queries)
            });
            for threads in THREAD_COUNTS {
                let got = in_pool(threads, || {
                    outcome(&build(&scene, candidates, fraction, Kernel::Simd), &queries)
                });
                assert_same_seq(
                    &format!("{what}, {threads} threads: pairs"),
                    &got.pairs,
                    &reference.pairs,
                );
                assert_same_seq(
                    &format!("{what}, {threads} threads: mapping"),
                    &got.assignments,
                    &reference.assignments,
                );
                assert!(got == reference, "{what}: {threads} threads differ from 1");
            }
        }
    }
}

/// The same pairs, lists and queries as hhg-core's scheme on the same input.
fn agrees_with_core<T: TestReal>() {
    let mut rng = SplitMix64::new(14);
    for scene in scenes::<T>(8) {
        let queries = queries(&mut rng, &scene.points, scene.radius);
        let mut core = CoreScheme::new(scene.radius).unwrap();
        core.build(&scene.points).unwrap();
        let mut core_list = PairList::default();
        core.pairs(&mut core_list).unwrap();
        let mut core_pairs = core_list.pairs().to_vec();
        core_pairs.sort_unstable();
        let mut core_lists = NeighborLists::default();
        core.neighbor_lists(&mut core_lists).unwrap();
        let group = build(&scene, 3, 0.2, Kernel::Simd);
        let got = outcome(&group, &queries);
        let mut pairs = got.pairs.clone();
        pairs.sort_unstable();
        assert_same_seq(
            &format!("{}: pairs against core", scene.name),
            &pairs,
            &core_pairs,
        );
        assert_eq!(
            got.offsets,
            core_lists.offsets(),
            "{}: list offsets",
            scene.name
        );
        assert_eq!(
            got.indices,
            core_lists.indices(),
            "{}: list entries",
            scene.name
        );
        let mut found = Vec::new();
        for (k, (&q, mine)) in queries.iter().zip(&got.queries).enumerate() {
            core.query_point(q, &mut found).unwrap();
            assert_eq!(mine, &found, "{}: query {k}", scene.name);
        }
        let buckets = match scene.points.len() {
            0 => 0,
            n => group.config().buckets_for(n) as usize,
        };
        assert_eq!(group.stats().buckets, buckets, "{}: buckets", scene.name);
        // Every candidate of the group scheme is a pair of the same or adjacent cells, which
        // core tests too (plus, on a hashed table, foreign points).
        assert!(
            group.stats().pair_candidates <= core.stats().pair_candidates,
            "{}: {:?} against {:?}",
            scene.name,
            group.stats(),
            core.stats()
        );
    }
}

/// A rebuild over other points (more, then fewer) gives the right answers with reused buffers.
fn rebuilds_reuse_buffers<T: TestReal>() {
    let all = scenes::<T>(9);
    let mut scheme = GroupScheme::with_config(T::from_f64(1.0), GroupConfig::default()).unwrap();
    for scene in all.iter().filter(|s| s.radius.to_f64() == 1.0) {
        scheme.build(&scene.points).unwrap();
        let mut pairs = PairList::default();
        scheme.pairs(&mut pairs).unwrap();
        check_pairs(
            &scene.name,
            pairs.pairs(),
            &oracle_pairs(&scene.points, scene.radius),
        );
    }
}

for_both_precisions!(
    matches_the_oracle,
    scalar_matches_simd,
    thread_count_does_not_matter,
    agrees_with_core,
    rebuilds_reuse_buffers,
);
