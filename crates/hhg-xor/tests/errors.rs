//! Bad input: every scheme refuses it with exactly the error hhg-core gives for the same input (points, radii, query points, boxes, particles), and bad settings with InvalidConfig.

use hhg_core::broad::{Aabb, BroadPhase, RadiusRule, VariableRadiusSearch};
use hhg_core::{Error, FixedRadiusScheme, Grid, MAX_SPAN_CELLS};
use hhg_testkit::{SplitMix64, TestReal, for_both_precisions, to_real, uniform_box};
use hhg_xor::{Levels, MultilevelSearch, PoucholScheme, Primes, TableSize, XorScheme};

/// Panics unless two errors are equal, NaN values included (compared by their Debug form).
#[track_caller]
fn assert_same(got: Error, want: &Error, what: &str) {
    assert_eq!(format!("{got:?}"), format!("{want:?}"), "{what}");
}

/// Both point schemes with default settings.
fn schemes<T: TestReal>(radius: T) -> Vec<Box<dyn FixedRadiusScheme<T>>> {
    vec![
        Box::new(XorScheme::new(radius, Primes::Teschner).unwrap()),
        Box::new(PoucholScheme::new(radius, Primes::Mueller).unwrap()),
    ]
}

/// NaN and infinities at several points and axes: the build fails as hhg-core's does, and
/// so does a query at a non-finite point.
fn non_finite_coordinates<T: TestReal>() {
    let mut rng = SplitMix64::new(1);
    let good: Vec<[T; 3]> = to_real(&uniform_box(&mut rng, 37, [-2.0; 3], [2.0; 3]));
    let radius = T::from_f64(0.5);
    let mut grid = Grid::new(radius).unwrap();
    for index in [0, 1, 8, 36] {
        for axis in 0..3 {
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY].map(T::from_f64) {
                let mut points = good.clone();
                points[index][axis] = bad;
                let want = grid.build(&points).unwrap_err();
                assert!(
                    matches!(want, Error::NonFiniteCoordinate { .. }),
                    "{want:?}"
                );
                let query = grid
                    .query_point(points[index], &mut Vec::new())
                    .unwrap_err();
                for mut scheme in schemes(radius) {
                    let got = scheme.build(&points).unwrap_err();
                    assert_same(got, &want, &format!("{}: build", scheme.name()));
                    scheme.build(&good).unwrap();
                    let mut out = vec![1];
                    let got = scheme.query_point(points[index], &mut out).unwrap_err();
                    assert_same(got, &query, &format!("{}: query_point", scheme.name()));
                }
            }
        }
    }
}

/// Zero, negative, NaN and infinite radii, and radii whose square is not a normal number.
fn invalid_radius<T: TestReal>() {
    let extreme: [f64; 3] = if T::NAME == "f32" {
        [1e-30, 1e-21, 2e19]
    } else {
        [1e-170, 1e-160, 1e155]
    };
    for r in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY]
        .into_iter()
        .chain(extreme)
    {
        let radius = T::from_f64(r);
        let want = Grid::new(radius).unwrap_err();
        assert!(matches!(want, Error::InvalidRadius { .. }));
        let what = format!("radius {r}");
        assert_same(
            XorScheme::new(radius, Primes::Teschner).unwrap_err(),
            &want,
            &what,
        );
        let size = TableSize::Fixed(8);
        let got = XorScheme::with_table_size(radius, Primes::Mueller, size).unwrap_err();
        assert_same(got, &want, &what);
        assert_same(
            PoucholScheme::new(radius, Primes::Teschner).unwrap_err(),
            &want,
            &what,
        );
    }
}

/// Points spanning more cells than the integer cell range: hhg-core's error.
fn span_beyond_the_cell_range<T: TestReal>() {
    let radius = T::from_f64(1.0);
    let mut grid = Grid::new(radius).unwrap();
    for axis in 0..3 {
        let mut far = [0.0; 3];
        far[axis] = 1.5 * MAX_SPAN_CELLS;
        let points: Vec<[T; 3]> = to_real(&[[0.0; 3], [0.5; 3], far]);
        let want = grid.build(&points).unwrap_err();
        assert!(
            matches!(want, Error::CoordinateOutOfRange { index: 2, .. }),
            "{want:?}"
        );
        for mut scheme in schemes(radius) {
            assert_same(scheme.build(&points).unwrap_err(), &want, scheme.name());
        }
    }
    // Just inside the limit builds.
    let points: Vec<[T; 3]> = to_real(&[[0.0; 3], [0.0, 0.0, 0.5 * MAX_SPAN_CELLS]]);
    for mut scheme in schemes(radius) {
        scheme.build(&points).unwrap();
        let mut pairs = hhg_core::PairList::default();
        pairs
            .collect_units(1, |_, stale| stale.push([1, 1]))
            .unwrap();
        scheme.pairs(&mut pairs).unwrap();
        assert!(pairs.is_empty());
    }
}

/// Boxes with NaN bounds, inverted bounds or infinities pointing the wrong way: the errors of
/// hhg-core's box query. Boxes with infinite bounds that point outwards are valid.
fn invalid_boxes<T: TestReal>() {
    let mut scheme = PoucholScheme::new(T::from_f64(1.0), Primes::Teschner).unwrap();
    let points: Vec<[T; 3]> = to_real(&[[0.0; 3], [0.5; 3], [3.0; 3]]);
    scheme.build(&points).unwrap();
    let broad = BroadPhase::<T>::new();
    let v = |x: f64| T::from_f64(x);
    let inf = f64::INFINITY;
    for axis in 0..3 {
        let mut bad = Vec::new();
        for (min, max) in [
            (f64::NAN, 1.0),
            (0.0, f64::NAN),
            (2.0, 1.0),
            (inf, inf),
            (-inf, -inf),
        ] {
            let mut aabb = Aabb::new([v(-1.0); 3], [v(1.0); 3]);
            aabb.min[axis] = v(min);
            aabb.max[axis] = v(max);
            bad.push(aabb);
        }
        for aabb in bad {
            let mut out = Vec::new();
            let want = broad.query_aabb(&aabb, &mut out).unwrap_err();
            let mut got = vec![1];
            let what = format!("{aabb:?}");
            assert_same(
                scheme.query_aabb(&aabb, &mut got).unwrap_err(),
                &want,
                &what,
            );
            let candidates = scheme.query_aabb_candidates(&aabb, &mut got).unwrap_err();
            assert_same(candidates, &want, &what);
        }
    }
    let mut out = Vec::new();
    scheme
        .query_aabb(&Aabb::new([v(-inf); 3], [v(inf); 3]), &mut out)
        .unwrap();
    assert_eq!(out, vec![0, 1, 2]);
}

/// Particles: length mismatch, non-finite coordinates, bad radii: VariableRadiusSearch's
/// errors, including which particle comes first.
fn invalid_particles<T: TestReal>() {
    let points: Vec<[T; 3]> = to_real(&[[0.0; 3], [1.0; 3], [2.0; 3], [3.0; 3]]);
    let one = T::from_f64(1.0);
    let overflow = if T::NAME == "f32" { 1e20 } else { 1e160 };
    let mut cases: Vec<(Vec<[T; 3]>, Vec<T>)> = vec![(points.clone(), vec![one; 3])];
    for (index, value) in [(2, -1.0), (1, f64::NAN), (3, f64::INFINITY), (0, overflow)] {
        let mut radii = vec![one; 4];
        radii[index] = T::from_f64(value);
        cases.push((points.clone(), radii));
    }
    let mut moved = points.clone();
    moved[1][2] = T::from_f64(f64::NAN);
    let mut radii = vec![one; 4];
    radii[3] = T::from_f64(-2.0);
    cases.push((moved.clone(), radii.clone()));
    radii[0] = T::from_f64(-2.0);
    cases.push((moved, radii));
    if T::NAME == "f64" {
        // An extent that overflows f64.
        let mut far = points.clone();
        far[3][0] = T::from_f64(1.7e308);
        far[2][0] = T::from_f64(-1.7e308);
        cases.push((far, vec![one; 4]));
    }
    for (k, (points, radii)) in cases.iter().enumerate() {
        let mut core = VariableRadiusSearch::new(RadiusRule::Max);
        let want = core.build(points, radii).unwrap_err();
        let mut search = MultilevelSearch::new(Primes::Teschner);
        assert_same(
            search.build(points, radii).unwrap_err(),
            &want,
            &format!("case {k}"),
        );
    }
    let mut search = MultilevelSearch::new(Primes::Teschner);
    search.build(&points, &[one; 4]).unwrap();
    let mut out = Vec::new();
    let bad = [T::from_f64(0.0), T::from_f64(f64::NAN), T::from_f64(0.0)];
    let core = VariableRadiusSearch::<T>::new(RadiusRule::Max);
    assert_same(
        search.query_point(bad, &mut out).unwrap_err(),
        &core.query_point(bad, &mut Vec::new()).unwrap_err(),
        "query",
    );
}

for_both_precisions!(
    non_finite_coordinates,
    invalid_radius,
    span_beyond_the_cell_range,
    invalid_boxes,
    invalid_particles,
);

/// Table sizes and hierarchy depths outside their ranges are refused with InvalidConfig.
#[test]
fn invalid_settings() {
    let is_config = |e: Error| matches!(e, Error::InvalidConfig { .. });
    for size in [
        TableSize::PerPoint(0),
        TableSize::Fixed(0),
        TableSize::Fixed((1 << 30) + 1),
        TableSize::PerPoint(usize::MAX),
    ] {
        assert!(is_config(size.check().unwrap_err()), "{size:?}");
        assert!(is_config(
            XorScheme::with_table_size(1.0f32, Primes::Teschner, size).unwrap_err()
        ));
        let mut xor = XorScheme::new(1.0f64, Primes::Teschner).unwrap();
        assert!(is_config(xor.set_table_size(size).unwrap_err()));
        assert_eq!(xor.table_size(), TableSize::PerPoint(2));
        assert!(is_config(
            PoucholScheme::with_config(1.0f64, Primes::Teschner, size, Levels::Auto).unwrap_err()
        ));
        let mut multilevel = MultilevelSearch::<f32>::new(Primes::Mueller);
        assert!(is_config(multilevel.set_table_size(size).unwrap_err()));
    }
    let levels = Levels::Fixed(hhg_xor::MAX_LEVELS + 1);
    assert!(is_config(
        PoucholScheme::with_config(1.0f32, Primes::Teschner, TableSize::default(), levels)
            .unwrap_err()
    ));
    let mut pouchol = PoucholScheme::new(1.0f32, Primes::Teschner).unwrap();
    assert!(is_config(pouchol.set_levels(levels).unwrap_err()));
    pouchol
        .set_levels(Levels::Fixed(hhg_xor::MAX_LEVELS))
        .unwrap();
    for buckets in [0, 3, 12, (1 << 30) + 2, 1 << 31] {
        assert!(is_config(
            hhg_xor::XorHash::new(Primes::Teschner, buckets).unwrap_err()
        ));
    }
}
