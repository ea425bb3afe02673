//! Physics checks of the dam break on small cases: conservation of mass, containment by the
//! walls, hydrostatic equilibrium of a column at rest, and the decay of sloshing.

use crate::common;

use common::small_dam_break;
use hhg_sph::{DamBreak, Simulation};

/// Mass is conserved exactly: the particle count, every particle's mass and the total mass
/// never change, and reordering only permutes the particles (the ids stay a permutation).
#[test]
fn mass_is_conserved_exactly_across_reorders() {
    let config = DamBreak {
        reorder_every: 3,
        ..small_dam_break(1000)
    };
    let mut sim = Simulation::new(config).unwrap();
    let (n, nb) = (sim.fluid_count(), sim.boundary_count());
    let mass = sim.masses()[0];
    let total = sim.total_mass();
    assert_eq!(total.to_bits(), (0..n).map(|_| mass).sum::<f64>().to_bits());
    let mut reorders = 0;
    for _ in 0..40 {
        let report = sim.step().unwrap();
        reorders += usize::from(report.reordered);
        assert_eq!(sim.fluid_count(), n);
        assert_eq!(sim.boundary_count(), nb);
        assert_eq!(sim.positions().len(), n);
        assert_eq!(sim.velocities().len(), n);
        assert_eq!(sim.densities().len(), n);
        assert!(sim.masses().iter().all(|m| m.to_bits() == mass.to_bits()));
        assert_eq!(sim.total_mass().to_bits(), total.to_bits());
    }
    assert_eq!(reorders, 13, "the test must exercise the reordering");
    let mut ids = sim.ids().to_vec();
    ids.sort_unstable();
    assert!(ids.iter().enumerate().all(|(k, &id)| id as usize == k));
}

/// No fluid particle leaves the tank, through the collapse and the impact of the front on
/// the far wall: every position stays within a quarter spacing of the walls' faces. The
/// flow stays weakly compressible: the mean density error below one percent throughout, the
/// largest below 15 % even in the impact's pressure peak at this coarse resolution.
#[test]
fn no_particle_leaves_the_tank() {
    let mut sim = Simulation::new(small_dam_break(600)).unwrap();
    let tank = sim.tank();
    let tolerance = 0.25 * sim.spacing();
    let mut reached = 0.0f64;
    let mut worst_density = 0.0f64;
    while sim.time() < 0.2 {
        let report = sim.step().unwrap();
        worst_density = worst_density.max(report.density_error.max);
        for (i, p) in sim.positions().iter().enumerate() {
            assert!(
                tank.contains(*p, tolerance),
                "particle {i} at {p:?} left the tank {tank:?} at step {}",
                report.step
            );
            reached = reached.max(p[0]);
        }
    }
    // The front must have hit the far wall for the check to mean anything.
    assert!(
        reached > tank.max[0] - sim.spacing(),
        "the front got to x = {reached}"
    );
    assert!(
        worst_density < 0.15,
        "density error {worst_density} during the impact"
    );
    assert!(sim.density_error().mean < 0.01);
}

/// A column of water at rest in hydrostatic equilibrium stays at rest: the density error
/// stays at the weakly compressible level (`g H / c0^2 = 1 %`), the pressure follows
/// `rho0 g (H - z)`, the surface stays where it was, and spurious velocities stay small.
#[test]
fn column_at_rest_stays_in_hydrostatic_equilibrium() {
    let height = 0.1;
    let mut sim = Simulation::new(DamBreak::column_at_rest(1500, height)).unwrap();
    let h = sim.column_height();
    let (rho0, g) = (sim.rest_density(), -sim.gravity()[2]);
    let speed_scale = (g * h).sqrt();
    for _ in 0..300 {
        let report = sim.step().unwrap();
        assert!(report.density_error.max < 0.015, "{report:?}");
        assert!(report.density_error.mean < 0.008, "{report:?}");
        assert!(
            sim.max_speed() < 0.05 * speed_scale,
            "max speed {}",
            sim.max_speed()
        );
    }
    // The pressure of the lower half against the hydrostatic pressure at the same depth.
    let pressures = sim.pressures();
    let (mut deviation, mut count) = (0.0, 0);
    for (p, x) in pressures.iter().zip(sim.positions()) {
        if x[2] < 0.5 * h {
            let hydrostatic = rho0 * g * (h - x[2]);
            deviation += (p - hydrostatic).abs() / hydrostatic;
            count += 1;
        }
    }
    let deviation = deviation / f64::from(count);
    assert!(deviation < 0.05, "pressure off hydrostatics by {deviation}");
    let top = sim.positions().iter().fold(0.0f64, |t, x| t.max(x[2]));
    assert!(
        (top - (h - 0.5 * sim.spacing())).abs() < 0.5 * sim.spacing(),
        "the surface moved to {top} from {h}"
    );
}

/// A block released at rest in a closed box sloshes, and the sloshing dies down: the total
/// energy (kinetic, potential and internal) never grows, the kinetic energy falls to a few
/// percent of its peak once the wave has run back and forth, and the potential energy ends
/// lower than it started. The artificial viscosity is raised to `alpha = 0.3` so that this
/// happens within half a second of simulated time.
#[test]
fn sloshing_dies_down() {
    let config = DamBreak {
        viscosity: 0.3,
        ..small_dam_break(600)
    };
    let mut sim = Simulation::new(config).unwrap();
    let (potential0, energy0) = (sim.potential_energy(), sim.total_energy());
    let mut peak = 0.0f64;
    let mut late = Vec::new();
    let mut energy = energy0;
    while sim.time() < 0.5 {
        let report = sim.step().unwrap();
        let total = sim.total_energy();
        assert!(
            total <= energy0 + 1e-4 * energy0,
            "total energy {total} above the initial {energy0} at t = {}",
            report.time
        );
        // Step to step it may wobble by the work of the walls and the density diffusion,
        // but not by more than a tiny fraction.
        assert!(
            total <= energy + 1e-4 * energy0,
            "energy grew to {total} from {energy}"
        );
        energy = total;
        peak = peak.max(report.kinetic_energy);
        if report.time > 0.4 {
            late.push(report.kinetic_energy);
        }
    }
    let late_mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!(
        peak > 0.1 * (potential0 - sim.potential_energy()),
        "no sloshing: peak {peak}"
    );
    assert!(
        late_mean < 0.1 * peak,
        "kinetic energy {late_mean} late against a peak of {peak}"
    );
    assert!(sim.potential_energy() < potential0);
    assert!(sim.total_energy() < energy0 - 0.5 * (potential0 - sim.potential_energy()));
}
