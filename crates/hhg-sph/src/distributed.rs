//! The dam break on the ranks of an MPI communicator (feature `mpi`): hhg-mpi's
//! `DistributedSearch` over fluid and walls, migration of every solver array, the ghosts'
//! states exchanged every step, and the single process's time step and pair interactions.
//!
//! Every rank owns the particles in its box of space, fluid and walls alike (one
//! `DistributedSearch` over both, so one decomposition and one halo). The boxes are balanced
//! by the fluid alone (`DistributedSearch::balance_by`): the walls are static and cost little
//! per step. A step is the single process's kick-drift-kick:
//!
//! ```text
//! dt                      max of |v|^2, |a|^2, rho over the ranks (one all_reduce)
//! half kick + drift       the local fluid
//! migrate                 positions, ids and every solver array (velocity, acceleration,
//!                         density, its rate, mass, lattice id, wall state) to their new owners
//! update                  halo exchange of positions, grid over local and ghost particles
//! lists                   each local particle's neighbours, ordered by global id
//! fluid states            predicted state of the local fluid; ghosts' states exchanged
//! wall pressures          of the local walls; the ghost walls' states exchanged
//! rates                   accelerations and density rates of the local fluid
//! half kick               the local fluid
//! ```
//!
//! The global ids are the single process's numbering after its set-up (fluid `0..n`, walls
//! `n..n + walls`), and every list is ordered by global id: each particle's sums add the same
//! terms in the same order as in a single [`crate::Simulation`] that does not reorder
//! (`reorder_every = 0`, ascending lists), so the fields after any number of steps are equal
//! bit for bit, on any number of ranks. (A single process that reorders adds its sums in
//! another order and agrees to rounding only.)

use std::time::{Duration, Instant};

use hhg_core::reorder::apply_order_with;
use hhg_mpi::mpi::collective::SystemOperation;
use hhg_mpi::mpi::topology::SimpleCommunicator;
use hhg_mpi::mpi::traits::*;
use hhg_mpi::{DistributedLists, DistributedSearch, HaloStats, MigrationStats};
use rayon::prelude::*;

use crate::config::DamBreak;
use crate::error::SphError;
use crate::sim::interactions::{Rows, rates, wall_pressures};
use crate::sim::{
    Boundary, PARTICLES_PER_TASK, PairState, Physics, Simulation, WallState, dot, kick,
    kick_and_drift, step_size,
};

/// The lattice id of a wall particle (fluid particles keep the single process's
/// [`Simulation::ids`]).
pub const WALL_LATTICE_ID: u32 = u32::MAX;

impl From<hhg_mpi::Error> for SphError {
    fn from(error: hhg_mpi::Error) -> Self {
        SphError::Distributed(error.to_string())
    }
}

/// Lists in compressed rows, in the slots the interactions index.
#[derive(Clone, Debug, Default)]
struct SlotRows {
    offsets: Vec<usize>,
    indices: Vec<u32>,
}

impl SlotRows {
    fn clear(&mut self) {
        self.offsets.clear();
        self.indices.clear();
        self.offsets.push(0);
    }

    fn end_row(&mut self) {
        self.offsets.push(self.indices.len());
    }
}

impl Rows for SlotRows {
    fn neighbors(&self, i: usize) -> &[u32] {
        &self.indices[self.offsets[i]..self.offsets[i + 1]]
    }
}

/// The particles of this rank, fluid first, then walls; every array in the same order.
#[derive(Clone, Debug, Default)]
struct Particles {
    pos: Vec<[f64; 3]>,
    ids: Vec<u64>,
    vel: Vec<[f64; 3]>,
    acc: Vec<[f64; 3]>,
    rho: Vec<f64>,
    drho: Vec<f64>,
    mass: Vec<f64>,
    lattice: Vec<u32>,
    /// The wall state of the last step (a wall keeps its pressure where no fluid is near, as
    /// in the single process); unused for fluid.
    wall: Vec<[f64; 4]>,
    /// How many of the particles are fluid.
    fluid: usize,
}

/// The scratch arrays of a step.
#[derive(Clone, Debug, Default)]
struct Scratch {
    lists: DistributedLists,
    /// Per local particle or ghost, its slot in `states` (fluid) or in `boundary` (walls).
    slots: Vec<u32>,
    /// Fluid particles' fluid neighbours, walls' fluid neighbours, fluid's wall neighbours.
    fluid_rows: SlotRows,
    wall_fluid_rows: SlotRows,
    fluid_wall_rows: SlotRows,
    /// One row sorted by global id: (global id, local index).
    row: Vec<(u64, u32)>,
    /// The fluid states: the local fluid, then the ghost fluid.
    states: Vec<PairState>,
    /// The walls: the local walls, then the ghost walls.
    boundary: Boundary,
    local_walls: Boundary,
    words12: Vec<[f64; 12]>,
    ghost_words12: Vec<[f64; 12]>,
    ghost_words4: Vec<[f64; 4]>,
    order: Vec<u32>,
    reorder_vectors: Vec<[f64; 3]>,
    reorder_scalars: Vec<f64>,
    reorder_ids: Vec<u64>,
    reorder_lattice: Vec<u32>,
    reorder_wall: Vec<[f64; 4]>,
}

/// What one distributed step did, on this rank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistributedStepReport {
    /// The number of steps taken so far, this one included.
    pub step: u64,
    /// The simulated time after this step, in seconds.
    pub time: f64,
    /// The time step, in seconds (the same on every rank).
    pub dt: f64,
    /// Wall time of the whole step on this rank.
    pub step_time: Duration,
    /// The halo exchange of positions (ghost counts, bytes and messages).
    pub halo: HaloStats,
    /// Bytes this rank sent to other ranks in the step's two exchanges of ghost states
    /// (fluid states and wall states).
    pub state_bytes_sent: usize,
    /// The migration of this step (walls too, when the boxes were cut anew).
    pub migration: MigrationStats,
    /// Fluid particles of this rank that the step's drift carried out of its box (counted
    /// before the migration, against the boxes the step started with): the crossings of a
    /// rank boundary.
    pub fluid_crossed: usize,
}

/// A dam break distributed over the ranks of an MPI communicator; see the module
/// documentation.
pub struct DistributedSimulation {
    comm: SimpleCommunicator,
    config: DamBreak,
    physics: Physics,
    fluid_total: usize,
    wall_total: usize,
    search: DistributedSearch<f64>,
    particles: Particles,
    scratch: Scratch,
    state_bytes_sent: usize,
    time: f64,
    steps: u64,
    last_dt: f64,
}

impl std::fmt::Debug for DistributedSimulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributedSimulation")
            .field("rank", &self.search.rank())
            .field("fluid_total", &self.fluid_total)
            .field("wall_total", &self.wall_total)
            .field("local_fluid", &self.particles.fluid)
            .field(
                "local_walls",
                &(self.particles.ids.len() - self.particles.fluid),
            )
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl DistributedSimulation {
    /// Sets up the dam break of `config` on the ranks of `comm` (collective): every rank
    /// builds the single process's initial state (a [`Simulation`]) and keeps its share,
    /// the first migration hands each particle to the rank whose box holds it, and the
    /// rates are evaluated as the single process does at set-up.
    ///
    /// The distributed solver never reorders (its lists are ordered by global id) and
    /// ignores `reorder_every` and `list_order`.
    ///
    /// # Errors
    /// A configuration the single process refuses, or a failed distributed search (on every
    /// rank).
    pub fn new<C: Communicator>(comm: &C, config: DamBreak) -> Result<Self, SphError> {
        // Every rank validates the same configuration, so all fail or none.
        let single = Simulation::new(config.clone())?;
        let physics = single.physics;
        let fluid_total = single.fluid.pos.len();
        let wall_total = single.boundary.pos.len();
        let total = fluid_total + wall_total;
        let (rank, ranks) = (comm.rank() as usize, comm.size() as usize);
        let mine = total * rank / ranks..total * (rank + 1) / ranks;

        let mut particles = Particles::default();
        let resting_wall = WallState::new(&physics.eos, 0.0).to_words();
        for g in mine {
            particles.ids.push(g as u64);
            if g < fluid_total {
                let f = &single.fluid;
                particles.pos.push(f.pos[g]);
                particles.vel.push(f.vel[g]);
                particles.rho.push(f.rho[g]);
                particles.mass.push(f.mass[g]);
                particles.lattice.push(f.ids[g]);
                particles.wall.push([0.0; 4]);
            } else {
                particles.pos.push(single.boundary.pos[g - fluid_total]);
                particles.vel.push([0.0; 3]);
                particles.rho.push(0.0);
                particles.mass.push(physics.boundary_mass);
                particles.lattice.push(WALL_LATTICE_ID);
                particles.wall.push(resting_wall);
            }
            // The single process starts from zero rates and evaluates them at set-up.
            particles.acc.push([0.0; 3]);
            particles.drho.push(0.0);
        }
        drop(single);

        let mut search = DistributedSearch::new(comm, physics.kernel.support(), None)?;
        // The boxes share the fluid: a wall particle is static and costs a step only its
        // pressure and its share of the halo, so the walls weigh nothing in the balance.
        let fluid_ids = fluid_total as u64;
        search.balance_by(move |id| u32::from(id < fluid_ids));
        let mut sim = Self {
            comm: comm.duplicate(),
            config,
            physics,
            fluid_total,
            wall_total,
            search,
            particles,
            scratch: Scratch::default(),
            state_bytes_sent: 0,
            time: 0.0,
            steps: 0,
            last_dt: 0.0,
        };
        sim.migrate()?;
        sim.search_and_evaluate(0.0)?;
        Ok(sim)
    }

    /// The time step of the single process, from the largest speed, acceleration and density
    /// over all ranks. Collective.
    pub fn time_step(&self) -> f64 {
        let p = &self.particles;
        let mut local = [0.0f64, 0.0f64, self.physics.eos.rest_density()];
        for i in 0..p.fluid {
            local[0] = local[0].max(dot(p.vel[i], p.vel[i]));
            local[1] = local[1].max(dot(p.acc[i], p.acc[i]));
            local[2] = local[2].max(p.rho[i]);
        }
        let mut global = [0.0f64; 3];
        self.comm
            .all_reduce_into(&local[..], &mut global[..], SystemOperation::max());
        step_size(
            &self.physics,
            self.config.cfl,
            global[0],
            global[1],
            global[2],
        )
    }

    /// Advances the simulation by one time step (collective) and reports what this rank
    /// did.
    ///
    /// # Errors
    /// The distributed search refuses the new positions (a position is no longer finite: the
    /// simulation blew up), on every rank.
    pub fn step(&mut self) -> Result<DistributedStepReport, SphError> {
        let start = Instant::now();
        let dt = self.time_step();
        let half = 0.5 * dt;
        let p = &mut self.particles;
        let fluid = p.fluid;
        p.pos[..fluid]
            .par_iter_mut()
            .zip(p.vel[..fluid].par_iter_mut())
            .zip(p.rho[..fluid].par_iter_mut())
            .zip(p.acc[..fluid].par_iter().zip(p.drho[..fluid].par_iter()))
            .with_min_len(PARTICLES_PER_TASK)
            .for_each(|(((x, v), rho), (a, drho))| kick_and_drift(half, dt, x, v, rho, *a, *drho));

        let fluid_crossed = self.fluid_outside_box();
        let migration = self.migrate()?;
        self.search_and_evaluate(half)?;

        let p = &mut self.particles;
        let fluid = p.fluid;
        p.vel[..fluid]
            .par_iter_mut()
            .zip(p.rho[..fluid].par_iter_mut())
            .zip(p.acc[..fluid].par_iter().zip(p.drho[..fluid].par_iter()))
            .with_min_len(PARTICLES_PER_TASK)
            .for_each(|((v, rho), (a, drho))| kick(half, v, rho, *a, *drho));

        self.time += dt;
        self.steps += 1;
        self.last_dt = dt;
        Ok(DistributedStepReport {
            step: self.steps,
            time: self.time,
            dt,
            step_time: start.elapsed(),
            halo: self.search.halo_stats(),
            state_bytes_sent: self.state_bytes_sent,
            migration,
            fluid_crossed,
        })
    }

    /// The local fluid particles outside this rank's box.
    fn fluid_outside_box(&self) -> usize {
        let Some(decomposition) = self.search.decomposition() else {
            return 0;
        };
        let mine = decomposition.bounds(self.search.rank());
        let p = &self.particles;
        p.pos[..p.fluid]
            .iter()
            .filter(|&&x| !mine.contains(x))
            .count()
    }

    /// Runs `steps` steps (collective) and returns their reports.
    ///
    /// # Errors
    /// As [`DistributedSimulation::step`]; the steps before the failing one stay done.
    pub fn run(&mut self, steps: usize) -> Result<Vec<DistributedStepReport>, SphError> {
        (0..steps).map(|_| self.step()).collect()
    }

    /// Moves every particle with all its arrays to the rank whose box holds it, then puts
    /// the fluid first (both kinds keep their order).
    fn migrate(&mut self) -> Result<MigrationStats, SphError> {
        let p = &mut self.particles;
        let stats = self.search.migrate(
            &mut p.pos,
            &mut p.ids,
            &mut [
                &mut p.vel,
                &mut p.acc,
                &mut p.rho,
                &mut p.drho,
                &mut p.mass,
                &mut p.lattice,
                &mut p.wall,
            ],
        )?;
        let fluid_total = self.fluid_total as u64;
        p.fluid = p.ids.iter().filter(|&&id| id < fluid_total).count();
        if !p.ids[..p.fluid].iter().all(|&id| id < fluid_total) {
            let s = &mut self.scratch;
            let all = 0..p.ids.len() as u32;
            s.order.clear();
            s.order
                .extend(all.clone().filter(|&i| p.ids[i as usize] < fluid_total));
            s.order
                .extend(all.filter(|&i| p.ids[i as usize] >= fluid_total));
            apply_order_with(&s.order, &mut p.pos, &mut s.reorder_vectors);
            apply_order_with(&s.order, &mut p.vel, &mut s.reorder_vectors);
            apply_order_with(&s.order, &mut p.acc, &mut s.reorder_vectors);
            apply_order_with(&s.order, &mut p.rho, &mut s.reorder_scalars);
            apply_order_with(&s.order, &mut p.drho, &mut s.reorder_scalars);
            apply_order_with(&s.order, &mut p.mass, &mut s.reorder_scalars);
            apply_order_with(&s.order, &mut p.ids, &mut s.reorder_ids);
            apply_order_with(&s.order, &mut p.lattice, &mut s.reorder_lattice);
            apply_order_with(&s.order, &mut p.wall, &mut s.reorder_wall);
        }
        Ok(stats)
    }

    /// The search at the current positions and the rates from its lists, with the state
    /// predicted `ahead` seconds on (as the single process's evaluation).
    fn search_and_evaluate(&mut self, ahead: f64) -> Result<(), SphError> {
        let p = &mut self.particles;
        self.search.update(&p.pos, &p.ids)?;
        let s = &mut self.scratch;
        self.search.neighbor_lists(&mut s.lists)?;
        build_rows(&self.search, self.fluid_total as u64, p.fluid, s);

        // The local fluid's predicted states, then the ghosts' from their owners.
        let (physics, eos, fluid) = (self.physics, self.physics.eos, p.fluid);
        let local = p.ids.len();
        s.states.clear();
        s.states.resize(fluid, PairState::default());
        s.states
            .par_iter_mut()
            .enumerate()
            .with_min_len(PARTICLES_PER_TASK)
            .for_each(|(i, state)| {
                *state = PairState::predicted(
                    &eos, ahead, p.pos[i], p.vel[i], p.rho[i], p.mass[i], p.acc[i], p.drho[i],
                );
            });
        s.words12.clear();
        s.words12
            .extend(s.states.iter().map(|state| state.to_words()));
        s.words12.resize(local, [0.0; 12]);
        self.search
            .exchange_ghost_values(&s.words12, &mut s.ghost_words12)?;
        for (g, words) in s.ghost_words12.iter().enumerate() {
            if self.search.global_id(local + g) < self.fluid_total as u64 {
                s.states.push(PairState::from_words(*words));
            }
        }

        // The local walls' pressures, then the ghost walls' states from their owners.
        s.local_walls.pos.clear();
        s.local_walls.pos.extend_from_slice(&p.pos[fluid..]);
        s.local_walls.state.clear();
        s.local_walls
            .state
            .extend(p.wall[fluid..].iter().map(|&w| WallState::from_words(w)));
        wall_pressures(&physics, &s.states, &s.wall_fluid_rows, &mut s.local_walls);
        for (word, state) in p.wall[fluid..].iter_mut().zip(&s.local_walls.state) {
            *word = state.to_words();
        }
        self.search
            .exchange_ghost_values(&p.wall, &mut s.ghost_words4)?;
        s.boundary.pos.clear();
        s.boundary.pos.extend_from_slice(&s.local_walls.pos);
        s.boundary.state.clear();
        s.boundary.state.extend_from_slice(&s.local_walls.state);
        for (g, words) in s.ghost_words4.iter().enumerate() {
            if self.search.global_id(local + g) >= self.fluid_total as u64 {
                s.boundary.pos.push(self.search.ghost_position(g));
                s.boundary.state.push(WallState::from_words(*words));
            }
        }
        // Both exchanges send one entry per ghost entry of the halo (no periodic images of a
        // rank's own particles here, so every entry goes to another rank): 12 words of fluid
        // state and 4 of wall state (the other kind's words are zeros).
        self.state_bytes_sent = self.search.halo_stats().sent * (12 + 4) * size_of::<f64>();

        rates(
            &physics,
            &s.states,
            &mut p.acc[..fluid],
            &mut p.drho[..fluid],
            &s.fluid_rows,
            &s.fluid_wall_rows,
            &s.boundary,
        );
        Ok(())
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.search.rank()
    }

    /// The configuration.
    pub fn config(&self) -> &DamBreak {
        &self.config
    }

    /// The number of fluid particles over all ranks.
    pub fn fluid_total(&self) -> usize {
        self.fluid_total
    }

    /// The number of wall particles over all ranks.
    pub fn boundary_total(&self) -> usize {
        self.wall_total
    }

    /// The number of fluid particles on this rank.
    pub fn fluid_count(&self) -> usize {
        self.particles.fluid
    }

    /// The global ids of this rank's fluid particles: their indices in a single
    /// [`Simulation`] of the same configuration right after its set-up.
    pub fn global_ids(&self) -> &[u64] {
        &self.particles.ids[..self.particles.fluid]
    }

    /// The lattice ids of this rank's fluid particles (the single process's
    /// [`Simulation::ids`]).
    pub fn ids(&self) -> &[u32] {
        &self.particles.lattice[..self.particles.fluid]
    }

    /// The positions of this rank's fluid particles.
    pub fn positions(&self) -> &[[f64; 3]] {
        &self.particles.pos[..self.particles.fluid]
    }

    /// The velocities of this rank's fluid particles.
    pub fn velocities(&self) -> &[[f64; 3]] {
        &self.particles.vel[..self.particles.fluid]
    }

    /// The accelerations of this rank's fluid particles at the last evaluation.
    pub fn accelerations(&self) -> &[[f64; 3]] {
        &self.particles.acc[..self.particles.fluid]
    }

    /// The densities of this rank's fluid particles.
    pub fn densities(&self) -> &[f64] {
        &self.particles.rho[..self.particles.fluid]
    }

    /// The masses of this rank's fluid particles.
    pub fn masses(&self) -> &[f64] {
        &self.particles.mass[..self.particles.fluid]
    }

    /// The global ids (single-process boundary index plus [`Self::fluid_total`]) and the
    /// extrapolated pressures of this rank's wall particles.
    pub fn boundary_pressures(&self) -> (Vec<u64>, Vec<f64>) {
        let p = &self.particles;
        let walls = p.fluid..p.ids.len();
        (
            p.ids[walls.clone()].to_vec(),
            p.wall[walls].iter().map(|w| w[0]).collect(),
        )
    }

    /// The simulated time, in seconds.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The number of steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The distributed search (decomposition, halo and migration statistics, timings).
    pub fn search(&self) -> &DistributedSearch<f64> {
        &self.search
    }
}

/// Sorts each local particle's neighbours by global id and splits them into the rows the
/// interactions read: fluid -> fluid and fluid -> walls for the local fluid (the fluid's
/// global ids come before the walls'), walls -> fluid for the local walls; every entry a
/// slot (fluid: local fluid, then ghost fluid; walls: local walls, then ghost walls).
fn build_rows(search: &DistributedSearch<f64>, fluid_total: u64, fluid: usize, s: &mut Scratch) {
    let local = search.local_count();
    let ghosts = search.ghost_count();
    s.slots.clear();
    s.slots.extend(0..local as u32);
    for i in fluid..local {
        s.slots[i] = (i - fluid) as u32;
    }
    let (mut ghost_fluid, mut ghost_walls) = (fluid as u32, (local - fluid) as u32);
    for g in 0..ghosts {
        if search.ghost_origin(g).id < fluid_total {
            s.slots.push(ghost_fluid);
            ghost_fluid += 1;
        } else {
            s.slots.push(ghost_walls);
            ghost_walls += 1;
        }
    }
    s.fluid_rows.clear();
    s.fluid_wall_rows.clear();
    s.wall_fluid_rows.clear();
    for i in 0..local {
        s.row.clear();
        s.row.extend(
            s.lists
                .neighbors(i)
                .iter()
                .map(|&j| (search.global_id(j as usize), j)),
        );
        s.row.sort_unstable();
        if i < fluid {
            for &(id, j) in &s.row {
                let slot = s.slots[j as usize];
                if id < fluid_total {
                    s.fluid_rows.indices.push(slot);
                } else {
                    s.fluid_wall_rows.indices.push(slot);
                }
            }
            s.fluid_rows.end_row();
            s.fluid_wall_rows.end_row();
        } else {
            for &(id, j) in &s.row {
                if id < fluid_total {
                    s.wall_fluid_rows.indices.push(s.slots[j as usize]);
                }
            }
            s.wall_fluid_rows.end_row();
        }
    }
}
