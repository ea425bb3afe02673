//! The candidate hash functions: the 8-lane kernel equals the scalar reference on random
//! and extreme cells, candidates stay below the bucket count, and they spread cells evenly.

use hhg_group::{GroupHasher, MAX_CANDIDATES};
use hhg_testkit::SplitMix64;

#[test]
fn simd_equals_scalar_on_random_cells() {
    let mut rng = SplitMix64::new(41);
    for candidates in 1..=MAX_CANDIDATES {
        for buckets in [1u32, 7, 1 << 10, 200_000, 999_983, u32::MAX] {
            let hasher = GroupHasher::new(candidates, buckets).unwrap();
            for round in 0..500 {
                let coordinate = |rng: &mut SplitMix64| match round % 3 {
                    0 => rng.below(64) as i32 - 8,
                    1 => (rng.next_u64() as u32) as i32,
                    _ => (rng.below(1 << 31) as i32) - (1 << 30),
                };
                let x: [i32; 8] = std::array::from_fn(|_| coordinate(&mut rng));
                let y: [i32; 8] = std::array::from_fn(|_| coordinate(&mut rng));
                let z: [i32; 8] = std::array::from_fn(|_| coordinate(&mut rng));
                let rows = hasher.candidates8(&x, &y, &z);
                for lane in 0..8 {
                    let cell = [x[lane], y[lane], z[lane]];
                    let one = hasher.candidates_of(cell);
                    for k in 0..MAX_CANDIDATES {
                        assert_eq!(rows[k][lane], one[k], "cell {cell:?}, candidate {k}");
                        if k < candidates {
                            assert!(one[k] < buckets);
                            assert_eq!(one[k], hasher.candidate(k, cell));
                        } else {
                            assert_eq!(one[k], 0);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn candidates_spread_a_block_of_cells_evenly() {
    let buckets = 1000u32;
    let hasher = GroupHasher::new(MAX_CANDIDATES, buckets).unwrap();
    for k in 0..MAX_CANDIDATES {
        let mut counts = vec![0u32; buckets as usize];
        for x in 0..20 {
            for y in 0..20 {
                for z in 0..25 {
                    counts[hasher.candidate(k, [x, y, z]) as usize] += 1;
                }
            }
        }
        // 10 cells per bucket on average: a fair hash leaves few buckets empty or crowded.
        let empty = counts.iter().filter(|&&c| c == 0).count();
        let max = counts.iter().copied().max().unwrap();
        assert!(
            empty < 5 && max < 30,
            "function {k}: {empty} empty buckets, max {max}"
        );
    }
    // The functions differ: the same cell rarely gets the same bucket twice.
    let same = (0..1000)
        .filter(|&i| {
            let c = hasher.candidates_of([i % 10, i / 10 % 10, i / 100]);
            c[0] == c[1] || c[1] == c[2] || c[0] == c[2]
        })
        .count();
    assert!(same < 20, "{same} cells with repeated candidates");
}
