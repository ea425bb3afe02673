//! proptest strategies of small point scenes for the property-based tests of the workspace's
//! crates: uniform points, duplicates, points on cell borders, pairs exactly one radius
//! apart, large and negative offsets, tight clusters and far outliers, in `f64` (rounded to
//! the precision under test with [`to_real`](crate::to_real)).

use hhg_core::building_blocks::{CELL_MARGIN, LATTICE_SHIFT};
use proptest::prelude::*;
use proptest::sample::{Index, select};

/// The radii the scenes are drawn with: dyadic values (on which ties at exactly `r` are
/// exact) and 0.1, which no binary precision holds exactly.
pub const RADII: [f64; 6] = [0.1, 0.25, 0.5, 1.0, 1.5, 4.0];

/// A point scene in `f64`, rounded to the precision under test by [`to_real`](crate::to_real).
#[derive(Clone, Debug)]
pub struct Cloud {
    /// The search radius.
    pub radius: f64,
    /// The points.
    pub points: Vec<[f64; 3]>,
}

/// Offsets of whole scenes: the origin, about ±1e6 (exact in `f32`) and, when `big`,
/// about ±1e15 (where the spacing of `f64` is 1/8).
pub fn offset(big: bool) -> BoxedStrategy<[f64; 3]> {
    let mut values = vec![0.0, 0.0, 1.0e6, -1.0e6, -3.5];
    if big {
        values.extend([1.0e15, -1.0e15]);
    }
    prop::array::uniform3(select(values)).boxed()
}

/// One piece of a scene, in `f64`, around `offset`, for radius `r`.
pub fn piece(r: f64, offset: [f64; 3]) -> BoxedStrategy<Vec<[f64; 3]>> {
    let edge = r * (1.0 + CELL_MARGIN);
    let uniform = (
        select(vec![1.0, 3.0, 10.0]),
        prop::collection::vec(prop::array::uniform3(-1.0..1.0f64), 0..80),
    )
        .prop_map(move |(extent, points)| {
            points
                .into_iter()
                .map(|p| std::array::from_fn(|a| offset[a] + p[a] * extent * r))
                .collect()
        });
    // Points exactly where cells start (x and y), z anywhere nearby: the lattice is absolute,
    // so the cell indices are counted from the offset's own cell.
    let borders =
        prop::collection::vec((-6i64..6, -6i64..6, -3.0..3.0f64), 0..40).prop_map(move |cells| {
            let base = offset.map(|o| (o / edge).round());
            let border = |axis: usize, k: i64| (base[axis] + k as f64 + LATTICE_SHIFT) * edge;
            cells
                .into_iter()
                .map(|(i, j, z)| [border(0, i), border(1, j), offset[2] + z * r])
                .collect()
        });
    // Pairs `r` apart along one axis: multiples of 1/8 around the offset and the dyadic radii
    // are exact in both precisions at these magnitudes, so the distance is exactly `r`.
    let ties = prop::collection::vec(
        (prop::array::uniform3(-64i64..64), 0usize..3, any::<bool>()),
        0..20,
    )
    .prop_map(move |ties| {
        let mut points = Vec::new();
        for (k, axis, down) in ties {
            let p: [f64; 3] = std::array::from_fn(|a| offset[a] + k[a] as f64 / 8.0);
            let mut q = p;
            q[axis] += if down { -r } else { r };
            points.push(p);
            points.push(q);
        }
        points
    });
    let cluster = (
        prop::array::uniform3(-3.0..3.0f64),
        select(vec![1e-3, 1e-2, 0.2]),
        prop::collection::vec(prop::array::uniform3(-1.0..1.0f64), 0..60),
    )
        .prop_map(move |(centre, sigma, points)| {
            points
                .into_iter()
                .map(|p| std::array::from_fn(|a| offset[a] + (centre[a] + sigma * p[a]) * r))
                .collect()
        });
    // A far outlier: the grid's span grows to millions of cells and its table hashes.
    let outlier = (
        prop::array::uniform3(-1.0..1.0f64),
        select(vec![1e3, 1e5, 1e7]),
    )
        .prop_map(move |(direction, distance)| {
            vec![std::array::from_fn(|a| {
                offset[a] + direction[a] * distance * r
            })]
        });
    prop_oneof![4 => uniform, 4 => borders, 4 => ties, 4 => cluster, 1 => outlier].boxed()
}

/// The points of a scene for radius `r` around `offset`: a few pieces, then duplicates of
/// some of their points.
pub fn points(r: f64, offset: [f64; 3]) -> BoxedStrategy<Vec<[f64; 3]>> {
    (
        prop::collection::vec(piece(r, offset), 0..7),
        prop::collection::vec(any::<Index>(), 0..20),
    )
        .prop_map(|(pieces, duplicates)| {
            let mut points: Vec<[f64; 3]> = pieces.into_iter().flatten().collect();
            if !points.is_empty() {
                for d in duplicates {
                    points.push(points[d.index(points.len())]);
                }
            }
            points
        })
        .boxed()
}

/// A scene: a radius of [`RADII`], an offset and its points.
pub fn cloud(big: bool) -> impl Strategy<Value = Cloud> {
    (select(RADII.to_vec()), offset(big)).prop_flat_map(|(radius, offset)| {
        points(radius, offset).prop_map(move |points| Cloud { radius, points })
    })
}

/// Two scenes with one radius around one offset.
pub fn two_clouds(big: bool) -> impl Strategy<Value = (Cloud, Cloud)> {
    (select(RADII.to_vec()), offset(big)).prop_flat_map(|(radius, offset)| {
        (points(radius, offset), points(radius, offset))
            .prop_map(move |(a, b)| (Cloud { radius, points: a }, Cloud { radius, points: b }))
    })
}

/// The configuration of a property test: `cases` cases, or as many as the `PROPTEST_CASES`
/// environment variable asks for (proptest's own variable, for a longer run by hand).
pub fn config(cases: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    config
}
