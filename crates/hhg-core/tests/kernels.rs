//! The SIMD kernels against their scalar references, value for value: cell keys and distance masks.

use hhg_core::building_blocks::floor_small;
use hhg_core::{Grid, Kernel, Points};
use hhg_testkit::{SplitMix64, TestReal, to_real, uniform_box};

/// Cell keys of the `wide` kernel equal the scalar kernel's for points inside the set's box,
/// on its border, exactly on cell borders, and far outside it (clamped), in dense and hashed
/// tables.
fn keys_match<T: TestReal>() {
    let mut rng = SplitMix64::new(11);
    for (scene, spread) in [("dense", 5.0), ("hashed", 1e5)] {
        let radius = 1.0;
        let set: Vec<[f64; 3]> = uniform_box(&mut rng, 3000, [-spread; 3], [spread; 3]);
        let mut grid = Grid::new(T::from_f64(radius)).unwrap();
        grid.build(&to_real::<T>(&set)).unwrap();
        let table = *grid.table().unwrap();
        assert_eq!(
            table.dense,
            scene == "dense",
            "{scene}: unexpected table kind"
        );
        // Probes: the set, cell borders, points beyond the box and huge coordinates.
        let mut probes = set.clone();
        for k in 0..500 {
            let cell = table.cell;
            probes.push([
                table.origin[0] + cell * (k as f64 - 250.0),
                table.origin[1] + cell * (k % 37) as f64,
                table.origin[2] - cell * (k % 11) as f64,
            ]);
        }
        // Half cells and the values just below and above whole cells, on both sides of the
        // origin. (Rounding to the nearest integer ties exactly only in the dense f64 scene,
        // where the scaled values are exact; `floor_small_equals_floor` tests ties directly.)
        for k in -40..40 {
            let cell = table.cell;
            let half = table.origin[0] + cell * (f64::from(k) + 0.5);
            let border = table.origin[1] + cell * f64::from(k);
            probes.push([half, border, table.origin[2] + cell * 0.5 * f64::from(k)]);
            probes.push([
                half,
                border.next_down(),
                (table.origin[2] + cell * f64::from(k)).next_up(),
            ]);
        }
        probes.extend(uniform_box(&mut rng, 500, [-1e9; 3], [1e9; 3]));
        let probes = to_real::<T>(&probes);
        let (mut simd, mut scalar) = (Vec::new(), Vec::new());
        table.keys(Points::Aos(&probes), Kernel::Simd, &mut simd);
        table.keys(Points::Aos(&probes), Kernel::Scalar, &mut scalar);
        assert_eq!(simd.len(), probes.len());
        for (i, (a, b)) in simd.iter().zip(&scalar).enumerate() {
            assert_eq!(
                a,
                b,
                "{scene} ({}): key of probe {i} {:?}",
                T::NAME,
                probes[i]
            );
            assert!(
                (*a as usize) < table.buckets(),
                "{scene}: key {a} out of the table"
            );
        }
    }
}

/// The SSE2 floor of the key kernels equals `f64::floor` on integers, the values just
/// beside them, half-integers (where rounding to the nearest ties), both signs, and values
/// up to the cell range's limit.
#[test]
fn floor_small_equals_floor() {
    let mut rng = SplitMix64::new(13);
    let mut values = Vec::new();
    for k in -1000..1000 {
        let v = f64::from(k);
        values.extend([v, v.next_up(), v.next_down(), v + 0.5, v - 0.25, v + 0.75]);
    }
    values.extend([-0.0, 0.0, (-0.0f64).next_down(), 0.0f64.next_up()]);
    for v in [2.0f64.powi(50), 2.0f64.powi(51) - 1.0] {
        values.extend([v, v + 0.5, v.next_down(), -v, -v - 0.5, (-v).next_up()]);
    }
    let top = 2.0f64.powi(51);
    values.extend((0..1000).map(|_| rng.range(-top, top)));
    for scale in [1.0, 1e3, 1e6, 1e9, 2.0f64.powi(31), 2.0f64.powi(50)] {
        values.extend((0..1000).map(|_| rng.range(-scale, scale)));
    }
    for quad in values.chunks_exact(4) {
        let quad: [f64; 4] = quad.try_into().unwrap();
        let floored = floor_small(wide::f64x4::new(quad)).to_array();
        for (v, bits) in quad.iter().zip(floored) {
            let expected = v.floor() as i64;
            // The low 51 bits carry the floor modulo 2^51, in two's complement where it
            // lies below 2^50 in magnitude.
            let low = bits & ((1 << 51) - 1);
            assert_eq!(low, expected.rem_euclid(1 << 51), "floor of {v}");
            if expected.abs() < 1 << 50 {
                assert_eq!((bits << 13) >> 13, expected, "sign of the floor of {v}");
            }
            if expected.abs() < 1 << 31 {
                assert_eq!(
                    bits as i32, expected as i32,
                    "low 32 bits of the floor of {v}"
                );
            }
        }
    }
}

/// The 8-lane distance mask equals the one-lane reference on random blocks, blocks of
/// candidates at exactly `r` along axes and diagonals, and blocks with NaN padding.
fn masks_match<T: TestReal>() {
    let mut rng = SplitMix64::new(12);
    let r = T::from_f64(0.75);
    let r2 = r * r;
    for round in 0..20_000 {
        let p: [T; 3] = std::array::from_fn(|_| T::from_f64(rng.range(-2.0, 2.0)));
        let mut x = [T::PAD; 8];
        let mut y = [T::PAD; 8];
        let mut z = [T::PAD; 8];
        let lanes = if round % 7 == 0 { rng.below(8) } else { 8 };
        for k in 0..lanes {
            let q: [T; 3] = match k % 4 {
                // Exactly r along one axis.
                0 => {
                    let mut q = p;
                    q[k % 3] = q[k % 3] + r;
                    q
                }
                // Tiny offsets around p.
                1 => p.map(|v| v + T::from_f64(rng.range(-1e-3, 1e-3))),
                _ => std::array::from_fn(|a| p[a] + T::from_f64(rng.range(-1.0, 1.0))),
            };
            (x[k], y[k], z[k]) = (q[0], q[1], q[2]);
        }
        let simd = T::within_mask(p, &x, &y, &z, r2);
        let scalar = T::within_mask_scalar(p, &x, &y, &z, r2);
        assert_eq!(simd, scalar, "{}: block {round}", T::NAME);
        assert_eq!(simd >> lanes, 0, "{}: a padding lane passed", T::NAME);
    }
}

#[test]
fn cell_keys_simd_equals_scalar() {
    keys_match::<f32>();
    keys_match::<f64>();
}

#[test]
fn distance_masks_simd_equals_scalar() {
    masks_match::<f32>();
    masks_match::<f64>();
}

/// The box filter never drops a candidate that the distance mask keeps for a point inside
/// the box: random boxes (flat and single-point ones too), points at the box's corners and
/// faces and inside it, candidates at `p ± r` along one axis (as rounded) and one ulp either
/// side on that axis.
/// It also drops what lies clearly out of reach, so a filter that keeps everything fails.
fn box_filter_keeps_every_hit<T: TestReal>() {
    let mut rng = SplitMix64::new(13);
    let r = T::from_f64(0.75);
    let r2 = r * r;
    let mut dropped = 0;
    for round in 0..20_000 {
        let lo: [T; 3] = std::array::from_fn(|_| T::from_f64(rng.range(-2.0, 2.0)));
        let hi: [T; 3] = std::array::from_fn(|a| match round % 3 {
            0 => lo[a],
            _ => lo[a] + T::from_f64(rng.range(0.0, 1.0)),
        });
        let inside = |rng: &mut SplitMix64| -> [T; 3] {
            std::array::from_fn(|a| match rng.below(3) {
                0 => lo[a],
                1 => hi[a],
                _ => {
                    let t = T::from_f64(rng.range(0.0, 1.0));
                    let v = lo[a] + (hi[a] - lo[a]) * t;
                    if v > hi[a] { hi[a] } else { v }
                }
            })
        };
        let points: Vec<[T; 3]> = (0..4).map(|_| inside(&mut rng)).collect();
        let (mut x, mut y, mut z) = ([T::PAD; 8], [T::PAD; 8], [T::PAD; 8]);
        for k in 0..8 {
            let p = points[k % points.len()];
            // The axis along which the candidate lies at `r`, nudged by one ulp or not.
            let axis = (k + k / 4) % 3;
            let mut q: [T; 3] = match k % 4 {
                0 => {
                    let mut q = p;
                    q[axis] = q[axis] + r;
                    q
                }
                1 => {
                    let mut q = p;
                    q[axis] = q[axis] - r;
                    q
                }
                _ => std::array::from_fn(|a| p[a] + T::from_f64(rng.range(-2.0, 2.0))),
            };
            match rng.below(3) {
                0 => q[axis] = q[axis].next_up(),
                1 => q[axis] = q[axis].next_down(),
                _ => {}
            }
            (x[k], y[k], z[k]) = (q[0], q[1], q[2]);
        }
        let block = T::load_block(&x, &y, &z);
        let kept = T::box_mask(lo, hi, &block, r2);
        for p in &points {
            let hits = T::block_mask(*p, &block, r2);
            assert_eq!(
                hits & !kept,
                0,
                "{}: box {lo:?}..{hi:?} dropped a hit of {p:?} in block {round}",
                T::NAME
            );
        }
        dropped += (!kept & 0xff).count_ones();
    }
    assert!(
        dropped > 10_000,
        "{}: the filter kept almost everything",
        T::NAME
    );
}

/// Packing the lanes of a mask keeps exactly those lanes, in order, for every mask, with
/// `wide`'s permutes and, where the CPU has them, with AVX2's.
fn compress_keeps_the_masked_lanes<T: TestReal>() {
    let values: [T; 8] = std::array::from_fn(|k| T::from_f64(k as f64 * 1.5 - 3.0));
    let avx2 = cfg!(target_arch = "x86_64") && avx2_present();
    for (mask, avx2) in (0u32..256).flat_map(|mask| [(mask, false), (mask, avx2)]) {
        let mut packed = [T::PAD; 8];
        // SAFETY: `packed` holds 8 values, and `avx2` is set only where the CPU has AVX2.
        unsafe { T::compress_lanes(&values, mask, packed.as_mut_ptr(), avx2) };
        let expected: Vec<T> = (0..8)
            .filter(|k| mask & (1 << k) != 0)
            .map(|k| values[k])
            .collect();
        let got = &packed[..expected.len()];
        assert!(
            got.iter().zip(&expected).all(|(a, b)| a.bits() == b.bits()),
            "{}: mask {mask:#010b} packed {got:?}, expected {expected:?}",
            T::NAME
        );
    }
}

/// Whether the CPU has AVX2.
fn avx2_present() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[test]
fn box_filter_is_conservative() {
    box_filter_keeps_every_hit::<f32>();
    box_filter_keeps_every_hit::<f64>();
}

#[test]
fn compressed_lanes_are_the_masked_ones() {
    compress_keeps_the_masked_lanes::<f32>();
    compress_keeps_the_masked_lanes::<f64>();
}
