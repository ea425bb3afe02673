//! hhg-sph: a weakly compressible SPH dam break on hhg-core's neighbour search.
//!
//! This crate is the first client of hhg: a 3-D SPH solver written the way an outside solver
//! would link hhg, through hhg-core's public API only. It simulates a dam break in a closed
//! box ([`DamBreak`]) with
//!
//! - the Wendland C2 kernel with support radius `2h`, `h = 1.3` particle spacings ([`Wendland`]);
//! - the Tait equation of state with `gamma = 7` and a sound speed of ten times the largest
//!   free-fall speed scale `sqrt(g H)` ([`Tait`]);
//! - the continuity equation for the density, with density diffusion (delta-SPH, without its
//!   hydrostatic part) against the noise of the pressure field;
//! - Monaghan's artificial viscosity;
//! - walls, floor and lid made of three layers of static boundary particles whose pressure is
//!   extrapolated from the fluid each step (Adami, Hu and Adams 2012), with a short-range
//!   Lennard-Jones repulsion within 0.9 spacings of a boundary particle as a safety net for
//!   thin films, whose near-zero pressure the extrapolation cannot push back;
//! - velocity Verlet (kick-drift-kick) time integration with a Courant and force time step.
//!
//! The same solver runs in 2-D ([`Simulation2`], `Simulation<2>`): the x-z section of the
//! dam break (tank and column take the x and z sizes of the [`DamBreak`], gravity points
//! along `-y`), with the 2-D Wendland normalisation `7 / (4 pi h^2)`, on hhg-core's
//! `plane::NeighborSearch2`; [`Dimension`] maps the dimension to its search. The distributed
//! solver is 3-D only.
//!
//! The binary `hhg-sph` runs it, prints the cost of the search per step and writes frames
//! as legacy VTK files that ParaView opens.
//!
//! # Wiring hhg into a solver
//!
//! The solver keeps its particles as structure-of-arrays vectors (positions, velocities,
//! densities, masses, ...). At set-up it creates one [`hhg_core::NeighborSearch`] with the
//! search radius `2h` and registers two point sets:
//!
//! ```text
//! let mut search = NeighborSearch::new(2.0 * h)?;
//! let fluid = search.add_dynamic_set(&positions)?;        // rebuilt every search
//! let walls = search.add_static_set(&boundary_positions)?; // built once, reused
//! search.set_active(fluid, fluid, true)?; // fluid -> fluid: forces, continuity
//! search.set_active(fluid, walls, true)?; // fluid -> walls: wall forces
//! search.set_active(walls, fluid, true)?; // walls -> fluid: wall pressure extrapolation
//! ```
//!
//! The activation table decides which lists exist: the fluid needs its fluid and its wall
//! neighbours, and each wall particle needs its fluid neighbours to extrapolate a pressure.
//! Walls against walls is never searched. The static walls are put into cell order once
//! (`adopt_cell_order(walls)`, whose permutation is applied to their positions; their grid
//! is not rebuilt).
//!
//! ## One time step
//!
//! ```text
//! half kick + drift          v += dt/2 a;  rho += dt/2 drho;  x += dt v
//! update positions           search.update_positions(fluid, &x)
//! (every k steps) reorder    order = search.adopt_cell_order(fluid)?;
//!                            apply_order_with(order, &mut x / v / a / rho / drho / m / ids, &mut scratch)
//! find neighbours            search.find_neighbors()
//! read CSR                   ff = search.neighbors(fluid, fluid); fw = (fluid, walls); wf = (walls, fluid)
//! density                    predicted v*, rho*; fluid pressure p = Tait(rho*);
//!                            wall pressure from wf (Adami)
//! pressure + forces          a_i, drho_i over ff.neighbors(i) then fw.neighbors(i)
//! integrate                  v += dt/2 a;  rho += dt/2 drho
//! ```
//!
//! The lists are read in CSR form: `lists.neighbors(i)` is the slice
//! `indices()[offsets()[i]..offsets()[i + 1]]`, ascending, in the solver's own numbering
//! (the numbering of the last `update_positions`). Each particle's sums run over its own
//! list in that order, so every particle is computed by one thread and every sum is the same
//! whatever the thread count: the simulation is bitwise identical on 1 and on 2 threads.
//! The lists hold both directions of every pair, so no force is scattered and no atomics are
//! needed. Squared distances are available (`set_with_distances(true)`) but not requested:
//! the solver needs the difference vector `x_i - x_j` anyway.
//!
//! Reordering happens between the build and the lists: `adopt_cell_order(fluid)` makes the
//! cell order of this step's build the particles' numbering and returns the permutation,
//! which is applied to every persistent per-particle array; `find_neighbors` right after
//! numbers the new lists in the new order, with no second build, and takes the search's
//! faster pass for points in cell order (no list needs sorting; 1.7x faster fluid lists in
//! a measurement on 200k particles moved by up to 0.05 dx from cell order). Reordering by
//! the order of an earlier build instead, and then rebuilding, leaves the particles only
//! nearly in cell order: whoever changed cell since that build breaks it. The lists of the
//! previous step are invalid after a reorder; they are never read again, since the search
//! follows immediately.
//!
//! ## What each call costs
//!
//! Measured on the default dam break with 97,556 fluid and 138,768 boundary particles
//! (`h = 1.3 dx`, 78 neighbours per fluid particle, `f64`), CPU time of one thread per step:
//!
//! - `update_positions(fluid, x)`: the grid build of the dynamic set, about 5 ms: linear in
//!   the fluid count and parallel (hash 8 points at a time, a stable counting sort by cell,
//!   a gather of the sorted coordinates), with no allocation once the buffers have grown.
//! - `find_neighbors()`: one list build per active pair of sets whose lists are stale:
//!   fluid -> fluid, the bulk, about 85 ms; fluid -> walls about 14 ms and walls -> fluid
//!   about 18 ms (only particles near a wall find anything; the others cost a cell lookup).
//!   The walls' grid is not rebuilt.
//! - `neighbors(a, b)`: free, a borrow of the stored lists.
//! - `adopt_cell_order(set)` with `apply_order_with`: an identity written into the grid's
//!   order, then one parallel gather per array, linear in the particle count; every 10
//!   steps it is about 0.1-0.5 % of the run, at every step about 1.5 %.
//! - The solver's own passes over the lists (wall pressures, then forces and density rates)
//!   cost about as much as the search: the search is about half of each step.
//!
//! The binary prints the measured share of the search (`update_positions` plus
//! `find_neighbors`) in each step.
//!
//! ```
//! use hhg_sph::{DamBreak, Simulation};
//!
//! let mut sim = Simulation::new(DamBreak::with_particles(500))?;
//! let report = sim.step()?;
//! assert_eq!(report.step, 1);
//! assert!(sim.density_error().max < 0.05);
//! # Ok::<(), hhg_sph::SphError>(())
//! ```

mod config;
mod dimension;
#[cfg(feature = "mpi")]
pub mod distributed;
mod error;
mod kernel;
mod sim;
pub mod vtk;

pub use config::DamBreak;
pub use dimension::{Dim, Dimension, ParticleSearch};
#[cfg(feature = "mpi")]
pub use distributed::{DistributedSimulation, DistributedStepReport};
pub use error::SphError;
pub use kernel::{TAIT_GAMMA, Tait, Wendland};
pub use sim::{Aabb, DensityError, Simulation, StepReport};

/// The 2-D dam break: the x-z section of a [`DamBreak`] on hhg-core's
/// `plane::NeighborSearch2`, made by [`Simulation::with_config`].
pub type Simulation2 = Simulation<2>;
