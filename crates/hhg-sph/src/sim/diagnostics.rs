//! What the tests and the binary read of a simulation: the step report, the density error,
//! the boxes of tank and walls, the particle arrays, the energies, and the VTK frames.

use std::io;
use std::path::Path;
use std::time::Duration;

use hhg_core::SetId;

use super::{Simulation, dot};
use crate::config::DamBreak;
use crate::dimension::{Dim, Dimension, ParticleSearch};
use crate::kernel::{Tait, Wendland};
use crate::vtk::{PointData, write_polydata_file};

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb<const D: usize = 3> {
    /// The lower corner.
    pub min: [f64; D],
    /// The upper corner.
    pub max: [f64; D],
}

impl<const D: usize> Aabb<D> {
    /// Tells whether `p` lies in the box grown by `tolerance` on every side.
    pub fn contains(&self, p: [f64; D], tolerance: f64) -> bool {
        (0..D).all(|k| p[k] >= self.min[k] - tolerance && p[k] <= self.max[k] + tolerance)
    }
}

/// The relative density error `|rho / rho0 - 1|` over the fluid particles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DensityError {
    /// The mean over all fluid particles.
    pub mean: f64,
    /// The largest value of any fluid particle.
    pub max: f64,
}

/// What one time step did and what it cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// The number of steps taken so far, this one included.
    pub step: u64,
    /// The simulated time after this step, in seconds.
    pub time: f64,
    /// The time step, in seconds.
    pub dt: f64,
    /// Wall time of the whole step.
    pub step_time: Duration,
    /// Wall time of the neighbour search: `update_positions` and `find_neighbors`.
    pub search_time: Duration,
    /// Wall time of permuting the particle arrays into cell order (zero when this step did
    /// not reorder).
    pub reorder_time: Duration,
    /// Whether this step permuted the particle arrays.
    pub reordered: bool,
    /// The kinetic energy after the step, in joules.
    pub kinetic_energy: f64,
    /// The density error after the step.
    pub density_error: DensityError,
}

impl StepReport {
    /// The neighbour search's share of the step's wall time, between 0 and 1.
    pub fn search_share(&self) -> f64 {
        let total = self.step_time.as_secs_f64();
        if total > 0.0 {
            self.search_time.as_secs_f64() / total
        } else {
            0.0
        }
    }
}

impl<const D: usize> Simulation<D>
where
    Dim<D>: Dimension<D>,
{
    /// The scenario this simulation was built from.
    pub fn config(&self) -> &DamBreak {
        &self.config
    }

    /// The particle spacing of the initial lattice, in metres.
    pub fn spacing(&self) -> f64 {
        self.spacing
    }

    /// The smoothing length `h`; the neighbour search radius is `2h`.
    pub fn smoothing_length(&self) -> f64 {
        self.physics.kernel.smoothing_length()
    }

    /// The kernel.
    pub fn kernel(&self) -> Wendland {
        self.physics.kernel
    }

    /// The equation of state.
    pub fn equation_of_state(&self) -> Tait {
        self.physics.eos
    }

    /// The rest density.
    pub fn rest_density(&self) -> f64 {
        self.physics.eos.rest_density()
    }

    /// The gravity vector.
    pub fn gravity(&self) -> [f64; D] {
        self.physics.gravity
    }

    /// The initial height of the water column (a whole number of spacings).
    pub fn column_height(&self) -> f64 {
        self.column_height
    }

    /// The inside of the tank: the faces of its walls, floor and lid.
    pub fn tank(&self) -> Aabb<D> {
        self.tank
    }

    /// How many layers of boundary particles line each wall.
    pub fn boundary_layers(&self) -> usize {
        self.layers
    }

    /// The outside of the boundary layers: the tank grown by the layers' thickness.
    pub fn boundary_extent(&self) -> Aabb<D> {
        let t = self.layers as f64 * self.spacing;
        Aabb {
            min: self.tank.min.map(|c| c - t),
            max: self.tank.max.map(|c| c + t),
        }
    }

    /// The simulated time, in seconds.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The number of steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The last time step (zero before the first step).
    pub fn last_time_step(&self) -> f64 {
        self.last_dt
    }

    /// The number of fluid particles.
    pub fn fluid_count(&self) -> usize {
        self.fluid.pos.len()
    }

    /// The number of boundary particles.
    pub fn boundary_count(&self) -> usize {
        self.boundary.pos.len()
    }

    /// The fluid positions, in the current (cell-ordered) numbering.
    pub fn positions(&self) -> &[[f64; D]] {
        &self.fluid.pos
    }

    /// The fluid velocities.
    pub fn velocities(&self) -> &[[f64; D]] {
        &self.fluid.vel
    }

    /// The fluid densities.
    pub fn densities(&self) -> &[f64] {
        &self.fluid.rho
    }

    /// The fluid pressures from the densities by the equation of state.
    pub fn pressures(&self) -> Vec<f64> {
        let eos = self.physics.eos;
        self.fluid
            .rho
            .iter()
            .map(|&rho| eos.pressure(rho))
            .collect()
    }

    /// The fluid masses.
    pub fn masses(&self) -> &[f64] {
        &self.fluid.mass
    }

    /// The initial index of each particle: reordering permutes particles, and this tells
    /// which one is where.
    pub fn ids(&self) -> &[u32] {
        &self.fluid.ids
    }

    /// The boundary positions (in cell order).
    pub fn boundary_positions(&self) -> &[[f64; D]] {
        &self.boundary.pos
    }

    /// The wall pressures of the last evaluation.
    pub fn boundary_pressures(&self) -> Vec<f64> {
        self.boundary.state.iter().map(|w| w.p).collect()
    }

    /// The neighbour search, with its sets and the lists of the last step.
    pub fn search(&self) -> &<Dim<D> as Dimension<D>>::Search {
        &self.search
    }

    /// The fluid's set in [`Simulation::search`].
    pub fn fluid_set(&self) -> SetId {
        self.fluid_set
    }

    /// The walls' set in [`Simulation::search`].
    pub fn boundary_set(&self) -> SetId {
        self.boundary_set
    }

    /// The mean number of neighbours per fluid particle in the last lists (fluid and wall).
    pub fn mean_neighbors(&self) -> f64 {
        let count = |b| {
            self.search
                .lists(self.fluid_set, b)
                .map_or(0, |l| l.indices().len())
        };
        let total = count(self.fluid_set) + count(self.boundary_set);
        total as f64 / self.fluid_count().max(1) as f64
    }

    /// The total fluid mass (summed in particle order).
    pub fn total_mass(&self) -> f64 {
        self.fluid.mass.iter().sum()
    }

    /// The kinetic energy `sum m |v|^2 / 2`, summed sequentially in particle order.
    pub fn kinetic_energy(&self) -> f64 {
        let mut energy = 0.0;
        for (m, v) in self.fluid.mass.iter().zip(&self.fluid.vel) {
            energy += 0.5 * m * dot(*v, *v);
        }
        energy
    }

    /// The potential energy `sum m g z` relative to the tank's floor, summed sequentially.
    pub fn potential_energy(&self) -> f64 {
        let g = -self.physics.gravity[D - 1];
        let mut energy = 0.0;
        for (m, x) in self.fluid.mass.iter().zip(&self.fluid.pos) {
            energy += m * g * x[D - 1];
        }
        energy
    }

    /// The internal (elastic) energy the Tait equation stores in the fluid,
    /// `sum m e(rho)` with `e(rho) = int_rho0^rho p / rho'^2 drho'`, summed sequentially.
    pub fn internal_energy(&self) -> f64 {
        let eos = self.physics.eos;
        let (b, rho0) = (eos.stiffness(), eos.rest_density());
        let gamma = f64::from(crate::kernel::TAIT_GAMMA);
        let at_rest = b * gamma / ((gamma - 1.0) * rho0);
        let mut energy = 0.0;
        for (m, &rho) in self.fluid.mass.iter().zip(&self.fluid.rho) {
            let e = b
                * ((rho / rho0).powi(crate::kernel::TAIT_GAMMA - 1) / ((gamma - 1.0) * rho0)
                    + 1.0 / rho)
                - at_rest;
            energy += m * e;
        }
        energy
    }

    /// The total energy: kinetic, potential and internal. Viscosity dissipates it; the walls
    /// and the density diffusion exchange a little with it.
    pub fn total_energy(&self) -> f64 {
        self.kinetic_energy() + self.potential_energy() + self.internal_energy()
    }

    /// The largest particle speed.
    pub fn max_speed(&self) -> f64 {
        let v2 = self
            .fluid
            .vel
            .iter()
            .fold(0.0f64, |m, v| m.max(dot(*v, *v)));
        v2.sqrt()
    }

    /// The mean and largest `|rho / rho0 - 1|` over the fluid.
    pub fn density_error(&self) -> DensityError {
        let rho0 = self.rest_density();
        let (mut sum, mut max) = (0.0f64, 0.0f64);
        for &rho in &self.fluid.rho {
            let e = (rho / rho0 - 1.0).abs();
            sum += e;
            max = max.max(e);
        }
        DensityError {
            mean: sum / self.fluid_count().max(1) as f64,
            max,
        }
    }

    /// Writes the fluid as a legacy VTK file: positions, density, pressure, velocity and
    /// the particle ids.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write_frame(&self, path: &Path) -> io::Result<()> {
        let pressure = self.pressures();
        let ids: Vec<f64> = self.fluid.ids.iter().map(|&i| f64::from(i)).collect();
        let title = format!(
            "hhg-sph dam break, step {}, t = {:.6} s",
            self.steps, self.time
        );
        write_polydata_file(
            path,
            &title,
            &in_space(&self.fluid.pos),
            &[
                PointData::Scalar("density", &self.fluid.rho),
                PointData::Scalar("pressure", &pressure),
                PointData::Vector("velocity", &in_space(&self.fluid.vel)),
                PointData::Scalar("id", &ids),
            ],
        )
    }

    /// Writes the boundary particles with their last wall pressure as a legacy VTK file.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write_boundary(&self, path: &Path) -> io::Result<()> {
        write_polydata_file(
            path,
            "hhg-sph dam break, boundary particles",
            &in_space(&self.boundary.pos),
            &[PointData::Scalar("pressure", &self.boundary_pressures())],
        )
    }
}

/// Vectors of `D` components as VTK's 3-component vectors: 2-D ones get a zero z.
fn in_space<const D: usize>(vectors: &[[f64; D]]) -> Vec<[f64; 3]> {
    vectors
        .iter()
        .map(|v| std::array::from_fn(|k| if k < D { v[k] } else { 0.0 }))
        .collect()
}
