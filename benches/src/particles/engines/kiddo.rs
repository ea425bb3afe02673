//! The kiddo k-d tree peer: an `ImmutableKdTree` and one within-radius query per point.

use std::time::Instant;

use ::kiddo::{ImmutableKdTree, SquaredEuclidean};

use super::output::{Csr, Lists, Output};
use super::{Radius, neighbours, probe_radius2};

/// kiddo: an `ImmutableKdTree` built in parallel, then one unsorted within-radius query per
/// point in parallel (within the largest radius), each candidate re-checked with the exact
/// predicate.
pub(super) fn run_kiddo(points: &[[f32; 3]], radius: Radius<'_>) -> Result<Output, String> {
    if let Radius::Plane(_) = radius {
        return run_kiddo_plane(points, radius);
    }
    let r = radius.max();
    let r2 = r * r;
    let probe = probe_radius2(radius);
    let start = Instant::now();
    let tree: ImmutableKdTree<f32, 3> =
        ImmutableKdTree::new_from_slice_parallel(points).map_err(|e| format!("kiddo: {e}"))?;
    let built = Instant::now();
    let csr = Csr::fill_parallel(points.len(), |i, out| {
        tree.query(&points[i])
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

/// kiddo in the plane (the 2-D scenes, whose points have `z = 0`): an `ImmutableKdTree` of
/// dimension 2 on the points' `x` and `y` (copied before the clock starts, as hhg's `Grid2`
/// takes them), then the queries as [`run_kiddo`] makes them.
fn run_kiddo_plane(points: &[[f32; 3]], radius: Radius<'_>) -> Result<Output, String> {
    let r = radius.max();
    let r2 = r * r;
    let probe = probe_radius2(radius);
    let plane: Vec<[f32; 2]> = points.iter().map(|p| [p[0], p[1]]).collect();
    let start = Instant::now();
    let tree: ImmutableKdTree<f32, 2> =
        ImmutableKdTree::new_from_slice_parallel(&plane).map_err(|e| format!("kiddo: {e}"))?;
    let built = Instant::now();
    let csr = Csr::fill_parallel(points.len(), |i, out| {
        tree.query(&plane[i])
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
