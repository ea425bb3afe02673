//! The kiddo k-d tree peer: an `ImmutableKdTree` and one within-radius query per point.

use std::time::Instant;

use ::kiddo::{ImmutableKdTree, SquaredEuclidean};

use super::output::{Csr, Lists, Output};
use super::{Radius, neighbours, plane_coordinates, probe_radius2};

/// kiddo: an `ImmutableKdTree` built in parallel, then one unsorted within-radius query per
/// point in parallel (within the largest radius), each candidate re-checked with the exact
/// predicate. In the plane (the 2-D scenes, whose points have `z = 0`) the tree has dimension
/// 2, on the points' `x` and `y` (copied before the clock starts, as hhg's `Grid2` takes them).
pub(super) fn run_kiddo(points: &[[f32; 3]], radius: Radius<'_>) -> Result<Output, String> {
    if radius.is_plane() {
        return run_kiddo_on(points, &plane_coordinates(points), radius);
    }
    run_kiddo_on(points, points, radius)
}

/// [`run_kiddo`] with the tree over `coordinates` (the points' first `K` coordinates); the
/// predicate reads `points`.
fn run_kiddo_on<const K: usize>(
    points: &[[f32; 3]],
    coordinates: &[[f32; K]],
    radius: Radius<'_>,
) -> Result<Output, String> {
    let r = radius.max();
    let r2 = r * r;
    let probe = probe_radius2(radius);
    let start = Instant::now();
    let tree: ImmutableKdTree<f32, K> =
        ImmutableKdTree::new_from_slice_parallel(coordinates).map_err(|e| format!("kiddo: {e}"))?;
    let built = Instant::now();
    let csr = Csr::fill_parallel(points.len(), |i, out| {
        tree.query(&coordinates[i])
            .within::<SquaredEuclidean<f32>>(probe)
            .unsorted()
            .visit(|found| {
                let j = found.item as usize;
                if j != i && neighbours(points, radius, r2, i, j) {
                    out.push(j as u32);
                }
            });
    });
    let done = Instant::now();
    Ok(Output {
        build_s: (built - start).as_secs_f64(),
        query_s: (done - built).as_secs_f64(),
        lists: Lists::Csr(csr),
    })
}
