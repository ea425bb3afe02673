//! The benchmark scenario of Schornbaum's thesis (§4): random moving cuboids in a periodic box.
//!
//! `n` axis-aligned cuboids have edges drawn independently and uniformly from
//! [`EDGE_MIN`]`..`[`EDGE_MAX`], so objects differ in size by up to a factor of 12, as in the
//! thesis's scenario with several grid levels. Their lower corners are uniform in a cube of
//! edge [`Scenario::box_edge`], chosen so that there are [`OVERLAPS_PER_OBJECT`] overlapping pairs
//! per object on average (the thesis's density: twice as many pairs as objects). Every object
//! moves at a constant velocity in a random direction, its speed uniform between zero and
//! [`MAX_STEP_FRACTION`] of its size (its longest edge) per step; lower corners that leave the
//! cube re-enter on the other side.
//!
//! Only the motion is periodic: detection is not. A box whose lower corner lies near the upper
//! face of the cube sticks out of it and is not wrapped around, and pairs that would overlap
//! only across the periodic boundary are not counted. The cube's edge accounts for this, so the
//! density holds for the pairs the engines actually report. Measured over 10 seeds of 5 steps
//! each (2 seeds above 20k boxes): 1.989 pairs per box at 1k boxes, 2.006 at 5k, 1.997 at 20k,
//! 1.995 at 100k and 1.999 at 1M; the unit test checks 2.0 within 0.1 at 3k.
//!
//! Three variants stress other sides of a broad phase ([`BroadScene`]): long `10 x 1 x 1`
//! objects along random axes (a cube sized for the same 2 pairs per object), a static-heavy
//! scene (the thesis's cuboids, of which 90 % never move), and huge objects mixed in (the
//! thesis's cuboids plus 8 motionless boxes of a quarter to half the cube's edge and 2
//! infinite slabs, a floor and a wall).
//!
//! Two scenes lie in the plane ([`BroadScene::PLANE`]): the cuboids and the static-heavy scene
//! as rectangles in a square, by the same rules in two dimensions (edges in
//! [`EDGE_MIN`]`..`[`EDGE_MAX`], 2 pairs per object, directions uniform in the plane). Their
//! boxes are also kept as 3-D boxes with `z` from 0 to 0 ([`Scenario::boxes`]), on which the
//! engines that know no plane (sort-and-sweep, brute force) find the same pairs, since every
//! such `z` interval overlaps every other; hhg and parry take the plane boxes
//! ([`Scenario::plane_boxes`]).

use std::fmt;
use std::str::FromStr;

use hhg_core::broad::Aabb2;

use crate::broadphase::Aabb;
use crate::rng::{Rng, splitmix64};

/// The broad-phase scenes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BroadScene {
    /// The thesis's moving cuboids.
    Cuboids,
    /// Long `10 x 1 x 1` objects along a random axis each.
    Long,
    /// The thesis's cuboids, 90 % of them static ([`STATIC_FRACTION`]); static objects are
    /// never paired with each other.
    StaticHeavy,
    /// The thesis's cuboids plus [`HUGE_FINITE`] motionless huge boxes and [`HUGE_INFINITE`]
    /// infinite slabs.
    Huge,
    /// [`BroadScene::Cuboids`] in the plane: rectangles in a square (issue 25).
    Cuboids2d,
    /// [`BroadScene::StaticHeavy`] in the plane: rectangles in a square, 90 % of them static.
    StaticHeavy2d,
}

impl BroadScene {
    /// All broad-phase scenes, in the order the runner uses.
    pub const ALL: [BroadScene; 4] = [
        BroadScene::Cuboids,
        BroadScene::Long,
        BroadScene::StaticHeavy,
        BroadScene::Huge,
    ];

    /// The scenes in the plane (not among [`BroadScene::ALL`], the default runs: named with
    /// `--scene`).
    pub const PLANE: [BroadScene; 2] = [BroadScene::Cuboids2d, BroadScene::StaticHeavy2d];

    /// The scene's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            BroadScene::Cuboids => "cuboids",
            BroadScene::Long => "long",
            BroadScene::StaticHeavy => "static",
            BroadScene::Huge => "huge",
            BroadScene::Cuboids2d => "cuboids2d",
            BroadScene::StaticHeavy2d => "static2d",
        }
    }

    /// The number of axes the scene's boxes extend and move along: 2 in the plane, else 3.
    pub fn dimensions(self) -> usize {
        if BroadScene::PLANE.contains(&self) {
            2
        } else {
            3
        }
    }

    /// Whether some boxes have infinite bounds.
    pub fn has_infinite_boxes(self) -> bool {
        self == BroadScene::Huge
    }

    /// Whether static objects are excluded from pairing with each other.
    pub fn has_statics(self) -> bool {
        matches!(self, BroadScene::StaticHeavy | BroadScene::StaticHeavy2d)
    }
}

impl fmt::Display for BroadScene {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for BroadScene {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BroadScene::ALL
            .into_iter()
            .chain(BroadScene::PLANE)
            .find(|scene| scene.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown broad-phase scene `{s}` (expected cuboids, long, static, huge, \
                     cuboids2d or static2d)"
                )
            })
    }
}

/// The fraction of the static-heavy scene's objects that never move.
pub const STATIC_FRACTION: f64 = 0.9;

/// Motionless huge finite boxes in the huge scene (from 100 objects on).
pub const HUGE_FINITE: usize = 8;

/// Infinite slabs in the huge scene (from 100 objects on): the floor `z <= 1` and the wall
/// `x >= edge - 1`.
pub const HUGE_INFINITE: usize = 2;

/// The long edge of the long scene's objects; the other two are 1.
pub const LONG_EDGE: f64 = 10.0;

/// The shortest edge a cuboid can have.
pub const EDGE_MIN: f64 = 1.0;

/// The longest edge a cuboid can have: 12 times [`EDGE_MIN`].
pub const EDGE_MAX: f64 = 12.0;

/// The average number of overlapping pairs per object the cube's edge is chosen for.
pub const OVERLAPS_PER_OBJECT: f64 = 2.0;

/// The largest distance an object moves in one step, as a fraction of its longest edge.
pub const MAX_STEP_FRACTION: f64 = 0.2;

/// The edge of the cube that gives `n` objects [`OVERLAPS_PER_OBJECT`] overlapping pairs each.
///
/// With lower corners `x, y` uniform in `[0, L)` and edges `a, b`, the boxes overlap on one
/// axis iff `-b <= x - y <= a`, which has probability `(a + b) / L - (a^2 + b^2) / (2 L^2)`
/// (the difference of two uniform variables has a triangular density). Edges are independent
/// across axes and objects, so the expected overlap probability of a pair is `p^3` with
/// `p = 2 E[a] / L - E[a^2] / L^2`, and the expected pairs per object are `(n - 1) p^3 / 2`.
/// Setting that to [`OVERLAPS_PER_OBJECT`] gives a quadratic in `1 / L`, whose smaller root is
/// taken. The cube is never smaller than [`EDGE_MAX`], where the formula would stop holding;
/// below about a dozen objects the density is then lower than designed.
pub fn box_edge(n: usize) -> f64 {
    box_edge_in(n, 3)
}

/// The edge of the cube (`dimensions` 3) or square (`dimensions` 2) that gives `n` objects
/// [`OVERLAPS_PER_OBJECT`] overlapping pairs each: as [`box_edge`], with the pair's overlap
/// probability `p^dimensions`.
pub fn box_edge_in(n: usize, dimensions: usize) -> f64 {
    let mean = 0.5 * (EDGE_MIN + EDGE_MAX);
    let mean_sq = (EDGE_MAX.powi(3) - EDGE_MIN.powi(3)) / (3.0 * (EDGE_MAX - EDGE_MIN));
    let pairs_left = (n.max(2) - 1) as f64;
    let probability = 2.0 * OVERLAPS_PER_OBJECT / pairs_left;
    let p = if dimensions == 2 {
        probability.sqrt()
    } else {
        probability.cbrt()
    };
    // mean_sq x^2 - 2 mean x + p = 0 with x = 1 / L.
    let discriminant = (mean * mean - mean_sq * p).max(0.0);
    let x = (mean - discriminant.sqrt()) / mean_sq;
    (1.0 / x).max(EDGE_MAX)
}

/// The probability that two intervals of lengths `a` and `b` with lower ends uniform in
/// `[0, l)` overlap (closed), for `a + b <= l`.
fn interval_overlap(a: f64, b: f64, l: f64) -> f64 {
    ((a + b) / l - (a * a + b * b) / (2.0 * l * l)).clamp(0.0, 1.0)
}

/// The edge of the cube that gives `n` long objects [`OVERLAPS_PER_OBJECT`] overlapping pairs
/// each: the expected overlap probability of a pair, averaged over the two objects' axes (the
/// same axis with probability 1/3), set against `2 OVERLAPS_PER_OBJECT / (n - 1)`, solved by
/// bisection.
pub fn long_box_edge(n: usize) -> f64 {
    let (big, small) = (LONG_EDGE, 1.0);
    let probability = |l: f64| {
        let same = interval_overlap(big, big, l) * interval_overlap(small, small, l).powi(2);
        let other = interval_overlap(big, small, l).powi(2) * interval_overlap(small, small, l);
        (same + 2.0 * other) / 3.0
    };
    let target = 2.0 * OVERLAPS_PER_OBJECT / (n.max(2) - 1) as f64;
    let (mut lo, mut hi) = (2.0 * LONG_EDGE, 1e9f64);
    if probability(lo) <= target {
        return lo;
    }
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if probability(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}

/// The `x` and `y` of a box: its rectangle in the plane.
pub fn plane_box(b: &Aabb<f32>) -> Aabb2<f32> {
    Aabb2 {
        min: [b.min[0], b.min[1]],
        max: [b.max[0], b.max[1]],
    }
}

/// A value drawn by `draw` on each of the first `dimensions` axes, in axis order, and 0 on the
/// others (`z` in the plane).
fn on_axes(dimensions: usize, mut draw: impl FnMut() -> f64) -> [f64; 3] {
    std::array::from_fn(|axis| if axis < dimensions { draw() } else { 0.0 })
}

/// The moving cuboids of the scenario and their boxes for the current step.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Which scene this is.
    scene: BroadScene,
    /// The edge of the periodic cube.
    edge: f64,
    /// Lower corners, in `[0, edge)`.
    corners: Vec<[f64; 3]>,
    /// Edge lengths per axis.
    sizes: Vec<[f64; 3]>,
    /// Displacement per step.
    velocities: Vec<[f64; 3]>,
    /// Indices of the objects that move (all of them but the static and the huge ones).
    moving: Vec<u32>,
    /// Whether each object is static (only in the static-heavy scene).
    statics: Vec<bool>,
    /// Boxes with infinite bounds that replace the computed ones, with their indices.
    fixed: Vec<(u32, Aabb<f32>)>,
    /// The boxes of the current step, in `f32`.
    boxes: Vec<Aabb<f32>>,
    /// The boxes of the current step in the plane (their `x` and `y`), for a scene in the
    /// plane; empty otherwise.
    plane: Vec<Aabb2<f32>>,
    /// Steps taken since generation.
    steps: usize,
}

impl Scenario {
    /// The seed of the `n`-object scenario, derived from the run's base seed.
    pub fn seed(base: u64, n: usize) -> u64 {
        // A tag unlike any particle scene's keeps the streams apart.
        let mut s = base ^ (0xB0_u64 << 56) ^ n as u64;
        splitmix64(&mut s)
    }

    /// The seed of the `n`-object instance of `scene`, derived from the run's base seed; the
    /// cuboids keep [`Scenario::seed`].
    pub fn seed_for(scene: BroadScene, base: u64, n: usize) -> u64 {
        match scene {
            BroadScene::Cuboids => Self::seed(base, n),
            other => {
                let mut s = base ^ ((0xB0_u64 + other as u64) << 56) ^ n as u64;
                splitmix64(&mut s)
            }
        }
    }

    /// Generates `n` cuboids of the thesis scenario from `seed`.
    pub fn new(n: usize, seed: u64) -> Self {
        Self::generate(BroadScene::Cuboids, n, seed)
    }

    /// Generates `n` objects of `scene` from `seed`.
    pub fn generate(scene: BroadScene, n: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let dimensions = scene.dimensions();
        let edge = match scene {
            BroadScene::Long => long_box_edge(n),
            _ => box_edge_in(n, dimensions),
        };
        let mut corners = Vec::with_capacity(n);
        let mut sizes = Vec::with_capacity(n);
        let mut velocities = Vec::with_capacity(n);
        for _ in 0..n {
            corners.push(on_axes(dimensions, || rng.uniform(0.0, edge)));
            let size = match scene {
                BroadScene::Long => {
                    let axis = rng.below(3);
                    [0, 1, 2].map(|a| if a == axis { LONG_EDGE } else { 1.0 })
                }
                _ => on_axes(dimensions, || rng.uniform(EDGE_MIN, EDGE_MAX)),
            };
            // A uniform direction from a normalised Gaussian vector, a uniform speed below the cap.
            let direction = loop {
                let g = on_axes(dimensions, || rng.gaussian());
                let norm = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
                if norm > 1e-12 {
                    break g.map(|c| c / norm);
                }
            };
            let longest = size[0].max(size[1]).max(size[2]);
            let speed = rng.uniform(0.0, MAX_STEP_FRACTION * longest);
            velocities.push(direction.map(|c| c * speed));
            sizes.push(size);
        }
        let mut statics = Vec::new();
        let mut fixed = Vec::new();
        let mut still = vec![false; n];
        match scene {
            BroadScene::Cuboids | BroadScene::Long | BroadScene::Cuboids2d => {}
            BroadScene::StaticHeavy | BroadScene::StaticHeavy2d => {
                statics = (0..n).map(|_| rng.next_f64() < STATIC_FRACTION).collect();
                still.clone_from(&statics);
            }
            BroadScene::Huge if n >= 100 => {
                let specials = HUGE_FINITE + HUGE_INFINITE;
                for k in 0..specials {
                    let i = k * (n / specials);
                    still[i] = true;
                    if k < HUGE_FINITE {
                        sizes[i] = [0; 3].map(|_| rng.uniform(0.25 * edge, 0.5 * edge));
                    } else {
                        let inf = f32::INFINITY;
                        let slab = if k == HUGE_FINITE {
                            Aabb {
                                min: [-inf; 3],
                                max: [inf, inf, 1.0],
                            }
                        } else {
                            Aabb {
                                min: [(edge - 1.0) as f32, -inf, -inf],
                                max: [inf; 3],
                            }
                        };
                        fixed.push((i as u32, slab));
                    }
                }
            }
            BroadScene::Huge => {}
        }
        for (velocity, &still) in velocities.iter_mut().zip(&still) {
            if still {
                *velocity = [0.0; 3];
            }
        }
        let moving = (0..n as u32).filter(|&i| !still[i as usize]).collect();
        let mut scenario = Self {
            scene,
            edge,
            corners,
            sizes,
            velocities,
            moving,
            statics,
            fixed,
            boxes: Vec::with_capacity(n),
            plane: Vec::new(),
            steps: 0,
        };
        scenario.refresh_boxes();
        scenario
    }

    /// Which scene this is.
    pub fn scene(&self) -> BroadScene {
        self.scene
    }

    /// The indices of the objects that move, ascending.
    pub fn moving(&self) -> &[u32] {
        &self.moving
    }

    /// Whether each object is static (never moves and is never paired with another static
    /// object); empty unless the scene has statics.
    pub fn statics(&self) -> &[bool] {
        &self.statics
    }

    /// The edge of the periodic cube.
    pub fn box_edge(&self) -> f64 {
        self.edge
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.corners.len()
    }

    /// Whether there is no object.
    pub fn is_empty(&self) -> bool {
        self.corners.is_empty()
    }

    /// Steps taken since generation.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The boxes of the current step, in the objects' fixed numbering (in the plane with `z`
    /// from 0 to 0).
    pub fn boxes(&self) -> &[Aabb<f32>] {
        &self.boxes
    }

    /// The boxes of the current step in the plane, in the objects' fixed numbering: the `x`
    /// and `y` of [`Scenario::boxes`] for a scene in the plane (updated with them, outside any
    /// engine's clock), empty for the other scenes.
    pub fn plane_boxes(&self) -> &[Aabb2<f32>] {
        &self.plane
    }

    /// Moves every object by its velocity, wraps the lower corners into the cube and recomputes
    /// the boxes.
    pub fn step(&mut self) {
        let edge = self.edge;
        for &i in &self.moving {
            let (corner, velocity) = (&mut self.corners[i as usize], &self.velocities[i as usize]);
            for a in 0..3 {
                let moved = (corner[a] + velocity[a]).rem_euclid(edge);
                // `rem_euclid` can round up to `edge` itself for tiny negative inputs.
                corner[a] = if moved >= edge { 0.0 } else { moved };
            }
        }
        self.steps += 1;
        self.refresh_boxes();
    }

    /// Recomputes the `f32` boxes from the corners and sizes.
    fn refresh_boxes(&mut self) {
        self.boxes.clear();
        self.boxes.extend(
            self.corners
                .iter()
                .zip(&self.sizes)
                .map(|(corner, size)| Aabb {
                    min: corner.map(|c| c as f32),
                    max: [0, 1, 2].map(|a| (corner[a] + size[a]) as f32),
                }),
        );
        for &(i, aabb) in &self.fixed {
            self.boxes[i as usize] = aabb;
        }
        if self.scene.dimensions() == 2 {
            self.plane.clear();
            self.plane.extend(self.boxes.iter().map(plane_box));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broadphase::brute;

    #[test]
    fn same_seed_same_boxes_and_motion() {
        let mut a = Scenario::new(1000, 5);
        let mut b = Scenario::new(1000, 5);
        let c = Scenario::new(1000, 6);
        assert_eq!(a.boxes(), b.boxes());
        assert_ne!(a.boxes(), c.boxes());
        for _ in 0..3 {
            a.step();
            b.step();
        }
        assert_eq!(a.boxes(), b.boxes());
        assert_eq!(a.steps(), 3);
        assert_ne!(a.boxes(), Scenario::new(1000, 5).boxes());
        assert_ne!(Scenario::seed(1, 1000), Scenario::seed(1, 1001));
    }

    #[test]
    fn boxes_have_their_sizes_and_move_within_bounds() {
        let mut scenario = Scenario::new(2000, 9);
        let edge = scenario.box_edge() as f32;
        let before = scenario.boxes().to_vec();
        let check = |boxes: &[Aabb<f32>]| {
            for b in boxes {
                for a in 0..3 {
                    let size = b.max[a] - b.min[a];
                    assert!((0.0..edge).contains(&b.min[a]), "{b:?}");
                    assert!(
                        size >= EDGE_MIN as f32 * 0.999 && size <= EDGE_MAX as f32 * 1.001,
                        "{b:?}"
                    );
                }
            }
        };
        check(&before);
        for _ in 0..50 {
            scenario.step();
            check(scenario.boxes());
        }
        // One step moves no box by more than a fifth of its longest edge (modulo the wrap).
        let mut one = Scenario::new(2000, 9);
        one.step();
        for (b, a) in before.iter().zip(one.boxes()) {
            let longest = (0..3).map(|k| b.max[k] - b.min[k]).fold(0.0f32, f32::max);
            let moved: f32 = (0..3)
                .map(|k| {
                    let d = (a.min[k] - b.min[k]).abs();
                    let d = d.min(edge - d);
                    d * d
                })
                .sum::<f32>()
                .sqrt();
            assert!(moved <= MAX_STEP_FRACTION as f32 * longest * 1.001 + 1e-3);
        }
        // Sizes span most of the designed 12x range.
        let longest: Vec<f32> = before
            .iter()
            .map(|b| (0..3).map(|k| b.max[k] - b.min[k]).fold(0.0, f32::max))
            .collect();
        let shortest: Vec<f32> = before
            .iter()
            .map(|b| (0..3).map(|k| b.max[k] - b.min[k]).fold(f32::MAX, f32::min))
            .collect();
        let big = longest.iter().copied().fold(0.0, f32::max);
        let small = shortest.iter().copied().fold(f32::MAX, f32::min);
        assert!(big / small > 10.0, "{small}..{big}");
    }

    #[test]
    fn density_is_two_overlaps_per_object() {
        // Brute force over several seeds and steps; the designed mean is 2.0 pairs per object.
        let n = 3000;
        let mut total = 0u64;
        let mut samples = 0u64;
        for seed in 0..4 {
            let mut scenario = Scenario::new(n, seed);
            for _ in 0..3 {
                let mut pairs = Vec::new();
                brute::all_pairs(scenario.boxes(), &mut pairs);
                total += pairs.len() as u64;
                samples += 1;
                scenario.step();
            }
        }
        let per_object = total as f64 / (samples as f64 * n as f64);
        assert!(
            (per_object - OVERLAPS_PER_OBJECT).abs() < 0.1,
            "{per_object} overlaps per object"
        );
    }

    #[test]
    fn the_other_scenes_have_their_shapes() {
        let n = 3000;
        let long = Scenario::generate(BroadScene::Long, n, 1);
        for b in long.boxes() {
            let mut edges = [0, 1, 2].map(|a| b.max[a] - b.min[a]);
            edges.sort_by(f32::total_cmp);
            assert!((edges[2] - 10.0).abs() < 1e-3 && (edges[0] - 1.0).abs() < 1e-3);
        }
        // About two pairs per object.
        let mut pairs = Vec::new();
        brute::all_pairs(long.boxes(), &mut pairs);
        let per = pairs.len() as f64 / n as f64;
        assert!((per - OVERLAPS_PER_OBJECT).abs() < 0.25, "{per}");

        let mut statics = Scenario::generate(BroadScene::StaticHeavy, n, 2);
        let still = statics.statics().iter().filter(|&&s| s).count();
        assert!((still as f64 / n as f64 - STATIC_FRACTION).abs() < 0.03);
        assert_eq!(statics.moving().len(), n - still);
        let before = statics.boxes().to_vec();
        statics.step();
        for (i, (a, b)) in before.iter().zip(statics.boxes()).enumerate() {
            assert_eq!(a == b, statics.statics()[i], "object {i}");
        }

        let mut huge = Scenario::generate(BroadScene::Huge, n, 3);
        let infinite = |s: &Scenario| {
            s.boxes()
                .iter()
                .filter(|b| b.min.iter().chain(&b.max).any(|c| c.is_infinite()))
                .count()
        };
        assert_eq!(infinite(&huge), HUGE_INFINITE);
        huge.step();
        assert_eq!(infinite(&huge), HUGE_INFINITE);
        assert_eq!(huge.moving().len(), n - HUGE_FINITE - HUGE_INFINITE);
        assert_eq!(
            Scenario::generate(BroadScene::Huge, 50, 3).moving().len(),
            50
        );
        for scene in BroadScene::ALL {
            assert_eq!(scene.name().parse::<BroadScene>(), Ok(scene));
        }
        assert_ne!(
            Scenario::seed_for(BroadScene::Long, 1, 10),
            Scenario::seed_for(BroadScene::Huge, 1, 10)
        );
        assert_eq!(
            Scenario::seed_for(BroadScene::Cuboids, 1, 10),
            Scenario::seed(1, 10)
        );
    }

    #[test]
    fn the_plane_scenes_have_their_shapes_and_density() {
        let n = 3000;
        for scene in BroadScene::PLANE {
            assert_eq!(scene.name().parse::<BroadScene>(), Ok(scene));
            assert_eq!(scene.dimensions(), 2);
            let mut total = 0u64;
            for seed in 0..4 {
                let mut scenario = Scenario::generate(scene, n, seed);
                let edge = scenario.box_edge() as f32;
                for _ in 0..3 {
                    let (boxes, plane) = (scenario.boxes(), scenario.plane_boxes());
                    assert_eq!(plane.len(), n);
                    for (b, p) in boxes.iter().zip(plane) {
                        assert_eq!((b.min[2], b.max[2]), (0.0, 0.0));
                        assert_eq!((p.min, p.max), ([b.min[0], b.min[1]], [b.max[0], b.max[1]]));
                        for a in 0..2 {
                            let size = b.max[a] - b.min[a];
                            assert!((0.0..edge).contains(&b.min[a]), "{b:?}");
                            assert!(size >= 0.999 && size <= EDGE_MAX as f32 * 1.001, "{b:?}");
                        }
                    }
                    let mut pairs = Vec::new();
                    brute::all_pairs(boxes, &mut pairs);
                    total += pairs.len() as u64;
                    scenario.step();
                }
            }
            // About two pairs per object, as in 3-D.
            let per_object = total as f64 / (12.0 * n as f64);
            assert!(
                (per_object - OVERLAPS_PER_OBJECT).abs() < 0.15,
                "{scene}: {per_object} overlaps per object"
            );
        }
        let statics = Scenario::generate(BroadScene::StaticHeavy2d, n, 2);
        let still = statics.statics().iter().filter(|&&s| s).count();
        assert!((still as f64 / n as f64 - STATIC_FRACTION).abs() < 0.03);
        assert_eq!(statics.moving().len(), n - still);
        assert!(Scenario::new(10, 1).plane_boxes().is_empty());
        assert!((box_edge_in(4_000_000, 2) / box_edge_in(1_000_000, 2) - 2.0).abs() < 0.01);
        assert_eq!(box_edge_in(1000, 3), box_edge(1000));
    }

    #[test]
    fn box_edge_grows_with_the_cube_root_of_n() {
        let ratio = box_edge(8_000_000) / box_edge(1_000_000);
        assert!((ratio - 2.0).abs() < 0.01, "{ratio}");
        assert!(box_edge(1) >= EDGE_MAX && box_edge(0) >= EDGE_MAX);
    }
}
