//! The hhg engine: `hhg_core::broad::BroadPhase` behind the interface the runner drives.
//!
//! One step is `build` (the first one is the setup, later ones the update) and `pairs` (the
//! detection); the same broad phase and pair buffer serve every step, so hhg reuses its memory.

use hhg_core::broad::BroadPhase;

use crate::broadphase::Aabb;

/// hhg's broad phase, kept from step to step.
#[derive(Default)]
pub struct HhgBroadPhase {
    /// The hierarchical hash grid.
    inner: BroadPhase<f32>,
}

impl HhgBroadPhase {
    /// (Re)builds the grids on `boxes`.
    pub fn build(&mut self, boxes: &[Aabb<f32>]) -> Result<(), String> {
        self.inner.build(boxes).map_err(|e| format!("hhg: {e}"))
    }

    /// Writes every overlapping pair of the last build's boxes into `out`.
    pub fn pairs(&self, out: &mut Vec<[u32; 2]>) {
        self.inner.pairs(out);
    }

    /// Heap bytes held by the grids, as hhg counts them.
    pub fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
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
        hhg.pairs(&mut out);
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
}
