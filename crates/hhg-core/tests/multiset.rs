//! Multi-set tests: `NeighborSearch` with a moving fluid and a static boundary, its activation table, and its agreement with the oracle per pair of sets.

use hhg_core::reorder::apply_order;
use hhg_core::{Kernel, NeighborSearch, SetId};
use hhg_testkit::{
    Csr, SplitMix64, THREAD_COUNTS, TestReal, build_grid, check_excludes_self,
    check_list_distances, check_lists, for_both_precisions, in_pool, lattice, oracle_cross,
    oracle_self, to_real, uniform_cube,
};

/// A fluid block above a boundary plate, both in `T`.
fn fluid_and_boundary<T: TestReal>(seed: u64) -> (Vec<[T; 3]>, Vec<[T; 3]>) {
    let mut rng = SplitMix64::new(seed);
    let fluid = uniform_cube(&mut rng, 1500, [0.0, 0.0, 2.5], 1.0, 30.0);
    // Two layers of boundary samples with spacing 0.5 under and around the block.
    let boundary = lattice([36, 36, 2], 0.5, [-9.0, -9.0, -0.5]);
    (to_real(&fluid), to_real(&boundary))
}

/// Moves every point by a random displacement plus a drift towards the boundary.
fn step<T: TestReal>(rng: &mut SplitMix64, points: &[[T; 3]], drift: f64) -> Vec<[T; 3]> {
    points
        .iter()
        .map(|p| {
            let d = [
                rng.range(-0.1, 0.1),
                rng.range(-0.1, 0.1),
                rng.range(-0.1, 0.1) - drift,
            ];
            std::array::from_fn(|a| T::from_f64(p[a].to_f64() + d[a]))
        })
        .collect()
}

/// Checks the lists of every active pair of sets against the oracle, and that inactive
/// pairs give `None`. Returns the lists of the active pairs, in order.
fn check_search<T: TestReal>(
    what: &str,
    search: &NeighborSearch<T>,
    sets: &[(SetId, &[[T; 3]])],
    radius: T,
) -> Vec<Csr> {
    let mut all = Vec::new();
    for &(a, points_a) in sets {
        for &(b, points_b) in sets {
            let label = format!("{what}: set {a} searching set {b}");
            match (search.is_active(a, b), search.neighbors(a, b)) {
                (false, None) => {}
                (false, Some(_)) => panic!("{label}: inactive, but neighbors() gives lists"),
                (true, None) => panic!("{label}: active and searched, but neighbors() gives None"),
                (true, Some(lists)) => {
                    if a == b {
                        check_lists(&label, lists, &oracle_self(points_a, radius));
                        check_excludes_self(&label, lists);
                    } else {
                        check_lists(&label, lists, &oracle_cross(points_a, points_b, radius));
                    }
                    all.push(Csr::of(lists));
                }
            }
        }
    }
    all
}

/// The whole scenario for one kernel: fluid->fluid and fluid->boundary active, the fluid
/// moving for a few steps, then the activation changed and the boundary moved once.
/// Returns every list computed, for comparison across kernels and thread counts.
fn scenario<T: TestReal>(kernel: Kernel, threads: usize) -> Vec<Csr> {
    let what = format!("{} [{kernel:?} kernel, {threads} threads]", T::NAME);
    let radius = T::from_f64(1.0);
    let (mut fluid, mut boundary) = fluid_and_boundary::<T>(1);
    let mut rng = SplitMix64::new(2);
    let mut search = NeighborSearch::new(radius).unwrap();
    search.set_kernel(kernel);
    let f = search.add_dynamic_set(&fluid).unwrap();
    let b = search.add_static_set(&boundary).unwrap();
    assert_eq!((f, b, search.set_count()), (0, 1, 2));
    search.set_active(f, f, true).unwrap();
    search.set_active(f, b, true).unwrap();
    assert!(search.is_active(f, f) && search.is_active(f, b));
    assert!(!search.is_active(b, f) && !search.is_active(b, b));
    assert!(!search.is_active(f, 7) && !search.is_active(7, f));
    assert!(
        search.neighbors(f, f).is_none(),
        "{what}: lists before the first search"
    );

    let mut results = Vec::new();
    search.find_neighbors().unwrap();
    results.extend(check_search(
        &what,
        &search,
        &[(f, &fluid), (b, &boundary)],
        radius,
    ));
    assert!(search.neighbors(b, f).is_none() && search.neighbors(b, b).is_none());
    let static_order = search.grid(b).unwrap().order().to_vec();
    let static_table = search.grid(b).unwrap().table().copied();
    assert!(search.grid(2).is_none());

    for k in 0..4 {
        let label = format!("{what}, step {k}");
        fluid = step(&mut rng, &fluid, 0.4);
        search.update_positions(f, &fluid).unwrap();
        assert!(
            search.neighbors(f, f).is_none() && search.neighbors(f, b).is_none(),
            "{label}: lists of the old positions are still offered after update_positions"
        );
        // Every other step the solver adopts the cell order and permutes its positions.
        if k % 2 == 1 {
            let order = search.adopt_cell_order(f).unwrap().to_vec();
            apply_order(&order, &mut fluid);
            assert!(
                search.grid(f).unwrap().in_cell_order(),
                "{label}: the adopted set is not in cell order"
            );
        }
        search.find_neighbors().unwrap();
        results.extend(check_search(
            &label,
            &search,
            &[(f, &fluid), (b, &boundary)],
            radius,
        ));
        let static_grid = search.grid(b).unwrap();
        assert_eq!(
            static_grid.order(),
            &static_order[..],
            "{label}: the static grid changed"
        );
        assert_eq!(
            static_grid.table().copied(),
            static_table,
            "{label}: the static table changed"
        );
        let fresh = build_grid(&fluid, radius, kernel);
        assert_eq!(
            search.grid(f).unwrap().order(),
            fresh.order(),
            "{label}: the fluid grid is not the grid of the new positions"
        );
    }

    // A search without moving anything gives the same lists again.
    let before = check_search(&what, &search, &[(f, &fluid), (b, &boundary)], radius);
    search.find_neighbors().unwrap();
    let again = check_search(&what, &search, &[(f, &fluid), (b, &boundary)], radius);
    assert_eq!(before, again, "{what}: a repeated search changed the lists");

    // Turn boundary -> fluid on and fluid -> boundary off.
    search.set_active(b, f, true).unwrap();
    search.set_active(f, b, false).unwrap();
    assert!(
        search.neighbors(f, b).is_none(),
        "{what}: deactivated pair still offers lists"
    );
    search.find_neighbors().unwrap();
    results.extend(check_search(
        &format!("{what}, boundary active"),
        &search,
        &[(f, &fluid), (b, &boundary)],
        radius,
    ));

    // Moving the static boundary rebuilds its grid.
    boundary = step(&mut rng, &boundary, -0.3);
    search.update_positions(b, &boundary).unwrap();
    assert_eq!(
        search.grid(b).unwrap().order(),
        build_grid(&boundary, radius, kernel).order(),
        "{what}: the static grid was not rebuilt for its new positions"
    );
    search.set_active(f, b, true).unwrap();
    search.find_neighbors().unwrap();
    results.extend(check_search(
        &format!("{what}, boundary moved"),
        &search,
        &[(f, &fluid), (b, &boundary)],
        radius,
    ));
    results
}

for_both_precisions!(
    adopting_the_cell_order_of_every_set,
    fluid_and_static_boundary,
    soa_sets_match_aos_sets,
    static_pairs_and_empty_sets,
    distances_for_every_active_pair
);

/// The fluid/boundary scenario agrees with the oracle for both kernels and 1, 2 and 16
/// threads, and all of them give identical lists.
fn fluid_and_static_boundary<T: TestReal>() {
    let mut reference: Option<(String, Vec<Csr>)> = None;
    for kernel in [Kernel::Simd, Kernel::Scalar] {
        for threads in THREAD_COUNTS {
            let results = in_pool(threads, || scenario::<T>(kernel, threads));
            let label = format!("{kernel:?} kernel, {threads} threads");
            match &reference {
                None => reference = Some((label, results)),
                Some((first, expected)) => {
                    assert_eq!(results.len(), expected.len());
                    for (k, (got, want)) in results.iter().zip(expected).enumerate() {
                        got.assert_same(
                            &format!("{} lists {k}: {label} vs {first}", T::NAME),
                            want,
                        );
                    }
                }
            }
        }
    }
}

/// Sets given as separate coordinate slices behave exactly like AoS sets.
fn soa_sets_match_aos_sets<T: TestReal>() {
    let radius = T::from_f64(1.0);
    let (fluid, boundary) = fluid_and_boundary::<T>(3);
    let split =
        |p: &[[T; 3]]| -> [Vec<T>; 3] { std::array::from_fn(|a| p.iter().map(|q| q[a]).collect()) };
    let mut aos = NeighborSearch::new(radius).unwrap();
    let mut soa = NeighborSearch::new(radius).unwrap();
    let fa = aos.add_dynamic_set(&fluid).unwrap();
    let ba = aos.add_static_set(&boundary).unwrap();
    let [x, y, z] = split(&fluid);
    let fs = soa.add_set_soa(&x, &y, &z, true).unwrap();
    let [x, y, z] = split(&boundary);
    let bs = soa.add_set_soa(&x, &y, &z, false).unwrap();
    for (search, f, b) in [(&mut aos, fa, ba), (&mut soa, fs, bs)] {
        search.set_active(f, f, true).unwrap();
        search.set_active(f, b, true).unwrap();
        search.set_active(b, f, true).unwrap();
    }
    let mut rng = SplitMix64::new(4);
    let mut fluid = fluid;
    for k in 0..3 {
        aos.find_neighbors().unwrap();
        soa.find_neighbors().unwrap();
        let sets = [(fa, &fluid[..]), (ba, &boundary[..])];
        let a = check_search(&format!("{} AoS, step {k}", T::NAME), &aos, &sets, radius);
        let s = check_search(&format!("{} SoA, step {k}", T::NAME), &soa, &sets, radius);
        assert_eq!(a, s, "step {k}: SoA and AoS sets differ");
        fluid = step(&mut rng, &fluid, 0.3);
        aos.update_positions(fa, &fluid).unwrap();
        let [x, y, z] = split(&fluid);
        soa.update_positions_soa(fs, &x, &y, &z).unwrap();
    }
}

/// Two static sets searching each other, an empty set, and a set searching itself and a
/// copy of itself.
fn static_pairs_and_empty_sets<T: TestReal>() {
    let radius = T::from_f64(1.0);
    let mut rng = SplitMix64::new(5);
    let first: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 600, [0.0; 3], 1.0, 30.0));
    let mut second: Vec<[T; 3]> = to_real(&uniform_cube(&mut rng, 400, [1.0; 3], 1.0, 30.0));
    let none: Vec<[T; 3]> = Vec::new();
    in_pool(2, || {
        let mut search = NeighborSearch::new(radius).unwrap();
        let a = search.add_static_set(&first).unwrap();
        let b = search.add_static_set(&second).unwrap();
        let e = search.add_dynamic_set(&none).unwrap();
        let c = search.add_dynamic_set(&first).unwrap();
        for x in [a, b, e, c] {
            for y in [a, b, e, c] {
                search.set_active(x, y, true).unwrap();
            }
        }
        let sets = |second: &[[T; 3]]| -> Vec<(SetId, Vec<[T; 3]>)> {
            vec![
                (a, first.clone()),
                (b, second.to_vec()),
                (e, none.clone()),
                (c, first.clone()),
            ]
        };
        for k in 0..3 {
            search.find_neighbors().unwrap();
            let owned = sets(&second);
            let borrowed: Vec<(SetId, &[[T; 3]])> =
                owned.iter().map(|(s, p)| (*s, &p[..])).collect();
            let lists = check_search(
                &format!("{} static pairs, round {k}", T::NAME),
                &search,
                &borrowed,
                radius,
            );
            assert_eq!(lists.len(), 16);
            // A set searching an identical copy of itself finds itself too.
            let with_self = search.neighbors(c, a).unwrap();
            for i in 0..first.len() {
                assert!(with_self.neighbors(i).contains(&(i as u32)));
            }
            second = step(&mut rng, &second, 0.2);
            search.update_positions(b, &second).unwrap();
        }
    });
}

/// A search over a dynamic `fluid` and a static `boundary` with all four pairs of sets
/// active, searched once; returns it with the two set ids.
fn all_pairs_active<T: TestReal>(
    radius: T,
    fluid: &[[T; 3]],
    boundary: &[[T; 3]],
) -> (NeighborSearch<T>, SetId, SetId) {
    let mut search = NeighborSearch::new(radius).unwrap();
    let f = search.add_dynamic_set(fluid).unwrap();
    let b = search.add_static_set(boundary).unwrap();
    for (x, y) in [(f, f), (f, b), (b, f), (b, b)] {
        search.set_active(x, y, true).unwrap();
    }
    search.find_neighbors().unwrap();
    (search, f, b)
}

/// Adopting the cell order of every set, static ones too, renumbers every list that involves
/// them: after the caller permutes its positions, all four pairs of sets match the oracle
/// on the permuted points, with 1, 2 and 16 threads.
fn adopting_the_cell_order_of_every_set<T: TestReal>() {
    let radius = T::from_f64(1.0);
    for threads in THREAD_COUNTS {
        in_pool(threads, || {
            let what = format!("{} adopted, {threads} threads", T::NAME);
            let (mut fluid, mut boundary) = fluid_and_boundary::<T>(31);
            let (mut search, f, b) = all_pairs_active(radius, &fluid, &boundary);
            check_search(&what, &search, &[(f, &fluid), (b, &boundary)], radius);
            assert!(search.adopt_cell_order(2).is_err(), "{what}: no set 2");
            for (set, points) in [(f, &mut fluid), (b, &mut boundary)] {
                let order = search.adopt_cell_order(set).unwrap().to_vec();
                assert!(
                    order.iter().enumerate().any(|(k, &i)| k != i as usize),
                    "{what}: set {set} was in cell order already, the test would be vacuous"
                );
                apply_order(&order, points);
            }
            for (x, y) in [(f, f), (f, b), (b, f), (b, b)] {
                assert!(
                    search.neighbors(x, y).is_none(),
                    "{what}: lists of the old numbering offered for {x} in {y}"
                );
            }
            search.find_neighbors().unwrap();
            check_search(&what, &search, &[(f, &fluid), (b, &boundary)], radius);
        });
    }
}

/// With distances switched on, every active pair of sets carries the formula's squared
/// distances, and switching them on after a search recomputes the static lists too.
fn distances_for_every_active_pair<T: TestReal>() {
    let (fluid, boundary) = fluid_and_boundary::<T>(21);
    // The fluid has drifted onto the boundary plate.
    let fluid: Vec<[T; 3]> = fluid
        .iter()
        .map(|p| [p[0], p[1], p[2] - T::from_f64(2.2)])
        .collect();
    let radius = T::from_f64(1.0);
    let (mut search, f, b) = all_pairs_active(radius, &fluid, &boundary);
    assert!(
        search
            .neighbors(b, b)
            .unwrap()
            .distances_squared()
            .is_none()
    );
    search.set_with_distances(true);
    search.find_neighbors().unwrap();
    let sets = [&fluid, &boundary];
    for (x, y) in [(f, f), (f, b), (b, f), (b, b)] {
        let what = format!("{} set {x} in set {y}", T::NAME);
        let lists = search.neighbors(x, y).unwrap();
        let expected = if x == y {
            oracle_self(sets[x], radius)
        } else {
            oracle_cross(sets[x], sets[y], radius)
        };
        assert!(
            lists.total() > 0,
            "{what}: no pair at all, the test would be vacuous"
        );
        check_lists(&what, lists, &expected);
        check_list_distances(&what, lists, sets[x], sets[y]);
    }
}

/// Every option of `NeighborSearch` and of its grids reads back what was set.
#[test]
fn options_read_back() {
    use hhg_core::{Grid, ListOrder, RunTimeDispatch};

    let mut search = NeighborSearch::new(1.0f32).unwrap();
    assert_eq!(
        (
            search.kernel(),
            search.list_order(),
            search.with_distances()
        ),
        (Kernel::Simd, ListOrder::Ascending, false)
    );
    search.set_kernel(Kernel::Scalar);
    search.set_list_order(ListOrder::CellOrder);
    search.set_with_distances(true);
    assert_eq!(
        (
            search.kernel(),
            search.list_order(),
            search.with_distances()
        ),
        (Kernel::Scalar, ListOrder::CellOrder, true)
    );
    let mut grid = Grid::new(1.0f64).unwrap();
    assert_eq!(
        (grid.kernel(), grid.run_time_dispatch()),
        (Kernel::Simd, RunTimeDispatch::Widest)
    );
    grid.set_kernel(Kernel::Scalar);
    grid.set_run_time_dispatch(RunTimeDispatch::Off);
    assert_eq!(
        (grid.kernel(), grid.run_time_dispatch()),
        (Kernel::Scalar, RunTimeDispatch::Off)
    );
}

/// `replace_set` grows and shrinks a set: the lists after it match the oracle on the new
/// points, in both directions of the search, and a refused replacement keeps the old points.
fn replace_set_changes_the_point_count<T: TestReal>() {
    let radius = T::from_f64(1.0);
    let (fluid, boundary) = fluid_and_boundary::<T>(7);
    let mut search = NeighborSearch::new(radius).unwrap();
    let f = search.add_dynamic_set(&fluid[..500]).unwrap();
    let b = search.add_static_set(&boundary).unwrap();
    for (a, c) in [(f, f), (f, b), (b, f)] {
        search.set_active(a, c, true).unwrap();
    }
    for n in [1500, 200, 0, 900] {
        search
            .replace_set(f, hhg_core::Points::Aos(&fluid[..n]))
            .unwrap();
        search.find_neighbors().unwrap();
        let sets: [(SetId, &[[T; 3]]); 2] = [(f, &fluid[..n]), (b, &boundary)];
        check_search(
            &format!("{} replaced by {n} points", T::NAME),
            &search,
            &sets,
            radius,
        );
    }
    let mut bad = fluid[..10].to_vec();
    bad[3][1] = T::from_f64(f64::NAN);
    assert!(search.replace_set(f, hhg_core::Points::Aos(&bad)).is_err());
    assert_eq!(search.grid(f).unwrap().len(), 900);
}

for_both_precisions!(replace_set_changes_the_point_count);
