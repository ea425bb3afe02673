//! A model-based test of `Scene`: proptest draws sequences of operations (inserts, removals
//! of live and stale handles, box changes with bad boxes mixed in, updates, detections, pair
//! changes, box queries, strategy, configuration and kernel changes) and, after every step,
//! compares the scene with a naive model, a map from handle to box, motion and filter.
//!
//! The model's rules are Scene's documented ones: a detection reports every overlapping pair
//! of a dynamic object with a dynamic or static one whose filters accept each other (never
//! two statics), the smaller slot first; `detect_changes` reports the differences from its
//! previous successful call; a query sees the structures of the last successful update; a
//! stale handle is refused with `Error::StaleHandle`; and a failed call changes nothing.
//!
//! The same runs in the plane (`operations_2d`): the drawn boxes keep their first two axes.
//!
//! 1024 sequences of up to 99 operations each (`operations`), under every `UpdateStrategy`
//! and with the hierarchy built for small scenes too, each run in a pool of 1 thread and in
//! one of 3, whose reports (pairs in their order included) must be identical; about 1.5 s in
//! the test profile. `PROPTEST_CASES` overrides the count for a longer run.

use std::collections::{BTreeMap, BTreeSet};

use hhg_core::broad::{Aabb, BroadPhaseConfig, Filter, Handle, Motion, Scene, UpdateStrategy};
use hhg_core::{Error, Kernel};
use hhg_testkit::in_pool;
use proptest::prelude::*;
use proptest::sample::{Index, select};

/// How a box is drawn: good boxes on a coarse lattice (so that touching faces are common),
/// and every kind of box a scene must refuse or cannot build.
#[derive(Clone, Copy, Debug)]
enum BoxGen {
    /// A finite box: its minimum corner in quarter units, its size.
    Good([i8; 3], [f64; 3]),
    /// A box with an infinite bound (valid: it goes to the list of huge objects).
    Infinite([i8; 3], usize, bool),
    /// A NaN bound along an axis.
    Nan(usize),
    /// A minimum above the maximum along an axis.
    Inverted(usize),
    /// A point-sized box at about `±1e308` along an axis: valid alone, but two of them on
    /// opposite sides span more than `f64` holds, and a build over them fails.
    Far(usize, bool),
    /// A box from `-1e308` to `1e308` along an axis, which alone spans more than `f64` holds.
    Wide(usize),
}

impl BoxGen {
    /// The box of `D` axes (the first `D` of those drawn; an axis drawn past them wraps).
    fn aabb<const D: usize>(self) -> Aabb<f64, D> {
        match self {
            BoxGen::Good(corner, size) => {
                let min: [f64; D] = std::array::from_fn(|a| f64::from(corner[a]) / 4.0);
                Aabb::new(min, std::array::from_fn(|a| min[a] + size[a]))
            }
            BoxGen::Infinite(corner, axis, up) => {
                let mut aabb = BoxGen::Good(corner, [0.5; 3]).aabb::<D>();
                if up {
                    aabb.max[axis % D] = f64::INFINITY;
                } else {
                    aabb.min[axis % D] = f64::NEG_INFINITY;
                }
                aabb
            }
            BoxGen::Nan(axis) => {
                let mut aabb = Aabb::new([0.0; D], [1.0; D]);
                aabb.max[axis % D] = f64::NAN;
                aabb
            }
            BoxGen::Inverted(axis) => {
                let mut aabb = Aabb::new([0.0; D], [1.0; D]);
                aabb.min[axis % D] = 2.0;
                aabb
            }
            BoxGen::Far(axis, up) => {
                let mut p = [0.0; D];
                p[axis % D] = if up { 1e308 } else { -1e308 };
                Aabb::new(p, p)
            }
            BoxGen::Wide(axis) => {
                let mut aabb = Aabb::new([0.0; D], [1.0; D]);
                aabb.min[axis % D] = -1e308;
                aabb.max[axis % D] = 1e308;
                aabb
            }
        }
    }
}

/// Mostly good boxes, with every kind of bad or unbuildable box now and then.
fn box_gen() -> impl Strategy<Value = BoxGen> {
    let corner = prop::array::uniform3(-16i8..16);
    let size = prop::array::uniform3(select(vec![0.0, 0.25, 0.5, 1.0, 2.0, 7.5]));
    prop_oneof![
        40 => (corner.clone(), size).prop_map(|(c, s)| BoxGen::Good(c, s)),
        2 => (corner, 0usize..3, any::<bool>()).prop_map(|(c, a, u)| BoxGen::Infinite(c, a, u)),
        1 => (0usize..3).prop_map(BoxGen::Nan),
        1 => (0usize..3).prop_map(BoxGen::Inverted),
        1 => (0usize..3, any::<bool>()).prop_map(|(a, u)| BoxGen::Far(a, u)),
        1 => (0usize..3).prop_map(BoxGen::Wide),
    ]
}

/// Mostly no filtering; otherwise one group and a mask of three bits (none at all too).
fn filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        3 => Just(Filter::ALL),
        1 => (0u64..4, 0u64..8).prop_map(|(g, mask)| Filter { group: 1 << g, mask }),
    ]
}

/// Dynamic three times in four.
fn motion() -> impl Strategy<Value = Motion> {
    prop_oneof![3 => Just(Motion::Dynamic), 1 => Just(Motion::Static)]
}

/// Every update strategy.
fn strategy() -> impl Strategy<Value = UpdateStrategy> {
    select(vec![
        UpdateStrategy::Auto,
        UpdateStrategy::Rebuild,
        UpdateStrategy::Incremental,
    ])
}

/// Configurations: all-pairs for small scenes (the default) or the hierarchy always; an
/// invalid factor now and then (refused, changing nothing).
fn config() -> impl Strategy<Value = BroadPhaseConfig> {
    (
        select(vec![0usize, 0, 6, 512]),
        select(vec![1.0, 1.5, 2.0, 3.0]),
        select(vec![0.1, 0.25, 1.0]),
    )
        .prop_map(
            |(all_pairs_below, hierarchy_factor, huge_fraction)| BroadPhaseConfig {
                hierarchy_factor,
                huge_fraction,
                all_pairs_below,
            },
        )
}

/// One step of a sequence.
#[derive(Clone, Debug)]
enum Op {
    Insert(BoxGen, Motion, Filter),
    /// Inserts several good boxes at once, so that the hierarchy has something to sort.
    Batch(Vec<([i8; 3], [f64; 3], Motion)>),
    /// Removes a live handle, or a stale one (`stale`) when there is one.
    Remove(Index, bool),
    SetAabb(Index, bool, BoxGen),
    /// Moves a live object's box by a fraction of a quarter unit (small motions are patched
    /// in place by the incremental strategies).
    Nudge(Index, [i8; 3]),
    Update,
    Detect,
    DetectChanges,
    Query(BoxGen),
    SetStrategy(UpdateStrategy),
    SetConfig(BroadPhaseConfig),
    SetKernel(Kernel),
}

/// One step, weighted towards changes of the scene.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (box_gen(), motion(), filter()).prop_map(|(b, m, f)| Op::Insert(b, m, f)),
        1 => prop::collection::vec(
            (
                prop::array::uniform3(-16i8..16),
                prop::array::uniform3(select(vec![0.0, 0.25, 1.0, 3.0])),
                motion(),
            ),
            0..40,
        )
        .prop_map(Op::Batch),
        3 => (any::<Index>(), prop::bool::weighted(0.3)).prop_map(|(i, s)| Op::Remove(i, s)),
        5 => (any::<Index>(), prop::bool::weighted(0.2), box_gen())
            .prop_map(|(i, s, b)| Op::SetAabb(i, s, b)),
        5 => (any::<Index>(), prop::array::uniform3(-3i8..=3)).prop_map(|(i, d)| Op::Nudge(i, d)),
        2 => Just(Op::Update),
        3 => Just(Op::Detect),
        3 => Just(Op::DetectChanges),
        3 => box_gen().prop_map(Op::Query),
        1 => strategy().prop_map(Op::SetStrategy),
        1 => config().prop_map(Op::SetConfig),
        1 => select(vec![Kernel::Simd, Kernel::Scalar]).prop_map(Op::SetKernel),
    ]
}

/// What the model knows of a live object.
#[derive(Clone, Copy, Debug)]
struct Object<const D: usize> {
    aabb: Aabb<f64, D>,
    motion: Motion,
    filter: Filter,
}

/// The naive model of a scene.
#[derive(Debug, Default)]
struct Model<const D: usize> {
    live: BTreeMap<Handle, Object<D>>,
    /// Every handle removed.
    stale: Vec<Handle>,
    /// The boxes of the live objects at the last successful update.
    updated: BTreeMap<Handle, Aabb<f64, D>>,
    /// The pairs of the last successful `detect_changes`.
    previous: BTreeSet<[Handle; 2]>,
}

/// Whether `Scene::insert` and `Scene::set_aabb` accept the box: no NaN, `min <= max`, no
/// `+inf` minimum and no `-inf` maximum.
fn valid<const D: usize>(aabb: &Aabb<f64, D>) -> bool {
    (0..D).all(|a| {
        let (min, max) = (aabb.min[a], aabb.max[a]);
        !min.is_nan()
            && !max.is_nan()
            && min <= max
            && min != f64::INFINITY
            && max != f64::NEG_INFINITY
    })
}

/// Whether the finite ones of `boxes` span more than `f64` holds along an axis (a build
/// over them fails with `CoordinateOutOfRange`).
fn overflows<'a, const D: usize>(boxes: impl Iterator<Item = &'a Aabb<f64, D>>) -> bool {
    let mut lo = [f64::INFINITY; D];
    let mut hi = [f64::NEG_INFINITY; D];
    let mut any = false;
    for b in boxes {
        if b.min.iter().chain(&b.max).all(|v| v.is_finite()) {
            any = true;
            for a in 0..D {
                lo[a] = lo[a].min(b.min[a]);
                hi[a] = hi[a].max(b.max[a]);
            }
        }
    }
    any && (0..D).any(|a| !(hi[a] - lo[a]).is_finite())
}

impl<const D: usize> Model<D> {
    fn pick(&self, index: Index) -> Option<Handle> {
        (!self.live.is_empty())
            .then(|| *self.live.keys().nth(index.index(self.live.len())).unwrap())
    }

    fn pick_stale(&self, index: Index) -> Option<Handle> {
        (!self.stale.is_empty()).then(|| self.stale[index.index(self.stale.len())])
    }

    /// Whether an update may fail: the live dynamic or the live static objects span more
    /// than `f64` holds.
    fn update_may_fail(&self) -> bool {
        let of = |motion: Motion| {
            overflows(
                self.live
                    .values()
                    .filter(move |o| o.motion == motion)
                    .map(|o| &o.aabb),
            )
        };
        of(Motion::Dynamic) || of(Motion::Static)
    }

    /// Every pair a detection reports, sorted.
    fn pairs(&self) -> BTreeSet<[Handle; 2]> {
        let objects: Vec<(&Handle, &Object<D>)> = self.live.iter().collect();
        let mut pairs = BTreeSet::new();
        for (k, &(&a, oa)) in objects.iter().enumerate() {
            for &(&b, ob) in &objects[k + 1..] {
                if oa.motion == Motion::Static && ob.motion == Motion::Static {
                    continue;
                }
                if oa.aabb.overlaps(&ob.aabb) && oa.filter.accepts(ob.filter) {
                    // Handles order by slot first, and live handles have distinct slots.
                    pairs.insert([a, b]);
                }
            }
        }
        pairs
    }

    fn updated(&mut self) {
        self.updated = self.live.iter().map(|(&h, o)| (h, o.aabb)).collect();
    }
}

/// Checks what the scene says of every object against the model.
fn check_objects<const D: usize>(scene: &Scene<f64, D>, model: &Model<D>) {
    assert_eq!(scene.len(), model.live.len(), "len");
    assert_eq!(scene.is_empty(), model.live.is_empty(), "is_empty");
    for (&h, o) in &model.live {
        let got = scene.aabb(h).unwrap();
        assert!(
            got.min.map(f64::to_bits) == o.aabb.min.map(f64::to_bits)
                && got.max.map(f64::to_bits) == o.aabb.max.map(f64::to_bits),
            "aabb({h:?}): {got:?}, expected {:?}",
            o.aabb
        );
    }
    for &h in &model.stale {
        assert_stale(scene.aabb(h).map(drop), h);
    }
}

fn assert_stale(result: Result<(), Error>, h: Handle) {
    assert_eq!(
        result,
        Err(Error::StaleHandle {
            slot: h.slot(),
            generation: h.generation(),
        }),
        "a stale handle"
    );
}

/// Checks the pairs of a detection: each once, the smaller slot first, as the model says.
fn check_pairs(what: &str, got: &[[Handle; 2]], expected: &BTreeSet<[Handle; 2]>) {
    for p in got {
        assert!(
            p[0].slot() < p[1].slot(),
            "{what}: pair {p:?} not ordered by slot"
        );
    }
    let set: BTreeSet<[Handle; 2]> = got.iter().copied().collect();
    assert_eq!(set.len(), got.len(), "{what}: a pair reported twice");
    let missing: Vec<_> = expected.difference(&set).collect();
    let extra: Vec<_> = set.difference(expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: missing {missing:?}, extra {extra:?}"
    );
}

/// Checks a box query against the model: it sees the boxes of the last successful update;
/// an object inserted since is not found, one removed since never; one whose box changed
/// since may be found at its old box or its current one. Returns what the query found.
fn check_query<const D: usize>(
    scene: &Scene<f64, D>,
    model: &Model<D>,
    query: &Aabb<f64, D>,
) -> Vec<Handle> {
    let mut out = vec![];
    scene.query_aabb(query, &mut out).unwrap();
    assert!(
        out.windows(2).all(|w| w[0] < w[1]),
        "query: not ascending: {out:?}"
    );
    let found: BTreeSet<Handle> = out.iter().copied().collect();
    for &h in &found {
        let object = model
            .live
            .get(&h)
            .unwrap_or_else(|| panic!("query found {h:?}, which is not live"));
        let old = model
            .updated
            .get(&h)
            .unwrap_or_else(|| panic!("query found {h:?}, inserted since the last update"));
        assert!(
            old.overlaps(query) || object.aabb.overlaps(query),
            "query found {h:?}, whose box overlaps the query neither now nor at the last update"
        );
    }
    for (&h, object) in &model.live {
        if let Some(old) = model.updated.get(&h)
            && old == &object.aabb
            && old.overlaps(query)
        {
            assert!(found.contains(&h), "query missed {h:?} ({old:?})");
        }
    }
    out
}

/// What a scene answers to a few queries, exactly: everything, a box around the lattice's
/// middle, and a point-sized box.
fn answers<const D: usize>(scene: &Scene<f64, D>) -> Vec<Vec<Handle>> {
    [
        Aabb::new([f64::NEG_INFINITY; D], [f64::INFINITY; D]),
        Aabb::new([-1.0; D], [1.5; D]),
        Aabb::new([0.5; D], [0.5; D]),
    ]
    .iter()
    .map(|query| {
        let mut out = Vec::new();
        scene.query_aabb(query, &mut out).unwrap();
        out
    })
    .collect()
}

/// Runs `ops` on a new scene with `config` and `strategy`, checking every step against the
/// model, and ends with a detection that must succeed. Returns the transcript of what the
/// scene reported (updates, pairs in their order, changes, queries), for comparing thread
/// counts.
fn run<const D: usize>(
    config: BroadPhaseConfig,
    strategy: UpdateStrategy,
    ops: &[Op],
) -> Vec<String> {
    let mut transcript = Vec::new();
    let mut scene = Scene::<f64, D>::new();
    scene.set_config(config).unwrap();
    scene.set_strategy(strategy);
    let mut model = Model::<D>::default();
    let mut issued = BTreeSet::new();
    let mut out: Vec<[Handle; 2]> = Vec::new();
    let (mut created, mut lost): (Vec<[Handle; 2]>, Vec<[Handle; 2]>) = (Vec::new(), Vec::new());
    let mut insert = |scene: &mut Scene<f64, D>,
                      model: &mut Model<D>,
                      aabb: Aabb<f64, D>,
                      motion: Motion,
                      filter: Filter| {
        match scene.insert(aabb, motion, filter) {
            Ok(h) => {
                assert!(valid(&aabb), "insert accepted a bad box {aabb:?}");
                assert!(issued.insert(h), "handle {h:?} issued twice");
                model.live.insert(
                    h,
                    Object {
                        aabb,
                        motion,
                        filter,
                    },
                );
            }
            Err(e) => {
                assert!(!valid(&aabb), "insert refused a good box {aabb:?}: {e}");
                assert!(
                    matches!(
                        e,
                        Error::InvalidBox { .. } | Error::NonFiniteCoordinate { .. }
                    ),
                    "insert: {e:?}"
                );
            }
        }
    };
    for op in ops {
        match op {
            Op::Insert(b, motion, filter) => {
                insert(&mut scene, &mut model, b.aabb::<D>(), *motion, *filter)
            }
            Op::Batch(boxes) => {
                for &(corner, size, motion) in boxes {
                    let aabb = BoxGen::Good(corner, size).aabb::<D>();
                    insert(&mut scene, &mut model, aabb, motion, Filter::ALL);
                }
            }
            Op::Remove(index, stale) => {
                if *stale && let Some(h) = model.pick_stale(*index) {
                    assert_stale(scene.remove(h), h);
                } else if let Some(h) = model.pick(*index) {
                    scene.remove(h).unwrap();
                    model.live.remove(&h);
                    model.stale.push(h);
                }
            }
            Op::SetAabb(index, stale, b) => {
                let aabb = b.aabb::<D>();
                if *stale && let Some(h) = model.pick_stale(*index) {
                    assert_stale(scene.set_aabb(h, aabb), h);
                } else if let Some(h) = model.pick(*index) {
                    match scene.set_aabb(h, aabb) {
                        Ok(()) => {
                            assert!(valid(&aabb), "set_aabb accepted a bad box {aabb:?}");
                            model.live.get_mut(&h).unwrap().aabb = aabb;
                        }
                        Err(e) => {
                            assert!(!valid(&aabb), "set_aabb refused a good box {aabb:?}: {e}");
                        }
                    }
                }
            }
            Op::Nudge(index, step) => {
                if let Some(h) = model.pick(*index) {
                    let object = model.live.get_mut(&h).unwrap();
                    let mut aabb = object.aabb;
                    for a in 0..D {
                        let d = f64::from(step[a]) / 32.0;
                        aabb.min[a] += d;
                        aabb.max[a] += d;
                    }
                    if valid(&aabb) {
                        scene.set_aabb(h, aabb).unwrap();
                        object.aabb = aabb;
                    }
                }
            }
            Op::Update | Op::Detect | Op::DetectChanges => {
                let may_fail = model.update_may_fail();
                let before = (out.clone(), created.clone(), lost.clone());
                let answers_before = answers(&scene);
                let result = match op {
                    Op::Update => scene.update(),
                    Op::Detect => scene.detect(&mut out),
                    _ => scene.detect_changes(&mut created, &mut lost),
                };
                transcript.push(format!("{result:?} {out:?} {created:?} {lost:?}"));
                match result {
                    Ok(_) => {
                        model.updated();
                        let expected = model.pairs();
                        match op {
                            Op::Detect => check_pairs("detect", &out, &expected),
                            Op::DetectChanges => {
                                let want_created: Vec<_> =
                                    expected.difference(&model.previous).copied().collect();
                                let want_lost: Vec<_> =
                                    model.previous.difference(&expected).copied().collect();
                                assert_eq!(created, want_created, "detect_changes: created");
                                assert_eq!(lost, want_lost, "detect_changes: lost");
                                model.previous = expected;
                            }
                            _ => {}
                        }
                    }
                    Err(e) => {
                        assert!(may_fail, "{op:?} failed on boxes that fit: {e}");
                        assert!(
                            matches!(e, Error::CoordinateOutOfRange { .. }),
                            "{op:?}: {e:?}"
                        );
                        assert_eq!(
                            (out.clone(), created.clone(), lost.clone()),
                            before,
                            "{op:?} failed and changed its output"
                        );
                        assert_eq!(
                            answers(&scene),
                            answers_before,
                            "{op:?} failed and changed the scene's answers"
                        );
                    }
                }
            }
            Op::Query(b) => {
                let query = b.aabb::<D>();
                if valid(&query) {
                    transcript.push(format!("{:?}", check_query(&scene, &model, &query)));
                } else {
                    // Something in the output first, which the refused query must leave.
                    let mut found = Vec::new();
                    let everything = Aabb::new([f64::NEG_INFINITY; D], [f64::INFINITY; D]);
                    scene.query_aabb(&everything, &mut found).unwrap();
                    let keep = found.clone();
                    assert!(
                        scene.query_aabb(&query, &mut found).is_err(),
                        "query of {query:?}"
                    );
                    assert_eq!(found, keep, "a refused query changed its output");
                }
            }
            Op::SetStrategy(s) => {
                scene.set_strategy(*s);
                assert_eq!(scene.strategy(), *s);
            }
            Op::SetConfig(config) => {
                let before = *scene.config();
                match scene.set_config(*config) {
                    Ok(()) => assert_eq!(scene.config(), config),
                    Err(_) => {
                        assert!(config.check().is_err(), "set_config refused {config:?}");
                        assert_eq!(
                            scene.config(),
                            &before,
                            "a refused config changed the scene"
                        );
                    }
                }
            }
            Op::SetKernel(kernel) => {
                scene.set_kernel(*kernel);
                assert_eq!(scene.kernel(), *kernel);
            }
        }
        check_objects(&scene, &model);
        // A query of everything finite after every step.
        let found = check_query(&scene, &model, &Aabb::new([-1e3; D], [1e3; D]));
        transcript.push(format!("{found:?}"));
    }
    // A final detection, with the far boxes removed so that it must succeed.
    let far: Vec<Handle> = model
        .live
        .iter()
        .filter(|(_, o)| {
            o.aabb
                .min
                .iter()
                .chain(&o.aabb.max)
                .any(|v| v.abs() > 1e300 && v.is_finite())
        })
        .map(|(&h, _)| h)
        .collect();
    for h in far {
        scene.remove(h).unwrap();
        model.live.remove(&h);
    }
    scene.detect(&mut out).unwrap();
    model.updated();
    check_pairs("final detect", &out, &model.pairs());
    check_query(
        &scene,
        &model,
        &Aabb::new([f64::NEG_INFINITY; D], [f64::INFINITY; D]),
    );
    transcript.push(format!("{out:?}"));
    transcript
}

proptest! {
    #![proptest_config(hhg_testkit::strategies::config(1024))]

    #[test]
    fn operations(
        config in config().prop_filter("a valid configuration", |c| c.check().is_ok()),
        strategy in strategy(),
        ops in prop::collection::vec(op(), 1..100),
    ) {
        same_in_one_and_three_threads::<3>(config, strategy, &ops);
    }

    #[test]
    fn operations_2d(
        config in config().prop_filter("a valid configuration", |c| c.check().is_ok()),
        strategy in strategy(),
        ops in prop::collection::vec(op(), 1..100),
    ) {
        same_in_one_and_three_threads::<2>(config, strategy, &ops);
    }
}

/// Runs `ops` in a pool of 1 thread and in one of 3, and checks that the two report the
/// same.
fn same_in_one_and_three_threads<const D: usize>(
    config: BroadPhaseConfig,
    strategy: UpdateStrategy,
    ops: &[Op],
) {
    let one = in_pool(1, || run::<D>(config, strategy, ops));
    let three = in_pool(3, || run::<D>(config, strategy, ops));
    for (k, (a, b)) in one.iter().zip(&three).enumerate() {
        assert_eq!(a, b, "report {k} differs between 1 and 3 threads");
    }
    assert_eq!(one.len(), three.len());
}
