//! Property-based tests (proptest, with shrinking) of the group scheme against brute force:
//! `GroupScheme` on small random scenes from hhg-testkit's strategies, with several
//! candidate counts and bucket fractions (down to heavy sharing), both kernels and 1 and 3
//! threads.
//!
//! Cases: `group_f32` and `group_f64` 256 each.

use hhg_core::{FixedRadiusScheme, Kernel, NeighborLists, PairList};
use hhg_group::{GroupConfig, GroupScheme};
use hhg_testkit::strategies::{Cloud, cloud};
use hhg_testkit::{
    TestReal, assert_same_seq, check_lists, check_pairs, in_pool, oracle_pairs, oracle_point,
    oracle_self, to_real,
};
use proptest::prelude::*;
use proptest::sample::select;

/// Checks the group scheme with `candidates` and `fraction` against the oracle (pairs, the
/// visitor, lists, queries at the points and beside them), and that both kernels and 1 and 3
/// threads give the same pairs in the same order and the same lists.
fn check<T: TestReal>(cloud: &Cloud, candidates: usize, fraction: f64) {
    let points: Vec<[T; 3]> = to_real(&cloud.points);
    let radius = T::from_f64(cloud.radius);
    let expected_pairs = oracle_pairs(&points, radius);
    let expected_lists = oracle_self(&points, radius);
    let mut reference = None;
    for kernel in [Kernel::Simd, Kernel::Scalar] {
        for threads in [1, 3] {
            let what = format!("group {candidates}/{fraction} ({kernel:?}, {threads} threads)");
            let got = in_pool(threads, || {
                let config = GroupConfig {
                    candidates,
                    bucket_fraction: fraction,
                    kernel,
                };
                let mut scheme = GroupScheme::with_config(radius, config).unwrap();
                scheme.build(&points).unwrap();
                let mut pairs = PairList::default();
                scheme.pairs(&mut pairs).unwrap();
                check_pairs(&format!("{what}: pairs"), pairs.pairs(), &expected_pairs);
                let mut visited = Vec::new();
                scheme.for_each_pair(&mut |i, j| visited.push([i, j]));
                assert_same_seq(&format!("{what}: visitor"), &visited, pairs.pairs());
                let mut lists = NeighborLists::default();
                scheme.neighbor_lists(&mut lists).unwrap();
                check_lists(&format!("{what}: lists"), &lists, &expected_lists);
                let mut found = Vec::new();
                for p in points.iter().step_by(5) {
                    for q in [*p, p.map(|v| T::from_f64(v.to_f64() + cloud.radius / 3.0))] {
                        scheme.query_point(q, &mut found).unwrap();
                        assert_eq!(
                            found,
                            oracle_point(&points, q, radius),
                            "{what}: query {q:?}"
                        );
                    }
                }
                (pairs.pairs().to_vec(), lists.indices().to_vec())
            });
            match &reference {
                None => reference = Some(got),
                Some((pairs, lists)) => {
                    assert_same_seq(
                        &format!("{what}: pairs against SIMD, 1 thread"),
                        &got.0,
                        pairs,
                    );
                    assert_same_seq(
                        &format!("{what}: lists against SIMD, 1 thread"),
                        &got.1,
                        lists,
                    );
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(hhg_testkit::strategies::config(256))]

    #[test]
    fn group_f32(
        cloud in cloud(false),
        (candidates, fraction) in select(vec![(3, 0.2), (4, 0.2), (3, 0.002), (4, 0.0001), (1, 0.2)]),
    ) {
        check::<f32>(&cloud, candidates, fraction);
    }

    #[test]
    fn group_f64(
        cloud in cloud(true),
        (candidates, fraction) in select(vec![(3, 0.2), (4, 0.2), (3, 0.002), (4, 0.0001), (1, 0.2)]),
    ) {
        check::<f64>(&cloud, candidates, fraction);
    }
}
