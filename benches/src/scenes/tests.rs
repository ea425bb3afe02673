//! Unit tests of the scene generators: determinism and sizes, scene names, the apportioning
//! and cluster plans, the shape of each scene (the 2-D ones among them), and the numbering and
//! counts of the sph frame.

use super::*;

#[test]
fn generators_are_deterministic_and_sized() {
    for scene in Scene::ALL.into_iter().chain(Scene::PLANE) {
        let a = scene.generate(3000, 11);
        let b = scene.generate(3000, 11);
        let c = scene.generate(3000, 12);
        if scene == Scene::Sph {
            // Fluid and walls come in whole layers of lattice cells: 2808 of them here.
            let (_, fluid, walls) = sph_lattice(sph_fluid_particles(3000));
            assert_eq!(a.len(), fluid + walls);
            assert!(a.len().abs_diff(3000) < 3000 / 10, "{}", a.len());
        } else {
            assert_eq!(a.len(), 3000, "{scene}");
        }
        assert_eq!(a, b, "{scene}: same seed, same points");
        assert_ne!(a, c, "{scene}: another seed, other points");
        assert!(a.iter().flatten().all(|c| c.is_finite()));
        assert_eq!(scene.data(3000, 11).points, a, "{scene}");
        assert_eq!(scene.data(3000, 11).plane, scene.is_plane(), "{scene}");
        if scene.is_plane() {
            assert!(a.iter().all(|p| p[2] == 0.0), "{scene}");
            assert_eq!(scene.dimensions(), 2);
        }
    }
    assert_ne!(Scene::Uniform.seed(1, 10), Scene::Dambreak.seed(1, 10));
    assert_ne!(Scene::Uniform.seed(1, 10), Scene::Uniform.seed(1, 11));
}

#[test]
fn scene_names_round_trip() {
    for scene in Scene::ALL.into_iter().chain(Scene::PLANE) {
        assert_eq!(scene.name().parse::<Scene>(), Ok(scene));
    }
    assert!("cube".parse::<Scene>().is_err());
}

#[test]
fn apportion_is_exact() {
    let counts = apportion(1000, &[1.0, 2.0, 3.0, 0.001], 4);
    assert_eq!(counts.iter().sum::<usize>(), 1000);
    assert!(counts.iter().all(|&c| c >= 4));
    assert_eq!(apportion(3, &[1.0; 5], 4).iter().sum::<usize>(), 3);
}

#[test]
fn pair_probability_limits() {
    // Far apart relative to sigma: certain; tiny radius: (4/3 pi r^3) / (4 pi sigma^2)^(3/2).
    assert_eq!(gaussian_pair_probability(0.01, 1.0), 1.0);
    let sigma = 50.0f64;
    let small =
        4.0 / 3.0 * std::f64::consts::PI / (4.0 * std::f64::consts::PI * sigma * sigma).powf(1.5);
    let p = gaussian_pair_probability(sigma, 1.0);
    assert!((p / small - 1.0).abs() < 1e-3, "{p} vs {small}");
    // The median of the chi(3) distribution is about 1.5382.
    let half = gaussian_pair_probability(1.0 / (1.5382 * std::f64::consts::SQRT_2), 1.0);
    assert!((half - 0.5).abs() < 1e-3, "{half}");
}

#[test]
fn cluster_plan_matches_its_brief() {
    let plan = cluster_plan(1_000_000, &mut Rng::new(3));
    assert_eq!(plan.populations.iter().sum::<usize>(), 1_000_000);
    let (smin, smax) = plan
        .sigmas
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &s| (a.min(s), b.max(s)));
    assert!(smax / smin > 10.0 && smax / smin <= CLUSTER_SIGMA_SPREAD);
    let pmin = *plan.populations.iter().min().unwrap();
    let pmax = *plan.populations.iter().max().unwrap();
    assert!(pmax > 100 * pmin, "populations {pmin}..{pmax}");
    assert!((plan.predicted_neighbors - CLUSTERED_NEIGHBORS).abs() < 0.5);
}

#[test]
fn new_scenes_have_their_shapes() {
    let n = 4096;
    let sheet = Scene::Sheet.generate(n, 1);
    let (side, thickness) = sheet_size(n);
    assert!((side / thickness - SHEET_ANISOTROPY).abs() < 1e-6);
    assert!(
        sheet
            .iter()
            .all(|p| p[2] >= 0.0 && f64::from(p[2]) <= thickness)
    );

    let outlier = Scene::Outlier.generate(n, 1);
    let far = outlier.iter().filter(|p| p[0] == OUTLIER_COORD).count();
    assert_eq!(far, 1);

    let data = Scene::Variable.data(n, 1);
    let radii = data.radii.as_ref().unwrap();
    assert_eq!((data.points.len(), radii.len()), (n, n));
    assert_eq!(data.points, Scene::Variable.generate(n, 1));
    let (lo, hi) = radii
        .iter()
        .fold((f32::MAX, 0.0f32), |(lo, hi), &r| (lo.min(r), hi.max(r)));
    assert!(lo >= VARIABLE_MIN_RADIUS && hi <= VARIABLE_MAX_RADIUS && hi / lo > 6.0);
    assert_eq!(data.radius, Scene::Variable.radius(n));
    let data = Scene::Variable100.data(n, 1);
    let radii = data.radii.as_ref().unwrap();
    assert_eq!(data.points, Scene::Variable100.generate(n, 1));
    let (lo, hi) = radii
        .iter()
        .fold((f32::MAX, 0.0f32), |(lo, hi), &r| (lo.min(r), hi.max(r)));
    assert!(lo >= VARIABLE100_MIN_RADIUS && hi <= VARIABLE_MAX_RADIUS && hi / lo > 60.0);
    assert_ne!(data.points, Scene::Variable.generate(n, 1));
    assert_eq!(Scene::Uniform.data(10, 1).radii, None);
    let data = Scene::Periodic.data(n, 1);
    let side = data.periodic.unwrap()[0];
    assert_eq!(side, periodic_side(n));
    assert!(
        data.points
            .iter()
            .flatten()
            .all(|&c| (0.0..side).contains(&c))
    );
    assert_eq!(Scene::Uniform.data(10, 1).periodic, None);
    assert!(periodic_side(8) >= 2.5 * RADIUS);
    // Two radii 1 and 2: the larger is 1 once and 2 three times among the four pairs.
    assert_eq!(mean_max_cubed(&[1.0, 2.0]), (1.0 + 3.0 * 8.0) / 4.0);
    assert_eq!(mean_max_power(&[1.0, 2.0], 2), (1.0 + 3.0 * 4.0) / 4.0);
}

#[test]
fn plane_variable_scenes_have_their_radii_and_square() {
    let n = 4096;
    for (scene, min_radius, spread) in [
        (Scene::Variable2d, VARIABLE_MIN_RADIUS, 6.0),
        (Scene::Variable100Plane, VARIABLE100_MIN_RADIUS, 60.0),
    ] {
        let data = scene.data(n, 1);
        let radii = data.radii.as_ref().unwrap();
        assert_eq!((data.points.len(), radii.len()), (n, n));
        assert!(data.plane && data.points.iter().all(|p| p[2] == 0.0));
        let (lo, hi) = radii
            .iter()
            .fold((f32::MAX, 0.0f32), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        assert!(lo >= min_radius && hi <= VARIABLE_MAX_RADIUS && hi / lo > spread);
        assert_eq!(scene.radius(n), VARIABLE_MAX_RADIUS);
        // The square's side is that of n points at the designed density by `max(ri, rj)`.
        let side = (n as f64 * std::f64::consts::PI * mean_max_power(radii, 2)
            / VARIABLE_NEIGHBORS)
            .sqrt();
        let extent = data
            .points
            .iter()
            .map(|p| p[0].max(p[1]))
            .fold(0.0, f32::max);
        assert!((f64::from(extent) / side - 1.0).abs() < 0.01, "{scene}");
    }
}

#[test]
fn plane_dambreak_has_its_column_and_walls() {
    let n = 20_000;
    let (width, walls) = dambreak2d_layout(n);
    assert!(2 * width * width + walls >= n && 2 * (width - 1) * (width - 1) < n);
    let points = Scene::Dambreak2d.generate(n, 5);
    let dx = (DAMBREAK2D_SPACING * f64::from(RADIUS)) as f32;
    // The walls sit on an exact lattice below the floor and beside the tank, the fluid
    // (jittered by up to 0.05 dx) inside the tank's left third.
    let below = points.iter().filter(|p| p[1] < -0.5 * dx).count();
    let beside = points
        .iter()
        .filter(|p| {
            p[1] > -0.5 * dx && (p[0] < -0.5 * dx || p[0] > (3 * width) as f32 * dx - 0.5 * dx)
        })
        .count();
    let layers = DAMBREAK2D_WALL_LAYERS;
    assert_eq!(below, layers * (3 * width + 2 * layers));
    assert_eq!(below + beside, walls);
    let fluid: Vec<&[f32; 3]> = points
        .iter()
        .filter(|p| p[1] > -0.5 * dx && p[0] > -0.5 * dx && p[0] < width as f32 * dx)
        .collect();
    assert_eq!(fluid.len(), n - walls);
    let top = fluid.iter().map(|p| p[1]).fold(0.0, f32::max);
    assert!((top / (width as f32 * dx) - 2.0).abs() < 0.1, "{top}");
    // Fewer points than walls: only walls.
    let small = Scene::Dambreak2d.generate(10, 5);
    assert_eq!(small.len(), 10);
    assert!(
        small
            .iter()
            .all(|p| p[1] < 0.0 || p[0] < 0.0 || p[0] > 2.0 * dx)
    );
}

#[test]
fn dambreak_block_has_its_aspect() {
    let points = Scene::Dambreak.generate(2 * 20 * 20 * 20, 5);
    let extent = |a: usize| {
        let (lo, hi) = points.iter().fold((f32::MAX, f32::MIN), |(lo, hi), p| {
            (lo.min(p[a]), hi.max(p[a]))
        });
        hi - lo
    };
    let (w, h, d) = (extent(0), extent(1), extent(2));
    assert!(
        (h / w - 2.0).abs() < 0.1 && (d / w - 1.0).abs() < 0.05,
        "{w} {h} {d}"
    );
}

#[test]
fn sph_frame_is_the_solver_s_numbering_of_fluid_and_walls() {
    let n = 2000;
    let particles = sph_fluid_particles(n);
    let (spacing, fluid, walls) = sph_lattice(particles);

    // A few steps: fluid then walls, finite, within the tank and its walls.
    let (frame, radius) = sph_frame(n, 3);
    assert_eq!(frame.len(), fluid + walls);
    assert!(frame.len().abs_diff(n) < n / 20, "{} points", frame.len());
    assert!(frame.iter().flatten().all(|c| c.is_finite()));
    assert!(radius > 0.0 && radius == sph_radius(n), "{radius}");
    assert!((f64::from(radius) / spacing - 2.6).abs() < 1e-6);
    let sim = Simulation::new(DamBreak::with_particles(particles)).unwrap();
    assert_eq!((sim.fluid_count(), sim.boundary_count()), (fluid, walls));
    // The fluid inside the tank, the walls half a spacing or more outside it.
    let tank = sim.tank();
    let inside = |p: &[f32; 3], tolerance: f64| tank.contains(p.map(f64::from), tolerance);
    assert!(frame[..fluid].iter().all(|p| inside(p, 0.0)));
    assert!(frame[fluid..].iter().all(|p| !inside(p, 0.4 * spacing)));
    assert_eq!(
        sph_frame(n, 3),
        (frame.clone(), radius),
        "the solver is deterministic"
    );

    // The scene: the frame after SPH_STEPS steps, shuffled by the seed, with the map back.
    let data = Scene::Sph.data(n, 7);
    assert_eq!(data, Scene::Sph.data(n, 7), "same seed, same cloud");
    assert_eq!(data.points, Scene::Sph.generate(n, 7));
    assert_eq!(
        (data.radius, data.radii, data.periodic),
        (radius, None, None)
    );
    assert_eq!(Scene::Sph.radius(n), radius);
    let (steps, _) = sph_frame(n, SPH_STEPS);
    let order = data.solver_order.as_ref().unwrap();
    let mut solver = data.points.clone();
    hhg_core::reorder::apply_order(order, &mut solver);
    assert_eq!(solver, steps, "the solver order restores the frame");
    assert_ne!(data.points, steps, "the points come shuffled");
    let other = Scene::Sph.data(n, 8);
    assert_ne!(other.points, data.points);
    let sorted = |points: &[[f32; 3]]| {
        let mut p = points.to_vec();
        p.sort_by(|a, b| a.partial_cmp(b).unwrap());
        p
    };
    assert_eq!(
        sorted(&other.points),
        sorted(&data.points),
        "another shuffle only"
    );
    assert!(Scene::Sph.is_plain() && Scene::Sph.has_solver_order());
    assert!(
        !Scene::Uniform.has_solver_order() && Scene::Uniform.data(10, 1).solver_order.is_none()
    );
    assert!(Scene::Sph.data(0, 1).points.is_empty());
}

#[test]
fn sph_counts_come_close_to_the_request() {
    for n in [1_000, 10_000, 100_000, 1_000_000, 10_000_000] {
        let (_, fluid, walls) = sph_lattice(sph_fluid_particles(n));
        let total = fluid + walls;
        assert!(total.abs_diff(n) * 100 <= n, "{n}: {fluid} + {walls}");
    }
    assert_eq!(sph_fluid_particles(1), 1);
}
