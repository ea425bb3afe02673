//! Persistent scenes in space and in the plane against brute force: inserts, removals,
//! moves, rotations (resizes) and static objects interleaved with detection, for every update
//! strategy and thread count.

use hhg_core::Error;
use hhg_core::broad::{
    Aabb, BroadPhaseConfig, Filter, Handle, Motion, Scene, UpdateReport, UpdateStrategy,
};
use hhg_testkit::{SplitMix64, TestReal, in_pool, in_space_and_plane};

/// The scene as the test sees it: every live object with its box, motion and filter.
struct Mirror<T, const D: usize> {
    objects: Vec<(Handle, Aabb<T, D>, Motion, Filter)>,
}

impl<T: TestReal, const D: usize> Mirror<T, D> {
    fn expected_pairs(&self) -> Vec<[Handle; 2]> {
        let mut pairs = Vec::new();
        for (i, a) in self.objects.iter().enumerate() {
            for b in &self.objects[i + 1..] {
                if a.2 == Motion::Static && b.2 == Motion::Static {
                    continue;
                }
                if a.1.overlaps(&b.1) && a.3.accepts(b.3) {
                    let (x, y) = if a.0.slot() < b.0.slot() {
                        (a.0, b.0)
                    } else {
                        (b.0, a.0)
                    };
                    pairs.push([x, y]);
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }
}

/// The extent of a scene of `D` axes with about as many overlaps per box as one of extent
/// `space` in 3-D (its boxes' edges about `edge`).
fn extent_in<const D: usize>(space: f64, edge: f64) -> f64 {
    if D == 3 {
        space
    } else {
        (space * space * space / edge).sqrt()
    }
}

fn random_box<T: TestReal, const D: usize>(rng: &mut SplitMix64, extent: f64) -> Aabb<T, D> {
    let size = rng.range(0.2, 2.4);
    let min: [f64; D] = std::array::from_fn(|_| rng.range(0.0, extent));
    let max: [f64; D] = std::array::from_fn(|a| min[a] + size * rng.range(0.5, 1.0));
    Aabb::new(min.map(T::from_f64), max.map(T::from_f64))
}

fn moved<T: TestReal, const D: usize>(
    rng: &mut SplitMix64,
    aabb: &Aabb<T, D>,
    step: f64,
) -> Aabb<T, D> {
    let d: [f64; D] = std::array::from_fn(|_| rng.range(-step, step));
    let grow = if rng.below(10) == 0 {
        rng.range(0.5, 2.0)
    } else {
        1.0
    };
    let min: [f64; D] = std::array::from_fn(|a| aabb.min[a].to_f64() + d[a]);
    let max: [f64; D] =
        std::array::from_fn(|a| min[a] + (aabb.max[a].to_f64() - aabb.min[a].to_f64()) * grow);
    Aabb::new(min.map(T::from_f64), max.map(T::from_f64))
}

fn run_scene<T: TestReal, const D: usize>(
    strategy: UpdateStrategy,
    threads: usize,
    seed: u64,
) -> Vec<UpdateReport> {
    let mut rng = SplitMix64::new(seed);
    let extent = extent_in::<D>(22.0, 1.0);
    let config = BroadPhaseConfig {
        all_pairs_below: 0,
        ..BroadPhaseConfig::default()
    };
    let mut scene = Scene::<T, D>::new();
    scene.set_config(config).unwrap();
    scene.set_strategy(strategy);
    let mut mirror = Mirror::<T, D> {
        objects: Vec::new(),
    };
    let filter = |rng: &mut SplitMix64| {
        if rng.below(8) == 0 {
            Filter {
                group: 1 << rng.below(3),
                mask: 0b101,
            }
        } else {
            Filter::ALL
        }
    };
    for _ in 0..1200 {
        let motion = if rng.below(5) == 0 {
            Motion::Static
        } else {
            Motion::Dynamic
        };
        let aabb = random_box::<T, D>(&mut rng, extent);
        let f = filter(&mut rng);
        let h = scene.insert(aabb, motion, f).unwrap();
        mirror.objects.push((h, aabb, motion, f));
    }
    let mut previous: Vec<[Handle; 2]> = Vec::new();
    let mut reports = Vec::new();
    let (mut created, mut lost) = (Vec::new(), Vec::new());
    for step in 0..14 {
        let what = format!(
            "{} {D}-D {strategy:?} {threads} threads, step {step}",
            T::NAME
        );
        // Small moves for most, a few jumps, resizes, inserts, removals; statics now and then.
        let fraction = [0.02, 0.1, 0.5, 1.0][step % 4];
        for k in 0..mirror.objects.len() {
            let (h, aabb, motion, _) = mirror.objects[k];
            if motion == Motion::Static && rng.below(200) != 0 {
                continue;
            }
            if rng.uniform() >= fraction {
                continue;
            }
            let next = if rng.below(30) == 0 {
                random_box::<T, D>(&mut rng, extent)
            } else {
                moved(&mut rng, &aabb, 0.3)
            };
            scene.set_aabb(h, next).unwrap();
            mirror.objects[k].1 = next;
        }
        for _ in 0..rng.below(40) {
            let k = rng.below(mirror.objects.len());
            let (h, ..) = mirror.objects.swap_remove(k);
            scene.remove(h).unwrap();
            assert!(matches!(scene.remove(h), Err(Error::StaleHandle { .. })));
            assert!(scene.aabb(h).is_err(), "{what}: stale handle accepted");
        }
        for _ in 0..rng.below(40) {
            let motion = if rng.below(6) == 0 {
                Motion::Static
            } else {
                Motion::Dynamic
            };
            let aabb = random_box::<T, D>(&mut rng, extent);
            let f = filter(&mut rng);
            let h = scene.insert(aabb, motion, f).unwrap();
            mirror.objects.push((h, aabb, motion, f));
        }
        let report = in_pool(threads, || scene.detect_changes(&mut created, &mut lost)).unwrap();
        reports.push(report);
        let expected = mirror.expected_pairs();
        let mut current = Vec::new();
        in_pool(threads, || scene.detect(&mut current)).unwrap();
        let mut sorted = current.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), current.len(), "{what}: a pair reported twice");
        assert_eq!(sorted, expected, "{what}: pairs");
        let want_created: Vec<_> = expected
            .iter()
            .filter(|p| previous.binary_search(p).is_err())
            .copied()
            .collect();
        let want_lost: Vec<_> = previous
            .iter()
            .filter(|p| expected.binary_search(p).is_err())
            .copied()
            .collect();
        assert_eq!(created, want_created, "{what}: created pairs");
        assert_eq!(lost, want_lost, "{what}: lost pairs");
        previous = expected;
        assert_eq!(scene.len(), mirror.objects.len());

        // Queries see the state of the last update.
        let mut got = Vec::new();
        for _ in 0..5 {
            let q = random_box::<T, D>(&mut rng, extent);
            scene.query_aabb(&q, &mut got).unwrap();
            let mut want: Vec<Handle> = mirror
                .objects
                .iter()
                .filter(|o| o.1.overlaps(&q))
                .map(|o| o.0)
                .collect();
            want.sort_unstable();
            assert_eq!(got, want, "{what}: query");
        }
    }
    reports
}

fn strategies_in<T: TestReal, const D: usize>() {
    for (k, strategy) in [
        UpdateStrategy::Auto,
        UpdateStrategy::Rebuild,
        UpdateStrategy::Incremental,
    ]
    .into_iter()
    .enumerate()
    {
        for threads in [1, 16] {
            let reports = run_scene::<T, D>(strategy, threads, 40 + k as u64);
            let patched: usize = reports.iter().map(|r| r.patched).sum();
            let moved: usize = reports.iter().map(|r| r.moved).sum();
            let rebuilt = reports.iter().filter(|r| r.rebuilt).count();
            match strategy {
                UpdateStrategy::Rebuild => {
                    assert_eq!(rebuilt, reports.len(), "{strategy:?}: {reports:?}")
                }
                UpdateStrategy::Incremental => {
                    assert!(patched > 0 && moved > 0, "{strategy:?}: {reports:?}");
                    assert!(rebuilt < reports.len(), "{strategy:?}: {reports:?}");
                }
                UpdateStrategy::Auto => {
                    assert!(patched > 0, "{strategy:?}: {reports:?}");
                    assert!(rebuilt > 1, "{strategy:?}: {reports:?}");
                }
            }
            assert!(
                reports.iter().any(|r| r.statics_rebuilt),
                "statics are rebuilt when they change"
            );
        }
    }
}

fn statics_are_built_once_in<T: TestReal, const D: usize>() {
    let mut rng = SplitMix64::new(9);
    let mut scene = Scene::<T, D>::new();
    let mut handles = Vec::new();
    for k in 0..600 {
        let motion = if k % 2 == 0 {
            Motion::Static
        } else {
            Motion::Dynamic
        };
        handles.push((
            scene
                .insert(
                    random_box::<T, D>(&mut rng, extent_in::<D>(15.0, 1.0)),
                    motion,
                    Filter::ALL,
                )
                .unwrap(),
            motion,
        ));
    }
    let mut pairs = Vec::new();
    let first = scene.detect(&mut pairs).unwrap();
    assert!(first.statics_rebuilt);
    for _ in 0..3 {
        for &(h, motion) in &handles {
            if motion == Motion::Dynamic {
                let next = moved(&mut rng, &scene.aabb(h).unwrap(), 0.1);
                scene.set_aabb(h, next).unwrap();
            }
        }
        let report = scene.detect(&mut pairs).unwrap();
        assert!(!report.statics_rebuilt, "statics untouched: {report:?}");
    }
    // No static-static pair is ever reported.
    assert!(pairs.iter().all(|p| {
        handles
            .iter()
            .any(|&(h, m)| m == Motion::Dynamic && (h == p[0] || h == p[1]))
    }));
}

fn bad_input_in<T: TestReal, const D: usize>() {
    let mut scene = Scene::<T, D>::new();
    let good = Aabb::new([T::from_f64(0.0); D], [T::from_f64(1.0); D]);
    let h = scene.insert(good, Motion::Dynamic, Filter::ALL).unwrap();
    let bad = Aabb::new([T::from_f64(2.0); D], [T::from_f64(1.0); D]);
    assert!(matches!(
        scene.insert(bad, Motion::Dynamic, Filter::ALL),
        Err(Error::InvalidBox { .. })
    ));
    assert!(matches!(
        scene.set_aabb(h, bad),
        Err(Error::InvalidBox { .. })
    ));
    scene.remove(h).unwrap();
    let err = scene.set_aabb(h, good).unwrap_err();
    assert!(
        err.to_string().contains("does not name a live object"),
        "{err}"
    );
    let again = scene.insert(good, Motion::Dynamic, Filter::ALL).unwrap();
    assert_eq!(again.slot(), h.slot(), "the slot is reused");
    assert_ne!(again, h, "with a new generation");
}

/// Queries between updates never report a removed object, even when its slot was reused.
fn queries_skip_objects_removed_since_the_update_in<T: TestReal, const D: usize>() {
    let unit = |x: f64| {
        Aabb::<T, D>::new(
            std::array::from_fn(|a| T::from_f64(if a == 0 { x } else { 0.0 })),
            std::array::from_fn(|a| T::from_f64(if a == 0 { x } else { 0.0 } + 1.0)),
        )
    };
    let mut scene = Scene::<T, D>::new();
    let wall = scene
        .insert(unit(0.0), Motion::Static, Filter::ALL)
        .unwrap();
    let ball = scene
        .insert(unit(0.5), Motion::Dynamic, Filter::ALL)
        .unwrap();
    scene.update().unwrap();
    let mut found = Vec::new();
    scene.query_aabb(&unit(0.2), &mut found).unwrap();
    assert_eq!(found, vec![wall, ball]);

    // Both removed; their slots go to two new objects far away, not yet updated.
    scene.remove(wall).unwrap();
    scene.remove(ball).unwrap();
    let far_static = scene
        .insert(unit(50.0), Motion::Static, Filter::ALL)
        .unwrap();
    let far_dynamic = scene
        .insert(unit(60.0), Motion::Dynamic, Filter::ALL)
        .unwrap();
    let reused = [far_static.slot(), far_dynamic.slot()];
    assert!(reused.contains(&wall.slot()) && reused.contains(&ball.slot()));
    scene.query_aabb(&unit(0.2), &mut found).unwrap();
    assert!(found.is_empty(), "stale objects reported: {found:?}");

    scene.update().unwrap();
    scene.query_aabb(&unit(0.2), &mut found).unwrap();
    assert!(found.is_empty());
    scene.query_aabb(&unit(50.2), &mut found).unwrap();
    assert_eq!(found, vec![far_static]);
}

/// A box for [`levels_of_both_hierarchies_interleave_in`]: edges log-uniform over 100x, so
/// that the levels of the dynamic and of the static hierarchy interleave; half of them on a
/// lattice of quarter units (touching faces, corners on cell borders); a few huge ones and
/// infinite slabs.
fn mixed_box<T: TestReal, const D: usize>(
    rng: &mut SplitMix64,
    origin: f64,
    extent: f64,
) -> Aabb<T, D> {
    match rng.below(400) {
        0 | 1 => {
            let min: [f64; D] = std::array::from_fn(|_| origin + rng.range(0.0, extent));
            let mut max = min.map(|v| v + 0.4 * extent);
            if rng.below(2) == 0 {
                max[rng.below(D)] = f64::INFINITY;
            }
            return Aabb::new(min.map(T::from_f64), max.map(T::from_f64));
        }
        _ => {}
    }
    let lattice = rng.below(2) == 0;
    let edge = |rng: &mut SplitMix64| {
        let e = 0.05 * 100f64.powf(rng.uniform());
        if lattice { (e * 4.0).ceil() / 4.0 } else { e }
    };
    let min: [f64; D] = std::array::from_fn(|_| {
        let v = rng.range(0.0, extent);
        origin + if lattice { (v * 4.0).floor() / 4.0 } else { v }
    });
    let max: [f64; D] = std::array::from_fn(|a| min[a] + edge(rng));
    Aabb::new(min.map(T::from_f64), max.map(T::from_f64))
}

/// Dynamic objects against statics through the lookups between the two hierarchies: sizes
/// over 100x (levels of each hierarchy finer and coarser than the other's), huge and
/// infinite boxes, negative coordinates, either side small enough for an all-pairs build or
/// empty, objects moving with the side list in use; the pairs equal brute force's, and 1 and
/// 16 threads report them in the same order.
fn levels_of_both_hierarchies_interleave_in<T: TestReal, const D: usize>() {
    let cases = [
        (2500, 2500, UpdateStrategy::Auto),
        (2500, 2500, UpdateStrategy::Incremental),
        (200, 4000, UpdateStrategy::Auto),
        (4000, 150, UpdateStrategy::Incremental),
        (1500, 0, UpdateStrategy::Auto),
        (0, 1500, UpdateStrategy::Auto),
    ];
    for (case, &(dynamics, statics, strategy)) in cases.iter().enumerate() {
        let mut rng = SplitMix64::new(900 + case as u64);
        let (origin, extent) = (-731.3, extent_in::<D>(40.0, 1.0));
        let mut scene = Scene::<T, D>::new();
        scene.set_strategy(strategy);
        let mut mirror = Mirror::<T, D> {
            objects: Vec::new(),
        };
        for k in 0..dynamics + statics {
            let motion = if k < dynamics {
                Motion::Dynamic
            } else {
                Motion::Static
            };
            let aabb = mixed_box::<T, D>(&mut rng, origin, extent);
            let h = scene.insert(aabb, motion, Filter::ALL).unwrap();
            mirror.objects.push((h, aabb, motion, Filter::ALL));
        }
        for step in 0..4 {
            let what = format!("{} {D}-D case {case} ({strategy:?}), step {step}", T::NAME);
            if step > 0 {
                // A few objects move within their cell, some leave it, one in fifty jumps.
                for k in 0..dynamics {
                    if rng.below(20) != 0 {
                        continue;
                    }
                    let (h, aabb, ..) = mirror.objects[k];
                    let next = if rng.below(50) == 0 {
                        mixed_box::<T, D>(&mut rng, origin, extent)
                    } else {
                        moved(&mut rng, &aabb, 0.2)
                    };
                    scene.set_aabb(h, next).unwrap();
                    mirror.objects[k].1 = next;
                }
            }
            let (mut one, mut many) = (Vec::new(), Vec::new());
            in_pool(1, || scene.detect(&mut one)).unwrap();
            in_pool(16, || scene.detect(&mut many)).unwrap();
            assert_eq!(one, many, "{what}: 1 and 16 threads");
            let expected = mirror.expected_pairs();
            one.sort_unstable();
            assert_eq!(one, expected, "{what}: pairs");
            if dynamics > 0 && statics > 0 {
                assert!(
                    expected.len() > dynamics / 4,
                    "{what}: too few pairs to test"
                );
            }
        }
    }
}

in_space_and_plane!(
    strategies_in => strategies, strategies_2d;
    statics_are_built_once_in => statics_are_built_once, statics_are_built_once_2d;
    bad_input_in => bad_input, bad_input_2d;
    queries_skip_objects_removed_since_the_update_in =>
        queries_skip_objects_removed_since_the_update,
        queries_skip_objects_removed_since_the_update_2d;
    levels_of_both_hierarchies_interleave_in =>
        levels_of_both_hierarchies_interleave,
        levels_of_both_hierarchies_interleave_2d;
);

/// A scene's size, the box of each handle (`None` when stale), and what each probe found.
type Observed<T, const D: usize> = (usize, Vec<Option<Aabb<T, D>>>, Vec<Vec<Handle>>);

/// What a caller can see of a scene without changing it: its size, the box of every handle
/// (or that the handle is stale), and what queries around every object and over everything
/// find.
fn observe<T: TestReal, const D: usize>(scene: &Scene<T, D>, handles: &[Handle]) -> Observed<T, D> {
    let big = if T::NAME == "f32" { 3e38 } else { 1e308 };
    let mut probes = vec![Aabb::new([T::from_f64(-big); D], [T::from_f64(big); D])];
    probes.extend(handles.iter().filter_map(|&h| scene.aabb(h).ok()));
    for x in [0.0, 0.5, 10.0, 10.5] {
        let at = |v: f64| T::from_f64(v);
        probes.push(Aabb::new([at(x); D], [at(x + 0.2); D]));
    }
    let found = probes
        .iter()
        .map(|probe| {
            let mut found = Vec::new();
            scene.query_aabb(probe, &mut found).unwrap();
            found
        })
        .collect();
    let boxes = handles.iter().map(|&h| scene.aabb(h).ok()).collect();
    (scene.len(), boxes, found)
}

/// A failed update (boxes spanning more than the precision's range, which no hierarchy
/// can number) leaves the scene as it was: queries, boxes and handles are unchanged, the
/// offending boxes stay pending so that every later update fails the same way, and once
/// they are fixed, detection reports the right pairs, and the pairs created and lost since
/// the last successful detection. Dynamic boxes (under each strategy) and static boxes.
///
/// In `f64` only: `f32` boxes always span a finite `f64` range, which the hierarchy numbers.
fn a_failed_update_changes_nothing_in<const D: usize>() {
    type T = f64;
    let big = 1e308;
    let cube = |x: f64, edge: f64| Aabb::<T, D>::new([x; D], [x + edge; D]);
    let far = |x: f64, y: f64| {
        let at = |v: f64| -> [f64; D] { std::array::from_fn(|a| if a == 0 { x } else { v }) };
        Aabb::<T, D>::new(at(y), at(y + 1.0))
    };
    for strategy in [
        UpdateStrategy::Auto,
        UpdateStrategy::Rebuild,
        UpdateStrategy::Incremental,
    ] {
        for statics in [false, true] {
            let what = format!("{} {D}-D {strategy:?}, bad statics {statics}", T::NAME);
            // Levels rather than all pairs, so that boxes moved far cannot be patched in place.
            let config = BroadPhaseConfig {
                all_pairs_below: 0,
                ..BroadPhaseConfig::default()
            };
            let mut scene = Scene::<T, D>::new();
            scene.set_config(config).unwrap();
            scene.set_strategy(strategy);
            let dynamic = |scene: &mut Scene<T, D>, aabb| {
                scene.insert(aabb, Motion::Dynamic, Filter::ALL).unwrap()
            };
            let a = dynamic(&mut scene, cube(0.0, 1.0));
            let b = dynamic(&mut scene, cube(0.5, 1.0));
            let c = dynamic(&mut scene, cube(10.0, 1.0));
            let d = dynamic(&mut scene, cube(10.5, 1.0));
            let wall = scene
                .insert(cube(10.8, 0.1), Motion::Static, Filter::ALL)
                .unwrap();
            let (mut created, mut lost) = (Vec::new(), Vec::new());
            scene.detect_changes(&mut created, &mut lost).unwrap();
            assert_eq!(
                created,
                vec![[a, b], [c, d], [c, wall], [d, wall]],
                "{what}"
            );
            let mut handles = vec![a, b, c, d, wall];
            let mut bad = Vec::new();
            scene.remove(a).unwrap();
            if statics {
                for x in [-big, big] {
                    let h = scene
                        .insert(far(x, 0.0), Motion::Static, Filter::ALL)
                        .unwrap();
                    bad.push(h);
                }
            } else {
                scene.set_aabb(b, far(-big, 0.0)).unwrap();
                scene.set_aabb(d, far(big, 10.0)).unwrap();
            }
            handles.extend(&bad);
            let before = observe(&scene, &handles);
            for attempt in 0..3 {
                let error = match attempt {
                    0 => scene.detect_changes(&mut created, &mut lost).unwrap_err(),
                    1 => scene.update().unwrap_err(),
                    _ => scene.detect(&mut Vec::new()).unwrap_err(),
                };
                assert!(
                    matches!(error, Error::CoordinateOutOfRange { .. }),
                    "{what}, attempt {attempt}: {error}"
                );
                assert!(
                    observe(&scene, &handles) == before,
                    "{what}, attempt {attempt}"
                );
            }
            // Fixed: b back near c, d where it was, the bad statics removed.
            if statics {
                for h in bad {
                    scene.remove(h).unwrap();
                }
            } else {
                scene.set_aabb(b, cube(10.2, 0.1)).unwrap();
                scene.set_aabb(d, cube(10.5, 1.0)).unwrap();
            }
            scene.detect_changes(&mut created, &mut lost).unwrap();
            let mut pairs = Vec::new();
            scene.detect(&mut pairs).unwrap();
            pairs.sort_unstable();
            if statics {
                assert_eq!(pairs, vec![[c, d], [c, wall], [d, wall]], "{what}");
                assert!(created.is_empty(), "{what}: {created:?}");
            } else {
                assert_eq!(pairs, vec![[b, c], [c, d], [c, wall], [d, wall]], "{what}");
                assert_eq!(created, vec![[b, c]], "{what}");
            }
            assert_eq!(lost, vec![[a, b]], "{what}");
            let mut found = Vec::new();
            scene.query_aabb(&cube(10.0, 0.15), &mut found).unwrap();
            assert_eq!(found, vec![c], "{what}");
        }
    }
}

#[test]
fn a_failed_update_changes_nothing() {
    a_failed_update_changes_nothing_in::<3>();
}

#[test]
fn a_failed_update_changes_nothing_2d() {
    a_failed_update_changes_nothing_in::<2>();
}

/// New settings on a scene that holds objects: the next detection rebuilds with them and
/// finds the same pairs; a refused setting leaves the scene and its settings as they were.
fn new_settings_rebuild_the_scene_in<const D: usize>() {
    let mut rng = SplitMix64::new(77);
    let mut scene = Scene::<f64, D>::new();
    let mut mirror = Mirror::<f64, D> {
        objects: Vec::new(),
    };
    for k in 0..600 {
        let aabb = random_box::<f64, D>(&mut rng, extent_in::<D>(20.0, 1.0));
        let motion = if k % 5 == 0 {
            Motion::Static
        } else {
            Motion::Dynamic
        };
        let handle = scene.insert(aabb, motion, Filter::ALL).unwrap();
        mirror.objects.push((handle, aabb, motion, Filter::ALL));
    }
    let expected = mirror.expected_pairs();
    let mut found = Vec::new();
    scene.detect(&mut found).unwrap();
    found.sort_unstable();
    assert_eq!(found, expected, "default settings");
    let levels = BroadPhaseConfig {
        hierarchy_factor: 3.0,
        all_pairs_below: 0,
        ..BroadPhaseConfig::default()
    };
    scene.set_config(levels).unwrap();
    assert_eq!(*scene.config(), levels);
    scene.set_kernel(hhg_core::Kernel::Scalar);
    scene.detect(&mut found).unwrap();
    found.sort_unstable();
    assert_eq!(
        found, expected,
        "a factor of 3, no all-pairs build, scalar kernel"
    );
    let refused = BroadPhaseConfig {
        huge_fraction: 0.0,
        ..levels
    };
    assert!(matches!(
        scene.set_config(refused),
        Err(Error::InvalidConfig {
            name: "huge_fraction",
            ..
        })
    ));
    assert_eq!(*scene.config(), levels, "a refused setting changes nothing");
    scene.detect(&mut found).unwrap();
    found.sort_unstable();
    assert_eq!(found, expected, "after a refused setting");
}

#[test]
fn new_settings_rebuild_the_scene() {
    new_settings_rebuild_the_scene_in::<3>();
}

#[test]
fn new_settings_rebuild_the_scene_2d() {
    new_settings_rebuild_the_scene_in::<2>();
}
