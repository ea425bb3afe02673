//! The BVH peer: parry's dynamic bounding volume hierarchy (parry3d in space, parry2d in the
//! plane), used the way rapier's broad phase uses it.
//!
//! The first step builds the tree from all boxes (`Bvh::from_leaves`, binned SAH). Every later
//! step writes the moved boxes into their leaves in parallel
//! (`insert_or_update_batch_partially_parallel`, no enlargement margin, so the leaves are the
//! exact boxes), refits the inner nodes in parallel (`refit_parallel`) and lets the tree
//! restructure a part of itself (`optimize_incremental`), as rapier does every frame. Detection
//! traverses the tree against itself in parallel (`traverse_bvtt_single_tree_parallel`).
//!
//! parry's node test is the same closed-interval test as ours, but every candidate pair is
//! re-checked with [`overlaps`] anyway, so the pairs are exactly the other engines'. parry2d
//! and parry3d are two crates with the same API on their own types, so one macro writes both
//! engines; the plane engine reads the `x` and `y` of the scenario's boxes (whose `z` is 0 to 0
//! in the plane), as the 3-D one converts all three axes, every step.

use rayon::prelude::*;

use crate::broadphase::{Aabb, overlaps};

/// What the runner asks of a BVH peer, in space or in the plane; every call takes the
/// scenario's boxes ([`crate::broadphase::Scenario::boxes`]).
pub trait BvhPeer: Send {
    /// Builds the tree from scratch on `boxes`.
    fn setup(&mut self, boxes: &[Aabb<f32>]);

    /// Moves the leaves to `boxes`, refits and incrementally optimises the tree; builds it
    /// from scratch when the box count changed.
    fn update(&mut self, boxes: &[Aabb<f32>]);

    /// Moves only the leaves of `moving` (the other boxes are unchanged since the last
    /// update), then refits and incrementally optimises the tree, as an engine with static
    /// bodies does; builds from scratch when the box count changed.
    fn update_subset(&mut self, boxes: &[Aabb<f32>], moving: &[u32]);

    /// Writes every overlapping pair of `boxes` (the boxes of the last update) into `out`
    /// (cleared first), each once as `[i, j]` with `i < j`, in a deterministic order.
    fn pairs(&self, boxes: &[Aabb<f32>], out: &mut Vec<[u32; 2]>);

    /// Heap bytes of the tree (parry's own count) and of the update buffers; parry's workspace
    /// is private and not counted.
    fn heap_bytes(&self) -> usize;
}

/// Writes the BVH engine `$name` on the crate `$parry`, whose boxes take the axes `$axis` of
/// ours.
macro_rules! parry_bvh {
    ($(#[$doc:meta])* $name:ident, $parry:ident, [$($axis:literal),+]) => {
        $(#[$doc])*
        #[derive(Clone, Default)]
        pub struct $name {
            /// The tree; leaf `i` holds box `i`.
            bvh: $parry::partitioning::Bvh,
            /// parry's scratch space for refits and optimisation.
            workspace: $parry::partitioning::BvhWorkspace,
            /// The leaf updates of one step: box, leaf index, margin.
            updates: Vec<($parry::bounding_volume::Aabb, u32, f32)>,
            /// The status parry reports per update.
            statuses: Vec<$parry::partitioning::BvhLeafUpdateStatus>,
            /// Leaves in the tree.
            leaves: usize,
        }

        impl $name {
            /// Creates an empty broad phase.
            pub fn new() -> Self {
                Self::default()
            }

            /// Converts one of our boxes to parry's.
            #[inline]
            fn to_parry(b: &Aabb<f32>) -> $parry::bounding_volume::Aabb {
                $parry::bounding_volume::Aabb::new(
                    $parry::math::Vector::new($(b.min[$axis]),+),
                    $parry::math::Vector::new($(b.max[$axis]),+),
                )
            }

            /// Writes the leaves of `updates` (box, leaf, margin), then refits and
            /// incrementally optimises the tree.
            fn apply_updates(&mut self) {
                self.bvh
                    .insert_or_update_batch_partially_parallel(&self.updates, &mut self.statuses);
                self.bvh.refit_parallel(&mut self.workspace);
                self.bvh.optimize_incremental(&mut self.workspace);
            }
        }

        impl BvhPeer for $name {
            fn setup(&mut self, boxes: &[Aabb<f32>]) {
                let leaves: Vec<_> = boxes.par_iter().map(Self::to_parry).collect();
                self.bvh = $parry::partitioning::Bvh::from_leaves(
                    $parry::partitioning::BvhBuildStrategy::Binned,
                    &leaves,
                );
                self.leaves = boxes.len();
            }

            fn update(&mut self, boxes: &[Aabb<f32>]) {
                if boxes.len() != self.leaves {
                    self.setup(boxes);
                    return;
                }
                self.updates.clear();
                self.updates.par_extend(
                    boxes
                        .par_iter()
                        .enumerate()
                        .map(|(i, b)| (Self::to_parry(b), i as u32, 0.0)),
                );
                self.apply_updates();
            }

            fn update_subset(&mut self, boxes: &[Aabb<f32>], moving: &[u32]) {
                if boxes.len() != self.leaves {
                    self.setup(boxes);
                    return;
                }
                self.updates.clear();
                self.updates.par_extend(
                    moving
                        .par_iter()
                        .map(|&i| (Self::to_parry(&boxes[i as usize]), i, 0.0)),
                );
                self.apply_updates();
            }

            fn pairs(&self, boxes: &[Aabb<f32>], out: &mut Vec<[u32; 2]>) {
                let candidates = self.bvh.traverse_bvtt_single_tree_parallel::<false>();
                out.clear();
                out.par_extend(candidates.par_iter().filter_map(|&(a, b)| {
                    let (i, j) = if a < b { (a, b) } else { (b, a) };
                    (i != j && overlaps(&boxes[i as usize], &boxes[j as usize])).then_some([i, j])
                }));
            }

            fn heap_bytes(&self) -> usize {
                self.bvh.heap_memory_size()
                    + self.updates.capacity()
                        * size_of::<($parry::bounding_volume::Aabb, u32, f32)>()
                    + self.statuses.capacity()
                        * size_of::<$parry::partitioning::BvhLeafUpdateStatus>()
            }
        }
    };
}

parry_bvh!(
    /// parry3d's BVH with the buffers the updates reuse.
    ParryBvh,
    parry3d,
    [0, 1, 2]
);

parry_bvh!(
    /// parry2d's BVH on the `x` and `y` of the boxes (the scenes in the plane), with the
    /// buffers the updates reuse.
    ParryBvh2,
    parry2d,
    [0, 1]
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::brute;
    use crate::broadphase::scenario::Scenario;

    fn sorted_pairs(bvh: &impl BvhPeer, boxes: &[Aabb<f32>]) -> Vec<[u32; 2]> {
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
    fn the_plane_tree_agrees_with_brute_force_while_the_rectangles_move() {
        use crate::broadphase::scenario::BroadScene;
        let mut scenario = Scenario::generate(BroadScene::StaticHeavy2d, 3000, 1);
        let mut bvh = ParryBvh2::new();
        bvh.setup(scenario.boxes());
        for step in 0..4 {
            let mut want = Vec::new();
            brute::all_pairs(scenario.boxes(), &mut want);
            assert!(want.len() > 1000);
            assert_eq!(sorted_pairs(&bvh, scenario.boxes()), want, "step {step}");
            scenario.step();
            if step % 2 == 0 {
                bvh.update_subset(scenario.boxes(), scenario.moving());
            } else {
                bvh.update(scenario.boxes());
            }
        }
        assert!(bvh.heap_bytes() > 3000 * 16);
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
