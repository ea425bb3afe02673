//! Bad input and bad settings: the group scheme refuses exactly what hhg-core's scheme
//! refuses, with the same typed errors, and names the offending setting.

use hhg_core::{CoreScheme, Error, FixedRadiusScheme, Kernel};
use hhg_group::{GroupConfig, GroupScheme};
use hhg_testkit::{SplitMix64, TestReal, for_both_precisions, to_real, uniform_box};

/// The errors of both schemes for the same radius and points (`Ok` when both accept).
fn both<T: TestReal>(radius: T, points: &[[T; 3]]) -> (Result<(), Error>, Result<(), Error>) {
    let core = CoreScheme::new(radius).and_then(|mut s| s.build(points));
    let group = GroupScheme::new(radius).and_then(|mut s| s.build(points));
    (core, group)
}

/// NaN and infinite coordinates, bad radii and too wide spans, as hhg-core reports them.
fn same_errors_as_core<T: TestReal>() {
    let mut rng = SplitMix64::new(31);
    let good: Vec<[T; 3]> = to_real(&uniform_box(&mut rng, 40, [-2.0; 3], [2.0; 3]));
    let one = T::from_f64(1.0);
    for index in [0, 9, 39] {
        for axis in 0..3 {
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                let mut points = good.clone();
                points[index][axis] = T::from_f64(bad);
                let (core, group) = both(one, &points);
                assert!(
                    matches!(group, Err(Error::NonFiniteCoordinate { index: i, axis: a, .. }) if i == index && a == axis),
                    "{group:?}"
                );
                assert_eq!(format!("{core:?}"), format!("{group:?}"));
            }
        }
    }
    for radius in [
        0.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e-200,
        1e200,
    ] {
        let (core, group) = both(T::from_f64(radius), &good);
        assert!(
            matches!(group, Err(Error::InvalidRadius { .. })),
            "radius {radius}: {group:?}"
        );
        assert_eq!(format!("{core:?}"), format!("{group:?}"), "radius {radius}");
    }
    // Radii at the edges of the precision: refused, or too small for the span, as in core.
    for radius in [1e-30, 1e-19, 1e-18, 1e19, 1e30] {
        let (core, group) = both(T::from_f64(radius), &good);
        assert_eq!(format!("{core:?}"), format!("{group:?}"), "radius {radius}");
    }
    // A span of more cells than the integer cell index holds.
    let wide = vec![
        [T::from_f64(0.0); 3],
        [T::from_f64(1e30), T::from_f64(0.0), T::from_f64(0.0)],
    ];
    let (core, group) = both(T::from_f64(1e-3), &wide);
    assert!(
        matches!(group, Err(Error::CoordinateOutOfRange { axis: 0, .. })),
        "{group:?}"
    );
    assert_eq!(core, group);
    // Large but accepted spans work.
    let (core, group) = both(
        T::from_f64(1.0),
        &[[T::from_f64(-1e8); 3], [T::from_f64(1e8); 3]],
    );
    assert!(core.is_ok() && group.is_ok(), "{core:?} {group:?}");
}

/// A failed build leaves a usable scheme: the next good build answers correctly.
fn recovers_after_errors<T: TestReal>() {
    let mut scheme = GroupScheme::new(T::from_f64(1.0)).unwrap();
    let good = [
        [T::from_f64(0.0); 3],
        [T::from_f64(0.5), T::from_f64(0.0), T::from_f64(0.0)],
    ];
    scheme.build(&good).unwrap();
    let bad = [[T::from_f64(f64::NAN); 3]];
    assert!(scheme.build(&bad).is_err());
    scheme.build(&good).unwrap();
    let mut pairs = hhg_core::PairList::default();
    scheme.pairs(&mut pairs).unwrap();
    assert_eq!(pairs.pairs(), [[0, 1]]);
}

/// Non-finite query points are refused, built or not.
fn bad_queries<T: TestReal>() {
    let mut scheme = GroupScheme::new(T::from_f64(1.0)).unwrap();
    let mut out = vec![7];
    for built in [false, true] {
        if built {
            scheme.build(&[[T::from_f64(0.0); 3]]).unwrap();
        }
        for axis in 0..3 {
            let mut q = [T::from_f64(0.0); 3];
            q[axis] = T::from_f64(f64::NAN);
            let result = scheme.query_point(q, &mut out);
            assert!(
                matches!(result, Err(Error::NonFiniteCoordinate { index: 0, axis: a, .. }) if a == axis),
                "{result:?}"
            );
        }
        scheme.query_point([T::from_f64(0.0); 3], &mut out).unwrap();
        assert_eq!(out, if built { vec![0] } else { vec![] });
    }
}

/// Settings outside their ranges are refused by name; the edges of the ranges are accepted.
fn bad_settings<T: TestReal>() {
    let config = |candidates, bucket_fraction| GroupConfig {
        candidates,
        bucket_fraction,
        kernel: Kernel::Simd,
    };
    let radius = T::from_f64(1.0);
    for candidates in [0, 5, 100] {
        let result = GroupScheme::with_config(radius, config(candidates, 0.2));
        match result {
            Err(Error::InvalidConfig { name, value, .. }) => {
                assert_eq!(name, "candidates");
                assert_eq!(value, candidates as f64);
            }
            other => panic!("candidates {candidates}: {other:?}"),
        }
    }
    for fraction in [0.0, -0.2, f64::NAN, f64::INFINITY, 16.5, 1e300] {
        let result = GroupScheme::with_config(radius, config(3, fraction));
        match result {
            Err(error @ Error::InvalidConfig { name, .. }) => {
                assert_eq!(name, "bucket_fraction");
                assert!(error.to_string().contains("bucket_fraction"), "{error}");
            }
            other => panic!("fraction {fraction}: {other:?}"),
        }
    }
    for (candidates, fraction) in [(1, 16.0), (4, 1e-12), (2, 0.2)] {
        let mut scheme = GroupScheme::with_config(radius, config(candidates, fraction)).unwrap();
        scheme
            .build(&[[T::from_f64(0.0); 3], [T::from_f64(0.25); 3]])
            .unwrap();
        assert_eq!(
            scheme.stats().buckets,
            config(candidates, fraction).buckets_for(2) as usize
        );
    }
    // A bad radius is reported before bad settings, as the constructor checks it first.
    assert!(matches!(
        GroupScheme::with_config(T::from_f64(-1.0), config(0, 0.0)),
        Err(Error::InvalidRadius { .. })
    ));
}

for_both_precisions!(
    same_errors_as_core,
    recovers_after_errors,
    bad_queries,
    bad_settings
);
