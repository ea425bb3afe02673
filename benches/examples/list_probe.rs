//! A probe of hhg-core's list passes on one scene in given orders: build + lists, repeated,
//! best and mean, for comparing variants of a pass in one process or under
//! `valgrind --tool=callgrind` (instruction counts, immune to the machine's noise).
//!
//! `cargo run -p hhg-benches --example list_probe --profile bench-fast -- SCENE N ORDERS REPS
//! [cell] [dist]`, e.g. `uniform 262144 sorted,step,drift,zorder,random 3`: `step` is cell order
//! moved by up to 0.005 r per axis (about one solver step), `drift` by up to 0.1 r, `movedF`
//! by up to F r; `cell` keeps lists in cell order, `dist` gathers distances too. Each line
//! ends with the count of exceptions of the pass for cell order with exceptions (taken or
//! not); `PROBE_EXCEPTIONS_SHARE=S` takes that pass up to one exception in S points (0:
//! never).

use std::time::Instant;

use hhg_benches::Scene;
use hhg_benches::orders::{
    DRIFT_FRACTION, STEP_FRACTION, drift, drift_seed, morton_order, shuffle_seed, shuffled_order,
};
use hhg_core::building_blocks::{exception_count, set_exceptions_share};
use hhg_core::reorder::apply_order;
use hhg_core::{Grid, ListOrder, NeighborLists};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scene = args.get(1).map_or("uniform", String::as_str);
    let n: usize = args.get(2).map_or(1_000_000, |s| s.parse().unwrap());
    let orders: Vec<&str> = args
        .get(3)
        .map_or("sorted,drift,zorder,random", String::as_str)
        .split(',')
        .collect();
    let reps: usize = args.get(4).map_or(7, |s| s.parse().unwrap());
    let cell_lists = args.get(5).is_some_and(|s| s == "cell");
    let distances = args.get(6).is_some_and(|s| s == "dist");
    let scene = Scene::ALL.into_iter().find(|s| s.name() == scene).unwrap();
    let seed = scene.seed(42, n);
    let data = scene.data(n, seed);
    let radius = data.radius;
    let mut base = data.points;
    let mut grid = Grid::new(radius).unwrap();
    grid.build(&base).unwrap();
    let sorted_order = grid.order().to_vec();
    apply_order(&sorted_order, &mut base);
    let mut lists = NeighborLists::default();
    for order in orders {
        let mut points = base.clone();
        match order {
            "sorted" => {}
            "drift" => drift(&mut points, DRIFT_FRACTION * radius, None, drift_seed(seed)),
            // A twentieth of the drift: about one time step of a solver (0.005 r).
            "step" => drift(&mut points, STEP_FRACTION * radius, None, drift_seed(seed)),
            // Cell order moved by up to the given fraction of r, e.g. `moved0.01`.
            other if other.starts_with("moved") => {
                let fraction: f32 = other["moved".len()..].parse().unwrap();
                drift(&mut points, fraction * radius, None, drift_seed(seed));
            }
            "zorder" => {
                let z = morton_order(&points, radius);
                apply_order(&z, &mut points);
            }
            "random" => {
                let s = shuffled_order(points.len(), shuffle_seed(seed));
                apply_order(&s, &mut points);
            }
            other => panic!("order {other}"),
        }
        let mut grid = Grid::new(radius).unwrap();
        if cell_lists {
            grid.set_list_order(ListOrder::CellOrder);
        }
        // A share of exceptions other than the default, for finding the pass's crossover.
        if let Ok(share) = std::env::var("PROBE_EXCEPTIONS_SHARE") {
            set_exceptions_share(&mut grid, share.parse().unwrap());
        }
        let mut times = Vec::new();
        let mut entries = 0;
        for _ in 0..reps {
            let t = Instant::now();
            grid.build(&points).unwrap();
            if distances {
                grid.neighbor_lists_with_distances(&mut lists).unwrap();
            } else {
                grid.neighbor_lists(&mut lists).unwrap();
            }
            times.push(t.elapsed().as_secs_f64() * 1e3);
            entries = lists.indices().len();
        }
        let best = times.iter().copied().fold(f64::INFINITY, f64::min);
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        println!(
            "{:>10} {:>8} {:>7}: best {best:7.2} ms mean {mean:7.2} ms, {entries} entries, pass {:?}, {} exceptions",
            scene.name(),
            n,
            order,
            grid.list_pass(),
            exception_count(&grid)
        );
    }
}
