//! hhg's engines: `Grid` for one radius (lists ascending or in cell order),
//! `VariableRadiusSearch` for one radius per point (in 3-D and in the plane), `Grid2` in the
//! plane and `PeriodicSearch` in a periodic box, each rebuilding the previous run's structures
//! in place.

use std::time::Instant;

use hhg_core::broad::{RadiusRule, VariableRadiusSearch};
use hhg_core::periodic::{PeriodicBox, PeriodicSearch};
use hhg_core::plane::Grid2;
use hhg_core::{Grid, ListOrder, NeighborLists};

use super::output::{Lists, Output};
use super::plane_coordinates;

/// hhg: the grid is (re)built on the points, then the neighbour lists of all points are filled
/// in `order`; with `reuse`, the previous run's grid and lists are rebuilt in place.
pub(super) fn run_hhg(
    points: &[[f32; 3]],
    radius: f32,
    order: ListOrder,
    reuse: Option<(Box<Grid<f32>>, NeighborLists<f32>)>,
) -> Result<Output, String> {
    let (mut grid, lists) = match reuse {
        Some((grid, lists)) if grid.radius() == radius => (grid, lists),
        _ => (
            Box::new(Grid::<f32>::new(radius).map_err(|e| format!("hhg: {e}"))?),
            NeighborLists::<f32>::default(),
        ),
    };
    grid.set_list_order(order);
    timed_build_and_lists(
        grid,
        lists,
        |grid| grid.build(points),
        |grid, lists| grid.neighbor_lists(lists),
        |grid, lists| Lists::Hhg { grid, lists },
    )
}

/// hhg in the plane (the 2-D scenes, whose points have `z = 0`): `Grid2` is (re)built on the
/// points' `x` and `y`, then the neighbour lists of all points are filled; with `reuse`, in the
/// previous run's buffers. The points are copied into `[x, y]` before the clock starts, as
/// kiddo's 2-D tree takes them.
pub(super) fn run_hhg_plane(
    points: &[[f32; 3]],
    radius: f32,
    reuse: Option<(Box<Grid2<f32>>, NeighborLists<f32>)>,
) -> Result<Output, String> {
    let (grid, lists) = match reuse {
        Some((grid, lists)) if grid.radius() == radius => (grid, lists),
        _ => (
            Box::new(Grid2::<f32>::new(radius).map_err(|e| format!("hhg: {e}"))?),
            NeighborLists::<f32>::default(),
        ),
    };
    let plane = plane_coordinates(points);
    timed_build_and_lists(
        grid,
        lists,
        |grid| grid.build(&plane),
        |grid, lists| grid.neighbor_lists(lists),
        |grid, lists| Lists::HhgPlane { grid, lists },
    )
}

/// Times one hhg run on reused buffers: `build` on the structure, then `fill` of the lists;
/// `keep` wraps both into the output for checking.
pub(super) fn timed_build_and_lists<S>(
    mut search: Box<S>,
    mut lists: NeighborLists<f32>,
    build: impl FnOnce(&mut S) -> Result<(), hhg_core::Error>,
    fill: impl FnOnce(&S, &mut NeighborLists<f32>) -> Result<(), hhg_core::Error>,
    keep: impl FnOnce(Box<S>, NeighborLists<f32>) -> Lists,
) -> Result<Output, String> {
    let start = Instant::now();
    build(&mut search).map_err(|e| format!("hhg: {e}"))?;
    let built = Instant::now();
    fill(&search, &mut lists).map_err(|e| format!("hhg: {e}"))?;
    let done = Instant::now();
    Ok(Output {
        build_s: (built - start).as_secs_f64(),
        query_s: (done - built).as_secs_f64(),
        lists: keep(search, lists),
    })
}

/// hhg with one radius per point: `VariableRadiusSearch` (rule `max(ri, rj)`) of points with
/// `D` coordinates (3, or 2 in the plane) is (re)built, then the neighbour lists of all points
/// are filled; with `reuse`, in the previous run's buffers. `keep` wraps the search and lists
/// into the output.
pub(super) fn run_hhg_variable<const D: usize>(
    points: &[[f32; D]],
    radii: &[f32],
    reuse: Option<(Box<VariableRadiusSearch<f32, D>>, NeighborLists<f32>)>,
    keep: impl FnOnce(Box<VariableRadiusSearch<f32, D>>, NeighborLists<f32>) -> Lists,
) -> Result<Output, String> {
    let (search, lists) = reuse.unwrap_or_else(|| {
        (
            Box::new(VariableRadiusSearch::new(RadiusRule::Max)),
            NeighborLists::default(),
        )
    });
    timed_build_and_lists(
        search,
        lists,
        |search| search.build(points, radii),
        |search, lists| search.neighbor_lists(lists),
        keep,
    )
}

/// hhg in a periodic box: `PeriodicSearch` (ghost images near the faces, one grid) is
/// (re)built, then the neighbour lists of all points are filled; with `reuse`, in the previous
/// run's buffers when the radius and box are the same.
pub(super) fn run_hhg_periodic(
    points: &[[f32; 3]],
    radius: f32,
    lengths: [f32; 3],
    reuse: Option<(Box<PeriodicSearch<f32>>, NeighborLists<f32>)>,
) -> Result<Output, String> {
    let domain = PeriodicBox::cubic([0.0; 3], lengths);
    let (search, lists) = match reuse {
        Some((search, lists)) if search.radius() == radius && *search.domain() == domain => {
            (search, lists)
        }
        _ => (
            Box::new(PeriodicSearch::new(radius, domain).map_err(|e| format!("hhg: {e}"))?),
            NeighborLists::default(),
        ),
    };
    timed_build_and_lists(
        search,
        lists,
        |search| search.build(points),
        |search, lists| search.neighbor_lists(lists),
        |search, lists| Lists::HhgPeriodic { search, lists },
    )
}
