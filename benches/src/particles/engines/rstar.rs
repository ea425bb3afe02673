//! The rstar R*-tree peer: a bulk-loaded tree and one within-distance query per point.

use std::time::Instant;

use ::rstar::RTree;
use ::rstar::primitives::GeomWithData;

use super::output::{Csr, Lists, Output};
use super::{Radius, neighbours, probe_radius2};

/// rstar: an R*-tree bulk loaded (sequentially: rstar has no parallel build) from the points
/// with their indices, then one within-distance query per point in parallel (within the
/// largest radius), each candidate re-checked with the exact predicate.
pub(super) fn run_rstar(points: &[[f32; 3]], radius: Radius<'_>) -> Output {
    let r = radius.max();
    let r2 = r * r;
    let probe = probe_radius2(radius);
    let start = Instant::now();
    let items: Vec<GeomWithData<[f32; 3], u32>> = points
        .iter()
        .enumerate()
        .map(|(i, p)| GeomWithData::new(*p, i as u32))
        .collect();
    let tree = RTree::bulk_load(items);
    let built = Instant::now();
    let csr = Csr::fill_parallel(points.len(), |i, out| {
        for found in tree.locate_within_distance(points[i], probe) {
            let j = found.data as usize;
            if j != i && neighbours(points, radius, r2, i, j) {
                out.push(j as u32);
            }
        }
    });
    let done = Instant::now();
    Output {
        build_s: (built - start).as_secs_f64(),
        query_s: (done - built).as_secs_f64(),
        lists: Lists::Csr(csr),
    }
}
