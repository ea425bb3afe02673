//! Triclinic periodic cells with every image against a brute-force oracle over all shifts:
//! seeded skewed cells, cells narrower than the cutoff, points far outside the cell, mixed
//! periodic and open axes, half and full lists, thread counts, pairs at exactly the cutoff,
//! and the errors for bad cells.

use hhg_core::Error;
use hhg_core::periodic::PeriodicPair;
use hhg_core::triclinic::{
    AllImagesSearch, ImagePairColumns, ImagePairList, PairOrder, PairSet, TriclinicBox,
};
use hhg_testkit::{SplitMix64, TestReal, for_both_precisions, in_pool, oracle_all_images_pairs};

/// One search's output: pairs, distances and vectors, widened to `f64` bits.
type Output = (Vec<PeriodicPair>, Vec<u64>, Vec<[u64; 3]>);

fn run<T: TestReal>(points: &[[T; 3]], cutoff: T, cell: TriclinicBox<T>, set: PairSet) -> Output {
    let mut search = AllImagesSearch::new(cutoff, cell).unwrap();
    search.build(points).unwrap();
    let mut out = ImagePairList::default();
    search.pairs(set, &mut out).unwrap();
    assert_eq!(out.distances().len(), out.len());
    assert_eq!(out.vectors().len(), out.len());
    (
        out.pairs().to_vec(),
        out.distances().iter().map(|d| d.bits()).collect(),
        out.vectors().iter().map(|v| v.map(|c| c.bits())).collect(),
    )
}

/// Compares both lists (half and full) with the oracle, bit for bit, on 1 and 2 threads.
fn check<T: TestReal>(name: &str, points: &[[T; 3]], cutoff: T, cell: TriclinicBox<T>) -> usize {
    let vectors = cell.vectors.map(|row| row.map(T::to_f64));
    let mut pairs_found = 0;
    for set in [PairSet::Half, PairSet::Full] {
        let expected = oracle_all_images_pairs(
            points,
            cutoff.to_f64(),
            vectors,
            cell.periodic,
            set == PairSet::Full,
        );
        let want: Output = (
            expected.iter().map(|&(p, _)| p).collect(),
            expected
                .iter()
                .map(|(_, d)| {
                    let d2 = (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2];
                    T::from_f64(d2.sqrt()).bits()
                })
                .collect(),
            expected
                .iter()
                .map(|(_, d)| d.map(|c| T::from_f64(c).bits()))
                .collect(),
        );
        let one = in_pool(1, || run(points, cutoff, cell, set));
        let two = in_pool(2, || run(points, cutoff, cell, set));
        let what = format!("{name} ({}, {set:?})", T::NAME);
        if one.0 != want.0 {
            let missing: Vec<_> = want
                .0
                .iter()
                .filter(|p| !one.0.contains(p))
                .take(5)
                .collect();
            let extra: Vec<_> = one
                .0
                .iter()
                .filter(|p| !want.0.contains(p))
                .take(5)
                .collect();
            panic!(
                "{what}: {} pairs found, {} expected; missing {missing:?}, extra {extra:?}",
                one.0.len(),
                want.0.len()
            );
        }
        assert!(
            one == want,
            "{what}: distances or vectors differ from the oracle"
        );
        assert!(one == two, "{what}: 1 and 2 threads differ");
        // The grid's order, without distances and vectors (most pairs then decided by the
        // grid's own distance): the same pairs once sorted, the same order on any threads.
        let found_one = in_pool(1, || run_found(points, cutoff, cell, set));
        let found_two = in_pool(2, || run_found(points, cutoff, cell, set));
        assert!(
            found_one == found_two,
            "{what}: found order differs on 1 and 2 threads"
        );
        let mut sorted = found_one.clone();
        sorted.sort_unstable();
        assert!(sorted == want.0, "{what}: found order holds other pairs");
        if set == PairSet::Full {
            // A full list in the grid's order: the half list, then its mirrors.
            let half = found_one.len() / 2;
            for (pair, mirror) in found_one[..half].iter().zip(&found_one[half..]) {
                assert_eq!(
                    (mirror.i, mirror.j, mirror.shift),
                    (pair.j, pair.i, pair.shift.map(|s| -s)),
                    "{what}: the second half mirrors the first"
                );
            }
        }
        // The same pairs as columns (`u64` and `u32` indices, 32-bit shifts), in both
        // orders, on 1 and 2 threads: sorted with the oracle's distances and vectors, in the
        // grid's order without them.
        for threads in [1, 2] {
            let sorted = in_pool(threads, || {
                run_columns::<T, u64>(points, cutoff, cell, set, true)
            });
            assert!(
                sorted.0 == want.0,
                "{what}: sorted columns differ from the oracle"
            );
            assert!(
                (&sorted.1, &sorted.2) == (&want.1, &want.2),
                "{what}: the columns' distances or vectors differ from the oracle"
            );
            let found = in_pool(threads, || {
                run_columns::<T, u32>(points, cutoff, cell, set, false)
            });
            assert!(
                found.0 == found_one,
                "{what}: found columns differ from the found pairs"
            );
            assert!(found.1.is_empty() && found.2.is_empty());
        }
        // The grid's order with distances and vectors, as `PeriodicPair`s and as columns of
        // the indices alone (what `quantities="ijdD"` asks): the oracle's pairs, distances
        // and vectors once sorted, and the same values in the same order both ways.
        for threads in [1, 2] {
            let (found, columns) =
                in_pool(threads, || run_found_with_values(points, cutoff, cell, set));
            let mut sorted_found: Vec<(PeriodicPair, u64, [u64; 3])> = found
                .0
                .iter()
                .zip(&found.1)
                .zip(&found.2)
                .map(|((&p, &d), &v)| (p, d, v))
                .collect();
            sorted_found.sort_unstable_by_key(|&(p, _, _)| p);
            let sorted_want: Vec<(PeriodicPair, u64, [u64; 3])> = want
                .0
                .iter()
                .zip(&want.1)
                .zip(&want.2)
                .map(|((&p, &d), &v)| (p, d, v))
                .collect();
            assert!(
                sorted_found == sorted_want,
                "{what}: the grid's order with distances and vectors differs from the oracle"
            );
            let found_indices: Vec<[u32; 2]> = found.0.iter().map(|p| [p.i, p.j]).collect();
            assert!(
                columns.0 == found_indices && columns.1 == found.1 && columns.2 == found.2,
                "{what}: index columns with distances and vectors differ from the pairs"
            );
        }
        pairs_found = one.0.len();
    }
    pairs_found
}

/// Index columns without shifts, with the distances and vectors of the same call (as bits).
type IndexColumns = (Vec<[u32; 2]>, Vec<u64>, Vec<[u64; 3]>);

/// The pairs in the grid's order with distances and vectors, as `PeriodicPair`s, and then as
/// `u64` index columns without shifts (with the distances and vectors of that call).
fn run_found_with_values<T: TestReal>(
    points: &[[T; 3]],
    cutoff: T,
    cell: TriclinicBox<T>,
    set: PairSet,
) -> (Output, IndexColumns) {
    let mut search = AllImagesSearch::new(cutoff, cell).unwrap();
    search.build(points).unwrap();
    let mut out = ImagePairList::default();
    out.set_order(PairOrder::Found);
    search.pairs(set, &mut out).unwrap();
    let values = |out: &ImagePairList<T>| -> (Vec<u64>, Vec<[u64; 3]>) {
        (
            out.distances().iter().map(|d| d.bits()).collect(),
            out.vectors().iter().map(|v| v.map(|c| c.bits())).collect(),
        )
    };
    let (distances, vectors) = values(&out);
    let pairs = (out.pairs().to_vec(), distances, vectors);
    let mut columns = ImagePairColumns::<u64>::new(true, false);
    search.pair_columns(set, &mut out, &mut columns).unwrap();
    assert!(columns.shifts().is_empty());
    let indices = columns
        .i()
        .iter()
        .zip(columns.j())
        .map(|(&i, &j)| [u32::try_from(i).unwrap(), u32::try_from(j).unwrap()])
        .collect();
    let (distances, vectors) = values(&out);
    (pairs, (indices, distances, vectors))
}

/// The pairs as columns (index type `I`), rebuilt into pairs, with the list's distances and
/// vectors: sorted with distances and vectors when `sorted`, else in the grid's order
/// without them. Also checks that columns asked for alone are the same columns.
fn run_columns<T: TestReal, I: hhg_core::PairIndex + Into<u64>>(
    points: &[[T; 3]],
    cutoff: T,
    cell: TriclinicBox<T>,
    set: PairSet,
    sorted: bool,
) -> Output {
    let mut search = AllImagesSearch::new(cutoff, cell).unwrap();
    search.build(points).unwrap();
    let mut out = ImagePairList::default();
    out.set_order(if sorted {
        PairOrder::Sorted
    } else {
        PairOrder::Found
    });
    out.set_distances(sorted);
    out.set_vectors(sorted);
    let mut columns = ImagePairColumns::<I>::new(true, true);
    search.pair_columns(set, &mut out, &mut columns).unwrap();
    assert!(
        out.pairs().is_empty(),
        "columns leave the list's pairs empty"
    );
    let count = columns.i().len();
    assert_eq!((columns.j().len(), columns.shifts().len()), (count, count));
    let pairs: Vec<PeriodicPair> = (0..count)
        .map(|e| PeriodicPair {
            i: u32::try_from(columns.i()[e].into()).unwrap(),
            j: u32::try_from(columns.j()[e].into()).unwrap(),
            shift: columns.shifts()[e].map(i64::from),
        })
        .collect();
    // Each column alone is the same column; a repeated call refills the columns.
    let mut indices_only = ImagePairColumns::<I>::new(true, false);
    search
        .pair_columns(set, &mut out, &mut indices_only)
        .unwrap();
    search
        .pair_columns(set, &mut out, &mut indices_only)
        .unwrap();
    assert!(indices_only.shifts().is_empty());
    let same = |a: &[I], b: &[I]| a.iter().map(|&v| v.into()).eq(b.iter().map(|&v| v.into()));
    assert!(same(indices_only.i(), columns.i()) && same(indices_only.j(), columns.j()));
    let mut shifts_only = ImagePairColumns::<I>::new(false, true);
    search
        .pair_columns(set, &mut out, &mut shifts_only)
        .unwrap();
    assert!(shifts_only.i().is_empty() && shifts_only.j().is_empty());
    assert_eq!(shifts_only.shifts(), columns.shifts());
    (
        pairs,
        out.distances().iter().map(|d| d.bits()).collect(),
        out.vectors().iter().map(|v| v.map(|c| c.bits())).collect(),
    )
}

/// The pairs in the grid's order, without distances and vectors.
fn run_found<T: TestReal>(
    points: &[[T; 3]],
    cutoff: T,
    cell: TriclinicBox<T>,
    set: PairSet,
) -> Vec<PeriodicPair> {
    let mut search = AllImagesSearch::new(cutoff, cell).unwrap();
    search.build(points).unwrap();
    let mut out = ImagePairList::default();
    out.set_order(PairOrder::Found);
    out.set_distances(false);
    out.set_vectors(false);
    search.pairs(set, &mut out).unwrap();
    assert!(out.distances().is_empty() && out.vectors().is_empty());
    out.pairs().to_vec()
}

/// A random cell: a diagonal of lengths in `lo..hi` and off-diagonal entries up to `skew`
/// times the lengths (lower triangular, as simulation codes write them, then rotated by a
/// random permutation of the coordinates so that every entry can be nonzero).
fn random_cell(rng: &mut SplitMix64, lo: f64, hi: f64, skew: f64) -> [[f64; 3]; 3] {
    let l: [f64; 3] = std::array::from_fn(|_| rng.range(lo, hi));
    let mut m = [[0.0; 3]; 3];
    for r in 0..3 {
        m[r][r] = l[r];
        for c in 0..r {
            m[r][c] = rng.range(-skew, skew) * l[c];
        }
    }
    // Mix the coordinates with a random rotation about z, so that the rows are not
    // triangular.
    let angle = rng.range(0.0, std::f64::consts::TAU);
    let (s, c) = angle.sin_cos();
    m.map(|row| [c * row[0] - s * row[1], s * row[0] + c * row[1], row[2]])
}

/// `n` points: inside the cell, or (with `spread`) moved by up to `spread` cell vectors
/// either way along periodic axes.
fn points_in<T: TestReal>(
    rng: &mut SplitMix64,
    cell: [[f64; 3]; 3],
    periodic: [bool; 3],
    n: usize,
    spread: f64,
) -> Vec<[T; 3]> {
    (0..n)
        .map(|_| {
            let f: [f64; 3] = std::array::from_fn(|k| {
                let inside = rng.uniform();
                if periodic[k] && spread > 0.0 {
                    inside + (rng.range(-spread, spread)).round()
                } else {
                    inside
                }
            });
            let open = [
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            ];
            std::array::from_fn(|c| {
                let mut x = (f[0] * cell[0][c] + f[1] * cell[1][c]) + f[2] * cell[2][c];
                for k in 0..3 {
                    if !periodic[k] {
                        // Open axes: coordinates spread along the axis's coordinate.
                        x += if k == c { open[k] } else { 0.0 };
                    }
                }
                T::from_f64(x)
            })
        })
        .collect()
}

fn to_t<T: TestReal>(m: [[f64; 3]; 3]) -> [[T; 3]; 3] {
    m.map(|row| row.map(T::from_f64))
}

fn skewed_cells<T: TestReal>() {
    let mut rng = SplitMix64::new(0x7121_0001);
    for case in 0..6 {
        let skew = if case < 3 { 0.3 } else { 1.5 };
        let cell = random_cell(&mut rng, 4.0, 7.0, skew);
        let points = points_in::<T>(&mut rng, cell, [true; 3], 60, 0.0);
        let cutoff = T::from_f64(rng.range(1.0, 2.5));
        let found = check(
            &format!("skewed cell {case}"),
            &points,
            cutoff,
            TriclinicBox::new(to_t(cell)),
        );
        assert!(found > 0, "skewed cell {case}: no pair");
    }
}

fn small_cells<T: TestReal>() {
    let mut rng = SplitMix64::new(0x7121_0002);
    for case in 0..4 {
        let cell = random_cell(&mut rng, 1.0, 1.6, if case % 2 == 0 { 0.2 } else { 1.0 });
        let width = TriclinicBox::new(cell)
            .widths()
            .unwrap()
            .into_iter()
            .fold(f64::INFINITY, f64::min);
        // The cutoff is 1.5 to 3 times the narrowest width: several images of each pair.
        let cutoff = T::from_f64(width * rng.range(1.5, 3.0));
        let points = points_in::<T>(&mut rng, cell, [true; 3], 8, 0.0);
        let found = check(
            &format!("small cell {case}"),
            &points,
            cutoff,
            TriclinicBox::new(to_t(cell)),
        );
        assert!(found > 0);
    }
    // One point alone sees its own images.
    let cell = [[1.0, 0.0, 0.0], [0.3, 1.2, 0.0], [-0.2, 0.4, 1.1]];
    let found = check(
        "one point",
        &[[T::from_f64(0.1); 3]],
        T::from_f64(2.5),
        TriclinicBox::new(to_t(cell)),
    );
    assert!(found > 10);
}

fn points_outside<T: TestReal>() {
    let mut rng = SplitMix64::new(0x7121_0003);
    for (case, spread) in [3.0, 1e3, 1e5].into_iter().enumerate() {
        let cell = random_cell(&mut rng, 3.0, 5.0, 0.6);
        let points = points_in::<T>(&mut rng, cell, [true; 3], 40, spread);
        let found = check(
            &format!("points outside by up to {spread} cells"),
            &points,
            T::from_f64(1.8),
            TriclinicBox::new(to_t(cell)),
        );
        assert!(found > 0, "case {case}: no pair");
    }
}

/// The periodic defect the fuzzing found (a box below the resolution of the coordinates)
/// checked for triclinic cells: `f32` points near 1e15 (a spacing of 2^26) in a cell 2500
/// wide. The wrap and every pair's vector are computed in `f64` from the caller's
/// coordinates, so a point is its own image only at the cell's shifts, 2500 or more away,
/// and points 2^26 apart meet only at the shifts that bring them within the cutoff: the
/// search gives exactly the brute force's pairs, distances and vectors, with no self pair at
/// distance 0.
#[test]
fn a_cell_below_the_coordinates_resolution_matches_brute_force() {
    let step = 67_108_864.0f32; // 2^26, the spacing of f32 at 1e15.
    let points: Vec<[f32; 3]> = (0..12)
        .map(|k| {
            let k = k as f32;
            [
                1e15 + step * k,
                1e15 - 2.0 * step * k,
                -1e15 + 3.0 * step * k,
            ]
        })
        .collect();
    let cell = TriclinicBox::new([[2500.0, 0.0, 0.0], [0.0, 2500.0, 0.0], [300.0, 0.0, 2500.0]]);
    check(
        "f32 points near 1e15 in a cell of 2500, cutoff 1",
        &points,
        1.0f32,
        cell,
    );
    let found = check(
        "f32 points near 1e15 in a cell of 2500, cutoff 2600",
        &points,
        2600.0f32,
        cell,
    );
    assert!(
        found >= 2 * points.len(),
        "every point meets its own images"
    );
}

fn mixed_periodic<T: TestReal>() {
    let mut rng = SplitMix64::new(0x7121_0004);
    for periodic in [
        [true, false, true],
        [false, true, false],
        [false, false, false],
        [true, true, false],
    ] {
        let mut cell = random_cell(&mut rng, 2.0, 3.0, 0.8);
        // Rows of open axes are not used: zero them.
        for k in 0..3 {
            if !periodic[k] {
                cell[k] = [0.0; 3];
            }
        }
        let points = points_in::<T>(&mut rng, cell, periodic, 40, 2.0);
        let mut domain = TriclinicBox::new(to_t(cell));
        domain.periodic = periodic;
        check(
            &format!("periodic {periodic:?}"),
            &points,
            T::from_f64(2.2),
            domain,
        );
    }
}

fn orthorhombic<T: TestReal>() {
    // A rectangular cell with a cutoff above half its width: the all-images rule (not the
    // minimum image) against brute force.
    let mut rng = SplitMix64::new(0x7121_0005);
    let cell = [[3.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 5.0]];
    let points = points_in::<T>(&mut rng, cell, [true; 3], 30, 1.0);
    let found = check(
        "orthorhombic",
        &points,
        T::from_f64(2.6),
        TriclinicBox::new(to_t(cell)),
    );
    assert!(found > 0);
}

fn exactly_at_the_cutoff<T: TestReal>() {
    // Points 0.5 apart through the boundary of a cell of width 2 (exact in both precisions):
    // the pair at distance 0.5 counts with cutoff 0.5 and not with the value just below.
    let cell = TriclinicBox::new(to_t::<T>([
        [2.0, 0.0, 0.0],
        [1.0, 2.0, 0.0],
        [0.0, 0.0, 2.0],
    ]));
    let points = [
        [T::from_f64(0.25), T::from_f64(1.0), T::from_f64(1.0)],
        [T::from_f64(1.75), T::from_f64(1.0), T::from_f64(1.0)],
    ];
    let at = run(&points, T::from_f64(0.5), cell, PairSet::Half).0;
    assert_eq!(
        at,
        [PeriodicPair {
            i: 0,
            j: 1,
            shift: [-1, 0, 0]
        }]
    );
    let below = run(&points, T::from_f64(0.5).next_down(), cell, PairSet::Half).0;
    assert!(below.is_empty());
}

fn borderline_pairs<T: TestReal>() {
    // Pairs whose distance is the cutoff to within a few roundings, their second point moved
    // by up to 50 cell vectors: the wrap and the images in `T` round differently from the
    // rule, and the search must still find exactly the pairs the rule accepts.
    let mut rng = SplitMix64::new(0x7121_0006);
    let cell = random_cell(&mut rng, 3.0, 4.0, 0.7);
    let cutoff = 1.3;
    let unit = if size_of::<T>() == 4 { 6e-8 } else { 1.2e-16 };
    let mut points: Vec<[T; 3]> = Vec::new();
    for _ in 0..60 {
        let inside = points_in::<T>(&mut rng, cell, [true; 3], 1, 0.0)[0].map(T::to_f64);
        let direction = [rng.gaussian(), rng.gaussian(), rng.gaussian()];
        let length = (direction[0].powi(2) + direction[1].powi(2) + direction[2].powi(2)).sqrt();
        let distance = cutoff * (1.0 + rng.range(-8.0, 8.0) * unit);
        let k: [f64; 3] = std::array::from_fn(|_| rng.range(-50.0, 50.0).round());
        let other: [f64; 3] = std::array::from_fn(|c| {
            inside[c]
                + direction[c] / length * distance
                + ((k[0] * cell[0][c] + k[1] * cell[1][c]) + k[2] * cell[2][c])
        });
        points.push(inside.map(T::from_f64));
        points.push(other.map(T::from_f64));
    }
    let found = check(
        "borderline pairs",
        &points,
        T::from_f64(cutoff),
        TriclinicBox::new(to_t(cell)),
    );
    assert!(found > 0);
}

/// Points exactly on the faces, edges and corners of skewed and rectangular cells: the
/// origin, the cell vectors and their sums (the far faces, which the wrap takes back to the
/// origin), half-way points, each zero coordinate also as `-0.0`, and random points on a
/// face. Coincident images (a point and its copy on the far face are `0` apart) and pairs
/// whose vector has a zero component, in half and full lists, with cutoffs below and above
/// the cells' widths: the pairs, distances and vectors (the sign of each zero included) are
/// exactly the oracle's.
fn points_on_faces<T: TestReal>() {
    let mut rng = SplitMix64::new(0x7121_0007);
    let cells = [
        [[2.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.25, 0.5, 2.0]],
        [[3.0, 0.0, 0.0], [0.0, 2.5, 0.0], [0.0, 0.0, 2.0]],
        [[2.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [0.5, -0.5, 3.0]],
    ];
    for (case, cell) in cells.into_iter().enumerate() {
        let mut points: Vec<[T; 3]> = Vec::new();
        let fractions = [0.0, 0.5, 1.0];
        for f0 in fractions {
            for f1 in fractions {
                for f2 in fractions {
                    // Dyadic fractions of dyadic cells: every coordinate is exact.
                    let p: [f64; 3] = std::array::from_fn(|c| {
                        (f0 * cell[0][c] + f1 * cell[1][c]) + f2 * cell[2][c]
                    });
                    points.push(p.map(T::from_f64));
                    if p.contains(&0.0) {
                        points.push(p.map(|v| T::from_f64(if v == 0.0 { -0.0 } else { v })));
                    }
                }
            }
        }
        points.push([-0.0, 0.0, -0.0].map(T::from_f64));
        for _ in 0..12 {
            let face = rng.below(3);
            let f: [f64; 3] = std::array::from_fn(|k| {
                if k == face {
                    rng.below(2) as f64
                } else {
                    rng.uniform()
                }
            });
            let p: [f64; 3] = std::array::from_fn(|c| {
                (f[0] * cell[0][c] + f[1] * cell[1][c]) + f[2] * cell[2][c]
            });
            points.push(p.map(T::from_f64));
        }
        let domain = TriclinicBox::new(to_t(cell));
        for cutoff in [0.75, 2.5] {
            let found = check(
                &format!("points on the faces of cell {case}, cutoff {cutoff}"),
                &points,
                T::from_f64(cutoff),
                domain,
            );
            assert!(found > points.len(), "cell {case}: too few pairs");
        }
    }
}

/// The cutoff just below and just above half the narrowest width, in orthorhombic and
/// skewed cells, periodic on all axes or on two, with points inside and outside the cell:
/// below, the build takes the minimum-image shortcut (one-sided ghosts), above it makes every
/// image, and both give the brute force's pairs, distances and vectors.
fn both_sides_of_the_minimum_image_switch<T: TestReal>() {
    let mut rng = SplitMix64::new(0x7121_0009);
    let cells = [
        [[4.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 6.0]],
        random_cell(&mut rng, 4.0, 6.0, 0.4),
        random_cell(&mut rng, 4.0, 6.0, 1.2),
    ];
    for (c, cell) in cells.into_iter().enumerate() {
        for periodic in [[true; 3], [true, false, true]] {
            let domain = TriclinicBox {
                vectors: to_t::<T>(cell),
                periodic,
            };
            let narrowest = domain
                .widths()
                .unwrap()
                .into_iter()
                .zip(periodic)
                .filter(|&(_, p)| p)
                .fold(f64::INFINITY, |m, (w, _)| m.min(w));
            for spread in [0.0, 2.0] {
                let points = points_in::<T>(&mut rng, cell, periodic, 90, spread);
                for factor in [0.95, 0.999, 1.001, 1.05] {
                    let cutoff = T::from_f64(narrowest / 2.0 * factor);
                    let mut search = AllImagesSearch::new(cutoff, domain).unwrap();
                    search.build(&points).unwrap();
                    assert_eq!(
                        search.minimum_image(),
                        factor < 1.0,
                        "cell {c}, {periodic:?}, factor {factor}: the wrong side of the switch"
                    );
                    let found = check(
                        &format!("cell {c}, {periodic:?}, spread {spread}, factor {factor}"),
                        &points,
                        cutoff,
                        domain,
                    );
                    assert!(found > 50, "cell {c}, factor {factor}: only {found} pairs");
                }
            }
        }
    }
}

for_both_precisions!(
    both_sides_of_the_minimum_image_switch,
    borderline_pairs,
    points_on_faces,
    skewed_cells,
    small_cells,
    points_outside,
    mixed_periodic,
    orthorhombic,
    exactly_at_the_cutoff
);

#[test]
fn shifts_refer_to_the_callers_positions() {
    // The same pair moved by whole cell vectors: the shift follows, the vector stays.
    let cell = [[2.0f64, 0.0, 0.0], [0.5, 2.0, 0.0], [0.0, 0.7, 2.0]];
    let domain = TriclinicBox::new(cell);
    let base = [[0.1, 0.1, 0.1], [1.9, 0.2, 0.1]];
    let (pairs, _, vectors) = run(&base, 0.5, domain, PairSet::Half);
    assert_eq!(
        pairs,
        [PeriodicPair {
            i: 0,
            j: 1,
            shift: [-1, 0, 0]
        }]
    );
    let moved = [
        base[0],
        std::array::from_fn(|c| base[1][c] + 3.0 * cell[0][c] - 2.0 * cell[2][c]),
    ];
    let (pairs_moved, _, vectors_moved) = run(&moved, 0.5, domain, PairSet::Half);
    assert_eq!(
        pairs_moved,
        [PeriodicPair {
            i: 0,
            j: 1,
            shift: [-4, 0, 2]
        }]
    );
    for c in 0..3 {
        assert!(
            (f64::from_bits(vectors[0][c]) - f64::from_bits(vectors_moved[0][c])).abs() < 1e-12
        );
    }
}

#[test]
fn bad_cells_and_cutoffs_are_refused() {
    let good = [[2.0f64, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]];
    let new = |cutoff: f64, vectors: [[f64; 3]; 3], periodic: [bool; 3]| {
        AllImagesSearch::new(cutoff, TriclinicBox { vectors, periodic }).map(|_| ())
    };
    assert!(matches!(
        new(0.0, good, [true; 3]),
        Err(Error::InvalidRadius { .. })
    ));
    assert!(matches!(
        new(-1.0, good, [true; 3]),
        Err(Error::InvalidRadius { .. })
    ));
    assert!(matches!(
        new(f64::NAN, good, [true; 3]),
        Err(Error::InvalidRadius { .. })
    ));
    let mut nan = good;
    nan[1][2] = f64::NAN;
    assert!(matches!(
        new(1.0, nan, [true; 3]),
        Err(Error::NonFiniteCellVector {
            row: 1,
            column: 2,
            ..
        })
    ));
    // A singular matrix: the third vector in the plane of the first two.
    let singular = [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0]];
    let error = new(1.0, singular, [true; 3]).unwrap_err();
    assert!(matches!(error, Error::DegenerateCell { .. }), "{error}");
    // The same vectors are fine when the dependent one is open.
    assert!(new(1.0, singular, [true, true, false]).is_ok());
    // A zero periodic vector.
    let mut zero = good;
    zero[0] = [0.0; 3];
    let error = new(1.0, zero, [true, false, false]).unwrap_err();
    assert!(
        matches!(error, Error::DegenerateCell { axis: 0, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("periodic cell vector 0"),
        "{error}"
    );
    assert!(new(1.0, zero, [false, true, true]).is_ok());
    // A cutoff far above the width: too many images for even one point.
    let mut search = AllImagesSearch::new(2000.0, TriclinicBox::new(good)).unwrap();
    let error = search.build(&[[0.5; 3]]).unwrap_err();
    assert!(matches!(error, Error::TooManyImages { .. }), "{error}");
    assert!(error.to_string().contains("narrowest width 2"), "{error}");
    // A point too many cells away for an exact count.
    let mut search = AllImagesSearch::new(1.0, TriclinicBox::new(good)).unwrap();
    search.build(&[[0.5; 3], [1.0, 0.5, 0.5]]).unwrap();
    let mut out = ImagePairList::default();
    search.pairs(PairSet::Full, &mut out).unwrap();
    assert_eq!(out.len(), 2);
    let error = search.build(&[[0.5; 3], [1e300, 0.0, 0.0]]).unwrap_err();
    // A failed build leaves the search empty, and its pairs with it.
    search.pairs(PairSet::Full, &mut out).unwrap();
    assert!(out.is_empty());
    assert!(
        matches!(
            error,
            Error::ImageCountOutOfRange {
                index: 1,
                axis: 0,
                ..
            }
        ),
        "{error}"
    );
    let error = search.build(&[[0.5, f64::INFINITY, 0.0]]).unwrap_err();
    assert!(
        matches!(
            error,
            Error::NonFiniteCoordinate {
                index: 0,
                axis: 1,
                ..
            }
        ),
        "{error}"
    );
    assert!(search.is_empty());
}

/// A shift beyond 32 bits (points `2^32` cells apart) is an error for the columns' 32-bit
/// shifts, naming the pair, and leaves the columns empty; the pairs and the columns without
/// shifts still hold the pair.
#[test]
fn shifts_beyond_32_bits_are_refused_by_the_columns() {
    let cell = TriclinicBox::new([[2.0f64, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]);
    let mut search = AllImagesSearch::new(1.0, cell).unwrap();
    let far = 0.5 + 2.0 * (1u64 << 32) as f64;
    search.build(&[[0.5; 3], [far, 0.5, 0.5]]).unwrap();
    let mut out = ImagePairList::default();
    search.pairs(PairSet::Half, &mut out).unwrap();
    assert_eq!(out.pairs().len(), 1);
    assert_eq!(out.pairs()[0].shift, [-(1i64 << 32), 0, 0]);
    for order in [PairOrder::Found, PairOrder::Sorted] {
        out.set_order(order);
        let mut columns = ImagePairColumns::<u64>::new(true, true);
        // Filled by an earlier call: a failed call leaves the columns empty.
        search
            .pair_columns(
                PairSet::Half,
                &mut out,
                &mut ImagePairColumns::<u64>::new(true, false),
            )
            .unwrap();
        let error = search
            .pair_columns(PairSet::Full, &mut out, &mut columns)
            .unwrap_err();
        assert!(
            matches!(error, Error::ShiftOutOfRange { i: 0, j: 1, shift } if shift[0] == -(1i64 << 32)),
            "{order:?}: {error}"
        );
        assert!(
            error.to_string().contains("does not fit in 32 bits"),
            "{error}"
        );
        assert!(columns.i().is_empty() && columns.shifts().is_empty());
        assert!(out.distances().is_empty());
        let mut indices = ImagePairColumns::<u64>::new(true, false);
        search
            .pair_columns(PairSet::Full, &mut out, &mut indices)
            .unwrap();
        assert_eq!((indices.i(), indices.j()), (&[0u64, 1][..], &[1u64, 0][..]));
    }
}
