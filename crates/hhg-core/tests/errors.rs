//! Error tests: every fallible entry point refuses bad input with the typed error naming the offending value, and never panics.

use hhg_core::{Error, Grid, MAX_POINTS, MAX_SPAN_CELLS, NeighborLists, NeighborSearch, Points};
use hhg_testkit::{SplitMix64, TestReal, for_both_precisions, to_real, uniform_box};

/// The non-finite values every coordinate check must refuse.
fn non_finite<T: TestReal>() -> [T; 3] {
    [
        T::from_f64(f64::NAN),
        T::from_f64(f64::INFINITY),
        T::from_f64(f64::NEG_INFINITY),
    ]
}

/// Panics unless `result` is `NonFiniteCoordinate` naming `index` and `axis` with `bad`
/// (also used by the plane grid's tests).
pub(crate) fn expect_non_finite<T: TestReal>(
    what: &str,
    result: Result<(), Error>,
    index: usize,
    axis: usize,
    bad: T,
) {
    let error = match result {
        Err(error @ Error::NonFiniteCoordinate { .. }) => error,
        other => panic!("{what}: expected NonFiniteCoordinate at ({index}, {axis}), got {other:?}"),
    };
    let Error::NonFiniteCoordinate {
        index: i,
        axis: a,
        value,
    } = error
    else {
        unreachable!("matched above")
    };
    assert_eq!(
        (i, a),
        (index, axis),
        "{what}: wrong index or axis in {error:?}"
    );
    let bad = bad.to_f64();
    assert!(
        value.to_bits() == bad.to_bits() || (value.is_nan() && bad.is_nan()),
        "{what}: value {value} instead of {bad}"
    );
    let message = error.to_string();
    let axis_name = ["x", "y", "z"][axis];
    assert!(
        message.contains("non-finite")
            && message.contains(&format!("point {index} "))
            && message.contains(&format!("{axis_name} coordinate")),
        "{what}: message {message:?}"
    );
}

/// NaN and +-inf in each axis at chosen indices, through every entry point that takes points.
fn non_finite_coordinates<T: TestReal>() {
    let mut rng = SplitMix64::new(1);
    let n = 37;
    let good: Vec<[T; 3]> = to_real(&uniform_box(&mut rng, n, [-2.0; 3], [2.0; 3]));
    let radius = T::from_f64(0.5);
    let mut built = Grid::new(radius).unwrap();
    built.build(&good).unwrap();
    let empty = Grid::new(radius).unwrap();
    for index in [0, 1, 8, 17, n - 1] {
        for axis in 0..3 {
            for bad in non_finite::<T>() {
                let what = format!("{} {bad:?} at point {index}, axis {axis}", T::NAME);
                let mut points = good.clone();
                points[index][axis] = bad;
                let (x, y, z): (Vec<T>, Vec<T>, Vec<T>) = (
                    points.iter().map(|p| p[0]).collect(),
                    points.iter().map(|p| p[1]).collect(),
                    points.iter().map(|p| p[2]).collect(),
                );

                let mut grid = Grid::new(radius).unwrap();
                expect_non_finite(
                    &format!("{what}: build"),
                    grid.build(&points),
                    index,
                    axis,
                    bad,
                );
                expect_non_finite(
                    &format!("{what}: build_soa"),
                    grid.build_soa(&x, &y, &z),
                    index,
                    axis,
                    bad,
                );
                expect_non_finite(
                    &format!("{what}: build_points"),
                    grid.build_points(Points::Aos(&points)),
                    index,
                    axis,
                    bad,
                );

                for (name, target) in [("a built grid", &built), ("an empty grid", &empty)] {
                    let mut lists = NeighborLists::default();
                    expect_non_finite(
                        &format!("{what}: query on {name}"),
                        target.query(&points, &mut lists),
                        index,
                        axis,
                        bad,
                    );
                    expect_non_finite(
                        &format!("{what}: query_points (SoA) on {name}"),
                        target.query_points_with_distances(Points::Soa(&x, &y, &z), &mut lists),
                        index,
                        axis,
                        bad,
                    );
                    let mut found = vec![7];
                    expect_non_finite(
                        &format!("{what}: query_point on {name}"),
                        target.query_point(points[index], &mut found),
                        0,
                        axis,
                        bad,
                    );
                    assert_eq!(
                        found,
                        [7],
                        "{what}: a refused query_point changed its output"
                    );
                }

                let mut search = NeighborSearch::new(radius).unwrap();
                expect_non_finite(
                    &format!("{what}: add_dynamic_set"),
                    search.add_dynamic_set(&points).map(drop),
                    index,
                    axis,
                    bad,
                );
                expect_non_finite(
                    &format!("{what}: add_static_set"),
                    search.add_static_set(&points).map(drop),
                    index,
                    axis,
                    bad,
                );
                expect_non_finite(
                    &format!("{what}: add_set_soa"),
                    search.add_set_soa(&x, &y, &z, true).map(drop),
                    index,
                    axis,
                    bad,
                );
                assert_eq!(search.set_count(), 0, "{what}: a refused set was added");
                let dynamic = search.add_dynamic_set(&good).unwrap();
                let fixed = search.add_static_set(&good).unwrap();
                for set in [dynamic, fixed] {
                    expect_non_finite(
                        &format!("{what}: update_positions of set {set}"),
                        search.update_positions(set, &points),
                        index,
                        axis,
                        bad,
                    );
                    expect_non_finite(
                        &format!("{what}: update_positions_soa of set {set}"),
                        search.update_positions_soa(set, &x, &y, &z),
                        index,
                        axis,
                        bad,
                    );
                }
            }
        }
    }
}

/// Zero, negative, NaN and infinite radii, and radii whose square is not a normal number.
fn invalid_radius<T: TestReal>() {
    for r in [
        0.0,
        -0.0,
        -1.0,
        -1e-30,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ]
    .into_iter()
    .chain(if T::NAME == "f32" {
        // Radii whose square underflows to zero, is subnormal, or overflows.
        [1e-30, 1e-21, 2e19]
    } else {
        [1e-170, 1e-160, 1e155]
    }) {
        let radius = T::from_f64(r);
        let what = format!("radius {r} ({})", T::NAME);
        for result in [
            Grid::new(radius).map(drop),
            NeighborSearch::new(radius).map(drop),
        ] {
            match result {
                Err(error @ Error::InvalidRadius { radius: given }) => {
                    let r = radius.to_f64();
                    assert!(
                        given.to_bits() == r.to_bits() || (given.is_nan() && r.is_nan()),
                        "{what}: the error names {given}"
                    );
                    let message = error.to_string();
                    assert!(message.contains("radius"), "{what}: message {message:?}");
                }
                other => panic!("{what}: expected InvalidRadius, got {other:?}"),
            }
        }
    }
}

/// Separate coordinate slices of different lengths.
fn length_mismatch<T: TestReal>() {
    let v = |n: usize| vec![T::from_f64(0.25); n];
    let radius = T::from_f64(1.0);
    for (nx, ny, nz) in [(3, 2, 3), (3, 3, 4), (0, 1, 1), (5, 5, 0)] {
        let (x, y, z) = (v(nx), v(ny), v(nz));
        let what = format!("slices of {nx}, {ny}, {nz} ({})", T::NAME);
        let expect = |name: &str, result: Result<(), Error>| match result {
            Err(error @ Error::LengthMismatch { x, y, z }) => {
                assert_eq!((x, y, z), (nx, ny, nz), "{what}: {name}");
                let message = error.to_string();
                assert!(
                    message.contains("differ in length")
                        && message.contains(&format!("x has {nx}"))
                        && message.contains(&format!("y has {ny}"))
                        && message.contains(&format!("z has {nz}")),
                    "{what}: {name}: message {message:?}"
                );
            }
            other => panic!("{what}: {name}: expected LengthMismatch, got {other:?}"),
        };
        let mut grid = Grid::new(radius).unwrap();
        expect("build_soa", grid.build_soa(&x, &y, &z));
        let mut lists = NeighborLists::default();
        expect(
            "query_points",
            grid.query_points(Points::Soa(&x, &y, &z), &mut lists),
        );
        let mut search = NeighborSearch::new(radius).unwrap();
        expect(
            "add_set_soa",
            search.add_set_soa(&x, &y, &z, false).map(drop),
        );
        assert_eq!(search.set_count(), 0);
        // The set has as many points as the x slice, so the length check is what fails.
        let set = search
            .add_dynamic_set(&vec![[T::from_f64(0.0); 3]; nx])
            .unwrap();
        expect(
            "update_positions_soa",
            search.update_positions_soa(set, &x, &y, &z),
        );
    }
}

/// Points spanning more than `MAX_SPAN_CELLS` cells along one axis.
fn coordinate_out_of_range<T: TestReal>() {
    let (low, high, r) = if T::NAME == "f32" {
        (-3e38, 3e38, 1e-10)
    } else {
        (0.0, 1e300, 1.0)
    };
    let radius = T::from_f64(r);
    let mut rng = SplitMix64::new(2);
    for axis in 0..3 {
        for at in [0, 5, 9] {
            let mut points: Vec<[f64; 3]> = uniform_box(&mut rng, 10, [-1.0; 3], [1.0; 3])
                .into_iter()
                .map(|p| p.map(|v| v * r))
                .collect();
            let low_at = (at + 3) % 10;
            points[low_at][axis] = low;
            points[at][axis] = high;
            let points: Vec<[T; 3]> = to_real(&points);
            let what = format!(
                "{} points from {low:e} to {high:e} along axis {axis}, r = {r:e}",
                T::NAME
            );
            let mut grid = Grid::new(radius).unwrap();
            let check = |name: &str, result: Result<(), Error>| match result {
                Err(
                    error @ Error::CoordinateOutOfRange {
                        index,
                        axis: a,
                        value,
                        cells,
                        limit,
                    },
                ) => {
                    assert!(
                        index == at || index == low_at,
                        "{what}: {name}: the error names point {index}, not an extreme one"
                    );
                    assert_eq!(a, axis, "{what}: {name}: axis");
                    assert_eq!(
                        value.to_bits(),
                        points[index][axis].to_f64().to_bits(),
                        "{what}: {name}: value"
                    );
                    assert!(
                        cells > limit,
                        "{what}: {name}: {cells} cells, limit {limit}"
                    );
                    assert_eq!(limit, MAX_SPAN_CELLS, "{what}: {name}: limit");
                    let message = error.to_string();
                    assert!(
                        message.contains(&format!("point {index}")) && message.contains("cells"),
                        "{what}: {name}: message {message:?}"
                    );
                }
                other => panic!("{what}: {name}: expected CoordinateOutOfRange, got {other:?}"),
            };
            check("build", grid.build(&points));
            let (x, y, z): (Vec<T>, Vec<T>, Vec<T>) = (
                points.iter().map(|p| p[0]).collect(),
                points.iter().map(|p| p[1]).collect(),
                points.iter().map(|p| p[2]).collect(),
            );
            check("build_soa", grid.build_soa(&x, &y, &z));
            let mut search = NeighborSearch::new(radius).unwrap();
            check("add_dynamic_set", search.add_dynamic_set(&points).map(drop));
            let zeros = vec![[T::from_f64(0.0); 3]; points.len()];
            let set = search.add_static_set(&zeros).unwrap();
            check("update_positions", search.update_positions(set, &points));
        }
    }
}

/// A span just inside the limit builds; one beyond it does not.
#[test]
fn span_limit_is_where_documented() {
    let inside = [[0.0f64; 3], [0.99 * MAX_SPAN_CELLS, 0.0, 0.0]];
    let mut grid = Grid::new(1.0f64).unwrap();
    grid.build(&inside).unwrap();
    let mut lists = NeighborLists::default();
    grid.neighbor_lists(&mut lists).unwrap();
    assert_eq!(lists.total(), 0);
    let outside = [[0.0f64; 3], [0.0, 0.0, 1.01 * MAX_SPAN_CELLS]];
    assert!(matches!(
        grid.build(&outside),
        Err(Error::CoordinateOutOfRange {
            index: 1,
            axis: 2,
            ..
        })
    ));
}

/// Unknown set ids and changed point counts in a multi-set search.
#[test]
fn unknown_sets_and_changed_counts() {
    let points = [[0.0f64, 0.0, 0.0], [0.5, 0.0, 0.0], [3.0, 0.0, 0.0]];
    let mut search = NeighborSearch::new(1.0f64).unwrap();
    let a = search.add_dynamic_set(&points).unwrap();
    let b = search.add_static_set(&points[..2]).unwrap();
    for (searching, searched) in [(2, a), (a, 2), (7, 9), (usize::MAX, b)] {
        match search.set_active(searching, searched, true) {
            Err(error @ Error::UnknownPointSet { set, sets }) => {
                assert_eq!(set, if searching >= 2 { searching } else { searched });
                assert_eq!(sets, 2);
                let message = error.to_string();
                assert!(
                    message.contains(&format!("point set {set}"))
                        && message.contains("does not exist"),
                    "{message:?}"
                );
            }
            other => panic!(
                "set_active({searching}, {searched}): expected UnknownPointSet, got {other:?}"
            ),
        }
        assert!(!search.is_active(searching, searched));
    }
    assert!(matches!(
        search.update_positions(5, &points),
        Err(Error::UnknownPointSet { set: 5, sets: 2 })
    ));
    assert!(matches!(
        search.update_positions_soa(2, &[0.0], &[0.0], &[0.0]),
        Err(Error::UnknownPointSet { set: 2, sets: 2 })
    ));
    for (set, given) in [(a, 2), (a, 4), (b, 3), (b, 0)] {
        let moved = vec![[0.25f64; 3]; given];
        let expected = if set == a { 3 } else { 2 };
        match search.update_positions(set, &moved) {
            Err(error @ Error::PointCountChanged { .. }) => {
                assert_eq!(
                    error,
                    Error::PointCountChanged {
                        set,
                        expected,
                        given
                    }
                );
                let message = error.to_string();
                assert!(
                    message.contains(&format!("point set {set} has {expected} points"))
                        && message.contains(&format!("{given} positions")),
                    "{message:?}"
                );
            }
            other => panic!(
                "update_positions({set}, {given} points): expected PointCountChanged, got {other:?}"
            ),
        }
        let x = vec![0.25f64; given];
        assert!(matches!(
            search.update_positions_soa(set, &x, &x, &x),
            Err(Error::PointCountChanged { .. })
        ));
    }
    // The search still works after the refused calls.
    search.set_active(a, b, true).unwrap();
    search.find_neighbors().unwrap();
    assert_eq!(search.neighbors(a, b).unwrap().neighbors(0), &[0, 1]);
}

/// Every error's message names its problem, including the one no test can provoke cheaply.
#[test]
fn every_error_displays_its_problem() {
    let cases = [
        (Error::InvalidRadius { radius: -2.0 }, vec!["radius", "-2"]),
        (
            Error::NonFiniteCoordinate {
                index: 12,
                axis: 1,
                value: f64::NAN,
            },
            vec!["point 12", "non-finite", "y coordinate", "NaN"],
        ),
        (
            Error::CoordinateOutOfRange {
                index: 3,
                axis: 2,
                value: 1e300,
                cells: 1e300,
                limit: MAX_SPAN_CELLS,
            },
            vec!["point 3", "z = ", "cells", "radius"],
        ),
        (
            Error::TooManyPoints {
                count: MAX_POINTS + 1,
                limit: MAX_POINTS,
            },
            vec!["points", "4294967295"],
        ),
        (
            Error::LengthMismatch { x: 1, y: 2, z: 3 },
            vec!["x has 1", "y has 2", "z has 3"],
        ),
        (
            Error::InvalidBox {
                index: 7,
                axis: 0,
                min: 2.0,
                max: 1.0,
            },
            vec!["box 7", "along x", "min = 2", "max = 1"],
        ),
        (
            Error::InvalidParticleRadius {
                index: 5,
                radius: -1.0,
            },
            vec!["particle 5", "radius -1"],
        ),
        (
            Error::InvalidConfig {
                name: "hierarchy_factor",
                value: 1.0,
                expected: "finite and >= 1.5",
            },
            vec!["hierarchy_factor = 1", ">= 1.5"],
        ),
        (
            Error::StaleHandle {
                slot: 3,
                generation: 9,
            },
            vec!["slot 3", "generation 9", "live object"],
        ),
        (
            Error::UnknownPointSet { set: 4, sets: 2 },
            vec!["point set 4", "holds 2"],
        ),
        (
            Error::PointCountChanged {
                set: 1,
                expected: 10,
                given: 9,
            },
            vec!["point set 1", "10 points", "9 positions"],
        ),
    ];
    for (error, needles) in cases {
        let message = error.to_string();
        for needle in needles {
            assert!(
                message.contains(needle),
                "{error:?} displays {message:?}, without {needle:?}"
            );
        }
        let boxed: Box<dyn std::error::Error> = Box::new(error);
        assert_eq!(boxed.to_string(), message);
    }
}

for_both_precisions!(
    non_finite_coordinates,
    invalid_radius,
    length_mismatch,
    coordinate_out_of_range
);

/// The public helpers refuse bad input too.
#[test]
fn helpers_refuse_bad_input() {
    let mut columns = hhg_core::PointColumns::<f32>::default();
    assert_eq!(
        columns.assign_soa(&[1.0, 2.0], &[1.0], &[1.0, 2.0]),
        Err(Error::LengthMismatch { x: 2, y: 1, z: 2 })
    );
    let points = [[0.0f64, 1.0, 2.0], [3.0, 4.0, f64::NEG_INFINITY]];
    assert!(matches!(
        hhg_core::building_blocks::bounds(Points::Aos(&points)),
        Err(Error::NonFiniteCoordinate { index: 1, axis: 2, value }) if value == f64::NEG_INFINITY
    ));
}

/// `bounds` over separate slices of different lengths reports `LengthMismatch` like every
/// other entry point, instead of indexing past the short slice.
#[test]
fn bounds_of_mismatched_slices_is_an_error() {
    let (x, y, z) = ([0.0f32, 1.0], [0.0f32, 1.0], [0.0f32]);
    let result =
        std::panic::catch_unwind(|| hhg_core::building_blocks::bounds(Points::Soa(&x, &y, &z)));
    match result {
        Ok(Err(Error::LengthMismatch { x: 2, y: 2, z: 1 })) => {}
        Ok(other) => panic!("expected LengthMismatch, got {other:?}"),
        Err(_) => {
            panic!("hhg_core::building_blocks::bounds panicked on slices of lengths 2, 2 and 1")
        }
    }
}
