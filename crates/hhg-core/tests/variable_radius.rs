//! Differential tests of the variable-radius particle search in space and in the plane against
//! brute force, for both neighbour rules, kernels and thread counts, and its agreement with
//! the fixed-radius engines.

use hhg_core::broad::{BroadPhaseConfig, RadiusRule, VariableRadiusSearch, sphere_pair_within};
use hhg_core::plane::Grid2;
use hhg_core::{Error, Grid, Kernel, NeighborLists, PairList};
use hhg_testkit::{
    SplitMix64, THREAD_COUNTS, TestReal, check_pairs, gaussian_clusters, in_pool,
    in_space_and_plane, lattice, oracle_sphere_pairs,
};

/// Points of `D` axes in `T`: the first `D` coordinates of each point (the plane's share of
/// the 3-D scene generators).
fn project<T: TestReal, const D: usize>(points: &[[f64; 3]]) -> Vec<[T; D]> {
    points
        .iter()
        .map(|p| std::array::from_fn(|a| T::from_f64(p[a])))
        .collect()
}

fn check<T: TestReal, const D: usize>(name: &str, points: &[[T; D]], radii: &[T]) {
    for rule in [RadiusRule::Max, RadiusRule::Mean] {
        let expected = oracle_sphere_pairs(points, radii, rule);
        // Each pair in both lists; the pairs ascend, so every list does too.
        let mut expected_lists = vec![Vec::new(); points.len()];
        for &[i, j] in &expected {
            expected_lists[i as usize].push(j);
        }
        for &[i, j] in &expected {
            expected_lists[j as usize].push(i);
        }
        for list in &mut expected_lists {
            list.sort_unstable();
        }
        let mut reference: Option<Vec<[u32; 2]>> = None;
        for all_pairs_below in [0, usize::MAX] {
            for kernel in [Kernel::Simd, Kernel::Scalar] {
                for threads in THREAD_COUNTS {
                    let what = format!(
                        "{name} ({}, {D}-D, {rule:?}, {kernel:?}, all_pairs_below {all_pairs_below}, {threads} threads)",
                        T::NAME
                    );
                    let config = BroadPhaseConfig {
                        all_pairs_below,
                        ..BroadPhaseConfig::default()
                    };
                    let (pairs, lists) = in_pool(threads, || {
                        let mut search = VariableRadiusSearch::new(rule);
                        search.set_config(config).unwrap();
                        search.set_kernel(kernel);
                        search.build(points, radii).unwrap();
                        let mut pair_list = PairList::default();
                        search.pairs(&mut pair_list).unwrap();
                        let pairs = pair_list.pairs().to_vec();
                        let mut lists = NeighborLists::default();
                        search.neighbor_lists(&mut lists).unwrap();
                        (pairs, lists)
                    });
                    check_pairs(&what, &pairs, &expected);
                    assert_eq!(lists.len(), points.len(), "{what}: list count");
                    for (i, want) in expected_lists.iter().enumerate() {
                        assert_eq!(lists.neighbors(i), want, "{what}: list {i}");
                    }
                    if all_pairs_below == 0 {
                        match &reference {
                            None => reference = Some(pairs),
                            Some(r) => assert_eq!(&pairs, r, "{what}: order differs"),
                        }
                    }
                }
            }
        }
    }
}

fn mixed_radii_in<T: TestReal, const D: usize>() {
    for seed in 0..3 {
        let mut rng = SplitMix64::new(0x5EED + seed);
        let n = 1500;
        // In the plane, a larger square for about as many neighbours.
        let scale = if D == 3 { 1.0 } else { 3.0 };
        let points: Vec<[f64; 3]> = (0..n)
            .map(|_| std::array::from_fn(|a| scale * rng.range(-6.0, 6.0 + a as f64)))
            .collect();
        // Radii over a 10:1 range, a few much larger ones, and some zeros.
        let radii: Vec<f64> = (0..n)
            .map(|k| match k % 50 {
                0 => rng.range(3.0, 6.0),
                1 => 0.0,
                _ => rng.range(0.2, 2.0),
            })
            .collect();
        check::<T, D>(
            &format!("mixed radii, seed {seed}"),
            &project::<T, D>(&points),
            &radii.iter().map(|&r| T::from_f64(r)).collect::<Vec<_>>(),
        );
    }
}

/// The lattice of `counts` points of spacing 1 from `origin`, in space; in the plane, its
/// first layer with `counts[2]` times as many rows.
fn lattice_in<T: TestReal, const D: usize>(counts: [usize; 3], origin: [f64; 3]) -> Vec<[T; D]> {
    let counts = if D == 3 {
        counts
    } else {
        [counts[0], counts[1] * counts[2], 1]
    };
    project::<T, D>(&lattice(counts, 1.0, origin))
}

fn exact_distances_in<T: TestReal, const D: usize>() {
    // A lattice of spacing 1: pairs at exactly the radius of the larger particle, and just
    // beyond it with the next representable radius below.
    let points = lattice_in::<T, D>([9, 8, 7], [-3.0, 2.0, -1.0]);
    let radii: Vec<T> = (0..points.len())
        .map(|k| match k % 3 {
            0 => T::from_f64(1.0),
            1 => T::from_f64(1.0).next_down(),
            _ => T::from_f64(0.5),
        })
        .collect();
    check::<T, D>("lattice at exactly r", &points, &radii);
}

/// Radii log-uniform over 100x (seven levels of the hierarchy), on a uniform cube far from
/// the origin at negative coordinates and in Gaussian clusters (dense buckets on every level).
fn spread_100x_in<T: TestReal, const D: usize>() {
    for (seed, origin) in [(0u64, [-40.0, -7.5, 3.0]), (1, [-3.0e4, 2.5e4, -1.0e4])] {
        let mut rng = SplitMix64::new(0x100 + seed);
        let n = 1800;
        let radii: Vec<T> = (0..n)
            .map(|_| T::from_f64(0.02 * 100f64.powf(rng.uniform())))
            .collect();
        let uniform: Vec<[f64; 3]> = (0..n)
            .map(|_| std::array::from_fn(|a| origin[a] + rng.range(0.0, 9.0)))
            .collect();
        let mut search = VariableRadiusSearch::new(RadiusRule::Max);
        search.build(&project::<T, D>(&uniform), &radii).unwrap();
        assert!(
            search.levels().len() >= 6,
            "a level per octave of the radii"
        );
        check::<T, D>(
            &format!("100x spread, uniform at {origin:?}"),
            &project::<T, D>(&uniform),
            &radii,
        );
        let clustered = gaussian_clusters(
            &mut rng,
            &[(900, 0.05), (500, 0.3), (300, 0.8), (100, 2.0)],
            12.0,
        );
        check::<T, D>(
            &format!("100x spread, clustered, seed {seed}"),
            &project::<T, D>(&clustered),
            &radii,
        );
    }
}

/// Pairs at exactly the mean rule's distance: on a lattice of spacing 1, radii 1.5 and 0.5
/// meet at `(1.5 + 0.5) / 2 = 1`, and with the next radius below 1.5 they just miss.
fn exact_mean_distances_in<T: TestReal, const D: usize>() {
    let points = lattice_in::<T, D>([8, 7, 9], [2.0, -5.0, -1.0]);
    let radii: Vec<T> = (0..points.len())
        .map(|k| match k % 4 {
            0 => T::from_f64(1.5),
            1 => T::from_f64(1.5).next_down(),
            2 => T::from_f64(0.5),
            _ => T::from_f64(0.125),
        })
        .collect();
    check::<T, D>("lattice at exactly the mean radius", &points, &radii);
}

/// The pairs of the fixed-radius engine of `D` axes (`Grid`, `Grid2`), sorted.
fn engine_pairs<T: TestReal, const D: usize>(points: &[[T; D]], r: T) -> Vec<[u32; 2]> {
    let mut engine = PairList::default();
    if D == 3 {
        let points: Vec<[T; 3]> = points
            .iter()
            .map(|p| std::array::from_fn(|a| p[a]))
            .collect();
        let mut grid = Grid::new(r).unwrap();
        grid.build(&points).unwrap();
        grid.pairs(&mut engine).unwrap();
    } else {
        let points: Vec<[T; 2]> = points
            .iter()
            .map(|p| std::array::from_fn(|a| p[a]))
            .collect();
        let mut grid = Grid2::new(r).unwrap();
        grid.build(&points).unwrap();
        grid.pairs(&mut engine).unwrap();
    }
    let mut pairs = engine.pairs().to_vec();
    pairs.sort_unstable();
    pairs
}

fn equal_radii_match_the_particle_engine_in<T: TestReal, const D: usize>() {
    let mut rng = SplitMix64::new(77);
    let extent = if D == 3 { 14.0 } else { 50.0 };
    let points: Vec<[T; D]> = (0..3000)
        .map(|_| std::array::from_fn(|_| T::from_f64(rng.range(0.0, extent))))
        .collect();
    let r = T::from_f64(1.0);
    let radii = vec![r; points.len()];
    let mut search = VariableRadiusSearch::new(RadiusRule::Max);
    search.build(&points, &radii).unwrap();
    assert_eq!(search.levels().len(), 1, "one radius, one level");
    let mut pair_list = PairList::default();
    search.pairs(&mut pair_list).unwrap();
    let pairs = pair_list.pairs().to_vec();
    let expected = engine_pairs(&points, r);
    assert!(expected.len() > points.len(), "{} pairs", expected.len());
    check_pairs("equal radii vs the particle engine", &pairs, &expected);
}

fn queries_in<T: TestReal, const D: usize>() {
    let mut rng = SplitMix64::new(8);
    let points: Vec<[T; D]> = (0..2000)
        .map(|_| std::array::from_fn(|_| T::from_f64(rng.range(0.0, 12.0))))
        .collect();
    let radii: Vec<T> = (0..points.len())
        .map(|k| {
            T::from_f64(if k % 40 == 0 {
                7.0
            } else {
                rng.range(0.1, 1.5)
            })
        })
        .collect();
    for all_pairs_below in [0, usize::MAX] {
        let config = BroadPhaseConfig {
            all_pairs_below,
            ..BroadPhaseConfig::default()
        };
        let mut search = VariableRadiusSearch::new(RadiusRule::Max);
        search.set_config(config).unwrap();
        search.build(&points, &radii).unwrap();
        let mut got = Vec::new();
        for q in 0..60 {
            let p: [T; D] = if q % 3 == 0 {
                points[rng.below(points.len())]
            } else {
                std::array::from_fn(|_| T::from_f64(rng.range(-3.0, 15.0)))
            };
            search.query_point(p, &mut got).unwrap();
            let want: Vec<u32> = (0..points.len() as u32)
                // `|p - xj| <= rj`: the pair rule with a radius of 0 at `p`.
                .filter(|&j| {
                    sphere_pair_within(
                        p,
                        T::default(),
                        points[j as usize],
                        radii[j as usize],
                        false,
                    )
                })
                .collect();
            assert_eq!(got, want, "query {q} at {p:?}");
        }
    }
}

fn bad_input_in<T: TestReal, const D: usize>() {
    let points = vec![[T::from_f64(0.0); D]; 4];
    let mut search = VariableRadiusSearch::<T, D>::new(RadiusRule::Max);
    let one = T::from_f64(1.0);
    for (bad, value) in [(2, -1.0), (1, f64::NAN), (3, f64::INFINITY)] {
        let mut radii = vec![one; 4];
        radii[bad] = T::from_f64(value);
        let err = search.build(&points, &radii).unwrap_err();
        assert!(
            matches!(err, Error::InvalidParticleRadius { index, .. } if index == bad),
            "{err}"
        );
    }
    let mut huge = vec![one; 4];
    huge[0] = T::from_f64(if T::NAME == "f32" { 1e20 } else { 1e160 });
    assert!(
        search.build(&points, &huge).is_err(),
        "a radius whose square overflows"
    );
    assert!(matches!(
        search.build(&points, &[one; 3]),
        Err(Error::LengthMismatch { .. })
    ));
    let mut moved = points.clone();
    moved[1][D - 1] = T::from_f64(f64::NAN);
    assert!(matches!(
        search.build(&moved, &[one; 4]),
        Err(Error::NonFiniteCoordinate {
            index: 1,
            axis,
            ..
        }) if axis == D - 1
    ));
}

in_space_and_plane!(
    mixed_radii_in => mixed_radii, mixed_radii_2d;
    spread_100x_in => spread_100x, spread_100x_2d;
    exact_distances_in => exact_distances, exact_distances_2d;
    exact_mean_distances_in => exact_mean_distances, exact_mean_distances_2d;
    equal_radii_match_the_particle_engine_in =>
        equal_radii_match_the_particle_engine, equal_radii_match_the_particle_engine_2d;
    queries_in => queries, queries_2d;
    bad_input_in => bad_input, bad_input_2d;
);
