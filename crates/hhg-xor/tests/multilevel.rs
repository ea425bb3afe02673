//! MultilevelSearch (particles with their own radii) against brute force and against hhg-core's VariableRadiusSearch with the Max rule, on mixed, bimodal, equal and zero radii, with both kernels, tiny tables and several thread counts.

use crate::common;

use common::spheres_within;
use hhg_core::broad::{RadiusRule, VariableRadiusSearch};
use hhg_core::{Kernel, NeighborLists, PairList, Real};
use hhg_testkit::{
    SplitMix64, THREAD_COUNTS, TestReal, assert_same_seq, check_lists, check_pairs,
    for_both_precisions, in_pool, lattice, oracle_sphere_pairs, shuffle, to_real, uniform_box,
    uniform_cube,
};
use hhg_xor::{MultilevelSearch, Primes, TableSize};

/// A named set of particles with radii.
struct Particles<T> {
    name: String,
    points: Vec<[T; 3]>,
    radii: Vec<T>,
}

impl<T: TestReal> Particles<T> {
    fn new(name: &str, points: &[[f64; 3]], radii: &[f64]) -> Self {
        Self {
            name: format!("{name} ({}, n = {})", T::NAME, points.len()),
            points: to_real(points),
            radii: radii.iter().map(|&r| T::from_f64(r)).collect(),
        }
    }
}

/// The particle scenes: mixed, bimodal and equal radii, zeros with coincident points, one
/// giant, a lattice at exactly the radius, and far from the origin.
fn particle_scenes<T: TestReal>() -> Vec<Particles<T>> {
    let mut rng = SplitMix64::new(23);
    let mut scenes = Vec::new();

    let points = uniform_box(&mut rng, 1500, [-6.0; 3], [6.0; 3]);
    let radii: Vec<f64> = (0..1500).map(|_| rng.range(0.2, 2.0)).collect();
    scenes.push(Particles::new("mixed radii", &points, &radii));

    let points = uniform_box(&mut rng, 1500, [0.0; 3], [15.0; 3]);
    let radii: Vec<f64> = (0..1500)
        .map(|_| if rng.below(10) == 0 { 3.0 } else { 0.3 })
        .collect();
    scenes.push(Particles::new("bimodal radii", &points, &radii));

    let points = uniform_cube(&mut rng, 1500, [2.0, -1.0, 0.0], 1.0, 30.0);
    scenes.push(Particles::new("equal radii", &points, &[1.0; 1500]));

    let mut points = uniform_box(&mut rng, 1000, [0.0; 3], [8.0; 3]);
    let copies: Vec<[f64; 3]> = points[..100].to_vec();
    points.extend(copies);
    let radii: Vec<f64> = (0..1100)
        .map(|i| {
            if i % 5 == 0 || i >= 1000 {
                0.0
            } else {
                rng.range(0.5, 1.0)
            }
        })
        .collect();
    scenes.push(Particles::new(
        "zero radii and coincident points",
        &points,
        &radii,
    ));

    let points = uniform_box(&mut rng, 800, [0.0; 3], [20.0; 3]);
    let mut radii = vec![0.4; 800];
    radii[17] = 50.0;
    radii[400] = 7.0;
    scenes.push(Particles::new("a giant", &points, &radii));

    let mut points = lattice([10, 10, 10], 0.5, [-1.0, 0.0, 1.0]);
    shuffle(&mut rng, &mut points);
    let radii: Vec<f64> = (0..1000).map(|_| [0.25, 0.5, 1.0][rng.below(3)]).collect();
    scenes.push(Particles::new(
        "lattice at exactly the radius",
        &points,
        &radii,
    ));

    let points = uniform_box(&mut rng, 1200, [1e6 - 10.0; 3], [1e6 + 10.0; 3]);
    let radii: Vec<f64> = (0..1200).map(|_| rng.range(0.5, 3.0)).collect();
    scenes.push(Particles::new("around 1e6", &points, &radii));

    let points = uniform_box(&mut rng, 600, [-3.0; 3], [3.0; 3]);
    scenes.push(Particles::new("all radii zero", &points, &[0.0; 600]));

    scenes.push(Particles::new("one particle", &[[1.0, 2.0, 3.0]], &[0.5]));
    scenes.push(Particles::new("no particle", &[], &[]));
    scenes
}

/// The particles whose radius reaches `p`, by brute force.
fn oracle_query<T: Real>(points: &[[T; 3]], radii: &[T], p: [T; 3]) -> Vec<u32> {
    (0..points.len() as u32)
        .filter(|&j| spheres_within(p, T::default(), points[j as usize], radii[j as usize]))
        .collect()
}

/// Lists from sorted pairs.
fn lists_of(n: usize, pairs: &[[u32; 2]]) -> Vec<Vec<u32>> {
    let mut lists = vec![Vec::new(); n];
    for &[i, j] in pairs {
        lists[i as usize].push(j);
        lists[j as usize].push(i);
    }
    for list in &mut lists {
        list.sort_unstable();
    }
    lists
}

/// Every scene with both kernels and several table sizes: pairs, the visitor, the lists and
/// queries are exact; both kernels give the same sequence; VariableRadiusSearch agrees.
fn every_scene_matches_the_oracle<T: TestReal>() {
    for (s, scene) in particle_scenes::<T>().iter().enumerate() {
        let expected = oracle_sphere_pairs(&scene.points, &scene.radii, RadiusRule::Max);
        let lists = lists_of(scene.points.len(), &expected);
        let mut rng = SplitMix64::new(400 + s as u64);
        let queries: Vec<[T; 3]> = (0..30)
            .map(|k| {
                if scene.points.is_empty() || k % 3 == 0 {
                    std::array::from_fn(|_| T::from_f64(rng.range(-10.0, 25.0)))
                } else {
                    let p = scene.points[rng.below(scene.points.len())];
                    std::array::from_fn(|a| {
                        T::from_f64(p[a].to_f64() + rng.range(-1.0, 1.0) * (k % 2) as f64)
                    })
                }
            })
            .collect();

        let mut reference = VariableRadiusSearch::new(RadiusRule::Max);
        reference.build(&scene.points, &scene.radii).unwrap();
        let mut core_list = PairList::default();
        reference.pairs(&mut core_list).unwrap();
        let mut core_pairs = core_list.pairs().to_vec();
        core_pairs.sort_unstable();
        assert_same_seq(
            &format!("{}: core against brute force", scene.name),
            &core_pairs,
            &expected,
        );

        for size in [TableSize::PerPoint(2), TableSize::Fixed(8)] {
            let mut sequences = Vec::new();
            for kernel in [Kernel::Simd, Kernel::Scalar] {
                let what = format!("multilevel {size:?} {kernel:?}, {}", scene.name);
                let mut search = MultilevelSearch::new(Primes::Teschner);
                search.set_table_size(size).unwrap();
                search.set_kernel(kernel);
                search.build(&scene.points, &scene.radii).unwrap();
                assert_eq!(search.len(), scene.points.len(), "{what}: len");
                assert_eq!(search.is_empty(), scene.points.is_empty(), "{what}");
                let levels = search.levels();
                assert_eq!(
                    levels.iter().map(|l| l.particles).sum::<usize>(),
                    scene.points.len(),
                    "{what}: {levels:?}"
                );
                assert!(levels.windows(2).all(|w| w[0].exponent < w[1].exponent));
                for level in &levels {
                    let want = search.base_cell() * f64::from(level.exponent).exp2();
                    assert!(
                        (level.cell - want).abs() <= 1e-12 * want,
                        "{what}: {level:?}"
                    );
                }

                let mut pair_list = PairList::default();
                pair_list
                    .collect_units(1, |_, stale| stale.push([3, 3]))
                    .unwrap();
                search.pairs(&mut pair_list).unwrap();
                let pairs = pair_list.pairs().to_vec();
                check_pairs(&format!("{what}: pairs"), &pairs, &expected);
                let mut visited = Vec::new();
                search.for_each_pair(|i, j| visited.push([i, j]));
                assert_same_seq(&format!("{what}: visitor"), &visited, &pairs);
                let mut out = NeighborLists::default();
                search.neighbor_lists(&mut out).unwrap();
                check_lists(&format!("{what}: lists"), &out, &lists);
                let mut found = vec![1];
                for (k, &q) in queries.iter().enumerate() {
                    search.query_point(q, &mut found).unwrap();
                    let want = oracle_query(&scene.points, &scene.radii, q);
                    assert_eq!(found, want, "{what}: query {k} at {q:?}");
                    let mut core_found = Vec::new();
                    reference.query_point(q, &mut core_found).unwrap();
                    assert_eq!(found, core_found, "{what}: query {k} against core");
                }
                sequences.push(pairs);
            }
            assert_same_seq(
                &format!("multilevel {size:?}, {}: SIMD against scalar", scene.name),
                &sequences[0],
                &sequences[1],
            );
        }
    }
}

/// Levels follow the radii: the smallest positive radius is in level 0, each particle in the
/// first level whose cell covers its radius, and equal radii make one level.
fn levels_follow_the_radii<T: TestReal>() {
    let points: Vec<[T; 3]> = to_real(&[[0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [9.0; 3]]);
    let radii: Vec<T> = [0.5, 1.0, 3.9, 0.0].map(T::from_f64).to_vec();
    let mut search = MultilevelSearch::new(Primes::Mueller);
    search.build(&points, &radii).unwrap();
    let levels = search.levels();
    let exponents: Vec<(u32, usize)> = levels.iter().map(|l| (l.exponent, l.particles)).collect();
    // 0.5 and 0 in level 0; 1.0 fits 2 * c0 = 1.0 * (1 + 1e-5) exactly: level 1; 3.9: level 3.
    assert_eq!(exponents, vec![(0, 2), (1, 1), (3, 1)]);
    assert!(
        (search.base_cell() - 0.5 * (1.0 + hhg_core::building_blocks::CELL_MARGIN)).abs() < 1e-12
    );
    let mut pair_list = PairList::default();
    search.pairs(&mut pair_list).unwrap();
    let mut pairs = pair_list.pairs().to_vec();
    pairs.sort_unstable();
    assert_eq!(pairs, vec![[0, 1], [0, 2], [1, 2]]);
    search.build(&points, &[T::from_f64(1.0); 4]).unwrap();
    assert_eq!(search.levels().len(), 1);
}

/// A larger set: the pairs and lists are identical for 1, 2 and 16 threads and agree with
/// VariableRadiusSearch.
fn thread_counts_give_identical_output<T: TestReal>() {
    let mut rng = SplitMix64::new(29);
    let points: Vec<[T; 3]> = to_real(&uniform_box(&mut rng, 10_000, [0.0; 3], [30.0; 3]));
    let radii: Vec<T> = (0..10_000)
        .map(|_| T::from_f64(rng.range(0.3, 1.2).powi(3)))
        .collect();
    let mut reference = VariableRadiusSearch::new(RadiusRule::Max);
    reference.build(&points, &radii).unwrap();
    let mut expected_list = PairList::default();
    reference.pairs(&mut expected_list).unwrap();
    let mut expected = expected_list.pairs().to_vec();
    expected.sort_unstable();
    let mut first: Option<(Vec<[u32; 2]>, Vec<u32>)> = None;
    for threads in THREAD_COUNTS {
        let (pairs, lists) = in_pool(threads, || {
            let mut search = MultilevelSearch::new(Primes::Teschner);
            search.build(&points, &radii).unwrap();
            let mut pairs = PairList::default();
            search.pairs(&mut pairs).unwrap();
            let mut lists = NeighborLists::default();
            search.neighbor_lists(&mut lists).unwrap();
            (pairs.pairs().to_vec(), lists.indices().to_vec())
        });
        check_pairs(&format!("{threads} threads"), &pairs, &expected);
        match &first {
            None => first = Some((pairs, lists)),
            Some((p, l)) => {
                assert_same_seq(&format!("{threads} threads: pairs"), &pairs, p);
                assert_same_seq(&format!("{threads} threads: lists"), &lists, l);
            }
        }
    }
}

for_both_precisions!(
    every_scene_matches_the_oracle,
    levels_follow_the_radii,
    thread_counts_give_identical_output,
);

/// Every option reads back what was set; a refused table size leaves the old one.
#[test]
fn options_read_back() {
    let mut search = MultilevelSearch::<f32>::new(Primes::Mueller);
    assert_eq!(search.primes(), Primes::Mueller);
    assert_eq!(search.kernel(), Kernel::Simd);
    assert_eq!(search.table_size(), TableSize::PerPoint(2));
    search.set_kernel(Kernel::Scalar);
    search.set_table_size(TableSize::Fixed(64)).unwrap();
    assert_eq!(search.kernel(), Kernel::Scalar);
    assert_eq!(search.table_size(), TableSize::Fixed(64));
    assert!(search.set_table_size(TableSize::Fixed(0)).is_err());
    assert_eq!(search.table_size(), TableSize::Fixed(64));
}
