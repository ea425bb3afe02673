//! The SIMD kernels against their scalar references, value for value: cell keys and distance masks.

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
