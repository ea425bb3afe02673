//! The hhg engines: `hhg_core::broad::BroadPhase` and, for scenes with static objects,
//! `hhg_core::broad::Scene`, behind the interface the runner drives.
//!
//! With `BroadPhase`, one step is `build` (the first one is the setup, later ones the update)
//! and `pairs` (the detection); the same broad phase and pair buffer serve every step, so hhg
//! reuses its memory. With `Scene`, the setup inserts every object (static ones with
//! `Motion::Static`), an update sets the boxes of the moving objects and calls `update` (which
//! patches or rebuilds as the scene decides), and the detection is `detect`. Both take boxes
//! with `D` axes: 3, or 2 for the scenes in the plane (`BroadPhase2`, `Scene2`).

use hhg_core::PairList;
use hhg_core::broad::{Aabb, BroadPhase, Filter, Handle, Motion, Scene};
use rayon::prelude::*;

/// hhg's broad phase for boxes with `D` axes, kept from step to step.
#[derive(Default)]
pub struct HhgBroadPhase<const D: usize = 3> {
    /// The hierarchical hash grid.
    inner: BroadPhase<f32, D>,
    /// Its pair output, kept from step to step.
    list: PairList<f32>,
}

impl<const D: usize> HhgBroadPhase<D> {
    /// (Re)builds the grids on `boxes`.
    pub fn build(&mut self, boxes: &[Aabb<f32, D>]) -> Result<(), String> {
        self.inner.build(boxes).map_err(|e| format!("hhg: {e}"))
    }

    /// Writes every overlapping pair of the last build's boxes into `out` (a copy of hhg's
    /// own output, as the runner compares every engine's pairs in one shape). The copy is
    /// timed with the detection, so it runs on the pool's threads as parry's collection of
    /// its pairs does: a serial copy of 2M pairs (16 MB) was a step's only serial part
    /// outside hhg, 1.7 ms of a 1M-box step on either thread count.
    pub fn pairs(&mut self, out: &mut Vec<[u32; 2]>) -> Result<(), String> {
        self.inner
            .pairs(&mut self.list)
            .map_err(|e| format!("hhg: {e}"))?;
        out.clear();
        out.par_extend(self.list.pairs().par_iter().copied());
        Ok(())
    }

    /// Heap bytes held by the grids, as hhg counts them.
    pub fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }
}

/// hhg's persistent scene for boxes with `D` axes, for scenes with static objects.
#[derive(Default)]
pub struct HhgScene<const D: usize = 3> {
    /// The scene.
    inner: Scene<f32, D>,
    /// The handle of every object, in the input numbering.
    handles: Vec<Handle>,
    /// The pairs of the last detection, as handles.
    found: Vec<[Handle; 2]>,
}

impl<const D: usize> HhgScene<D> {
    /// Inserts every box (those marked in `statics` as static) and updates the scene.
    pub fn setup(&mut self, boxes: &[Aabb<f32, D>], statics: &[bool]) -> Result<(), String> {
        self.inner = Scene::new();
        self.handles.clear();
        for (i, b) in boxes.iter().enumerate() {
            let motion = if statics.get(i).copied().unwrap_or(false) {
                Motion::Static
            } else {
                Motion::Dynamic
            };
            let handle = self
                .inner
                .insert(*b, motion, Filter::ALL)
                .map_err(|e| format!("hhg: {e}"))?;
            self.handles.push(handle);
        }
        self.inner.update().map_err(|e| format!("hhg: {e}"))?;
        Ok(())
    }

    /// Sets the boxes of the `moving` objects and updates the scene.
    pub fn update(&mut self, boxes: &[Aabb<f32, D>], moving: &[u32]) -> Result<(), String> {
        for &i in moving {
            self.inner
                .set_aabb(self.handles[i as usize], boxes[i as usize])
                .map_err(|e| format!("hhg: {e}"))?;
        }
        self.inner.update().map_err(|e| format!("hhg: {e}"))?;
        Ok(())
    }

    /// Writes every overlapping pair not of two static objects into `out` as `[i, j]`,
    /// `i < j` in the input numbering (a fresh scene's slots are the insertion order).
    pub fn pairs(&mut self, out: &mut Vec<[u32; 2]>) -> Result<(), String> {
        self.inner
            .detect(&mut self.found)
            .map_err(|e| format!("hhg: {e}"))?;
        out.clear();
        out.par_extend(self.found.par_iter().map(|[a, b]| [a.slot(), b.slot()]));
        Ok(())
    }

    /// Heap bytes held by the scene, as hhg counts them, and the handle buffers.
    pub fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
            + self.handles.capacity() * size_of::<Handle>()
            + self.found.capacity() * size_of::<[Handle; 2]>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::brute;
    use crate::broadphase::scenario::Scenario;

    fn sorted_pairs(hhg: &mut HhgBroadPhase, boxes: &[Aabb<f32>]) -> Vec<[u32; 2]> {
        hhg.build(boxes).unwrap();
        let mut out = Vec::new();
        hhg.pairs(&mut out).unwrap();
        out.sort_unstable();
        out
    }

    #[test]
    fn agrees_with_brute_force_on_degenerate_boxes() {
        let mut hhg = HhgBroadPhase::default();
        for seed in [3, 4, 5] {
            let boxes = crate::broadphase::degenerate_boxes(seed);
            let mut want = Vec::new();
            brute::all_pairs(&boxes, &mut want);
            assert!(want.len() > 1500);
            assert_eq!(sorted_pairs(&mut hhg, &boxes), want, "seed {seed}");
        }
        assert!(sorted_pairs(&mut hhg, &[]).is_empty());
    }

    #[test]
    fn agrees_with_brute_force_while_the_boxes_move() {
        let mut hhg = HhgBroadPhase::default();
        for seed in 0..3 {
            let mut scenario = Scenario::new(2000, seed);
            for _ in 0..4 {
                let mut want = Vec::new();
                brute::all_pairs(scenario.boxes(), &mut want);
                assert_eq!(
                    sorted_pairs(&mut hhg, scenario.boxes()),
                    want,
                    "seed {seed}"
                );
                scenario.step();
            }
        }
        assert!(hhg.heap_bytes() > 0);
    }

    #[test]
    fn the_scene_pairs_no_two_statics() {
        use crate::broadphase::scenario::{BroadScene, Scenario};
        let mut scenario = Scenario::generate(BroadScene::StaticHeavy, 2000, 4);
        let mut hhg = HhgScene::default();
        hhg.setup(scenario.boxes(), scenario.statics()).unwrap();
        for step in 0..3 {
            if step > 0 {
                scenario.step();
                hhg.update(scenario.boxes(), scenario.moving()).unwrap();
            }
            let mut want = Vec::new();
            brute::all_pairs(scenario.boxes(), &mut want);
            let statics = scenario.statics();
            want.retain(|&[i, j]| !(statics[i as usize] && statics[j as usize]));
            let mut got = Vec::new();
            hhg.pairs(&mut got).unwrap();
            got.sort_unstable();
            assert!(want.len() > 100);
            assert_eq!(got, want, "step {step}");
        }
        assert!(hhg.heap_bytes() > 0);
    }
}
