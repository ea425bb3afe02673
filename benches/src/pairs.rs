//! The exact neighbour predicate and the pair count and checksum every engine's output is judged by.
//!
//! Two engines agree when they report the same number of unordered pairs and the same checksum:
//! the sum over unordered pairs `{i, j}` of `i + j`, modulo the Mersenne prime `2^61 - 1`, with
//! `i` and `j` the indices of the points in the input as the scene generator or file gave it.
//! In a periodic box each pair also carries its minimum-image shift `s` (`x_j + s L - x_i`
//! for `i < j`), and the checksum adds the shift's code `9 (sx + 1) + 3 (sy + 1) + (sz + 1)`
//! to each term ([`periodic_checksum`]), so a wrong shift changes it.

use rayon::prelude::*;

/// The modulus of the pair checksum, the Mersenne prime `2^61 - 1`.
pub const CHECKSUM_MODULUS: u64 = (1 << 61) - 1;

/// The exact neighbour predicate shared by every engine.
///
/// Points `a` and `b` are neighbours iff `(dx*dx + dy*dy) + dz*dz <= r2`, evaluated in `f32` in
/// exactly that order; Rust never contracts this into fused multiply-adds on its own.
#[inline(always)]
pub fn within(a: &[f32; 3], b: &[f32; 3], r2: f32) -> bool {
    let dx = a[0] - b[0];
    let dy = a[1] - b[1];
    let dz = a[2] - b[2];
    (dx * dx + dy * dy) + dz * dz <= r2
}

/// Reduces a value below `2^64` modulo [`CHECKSUM_MODULUS`].
#[inline]
fn reduce(v: u64) -> u64 {
    // Folding the bits above 61 back in is exact because 2^61 = 1 (mod 2^61 - 1).
    let folded = (v & CHECKSUM_MODULUS) + (v >> 61);
    if folded >= CHECKSUM_MODULUS {
        folded - CHECKSUM_MODULUS
    } else {
        folded
    }
}

/// Adds two residues modulo [`CHECKSUM_MODULUS`].
#[inline]
pub fn checksum_add(a: u64, b: u64) -> u64 {
    reduce(a + b)
}

/// Computes the checksum of an explicit list of unordered pairs (each pair listed once).
pub fn checksum_of_pairs(pairs: impl IntoIterator<Item = (u32, u32)>) -> u64 {
    pairs.into_iter().fold(0, |acc, (i, j)| {
        checksum_add(acc, u64::from(i) + u64::from(j))
    })
}

/// The code of a minimum-image shift with components in `-1..=1`: `9 (sx + 1) + 3 (sy + 1) +
/// (sz + 1)`, in `0..27`.
pub fn shift_code(shift: [i32; 3]) -> u64 {
    shift.iter().fold(0u64, |code, &s| {
        debug_assert!((-1..=1).contains(&s), "a shift component outside -1..=1");
        3 * code + (s + 1) as u64
    })
}

/// The checksum of periodic pairs `(a, b, shift)` (with `x_b + shift L - x_a` the minimum
/// image), each listed once, in the input's numbering: `map[k]` is the input index of the
/// engine's point `k`. A pair is turned round to `i < j` (negating its shift) before its term
/// `i + j + shift_code(shift)` is added.
pub fn periodic_checksum(pairs: &[(u32, u32, [i32; 3])], map: Option<&[u32]>) -> u64 {
    let orig = |k: u32| map.map_or(k, |m| m[k as usize]);
    pairs
        .par_iter()
        .with_min_len(4096)
        .map(|&(a, b, shift)| {
            let (i, j) = (orig(a), orig(b));
            let shift = if i < j { shift } else { shift.map(|s| -s) };
            u64::from(i) + u64::from(j) + shift_code(shift)
        })
        .fold(|| 0u64, |acc, term| reduce(acc + term))
        .reduce(|| 0, checksum_add)
}

/// What an engine's neighbour lists say, reduced to numbers that can be compared across engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairStats {
    /// Unordered pairs, counted as the entries `j > i` of the lists.
    pub pairs: u64,
    /// The pair checksum in the input's numbering (see the module documentation).
    pub checksum: u64,
    /// All list entries; a symmetric output has exactly twice [`PairStats::pairs`].
    pub directed: u64,
    /// Entries where a point lists itself, which no engine may report.
    pub self_refs: u64,
}

impl PairStats {
    /// Whether the lists are symmetric in count and free of self references.
    ///
    /// A symmetric output lists every pair from both ends, so the entries number exactly twice
    /// the pairs counted from the lower end.
    pub fn is_consistent(&self) -> bool {
        self.self_refs == 0 && self.directed == 2 * self.pairs
    }
}

/// Computes [`PairStats`] from per-point neighbour lists in parallel.
///
/// `neighbors(i)` returns the list of point `i` in the numbering the engine saw. When the engine
/// ran on reordered input, `map[k]` is the input index of the engine's point `k`, and the
/// checksum is taken over the mapped indices so that it matches a run on the original order.
pub fn pair_stats<'a, F>(n: usize, neighbors: F, map: Option<&[u32]>) -> PairStats
where
    F: Fn(usize) -> &'a [u32] + Sync,
{
    let orig = |k: u32| -> u64 {
        match map {
            Some(m) => u64::from(m[k as usize]),
            None => u64::from(k),
        }
    };
    let (pairs, checksum, directed, self_refs) = (0..n)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let list = neighbors(i);
            let oi = orig(i as u32);
            let mut pairs = 0u64;
            let mut sum = 0u64;
            let mut self_refs = 0u64;
            for &j in list {
                let j_usize = j as usize;
                if j_usize > i {
                    pairs += 1;
                    // Each term is below 2^33, so reducing once per term keeps `sum` below 2^62.
                    sum = reduce(sum + oi + orig(j));
                } else if j_usize == i {
                    self_refs += 1;
                }
            }
            (pairs, sum, list.len() as u64, self_refs)
        })
        .reduce(
            || (0, 0, 0, 0),
            |a, b| (a.0 + b.0, checksum_add(a.1, b.1), a.2 + b.2, a.3 + b.3),
        );
    PairStats {
        pairs,
        checksum,
        directed,
        self_refs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_a_hand_made_example() {
        // Pairs {0,1}, {0,2}, {2,5}: (0+1) + (0+2) + (2+5) = 10.
        assert_eq!(checksum_of_pairs([(0, 1), (0, 2), (2, 5)]), 10);
        // The modulus wraps: two terms that add up to the modulus plus 3 leave 3.
        let big = u32::MAX;
        let term = 2 * u64::from(big);
        let mut expected = 0u64;
        for _ in 0..1_000_000 {
            expected = (expected + term) % CHECKSUM_MODULUS;
        }
        let pairs = std::iter::repeat_n((big, big), 1_000_000);
        assert_eq!(checksum_of_pairs(pairs), expected);
        assert_eq!(checksum_add(CHECKSUM_MODULUS - 1, 4), 3);
    }

    #[test]
    fn stats_from_lists_match_the_pair_list() {
        // Points 0..4 with pairs {0,1}, {0,3}, {2,3}, listed in both directions.
        let lists: Vec<Vec<u32>> = vec![vec![1, 3], vec![0], vec![3], vec![0, 2]];
        let stats = pair_stats(4, |i| &lists[i], None);
        assert_eq!(stats.pairs, 3);
        assert_eq!(stats.checksum, checksum_of_pairs([(0, 1), (0, 3), (2, 3)]));
        assert!(stats.is_consistent());

        // The same lists on points stored in the order [2, 0, 3, 1] map back to input indices.
        let map = [2u32, 0, 3, 1];
        let mapped = pair_stats(4, |i| &lists[i], Some(&map));
        assert_eq!(mapped.checksum, checksum_of_pairs([(2, 0), (2, 1), (3, 1)]));

        // A one-sided list and a self reference are both caught.
        let bad: Vec<Vec<u32>> = vec![vec![1], vec![1], vec![], vec![]];
        let stats = pair_stats(4, |i| &bad[i], None);
        assert!(!stats.is_consistent());
    }

    #[test]
    fn periodic_checksum_counts_the_shift_and_the_order() {
        assert_eq!(shift_code([-1, -1, -1]), 0);
        assert_eq!(shift_code([0, 0, 0]), 13);
        assert_eq!(shift_code([1, 1, 1]), 26);
        assert_eq!(shift_code([1, 0, -1]), 18 + 3);
        // (0, 1) without a shift: 0 + 1 + 13; (2, 5) shifted by +x: 7 + 22.
        let pairs = [(0u32, 1u32, [0, 0, 0]), (2, 5, [1, 0, 0])];
        assert_eq!(periodic_checksum(&pairs, None), 14 + 29);
        // Stored as (5, 2) with the opposite shift, the same pair gives the same term.
        assert_eq!(periodic_checksum(&[(5, 2, [-1, 0, 0])], None), 29);
        // A map that swaps the order negates the shift: engine pair (0, 1) is input (3, 1).
        let map = [3u32, 1];
        assert_eq!(
            periodic_checksum(&[(0, 1, [0, 1, 0])], Some(&map)),
            4 + shift_code([0, -1, 0])
        );
    }

    #[test]
    fn predicate_is_symmetric_and_inclusive() {
        let a = [0.0f32, 0.0, 0.0];
        let b = [1.0f32, 0.0, 0.0];
        assert!(within(&a, &b, 1.0));
        assert!(within(&b, &a, 1.0));
        assert!(!within(&a, &[1.0, 1e-3, 0.0], 1.0));
    }
}
