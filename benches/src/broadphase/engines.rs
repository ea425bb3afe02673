//! The broad-phase engines under comparison and the state each keeps from step to step.
//!
//! Every engine splits a step into an update (bringing its structure up to date with the moved
//! boxes; the first one is the setup) and a detection (writing all overlapping pairs). All keep
//! their structures and the pair buffer across steps, as a simulation does. All parallel work
//! runs on the current rayon thread pool.

use std::fmt;
use std::str::FromStr;

use crate::broadphase::brute::{self, BRUTE_MAX_N};
use crate::broadphase::hhg::HhgBroadPhase;
use crate::broadphase::parry::ParryBvh;
use crate::broadphase::sap::SweepAndPrune;
use crate::broadphase::{Aabb, PairListStats};

/// A broad-phase engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BroadEngine {
    /// hhg-core's hierarchical hash grid broad phase (`hhg_core::broad::BroadPhase`).
    Hhg,
    /// Terdiman's sort-and-sweep box pruning with an 8-lane SIMD inner test ([`crate::broadphase::sap`]).
    Sap,
    /// parry3d's dynamic BVH ([`crate::broadphase::parry`]).
    Parry,
    /// All pairs, O(n^2); only up to [`BRUTE_MAX_N`] boxes.
    Brute,
}

impl BroadEngine {
    /// All engines, in the order results are listed.
    pub const ALL: [BroadEngine; 4] = [
        BroadEngine::Hhg,
        BroadEngine::Sap,
        BroadEngine::Parry,
        BroadEngine::Brute,
    ];

    /// The engine's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            BroadEngine::Hhg => "hhg",
            BroadEngine::Sap => "sap",
            BroadEngine::Parry => "parry",
            BroadEngine::Brute => "brute",
        }
    }

    /// Whether the engine is willing to run on `n` boxes.
    pub fn accepts(self, n: usize) -> bool {
        self != BroadEngine::Brute || n <= BRUTE_MAX_N
    }

    /// A fresh, empty state of this engine.
    pub fn state(self) -> BroadState {
        match self {
            BroadEngine::Hhg => BroadState::Hhg(Box::default()),
            BroadEngine::Sap => BroadState::Sap(Box::default()),
            BroadEngine::Parry => BroadState::Parry(Box::default()),
            BroadEngine::Brute => BroadState::Brute,
        }
    }

    /// The priority as the reference of a comparison: brute force, then the simplest peer.
    pub fn reference_priority(self) -> u8 {
        match self {
            BroadEngine::Brute => 0,
            BroadEngine::Sap => 1,
            BroadEngine::Parry => 2,
            BroadEngine::Hhg => 3,
        }
    }
}

impl fmt::Display for BroadEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for BroadEngine {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BroadEngine::ALL
            .into_iter()
            .find(|engine| engine.name() == s)
            .ok_or_else(|| {
                format!("unknown broad-phase engine `{s}` (expected hhg, sap, parry or brute)")
            })
    }
}

/// What an engine keeps from one step to the next.
pub enum BroadState {
    /// hhg's broad phase.
    Hhg(Box<HhgBroadPhase>),
    /// The sort-and-sweep buffers.
    Sap(Box<SweepAndPrune>),
    /// parry's tree and update buffers.
    Parry(Box<ParryBvh>),
    /// Brute force keeps nothing.
    Brute,
}

impl BroadState {
    /// Brings the structure up to date with `boxes`; `first` marks the setup of a run.
    pub fn update(&mut self, boxes: &[Aabb<f32>], first: bool) -> Result<(), String> {
        match self {
            BroadState::Hhg(hhg) => hhg.build(boxes)?,
            BroadState::Sap(sap) => sap.update(boxes),
            BroadState::Parry(parry) if first => parry.setup(boxes),
            BroadState::Parry(parry) => parry.update(boxes),
            BroadState::Brute => {}
        }
        Ok(())
    }

    /// Writes every overlapping pair of `boxes` (those of the last update) into `out`.
    pub fn pairs(&mut self, boxes: &[Aabb<f32>], out: &mut Vec<[u32; 2]>) {
        match self {
            BroadState::Hhg(hhg) => hhg.pairs(out),
            BroadState::Sap(sap) => sap.pairs(out),
            BroadState::Parry(parry) => parry.pairs(boxes, out),
            BroadState::Brute => brute::all_pairs(boxes, out),
        }
    }

    /// Heap bytes held by the structure (the pair output not included).
    pub fn heap_bytes(&self) -> usize {
        match self {
            BroadState::Hhg(hhg) => hhg.heap_bytes(),
            BroadState::Sap(sap) => sap.heap_bytes(),
            BroadState::Parry(parry) => parry.heap_bytes(),
            BroadState::Brute => 0,
        }
    }
}

/// The statistics of one engine's pairs for one set of boxes.
pub type BroadOutput = PairListStats;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::scenario::Scenario;

    #[test]
    fn engine_names_round_trip() {
        for engine in BroadEngine::ALL {
            assert_eq!(engine.name().parse::<BroadEngine>(), Ok(engine));
        }
        assert!("kiddo".parse::<BroadEngine>().is_err());
        assert!(BroadEngine::Brute.accepts(BRUTE_MAX_N) && !BroadEngine::Brute.accepts(20_001));
    }

    #[test]
    fn every_engine_agrees_with_brute_force_step_by_step() {
        let mut scenarios: Vec<Scenario> = BroadEngine::ALL
            .iter()
            .map(|_| Scenario::new(2500, 77))
            .collect();
        let mut states: Vec<BroadState> = BroadEngine::ALL.iter().map(|e| e.state()).collect();
        let mut out = Vec::new();
        for step in 0..4 {
            let mut stats = Vec::new();
            for (scenario, state) in scenarios.iter_mut().zip(&mut states) {
                if step > 0 {
                    scenario.step();
                }
                state.update(scenario.boxes(), step == 0).unwrap();
                state.pairs(scenario.boxes(), &mut out);
                stats.push(PairListStats::of(&out));
            }
            assert!(stats[0].pairs > 2000 && stats[0].is_consistent());
            assert!(
                stats.iter().all(|s| *s == stats[0]),
                "step {step}: {stats:?}"
            );
        }
    }
}
