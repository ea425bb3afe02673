//! The broad-phase engines under comparison and the state each keeps from step to step.
//!
//! Every engine splits a step into an update (bringing its structure up to date with the moved
//! boxes; the first one is the setup) and a detection (writing all overlapping pairs). All keep
//! their structures and the pair buffer across steps, as a simulation does. All parallel work
//! runs on the current rayon thread pool.
//!
//! In the static-heavy scene, static objects are never paired with each other: hhg runs its
//! persistent `Scene` with `Motion::Static` objects, parry updates only the moving leaves, and
//! sort-and-sweep and brute force, which know no statics, drop static-static pairs as they
//! write them out (inside the detection time). parry takes finite boxes only, so it skips the
//! scene with infinite slabs.
//!
//! In the plane (the 2-D scenes), hhg runs `BroadPhase2` or `Scene2` on the scenario's plane
//! boxes and parry its parry2d tree; sort-and-sweep and brute force run as in space on the
//! scenario's 3-D boxes, whose `z` is 0 to 0 (so every pair overlaps in `z` and the pairs are
//! the plane's).

use std::fmt;
use std::str::FromStr;

use crate::broadphase::PairListStats;
use crate::broadphase::brute::{self, BRUTE_MAX_N};
use crate::broadphase::hhg::{HhgBroadPhase, HhgScene};
#[cfg(feature = "parry")]
use crate::broadphase::parry::{BvhPeer, ParryBvh, ParryBvh2};
use crate::broadphase::sap::SweepAndPrune;
use crate::broadphase::scenario::{BroadScene, Scenario};

/// A broad-phase engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BroadEngine {
    /// hhg-core's hierarchical hash grid broad phase (`hhg_core::broad::BroadPhase`).
    Hhg,
    /// Terdiman's sort-and-sweep box pruning with an 8-lane SIMD inner test ([`crate::broadphase::sap`]).
    Sap,
    /// parry3d's dynamic BVH, parry2d's in the plane (`crate::broadphase::parry`, built with
    /// the `parry` feature).
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

    /// Whether this build of the bench holds the engine: parry3d only comes with the `parry`
    /// feature, which `cargo xtask bench` turns on for `--full`, `--engine parry` and
    /// `--suite broadphase` (it about doubles a cold build).
    pub fn built(self) -> bool {
        self != BroadEngine::Parry || cfg!(feature = "parry")
    }

    /// The engines this build holds, in the order of [`BroadEngine::ALL`].
    pub fn all_built() -> Vec<BroadEngine> {
        BroadEngine::ALL.into_iter().filter(|e| e.built()).collect()
    }

    /// The error for an engine this build does not hold.
    pub fn not_built_message(self) -> String {
        format!(
            "{self} is not in this build of hhg-bench: it needs the `parry` feature, which \
             `cargo xtask bench` turns on for `--full`, `--engine parry` and `--suite broadphase`"
        )
    }

    /// Whether the engine is willing to run on `n` boxes.
    pub fn accepts(self, n: usize) -> bool {
        self != BroadEngine::Brute || n <= BRUTE_MAX_N
    }

    /// Whether the engine can run `scene`, and if not, why.
    pub fn takes(self, scene: BroadScene) -> Result<(), String> {
        if !self.built() {
            return Err(self.not_built_message());
        }
        if self == BroadEngine::Parry && scene.has_infinite_boxes() {
            return Err(format!(
                "parry skips `{scene}`: its BVH takes finite boxes only (the scene has infinite slabs)"
            ));
        }
        Ok(())
    }

    /// A fresh, empty state of this engine for `scene`, or why the engine cannot run it.
    pub fn state(self, scene: BroadScene) -> Result<BroadState, String> {
        self.takes(scene)?;
        let plane = scene.dimensions() == 2;
        Ok(match self {
            BroadEngine::Hhg if scene.has_statics() && plane => {
                BroadState::HhgScenePlane(Box::default())
            }
            BroadEngine::Hhg if scene.has_statics() => BroadState::HhgScene(Box::default()),
            BroadEngine::Hhg if plane => BroadState::HhgPlane(Box::default()),
            BroadEngine::Hhg => BroadState::Hhg(Box::default()),
            BroadEngine::Sap => BroadState::Sap(Box::default()),
            #[cfg(feature = "parry")]
            BroadEngine::Parry if plane => BroadState::Parry(Box::new(ParryBvh2::new())),
            #[cfg(feature = "parry")]
            BroadEngine::Parry => BroadState::Parry(Box::new(ParryBvh::new())),
            #[cfg(not(feature = "parry"))]
            BroadEngine::Parry => return Err(self.not_built_message()),
            BroadEngine::Brute => BroadState::Brute,
        })
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
    /// hhg's persistent scene (scenes with static objects).
    HhgScene(Box<HhgScene>),
    /// hhg's broad phase in the plane (`BroadPhase2`).
    HhgPlane(Box<HhgBroadPhase<2>>),
    /// hhg's persistent scene in the plane (`Scene2`, the plane scenes with static objects).
    HhgScenePlane(Box<HhgScene<2>>),
    /// The sort-and-sweep buffers.
    Sap(Box<SweepAndPrune>),
    /// parry's tree (parry3d's, or parry2d's in the plane) and update buffers.
    #[cfg(feature = "parry")]
    Parry(Box<dyn BvhPeer>),
    /// Brute force keeps nothing.
    Brute,
}

impl BroadState {
    /// Brings the structure up to date with the scenario's boxes; `first` marks the setup of a
    /// run.
    pub fn update(&mut self, scenario: &Scenario, first: bool) -> Result<(), String> {
        let boxes = scenario.boxes();
        match self {
            BroadState::Hhg(hhg) => hhg.build(boxes)?,
            BroadState::HhgScene(hhg) if first => hhg.setup(boxes, scenario.statics())?,
            BroadState::HhgScene(hhg) => hhg.update(boxes, scenario.moving())?,
            BroadState::HhgPlane(hhg) => hhg.build(scenario.plane_boxes())?,
            BroadState::HhgScenePlane(hhg) if first => {
                hhg.setup(scenario.plane_boxes(), scenario.statics())?;
            }
            BroadState::HhgScenePlane(hhg) => {
                hhg.update(scenario.plane_boxes(), scenario.moving())?;
            }
            BroadState::Sap(sap) => sap.update(boxes),
            #[cfg(feature = "parry")]
            BroadState::Parry(parry) if first => parry.setup(boxes),
            #[cfg(feature = "parry")]
            BroadState::Parry(parry) if scenario.moving().len() < boxes.len() => {
                parry.update_subset(boxes, scenario.moving());
            }
            #[cfg(feature = "parry")]
            BroadState::Parry(parry) => parry.update(boxes),
            BroadState::Brute => {}
        }
        Ok(())
    }

    /// Writes every overlapping pair of the scenario's boxes (those of the last update) into
    /// `out`, static-static pairs left out.
    pub fn pairs(&mut self, scenario: &Scenario, out: &mut Vec<[u32; 2]>) -> Result<(), String> {
        let boxes = scenario.boxes();
        match self {
            BroadState::Hhg(hhg) => hhg.pairs(out)?,
            BroadState::HhgScene(hhg) => return hhg.pairs(out),
            BroadState::HhgPlane(hhg) => hhg.pairs(out)?,
            BroadState::HhgScenePlane(hhg) => return hhg.pairs(out),
            BroadState::Sap(sap) => sap.pairs(out),
            #[cfg(feature = "parry")]
            BroadState::Parry(parry) => parry.pairs(boxes, out),
            BroadState::Brute => brute::all_pairs(boxes, out),
        }
        let statics = scenario.statics();
        if !statics.is_empty() {
            out.retain(|&[i, j]| !(statics[i as usize] && statics[j as usize]));
        }
        Ok(())
    }

    /// Heap bytes held by the structure (the pair output not included).
    pub fn heap_bytes(&self) -> usize {
        match self {
            BroadState::Hhg(hhg) => hhg.heap_bytes(),
            BroadState::HhgScene(hhg) => hhg.heap_bytes(),
            BroadState::HhgPlane(hhg) => hhg.heap_bytes(),
            BroadState::HhgScenePlane(hhg) => hhg.heap_bytes(),
            BroadState::Sap(sap) => sap.heap_bytes(),
            #[cfg(feature = "parry")]
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
    use crate::broadphase::Aabb;
    use crate::broadphase::scenario::{Scenario, plane_box};

    #[test]
    fn engine_names_round_trip() {
        for engine in BroadEngine::ALL {
            assert_eq!(engine.name().parse::<BroadEngine>(), Ok(engine));
        }
        assert!("kiddo".parse::<BroadEngine>().is_err());
        assert!(BroadEngine::Brute.accepts(BRUTE_MAX_N) && !BroadEngine::Brute.accepts(20_001));
    }

    #[test]
    fn plane_engines_agree_with_brute_force_on_degenerate_rectangles() {
        // Touching, identical, zero-size and negative rectangles, with `z` from 0 to 0.
        let boxes: Vec<Aabb<f32>> = crate::broadphase::degenerate_boxes(8)
            .into_iter()
            .map(|b| Aabb {
                min: [b.min[0], b.min[1], 0.0],
                max: [b.max[0], b.max[1], 0.0],
            })
            .collect();
        let plane: Vec<_> = boxes.iter().map(plane_box).collect();
        let mut want = Vec::new();
        brute::all_pairs(&boxes, &mut want);
        assert!(want.len() > 2000, "{}", want.len());
        let sorted = |mut pairs: Vec<[u32; 2]>| {
            pairs.sort_unstable();
            pairs
        };
        let mut hhg = HhgBroadPhase::<2>::default();
        hhg.build(&plane).unwrap();
        let mut got = Vec::new();
        hhg.pairs(&mut got).unwrap();
        assert_eq!(sorted(got.clone()), want, "hhg");
        let mut sap = SweepAndPrune::default();
        sap.update(&boxes);
        sap.pairs(&mut got);
        assert_eq!(sorted(got.clone()), want, "sap");
        #[cfg(feature = "parry")]
        {
            let mut parry = ParryBvh2::new();
            parry.setup(&boxes);
            parry.pairs(&boxes, &mut got);
            assert_eq!(sorted(got.clone()), want, "parry");
        }
    }

    #[test]
    fn every_engine_agrees_with_brute_force_step_by_step() {
        for scene in BroadScene::ALL.into_iter().chain(BroadScene::PLANE) {
            let engines: Vec<BroadEngine> = BroadEngine::ALL
                .into_iter()
                .filter(|e| e.takes(scene).is_ok())
                .collect();
            let mut scenarios: Vec<Scenario> = engines
                .iter()
                .map(|_| Scenario::generate(scene, 2500, 77))
                .collect();
            let mut states: Vec<BroadState> =
                engines.iter().map(|e| e.state(scene).unwrap()).collect();
            let mut out = Vec::new();
            for step in 0..4 {
                let mut stats = Vec::new();
                for (scenario, state) in scenarios.iter_mut().zip(&mut states) {
                    if step > 0 {
                        scenario.step();
                    }
                    state.update(scenario, step == 0).unwrap();
                    state.pairs(scenario, &mut out).unwrap();
                    stats.push(PairListStats::of(&out));
                }
                assert!(stats[0].pairs > 200 && stats[0].is_consistent(), "{scene}");
                assert!(
                    stats.iter().all(|s| *s == stats[0]),
                    "{scene} step {step}: {stats:?}"
                );
            }
        }
        assert!(BroadEngine::Parry.takes(BroadScene::Huge).is_err());
        assert!(BroadEngine::Parry.takes(BroadScene::Cuboids2d).is_ok() == cfg!(feature = "parry"));
        assert!(matches!(
            BroadEngine::Hhg.state(BroadScene::StaticHeavy2d),
            Ok(BroadState::HhgScenePlane(_))
        ));
        assert!(matches!(
            BroadEngine::Hhg.state(BroadScene::Cuboids2d),
            Ok(BroadState::HhgPlane(_))
        ));
        assert!(BroadEngine::Sap.takes(BroadScene::Huge).is_ok());
    }
}
