//! The scheme interface of hhg-core (`CoreScheme`) against the oracle, and its statistics.

use hhg_core::{CoreScheme, Error, FixedRadiusScheme, NeighborLists, PairList, SchemeStats};
use hhg_testkit::{
    SplitMix64, TestReal, check_pairs, for_both_precisions, oracle_pairs, oracle_self, to_real,
    uniform_cube,
};

fn core_scheme_matches_the_oracle<T: TestReal>() {
    let mut rng = SplitMix64::new(31);
    let points: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 3000, [-2.0, 1.0, 0.5], 1.0, 40.0));
    let radius = T::from_f64(1.0);
    let mut scheme: Box<dyn FixedRadiusScheme<T>> = Box::new(CoreScheme::new(radius).unwrap());
    scheme.build(&points).unwrap();
    assert_eq!(scheme.name(), "core");
    assert_eq!(scheme.len(), points.len());
    let expected = oracle_pairs(&points, radius);
    let mut pairs = PairList::default();
    scheme.pairs(&mut pairs).unwrap();
    assert_eq!(pairs.distances_squared(), None);
    check_pairs("core scheme pairs", pairs.pairs(), &expected);
    let mut visited = Vec::new();
    scheme.for_each_pair(&mut |i, j| visited.push([i, j]));
    check_pairs("core scheme visitor", &visited, &expected);
    let mut lists = NeighborLists::default();
    scheme.neighbor_lists(&mut lists).unwrap();
    let lists_expected = oracle_self(&points, radius);
    for (i, want) in lists_expected.iter().enumerate() {
        assert_eq!(lists.neighbors(i), &want[..], "list {i}");
    }
    let mut got = Vec::new();
    for q in 0..50 {
        let p: [T; 3] = std::array::from_fn(|a| T::from_f64(rng.range(-4.0, 8.0 + a as f64)));
        scheme.query_point(p, &mut got).unwrap();
        let want: Vec<u32> = (0..points.len() as u32)
            .filter(|&j| T::distance_squared(p, points[j as usize]) <= radius * radius)
            .collect();
        assert_eq!(got, want, "query {q}");
    }
    let stats = scheme.stats();
    assert!(
        stats.occupied > 0 && stats.occupied <= stats.buckets,
        "{stats:?}"
    );
    assert!((stats.mean_load * stats.occupied as f64 - points.len() as f64).abs() < 1e-6);
    assert!(stats.max_load as f64 >= stats.mean_load);
    assert!(stats.pair_candidates >= pairs.len() as u64, "{stats:?}");
    // Every unique pair of the same or adjacent cells is a candidate once: far more
    // candidates than pairs, far fewer than all pairs.
    let n = points.len() as u64;
    assert!(stats.pair_candidates < n * (n - 1) / 2 / 10, "{stats:?}");
}

#[test]
fn load_statistics() {
    let stats = SchemeStats::from_starts(&[0, 2, 2, 5, 105]);
    assert_eq!(stats.buckets, 4);
    assert_eq!(stats.occupied, 3);
    assert_eq!(stats.max_load, 100);
    assert!((stats.mean_load - 35.0).abs() < 1e-12);
    let variance =
        ((2.0f64 - 35.0).powi(2) + (3.0f64 - 35.0).powi(2) + (100.0f64 - 35.0).powi(2)) / 3.0;
    assert!((stats.load_variance - variance).abs() < 1e-9);
    assert_eq!(stats.overloaded, 1);
}

for_both_precisions!(core_scheme_matches_the_oracle);

#[test]
fn lists_from_no_pairs() {
    let mut lists = NeighborLists::<f32>::default();
    lists.assign_from_pairs(0, &[]).unwrap();
    assert_eq!(lists.len(), 0);
    lists.assign_from_pairs(3, &[]).unwrap();
    assert_eq!(lists.len(), 3);
    assert!(lists.neighbors(2).is_empty());
    lists.assign_from_pairs(3, &[[0, 2]]).unwrap();
    assert_eq!(lists.neighbors(0), &[2]);
    assert_eq!(lists.neighbors(2), &[0]);
}

/// A pair with an index not below the point count is refused with an error naming the
/// first such pair, whether the sort behind the lists takes one table or two passes by group
/// (600 007 lists), and the lists are left as they were. Before, a small table panicked,
/// and two passes returned a neighbour index out of range.
#[test]
fn lists_from_pairs_refuse_an_index_out_of_range() {
    let mut lists = NeighborLists::<f32>::default();
    lists.assign_from_pairs(3, &[[0, 2], [1, 2]]).unwrap();
    let before = (lists.offsets().to_vec(), lists.indices().to_vec());
    let cases: [(usize, &[[u32; 2]], usize); 4] = [
        (3, &[[0, 3]], 0),
        (3, &[[0, 1], [7, 1], [0, 9]], 1),
        (600_007, &[[600_010, 0]], 0),
        (600_007, &[[1, 2], [0, 600_007]], 1),
    ];
    for (n, pairs, pair) in cases {
        let error = lists.assign_from_pairs(n, pairs).unwrap_err();
        assert_eq!(
            error,
            Error::PairIndexOutOfRange {
                pair,
                indices: pairs[pair],
                count: n,
            }
        );
        assert!(
            error.to_string().contains(&format!("pair {pair}")),
            "{error}"
        );
        assert_eq!((lists.offsets().to_vec(), lists.indices().to_vec()), before);
    }
    // Past the first chunks of the parallel check: the first of two bad pairs is named.
    let mut long: Vec<[u32; 2]> = (0..40_000u32).map(|k| [k % 999, 999]).collect();
    long[35_001] = [u32::MAX, 0];
    long[39_000] = [0, 1000];
    let error = lists.assign_from_pairs(1000, &long).unwrap_err();
    assert_eq!(
        error,
        Error::PairIndexOutOfRange {
            pair: 35_001,
            indices: [u32::MAX, 0],
            count: 1000,
        }
    );
    assert_eq!((lists.offsets().to_vec(), lists.indices().to_vec()), before);
    lists.assign_from_pairs(600_007, &[[600_006, 0]]).unwrap();
    assert_eq!(lists.neighbors(0), &[600_006]);
    assert_eq!(lists.neighbors(600_006), &[0]);
}

/// Lists made from a pair search equal the grid's own lists; a search whose pairs index
/// beyond the object count is refused and leaves the lists as they were.
#[test]
fn lists_from_a_pair_search() {
    let mut rng = SplitMix64::new(47);
    let points: Vec<[f64; 3]> = uniform_cube(&mut rng, 2000, [0.5, -1.0, 2.0], 1.0, 12.0);
    let mut grid = hhg_core::Grid::new(1.0).unwrap();
    grid.build(&points).unwrap();
    let mut want = NeighborLists::default();
    grid.neighbor_lists(&mut want).unwrap();
    let mut lists = NeighborLists::default();
    for _ in 0..2 {
        lists
            .assign_from_pair_search(points.len(), |pairs| grid.pairs(pairs))
            .unwrap();
        assert_eq!(lists.offsets(), want.offsets());
        assert_eq!(lists.indices(), want.indices());
    }
    let error = lists
        .assign_from_pair_search(points.len() - 1, |pairs| grid.pairs(pairs))
        .unwrap_err();
    assert!(
        matches!(error, Error::PairIndexOutOfRange { count, .. } if count == points.len() - 1),
        "{error:?}"
    );
    assert_eq!(lists.offsets(), want.offsets());
    assert_eq!(lists.indices(), want.indices());
    lists.assign_from_pair_search(0, |_| Ok(())).unwrap();
    assert_eq!((lists.len(), lists.total()), (0, 0));
}
