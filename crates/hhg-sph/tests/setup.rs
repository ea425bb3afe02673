//! The scenario set-up, the configuration checks, the neighbour search wiring and the VTK
//! frames.

use crate::common;

use common::small_dam_break;
use hhg_sph::{DamBreak, Simulation, SphError};

/// The initial state: particles on the lattice inside the tank, in hydrostatic equilibrium,
/// at rest, with boundary layers filling the kernel support around the tank.
#[test]
fn set_up_fills_the_column_and_lines_the_tank() {
    let sim = Simulation::new(small_dam_break(1000)).unwrap();
    let (dx, h) = (sim.spacing(), sim.smoothing_length());
    assert!((sim.fluid_count() as f64 - 1000.0).abs() < 150.0);
    assert!((h / dx - 1.3).abs() < 1e-12);
    assert!(sim.boundary_layers() as f64 * dx >= 2.0 * h);
    let tank = sim.tank();
    let extent = sim.boundary_extent();
    for p in sim.positions() {
        assert!(tank.contains(*p, 0.0));
        assert!(p[2] < sim.column_height());
    }
    for p in sim.boundary_positions() {
        assert!(extent.contains(*p, 0.0));
        assert!(!tank.contains(*p, 0.0));
    }
    assert!(sim.velocities().iter().all(|v| *v == [0.0; 3]));
    let (rho0, g) = (sim.rest_density(), -sim.gravity()[2]);
    for (p, x) in sim.pressures().iter().zip(sim.positions()) {
        let hydrostatic = rho0 * g * (sim.column_height() - x[2]);
        assert!((p - hydrostatic).abs() < 1e-6 * rho0 * g);
    }
    assert_eq!(sim.kinetic_energy(), 0.0);
    assert_eq!(sim.steps(), 0);
}

/// The search holds the fluid and the walls with the three lists the solver reads, and the
/// lists hold about the lattice's neighbour count.
#[test]
fn search_wires_fluid_and_walls() {
    let sim = Simulation::new(small_dam_break(1000)).unwrap();
    let search = sim.search();
    let (f, b) = (sim.fluid_set(), sim.boundary_set());
    assert_eq!(search.set_count(), 2);
    assert!(search.is_active(f, f) && search.is_active(f, b) && search.is_active(b, f));
    assert!(!search.is_active(b, b));
    let ff = search.neighbors(f, f).unwrap();
    assert_eq!(ff.len(), sim.fluid_count());
    assert_eq!(search.neighbors(b, f).unwrap().len(), sim.boundary_count());
    // Within 2.6 spacings of a lattice point lie 80 others; the fluid and the walls together
    // continue the lattice, so a particle in the bulk sees all of them.
    let most = (0..ff.len())
        .map(|i| ff.neighbors(i).len() + search.neighbors(f, b).unwrap().neighbors(i).len())
        .max()
        .unwrap();
    assert_eq!(most, 80);
    assert!(sim.mean_neighbors() > 60.0);
}

/// Out-of-range configurations are refused with a message naming the value.
#[test]
fn bad_configurations_are_refused() {
    let bad = [
        DamBreak {
            particles: 0,
            ..DamBreak::default()
        },
        DamBreak {
            column: [2.0, 0.6, 0.3],
            ..DamBreak::default()
        },
        DamBreak {
            gravity: 0.0,
            ..DamBreak::default()
        },
        DamBreak {
            cfl: f64::NAN,
            ..DamBreak::default()
        },
        DamBreak {
            tank: [1.0, -1.0, 1.0],
            ..DamBreak::default()
        },
    ];
    for config in bad {
        match Simulation::new(config.clone()) {
            Err(SphError::Config(message)) => assert!(!message.is_empty()),
            other => panic!("{config:?} gave {other:?}"),
        }
    }
}

/// A frame is a legacy VTK binary POLYDATA file with the points and their data, and its
/// points are the particle positions.
#[test]
fn frames_are_legacy_vtk_polydata() {
    let mut sim = Simulation::new(small_dam_break(300)).unwrap();
    sim.step().unwrap();
    let dir = std::env::temp_dir().join(format!("hhg-sph-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fluid.vtk");
    sim.write_frame(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let n = sim.fluid_count();
    let header = format!(
        "# vtk DataFile Version 3.0\nhhg-sph dam break, step 1, t = {:.6} s\nBINARY\n\
         DATASET POLYDATA\nPOINTS {n} float\n",
        sim.time()
    );
    assert!(bytes.starts_with(header.as_bytes()));
    let at = header.len();
    for (i, p) in sim.positions().iter().enumerate().take(10) {
        for k in 0..3 {
            let o = at + 12 * i + 4 * k;
            let value = f32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
            assert_eq!(value, p[k] as f32);
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    for line in [
        format!("\nVERTICES {n} {}\n", 2 * n),
        format!("\nPOINT_DATA {n}\n"),
        "\nSCALARS density float 1\nLOOKUP_TABLE default\n".to_string(),
        "\nSCALARS pressure float 1\nLOOKUP_TABLE default\n".to_string(),
        "\nVECTORS velocity float\n".to_string(),
    ] {
        assert!(text.contains(&line), "no {line:?}");
    }
    // Header lines, points, vertices (2 ints each), 3 scalars and one vector per point.
    let payload = 12 * n + 8 * n + 3 * 4 * n + 12 * n;
    assert!(bytes.len() > payload && bytes.len() < payload + 512);
    let boundary = dir.join("boundary.vtk");
    sim.write_boundary(&boundary).unwrap();
    assert!(std::fs::metadata(&boundary).unwrap().len() > 16 * sim.boundary_count() as u64);
    std::fs::remove_dir_all(&dir).unwrap();
}
