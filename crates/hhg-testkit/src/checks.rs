//! Exact checks of results against the oracles, and plain copies of results for comparing paths.

use std::fmt::Debug;

use hhg_core::{NeighborLists, Real};

use crate::TestReal;

/// Panics with the first position where two sequences differ (or their lengths).
pub fn assert_same_seq<V: PartialEq + Debug>(what: &str, got: &[V], expected: &[V]) {
    if let Some(k) = (0..got.len().min(expected.len())).find(|&k| got[k] != expected[k]) {
        panic!(
            "{what}: first difference at position {k}: got {:?}, expected {:?} (lengths {} and {})",
            got[k],
            expected[k],
            got.len(),
            expected.len()
        );
    }
    assert_eq!(got.len(), expected.len(), "{what}: lengths differ");
}

/// Checks the CSR structure of `lists` and that list `i` equals `expected[i]` exactly.
pub fn check_lists<T: Real>(what: &str, lists: &NeighborLists<T>, expected: &[Vec<u32>]) {
    let n = expected.len();
    assert_eq!(lists.len(), n, "{what}: number of lists");
    assert_eq!(lists.is_empty(), n == 0, "{what}: is_empty");
    let offsets = lists.offsets();
    assert_eq!(offsets.len(), n + 1, "{what}: offsets length");
    assert_eq!(offsets[0], 0, "{what}: offsets[0]");
    assert!(
        offsets.windows(2).all(|w| w[0] <= w[1]),
        "{what}: offsets are not monotone"
    );
    assert_eq!(
        offsets[n],
        lists.indices().len(),
        "{what}: offsets[n] != indices().len()"
    );
    assert_eq!(lists.total(), lists.indices().len(), "{what}: total()");
    for (i, want) in expected.iter().enumerate() {
        let got = lists.neighbors(i);
        if got != &want[..] {
            let missing: Vec<u32> = want.iter().copied().filter(|j| !got.contains(j)).collect();
            let extra: Vec<u32> = got.iter().copied().filter(|j| !want.contains(j)).collect();
            panic!(
                "{what}: list {i} differs from the oracle: {} entries instead of {}; \
                 missing {missing:?}, extra {extra:?}, got {got:?}",
                got.len(),
                want.len()
            );
        }
    }
    let expected_total: usize = expected.iter().map(Vec::len).sum();
    assert_eq!(lists.total(), expected_total, "{what}: total entries");
}

/// Checks that each list of `lists` excludes its own index (lists of a set against itself).
pub fn check_excludes_self<T: Real>(what: &str, lists: &NeighborLists<T>) {
    for i in 0..lists.len() {
        assert!(
            !lists.neighbors(i).contains(&(i as u32)),
            "{what}: list {i} contains the point itself"
        );
    }
}

/// Checks that the distances of `lists` equal the formula's value bit for bit.
pub fn check_list_distances<T: TestReal>(
    what: &str,
    lists: &NeighborLists<T>,
    searching: &[[T; 3]],
    searched: &[[T; 3]],
) {
    let all = lists
        .distances_squared()
        .unwrap_or_else(|| panic!("{what}: distances were requested but are missing"));
    assert_eq!(all.len(), lists.indices().len(), "{what}: distances length");
    for (i, &p) in searching.iter().enumerate() {
        let d2 = lists.neighbor_distances_squared(i).unwrap();
        for (k, &j) in lists.neighbors(i).iter().enumerate() {
            let want = T::distance_squared(p, searched[j as usize]);
            assert_eq!(
                d2[k].bits(),
                want.bits(),
                "{what}: distance of list {i}, entry {j}: got {:?}, expected {:?}",
                d2[k],
                want
            );
        }
    }
}

/// Checks unique pairs: `i < j` in each, no duplicates, the same set as `expected`
/// (which is sorted).
pub fn check_pairs(what: &str, pairs: &[[u32; 2]], expected: &[[u32; 2]]) {
    if let Some(p) = pairs.iter().find(|p| p[0] >= p[1]) {
        panic!("{what}: pair {p:?} is not ordered i < j");
    }
    let mut sorted = pairs.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        panic!("{what}: pair {:?} is reported twice", w[0]);
    }
    if sorted != expected {
        let missing: Vec<_> = expected
            .iter()
            .filter(|p| sorted.binary_search(p).is_err())
            .take(10)
            .collect();
        let extra: Vec<_> = sorted
            .iter()
            .filter(|p| expected.binary_search(p).is_err())
            .take(10)
            .collect();
        panic!(
            "{what}: {} pairs instead of {}; missing (first 10) {missing:?}, extra (first 10) {extra:?}",
            sorted.len(),
            expected.len()
        );
    }
}

/// Checks that each pair's distance equals the formula's value bit for bit.
pub fn check_pair_distances<T: TestReal>(
    what: &str,
    pairs: &[[u32; 2]],
    d2: &[T],
    points: &[[T; 3]],
) {
    assert_eq!(pairs.len(), d2.len(), "{what}: distances length");
    for (&[i, j], &d) in pairs.iter().zip(d2) {
        let want = T::distance_squared(points[i as usize], points[j as usize]);
        assert_eq!(
            d.bits(),
            want.bits(),
            "{what}: distance of pair ({i}, {j}): got {d:?}, expected {want:?}"
        );
    }
}

/// A plain copy of neighbour lists, for comparing results across paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Csr {
    /// The offsets.
    pub offsets: Vec<usize>,
    /// The concatenated lists.
    pub indices: Vec<u32>,
    /// The distance bits, when requested.
    pub distances: Option<Vec<u64>>,
}

impl Csr {
    /// Copies `lists`.
    pub fn of<T: TestReal>(lists: &NeighborLists<T>) -> Self {
        Self {
            offsets: lists.offsets().to_vec(),
            indices: lists.indices().to_vec(),
            distances: lists
                .distances_squared()
                .map(|d| d.iter().map(|v| v.bits()).collect()),
        }
    }

    /// Panics with the first difference from `expected`.
    pub fn assert_same(&self, what: &str, expected: &Csr) {
        assert_same_seq(
            &format!("{what}: offsets"),
            &self.offsets,
            &expected.offsets,
        );
        assert_same_seq(
            &format!("{what}: indices"),
            &self.indices,
            &expected.indices,
        );
        assert_eq!(
            self.distances.is_some(),
            expected.distances.is_some(),
            "{what}: presence of distances"
        );
        if let (Some(a), Some(b)) = (&self.distances, &expected.distances) {
            assert_same_seq(&format!("{what}: distances"), a, b);
        }
    }
}
