//! The dam-break scenario: tank and water column sizes, resolution and the physical and
//! numerical parameters of the solver.

use hhg_core::ListOrder;

use crate::error::SphError;

/// A dam break in a closed box: a block of water at rest in the corner of a tank at the
/// origin, released at time zero.
///
/// The tank spans `[0, tank[k]]` along each axis (gravity points along `-z`); the water
/// column spans `[0, column[k]]`. Both are rounded to whole multiples of the particle
/// spacing, which [`DamBreak::particles`] and the column volume fix. A column as wide and
/// deep as the tank ([`DamBreak::column_at_rest`]) is a water column at rest in hydrostatic
/// equilibrium.
#[derive(Clone, Debug, PartialEq)]
pub struct DamBreak {
    /// Inner size of the tank along x, y and z, in metres.
    pub tank: [f64; 3],
    /// Size of the water column along x, y and z, in metres.
    pub column: [f64; 3],
    /// The approximate number of fluid particles.
    pub particles: usize,
    /// Rest density of the fluid, in kg/m^3.
    pub rest_density: f64,
    /// Magnitude of gravity, in m/s^2; it points along `-z` and sets the sound speed.
    pub gravity: f64,
    /// The sound speed as a multiple of `sqrt(g H)` for a column of height `H`: 10 keeps
    /// density variations near one percent.
    pub sound_speed_factor: f64,
    /// The smoothing length as a multiple of the particle spacing.
    pub smoothing_ratio: f64,
    /// The coefficient `alpha` of Monaghan's artificial viscosity.
    pub viscosity: f64,
    /// The coefficient `delta` of the density diffusion term (0 turns it off).
    pub density_diffusion: f64,
    /// The Courant number of the time step.
    pub cfl: f64,
    /// Every this many steps the particle arrays are permuted into the cell order of the
    /// step's grid build, which becomes their numbering (0 never reorders after the initial
    /// permutation).
    pub reorder_every: usize,
    /// The order of the entries of each neighbour list: ascending (the default) or the
    /// search's cell order, which skips sorting the lists between two reorderings. The sums
    /// over a list then add in another order: the results differ by rounding, and stay
    /// deterministic.
    pub list_order: ListOrder,
}

impl Default for DamBreak {
    /// A 0.6 m by 0.6 m by 0.3 m water column in a 1.6 m by 0.6 m by 0.6 m tank, with about
    /// 20,000 fluid particles.
    fn default() -> Self {
        Self {
            tank: [1.6, 0.6, 0.6],
            column: [0.6, 0.6, 0.3],
            particles: 20_000,
            rest_density: 1000.0,
            gravity: 9.81,
            sound_speed_factor: 10.0,
            smoothing_ratio: 1.3,
            viscosity: 0.02,
            density_diffusion: 0.1,
            cfl: 0.2,
            reorder_every: 10,
            list_order: ListOrder::Ascending,
        }
    }
}

impl DamBreak {
    /// The default dam break with about `particles` fluid particles.
    pub fn with_particles(particles: usize) -> Self {
        Self {
            particles,
            ..Self::default()
        }
    }

    /// A water column at rest that fills the floor of its tank: a `0.2 m` square tank with
    /// water `height` metres deep, `2 height` high inside, with about `particles` particles.
    pub fn column_at_rest(particles: usize, height: f64) -> Self {
        Self {
            tank: [0.2, 0.2, 2.0 * height],
            column: [0.2, 0.2, height],
            particles,
            ..Self::default()
        }
    }

    /// Checks that every value is in range.
    pub fn validate(&self) -> Result<(), SphError> {
        let positive = |name: &str, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(SphError::Config(format!(
                    "{name} must be finite and positive, not {value}"
                )))
            }
        };
        let non_negative = |name: &str, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(SphError::Config(format!(
                    "{name} must be finite and not negative, not {value}"
                )))
            }
        };
        for k in 0..3 {
            positive("every tank size", self.tank[k])?;
            positive("every column size", self.column[k])?;
            if self.column[k] > self.tank[k] {
                return Err(SphError::Config(format!(
                    "the column ({:?}) does not fit into the tank ({:?})",
                    self.column, self.tank
                )));
            }
        }
        if self.particles == 0 {
            return Err(SphError::Config("at least one particle is needed".into()));
        }
        positive("the rest density", self.rest_density)?;
        positive("gravity", self.gravity)?;
        positive("the sound speed factor", self.sound_speed_factor)?;
        positive("the smoothing ratio", self.smoothing_ratio)?;
        non_negative("the viscosity", self.viscosity)?;
        non_negative("the density diffusion", self.density_diffusion)?;
        positive("the Courant number", self.cfl)?;
        Ok(())
    }
}
