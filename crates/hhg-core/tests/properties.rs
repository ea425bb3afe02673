//! Property-based tests (proptest, with shrinking) of every search against brute force.
//!
//! The seeded differential tests explore fixed scenes; here proptest draws small random
//! scenes (0 to about 300 points or boxes) mixing uniform points, duplicates, points on cell
//! borders, pairs exactly one radius apart, large and negative offsets (about ±1e6, and
//! ±1e15 in `f64`) and tight clusters, and shrinks any failure to a minimal scene. Every
//! answer is compared with a brute-force loop over the library's exact predicates, and the
//! results of the SIMD and scalar kernels (and, for `Grid`, of the SIMD kernel's AVX-512,
//! AVX2 and compiled builds) and of 1 and 3 threads must be identical.
//!
//! Cases per property (each runs both kernels at both thread counts): `grid_f32` and
//! `grid_f64` 512, `neighbor_search_f32` and `neighbor_search_f64` 256, `periodic_f32`,
//! `periodic_f64`, `variable_radius_f32`, `variable_radius_f64`, `broad_phase_f32` and
//! `broad_phase_f64` 384 each; the whole file runs in about 5 s in the
//! test profile on two cores. `PROPTEST_CASES` overrides every count for a longer run.
//! The broad-phase properties draw `all_pairs_below` from 0, 8 and 512, so that these small
//! inputs go through the hierarchy as well as through the all-pairs path.

use std::collections::BTreeSet;

use hhg_core::broad::{
    Aabb, BroadPhase, BroadPhaseConfig, Filter, RadiusRule, VariableRadiusSearch, boxes_overlap,
    segment_may_hit,
};
use hhg_core::periodic::{PeriodicBox, PeriodicPair, PeriodicPairList, PeriodicSearch};
use hhg_core::{
    Error, Grid, Kernel, ListOrder, NeighborLists, NeighborSearch, PairList, RunTimeDispatch,
};
use hhg_testkit::strategies::{Cloud, RADII, cloud, offset, points, two_clouds};
use hhg_testkit::{
    Csr, TestReal, assert_same_seq, check_excludes_self, check_list_distances, check_lists,
    check_pair_distances, check_pairs, in_pool, oracle_cross, oracle_pairs, oracle_periodic_pairs,
    oracle_point, oracle_self, oracle_sphere_pairs, to_real, within,
};
use proptest::prelude::*;
use proptest::sample::{Index, select};

/// The thread counts every path runs with here.
const THREADS: [usize; 2] = [1, 3];

/// The kernels every path runs with.
const KERNELS: [Kernel; 2] = [Kernel::Simd, Kernel::Scalar];

/// The paths of a grid: the SIMD kernel in the widest run-time build the CPU has, in the
/// AVX2 build, as compiled, and the scalar kernel.
const GRID_PATHS: [(Kernel, RunTimeDispatch); 4] = [
    (Kernel::Simd, RunTimeDispatch::Widest),
    (Kernel::Simd, RunTimeDispatch::UpToAvx2),
    (Kernel::Simd, RunTimeDispatch::Off),
    (Kernel::Scalar, RunTimeDispatch::Off),
];

/// Query probes near the scene: some of its points, some points nearby.
fn probes<T: TestReal>(points: &[[T; 3]], radius: T, picks: &[(Index, [i8; 3])]) -> Vec<[T; 3]> {
    let mut probes = Vec::new();
    for (k, &(pick, step)) in picks.iter().enumerate() {
        let base = if points.is_empty() {
            [T::default(); 3]
        } else {
            points[pick.index(points.len())]
        };
        if k % 2 == 0 {
            probes.push(base);
        } else {
            let quarter = radius.to_f64() / 4.0;
            probes.push(std::array::from_fn(|a| {
                T::from_f64(base[a].to_f64() + f64::from(step[a]) * quarter)
            }));
        }
    }
    probes
}

/// Everything one grid answers, for comparing kernels and thread counts.
#[derive(Debug, PartialEq)]
struct GridAnswers {
    pairs: Vec<[u32; 2]>,
    pairs_d: Vec<[u32; 2]>,
    pair_distances: Vec<u64>,
    lists: Csr,
    lists_d: Csr,
    cell_lists: Csr,
    cell_lists_d: Csr,
    queries: Vec<Vec<u32>>,
    query_lists: Csr,
    query_lists_d: Csr,
}

/// Builds a grid over `points` on `path` (a kernel and a run-time build) and collects every
/// answer, checking the distances of each output against the formula.
fn grid_answers<T: TestReal>(
    points: &[[T; 3]],
    radius: T,
    path: (Kernel, RunTimeDispatch),
    probes: &[[T; 3]],
) -> GridAnswers {
    let mut grid = Grid::new(radius).unwrap();
    grid.set_kernel(path.0);
    grid.set_run_time_dispatch(path.1);
    grid.build(points).unwrap();
    let mut pairs = PairList::default();
    grid.pairs(&mut pairs).unwrap();
    let mut pairs_d = PairList::default();
    grid.pairs_with_distances(&mut pairs_d).unwrap();
    let mut lists = NeighborLists::default();
    grid.neighbor_lists(&mut lists).unwrap();
    check_excludes_self("neighbor_lists", &lists);
    let mut lists_d = NeighborLists::default();
    grid.neighbor_lists_with_distances(&mut lists_d).unwrap();
    check_list_distances("neighbor_lists_with_distances", &lists_d, points, points);
    check_pair_distances(
        "pairs_with_distances",
        pairs_d.pairs(),
        pairs_d.distances_squared().unwrap(),
        points,
    );
    let queries = probes
        .iter()
        .map(|&p| {
            let mut found = vec![u32::MAX];
            grid.query_point(p, &mut found).unwrap();
            found
        })
        .collect();
    let mut query_lists = NeighborLists::default();
    grid.query(probes, &mut query_lists).unwrap();
    let mut query_lists_d = NeighborLists::default();
    grid.query_with_distances(probes, &mut query_lists_d)
        .unwrap();
    check_list_distances("query_with_distances", &query_lists_d, probes, points);
    grid.set_list_order(ListOrder::CellOrder);
    let mut cell_lists = NeighborLists::default();
    grid.neighbor_lists(&mut cell_lists).unwrap();
    let mut cell_lists_d = NeighborLists::default();
    grid.neighbor_lists_with_distances(&mut cell_lists_d)
        .unwrap();
    check_list_distances(
        "cell-order lists with distances",
        &cell_lists_d,
        points,
        points,
    );
    GridAnswers {
        pairs: pairs.pairs().to_vec(),
        pairs_d: pairs_d.pairs().to_vec(),
        pair_distances: pairs_d
            .distances_squared()
            .unwrap()
            .iter()
            .map(|d| d.bits())
            .collect(),
        lists: Csr::of(&lists),
        lists_d: Csr::of(&lists_d),
        cell_lists: Csr::of(&cell_lists),
        cell_lists_d: Csr::of(&cell_lists_d),
        queries,
        query_lists: Csr::of(&query_lists),
        query_lists_d: Csr::of(&query_lists_d),
    }
}

/// The lists of a [`Csr`] copy, each sorted.
fn sorted_lists(csr: &Csr) -> Vec<Vec<u32>> {
    csr.offsets
        .windows(2)
        .map(|w| {
            let mut list = csr.indices[w[0]..w[1]].to_vec();
            list.sort_unstable();
            list
        })
        .collect()
}

/// Checks a grid over the scene against the oracle, and that both kernels at 1 and 3
/// threads answer identically.
fn check_grid<T: TestReal>(cloud: &Cloud, picks: &[(Index, [i8; 3])]) {
    let points: Vec<[T; 3]> = to_real(&cloud.points);
    let radius = T::from_f64(cloud.radius);
    let probes = probes(&points, radius, picks);
    let reference = in_pool(1, || grid_answers(&points, radius, GRID_PATHS[0], &probes));
    let expected_pairs = oracle_pairs(&points, radius);
    check_pairs("pairs", &reference.pairs, &expected_pairs);
    assert_same_seq("pairs_with_distances", &reference.pairs_d, &reference.pairs);
    // The list check of the test kit names the first list that differs from the oracle.
    let expected_lists = oracle_self(&points, radius);
    let mut grid = Grid::new(radius).unwrap();
    grid.build(&points).unwrap();
    let mut lists = NeighborLists::default();
    grid.neighbor_lists(&mut lists).unwrap();
    check_lists("neighbor_lists", &lists, &expected_lists);
    assert_eq!(Csr::of(&lists), reference.lists, "lists of a second build");
    assert_eq!(reference.lists_d.indices, reference.lists.indices);
    assert_eq!(
        sorted_lists(&reference.cell_lists),
        expected_lists,
        "cell-order lists"
    );
    assert_eq!(reference.cell_lists_d.indices, reference.cell_lists.indices);
    for (p, found) in probes.iter().zip(&reference.queries) {
        assert_eq!(
            found,
            &oracle_point(&points, *p, radius),
            "query_point({p:?})"
        );
    }
    assert_eq!(
        sorted_lists(&reference.query_lists),
        oracle_cross(&probes, &points, radius),
        "query"
    );
    assert_eq!(
        reference.query_lists_d.indices,
        reference.query_lists.indices
    );
    for path in GRID_PATHS {
        for threads in THREADS {
            let got = in_pool(threads, || grid_answers(&points, radius, path, &probes));
            assert!(
                got == reference,
                "{path:?} with {threads} threads differs from {:?} with 1 thread",
                GRID_PATHS[0]
            );
        }
    }
}

/// Checks a search over a dynamic set `a` and a static set `b`, every pair of sets active,
/// against brute force, before and after `a` moves by `shift` quarter radii along x.
fn check_neighbor_search<T: TestReal>(a: &Cloud, b: &Cloud, cell_order: bool, shift: i8) {
    let radius = T::from_f64(a.radius);
    let pa: Vec<[T; 3]> = to_real(&a.points);
    let pb: Vec<[T; 3]> = to_real(&b.points);
    let mut reference: Option<Vec<Csr>> = None;
    for kernel in KERNELS {
        for threads in THREADS {
            let got = in_pool(threads, || {
                let mut search = NeighborSearch::new(radius).unwrap();
                search.set_kernel(kernel);
                search.set_with_distances(true);
                if cell_order {
                    search.set_list_order(ListOrder::CellOrder);
                }
                let fa = search.add_dynamic_set(&pa).unwrap();
                let fb = search.add_static_set(&pb).unwrap();
                for (s, t) in [(fa, fa), (fa, fb), (fb, fa), (fb, fb)] {
                    search.set_active(s, t, true).unwrap();
                }
                let mut copies = Vec::new();
                let mut check = |search: &NeighborSearch<T>, pa: &[[T; 3]]| {
                    for (s, t, from, to) in [
                        (fa, fa, pa, pa),
                        (fa, fb, pa, &pb[..]),
                        (fb, fa, &pb[..], pa),
                        (fb, fb, &pb[..], &pb[..]),
                    ] {
                        let lists = search.neighbors(s, t).unwrap();
                        let expected = if s == t {
                            oracle_self(from, radius)
                        } else {
                            oracle_cross(from, to, radius)
                        };
                        let what = format!("sets ({s}, {t})");
                        if cell_order {
                            assert_eq!(sorted_lists(&Csr::of(lists)), expected, "{what}");
                        } else {
                            check_lists(&what, lists, &expected);
                        }
                        check_list_distances(&what, lists, from, to);
                        copies.push(Csr::of(lists));
                    }
                };
                search.find_neighbors().unwrap();
                check(&search, &pa);
                // The dynamic set moves by a quarter radius along x and is searched again.
                let moved: Vec<[T; 3]> = pa
                    .iter()
                    .map(|p| {
                        let step = f64::from(shift) * a.radius / 4.0;
                        [T::from_f64(p[0].to_f64() + step), p[1], p[2]]
                    })
                    .collect();
                search.update_positions(fa, &moved).unwrap();
                search.find_neighbors().unwrap();
                check(&search, &moved);
                copies
            });
            match &reference {
                None => reference = Some(got),
                Some(reference) => assert!(
                    &got == reference,
                    "{kernel:?} with {threads} threads differs from SIMD with 1 thread"
                ),
            }
        }
    }
}

/// A periodic scene: the points, the radius and the box (lengths in radii, origin).
#[derive(Clone, Debug)]
struct PeriodicScene {
    cloud: Cloud,
    lengths: [f64; 3],
    origin: [f64; 3],
    periodic: [bool; 3],
}

/// A periodic scene: a box of 2.5 to 13 radii per axis, each axis periodic or open, and
/// points around its middle (reaching outside it).
fn periodic_scene(big: bool) -> impl Strategy<Value = PeriodicScene> {
    (
        select(RADII.to_vec()),
        offset(big),
        prop::array::uniform3(select(vec![2.5, 3.0, 4.75, 8.0, 13.0])),
        prop::array::uniform3(any::<bool>()),
    )
        .prop_flat_map(|(radius, origin, lengths, periodic)| {
            // The points lie around the middle of the box, reaching a few lengths outside.
            let centre: [f64; 3] = std::array::from_fn(|a| origin[a] + lengths[a] * radius / 2.0);
            points(radius, centre).prop_map(move |points| PeriodicScene {
                cloud: Cloud { radius, points },
                lengths: lengths.map(|l| l * radius),
                origin,
                periodic,
            })
        })
}

/// Checks the periodic pairs, their shifts and distances and the lists against the
/// minimum-image oracle, at 1 and 3 threads.
fn check_periodic<T: TestReal>(scene: &PeriodicScene) {
    let points: Vec<[T; 3]> = to_real(&scene.cloud.points);
    let radius = T::from_f64(scene.cloud.radius);
    let domain = PeriodicBox {
        origin: scene.origin.map(T::from_f64),
        lengths: scene.lengths.map(T::from_f64),
        periodic: scene.periodic,
    };
    // A periodic box that does not stand out of the rounding of its coordinates (a short box
    // far from the origin) is refused, as documented: its length minus the spacing of `T`
    // there, `(|origin| + 2 length) * epsilon`, not above twice the radius (with the cells'
    // margin of 1e-5).
    if let Err(error) = PeriodicSearch::new(radius, domain) {
        let epsilon = if size_of::<T>() == 4 {
            f64::from(f32::EPSILON)
        } else {
            f64::EPSILON
        };
        let below_resolution = (0..3).any(|a| {
            let (o, l) = (domain.origin[a].to_f64(), domain.lengths[a].to_f64());
            let spacing = (o.abs() + 2.0 * l) * epsilon;
            scene.periodic[a] && l - spacing <= 2.0 * radius.to_f64() * (1.0 + 1e-5)
        });
        assert!(
            below_resolution
                && matches!(error, Error::InvalidConfig { name, .. } if name == "periodic box length"),
            "{error:?} for a box above the coordinates' resolution"
        );
        return;
    }
    let expected = oracle_periodic_pairs(&points, radius, &domain);
    let expected_pairs: Vec<PeriodicPair> = expected.iter().map(|&(p, _)| p).collect();
    let mut reference: Option<(Vec<PeriodicPair>, Vec<u64>, Csr)> = None;
    for (kernel, threads) in KERNELS.into_iter().flat_map(|k| THREADS.map(|t| (k, t))) {
        let got = in_pool(threads, || {
            let mut search = PeriodicSearch::new(radius, domain).unwrap();
            search.set_kernel(kernel);
            search.build(&points).unwrap();
            let mut pairs = PeriodicPairList::default();
            search.pairs(&mut pairs).unwrap();
            let mut with_d = PeriodicPairList::default();
            search.pairs_with_distances(&mut with_d).unwrap();
            assert_eq!(with_d.pairs(), pairs.pairs(), "pairs with distances");
            let mut lists = NeighborLists::default();
            search.neighbor_lists(&mut lists).unwrap();
            let distances: Vec<u64> = with_d
                .distances_squared()
                .unwrap()
                .iter()
                .map(|d| d.bits())
                .collect();
            (pairs.pairs().to_vec(), distances, Csr::of(&lists))
        });
        match &reference {
            None => reference = Some(got),
            Some(reference) => assert!(
                &got == reference,
                "{kernel:?} on {threads} threads differs from the first run"
            ),
        }
    }
    let (pairs, distances, lists) = reference.unwrap();
    let mut found: Vec<(PeriodicPair, u64)> = pairs.iter().copied().zip(distances).collect();
    found.sort_unstable_by_key(|&(pair, _)| pair);
    let found_pairs: Vec<PeriodicPair> = found.iter().map(|&(p, _)| p).collect();
    assert_eq!(found_pairs, expected_pairs, "periodic pairs");
    for (&(pair, d2), &(_, want)) in found.iter().zip(&expected) {
        assert_eq!(d2, want.bits(), "distance of {pair:?}");
    }
    let mut want_lists = vec![BTreeSet::new(); points.len()];
    for p in &expected_pairs {
        want_lists[p.i as usize].insert(p.j);
        want_lists[p.j as usize].insert(p.i);
    }
    let want_lists: Vec<Vec<u32>> = want_lists
        .into_iter()
        .map(|s| s.into_iter().collect())
        .collect();
    assert_eq!(sorted_lists(&lists), want_lists, "periodic neighbour lists");
}

/// Configurations of the hierarchy: all-pairs or the grid for small inputs, a few factors
/// and huge fractions.
fn config() -> impl Strategy<Value = BroadPhaseConfig> {
    (
        select(vec![0usize, 8, 512]),
        select(vec![1.5, 2.0, 4.0]),
        select(vec![0.05, 0.25, 1.0]),
    )
        .prop_map(
            |(all_pairs_below, hierarchy_factor, huge_fraction)| BroadPhaseConfig {
                hierarchy_factor,
                huge_fraction,
                all_pairs_below,
            },
        )
}

/// Particles with their own radii, the rule and the hierarchy's settings.
#[derive(Clone, Debug)]
struct Particles {
    cloud: Cloud,
    radii: Vec<f64>,
    rule: RadiusRule,
    config: BroadPhaseConfig,
}

/// Particles: a scene whose radii are multiples (0 to 8) of its radius.
fn particles(big: bool) -> impl Strategy<Value = Particles> {
    (
        cloud(big),
        prop::collection::vec(select(vec![0.0, 0.1, 0.25, 0.5, 1.0, 2.5, 8.0]), 0..400),
        select(vec![RadiusRule::Max, RadiusRule::Mean]),
        config(),
    )
        .prop_map(|(cloud, pool, rule, config)| {
            let radii = (0..cloud.points.len())
                .map(|i| pool.get(i).map_or(cloud.radius, |&f| f * cloud.radius))
                .collect();
            Particles {
                cloud,
                radii,
                rule,
                config,
            }
        })
}

/// Checks the pairs, the lists and point queries of a variable-radius search against brute
/// force, and that both kernels at 1 and 3 threads answer identically.
fn check_variable_radius<T: TestReal>(scene: &Particles, picks: &[(Index, [i8; 3])]) {
    let points: Vec<[T; 3]> = to_real(&scene.cloud.points);
    let radii: Vec<T> = scene.radii.iter().map(|&r| T::from_f64(r)).collect();
    let probes = probes(&points, T::from_f64(scene.cloud.radius), picks);
    let expected = oracle_sphere_pairs(&points, &radii, scene.rule);
    let mut reference = None;
    for kernel in KERNELS {
        for threads in THREADS {
            let got = in_pool(threads, || {
                let mut search = VariableRadiusSearch::new(scene.rule);
                search.set_config(scene.config).unwrap();
                search.set_kernel(kernel);
                search.build(&points, &radii).unwrap();
                let mut pairs = PairList::default();
                search.pairs(&mut pairs).unwrap();
                let mut visited = Vec::new();
                search.for_each_pair(|i, j| visited.push([i, j]));
                assert_same_seq("for_each_pair", &visited, pairs.pairs());
                let mut lists = NeighborLists::default();
                search.neighbor_lists(&mut lists).unwrap();
                let queries: Vec<Vec<u32>> = probes
                    .iter()
                    .map(|&p| {
                        let mut found = Vec::new();
                        search.query_point(p, &mut found).unwrap();
                        found
                    })
                    .collect();
                (pairs.pairs().to_vec(), Csr::of(&lists), queries)
            });
            match &reference {
                None => reference = Some(got),
                Some(reference) => assert!(
                    &got == reference,
                    "{kernel:?} with {threads} threads differs from SIMD with 1 thread"
                ),
            }
        }
    }
    let (pairs, lists, queries) = reference.unwrap();
    check_pairs("variable-radius pairs", &pairs, &expected);
    let mut want = NeighborLists::<T>::default();
    want.assign_from_pairs(points.len(), &expected).unwrap();
    assert_eq!(lists, Csr::of(&want), "variable-radius lists");
    for (p, found) in probes.iter().zip(&queries) {
        let want: Vec<u32> = (0..points.len() as u32)
            .filter(|&j| within(*p, points[j as usize], radii[j as usize]))
            .collect();
        assert_eq!(found, &want, "variable-radius query_point({p:?})");
    }
}

/// A box scene in `f64`, with filters, query boxes and segments.
#[derive(Clone, Debug)]
struct Boxes {
    boxes: Vec<([f64; 3], [f64; 3])>,
    filters: Option<Vec<Filter>>,
    config: BroadPhaseConfig,
    queries: Vec<([f64; 3], [f64; 3])>,
}

/// Box sizes: degenerate, small, about the radius, large; infinite bounds now and then.
fn one_box(corner: [f64; 3]) -> impl Strategy<Value = ([f64; 3], [f64; 3])> {
    (
        prop::array::uniform3(select(vec![0.0, 0.0, 1e-3, 0.125, 0.5, 1.0, 2.0, 40.0])),
        0u8..40,
    )
        .prop_map(move |(size, special)| {
            let mut min = corner;
            let mut max: [f64; 3] = std::array::from_fn(|a| corner[a] + size[a]);
            match special {
                0 => min[0] = f64::NEG_INFINITY,
                1 => max[1] = f64::INFINITY,
                2 => {
                    min = [f64::NEG_INFINITY; 3];
                    max = [f64::INFINITY; 3];
                }
                _ => {}
            }
            (min, max)
        })
}

fn boxes(big: bool) -> impl Strategy<Value = Boxes> {
    (select(RADII.to_vec()), offset(big)).prop_flat_map(|(r, offset)| {
        let corners = points(r, offset);
        (
            corners,
            config(),
            any::<bool>(),
            prop::collection::vec(0u64..8, 0..400),
        )
            .prop_flat_map(move |(corners, config, filtered, bits)| {
                let boxes: Vec<_> = corners.iter().map(|&c| one_box(c)).collect();
                let queries = prop::collection::vec(
                    (
                        any::<Index>(),
                        prop::array::uniform3(select(vec![0.0, 0.5, 3.0])),
                    ),
                    0..8,
                );
                (boxes, queries).prop_map(move |(mut boxes, picks)| {
                    // Touching boxes: every fifth box starts where the one before ends.
                    for k in (5..boxes.len()).step_by(5) {
                        let before = boxes[k - 1].1;
                        if before.iter().all(|v| v.is_finite()) {
                            let size: [f64; 3] =
                                std::array::from_fn(|a| boxes[k].1[a] - boxes[k].0[a]);
                            boxes[k].0 = before;
                            boxes[k].1 = std::array::from_fn(|a| before[a] + size[a]);
                        }
                    }
                    let filters = filtered.then(|| {
                        (0..boxes.len())
                            .map(|i| {
                                let b = bits.get(i).copied().unwrap_or(7);
                                Filter {
                                    group: 1 << (b % 3),
                                    mask: b | 1,
                                }
                            })
                            .collect()
                    });
                    let queries = picks
                        .into_iter()
                        .map(|(pick, size)| {
                            let corner =
                                if boxes.is_empty() {
                                    offset
                                } else {
                                    let b = boxes[pick.index(boxes.len())].0;
                                    std::array::from_fn(|a| {
                                        if b[a].is_finite() { b[a] } else { offset[a] }
                                    })
                                };
                            let max = std::array::from_fn(|a| corner[a] + size[a] * r);
                            (corner, max)
                        })
                        .collect();
                    Boxes {
                        boxes,
                        filters,
                        config,
                        queries,
                    }
                })
            })
    })
}

/// A box of `T` from `f64` corners.
fn aabb<T: TestReal>((min, max): ([f64; 3], [f64; 3])) -> Aabb<T> {
    Aabb::new(min.map(T::from_f64), max.map(T::from_f64))
}

/// Checks the pairs and the box, point and segment queries of a broad phase against brute
/// force, and that both kernels at 1 and 3 threads answer identically.
fn check_broad_phase<T: TestReal>(scene: &Boxes) {
    let boxes: Vec<Aabb<T>> = scene.boxes.iter().map(|&b| aabb(b)).collect();
    let queries: Vec<Aabb<T>> = scene.queries.iter().map(|&b| aabb(b)).collect();
    let accepts = |i: usize, j: usize| scene.filters.as_ref().is_none_or(|f| f[i].accepts(f[j]));
    let mut expected = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if boxes_overlap(boxes[i].min, boxes[i].max, boxes[j].min, boxes[j].max)
                && accepts(i, j)
            {
                expected.push([i as u32, j as u32]);
            }
        }
    }
    let mut reference = None;
    for kernel in KERNELS {
        for threads in THREADS {
            let got = in_pool(threads, || {
                let mut broad = BroadPhase::new();
                broad.set_config(scene.config).unwrap();
                broad.set_kernel(kernel);
                match &scene.filters {
                    Some(filters) => broad.build_filtered(&boxes, filters).unwrap(),
                    None => broad.build(&boxes).unwrap(),
                }
                let mut pairs = PairList::default();
                broad.pairs(&mut pairs).unwrap();
                let mut visited = Vec::new();
                broad.for_each_pair(|i, j| visited.push([i, j]));
                assert_same_seq("for_each_pair", &visited, pairs.pairs());
                let mut found = Vec::new();
                for q in &queries {
                    let mut out = Vec::new();
                    broad.query_aabb(q, &mut out).unwrap();
                    found.push(out.clone());
                    broad.query_point(q.min, &mut out).unwrap();
                    found.push(out.clone());
                    broad.query_segment(q.min, q.max, &mut out).unwrap();
                    found.push(out.clone());
                }
                (pairs.pairs().to_vec(), found)
            });
            match &reference {
                None => reference = Some(got),
                Some(reference) => assert!(
                    &got == reference,
                    "{kernel:?} with {threads} threads differs from SIMD with 1 thread"
                ),
            }
        }
    }
    let (pairs, found) = reference.unwrap();
    check_pairs("box pairs", &pairs, &expected);
    for (k, q) in queries.iter().enumerate() {
        let hits = |test: &dyn Fn(&Aabb<T>) -> bool| -> Vec<u32> {
            (0..boxes.len() as u32)
                .filter(|&i| test(&boxes[i as usize]))
                .collect()
        };
        assert_eq!(found[3 * k], hits(&|b| b.overlaps(q)), "query_aabb({q:?})");
        let point = Aabb::new(q.min, q.min);
        assert_eq!(
            found[3 * k + 1],
            hits(&|b| b.overlaps(&point)),
            "query_point({:?})",
            q.min
        );
        assert_eq!(
            found[3 * k + 2],
            hits(&|b| segment_may_hit(q.min, q.max, b)),
            "query_segment({:?}, {:?})",
            q.min,
            q.max
        );
    }
}

/// Probes: picks of scene points and steps of a quarter radius away from them.
fn picks() -> impl Strategy<Value = Vec<(Index, [i8; 3])>> {
    prop::collection::vec((any::<Index>(), prop::array::uniform3(-5i8..=5)), 0..12)
}

proptest! {
    #![proptest_config(hhg_testkit::strategies::config(512))]

    #[test]
    fn grid_f32(cloud in cloud(false), picks in picks()) {
        check_grid::<f32>(&cloud, &picks);
    }

    #[test]
    fn grid_f64(cloud in cloud(true), picks in picks()) {
        check_grid::<f64>(&cloud, &picks);
    }
}

proptest! {
    #![proptest_config(hhg_testkit::strategies::config(256))]

    #[test]
    fn neighbor_search_f32(clouds in two_clouds(false), cell_order in any::<bool>(), shift in -4i8..=4) {
        check_neighbor_search::<f32>(&clouds.0, &clouds.1, cell_order, shift);
    }

    #[test]
    fn neighbor_search_f64(clouds in two_clouds(true), cell_order in any::<bool>(), shift in -4i8..=4) {
        check_neighbor_search::<f64>(&clouds.0, &clouds.1, cell_order, shift);
    }
}

proptest! {
    #![proptest_config(hhg_testkit::strategies::config(384))]

    #[test]
    fn periodic_f32(scene in periodic_scene(false)) {
        check_periodic::<f32>(&scene);
    }

    #[test]
    fn periodic_f64(scene in periodic_scene(true)) {
        check_periodic::<f64>(&scene);
    }

    #[test]
    fn variable_radius_f32(scene in particles(false), picks in picks()) {
        check_variable_radius::<f32>(&scene, &picks);
    }

    #[test]
    fn variable_radius_f64(scene in particles(true), picks in picks()) {
        check_variable_radius::<f64>(&scene, &picks);
    }

    #[test]
    fn broad_phase_f32(scene in boxes(false)) {
        check_broad_phase::<f32>(&scene);
    }

    #[test]
    fn broad_phase_f64(scene in boxes(true)) {
        check_broad_phase::<f64>(&scene);
    }
}
