//! Seeded, deterministic benchmark scenes: uniform, SPH dam break, Gaussian clusters, a thin
//! sheet, a cube with one far outlier, particles whose radii spread over 8x or 100x, a frame
//! of hhg-sph's dam-break simulation, and the 2-D scenes in the plane `z = 0` (uniform, dam
//! break with walls, radii over 8x and 100x).
//!
//! Every fixed-radius scene but `sph` uses the search radius [`RADIUS`]; `sph` searches within
//! its kernel support ([`sph_radius`]) and the variable-radius scene gives each particle its
//! own radius ([`Scene::data`]). Points are returned in random order (shuffled with the seeded
//! generator), so an engine cannot profit from the generator's spatial order; the `-sorted`
//! cases reorder the points explicitly, and the `sph` scene keeps its solver's numbering in
//! [`SceneData::solver_order`].

use std::fmt;
use std::str::FromStr;

use hhg_sph::{DamBreak, Simulation, Wendland};

use crate::rng::{Rng, splitmix64};

/// The search radius of every generated scene.
pub const RADIUS: f32 = 1.0;

/// The expected neighbour count of the uniform scene away from its faces.
pub const UNIFORM_NEIGHBORS: f64 = 40.0;

/// The expected neighbour count of the 2-D uniform scene away from its edges.
pub const UNIFORM2D_NEIGHBORS: f64 = 25.0;

/// The average neighbour count the clustered scene is tuned for.
pub const CLUSTERED_NEIGHBORS: f64 = 30.0;

/// The number of Gaussian clusters in the clustered scene.
pub const CLUSTERS: usize = 50;

/// The ratio of the largest to the smallest cluster standard deviation.
pub const CLUSTER_SIGMA_SPREAD: f64 = 30.0;

/// The side of the (mostly empty) box the clusters are placed in, in units of the radius.
pub const CLUSTER_BOX_SIDE: f64 = 1.0e4;

/// The sheet scene's ratio of its side to its thickness.
pub const SHEET_ANISOTROPY: f64 = 1024.0;

/// The expected neighbour count of the sheet scene (fewer near its edges).
pub const SHEET_NEIGHBORS: f64 = 40.0;

/// Where the outlier scene's far point lies, on every axis: a million radii from the cube.
pub const OUTLIER_COORD: f32 = 1.0e6;

/// The smallest radius of the variable-radius scene.
pub const VARIABLE_MIN_RADIUS: f32 = 0.25;

/// The largest radius of the variable-radius scene: 8 times the smallest.
pub const VARIABLE_MAX_RADIUS: f32 = 2.0;

/// The smallest radius of the `variable100` scene: its largest, [`VARIABLE_MAX_RADIUS`], is
/// 100 times larger.
pub const VARIABLE100_MIN_RADIUS: f32 = 0.02;

/// The mean neighbour count the variable-radius scenes are tuned for (rule `max(ri, rj)`),
/// in 3-D and in the plane.
pub const VARIABLE_NEIGHBORS: f64 = 40.0;

/// The lattice spacing of the 2-D dam break in units of the radius: `r = 2h` with
/// `h = 1.3 dx` (hhg-sph's smoothing ratio), so `dx = r / 2.6` and a fluid particle sees about
/// `pi 2.6^2 - 1`, 20, neighbours.
pub const DAMBREAK2D_SPACING: f64 = 1.0 / 2.6;

/// The layers of wall particles of the 2-D dam break (hhg-sph's `ceil(2 * 1.3)`).
pub const DAMBREAK2D_WALL_LAYERS: usize = 3;

/// The solver steps hhg-sph's dam break runs before the `sph` scene takes its frame.
///
/// The solver renumbers its fluid in cell order at set-up and then every
/// `DamBreak::reorder_every` steps (10 by default, so after steps 10 and 20); after 25 steps
/// the fluid has moved for five steps since its last reorder, halfway between two.
pub const SPH_STEPS: usize = 25;

/// A benchmark scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scene {
    /// Points uniform in a cube, about [`UNIFORM_NEIGHBORS`] neighbours per point.
    Uniform,
    /// An SPH dam-break fluid block: a jittered cubic lattice of spacing `h = r / 2`.
    Dambreak,
    /// [`CLUSTERS`] Gaussian clusters of very different sizes in a huge empty box.
    Clustered,
    /// A thin sheet, [`SHEET_ANISOTROPY`] times wider than thick, about [`SHEET_NEIGHBORS`]
    /// neighbours per point.
    Sheet,
    /// The uniform cube plus one point [`OUTLIER_COORD`] away on every axis.
    Outlier,
    /// Points uniform in a cube, radii log-uniform over [`VARIABLE_MIN_RADIUS`] to
    /// [`VARIABLE_MAX_RADIUS`], neighbours by `|xi - xj| <= max(ri, rj)`, about
    /// [`VARIABLE_NEIGHBORS`] on average.
    Variable,
    /// Points uniform in a cubic box periodic along all three axes, about
    /// [`UNIFORM_NEIGHBORS`] neighbours per point by the minimum-image rule (SPH periodic
    /// channels, atomistic systems). Declared after the older scenes so that they keep their
    /// seeds.
    Periodic,
    /// One frame of hhg-sph's dam break, fluid and walls, in the solver's own numbering.
    ///
    /// `hhg_sph::Simulation` runs `hhg_sph::DamBreak::with_particles(p)` (a 0.6 m x 0.6 m x
    /// 0.3 m water column in a 1.6 m x 0.6 m x 0.6 m tank, spacing `dx`, `h = 1.3 dx`, three
    /// layers of boundary particles) for [`SPH_STEPS`] steps; the cloud is then the fluid
    /// positions followed by the boundary positions, in metres, converted to `f32`, and the
    /// radius is the kernel support `2h` ([`sph_radius`]): about 75 neighbours per fluid
    /// particle, fluid and walls. `p` is chosen so that fluid and walls together come closest
    /// to the requested count ([`sph_fluid_particles`]); the walls are most of the points at
    /// small counts (about 88 % at 10k points, 68 % at 100k, 43 % at 1M). After 25 steps (a
    /// few milliseconds of simulated time) the fluid has moved by less than a tenth of a
    /// spacing from its initial lattice.
    ///
    /// The solver's numbering is nearly cell order: the fluid in the cell order of the grid
    /// of the solver's last reorder, five steps earlier, then the walls in the cell order of
    /// their own grid (both grids of the solver's search, whose radius is this scene's). Like
    /// every scene, the points come shuffled (the `sph-random` case);
    /// [`SceneData::solver_order`] holds the solver's numbering, which the runner measures as
    /// the `sph-solver` case. The simulation itself has no randomness: the seed only draws the
    /// shuffle. Declared after the older scenes so that they keep their seeds.
    Sph,
    /// Like [`Scene::Variable`] with radii log-uniform over 100x, [`VARIABLE100_MIN_RADIUS`]
    /// to [`VARIABLE_MAX_RADIUS`] (seven levels of the hierarchy instead of four). Declared
    /// last so that the other scenes keep their seeds.
    Variable100,
    /// Points uniform in a square in the plane `z = 0`, about [`UNIFORM2D_NEIGHBORS`]
    /// neighbours per point (issue 25): hhg runs its plane grid (`hhg_core::plane::Grid2`) and
    /// kiddo its 2-D tree on them. Not among [`Scene::ALL`] (the default runs); named on the
    /// command line (`--scene uniform2d`), like every scene of [`Scene::PLANE`]. Declared
    /// after the 3-D scenes so that they keep their seeds.
    Uniform2d,
    /// A 2-D dam break in the plane `z = 0`: a jittered fluid column on a square lattice of
    /// spacing [`DAMBREAK2D_SPACING`] (width : height = 1 : 2) standing in the left third of a
    /// tank, and [`DAMBREAK2D_WALL_LAYERS`] layers of wall particles on an exact lattice below
    /// and beside the tank; about 20 neighbours per fluid particle. hhg runs `Grid2`, kiddo its
    /// 2-D tree.
    Dambreak2d,
    /// Like [`Scene::Variable`] in the plane `z = 0`: points uniform in a square, radii
    /// log-uniform over 8x, about [`VARIABLE_NEIGHBORS`] neighbours on average by the rule
    /// `max(ri, rj)`. hhg runs `VariableRadiusSearch2`, kiddo its 2-D tree within the largest
    /// radius.
    Variable2d,
    /// Like [`Scene::Variable2d`] with radii log-uniform over 100x, as [`Scene::Variable100`].
    Variable100Plane,
}

/// The points of a generated scene and its radius rule.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneData {
    /// The points, in random order.
    pub points: Vec<[f32; 3]>,
    /// The search radius of a fixed-radius scene; the largest radius of a variable one.
    pub radius: f32,
    /// Whether every point lies in the plane `z = 0` and the engines may search in 2-D (the
    /// 2-D scenes).
    pub plane: bool,
    /// One radius per point for the variable-radius scene, `None` for fixed-radius ones.
    pub radii: Option<Vec<f32>>,
    /// The edge lengths of the periodic box `0..L` of the periodic scene (every point lies
    /// inside it), `None` for open scenes.
    pub periodic: Option<[f32; 3]>,
    /// The generator's own numbering, for a scene that has one ([`Scene::Sph`], the solver's
    /// numbering): `solver_order[k]` is the index in `points` of the generator's point `k`, so
    /// `hhg_core::reorder::apply_order` with it puts the points back into that numbering.
    /// `None` for the other scenes, and for points put into another order.
    pub solver_order: Option<Vec<u32>>,
}

impl Scene {
    /// All scenes, in the order the runner uses.
    pub const ALL: [Scene; 9] = [
        Scene::Uniform,
        Scene::Dambreak,
        Scene::Clustered,
        Scene::Sheet,
        Scene::Outlier,
        Scene::Periodic,
        Scene::Variable,
        Scene::Variable100,
        Scene::Sph,
    ];

    /// The 2-D scenes, in the plane `z = 0` (not among [`Scene::ALL`]: named with `--scene`).
    pub const PLANE: [Scene; 4] = [
        Scene::Uniform2d,
        Scene::Dambreak2d,
        Scene::Variable2d,
        Scene::Variable100Plane,
    ];

    /// The scenes every hashing scheme runs on by default.
    pub const SCHEME_DEFAULT: [Scene; 3] = [Scene::Uniform, Scene::Dambreak, Scene::Clustered];

    /// The scene's name as used on the command line and in case names.
    pub fn name(self) -> &'static str {
        match self {
            Scene::Uniform => "uniform",
            Scene::Dambreak => "dambreak",
            Scene::Clustered => "clustered",
            Scene::Sheet => "sheet",
            Scene::Outlier => "outlier",
            Scene::Periodic => "periodic",
            Scene::Variable => "variable",
            Scene::Variable100 => "variable100",
            Scene::Sph => "sph",
            Scene::Uniform2d => "uniform2d",
            Scene::Dambreak2d => "dambreak2d",
            Scene::Variable2d => "variable2d",
            Scene::Variable100Plane => "variable100-2d",
        }
    }

    /// Whether the scene comes with a numbering of its own besides the shuffled one
    /// ([`SceneData::solver_order`]), which the runner measures as the `-solver` case.
    pub fn has_solver_order(self) -> bool {
        self == Scene::Sph
    }

    /// Whether the scene's box is periodic (only engines with minimum-image search run on it).
    pub fn is_periodic(self) -> bool {
        self == Scene::Periodic
    }

    /// Whether every engine and hashing scheme can run on the scene: one radius, open space.
    pub fn is_plain(self) -> bool {
        !self.is_variable() && !self.is_periodic()
    }

    /// Whether the scene lies in the plane `z = 0`, searched in 2-D where an engine can.
    pub fn is_plane(self) -> bool {
        Scene::PLANE.contains(&self)
    }

    /// Whether the points have radii of their own.
    pub fn is_variable(self) -> bool {
        self.min_radius().is_some()
    }

    /// The smallest radius of a variable-radius scene (its largest is
    /// [`VARIABLE_MAX_RADIUS`]), `None` for fixed-radius scenes.
    pub fn min_radius(self) -> Option<f32> {
        match self {
            Scene::Variable | Scene::Variable2d => Some(VARIABLE_MIN_RADIUS),
            Scene::Variable100 | Scene::Variable100Plane => Some(VARIABLE100_MIN_RADIUS),
            _ => None,
        }
    }

    /// The search radius of a fixed-radius scene of about `n` points (only that of `sph`
    /// depends on `n`); the largest radius of the variable one.
    pub fn radius(self, n: usize) -> f32 {
        match self {
            _ if self.is_variable() => VARIABLE_MAX_RADIUS,
            Scene::Sph => sph_radius(n),
            _ => RADIUS,
        }
    }

    /// Generates `n` points of this scene from `seed` with their radius rule (about `n` for
    /// `sph`, see [`Scene::Sph`]).
    ///
    /// # Panics
    /// If hhg-sph's dam break of the `sph` scene fails (the simulation blew up, or too many
    /// particles for the search).
    pub fn data(self, n: usize, seed: u64) -> SceneData {
        if let Some(min_radius) = self.min_radius() {
            let (points, radii) = variable(n, min_radius, self.dimensions(), &mut Rng::new(seed));
            return SceneData {
                points,
                radius: VARIABLE_MAX_RADIUS,
                plane: self.is_plane(),
                radii: Some(radii),
                periodic: None,
                solver_order: None,
            };
        }
        if self == Scene::Sph {
            let (points, radius, solver_order) = sph(n, &mut Rng::new(seed));
            return SceneData {
                points,
                radius,
                plane: false,
                radii: None,
                periodic: None,
                solver_order: Some(solver_order),
            };
        }
        SceneData {
            points: self.generate(n, seed),
            radius: RADIUS,
            plane: self.is_plane(),
            radii: None,
            periodic: self.is_periodic().then(|| [periodic_side(n); 3]),
            solver_order: None,
        }
    }

    /// The number of coordinates the scene's points vary in: 2 in the plane, else 3.
    pub fn dimensions(self) -> usize {
        if self.is_plane() { 2 } else { 3 }
    }

    /// The seed for `n` points of this scene, derived from the run's base seed.
    pub fn seed(self, base: u64, n: usize) -> u64 {
        let mut s = base ^ ((self as u64 + 1) << 56) ^ n as u64;
        splitmix64(&mut s)
    }

    /// Generates `n` points of this scene from `seed`, in random order.
    ///
    /// The variable-radius scene's points are those of [`Scene::data`], without their radii
    /// (they are drawn independently, so already in random order); the `sph` scene's are those
    /// of [`Scene::data`] too (about `n` of them), without their radius and solver order.
    ///
    /// # Panics
    /// As [`Scene::data`].
    pub fn generate(self, n: usize, seed: u64) -> Vec<[f32; 3]> {
        let mut rng = Rng::new(seed);
        if let Some(min_radius) = self.min_radius() {
            return variable(n, min_radius, self.dimensions(), &mut rng).0;
        }
        if self == Scene::Sph {
            return sph(n, &mut rng).0;
        }
        let mut points = match self {
            Scene::Uniform => uniform(n, &mut rng),
            Scene::Dambreak => dambreak(n, &mut rng),
            Scene::Clustered => clustered(n, &mut rng),
            Scene::Sheet => sheet(n, &mut rng),
            Scene::Outlier => outlier(n, &mut rng),
            Scene::Periodic => periodic(n, &mut rng),
            Scene::Uniform2d => uniform2d(n, &mut rng),
            Scene::Dambreak2d => dambreak2d(n, &mut rng),
            Scene::Variable
            | Scene::Variable100
            | Scene::Variable2d
            | Scene::Variable100Plane
            | Scene::Sph => unreachable!("returned above"),
        };
        rng.shuffle(&mut points);
        points
    }
}

impl fmt::Display for Scene {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Scene {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scene::ALL
            .into_iter()
            .chain(Scene::PLANE)
            .find(|scene| scene.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown scene `{s}` (expected uniform, dambreak, clustered, sheet, outlier, \
                     periodic, variable, variable100, sph, uniform2d, dambreak2d, variable2d or \
                     variable100-2d)"
                )
            })
    }
}

/// The volume of the ball of radius [`RADIUS`].
fn ball_volume() -> f64 {
    4.0 / 3.0 * std::f64::consts::PI * f64::from(RADIUS).powi(3)
}

/// The side of the uniform scene's cube for `n` points.
pub fn uniform_side(n: usize) -> f64 {
    let density = UNIFORM_NEIGHBORS / ball_volume();
    (n as f64 / density).cbrt()
}

/// Points uniform in a cube whose density gives [`UNIFORM_NEIGHBORS`] expected neighbours.
fn uniform(n: usize, rng: &mut Rng) -> Vec<[f32; 3]> {
    let side = uniform_side(n);
    (0..n)
        .map(|_| {
            [
                rng.uniform(0.0, side) as f32,
                rng.uniform(0.0, side) as f32,
                rng.uniform(0.0, side) as f32,
            ]
        })
        .collect()
}

/// The side of the 2-D uniform scene's square for `n` points.
pub fn uniform2d_side(n: usize) -> f64 {
    let density = UNIFORM2D_NEIGHBORS / (std::f64::consts::PI * f64::from(RADIUS).powi(2));
    (n as f64 / density).sqrt()
}

/// Points uniform in a square in the plane `z = 0` whose density gives
/// [`UNIFORM2D_NEIGHBORS`] expected neighbours.
fn uniform2d(n: usize, rng: &mut Rng) -> Vec<[f32; 3]> {
    let side = uniform2d_side(n);
    (0..n)
        .map(|_| {
            [
                rng.uniform(0.0, side) as f32,
                rng.uniform(0.0, side) as f32,
                0.0,
            ]
        })
        .collect()
}

/// The edge of the periodic scene's cubic box for `n` points: the uniform scene's side, but at
/// least `2.5 r`, so that the box stays longer than the `2 r` that minimum-image search needs.
pub fn periodic_side(n: usize) -> f32 {
    uniform_side(n).max(2.5 * f64::from(RADIUS)) as f32
}

/// Points uniform in the periodic scene's box `0..L` (every coordinate strictly below `L`).
fn periodic(n: usize, rng: &mut Rng) -> Vec<[f32; 3]> {
    let side = periodic_side(n);
    let coordinate = |rng: &mut Rng| {
        let x = rng.uniform(0.0, f64::from(side)) as f32;
        // Rounding to f32 can reach the upper face, which belongs to the next image.
        if x < side { x } else { 0.0 }
    };
    (0..n)
        .map(|_| [coordinate(rng), coordinate(rng), coordinate(rng)])
        .collect()
}

/// The side and thickness of the sheet scene for `n` points.
///
/// Points uniform in a slab of thickness `t <= r` see on average `rho * pi * (r^2 t - t^3 / 6)`
/// neighbours (the ball's cross-section `pi (r^2 - dz^2)` integrated over the slab and averaged
/// over the point's height), with `rho = n / (L^2 t)` and `t = L / 1024`; so
/// `L^2 = n pi (r^2 - t^2 / 6) / K`, solved by fixed-point iteration.
pub fn sheet_size(n: usize) -> (f64, f64) {
    let r = f64::from(RADIUS);
    let k = SHEET_NEIGHBORS;
    let mut side = (n as f64 * std::f64::consts::PI * r * r / k).sqrt();
    for _ in 0..20 {
        let t = (side / SHEET_ANISOTROPY).min(r);
        side = (n as f64 * std::f64::consts::PI * (r * r - t * t / 6.0) / k).sqrt();
    }
    (side, side / SHEET_ANISOTROPY)
}

/// Points uniform in a thin sheet, [`SHEET_ANISOTROPY`] times wider than thick.
fn sheet(n: usize, rng: &mut Rng) -> Vec<[f32; 3]> {
    let (side, thickness) = sheet_size(n);
    (0..n)
        .map(|_| {
            [
                rng.uniform(0.0, side) as f32,
                rng.uniform(0.0, side) as f32,
                rng.uniform(0.0, thickness) as f32,
            ]
        })
        .collect()
}

/// The uniform cube of `n - 1` points plus one far outlier.
fn outlier(n: usize, rng: &mut Rng) -> Vec<[f32; 3]> {
    if n == 0 {
        return Vec::new();
    }
    let mut points = uniform(n - 1, rng);
    points.push([OUTLIER_COORD; 3]);
    points
}

/// The mean of `max(ri, rj)^3` over all ordered pairs `(i, j)`, `i == j` included.
pub fn mean_max_cubed(radii: &[f32]) -> f64 {
    mean_max_power(radii, 3)
}

/// The mean of `max(ri, rj)^power` over all ordered pairs `(i, j)`, `i == j` included.
///
/// With the radii sorted ascending, `r_k` is the larger of `2k + 1` of the `n^2` pairs.
pub fn mean_max_power(radii: &[f32], power: u32) -> f64 {
    let mut sorted: Vec<f64> = radii.iter().map(|&r| f64::from(r)).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let sum: f64 = sorted
        .iter()
        .enumerate()
        // `((1 r) r) r` is `(r r) r` exactly, as the 3-D scenes always computed it.
        .map(|(k, &r)| (2 * k + 1) as f64 * (0..power).fold(1.0, |product, _| product * r))
        .sum();
    if n > 0.0 { sum / (n * n) } else { 0.0 }
}

/// Points uniform in a cube (`dimensions` 3) or in a square in the plane `z = 0`
/// (`dimensions` 2) and radii log-uniform from `min_radius` to [`VARIABLE_MAX_RADIUS`], the
/// cube or square sized so that the mean neighbour count by `max(ri, rj)` is
/// [`VARIABLE_NEIGHBORS`] (fewer near the faces).
fn variable(
    n: usize,
    min_radius: f32,
    dimensions: usize,
    rng: &mut Rng,
) -> (Vec<[f32; 3]>, Vec<f32>) {
    let spread = f64::from(VARIABLE_MAX_RADIUS) / f64::from(min_radius);
    let radii: Vec<f32> = (0..n)
        .map(|_| (f64::from(min_radius) * spread.powf(rng.next_f64())) as f32)
        .collect();
    // Expected neighbours: rho * 4/3 pi E[max(ri, rj)^3] in 3-D, rho * pi E[max(ri, rj)^2] in
    // the plane, so the volume (or area) is n / rho.
    let pi = std::f64::consts::PI;
    let side = if dimensions == 2 {
        (n as f64 * pi * mean_max_power(&radii, 2) / VARIABLE_NEIGHBORS).sqrt()
    } else {
        (n as f64 * 4.0 / 3.0 * pi * mean_max_cubed(&radii) / VARIABLE_NEIGHBORS).cbrt()
    };
    let points = (0..n)
        .map(|_| {
            std::array::from_fn(|axis| {
                if axis < dimensions {
                    rng.uniform(0.0, side) as f32
                } else {
                    0.0
                }
            })
        })
        .collect();
    (points, radii)
}

/// A dam-break fluid block, width : height : depth = 1 : 2 : 1.
///
/// The lattice spacing is `h = r / 2`, so a particle sees about 30 neighbours, and every
/// coordinate is jittered by up to `0.05 h`. The block is filled layer by layer from the floor
/// up, so for counts that are not a full block the top layer is partly filled.
fn dambreak(n: usize, rng: &mut Rng) -> Vec<[f32; 3]> {
    let h = f64::from(RADIUS) / 2.0;
    let jitter = 0.05 * h;
    // Width and depth nx, height 2 nx: 2 nx^3 lattice sites.
    let nx = ((n as f64 / 2.0).cbrt().ceil() as usize).max(1);
    let mut points = Vec::with_capacity(n);
    'fill: for iy in 0.. {
        for iz in 0..nx {
            for ix in 0..nx {
                if points.len() == n {
                    break 'fill;
                }
                let site = [ix as f64 * h, iy as f64 * h, iz as f64 * h];
                points.push(site.map(|c| (c + rng.uniform(-jitter, jitter)) as f32));
            }
        }
    }
    points
}

/// The lattice of the 2-D dam break for `n` points: the fluid column's width in lattice sites
/// (its height is twice that) and the wall particles' count.
///
/// The tank is three columns wide and as high as the column; the walls are
/// [`DAMBREAK2D_WALL_LAYERS`] layers below it (the floor, as wide as the tank and both side
/// walls) and beside it. The width is the smallest for which column and walls hold `n` points.
pub fn dambreak2d_layout(n: usize) -> (usize, usize) {
    let layers = DAMBREAK2D_WALL_LAYERS;
    let walls = |width: usize| layers * (3 * width + 2 * layers) + 2 * layers * (2 * width);
    let mut width = 1;
    while 2 * width * width + walls(width) < n {
        width += 1;
    }
    (width, walls(width))
}

/// A 2-D dam break in the plane `z = 0` (see [`Scene::Dambreak2d`]): first the wall particles
/// (on an exact lattice, all of them, or the first `n` where `n` is smaller), then the fluid
/// column filled row by row from the floor up (its top row partly filled), every fluid
/// coordinate jittered by up to `0.05 dx`.
fn dambreak2d(n: usize, rng: &mut Rng) -> Vec<[f32; 3]> {
    let dx = DAMBREAK2D_SPACING * f64::from(RADIUS);
    let jitter = 0.05 * dx;
    let (width, _) = dambreak2d_layout(n);
    let layers = DAMBREAK2D_WALL_LAYERS as i64;
    let (tank_width, tank_height) = (3 * width as i64, 2 * width as i64);
    let mut points = Vec::with_capacity(n);
    let site = |ix: i64, iy: i64| [ix as f64 * dx, iy as f64 * dx];
    // The floor under the tank and both walls, then the walls beside the tank.
    let floor = (-layers..0).flat_map(|iy| (-layers..tank_width + layers).map(move |ix| (ix, iy)));
    let sides = (0..tank_height).flat_map(|iy| {
        (-layers..0)
            .chain(tank_width..tank_width + layers)
            .map(move |ix| (ix, iy))
    });
    for (ix, iy) in floor.chain(sides).take(n) {
        let [x, y] = site(ix, iy);
        points.push([x as f32, y as f32, 0.0]);
    }
    'fill: for iy in 0.. {
        for ix in 0..width as i64 {
            if points.len() == n {
                break 'fill;
            }
            let [x, y] = site(ix, iy);
            points.push([
                (x + rng.uniform(-jitter, jitter)) as f32,
                (y + rng.uniform(-jitter, jitter)) as f32,
                0.0,
            ]);
        }
    }
    points
}

/// The lattice of hhg-sph's dam break with `particles` requested fluid particles: the particle
/// spacing, the fluid count and the boundary count.
///
/// This mirrors how `hhg_sph::Simulation::new` lays the scenario out (hhg-sph does not export
/// it): the spacing `dx = (column volume / particles)^(1/3)`; the column and the tank rounded to
/// whole cells of `dx` per axis (at least one, the tank at least the column); the fluid one
/// particle per column cell; the walls `ceil(2 * smoothing ratio)` layers of cells around the
/// tank. The `sph` tests check it against the simulation's counts.
fn sph_lattice(particles: usize) -> (f64, usize, usize) {
    let config = DamBreak::with_particles(particles.max(1));
    let volume: f64 = config.column.iter().product();
    let spacing = (volume / config.particles as f64).cbrt();
    let column = config
        .column
        .map(|c| ((c / spacing).round() as usize).max(1));
    let tank: [usize; 3] =
        std::array::from_fn(|k| ((config.tank[k] / spacing).round() as usize).max(column[k]));
    let layers = (2.0 * config.smoothing_ratio).ceil() as usize;
    let fluid = column.iter().product();
    let outer: usize = tank.iter().map(|&c| c + 2 * layers).product();
    let inner: usize = tank.iter().product();
    (spacing, fluid, outer - inner)
}

/// The fluid particle count to ask `hhg_sph::DamBreak::with_particles` for so that fluid and
/// walls together come closest to `n` (the smaller on a tie; at least 1).
///
/// The total grows with the requested count (every rounded cell count does), so a bisection
/// finds the largest request whose total is at most `n` and the next one above it. The totals
/// step by a layer of cells at a time: within 1 % of `n` from 10k points up, 7 % at worst
/// below.
pub fn sph_fluid_particles(n: usize) -> usize {
    let total = |p: usize| {
        let (_, fluid, walls) = sph_lattice(p);
        fluid + walls
    };
    if total(1) > n {
        return 1;
    }
    // `lo` stays at most `n` points, `hi` above it.
    let (mut lo, mut hi) = (1, 2);
    while total(hi) <= n {
        (lo, hi) = (hi, 2 * hi);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if total(mid) <= n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if n - total(lo) <= total(hi) - n {
        lo
    } else {
        hi
    }
}

/// The search radius of the `sph` scene of about `n` points: the support `2h` of the dam
/// break's Wendland kernel, `h = 1.3 dx`, in metres, converted to `f32`.
pub fn sph_radius(n: usize) -> f32 {
    let (spacing, _, _) = sph_lattice(sph_fluid_particles(n));
    let ratio = DamBreak::default().smoothing_ratio;
    Wendland::new(ratio * spacing).support() as f32
}

/// Runs hhg-sph's dam break with about `n` particles in all for `steps` steps and returns the
/// frame in the solver's numbering (the fluid positions, then the boundary positions, as
/// `f32`) and the kernel support the solver searches within (as `f32`).
///
/// # Panics
/// If the simulation fails (see [`Scene::data`]).
fn sph_frame(n: usize, steps: usize) -> (Vec<[f32; 3]>, f32) {
    let particles = sph_fluid_particles(n);
    let failed = |e: hhg_sph::SphError| -> ! {
        panic!("the dam break of the sph scene ({particles} fluid particles) failed: {e}")
    };
    let mut sim =
        Simulation::new(DamBreak::with_particles(particles)).unwrap_or_else(|e| failed(e));
    for _ in 0..steps {
        sim.step().unwrap_or_else(|e| failed(e));
    }
    let points = sim
        .positions()
        .iter()
        .chain(sim.boundary_positions())
        .map(|p| p.map(|c| c as f32))
        .collect();
    (points, sim.kernel().support() as f32)
}

/// The `sph` scene: the frame of [`sph_frame`] after [`SPH_STEPS`] steps, shuffled with `rng`,
/// its radius, and the solver's numbering (`solver_order[k]` is the index in the shuffled
/// points of the solver's point `k`). An empty cloud for `n = 0`.
fn sph(n: usize, rng: &mut Rng) -> (Vec<[f32; 3]>, f32, Vec<u32>) {
    if n == 0 {
        return (Vec::new(), sph_radius(0), Vec::new());
    }
    let (frame, radius) = sph_frame(n, SPH_STEPS);
    // `shuffled[k]` is the solver's index of the `k`-th shuffled point.
    let mut shuffled: Vec<u32> = (0..frame.len() as u32).collect();
    rng.shuffle(&mut shuffled);
    let points = shuffled.iter().map(|&i| frame[i as usize]).collect();
    let mut solver_order = vec![0u32; frame.len()];
    for (k, &i) in shuffled.iter().enumerate() {
        solver_order[i as usize] = k as u32;
    }
    (points, radius, solver_order)
}

/// The probability that two independent draws from an isotropic 3-D Gaussian with standard
/// deviation `sigma` lie within distance `r` of each other.
///
/// The difference of the two draws has standard deviation `sigma * sqrt(2)` per axis, so this is
/// the chi distribution (3 degrees of freedom) at `a = r / (sigma sqrt 2)`, evaluated as the
/// regularised lower incomplete gamma function `P(3/2, a^2/2)` by its power series.
pub fn gaussian_pair_probability(sigma: f64, r: f64) -> f64 {
    let a = r / (sigma * std::f64::consts::SQRT_2);
    let x = 0.5 * a * a;
    if x > 40.0 {
        return 1.0;
    }
    // P(s, x) = x^s e^-x sum_k x^k / Gamma(s + k + 1), with s = 3/2 and Gamma(5/2) = 3 sqrt(pi) / 4.
    let gamma_5_2 = 0.75 * std::f64::consts::PI.sqrt();
    let mut term = 1.0 / gamma_5_2;
    let mut sum = term;
    let mut k = 1.0;
    while term > sum * 1e-17 {
        term *= x / (1.5 + k);
        sum += term;
        k += 1.0;
    }
    (x.powf(1.5) * (-x).exp() * sum).min(1.0)
}

/// Splits `n` into parts proportional to `weights`, each at least `min` where `n` allows.
fn apportion(n: usize, weights: &[f64], min: usize) -> Vec<usize> {
    let min = min.min(n / weights.len().max(1));
    let spare = n - min * weights.len();
    let total: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights.iter().map(|w| spare as f64 * w / total).collect();
    let mut counts: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut left = spare - counts.iter().sum::<usize>();
    // Largest remainders first, ties by index, so the split is deterministic.
    let mut by_remainder: Vec<usize> = (0..weights.len()).collect();
    by_remainder.sort_by(|&a, &b| {
        let ra = exact[a] - exact[a].floor();
        let rb = exact[b] - exact[b].floor();
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for &c in by_remainder.iter().cycle() {
        if left == 0 {
            break;
        }
        counts[c] += 1;
        left -= 1;
    }
    counts.iter().map(|c| c + min).collect()
}

/// The parameters of the clustered scene for `n` points.
#[derive(Clone, Debug)]
pub struct ClusterPlan {
    /// Points per cluster.
    pub populations: Vec<usize>,
    /// Standard deviation per cluster.
    pub sigmas: Vec<f64>,
    /// Centre per cluster.
    pub centres: Vec<[f64; 3]>,
    /// The predicted average neighbour count (overlaps between clusters ignored).
    pub predicted_neighbors: f64,
}

/// Draws the cluster sizes, populations and centres of the clustered scene.
///
/// Relative standard deviations are log-uniform over [`CLUSTER_SIGMA_SPREAD`]; populations are
/// proportional to `s^2` times a log-normal factor, so they differ by three orders of magnitude
/// and small clusters are denser than large ones. A common scale is then found by bisection so
/// that the predicted average neighbour count is [`CLUSTERED_NEIGHBORS`].
pub fn cluster_plan(n: usize, rng: &mut Rng) -> ClusterPlan {
    let rel_sigma: Vec<f64> = (0..CLUSTERS)
        .map(|_| CLUSTER_SIGMA_SPREAD.powf(rng.next_f64()))
        .collect();
    let weights: Vec<f64> = rel_sigma
        .iter()
        .map(|s| s * s * (0.5 * rng.gaussian()).exp())
        .collect();
    let populations = apportion(n, &weights, 4);

    let r = f64::from(RADIUS);
    let average = |scale: f64| -> f64 {
        let pairs: f64 = populations
            .iter()
            .zip(&rel_sigma)
            .map(|(&p, &s)| {
                let p = p as f64;
                p * (p - 1.0).max(0.0) * gaussian_pair_probability(scale * s, r)
            })
            .sum();
        pairs / n.max(1) as f64
    };
    // The average falls as the scale grows; bisect on a log scale.
    let (mut lo, mut hi) = (1e-3f64, 1e4f64);
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if average(mid) > CLUSTERED_NEIGHBORS {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let scale = (lo * hi).sqrt();
    let sigmas: Vec<f64> = rel_sigma.iter().map(|s| s * scale).collect();

    let centres = sigmas
        .iter()
        .map(|&sigma| {
            let margin = (6.0 * sigma).min(CLUSTER_BOX_SIDE / 4.0);
            [0; 3].map(|_| rng.uniform(margin, CLUSTER_BOX_SIDE - margin))
        })
        .collect();
    let predicted_neighbors = average(scale);
    ClusterPlan {
        populations,
        sigmas,
        centres,
        predicted_neighbors,
    }
}

/// Gaussian clusters of very different sizes and populations in a huge, mostly empty box.
fn clustered(n: usize, rng: &mut Rng) -> Vec<[f32; 3]> {
    let plan = cluster_plan(n, rng);
    let mut points = Vec::with_capacity(n);
    for ((&count, &sigma), centre) in plan.populations.iter().zip(&plan.sigmas).zip(&plan.centres) {
        for _ in 0..count {
            points.push([0, 1, 2].map(|a| (centre[a] + sigma * rng.gaussian()) as f32));
        }
    }
    points
}

#[cfg(test)]
mod tests;
