//! Shared helpers of the workspace's integration tests (a dev-only crate): a seeded PRNG, scene generators, proptest strategies, brute-force oracles and exact checks.
//!
//! The crates' own integration tests (and their examples, for the seeded PRNG) take it as a
//! dev-dependency; nothing here is part of a published API. Every helper is deterministic:
//! the same seed gives the same scene, so a failure can be replayed.

mod checks;
mod oracle;
mod pool;
mod real;
mod rng;
mod scenes;
pub mod strategies;

pub use checks::{
    Csr, assert_same_seq, check_excludes_self, check_list_distances, check_lists,
    check_pair_distances, check_pairs,
};
pub use oracle::{
    oracle_all_images_pairs, oracle_cross, oracle_pairs, oracle_periodic_pairs, oracle_point,
    oracle_self, oracle_sphere_pairs, within,
};
pub use pool::{THREAD_COUNTS, in_pool};
pub use real::TestReal;
pub use rng::SplitMix64;
pub use scenes::{
    Scene, cube_edge, gaussian_clusters, lattice, points_on_cell_borders, shuffle, to_real,
    uniform_box, uniform_cube,
};

use hhg_core::{Grid, Kernel, Real};

/// Declares `mod name { f32, f64 }` tests calling the generic `name::<T>()`.
///
/// Each name must be a generic function `fn name<T: TestReal>()` in the calling module; the
/// macro adds one `#[test]` per precision, named `name::f32` and `name::f64`.
#[macro_export]
macro_rules! for_both_precisions {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn f32() {
                    super::$name::<f32>();
                }

                #[test]
                fn f64() {
                    super::$name::<f64>();
                }
            }
        )*
    };
}

/// Declares the tests of generic functions `fn name<T: TestReal, const D: usize>()` in
/// space and in the plane: for each `name => space, plane`, the functions `space::<T>()`
/// (`D = 3`) and `plane::<T>()` (`D = 2`), and through [`for_both_precisions!`] the tests
/// `space::f32`, `space::f64`, `plane::f32` and `plane::f64`.
#[macro_export]
macro_rules! in_space_and_plane {
    ($($name:ident => $space:ident, $plane:ident);* $(;)?) => {
        $(
            fn $space<T: $crate::TestReal>() {
                $name::<T, 3>();
            }

            fn $plane<T: $crate::TestReal>() {
                $name::<T, 2>();
            }
        )*
        $crate::for_both_precisions!($($space, $plane),*);
    };
}

/// A grid over `points` with the given kernel.
pub fn build_grid<T: Real>(points: &[[T; 3]], radius: T, kernel: Kernel) -> Grid<T> {
    let mut grid = Grid::new(radius).expect("a valid radius");
    grid.set_kernel(kernel);
    grid.build(points).expect("a valid point set");
    grid
}
