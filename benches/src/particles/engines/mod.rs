//! The engines under comparison: hhg itself, the kiddo k-d tree, the rstar R*-tree and an
//! O(n^2) brute force; the Python peers run in their own process ([`python`]).
//!
//! Every engine turns a point set and a radius (or one radius per point) into neighbour lists
//! in compressed sparse row form, both directions, excluding self, decided by the exact
//! predicate [`crate::pairs::within`] (with radii: [`hhg_core::broad::sphere_pair_within`] by
//! the rule `|xi - xj| <= max(ri, rj)`). hhg runs `Grid` for one radius and
//! `VariableRadiusSearch` for radii, and in the plane (the 2-D scenes) `Grid2` and
//! `VariableRadiusSearch2`; `hhg-cellorder` runs the same `Grid` with its lists in
//! cell order (`ListOrder::CellOrder`: the same entries, not sorted), for one radius in open
//! space only; the tree peers search within the largest radius and
//! re-check every candidate with the exact predicate. In a periodic box (the periodic scene)
//! only hhg (`PeriodicSearch`), brute force and the Python peers run; their pairs carry the
//! minimum-image shift, which the checksum covers ([`crate::pairs::periodic_checksum`]).
//! hhg reuses the grid and lists of the previous run of the same measurement, as an SPH solver
//! does from one time step to the next (its buffers only grow, so a repeated run allocates
//! nothing); the peers' APIs build new structures every run. All parallel work runs on the
//! current rayon thread pool, so the caller picks the thread count with `ThreadPool::install`.

mod brute;
mod hhg;
mod kiddo;
mod output;
pub mod python;
mod rstar;

pub use brute::minimum_image;
pub use output::{Csr, Output};

use std::fmt;
use std::str::FromStr;

use hhg_core::broad::sphere_pair_within;
use hhg_core::{Grid, ListOrder, ListPass};

use crate::pairs::within;
use crate::scenes::SceneData;

use self::brute::{run_brute, run_brute_periodic};
use self::hhg::{run_hhg, run_hhg_periodic, run_hhg_plane, run_hhg_variable};
use self::kiddo::run_kiddo;
use self::output::Lists;
use self::rstar::run_rstar;

/// The largest point count the brute-force engine runs on.
pub const BRUTE_MAX_N: usize = 20_000;

/// The relative amount by which kiddo's squared search radius is widened.
///
/// kiddo evaluates distances its own way (possibly with SIMD and another summation order), so it
/// searches a slightly larger ball and every candidate is then re-checked with the exact
/// predicate; the result is exactly the pairs the other engines report.
pub const KIDDO_RADIUS2_SLACK: f32 = 1e-5;

/// A Python peer, run by `benches/python/peers.py` in its own process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PyPeer {
    /// vesin's `NeighborList` (cell lists, C++).
    Vesin,
    /// freud's `AABBQuery` (a BVH, C++ with TBB threads).
    Freud,
    /// scipy's `cKDTree.query_pairs`.
    Scipy,
    /// matscipy's `neighbour_list` (cell lists, C).
    Matscipy,
    /// hhg's own Python package (`crates/hhg-py`): the Rust engine's calls through the
    /// binding (open), or its vesin-compatible `NeighborList` (periodic box).
    HhgPython,
}

impl PyPeer {
    /// All Python peers.
    pub const ALL: [PyPeer; 5] = [
        PyPeer::Vesin,
        PyPeer::Freud,
        PyPeer::Scipy,
        PyPeer::Matscipy,
        PyPeer::HhgPython,
    ];

    /// The peer's name, as the script reports it.
    pub fn name(self) -> &'static str {
        match self {
            PyPeer::Vesin => "vesin",
            PyPeer::Freud => "freud",
            PyPeer::Scipy => "scipy",
            PyPeer::Matscipy => "matscipy",
            PyPeer::HhgPython => "hhg-python",
        }
    }
}

/// A neighbour search engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    /// hhg-core: `Grid::build` plus `Grid::neighbor_lists`; with radii, `VariableRadiusSearch`.
    Hhg,
    /// hhg-core's `Grid` as [`Engine::Hhg`], with `ListOrder::CellOrder`: each list in the
    /// grid's cell order instead of ascending (the same entries, so the same pairs and
    /// checksum). One radius in open space only.
    HhgCellOrder,
    /// kiddo's `ImmutableKdTree`, one within-radius query per point in parallel.
    Kiddo,
    /// rstar's `RTree` (bulk loaded), one within-distance query per point in parallel.
    Rstar,
    /// All pairs, O(n^2), parallel over the query point; only up to [`BRUTE_MAX_N`] points.
    Brute,
    /// A Python peer (see [`crate::particles::engines::python`]); it cannot run in this process.
    Python(PyPeer),
}

/// The search radius of a run: one for all points, or one per point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Radius<'a> {
    /// One radius for every pair.
    Fixed(f32),
    /// One radius per point; `i` and `j` are neighbours iff `|xi - xj| <= max(ri, rj)`.
    PerPoint(&'a [f32]),
    /// One radius, every point in the plane `z = 0` (the 2-D scenes): hhg runs its plane grid
    /// (`Grid2`) and kiddo a 2-D tree on `x` and `y`; the other engines search in 3-D, where
    /// `z = 0` changes no distance (`(dx*dx + dy*dy) + 0*0` is `dx*dx + dy*dy` exactly).
    Plane(f32),
    /// One radius per point, every point in the plane `z = 0` (the 2-D variable-radius
    /// scenes): hhg runs `VariableRadiusSearch2` and kiddo a 2-D tree within the largest
    /// radius; the other engines search in 3-D, where `z = 0` changes no distance.
    PlanePerPoint(&'a [f32]),
    /// One radius in the box `0..lengths`, periodic along all three axes: `i` and `j` are
    /// neighbours iff the minimum image of `xj` is within the radius of `xi`.
    Periodic {
        /// The radius.
        radius: f32,
        /// The box's edge lengths, each longer than twice the radius.
        lengths: [f32; 3],
    },
}

impl Radius<'_> {
    /// The largest radius a pair can have.
    pub fn max(&self) -> f32 {
        match self {
            Radius::Fixed(r) | Radius::Plane(r) | Radius::Periodic { radius: r, .. } => *r,
            Radius::PerPoint(radii) | Radius::PlanePerPoint(radii) => {
                radii.iter().copied().fold(0.0, f32::max)
            }
        }
    }

    /// Whether every point lies in the plane `z = 0`, where hhg and kiddo search in 2-D.
    pub fn is_plane(&self) -> bool {
        matches!(self, Radius::Plane(_) | Radius::PlanePerPoint(_))
    }
}

/// The points' `x` and `y`: what hhg's 2-D types and kiddo's 2-D tree take in the plane
/// (copied before the clock starts).
pub(super) fn plane_coordinates(points: &[[f32; 3]]) -> Vec<[f32; 2]> {
    points.iter().map(|p| [p[0], p[1]]).collect()
}

impl SceneData {
    /// The scene's search rule: its radii, its periodic box, or its one radius.
    pub fn search(&self) -> Radius<'_> {
        match (&self.radii, self.periodic) {
            (Some(radii), _) if self.plane => Radius::PlanePerPoint(radii),
            (Some(radii), _) => Radius::PerPoint(radii),
            (None, Some(lengths)) => Radius::Periodic {
                radius: self.radius,
                lengths,
            },
            (None, None) if self.plane => Radius::Plane(self.radius),
            (None, None) => Radius::Fixed(self.radius),
        }
    }
}

impl Engine {
    /// The engines that run in this process, in the order results are listed.
    pub const ALL: [Engine; 5] = [
        Engine::Hhg,
        Engine::HhgCellOrder,
        Engine::Kiddo,
        Engine::Rstar,
        Engine::Brute,
    ];

    /// The engines of the quick default run: the R*-tree, two to three times slower than the
    /// k-d tree on every scene, would take 40 % of the quick run's time and adds no new level
    /// to compare with; `--full` and `--engine rstar` run it. `hhg-cellorder` costs about as
    /// much as hhg, a small part of the run next to kiddo.
    pub const QUICK: [Engine; 4] = [
        Engine::Hhg,
        Engine::HhgCellOrder,
        Engine::Kiddo,
        Engine::Brute,
    ];

    /// The engine's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Hhg => "hhg",
            Engine::HhgCellOrder => "hhg-cellorder",
            Engine::Kiddo => "kiddo",
            Engine::Rstar => "rstar",
            Engine::Brute => "brute",
            Engine::Python(peer) => peer.name(),
        }
    }

    /// Whether the engine is willing to run on `n` points.
    pub fn accepts(self, n: usize) -> bool {
        self != Engine::Brute || n <= BRUTE_MAX_N
    }

    /// Whether the engine can search under `radius`: the tree peers have no periodic boxes,
    /// and `hhg-cellorder` (a `Grid`) takes one radius in open space only.
    pub fn supports(self, radius: &Radius<'_>) -> bool {
        match (self, radius) {
            (Engine::HhgCellOrder, radius) => matches!(radius, Radius::Fixed(_)),
            (Engine::Kiddo | Engine::Rstar, Radius::Periodic { .. }) => false,
            _ => true,
        }
    }

    /// Whether the engine is one of hhg's (the library under test rather than a peer).
    pub fn is_hhg(self) -> bool {
        matches!(self, Engine::Hhg | Engine::HhgCellOrder)
    }

    /// The priority as the reference of a comparison: brute force, then the simplest peer.
    pub fn reference_priority(self) -> u8 {
        match self {
            Engine::Brute => 0,
            Engine::Kiddo => 1,
            Engine::Rstar => 2,
            Engine::Hhg => 3,
            Engine::HhgCellOrder => 4,
            Engine::Python(_) => 5,
        }
    }

    /// Runs the engine once with one radius (see [`Engine::run_with`]).
    pub fn run(
        self,
        points: &[[f32; 3]],
        radius: f32,
        previous: Option<Output>,
    ) -> Result<Output, String> {
        self.run_with(points, Radius::Fixed(radius), previous)
    }

    /// Runs the engine once: builds its structure and fills its neighbour lists, timing both.
    ///
    /// `previous` is the output of the previous run of the same measurement, if any: hhg reuses
    /// its buffers; for the peers it is dropped before the clock starts.
    pub fn run_with(
        self,
        points: &[[f32; 3]],
        radius: Radius<'_>,
        previous: Option<Output>,
    ) -> Result<Output, String> {
        let previous = previous.map(|out| out.lists);
        match (self, radius) {
            (Engine::Hhg | Engine::HhgCellOrder, Radius::Fixed(r)) => {
                let reuse = match previous {
                    Some(Lists::Hhg { grid, lists }) => Some((grid, lists)),
                    _ => None,
                };
                let order = if self == Engine::HhgCellOrder {
                    ListOrder::CellOrder
                } else {
                    ListOrder::Ascending
                };
                run_hhg(points, r, order, reuse)
            }
            (Engine::Hhg, Radius::Plane(r)) => {
                let reuse = match previous {
                    Some(Lists::HhgPlane { grid, lists }) => Some((grid, lists)),
                    _ => None,
                };
                run_hhg_plane(points, r, reuse)
            }
            (Engine::HhgCellOrder, _) => Err(
                "hhg-cellorder: one radius in open space only (a Grid's list order; hhg runs \
                 the variable-radius and periodic searches)"
                    .to_owned(),
            ),
            (Engine::Hhg, Radius::PerPoint(radii)) => {
                let reuse = match previous {
                    Some(Lists::HhgVariable { search, lists }) => Some((search, lists)),
                    _ => None,
                };
                run_hhg_variable(points, radii, reuse, |search, lists| Lists::HhgVariable {
                    search,
                    lists,
                })
            }
            (Engine::Hhg, Radius::PlanePerPoint(radii)) => {
                let reuse = match previous {
                    Some(Lists::HhgPlaneVariable { search, lists }) => Some((search, lists)),
                    _ => None,
                };
                let plane = plane_coordinates(points);
                run_hhg_variable(&plane, radii, reuse, |search, lists| {
                    Lists::HhgPlaneVariable { search, lists }
                })
            }
            (Engine::Hhg, Radius::Periodic { radius, lengths }) => {
                let reuse = match previous {
                    Some(Lists::HhgPeriodic { search, lists }) => Some((search, lists)),
                    _ => None,
                };
                run_hhg_periodic(points, radius, lengths, reuse)
            }
            (Engine::Brute, Radius::Periodic { radius, lengths }) => {
                drop(previous);
                Ok(run_brute_periodic(points, radius, lengths))
            }
            (engine @ (Engine::Kiddo | Engine::Rstar), Radius::Periodic { .. }) => Err(format!(
                "{engine}: no periodic boxes (only hhg, brute and the Python peers run on them)"
            )),
            (Engine::Kiddo, radius) => {
                drop(previous);
                run_kiddo(points, radius)
            }
            (Engine::Rstar, radius) => {
                drop(previous);
                Ok(run_rstar(points, radius))
            }
            (Engine::Brute, radius) => {
                drop(previous);
                Ok(run_brute(points, radius))
            }
            (Engine::Python(peer), _) => Err(format!(
                "{}: a Python peer runs in its own process (see --peers python)",
                peer.name()
            )),
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Engine::ALL
            .into_iter()
            .chain(PyPeer::ALL.map(Engine::Python))
            .find(|engine| engine.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown engine `{s}` (expected hhg, hhg-cellorder, kiddo, rstar, brute, \
                     vesin, freud, scipy, matscipy or hhg-python)"
                )
            })
    }
}

/// The exact neighbour test of points `i` and `j` under `radius` (`r2` is the fixed radius
/// squared, unused with radii).
#[inline(always)]
pub(super) fn neighbours(
    points: &[[f32; 3]],
    radius: Radius<'_>,
    r2: f32,
    i: usize,
    j: usize,
) -> bool {
    match radius {
        Radius::Fixed(_) | Radius::Plane(_) | Radius::Periodic { .. } => {
            within(&points[i], &points[j], r2)
        }
        // In the plane `(dx*dx + dy*dy) + 0*0` is the 2-D distance exactly.
        Radius::PerPoint(radii) | Radius::PlanePerPoint(radii) => {
            sphere_pair_within(points[i], radii[i], points[j], radii[j], false)
        }
    }
}

/// The widened squared radius the tree peers search within: the largest radius, squared,
/// plus [`KIDDO_RADIUS2_SLACK`].
pub(super) fn probe_radius2(radius: Radius<'_>) -> f32 {
    let r = radius.max();
    r * r * (1.0 + KIDDO_RADIUS2_SLACK)
}

/// The name of a list pass of hhg's `Grid`, for reports.
pub fn list_pass_name(pass: ListPass) -> &'static str {
    match pass {
        ListPass::InCellOrder => "in cell order",
        ListPass::InCellOrderWithExceptions => "cell order, exceptions",
        ListPass::NearCellOrder => "near cell order",
        ListPass::General => "general",
        ListPass::Empty => "empty",
    }
}

/// hhg's cell order of `points` from an untimed build, for cases that need it without an hhg run.
pub fn cell_order(points: &[[f32; 3]], radius: f32) -> Result<Vec<u32>, String> {
    let mut grid = Grid::<f32>::new(radius).map_err(|e| format!("hhg: {e}"))?;
    grid.build(points).map_err(|e| format!("hhg: {e}"))?;
    Ok(grid.order().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::periodic_checksum;
    use crate::scenes::{RADIUS, Scene};

    #[test]
    fn every_engine_agrees_with_brute_on_every_scene() {
        for scene in Scene::ALL {
            let data = scene.data(3000, 99);
            let radius = data.search();
            let brute = Engine::Brute
                .run_with(&data.points, radius, None)
                .unwrap()
                .stats(None);
            assert!(brute.pairs > 10_000, "{scene}: {brute:?}");
            assert!(brute.is_consistent(), "{scene}");
            for engine in [
                Engine::Kiddo,
                Engine::Rstar,
                Engine::Hhg,
                Engine::HhgCellOrder,
            ] {
                if !engine.supports(&radius) {
                    assert!(engine.run_with(&data.points, radius, None).is_err());
                    continue;
                }
                let stats = engine
                    .run_with(&data.points, radius, None)
                    .unwrap()
                    .stats(None);
                assert!(stats.is_consistent(), "{scene} {engine}");
                assert_eq!(stats, brute, "{scene} {engine}");
            }
        }
        assert!(
            Engine::Python(PyPeer::Scipy)
                .run(&[[0.0; 3]], 1.0, None)
                .is_err()
        );
    }

    #[test]
    fn the_plane_scene_agrees_with_brute_in_2d() {
        let data = Scene::Uniform2d.data(3000, 7);
        assert!(data.plane && data.points.iter().all(|p| p[2] == 0.0));
        let radius = data.search();
        assert_eq!(radius, Radius::Plane(1.0));
        let brute = Engine::Brute
            .run_with(&data.points, radius, None)
            .unwrap()
            .stats(None);
        // About 25 neighbours per point, fewer near the square's edges.
        let mean = brute.directed as f64 / 3000.0;
        assert!((18.0..26.0).contains(&mean), "{mean} neighbours per point");
        for engine in [Engine::Hhg, Engine::Kiddo] {
            let first = engine.run_with(&data.points, radius, None).unwrap();
            assert!(matches!(
                (&first.lists, engine),
                (Lists::HhgPlane { .. }, Engine::Hhg) | (Lists::Csr(_), Engine::Kiddo)
            ));
            assert_eq!(first.stats(None), brute, "{engine}");
            let again = engine.run_with(&data.points, radius, Some(first)).unwrap();
            assert_eq!(again.stats(None), brute, "{engine} on reused buffers");
        }
        assert!(!Engine::HhgCellOrder.supports(&radius));
    }

    #[test]
    fn the_new_plane_scenes_agree_with_brute_in_2d_in_every_order() {
        for scene in [
            Scene::Dambreak2d,
            Scene::Variable2d,
            Scene::Variable100Plane,
        ] {
            let data = scene.data(3000, 13);
            let radius = data.search();
            assert!(radius.is_plane(), "{scene}");
            assert_eq!(
                matches!(radius, Radius::PlanePerPoint(_)),
                scene.is_variable(),
                "{scene}"
            );
            let brute = Engine::Brute
                .run_with(&data.points, radius, None)
                .unwrap()
                .stats(None);
            let mean = brute.directed as f64 / 3000.0;
            assert!((12.0..45.0).contains(&mean), "{scene}: {mean} neighbours");
            let mut previous = None;
            for order in crate::particles::record::Order::ALL {
                let (arranged, map) =
                    crate::particles::runner::arrange(order, &data, &mut None, 5).unwrap();
                assert!(arranged.points.iter().all(|p| p[2] == 0.0));
                // The drifted orders move the points: their own brute force is the reference.
                let want = if order.reach().is_some() {
                    Engine::Brute
                        .run_with(&arranged.points, arranged.search(), None)
                        .unwrap()
                        .stats(Some(&map))
                } else {
                    brute
                };
                for engine in [Engine::Hhg, Engine::Kiddo, Engine::Rstar] {
                    let reuse = if engine == Engine::Hhg {
                        previous.take()
                    } else {
                        None
                    };
                    let output = engine
                        .run_with(&arranged.points, arranged.search(), reuse)
                        .unwrap();
                    assert!(matches!(
                        (&output.lists, engine, scene.is_variable()),
                        (Lists::HhgPlane { .. }, Engine::Hhg, false)
                            | (Lists::HhgPlaneVariable { .. }, Engine::Hhg, true)
                            | (Lists::Csr(_), Engine::Kiddo | Engine::Rstar, _)
                    ));
                    assert_eq!(output.stats(Some(&map)), want, "{scene} {order} {engine}");
                    if engine == Engine::Hhg {
                        previous = Some(output);
                    }
                }
            }
        }
    }

    #[test]
    fn plane_engines_keep_exact_boundary_pairs_at_negative_coordinates() {
        // A 5 x 5 lattice of spacing 1 in the plane around the origin has 40 axis-aligned
        // pairs at distance exactly 1, which the inclusive predicate keeps, with one radius
        // and with radii of 1 (and radii of 0.5 beside them, where `max(ri, rj)` decides).
        let points: Vec<[f32; 3]> = (0..25)
            .map(|k| [(k % 5) as f32 - 2.5, (k / 5) as f32 - 1e3, 0.0])
            .collect();
        let ones = vec![1.0f32; 25];
        let small = vec![0.5f32; 25];
        let halves: Vec<f32> = (0..25)
            .map(|k| if k % 2 == 0 { 1.0 } else { 0.5 })
            .collect();
        let below = 1.0f32 - f32::EPSILON;
        for (radius, pairs) in [
            (Radius::Plane(1.0), 40),
            (Radius::PlanePerPoint(&ones), 40),
            (Radius::PlanePerPoint(&halves), 40),
            (Radius::PlanePerPoint(&small), 0),
            (Radius::Plane(below), 0),
        ] {
            let brute = Engine::Brute
                .run_with(&points, radius, None)
                .unwrap()
                .stats(None);
            assert_eq!(brute.pairs, pairs, "{radius:?}");
            for engine in [Engine::Hhg, Engine::Kiddo, Engine::Rstar] {
                let stats = engine.run_with(&points, radius, None).unwrap().stats(None);
                assert_eq!(stats, brute, "{engine} {radius:?}");
            }
        }
    }

    #[test]
    fn kiddo_keeps_exact_boundary_pairs() {
        // A 3 x 3 x 3 lattice of spacing 1 has 54 axis-aligned pairs at distance exactly 1,
        // which the inclusive predicate keeps.
        let points: Vec<[f32; 3]> = (0..27)
            .map(|k| [(k % 3) as f32, ((k / 3) % 3) as f32, (k / 9) as f32])
            .collect();
        let brute = Engine::Brute.run(&points, 1.0, None).unwrap();
        let kiddo = Engine::Kiddo.run(&points, 1.0, None).unwrap();
        let rstar = Engine::Rstar.run(&points, 1.0, None).unwrap();
        assert_eq!(brute.stats(None).pairs, 54);
        assert_eq!(brute.stats(None), kiddo.stats(None));
        assert_eq!(brute.stats(None), rstar.stats(None));
        // A radius just below 1 keeps none of them, even with kiddo's widened search.
        let below = 1.0f32 - f32::EPSILON;
        assert_eq!(
            Engine::Kiddo
                .run(&points, below, None)
                .unwrap()
                .stats(None)
                .pairs,
            0
        );
    }

    #[test]
    fn hhg_agrees_with_brute_in_both_orders() {
        for scene in Scene::ALL.into_iter().filter(|s| !s.is_variable()) {
            let points = scene.generate(3000, 5);
            let radius = scene.radius(3000);
            let brute = Engine::Brute
                .run(&points, radius, None)
                .unwrap()
                .stats(None);
            let hhg = Engine::Hhg.run(&points, radius, None).unwrap();
            assert_eq!(hhg.stats(None), brute, "{scene}");
            let order = hhg.cell_order().unwrap().to_vec();
            let mut sorted = points.clone();
            hhg_core::reorder::apply_order(&order, &mut sorted);
            let again = Engine::Hhg.run(&sorted, radius, Some(hhg)).unwrap();
            assert_eq!(again.stats(Some(&order)), brute, "{scene} in cell order");
            assert_eq!(cell_order(&points, radius).unwrap(), order, "{scene}");
        }
    }

    /// The lists of an hhg output, by point.
    fn hhg_lists(output: &Output) -> Vec<Vec<u32>> {
        let Lists::Hhg { lists, .. } = &output.lists else {
            panic!("expected hhg's grid lists");
        };
        (0..output.len())
            .map(|i| lists.neighbors(i).to_vec())
            .collect()
    }

    #[test]
    fn cell_order_lists_hold_the_same_entries_as_ascending_ones() {
        let points = Scene::Dambreak.generate(4000, 11);
        let hhg = Engine::Hhg.run(&points, RADIUS, None).unwrap();
        let cellorder = Engine::HhgCellOrder.run(&points, RADIUS, None).unwrap();
        // Which pass shuffled input takes is hhg's choice; both list orders take the same.
        assert!(
            hhg.list_pass()
                .is_some_and(|pass| pass != ListPass::InCellOrder)
        );
        assert_eq!(cellorder.list_pass(), hhg.list_pass());
        assert_eq!(cellorder.stats(None), hhg.stats(None));
        let order = hhg.cell_order().unwrap().to_vec();
        assert_eq!(cellorder.cell_order().unwrap(), order.as_slice());

        // Each list in cell order ascends by the sorted position of its entries, and sorted
        // it is hhg's ascending list.
        let mut position = vec![0u32; order.len()];
        for (k, &i) in order.iter().enumerate() {
            position[i as usize] = k as u32;
        }
        let ascending = hhg_lists(&hhg);
        let mut unsorted = 0;
        for (i, list) in hhg_lists(&cellorder).into_iter().enumerate() {
            assert!(list.is_sorted_by_key(|&j| position[j as usize]), "list {i}");
            unsorted += usize::from(!list.is_sorted());
            let mut list = list;
            list.sort_unstable();
            assert_eq!(list, ascending[i], "list {i}");
        }
        assert!(
            unsorted > 100,
            "random input gives lists that do not ascend"
        );

        // In cell order, both list orders are the same, and the pass says so.
        let mut sorted = points.clone();
        hhg_core::reorder::apply_order(&order, &mut sorted);
        let again = Engine::HhgCellOrder
            .run(&sorted, RADIUS, Some(cellorder))
            .unwrap();
        assert_eq!(again.list_pass(), Some(ListPass::InCellOrder));
        assert_eq!(again.stats(Some(&order)), hhg.stats(None));
        let sorted_hhg = Engine::Hhg.run(&sorted, RADIUS, None).unwrap();
        assert_eq!(hhg_lists(&again), hhg_lists(&sorted_hhg));
        assert_eq!(
            Engine::Kiddo
                .run(&points, RADIUS, None)
                .unwrap()
                .list_pass(),
            None
        );
        assert_eq!(list_pass_name(ListPass::NearCellOrder), "near cell order");

        // Radii and periodic boxes are not a Grid's.
        let data = Scene::Variable.data(100, 1);
        assert!(!Engine::HhgCellOrder.supports(&data.search()));
        assert!(
            Engine::HhgCellOrder
                .run_with(&data.points, data.search(), None)
                .is_err()
        );
        assert!(Engine::HhgCellOrder.is_hhg() && !Engine::Kiddo.is_hhg());
    }

    #[test]
    fn periodic_pairs_agree_in_both_orders_and_cross_the_faces() {
        let data = Scene::Periodic.data(3000, 7);
        let radius = data.search();
        let brute = Engine::Brute
            .run_with(&data.points, radius, None)
            .unwrap()
            .stats(None);
        let open = Engine::Brute
            .run(&data.points, data.radius, None)
            .unwrap()
            .stats(None);
        assert!(brute.pairs > open.pairs + 1000, "{brute:?} {open:?}");
        let hhg = Engine::Hhg.run_with(&data.points, radius, None).unwrap();
        assert_eq!(hhg.stats(None), brute);
        let order = cell_order(&data.points, data.radius).unwrap();
        let mut sorted = data.points.clone();
        hhg_core::reorder::apply_order(&order, &mut sorted);
        let again = Engine::Hhg.run_with(&sorted, radius, Some(hhg)).unwrap();
        assert_eq!(again.stats(Some(&order)), brute, "in cell order");

        // The shift is that of the nearest image, and the checksum sees it.
        let lengths = [4.0f32; 3];
        let (from, to, shift) = minimum_image(&[0.25, 2.0, 3.5], &[3.75, 2.5, 0.25], lengths);
        assert_eq!(
            (from, to, shift),
            ([4.25, 2.0, 3.5], [3.75, 2.5, 4.25], [-1, 0, 1])
        );
        let right = periodic_checksum(&[(0, 1, [-1, 0, 1])], None);
        assert_ne!(periodic_checksum(&[(0, 1, [0, 0, 1])], None), right);
    }

    /// The mean list length over the points that `keep` selects.
    fn mean_neighbors(
        output: &Output,
        points: &[[f32; 3]],
        keep: impl Fn(&[f32; 3]) -> bool,
    ) -> f64 {
        let Lists::Csr(csr) = &output.lists else {
            panic!("expected a peer engine's lists");
        };
        let (sum, count) = (0..points.len())
            .filter(|&i| keep(&points[i]))
            .fold((0usize, 0usize), |(s, c), i| {
                (s + csr.neighbors(i).len(), c + 1)
            });
        assert!(count > 100, "too few points selected");
        sum as f64 / count as f64
    }

    #[test]
    fn uniform_has_forty_neighbours() {
        let n = 20_000;
        let points = Scene::Uniform.generate(n, 8);
        let side = crate::scenes::uniform_side(n) as f32;
        let output = Engine::Kiddo.run(&points, RADIUS, None).unwrap();
        // Away from the faces the ball lies inside the cube, so the count is the designed one.
        let interior = |p: &[f32; 3]| p.iter().all(|&c| c >= RADIUS && c <= side - RADIUS);
        let mean = mean_neighbors(&output, &points, interior);
        let expected = crate::scenes::UNIFORM_NEIGHBORS;
        assert!(
            (mean - expected).abs() < 0.1 * expected,
            "interior mean {mean}"
        );
    }

    #[test]
    fn dambreak_and_clustered_have_tens_of_neighbours() {
        let points = Scene::Dambreak.generate(20_000, 8);
        let output = Engine::Kiddo.run(&points, RADIUS, None).unwrap();
        // The lattice within 2h holds 32 sites; jitter loses about half of the 6 at exactly 2h.
        let (lo, hi) = points
            .iter()
            .fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), p| {
                (
                    [0, 1, 2].map(|a| lo[a].min(p[a])),
                    [0, 1, 2].map(|a| hi[a].max(p[a])),
                )
            });
        let interior =
            |p: &[f32; 3]| (0..3).all(|a| p[a] >= lo[a] + RADIUS && p[a] <= hi[a] - RADIUS);
        let mean = mean_neighbors(&output, &points, interior);
        assert!(
            (27.0..=33.0).contains(&mean),
            "dambreak interior mean {mean}"
        );

        let points = Scene::Clustered.generate(20_000, 8);
        let output = Engine::Kiddo.run(&points, RADIUS, None).unwrap();
        let mean = mean_neighbors(&output, &points, |_| true);
        let target = crate::scenes::CLUSTERED_NEIGHBORS;
        assert!(
            (mean - target).abs() < 0.25 * target,
            "clustered mean {mean}"
        );
    }

    #[test]
    fn csr_fill_is_ordered_and_complete() {
        let csr = Csr::fill_parallel(3000, |i, out| out.extend(0..(i % 5) as u32));
        assert_eq!(csr.len(), 3000);
        assert_eq!(csr.neighbors(4), &[0, 1, 2, 3]);
        assert_eq!(csr.neighbors(2500), &[] as &[u32]);
        assert_eq!(csr.indices.len(), 600 * (1 + 2 + 3 + 4));
        assert!(Csr::fill_parallel(0, |_, _| {}).is_empty());
    }

    #[test]
    fn engine_names_round_trip() {
        for engine in Engine::ALL
            .into_iter()
            .chain(PyPeer::ALL.map(Engine::Python))
        {
            assert_eq!(engine.name().parse::<Engine>(), Ok(engine));
        }
        assert!("octree".parse::<Engine>().is_err());
        assert!(Engine::Brute.accepts(BRUTE_MAX_N) && !Engine::Brute.accepts(BRUTE_MAX_N + 1));
    }
}
