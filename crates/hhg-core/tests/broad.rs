//! Differential tests of the broad phase in space and in the plane: overlapping pairs and
//! queries of the hierarchy against brute force, with mixed sizes, huge and infinite boxes,
//! filters and worst cases.

use hhg_core::broad::{Aabb, BroadPhase, BroadPhaseConfig, Filter, segment_may_hit};
use hhg_core::{Error, Kernel, PairList};
use hhg_testkit::{SplitMix64, THREAD_COUNTS, TestReal, check_pairs, in_pool, in_space_and_plane};

/// A named set of boxes, with optional filters.
struct BoxScene<T, const D: usize> {
    name: String,
    boxes: Vec<Aabb<T, D>>,
    filters: Option<Vec<Filter>>,
}

fn aabb<T: TestReal, const D: usize>(min: [f64; D], max: [f64; D]) -> Aabb<T, D> {
    Aabb::new(min.map(T::from_f64), max.map(T::from_f64))
}

/// Boxes with random corners in `lo..hi` and edges in `edge.0..edge.1` (each axis drawn
/// independently, so shapes vary), in `T`.
fn random_boxes<T: TestReal, const D: usize>(
    rng: &mut SplitMix64,
    n: usize,
    lo: [f64; D],
    hi: [f64; D],
    edge: (f64, f64),
) -> Vec<Aabb<T, D>> {
    (0..n)
        .map(|_| {
            let min: [f64; D] = std::array::from_fn(|a| rng.range(lo[a], hi[a]));
            let max: [f64; D] = std::array::from_fn(|a| min[a] + rng.range(edge.0, edge.1));
            aabb::<T, D>(min, max)
        })
        .collect()
}

/// All overlapping pairs by brute force, filters applied, sorted.
fn oracle_pairs<T: TestReal, const D: usize>(
    boxes: &[Aabb<T, D>],
    filters: Option<&[Filter]>,
) -> Vec<[u32; 2]> {
    let mut pairs = Vec::new();
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            let accepted = filters.is_none_or(|f| f[i].accepts(f[j]));
            if accepted && boxes[i].overlaps(&boxes[j]) {
                pairs.push([i as u32, j as u32]);
            }
        }
    }
    pairs
}

fn build<T: TestReal, const D: usize>(
    scene: &BoxScene<T, D>,
    config: BroadPhaseConfig,
    kernel: Kernel,
) -> BroadPhase<T, D> {
    let mut broad = BroadPhase::new();
    broad.set_config(config).expect("a valid configuration");
    broad.set_kernel(kernel);
    match &scene.filters {
        Some(filters) => broad.build_filtered(&scene.boxes, filters),
        None => broad.build(&scene.boxes),
    }
    .unwrap_or_else(|e| panic!("{}: build failed: {e}", scene.name));
    broad
}

/// The pairs of `broad`, as a vector.
fn pair_vec<T: TestReal, const D: usize>(broad: &BroadPhase<T, D>) -> Vec<[u32; 2]> {
    let mut list = PairList::default();
    broad.pairs(&mut list).unwrap();
    assert!(
        list.distances_squared().is_none(),
        "boxes have no distances"
    );
    list.pairs().to_vec()
}

/// Pairs, visitors, kernels and thread counts against the oracle; outputs identical across
/// thread counts and kernels, in the same order.
fn check_scene<T: TestReal, const D: usize>(scene: &BoxScene<T, D>) {
    let expected = oracle_pairs(&scene.boxes, scene.filters.as_deref());
    let mut reference: Option<Vec<[u32; 2]>> = None;
    for all_pairs_below in [0, usize::MAX] {
        for kernel in [Kernel::Simd, Kernel::Scalar] {
            let config = BroadPhaseConfig {
                all_pairs_below,
                ..BroadPhaseConfig::default()
            };
            for threads in THREAD_COUNTS {
                let what = format!(
                    "{} ({}, {D}-D, {kernel:?}, all_pairs_below {all_pairs_below}, {threads} threads)",
                    scene.name,
                    T::NAME
                );
                let (pairs, visited, par_visited) = in_pool(threads, || {
                    let broad = build(scene, config, kernel);
                    assert_eq!(broad.is_all_pairs(), all_pairs_below > 0, "{what}");
                    let pairs = pair_vec(&broad);
                    let mut visited = Vec::new();
                    broad.for_each_pair(|a, b| visited.push([a, b]));
                    let par = std::sync::Mutex::new(Vec::new());
                    broad.par_for_each_pair(|a, b| par.lock().unwrap().push([a, b]));
                    (pairs, visited, par.into_inner().unwrap())
                });
                check_pairs(&what, &pairs, &expected);
                assert_eq!(visited, pairs, "{what}: for_each_pair differs from pairs");
                check_pairs(
                    &format!("{what} par_for_each_pair"),
                    &par_visited,
                    &expected,
                );
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

/// Queries of every kind against brute force, on the hierarchy and on an all-pairs build.
fn check_queries<T: TestReal, const D: usize>(
    scene: &BoxScene<T, D>,
    rng: &mut SplitMix64,
    lo: f64,
    hi: f64,
) {
    for all_pairs_below in [0, usize::MAX] {
        let config = BroadPhaseConfig {
            all_pairs_below,
            ..BroadPhaseConfig::default()
        };
        let broad = build(scene, config, Kernel::Simd);
        let mut got = Vec::new();
        for q in 0..40 {
            let what = format!("{} ({}, {D}-D) query {q}", scene.name, T::NAME);
            let span = (hi - lo) * [0.001, 0.05, 0.3, 1.5][q % 4];
            let min: [f64; D] = std::array::from_fn(|_| rng.range(lo - span, hi));
            let max: [f64; D] = std::array::from_fn(|a| min[a] + rng.range(0.0, span));
            let query = aabb::<T, D>(min, max);
            broad.query_aabb(&query, &mut got).unwrap();
            let expected: Vec<u32> = (0..scene.boxes.len() as u32)
                .filter(|&i| scene.boxes[i as usize].overlaps(&query))
                .collect();
            assert_eq!(got, expected, "{what}: query_aabb {query:?}");

            // A point, often exactly on a box corner.
            let p = if q % 2 == 0 && !scene.boxes.is_empty() {
                let b = &scene.boxes[rng.below(scene.boxes.len())];
                if b.max.iter().all(|v| v.is_finite()) {
                    b.max
                } else {
                    query.min
                }
            } else {
                query.min
            };
            broad.query_point(p, &mut got).unwrap();
            let expected: Vec<u32> = (0..scene.boxes.len() as u32)
                .filter(|&i| scene.boxes[i as usize].overlaps(&Aabb::new(p, p)))
                .collect();
            assert_eq!(got, expected, "{what}: query_point {p:?}");

            // Segments of every length, some axis-parallel.
            let a: [T; D] = std::array::from_fn(|_| T::from_f64(rng.range(lo - span, hi + span)));
            let mut b: [T; D] =
                std::array::from_fn(|_| T::from_f64(rng.range(lo - span, hi + span)));
            if q % 5 == 0 {
                b[1..].copy_from_slice(&a[1..]);
            }
            if q % 7 == 0 {
                b = a;
            }
            broad.query_segment(a, b, &mut got).unwrap();
            let expected: Vec<u32> = (0..scene.boxes.len() as u32)
                .filter(|&i| segment_may_hit(a, b, &scene.boxes[i as usize]))
                .collect();
            assert_eq!(got, expected, "{what}: query_segment {a:?} -> {b:?}");
        }
    }
}

fn mixed_sizes_in<T: TestReal, const D: usize>() {
    for seed in 0..3 {
        let mut rng = SplitMix64::new(0xB0A5 + seed);
        // Sizes varying by 12x, density ~2 overlaps per box, plus a few 100x larger boxes.
        // In the plane, as many boxes at about the same density of overlaps.
        let extent = if D == 3 { 30.0 } else { 75.0 };
        let mut boxes = random_boxes::<T, D>(&mut rng, 1500, [0.0; D], [extent; D], (0.25, 3.0));
        boxes.extend(random_boxes::<T, D>(
            &mut rng,
            10,
            [0.0; D],
            [extent; D],
            (0.02, 6.0),
        ));
        hhg_testkit::shuffle(&mut rng, &mut boxes);
        let scene = BoxScene {
            name: format!("mixed sizes, seed {seed}"),
            boxes,
            filters: None,
        };
        check_scene(&scene);
        check_queries(&scene, &mut rng, 0.0, extent);
    }
}

fn touching_lattice_in<T: TestReal, const D: usize>() {
    // Unit boxes on a unit lattice (9 x 8 x 8 in space, 9 x 8 in the plane): every neighbour
    // touches exactly on a face, edge or corner.
    let counts = [9, 8, 8];
    let base = [-4.0, -3.0, 0.5];
    let cells: usize = counts[..D].iter().product();
    let mut boxes = Vec::new();
    for k in 0..cells {
        let index = [k % 9, k / 9 % 8, k / 72];
        let min: [f64; D] = std::array::from_fn(|a| index[a] as f64 + base[a]);
        boxes.push(aabb::<T, D>(min, min.map(|v| v + 1.0)));
    }
    // Boxes of other levels whose faces lie on lattice planes.
    let first = |corner: [f64; 3]| -> [f64; D] { std::array::from_fn(|a| corner[a]) };
    boxes.push(aabb::<T, D>(
        first([-4.0, -3.0, 0.5]),
        first([0.0, 1.0, 4.5]),
    ));
    boxes.push(aabb::<T, D>(first([1.0, 1.0, 1.5]), first([1.0, 1.0, 1.5])));
    boxes.push(aabb::<T, D>(first([2.0, 2.0, 2.5]), first([2.0, 2.0, 2.5])));
    let mut rng = SplitMix64::new(7);
    let scene = BoxScene {
        name: "touching lattice".into(),
        boxes,
        filters: None,
    };
    check_scene(&scene);
    check_queries(&scene, &mut rng, -4.0, 5.0);
}

fn huge_and_infinite_in<T: TestReal, const D: usize>() {
    let mut rng = SplitMix64::new(99);
    let first = |corner: [f64; 3]| -> [f64; D] { std::array::from_fn(|a| corner[a]) };
    let mut boxes = random_boxes::<T, D>(
        &mut rng,
        1200,
        first([-20.0, -20.0, 0.0]),
        first([20.0, 20.0, 10.0]),
        (0.1, 1.0),
    );
    // A ground box a million times larger than the grains, an infinite half-space (below
    // 0.5 on the last axis), an infinite slab (3..3.5 on axis 1), and a big wall.
    let (inf, minus_inf) = (T::from_f64(f64::INFINITY), T::from_f64(f64::NEG_INFINITY));
    boxes.insert(
        17,
        aabb::<T, D>(first([-5e5, -5e5, -1.0]), first([5e5, 5e5, 0.2])),
    );
    boxes.push(Aabb::new(
        [minus_inf; D],
        std::array::from_fn(|a| if a == D - 1 { T::from_f64(0.5) } else { inf }),
    ));
    boxes.push(Aabb::new(
        std::array::from_fn(|a| if a == 1 { T::from_f64(3.0) } else { minus_inf }),
        std::array::from_fn(|a| if a == 1 { T::from_f64(3.5) } else { inf }),
    ));
    boxes.push(aabb::<T, D>(
        first([5.0, -20.0, 0.0]),
        first([5.5, 20.0, 10.0]),
    ));
    let scene = BoxScene {
        name: "huge and infinite".into(),
        boxes,
        filters: None,
    };
    let broad = build(&scene, BroadPhaseConfig::default(), Kernel::Simd);
    assert!(broad.huge().contains(&17), "the ground box is huge");
    assert!(
        broad.huge().len() >= 3,
        "infinite boxes are huge: {:?}",
        broad.huge()
    );
    assert!(
        broad.heap_bytes() < 64 << 20,
        "no level blows up: {} bytes",
        broad.heap_bytes()
    );
    check_scene(&scene);
    check_queries(&scene, &mut rng, -20.0, 20.0);
}

fn filtered_in<T: TestReal, const D: usize>() {
    let mut rng = SplitMix64::new(5);
    let extent = if D == 3 { 20.0 } else { 50.0 };
    let boxes = random_boxes::<T, D>(&mut rng, 1500, [0.0; D], [extent; D], (0.2, 2.5));
    let filters = (0..boxes.len())
        .map(|_| Filter {
            group: 1 << rng.below(4),
            mask: rng.next_u64() & 0b1111,
        })
        .collect();
    let scene = BoxScene {
        name: "filtered".into(),
        boxes,
        filters: Some(filters),
    };
    check_scene(&scene);
}

fn far_coordinates_in<T: TestReal, const D: usize>() {
    // Negative and 1e6-scale coordinates (f32 spacing there is 1/16, so boxes are whole units).
    let mut rng = SplitMix64::new(11);
    let offset = [-1.0e6, 2.5e6, -3.0e6];
    let cells = if D == 3 { 40 } else { 250 };
    let boxes: Vec<Aabb<T, D>> = (0..1200)
        .map(|_| {
            let min: [f64; D] = std::array::from_fn(|a| offset[a] + rng.below(cells) as f64);
            let max: [f64; D] = std::array::from_fn(|a| min[a] + 1.0 + rng.below(3) as f64);
            aabb::<T, D>(min, max)
        })
        .collect();
    let scene = BoxScene {
        name: "far coordinates".into(),
        boxes,
        filters: None,
    };
    check_scene(&scene);
}

fn worst_cases_in<T: TestReal, const D: usize>() {
    let mut rng = SplitMix64::new(3);
    let first = |corner: [f64; 3]| -> [f64; D] { std::array::from_fn(|a| corner[a]) };
    // Long 10x1x1 objects (10x1 in the plane).
    let long: Vec<Aabb<T, D>> = (0..1000)
        .map(|k| {
            let min: [f64; D] = std::array::from_fn(|_| rng.range(0.0, 12.0));
            let mut edge = [1.0; D];
            edge[k % D] = 10.0;
            aabb::<T, D>(min, std::array::from_fn(|a| min[a] + edge[a]))
        })
        .collect();
    // A 1024:1 anisotropic cloud.
    let sheet = random_boxes::<T, D>(
        &mut rng,
        1000,
        [0.0; D],
        first([1024.0, 1.0, 1.0]),
        (0.1, 0.5),
    );
    // Everything in one cell, identical boxes, and zero-sized boxes on top of each other.
    let mut one_cell = random_boxes::<T, D>(&mut rng, 600, [0.0; D], [0.01; D], (0.5, 0.6));
    one_cell.extend((0..100).map(|_| aabb::<T, D>([0.2; D], [0.7; D])));
    one_cell.extend((0..100).map(|_| aabb::<T, D>([0.3; D], [0.3; D])));
    // One far outlier.
    let mut outlier = random_boxes::<T, D>(&mut rng, 1000, [0.0; D], [10.0; D], (0.1, 1.0));
    outlier.push(aabb::<T, D>(
        first([1e7, -1e7, 3e6]),
        first([1e7 + 0.5, -1e7 + 0.5, 3e6 + 0.5]),
    ));
    for (name, boxes) in [
        ("long 10x1x1", long),
        ("1024:1 cloud", sheet),
        ("one cell", one_cell),
        ("far outlier", outlier),
    ] {
        let scene = BoxScene {
            name: name.into(),
            boxes,
            filters: None,
        };
        let broad = build(&scene, BroadPhaseConfig::default(), Kernel::Simd);
        assert!(
            broad.heap_bytes() < 64 << 20,
            "{name}: {} bytes",
            broad.heap_bytes()
        );
        check_scene(&scene);
    }
}

fn factors_and_empty_in<T: TestReal, const D: usize>() {
    let mut rng = SplitMix64::new(21);
    let extent = if D == 3 { 15.0 } else { 40.0 };
    let mut boxes = random_boxes::<T, D>(&mut rng, 800, [0.0; D], [extent; D], (0.05, 4.0));
    boxes.extend(random_boxes::<T, D>(
        &mut rng,
        40,
        [0.0; D],
        [extent; D],
        (0.001, 0.01),
    ));
    let expected = oracle_pairs(&boxes, None);
    for factor in [1.5, 2.0, 3.0, 8.0] {
        let config = BroadPhaseConfig {
            hierarchy_factor: factor,
            all_pairs_below: 0,
            ..BroadPhaseConfig::default()
        };
        let mut broad = BroadPhase::<T, D>::new();
        broad.set_config(config).unwrap();
        broad.build(&boxes).unwrap();
        assert!(
            broad.levels().len() >= 2,
            "factor {factor}: {:?}",
            broad.levels()
        );
        let mut pairs = pair_vec(&broad);
        check_pairs(&format!("factor {factor}"), &pairs, &expected);
        // Rebuilding with nothing, then again with the boxes, reuses the structure.
        broad.build(&[]).unwrap();
        pairs = pair_vec(&broad);
        assert!(pairs.is_empty());
        broad.build(&boxes).unwrap();
        pairs = pair_vec(&broad);
        check_pairs(&format!("factor {factor}, rebuilt"), &pairs, &expected);
    }
}

fn bad_input_in<T: TestReal, const D: usize>() {
    let good = aabb::<T, D>([0.0; D], [1.0; D]);
    let mut broad = BroadPhase::<T, D>::new();
    let nan = T::from_f64(f64::NAN);
    let mut with_nan = vec![good; 5];
    with_nan[3].max[1] = nan;
    assert!(matches!(
        broad.build(&with_nan),
        Err(Error::NonFiniteCoordinate {
            index: 3,
            axis: 1,
            ..
        })
    ));
    let mut inverted = vec![good; 5];
    inverted[2].min[D - 1] = T::from_f64(2.0);
    assert!(matches!(
        broad.build(&inverted),
        Err(Error::InvalidBox {
            index: 2,
            axis,
            ..
        }) if axis == D - 1
    ));
    let mut wrong_inf = vec![good; 5];
    wrong_inf[4].min[0] = T::from_f64(f64::INFINITY);
    wrong_inf[4].max[0] = T::from_f64(f64::INFINITY);
    let err = broad.build(&wrong_inf).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidBox {
                index: 4,
                axis: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("box 4"), "{err}");
    assert!(matches!(
        broad.build_filtered(&[good; 3], &[Filter::ALL; 2]),
        Err(Error::LengthMismatch { .. })
    ));
    for (factor, fraction) in [(1.0, 0.25), (f64::NAN, 0.25), (2.0, 0.0), (2.0, 1.5)] {
        let config = BroadPhaseConfig {
            hierarchy_factor: factor,
            huge_fraction: fraction,
            ..BroadPhaseConfig::default()
        };
        let before = *broad.config();
        assert!(matches!(
            broad.set_config(config),
            Err(Error::InvalidConfig { .. })
        ));
        assert_eq!(*broad.config(), before, "a refused setting changes nothing");
    }
    broad.build(&[good; 3]).unwrap();
    let mut out = Vec::new();
    assert!(broad.query_point([nan; D], &mut out).is_err());
    let inf = T::from_f64(f64::INFINITY);
    assert!(
        broad
            .query_segment([inf; D], [T::from_f64(0.0); D], &mut out)
            .is_err()
    );
    assert!(
        broad
            .query_aabb(
                &Aabb::new([T::from_f64(1.0); D], [T::from_f64(0.0); D]),
                &mut out
            )
            .is_err()
    );
    // An infinite query box is fine and finds everything.
    broad
        .query_aabb(
            &Aabb::new([T::from_f64(f64::NEG_INFINITY); D], [inf; D]),
            &mut out,
        )
        .unwrap();
    assert_eq!(out, vec![0, 1, 2]);
}

in_space_and_plane!(
    mixed_sizes_in => mixed_sizes, mixed_sizes_2d;
    touching_lattice_in => touching_lattice, touching_lattice_2d;
    huge_and_infinite_in => huge_and_infinite, huge_and_infinite_2d;
    filtered_in => filtered, filtered_2d;
    far_coordinates_in => far_coordinates, far_coordinates_2d;
    worst_cases_in => worst_cases, worst_cases_2d;
    factors_and_empty_in => factors_and_empty, factors_and_empty_2d;
    bad_input_in => bad_input, bad_input_2d;
);

/// The checks reject wrong answers: a missing, a duplicated and an unordered pair.
#[test]
fn checks_can_fail() {
    let expected = vec![[0u32, 1], [1, 2]];
    for wrong in [
        vec![[0u32, 1]],
        vec![[0, 1], [1, 2], [0, 1]],
        vec![[1, 0], [1, 2]],
    ] {
        let result = std::panic::catch_unwind(|| check_pairs("wrong", &wrong, &expected));
        assert!(result.is_err(), "{wrong:?} was accepted");
    }
}

/// A failed build leaves the hierarchy as it was, whichever check fails: boxes spanning more
/// than `f64` holds, and (before the base cell had a normal floor) boxes of subnormal size
/// whose level could not number its cells, which failed only after earlier levels had been
/// rebuilt. The latter now build.
fn a_failed_build_changes_nothing_in<const D: usize>() {
    let config = BroadPhaseConfig {
        all_pairs_below: 0,
        ..BroadPhaseConfig::default()
    };
    let mut broad = BroadPhase::<f64, D>::new();
    broad.set_config(config).unwrap();
    let good = [
        Aabb::new([0.0; D], [1.0; D]),
        Aabb::new([0.5; D], [1.5; D]),
        Aabb::new([3.0; D], [3.1; D]),
    ];
    broad.build(&good).unwrap();
    let observe = |broad: &BroadPhase<f64, D>| {
        let pairs = pair_vec(broad);
        let mut found = Vec::new();
        broad
            .query_aabb(&Aabb::new([0.0; D], [4.0; D]), &mut found)
            .unwrap();
        (broad.len(), broad.levels(), pairs, found)
    };
    let before = observe(&broad);
    let far_corner =
        |x: f64, v: f64| -> [f64; D] { std::array::from_fn(|a| if a == 0 { x } else { v }) };
    let far = [
        Aabb::new(far_corner(-1e308, 0.0), far_corner(-1e308, 1.0)),
        Aabb::new(far_corner(1e308, 0.0), far_corner(1e308, 1.0)),
    ];
    assert!(matches!(
        broad.build(&far),
        Err(Error::CoordinateOutOfRange { .. })
    ));
    assert_eq!(observe(&broad), before);
    // Unit boxes on one level, and subnormal boxes at one corner on another.
    let tiny = 1e-320;
    let mut mixed: Vec<Aabb<f64, D>> = (0..4)
        .map(|k| Aabb::new([k as f64 * 1e-310; D], [k as f64 * 1e-310 + 2e-310; D]))
        .collect();
    mixed.extend((0..4).map(|_| Aabb::new([0.0; D], [tiny; D])));
    broad.build(&mixed).unwrap();
    let mut pairs = pair_vec(&broad);
    pairs.sort_unstable();
    let mut want = Vec::new();
    for i in 0..mixed.len() as u32 {
        for j in i + 1..mixed.len() as u32 {
            if mixed[i as usize].overlaps(&mixed[j as usize]) {
                want.push([i, j]);
            }
        }
    }
    assert_eq!(pairs, want);
}

#[test]
fn a_failed_build_changes_nothing() {
    a_failed_build_changes_nothing_in::<3>();
}

#[test]
fn a_failed_build_changes_nothing_2d() {
    a_failed_build_changes_nothing_in::<2>();
}
