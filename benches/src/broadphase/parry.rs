//! The BVH peer: parry3d's dynamic bounding volume hierarchy, used the way rapier's broad phase
//! uses it.
//!
//! The first step builds the tree from all boxes (`Bvh::from_leaves`, binned SAH). Every later
//! step writes the moved boxes into their leaves in parallel
//! (`insert_or_update_batch_partially_parallel`, no enlargement margin, so the leaves are the
//! exact boxes), refits the inner nodes in parallel (`refit_parallel`) and lets the tree
//! restructure a part of itself (`optimize_incremental`), as rapier does every frame. Detection
//! traverses the tree against itself in parallel (`traverse_bvtt_single_tree_parallel`).
//!
//! parry's node test is the same closed-interval test as ours, but every candidate pair is
//! re-checked with [`overlaps`] anyway, so the pairs are exactly the other engines'.

use parry3d::bounding_volume::Aabb as ParryAabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhLeafUpdateStatus, BvhWorkspace};
use rayon::prelude::*;

use crate::broadphase::{Aabb, overlaps};

/// Converts one of our boxes to parry's.
#[inline]
fn to_parry(b: &Aabb<f32>) -> ParryAabb {
    ParryAabb::new(
        Vector::new(b.min[0], b.min[1], b.min[2]),
        Vector::new(b.max[0], b.max[1], b.max[2]),
    )
}

/// parry3d's BVH with the buffers the updates reuse.
#[derive(Clone, Default)]
pub struct ParryBvh {
    /// The tree; leaf `i` holds box `i`.
    bvh: Bvh,
    /// parry's scratch space for refits and optimisation.
    workspace: BvhWorkspace,
    /// The leaf updates of one step: box, leaf index, margin.
    updates: Vec<(ParryAabb, u32, f32)>,
    /// The status parry reports per update.
    statuses: Vec<BvhLeafUpdateStatus>,
    /// Leaves in the tree.
    leaves: usize,
}

impl ParryBvh {
    /// Creates an empty broad phase.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the tree from scratch on `boxes`.
    pub fn setup(&mut self, boxes: &[Aabb<f32>]) {
        let leaves: Vec<ParryAabb> = boxes.par_iter().map(to_parry).collect();
        self.bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
        self.leaves = boxes.len();
    }

    /// Moves the leaves to `boxes`, refits and incrementally optimises the tree; builds it from
    /// scratch when the box count changed.
    pub fn update(&mut self, boxes: &[Aabb<f32>]) {
        if boxes.len() != self.leaves {
            self.setup(boxes);
            return;
        }
        self.updates.clear();
        self.updates.par_extend(
            boxes
                .par_iter()
                .enumerate()
                .map(|(i, b)| (to_parry(b), i as u32, 0.0)),
        );
        self.bvh
            .insert_or_update_batch_partially_parallel(&self.updates, &mut self.statuses);
        self.bvh.refit_parallel(&mut self.workspace);
        self.bvh.optimize_incremental(&mut self.workspace);
    }

    /// Moves only the leaves of `moving` (the other boxes are unchanged since the last
    /// update), then refits and incrementally optimises the tree, as an engine with static
    /// bodies does; builds from scratch when the box count changed.
    pub fn update_subset(&mut self, boxes: &[Aabb<f32>], moving: &[u32]) {
        if boxes.len() != self.leaves {
            self.setup(boxes);
            return;
        }
        self.updates.clear();
        self.updates.par_extend(
            moving
                .par_iter()
                .map(|&i| (to_parry(&boxes[i as usize]), i, 0.0)),
        );
        self.bvh
            .insert_or_update_batch_partially_parallel(&self.updates, &mut self.statuses);
        self.bvh.refit_parallel(&mut self.workspace);
        self.bvh.optimize_incremental(&mut self.workspace);
    }

    /// Writes every overlapping pair of `boxes` (the boxes of the last update) into `out`
    /// (cleared first), each once as `[i, j]` with `i < j`, in a deterministic order.
    pub fn pairs(&self, boxes: &[Aabb<f32>], out: &mut Vec<[u32; 2]>) {
        let candidates = self.bvh.traverse_bvtt_single_tree_parallel::<false>();
        out.clear();
        out.par_extend(candidates.par_iter().filter_map(|&(a, b)| {
            let (i, j) = if a < b { (a, b) } else { (b, a) };
            (i != j && overlaps(&boxes[i as usize], &boxes[j as usize])).then_some([i, j])
        }));
    }

    /// Heap bytes of the tree (parry's own count) and of the update buffers; parry's workspace
    /// is private and not counted.
    pub fn heap_bytes(&self) -> usize {
        self.bvh.heap_memory_size()
            + self.updates.capacity() * size_of::<(ParryAabb, u32, f32)>()
            + self.statuses.capacity() * size_of::<BvhLeafUpdateStatus>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::brute;
    use crate::broadphase::scenario::Scenario;

    fn sorted_pairs(bvh: &ParryBvh, boxes: &[Aabb<f32>]) -> Vec<[u32; 2]> {
        let mut out = Vec::new();
        bvh.pairs(boxes, &mut out);
        out.sort_unstable();
        out
    }

    #[test]
    fn agrees_with_brute_force_while_the_boxes_move() {
        for seed in 0..3 {
            let mut scenario = Scenario::new(2000, seed);
            let mut bvh = ParryBvh::new();
            bvh.setup(scenario.boxes());
            for _ in 0..4 {
                let mut want = Vec::new();
                brute::all_pairs(scenario.boxes(), &mut want);
                assert!(want.len() > 1000);
                assert_eq!(sorted_pairs(&bvh, scenario.boxes()), want, "seed {seed}");
                scenario.step();
                bvh.update(scenario.boxes());
            }
            assert!(bvh.heap_bytes() > 2000 * 24);
        }
    }

    #[test]
    fn agrees_with_brute_force_on_degenerate_boxes() {
        let boxes = crate::broadphase::degenerate_boxes(3);
        let mut bvh = ParryBvh::new();
        bvh.update(&boxes);
        let mut want = Vec::new();
        brute::all_pairs(&boxes, &mut want);
        assert!(want.len() > 500);
        assert_eq!(sorted_pairs(&bvh, &boxes), want);
        bvh.update(&boxes[..1]);
        assert!(sorted_pairs(&bvh, &boxes[..1]).is_empty());
        bvh.update(&[]);
        assert!(sorted_pairs(&bvh, &[]).is_empty());
    }
}
