//! The 2-D dam break (`Simulation2`, on hhg-core's `plane::NeighborSearch2`): the set-up
//! counts, the 2-D kernel's normalisation, the search wiring, and the physics checks of the
//! 3-D tests (the column collapses, no particle leaves the tank, mass is conserved, one and
//! two threads give the same bits).

use crate::common;

use common::small_dam_break;
use hhg_core::ListOrder;
use hhg_sph::{DamBreak, Simulation2, SphError, Wendland};

/// The 2-D Wendland kernel integrates to one over the plane (Simpson's rule over the
/// support, `2 pi r W(r) dr`), and its gradient factor is its derivative over `r`.
#[test]
fn wendland_2d_integrates_to_one() {
    for h in [0.01, 0.5, 2.0] {
        let kernel = Wendland::in_dimension(h, 2).unwrap();
        let n = 2000;
        let step = kernel.support() / f64::from(n);
        let mut integral = 0.0;
        for k in 0..=n {
            let r = f64::from(k) * step;
            let weight = if k == 0 || k == n {
                1.0
            } else if k % 2 == 1 {
                4.0
            } else {
                2.0
            };
            integral += weight * 2.0 * std::f64::consts::PI * r * kernel.value(r);
        }
        integral *= step / 3.0;
        assert!((integral - 1.0).abs() < 1e-9, "h = {h}: {integral}");
        assert_eq!(kernel.value(kernel.support()), 0.0);
        for k in 1..40 {
            let r = 0.05 * h * f64::from(k);
            let e = 1e-7 * h;
            let numeric = (kernel.value(r + e) - kernel.value(r - e)) / (2.0 * e);
            let analytic = r * kernel.gradient_factor(r);
            assert!(
                (numeric - analytic).abs() <= 1e-5 * analytic.abs().max(1.0 / (h * h * h)),
                "h = {h}, r = {r}: {numeric} against {analytic}"
            );
        }
    }
    assert_eq!(Wendland::in_dimension(1.0, 3), Some(Wendland::new(1.0)));
    assert_eq!(Wendland::in_dimension(1.0, 4), None);
}

/// The initial state: the x-z section of the column on a square lattice in hydrostatic
/// equilibrium, at rest, lined by boundary layers that fill the kernel support.
#[test]
fn set_up_fills_the_section_and_lines_the_tank() {
    let config = small_dam_break(1000);
    let sim = Simulation2::with_config(config.clone()).unwrap();
    let (dx, h) = (sim.spacing(), sim.smoothing_length());
    // 0.1 m by 0.08 m with about 1000 particles: dx = sqrt(0.008 / 1000).
    assert!((dx - (0.008f64 / 1000.0).sqrt()).abs() < 1e-15);
    let columns = (0.1 / dx).round() as usize;
    let rows = (0.08 / dx).round() as usize;
    assert_eq!(sim.fluid_count(), columns * rows);
    assert!((h / dx - 1.3).abs() < 1e-12);
    let layers = sim.boundary_layers();
    assert!(layers as f64 * dx >= 2.0 * h);
    let tank = sim.tank();
    let cells = [0, 1].map(|k| (tank.max[k] / dx).round() as usize);
    assert_eq!(
        cells,
        [(0.2 / dx).round() as usize, (0.12 / dx).round() as usize]
    );
    let outer = (cells[0] + 2 * layers) * (cells[1] + 2 * layers);
    assert_eq!(sim.boundary_count(), outer - cells[0] * cells[1]);
    assert_eq!(sim.masses()[0], config.rest_density * dx * dx);
    let extent = sim.boundary_extent();
    for p in sim.positions() {
        assert!(tank.contains(*p, 0.0));
        assert!(p[1] < sim.column_height());
    }
    for p in sim.boundary_positions() {
        assert!(extent.contains(*p, 0.0));
        assert!(!tank.contains(*p, 0.0));
    }
    assert!(sim.velocities().iter().all(|v| *v == [0.0; 2]));
    assert_eq!(sim.gravity(), [0.0, -config.gravity]);
    let (rho0, g) = (sim.rest_density(), config.gravity);
    for (p, x) in sim.pressures().iter().zip(sim.positions()) {
        let hydrostatic = rho0 * g * (sim.column_height() - x[1]);
        assert!((p - hydrostatic).abs() < 1e-6 * rho0 * g);
    }
    assert_eq!(sim.kinetic_energy(), 0.0);
}

/// The plane's search holds the fluid and the walls with the three lists the solver reads;
/// within 2.6 spacings of a lattice point lie 20 others, all found in the bulk.
#[test]
fn search_wires_fluid_and_walls_in_the_plane() {
    let sim = Simulation2::with_config(small_dam_break(1000)).unwrap();
    let search = sim.search();
    let (f, b) = (sim.fluid_set(), sim.boundary_set());
    assert_eq!(search.set_count(), 2);
    assert!(search.is_active(f, f) && search.is_active(f, b) && search.is_active(b, f));
    assert!(!search.is_active(b, b));
    let ff = search.neighbors(f, f).unwrap();
    let fb = search.neighbors(f, b).unwrap();
    assert_eq!(ff.len(), sim.fluid_count());
    assert_eq!(search.neighbors(b, f).unwrap().len(), sim.boundary_count());
    let counts: Vec<usize> = (0..ff.len())
        .map(|i| ff.neighbors(i).len() + fb.neighbors(i).len())
        .collect();
    // Lattice points (i, j) with 0 < i^2 + j^2 <= 2.6^2: 4 + 4 + 4 + 8 (r = 1, sqrt 2, 2,
    // sqrt 5) = 20.
    assert_eq!(counts.iter().max(), Some(&20));
    assert!(sim.mean_neighbors() > 15.0);
}

/// The 2-D search has ascending lists only; a cell-order request is refused, not ignored.
#[test]
fn cell_order_lists_are_refused_in_2d() {
    let config = DamBreak {
        list_order: ListOrder::CellOrder,
        ..small_dam_break(200)
    };
    match Simulation2::with_config(config) {
        Err(SphError::Config(message)) => assert!(message.contains("2-D"), "{message}"),
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

/// Mass is conserved exactly across reorders, no particle leaves the tank through the
/// collapse and the impact on the far wall, and the column collapses: its front runs to the
/// far wall and its top falls.
#[test]
fn the_column_collapses_inside_the_tank() {
    let config = DamBreak {
        reorder_every: 3,
        ..small_dam_break(800)
    };
    let mut sim = Simulation2::with_config(config).unwrap();
    let (n, nb) = (sim.fluid_count(), sim.boundary_count());
    let total = sim.total_mass();
    let tank = sim.tank();
    let tolerance = 0.25 * sim.spacing();
    // The centre of the fluid: it falls and moves towards the far wall as the column
    // collapses (the highest particle may rise, in the splash up the far wall).
    let centre = |sim: &Simulation2| {
        let sum = sim
            .positions()
            .iter()
            .fold([0.0; 2], |c, x| [c[0] + x[0], c[1] + x[1]]);
        sum.map(|c| c / sim.fluid_count() as f64)
    };
    let before = centre(&sim);
    let (mut reached, mut reorders, mut worst_density) = (0.0f64, 0, 0.0f64);
    while sim.time() < 0.2 {
        let report = sim.step().unwrap();
        reorders += usize::from(report.reordered);
        worst_density = worst_density.max(report.density_error.max);
        assert_eq!((sim.fluid_count(), sim.boundary_count()), (n, nb));
        assert_eq!(sim.total_mass().to_bits(), total.to_bits());
        for (i, p) in sim.positions().iter().enumerate() {
            assert!(
                tank.contains(*p, tolerance),
                "particle {i} at {p:?} left the tank {tank:?} at step {}",
                report.step
            );
            reached = reached.max(p[0]);
        }
    }
    assert!(
        reorders > 10,
        "the test must exercise the reordering ({reorders})"
    );
    assert!(
        reached > tank.max[0] - sim.spacing(),
        "the front got to x = {reached}"
    );
    let after = centre(&sim);
    assert!(
        after[1] < 0.8 * before[1] && after[0] > 1.3 * before[0],
        "the column did not collapse: its centre went from {before:?} to {after:?}"
    );
    assert!(worst_density < 0.2, "density error {worst_density}");
    let mut ids = sim.ids().to_vec();
    ids.sort_unstable();
    assert!(ids.iter().enumerate().all(|(k, &id)| id as usize == k));
}

/// One and two threads give the same bits after steps with reorders.
#[test]
fn one_and_two_threads_agree_bitwise_in_2d() {
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let config = DamBreak {
                reorder_every: 4,
                ..small_dam_break(600)
            };
            let mut sim = Simulation2::with_config(config).unwrap();
            sim.run(30).unwrap();
            let bits = |values: &[[f64; 2]]| {
                values
                    .iter()
                    .flat_map(|v| v.map(f64::to_bits))
                    .collect::<Vec<u64>>()
            };
            (
                bits(sim.positions()),
                bits(sim.velocities()),
                sim.densities()
                    .iter()
                    .map(|d| d.to_bits())
                    .collect::<Vec<_>>(),
                sim.ids().to_vec(),
                sim.boundary_pressures()
                    .iter()
                    .map(|p| p.to_bits())
                    .collect::<Vec<_>>(),
            )
        })
    };
    let one = run(1);
    assert!(one == run(2), "1 and 2 threads differ");
}
