//! The hashes: known values of the XOR-of-primes and top-down keys, the 8-lane keys and cells equal to the scalar reference (and to the formula) for every rule, and table sizes.

use hhg_core::building_blocks::{CellTable, bounds};
use hhg_core::{Kernel, Points, Real};
use hhg_testkit::{SplitMix64, TestReal, for_both_precisions, to_real, uniform_box};
use hhg_xor::{CellHasher, KeyRule, MAX_BUCKETS, Primes, TableSize, XorHash};

/// Points inside a box and around it: far outside (clamped cells), on the box's corners,
/// negative, and a count that is not a multiple of 8.
fn test_points<T: TestReal>(seed: u64, centre: f64, half: f64) -> Vec<[T; 3]> {
    let mut rng = SplitMix64::new(seed);
    let lo = [centre - half; 3];
    let hi = [centre + half; 3];
    let mut points = uniform_box(&mut rng, 1003, lo, hi);
    points.push(lo);
    points.push(hi);
    for k in 0..40 {
        let scale = [2.0, 10.0, 1e6, 1e30][k % 4];
        points.push(std::array::from_fn(|_| {
            centre + rng.range(-scale, scale) * half
        }));
    }
    to_real(&points)
}

/// A cell table over the first `inside` points with cells of edge `cell`.
fn table_of<T: TestReal>(points: &[[T; 3]], inside: usize, cell: f64) -> CellTable {
    let inner = Points::Aos(&points[..inside]);
    let b = bounds(inner).unwrap().unwrap();
    CellTable::with_cell(&b, inside, cell, 64, inner).unwrap()
}

/// The 8-lane kernel computes the same cells and keys as the scalar reference and as the
/// formula, for both primes, several table sizes, the XOR rule and top-down keys of any depth.
fn simd_keys_equal_scalar_keys<T: TestReal>() {
    for (seed, centre, half, cell) in [
        (1, 0.0, 20.0, 1.0),
        (2, -3.5e3, 100.0, 0.37),
        (3, 1e6, 50.0, 2.5),
        (4, 0.0, 1e4, 0.01),
    ] {
        let points = test_points::<T>(seed, centre, half);
        let table = table_of(&points, 1005, cell);
        for primes in [Primes::Teschner, Primes::Mueller] {
            for buckets in [1, 8, 1 << 12, 1 << 20] {
                for rule in [
                    KeyRule::Xor,
                    KeyRule::TopDown { levels: 0 },
                    KeyRule::TopDown { levels: 3 },
                    KeyRule::TopDown { levels: 30 },
                ] {
                    let hasher = CellHasher {
                        table,
                        hash: XorHash::new(primes, buckets).unwrap(),
                        rule,
                    };
                    let what = format!("seed {seed} {primes:?} {buckets} {rule:?} ({})", T::NAME);
                    let (mut keys, mut cells) = (Vec::new(), Vec::new());
                    let (mut scalar_keys, mut scalar_cells) = (vec![9; 3], vec![[9; 3]; 2000]);
                    hasher
                        .hash_points(Points::Aos(&points), Kernel::Simd, &mut keys, &mut cells)
                        .unwrap();
                    hasher
                        .hash_points(
                            Points::Aos(&points),
                            Kernel::Scalar,
                            &mut scalar_keys,
                            &mut scalar_cells,
                        )
                        .unwrap();
                    assert_eq!(keys, scalar_keys, "{what}: keys");
                    assert_eq!(cells, scalar_cells, "{what}: cells");
                    for (k, &p) in points.iter().enumerate() {
                        let c = table.coords(p);
                        assert_eq!(cells[k], c, "{what}: cell of point {k}");
                        assert_eq!(keys[k], hasher.key(c), "{what}: key of point {k}");
                        assert!((keys[k] as usize) < buckets, "{what}");
                    }
                    // Separate coordinate slices give the same values.
                    let x: Vec<T> = points.iter().map(|p| p[0]).collect();
                    let y: Vec<T> = points.iter().map(|p| p[1]).collect();
                    let z: Vec<T> = points.iter().map(|p| p[2]).collect();
                    let (mut soa_keys, mut soa_cells) = (Vec::new(), Vec::new());
                    hasher
                        .hash_points(
                            Points::Soa(&x, &y, &z),
                            Kernel::Simd,
                            &mut soa_keys,
                            &mut soa_cells,
                        )
                        .unwrap();
                    assert_eq!(soa_keys, keys, "{what}: SoA keys");
                    assert_eq!(soa_cells, cells, "{what}: SoA cells");
                }
            }
        }
    }
}

/// Cells of the set's own points lie in `0..span`; points outside clamp to `-2..=span + 1`.
fn cells_are_clamped<T: TestReal>() {
    let points = test_points::<T>(9, 5.0, 10.0);
    let table = table_of(&points, 1005, 1.0);
    for (k, &p) in points.iter().enumerate() {
        let c = table.coords(p);
        for a in 0..3 {
            if k < 1005 {
                assert!(c[a] >= 0 && c[a] < table.span[a], "point {k}: {c:?}");
            } else {
                assert!(c[a] >= -2 && c[a] <= table.span[a] + 1, "point {k}: {c:?}");
            }
        }
    }
}

for_both_precisions!(simd_keys_equal_scalar_keys, cells_are_clamped);

/// The XOR hash by hand: wrapping products of the two's-complement coordinates, XORed, masked.
#[test]
fn known_hash_values() {
    let [p1, p2, p3] = Primes::Teschner.values();
    assert_eq!([p1, p2, p3], [73_856_093, 19_349_663, 83_492_791]);
    assert_eq!(
        Primes::Mueller.values(),
        [92_837_111, 689_287_499, 283_923_481]
    );
    let hash = XorHash::new(Primes::Teschner, 1 << 10).unwrap();
    assert_eq!(hash.buckets(), 1024);
    assert_eq!(hash.mask(), 1023);
    assert_eq!(hash.raw([1, 0, 0]), p1);
    assert_eq!(hash.raw([0, 1, 0]), p2);
    assert_eq!(hash.raw([0, 0, 1]), p3);
    assert_eq!(hash.raw([1, 1, 1]), p1 ^ p2 ^ p3);
    assert_eq!(hash.raw([-1, 0, 0]), p1.wrapping_neg());
    assert_eq!(
        hash.raw([100, -7, 3]),
        100u32.wrapping_mul(p1) ^ (-7i32 as u32).wrapping_mul(p2) ^ 3u32.wrapping_mul(p3)
    );
    assert_eq!(hash.raw([0; 3]), 0);
    let c = [1234, -56, 789];
    assert_eq!(hash.bucket(c), hash.raw(c) & 1023);
    assert_eq!(hash.key(c, KeyRule::Xor), hash.bucket(c));
    assert_eq!(hash.key(c, KeyRule::TopDown { levels: 0 }), hash.bucket(c));
    // Two classes above: h(c >> 2) + h(c >> 1) + h(c), with arithmetic shifts.
    let sum = hash
        .raw([308, -14, 197])
        .wrapping_add(hash.raw([617, -28, 394]))
        .wrapping_add(hash.raw(c));
    assert_eq!(hash.key(c, KeyRule::TopDown { levels: 2 }), sum & 1023);
    let other = XorHash::with_values([1, 2, 3], 8).unwrap();
    assert_eq!(other.raw([5, 6, 7]), 5 ^ 12 ^ 21);
    assert_eq!(other.bucket([5, 6, 7]), (5 ^ 12 ^ 21) & 7);
}

/// Table sizes: powers of two, at least 1, at most 2^30.
#[test]
fn table_sizes() {
    assert_eq!(TableSize::default(), TableSize::PerPoint(2));
    assert_eq!(TableSize::PerPoint(2).buckets(1000), 2048);
    assert_eq!(TableSize::PerPoint(2).buckets(1024), 2048);
    assert_eq!(TableSize::PerPoint(2).buckets(0), 1);
    assert_eq!(TableSize::PerPoint(3).buckets(usize::MAX), MAX_BUCKETS);
    assert_eq!(TableSize::Fixed(5).buckets(1_000_000), 8);
    assert_eq!(TableSize::Fixed(1).buckets(10), 1);
    assert_eq!(TableSize::Fixed(MAX_BUCKETS).buckets(10), MAX_BUCKETS);
    TableSize::Fixed(MAX_BUCKETS).check().unwrap();
    assert_eq!(XorHash::new(Primes::Mueller, 1).unwrap().mask(), 0);
}

/// A length mismatch of separate slices is refused.
#[test]
fn soa_length_mismatch() {
    let points: Vec<[f64; 3]> = to_real(&[[0.0; 3], [1.0; 3]]);
    let table = table_of(&points, 2, 1.0);
    let hasher = CellHasher {
        table,
        hash: XorHash::new(Primes::Teschner, 8).unwrap(),
        rule: KeyRule::Xor,
    };
    let x = [0.0f64, 1.0];
    let y = [0.0f64];
    let result = hasher.hash_points(
        Points::Soa(&x, &y, &x),
        Kernel::Simd,
        &mut Vec::new(),
        &mut Vec::new(),
    );
    assert_eq!(
        result.unwrap_err(),
        hhg_core::Error::LengthMismatch { x: 2, y: 1, z: 2 }
    );
    let _ = Real::to_f64(1.0f32);
}
