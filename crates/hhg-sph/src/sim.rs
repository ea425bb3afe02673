//! The simulation: the particle state and the time step that wires hhg-core's neighbour
//! search into the SPH loop, in 3-D or 2-D (`Simulation<D>`, the search chosen by
//! [`crate::Dimension`]). The pair interactions and the diagnostics that the tests and the
//! binary read live in the submodules.

mod diagnostics;
pub(crate) mod interactions;

pub use diagnostics::{Aabb, DensityError, StepReport};

use std::time::{Duration, Instant};

use hhg_core::SetId;
use hhg_core::reorder::apply_order_with;
use rayon::prelude::*;

use crate::config::DamBreak;
use crate::dimension::{Dim, Dimension, ParticleSearch};
use crate::error::SphError;
use crate::kernel::{Tait, Wendland};
use interactions::{rates, wall_pressures};

/// Particles per rayon task in the per-particle passes: each particle visits about 80
/// neighbours, so a few hundred particles amortise the scheduling.
pub(crate) const PARTICLES_PER_TASK: usize = 256;

/// The range of the walls' short-range repulsion, in particle spacings: a fluid particle at
/// rest next to a wall is one spacing from the nearest boundary particle, so the repulsion
/// acts only on a particle that got closer than it can under pressure alone.
const REPULSION_RANGE: f64 = 0.9;

/// The constants of the pair interactions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Physics<const D: usize = 3> {
    pub(crate) kernel: Wendland,
    pub(crate) eos: Tait,
    gravity: [f64; D],
    /// Monaghan's `alpha`.
    alpha: f64,
    /// `(0.1 h)^2`, which keeps the viscosity finite for coincident particles.
    eta2: f64,
    /// `2 delta h c0`, the coefficient of the density diffusion term.
    diffusion: f64,
    /// `rho0 g / c0^2`: the hydrostatic density difference per metre of height.
    hydrostatic: f64,
    /// The mass of a boundary particle.
    pub(crate) boundary_mass: f64,
    /// The squared range `r0^2` of the wall's short-range repulsion.
    repulsion_range2: f64,
    /// Its strength `D` (a squared velocity).
    repulsion: f64,
}

/// The fluid particles, structure of arrays, all in the same (cell-ordered) numbering.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fluid<const D: usize = 3> {
    pub(crate) pos: Vec<[f64; D]>,
    pub(crate) vel: Vec<[f64; D]>,
    acc: Vec<[f64; D]>,
    pub(crate) rho: Vec<f64>,
    drho: Vec<f64>,
    pub(crate) mass: Vec<f64>,
    pub(crate) ids: Vec<u32>,
    /// The predicted state of each particle as the pair loops read it; rewritten every
    /// step, so it is not permuted.
    state: Vec<PairState<D>>,
}

/// What the pair loops read of a fluid particle, packed so that visiting a neighbour
/// touches one or two cache lines, with the divisions done once per particle.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PairState<const D: usize = 3> {
    x: [f64; D],
    /// The velocity predicted to the end of the step.
    v: [f64; D],
    /// The density predicted to the end of the step.
    rho: f64,
    /// The pressure at that density.
    p: f64,
    /// `p / rho^2`.
    p_rho2: f64,
    /// `1 / rho`.
    inv_rho: f64,
    /// The sound speed at that density.
    c: f64,
    mass: f64,
}

impl<const D: usize> Default for PairState<D> {
    fn default() -> Self {
        Self {
            x: [0.0; D],
            v: [0.0; D],
            rho: 0.0,
            p: 0.0,
            p_rho2: 0.0,
            inv_rho: 0.0,
            c: 0.0,
            mass: 0.0,
        }
    }
}

impl<const D: usize> PairState<D> {
    pub(crate) fn new(eos: &Tait, x: [f64; D], v: [f64; D], rho: f64, mass: f64) -> Self {
        let p = eos.pressure(rho);
        let inv_rho = 1.0 / rho;
        Self {
            x,
            v,
            rho,
            p,
            p_rho2: p * inv_rho * inv_rho,
            inv_rho,
            c: eos.sound_speed(rho),
            mass,
        }
    }

    /// The state of a particle at position `x` predicted `ahead` seconds on with its last
    /// rates `a` and `drho`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn predicted(
        eos: &Tait,
        ahead: f64,
        x: [f64; D],
        v: [f64; D],
        rho: f64,
        mass: f64,
        a: [f64; D],
        drho: f64,
    ) -> Self {
        let v = std::array::from_fn(|k| v[k] + ahead * a[k]);
        Self::new(eos, x, v, rho + ahead * drho, mass)
    }
}

/// The distributed solver is 3-D only.
#[cfg(feature = "mpi")]
impl PairState<3> {
    /// The state as plain words, for the distributed solver's halo exchange.
    pub(crate) fn to_words(self) -> [f64; 12] {
        let [x0, x1, x2] = self.x;
        let [v0, v1, v2] = self.v;
        [
            x0,
            x1,
            x2,
            v0,
            v1,
            v2,
            self.rho,
            self.p,
            self.p_rho2,
            self.inv_rho,
            self.c,
            self.mass,
        ]
    }

    /// The state that [`PairState::to_words`] wrote, bit for bit.
    pub(crate) fn from_words(w: [f64; 12]) -> Self {
        Self {
            x: [w[0], w[1], w[2]],
            v: [w[3], w[4], w[5]],
            rho: w[6],
            p: w[7],
            p_rho2: w[8],
            inv_rho: w[9],
            c: w[10],
            mass: w[11],
        }
    }
}

/// The boundary particles: static positions, and the pressure and density that the wall
/// condition extrapolates from the fluid each step.
#[derive(Clone, Debug, Default)]
pub(crate) struct Boundary<const D: usize = 3> {
    pub(crate) pos: Vec<[f64; D]>,
    pub(crate) state: Vec<WallState>,
}

/// What the pair loops read of a boundary particle.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WallState {
    /// The extrapolated pressure.
    p: f64,
    /// The density of that pressure.
    rho: f64,
    /// `p / rho^2`.
    p_rho2: f64,
    /// The sound speed at that density.
    c: f64,
}

impl WallState {
    pub(crate) fn new(eos: &Tait, p: f64) -> Self {
        let rho = eos.density(p);
        Self {
            p,
            rho,
            p_rho2: p / (rho * rho),
            c: eos.sound_speed(rho),
        }
    }

    /// The state as plain words, for the distributed solver's halo exchange.
    #[cfg(feature = "mpi")]
    pub(crate) fn to_words(self) -> [f64; 4] {
        [self.p, self.rho, self.p_rho2, self.c]
    }

    /// The state that [`WallState::to_words`] wrote, bit for bit.
    #[cfg(feature = "mpi")]
    pub(crate) fn from_words(w: [f64; 4]) -> Self {
        Self {
            p: w[0],
            rho: w[1],
            p_rho2: w[2],
            c: w[3],
        }
    }
}

/// The first half kick and the drift of one particle: `v += dt/2 a`, `x += dt v`,
/// `rho += dt/2 drho`.
pub(crate) fn kick_and_drift<const D: usize>(
    half: f64,
    dt: f64,
    x: &mut [f64; D],
    v: &mut [f64; D],
    rho: &mut f64,
    a: [f64; D],
    drho: f64,
) {
    for k in 0..D {
        v[k] += half * a[k];
        x[k] += dt * v[k];
    }
    *rho += half * drho;
}

/// The second half kick of one particle: `v += dt/2 a`, `rho += dt/2 drho`.
pub(crate) fn kick<const D: usize>(
    half: f64,
    v: &mut [f64; D],
    rho: &mut f64,
    a: [f64; D],
    drho: f64,
) {
    for k in 0..D {
        v[k] += half * a[k];
    }
    *rho += half * drho;
}

/// The time step from the largest squared speed `v2`, squared acceleration `a2` and density
/// `rho` of the fluid (the density at least the rest density):
/// `cfl * min(h / (c(rho) + |v|), sqrt(h / |a|))`.
pub(crate) fn step_size<const D: usize>(
    physics: &Physics<D>,
    cfl: f64,
    v2: f64,
    a2: f64,
    rho: f64,
) -> f64 {
    let h = physics.kernel.smoothing_length();
    let c = physics.eos.sound_speed(rho);
    let acoustic = h / (c + v2.sqrt());
    let force = if a2 > 0.0 {
        (h / a2.sqrt()).sqrt()
    } else {
        f64::INFINITY
    };
    cfl * acoustic.min(force)
}

/// The scratch vectors of [`hhg_core::reorder::apply_order_with`], one per element type,
/// and the permutation of the last reordering.
#[derive(Clone, Debug, Default)]
struct ReorderScratch<const D: usize> {
    vectors: Vec<[f64; D]>,
    scalars: Vec<f64>,
    ids: Vec<u32>,
    order: Vec<u32>,
}

/// A running weakly compressible SPH simulation of a [`DamBreak`], in 3-D (`D` = 3, the
/// default, made by [`Simulation::new`]) or in 2-D (`D` = 2, [`crate::Simulation2`], made by
/// [`Simulation::with_config`]: the x-z section of the dam break, on hhg-core's
/// `plane::NeighborSearch2`).
///
/// See the crate documentation for the time step and how it calls hhg-core.
#[derive(Debug)]
pub struct Simulation<const D: usize = 3>
where
    Dim<D>: Dimension<D>,
{
    config: DamBreak,
    pub(crate) physics: Physics<D>,
    spacing: f64,
    layers: usize,
    column_height: f64,
    tank: Aabb<D>,
    search: <Dim<D> as Dimension<D>>::Search,
    fluid_set: SetId,
    boundary_set: SetId,
    pub(crate) fluid: Fluid<D>,
    pub(crate) boundary: Boundary<D>,
    scratch: ReorderScratch<D>,
    time: f64,
    steps: u64,
    last_dt: f64,
}

fn sub<const D: usize>(a: [f64; D], b: [f64; D]) -> [f64; D] {
    std::array::from_fn(|k| a[k] - b[k])
}

pub(crate) fn dot<const D: usize>(a: [f64; D], b: [f64; D]) -> f64 {
    let mut sum = a[0] * b[0];
    for k in 1..D {
        sum += a[k] * b[k];
    }
    sum
}

/// The lattice of the scenario in `D` dimensions (the axes of `axes`): the spacing and the
/// cell counts of column and tank.
fn lattice<const D: usize>(config: &DamBreak, axes: [usize; D]) -> (f64, [usize; D], [usize; D]) {
    let volume: f64 = axes.iter().map(|&k| config.column[k]).product();
    let ratio = volume / config.particles as f64;
    // D is 2 or 3 (the dimensions of `Dimension`).
    let spacing = if D == 3 { ratio.cbrt() } else { ratio.sqrt() };
    let column = axes.map(|k| ((config.column[k] / spacing).round() as usize).max(1));
    let mut tank = [0; D];
    for (d, &k) in axes.iter().enumerate() {
        tank[d] = ((config.tank[k] / spacing).round() as usize).max(column[d]);
    }
    (spacing, column, tank)
}

/// Calls `visit` with every point of the integer lattice `lo[k] <= i[k] < hi[k]`, the first
/// axis fastest.
fn for_each_lattice_point<const D: usize>(
    lo: [isize; D],
    hi: [isize; D],
    mut visit: impl FnMut([isize; D]),
) {
    if (0..D).any(|k| lo[k] >= hi[k]) {
        return;
    }
    let mut i = lo;
    loop {
        visit(i);
        let mut k = 0;
        loop {
            i[k] += 1;
            if i[k] < hi[k] {
                break;
            }
            i[k] = lo[k];
            k += 1;
            if k == D {
                return;
            }
        }
    }
}

impl Simulation<3> {
    /// Sets up the 3-D dam break ([`Simulation::with_config`]).
    ///
    /// # Errors
    /// A configuration value out of range, or too many particles for the search.
    pub fn new(config: DamBreak) -> Result<Self, SphError> {
        Self::with_config(config)
    }
}

impl<const D: usize> Simulation<D>
where
    Dim<D>: Dimension<D>,
{
    /// Sets up the dam break in `D` dimensions: fluid particles on a square or cubic lattice
    /// in hydrostatic equilibrium, enough layers of boundary particles around the tank to
    /// fill the kernel support, and the neighbour search with the fluid as a dynamic and the
    /// walls as a static set. In 2-D the tank and the column are the x and z sizes of the
    /// configuration (gravity along `-y`), and `particles` counts the particles of the
    /// plane.
    ///
    /// # Errors
    /// A configuration value out of range, or too many particles for the search.
    pub fn with_config(config: DamBreak) -> Result<Self, SphError> {
        config.validate()?;
        let axes = <Dim<D> as Dimension<D>>::AXES;
        let (spacing, column, cells) = lattice(&config, axes);
        let layers = (2.0 * config.smoothing_ratio).ceil() as usize;
        let fluid_count: usize = column.iter().product();
        let outer_count: f64 = cells.iter().map(|&c| (c + 2 * layers) as f64).product();
        if fluid_count > hhg_core::MAX_POINTS || outer_count > hhg_core::MAX_POINTS as f64 {
            return Err(SphError::Config(format!(
                "{fluid_count} fluid particles in a tank of {cells:?} cells are too many"
            )));
        }

        let rho0 = config.rest_density;
        let g = config.gravity;
        let column_height = column[D - 1] as f64 * spacing;
        let c0 = config.sound_speed_factor * (g * column_height).sqrt();
        let h = config.smoothing_ratio * spacing;
        let kernel = Wendland::in_dimension(h, D)
            .ok_or_else(|| SphError::Config(format!("no kernel in {D} dimensions")))?;
        let eos = Tait::new(rho0, c0);
        // The mass of a lattice cell, `rho0 dx^D`, multiplied out from the left as it always
        // was (`rho0 * dx * dx * dx` in 3-D), so that the 3-D run keeps its bits.
        let mut mass = rho0;
        for _ in 0..D {
            mass *= spacing;
        }
        let mut gravity = [0.0; D];
        gravity[D - 1] = -g;
        let physics = Physics {
            kernel,
            eos,
            gravity,
            alpha: config.viscosity,
            eta2: 0.01 * h * h,
            diffusion: 2.0 * config.density_diffusion * h * c0,
            hydrostatic: rho0 * g / (c0 * c0),
            boundary_mass: mass,
            repulsion_range2: (REPULSION_RANGE * spacing).powi(2),
            repulsion: 5.0 * g * column_height,
        };

        let at = |i: [isize; D]| i.map(|i| (i as f64 + 0.5) * spacing);
        let mut fluid = Fluid::default();
        for_each_lattice_point([0; D], column.map(|c| c as isize), |i| {
            let p = at(i);
            fluid.pos.push(p);
            fluid
                .rho
                .push(eos.density(rho0 * g * (column_height - p[D - 1])));
        });
        let n = fluid.pos.len();
        fluid.vel = vec![[0.0; D]; n];
        fluid.acc = vec![[0.0; D]; n];
        fluid.drho = vec![0.0; n];
        fluid.mass = vec![mass; n];
        fluid.ids = (0..n as u32).collect();
        fluid.state = vec![PairState::default(); n];

        let mut boundary = Boundary::default();
        let l = layers as isize;
        let inside = |i: [isize; D]| (0..D).all(|k| i[k] >= 0 && i[k] < cells[k] as isize);
        for_each_lattice_point([-l; D], cells.map(|c| c as isize + l), |i| {
            if !inside(i) {
                boundary.pos.push(at(i));
            }
        });
        boundary.state = vec![WallState::new(&eos, 0.0); boundary.pos.len()];

        // The search: the fluid moves, the walls do not. The fluid looks for fluid and wall
        // neighbours (forces, continuity); the walls look for fluid neighbours (the wall
        // pressure is extrapolated from the fluid around each boundary particle).
        let mut search = <Dim<D> as Dimension<D>>::Search::with_radius(kernel.support())?;
        search.choose_list_order(config.list_order)?;
        let fluid_set = search.add_moving(&fluid.pos)?;
        let boundary_set = search.add_fixed(&boundary.pos)?;
        search.activate(fluid_set, fluid_set)?;
        search.activate(fluid_set, boundary_set)?;
        search.activate(boundary_set, fluid_set)?;

        let tank = Aabb {
            min: [0.0; D],
            max: cells.map(|c| c as f64 * spacing),
        };
        let mut sim = Self {
            config,
            physics,
            spacing,
            layers,
            column_height,
            tank,
            search,
            fluid_set,
            boundary_set,
            fluid,
            boundary,
            scratch: ReorderScratch::default(),
            time: 0.0,
            steps: 0,
            last_dt: 0.0,
        };

        // The static walls are put into cell order once: their grid's cell order becomes
        // their numbering, and the grid is reused by every later search.
        let mut order = std::mem::take(&mut sim.scratch.order);
        sim.search.cell_order(boundary_set, &mut order)?;
        apply_order_with(&order, &mut sim.boundary.pos, &mut sim.scratch.vectors);
        sim.scratch.order = order;
        // The fluid starts in cell order too.
        sim.reorder_fluid()?;
        sim.search.search()?;
        sim.evaluate(0.0);
        Ok(sim)
    }

    /// Makes the cell order of the fluid grid's last build the particles' numbering
    /// ([`hhg_core::NeighborSearch::adopt_cell_order`] in 3-D,
    /// [`hhg_core::plane::NeighborSearch2::adopt_cell_order`] in 2-D) and permutes every persistent fluid array into it. The next search
    /// numbers the fluid in the new order.
    fn reorder_fluid(&mut self) -> Result<(), SphError> {
        let mut order = std::mem::take(&mut self.scratch.order);
        self.search.cell_order(self.fluid_set, &mut order)?;
        let (fluid, scratch) = (&mut self.fluid, &mut self.scratch);
        apply_order_with(&order, &mut fluid.pos, &mut scratch.vectors);
        apply_order_with(&order, &mut fluid.vel, &mut scratch.vectors);
        apply_order_with(&order, &mut fluid.acc, &mut scratch.vectors);
        apply_order_with(&order, &mut fluid.rho, &mut scratch.scalars);
        apply_order_with(&order, &mut fluid.drho, &mut scratch.scalars);
        apply_order_with(&order, &mut fluid.mass, &mut scratch.scalars);
        apply_order_with(&order, &mut fluid.ids, &mut scratch.ids);
        self.scratch.order = order;
        Ok(())
    }

    /// The time step: the Courant condition on sound and flow speed and the force
    /// condition, `cfl * min(h / (c_max + |v|_max), sqrt(h / |a|_max))`.
    pub fn time_step(&self) -> f64 {
        let (mut v2, mut a2, mut rho) = (0.0f64, 0.0f64, self.physics.eos.rest_density());
        for i in 0..self.fluid.pos.len() {
            v2 = v2.max(dot(self.fluid.vel[i], self.fluid.vel[i]));
            a2 = a2.max(dot(self.fluid.acc[i], self.fluid.acc[i]));
            rho = rho.max(self.fluid.rho[i]);
        }
        step_size(&self.physics, self.config.cfl, v2, a2, rho)
    }

    /// Advances the simulation by one time step (velocity Verlet, kick-drift-kick) and
    /// reports what it cost.
    ///
    /// # Errors
    /// The neighbour search refuses the new positions (a particle's position is no longer
    /// finite: the simulation blew up).
    pub fn step(&mut self) -> Result<StepReport, SphError> {
        let start = Instant::now();
        let dt = self.time_step();
        let half = 0.5 * dt;

        // Kick by half a step with the rates of the last evaluation, then drift.
        let f = &mut self.fluid;
        f.pos
            .par_iter_mut()
            .zip(f.vel.par_iter_mut())
            .zip(f.rho.par_iter_mut())
            .zip(f.acc.par_iter().zip(f.drho.par_iter()))
            .with_min_len(PARTICLES_PER_TASK)
            .for_each(|(((x, v), rho), (a, drho))| kick_and_drift(half, dt, x, v, rho, *a, *drho));

        // The neighbour search at the new positions; the walls' grid is reused. Every few
        // steps, between the build and the lists, the particles are renumbered in the cell
        // order of this build: neighbours then sit close in memory, and the lists come from
        // the search's faster pass for points in cell order.
        let reordered = self.config.reorder_every > 0
            && (self.steps + 1).is_multiple_of(self.config.reorder_every as u64);
        let mut reorder_time = Duration::ZERO;
        let t = Instant::now();
        self.search.move_set(self.fluid_set, &self.fluid.pos)?;
        let mut search_time = t.elapsed();
        if reordered {
            let t = Instant::now();
            self.reorder_fluid()?;
            reorder_time = t.elapsed();
        }
        let t = Instant::now();
        self.search.search()?;
        search_time += t.elapsed();

        // Rates at the new positions, with velocity and density predicted to the step's end.
        self.evaluate(half);

        // The second half kick with the new rates.
        let f = &mut self.fluid;
        f.vel
            .par_iter_mut()
            .zip(f.rho.par_iter_mut())
            .zip(f.acc.par_iter().zip(f.drho.par_iter()))
            .with_min_len(PARTICLES_PER_TASK)
            .for_each(|((v, rho), (a, drho))| kick(half, v, rho, *a, *drho));

        self.time += dt;
        self.steps += 1;
        self.last_dt = dt;
        let step_time = start.elapsed();
        Ok(StepReport {
            step: self.steps,
            time: self.time,
            dt,
            step_time,
            search_time,
            reorder_time,
            reordered,
            kinetic_energy: self.kinetic_energy(),
            density_error: self.density_error(),
        })
    }

    /// Evaluates the rates from the current neighbour lists: packs the state predicted
    /// `ahead` seconds on with the last rates (velocity, density, pressure), extrapolates
    /// the wall pressures, then computes accelerations and density rates.
    fn evaluate(&mut self, ahead: f64) {
        let physics = self.physics;
        let eos = physics.eos;
        let f = &mut self.fluid;
        f.state
            .par_iter_mut()
            .zip(f.pos.par_iter().zip(f.vel.par_iter()))
            .zip(f.rho.par_iter().zip(f.mass.par_iter()))
            .zip(f.acc.par_iter().zip(f.drho.par_iter()))
            .with_min_len(PARTICLES_PER_TASK)
            .for_each(|(((state, (x, v)), (rho, m)), (a, drho))| {
                *state = PairState::predicted(&eos, ahead, *x, *v, *rho, *m, *a, *drho);
            });

        let lists = |a, b| {
            self.search
                .lists(a, b)
                .expect("every active pair of sets was searched")
        };
        wall_pressures(
            &physics,
            &f.state,
            lists(self.boundary_set, self.fluid_set),
            &mut self.boundary,
        );
        rates(
            &physics,
            &f.state,
            &mut f.acc,
            &mut f.drho,
            lists(self.fluid_set, self.fluid_set),
            lists(self.fluid_set, self.boundary_set),
            &self.boundary,
        );
    }

    /// Runs `steps` steps and returns their reports.
    ///
    /// # Errors
    /// As [`Simulation::step`]; the steps before the failing one stay done.
    pub fn run(&mut self, steps: usize) -> Result<Vec<StepReport>, SphError> {
        (0..steps).map(|_| self.step()).collect()
    }
}
