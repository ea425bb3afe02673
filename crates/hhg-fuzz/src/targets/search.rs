//! The search on arbitrary bytes as coordinates: `Grid` (lists and pairs) and
//! `PeriodicSearch` (minimum-image pairs), in `f32` and `f64`, with the SIMD and the scalar
//! kernel, compared with the brute-force oracles of `hhg-testkit`.

use hhg_core::periodic::{PeriodicBox, PeriodicPairList, PeriodicSearch};
use hhg_core::{Error, Grid, Kernel, NeighborLists, PairList, Real};
use hhg_testkit::{check_lists, oracle_pairs, oracle_periodic_pairs, oracle_self};

use crate::input::Input;

/// The most points of one case: enough for every cell pattern, few enough for brute force.
const MAX_POINTS: usize = 40;

/// Offsets the lattice points sit at: the origin, moderate and large magnitudes where the
/// coordinates' spacing approaches and passes the radius, and near the largest `f32`.
const OFFSETS: [f64; 8] = [0.0, 1e3, -7.5e5, 1e7, -3e9, 1e15, 1e30, 3e38];

/// A coordinate type the bytes can spell any value of.
trait FuzzReal: Real {
    /// The next bytes as the bits of a value.
    fn from_bits(input: &mut Input<'_>) -> Self;
}

impl FuzzReal for f32 {
    fn from_bits(input: &mut Input<'_>) -> Self {
        input.f32_bits()
    }
}

impl FuzzReal for f64 {
    fn from_bits(input: &mut Input<'_>) -> Self {
        input.f64_bits()
    }
}

/// The first byte chooses the precision (bit 0), the kernel (bit 1), the raw radius (bit 2)
/// and the periodic search (bit 3); the rest spells the radius, the points and the box.
pub fn search_coordinates(data: &[u8]) {
    let mut input = Input::new(data);
    let mode = input.u8();
    if mode & 1 == 0 {
        search::<f32>(&mut input, mode);
    } else {
        search::<f64>(&mut input, mode);
    }
}

/// A value spelled by the input: a small multiple of `unit` at one of the [`OFFSETS`], or
/// (one time in eight) raw bits.
fn value<T: FuzzReal>(input: &mut Input<'_>, unit: f64, offset: f64) -> T {
    let choice = input.u8();
    if choice < 32 {
        T::from_bits(input)
    } else {
        let steps = f64::from(input.u8() as i8);
        T::from_f64(offset + steps * unit)
    }
}

fn search<T: FuzzReal>(input: &mut Input<'_>, mode: u8) {
    let kernel = if mode & 2 == 0 {
        Kernel::Simd
    } else {
        Kernel::Scalar
    };
    let radius = if mode & 4 == 0 {
        T::from_f64(0.25 + f64::from(input.u8()) / 32.0)
    } else {
        T::from_bits(input)
    };
    let offset = OFFSETS[input.below(OFFSETS.len())];
    let unit = radius.to_f64().abs() * 0.25;
    let n = input.below(MAX_POINTS + 1);
    let points: Vec<[T; 3]> = (0..n)
        .map(|_| std::array::from_fn(|_| value(input, unit, offset)))
        .collect();
    let non_finite = points.iter().flatten().any(|c| !c.is_finite());
    if mode & 8 == 0 {
        grid_case(&points, radius, kernel, non_finite);
    } else {
        let origin = std::array::from_fn(|_| value(input, unit, offset));
        let lengths = std::array::from_fn(|_| {
            if input.u8() < 32 {
                T::from_bits(input)
            } else {
                T::from_f64(f64::from(input.u8()) * unit)
            }
        });
        let flags = input.u8();
        let domain = PeriodicBox {
            origin,
            lengths,
            periodic: std::array::from_fn(|a| flags & (1 << a) != 0),
        };
        periodic_case(&points, radius, domain, kernel, non_finite);
    }
}

/// Checks that a refused point set was refused for a documented reason.
fn check_refusal(error: &Error, non_finite: bool, what: &str) {
    match error {
        Error::NonFiniteCoordinate { .. } => {
            assert!(non_finite, "{what}: a finite point set refused as {error}")
        }
        Error::CoordinateOutOfRange { .. } | Error::ImageCountOutOfRange { .. } => {
            assert!(!non_finite, "{what}: a non-finite point missed ({error})")
        }
        other => panic!("{what}: unexpected refusal {other}"),
    }
}

fn grid_case<T: FuzzReal>(points: &[[T; 3]], radius: T, kernel: Kernel, non_finite: bool) {
    let Ok(mut grid) = Grid::new(radius) else {
        return;
    };
    grid.set_kernel(kernel);
    if let Err(error) = grid.build(points) {
        check_refusal(&error, non_finite, "grid build");
        return;
    }
    assert!(!non_finite, "a grid built over a non-finite point");
    let mut lists = NeighborLists::default();
    grid.neighbor_lists(&mut lists).expect("small lists");
    check_lists("fuzzed lists", &lists, &oracle_self(points, radius));
    let mut pairs = PairList::default();
    grid.pairs(&mut pairs).expect("few pairs");
    let mut got = pairs.pairs().to_vec();
    got.sort_unstable();
    assert_eq!(got, oracle_pairs(points, radius), "fuzzed pairs");
}

fn periodic_case<T: FuzzReal>(
    points: &[[T; 3]],
    radius: T,
    domain: PeriodicBox<T>,
    kernel: Kernel,
    non_finite: bool,
) {
    let Ok(mut search) = PeriodicSearch::new(radius, domain) else {
        return;
    };
    search.set_kernel(kernel);
    if let Err(error) = search.build(points) {
        check_refusal(&error, non_finite, "periodic build");
        return;
    }
    assert!(
        !non_finite,
        "a periodic search built over a non-finite point"
    );
    let mut out = PeriodicPairList::default();
    search.pairs(&mut out).expect("few pairs");
    let mut got = out.pairs().to_vec();
    got.sort_unstable();
    let expected: Vec<_> = oracle_periodic_pairs(points, radius, &domain)
        .into_iter()
        .map(|(pair, _)| pair)
        .collect();
    assert_eq!(
        got, expected,
        "fuzzed periodic pairs, radius {radius:?}, {domain:?}"
    );
}

/// Seeds: a few lattice clouds in each precision, periodic or not, near the origin and far
/// from it.
pub fn search_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for mode in [0u8, 1, 2, 3, 8, 9, 10, 11] {
        for offset in [0u8, 3, 5] {
            let mut seed = vec![mode, 32, offset, 24];
            for k in 0..24u8 {
                for axis in 0..3u8 {
                    seed.extend([200, k.wrapping_mul(7).wrapping_add(axis * 3) % 16]);
                }
            }
            if mode & 8 != 0 {
                seed.extend([200, 0, 200, 0, 200, 0, 200, 40, 200, 40, 200, 40, 7]);
            }
            seeds.push(seed);
        }
    }
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_find_pairs() {
        for seed in search_seeds() {
            search_coordinates(&seed);
        }
    }
}
