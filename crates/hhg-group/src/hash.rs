//! The candidate buckets of a cell: `g` XOR-of-primes hash functions of its integer
//! coordinates, each finished by a mixer and reduced to the bucket count, computed 8 cells
//! at a time with `wide` and by a scalar reference that gives the same buckets.

use hhg_core::Error;
use wide::u32x8;

/// The most candidate buckets a cell may have (Jung and Choi use 3 and 4).
pub const MAX_CANDIDATES: usize = 4;

/// The odd multipliers of each hash function, one triple per candidate.
///
/// The first triple is Teschner et al.'s (73856093, 19349663, 83492791; the middle one is
/// `41 * 471943`, kept as published), the second is xxHash32's first three primes, the other
/// two are further 32-bit primes. Odd multipliers are bijections modulo `2^32`.
const MULTIPLIERS: [[u32; 3]; MAX_CANDIDATES] = [
    [73_856_093, 19_349_663, 83_492_791],
    [2_654_435_761, 2_246_822_519, 3_266_489_917],
    [668_265_263, 374_761_393, 16_777_619],
    [2_971_215_073, 1_500_450_271, 3_267_000_013],
];

/// A seed XORed into each hash before mixing, so that the cell `(0, 0, 0)` (whose
/// products are all 0) still gets different candidates.
const SEEDS: [u32; MAX_CANDIDATES] = [0, 0x9E37_79B9, 0x7F4A_7C15, 0xF39C_C060];

/// The candidate buckets of cells under `g` hash functions into a table of `buckets`
/// buckets.
///
/// Hash function `k` of cell `(x, y, z)` is
/// `h = (x * A_k) ^ (y * B_k) ^ (z * C_k) ^ seed_k` in wrapping `u32` arithmetic, mixed by
/// Wellons' `lowbias32` finalizer, and reduced to `0..buckets` by the multiply-high range
/// reduction `(h * buckets) >> 32`, which uses the mixed hash's well-spread high bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupHasher {
    candidates: usize,
    buckets: u32,
}

impl GroupHasher {
    /// A hasher with `candidates` hash functions (1 to [`MAX_CANDIDATES`]) into `buckets`
    /// buckets (at least 1); anything else is [`Error::InvalidConfig`].
    pub fn new(candidates: usize, buckets: u32) -> Result<Self, Error> {
        check_candidates(candidates)?;
        if buckets == 0 {
            return Err(Error::InvalidConfig {
                name: "buckets",
                value: 0.0,
                expected: "at least 1",
            });
        }
        Ok(Self {
            candidates,
            buckets,
        })
    }

    /// How many candidate buckets each cell has.
    #[inline]
    pub fn candidates(&self) -> usize {
        self.candidates
    }

    /// How many buckets the table has.
    #[inline]
    pub fn buckets(&self) -> u32 {
        self.buckets
    }

    /// Candidate `k` (below [`MAX_CANDIDATES`]) of `cell`, one cell at a time: the scalar
    /// reference of [`GroupHasher::candidates8`].
    #[inline]
    pub fn candidate(&self, k: usize, cell: [i32; 3]) -> u32 {
        let [a, b, c] = MULTIPLIERS[k];
        let h = (cell[0] as u32).wrapping_mul(a)
            ^ (cell[1] as u32).wrapping_mul(b)
            ^ (cell[2] as u32).wrapping_mul(c)
            ^ SEEDS[k];
        ((u64::from(mix(h)) * u64::from(self.buckets)) >> 32) as u32
    }

    /// The candidate buckets of `cell` in the order the greedy mapping tries them; entries
    /// from [`GroupHasher::candidates`] on are 0 (scalar reference).
    #[inline]
    pub fn candidates_of(&self, cell: [i32; 3]) -> [u32; MAX_CANDIDATES] {
        std::array::from_fn(|k| {
            if k < self.candidates {
                self.candidate(k, cell)
            } else {
                0
            }
        })
    }

    /// The candidate buckets of 8 cells (coordinates `x[i], y[i], z[i]`) 8 lanes at a time:
    /// row `k` holds candidate `k` of each cell; rows from [`GroupHasher::candidates`] on
    /// are 0. Identical to [`GroupHasher::candidates_of`] lane by lane.
    #[inline]
    pub fn candidates8(
        &self,
        x: &[i32; 8],
        y: &[i32; 8],
        z: &[i32; 8],
    ) -> [[u32; 8]; MAX_CANDIDATES] {
        let lanes = |c: &[i32; 8]| u32x8::new(c.map(|v| v as u32));
        let (x, y, z) = (lanes(x), lanes(y), lanes(z));
        let buckets = u32x8::splat(self.buckets);
        let mut out = [[0u32; 8]; MAX_CANDIDATES];
        for (k, row) in out.iter_mut().enumerate().take(self.candidates) {
            let [a, b, c] = MULTIPLIERS[k].map(u32x8::splat);
            let h = (x * a) ^ (y * b) ^ (z * c) ^ u32x8::splat(SEEDS[k]);
            *row = mix8(h).mul_keep_high(buckets).to_array();
        }
        out
    }
}

/// Refuses a candidate count outside `1..=MAX_CANDIDATES`.
pub(crate) fn check_candidates(candidates: usize) -> Result<(), Error> {
    if !(1..=MAX_CANDIDATES).contains(&candidates) {
        return Err(Error::InvalidConfig {
            name: "candidates",
            value: candidates as f64,
            expected: "an integer from 1 to 4",
        });
    }
    Ok(())
}

/// Wellons' `lowbias32` integer finalizer: every input bit affects every output bit.
#[inline(always)]
fn mix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x21F0_AAAD);
    h ^= h >> 15;
    h = h.wrapping_mul(0x735A_2D97);
    h ^ (h >> 15)
}

/// [`mix`] on 8 lanes.
#[inline(always)]
fn mix8(mut h: u32x8) -> u32x8 {
    h ^= h.unbounded_shr_scalar(16);
    h *= u32x8::splat(0x21F0_AAAD);
    h ^= h.unbounded_shr_scalar(15);
    h *= u32x8::splat(0x735A_2D97);
    h ^ h.unbounded_shr_scalar(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simd_matches_scalar_on_extreme_cells() {
        let values = [i32::MIN, -1_000_001, -2, -1, 0, 1, 2, 47, 1 << 29, i32::MAX];
        for candidates in 1..=MAX_CANDIDATES {
            for buckets in [1, 2, 3, 1000, 200_003, u32::MAX] {
                let hasher = GroupHasher::new(candidates, buckets).unwrap();
                for (s, &first) in values.iter().enumerate() {
                    let x: [i32; 8] = std::array::from_fn(|i| values[(s + i) % values.len()]);
                    let y: [i32; 8] = std::array::from_fn(|i| values[(s + 3 * i) % values.len()]);
                    let z: [i32; 8] = std::array::from_fn(|i| first.wrapping_add(i as i32));
                    let rows = hasher.candidates8(&x, &y, &z);
                    for lane in 0..8 {
                        let one = hasher.candidates_of([x[lane], y[lane], z[lane]]);
                        for k in 0..MAX_CANDIDATES {
                            assert_eq!(rows[k][lane], one[k], "lane {lane}, candidate {k}");
                            if k < candidates {
                                assert!(one[k] < buckets);
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
    fn the_origin_gets_distinct_candidates() {
        let hasher = GroupHasher::new(4, 1 << 20).unwrap();
        let c = hasher.candidates_of([0, 0, 0]);
        for a in 0..4 {
            for b in a + 1..4 {
                assert_ne!(c[a], c[b], "{c:?}");
            }
        }
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(matches!(
            GroupHasher::new(0, 10),
            Err(Error::InvalidConfig {
                name: "candidates",
                ..
            })
        ));
        assert!(GroupHasher::new(5, 10).is_err());
        assert!(matches!(
            GroupHasher::new(3, 0),
            Err(Error::InvalidConfig {
                name: "buckets",
                ..
            })
        ));
    }
}
