//! A probe of the pass for input in cell order with exceptions, light enough to build without
//! the bench crate: build + ascending lists of one scene in one order, repeated, for
//! `valgrind --tool=callgrind` (the instructions of one pass are the difference of a run of
//! 3 repetitions and one of 1, halved).
//!
//! `cargo run -p hhg-core --example exceptions_probe --profile bench-fast -- SCENE N ORDER REPS
//! [SHARE]`: SCENE is `uniform` (a cube, about 40 neighbours per point), `dense` (a cube, about
//! 1,000 neighbours per point) or `clustered`
//! (Gaussian clusters in a large box); ORDER is `sorted` (cell order), `step` (cell order,
//! then every point moved by a seeded uniform offset of up to 0.005 r per axis, about one
//! solver step), `drift` (up to 0.1 r, about ten steps) or `movedF` (up to F r). SHARE, when
//! given, takes the pass while at most one point in SHARE is an exception (0: never; without
//! it, the share that follows the density), so the
//! same input can be measured on the pass for input nearly in cell order. With
//! `PROBE_LIST_ORDER=cell` in the environment the lists are kept in cell order
//! (`ListOrder::CellOrder`) instead of ascending.

use std::time::Instant;

use hhg_core::building_blocks::{
    bucket_occupancy, exception_count, max_exceptions, set_exceptions_share,
};
use hhg_core::reorder::apply_order;
use hhg_core::{Grid, ListOrder, NeighborLists};
use hhg_testkit::{SplitMix64, gaussian_clusters, to_real, uniform_cube};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scene = args.get(1).map_or("uniform", String::as_str);
    let n: usize = args.get(2).map_or(262_144, |s| s.parse().expect("a count"));
    let order = args.get(3).map_or("step", String::as_str);
    let reps: usize = args.get(4).map_or(3, |s| s.parse().expect("a count"));
    let share: Option<usize> = args.get(5).map(|s| s.parse().expect("a share"));
    let mut rng = SplitMix64::new(42);
    let points = match scene {
        "uniform" => uniform_cube(&mut rng, n, [0.0; 3], 1.0, 40.0),
        "dense" => uniform_cube(&mut rng, n, [0.0; 3], 1.0, 1000.0),
        "clustered" => {
            let clusters = [
                (n / 2, 4.0),
                (n / 4, 1.5),
                (n / 8, 8.0),
                (n - n / 2 - n / 4 - n / 8, 2.5),
            ];
            gaussian_clusters(&mut rng, &clusters, 200.0)
        }
        other => panic!("unknown scene {other}"),
    };
    let mut points: Vec<[f32; 3]> = to_real(&points);
    let mut grid = Grid::new(1.0f32).expect("a valid radius");
    grid.build(&points).expect("valid points");
    apply_order(grid.order(), &mut points);
    let reach = match order {
        "sorted" => 0.0,
        "step" => 0.005,
        "drift" => 0.1,
        other => other
            .strip_prefix("moved")
            .and_then(|f| f.parse().ok())
            .unwrap_or_else(|| panic!("unknown order {other}")),
    };
    if reach > 0.0 {
        let mut moves = SplitMix64::new(7);
        for point in &mut points {
            for coordinate in point.iter_mut() {
                *coordinate += moves.range(-reach, reach) as f32;
            }
        }
    }
    let mut grid = Grid::new(1.0f32).expect("a valid radius");
    if let Some(share) = share {
        set_exceptions_share(&mut grid, share);
    }
    if std::env::var("PROBE_LIST_ORDER").is_ok_and(|order| order == "cell") {
        grid.set_list_order(ListOrder::CellOrder);
    }
    let mut lists = NeighborLists::default();
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let start = Instant::now();
        grid.build(&points).expect("valid points");
        grid.neighbor_lists(&mut lists).expect("lists");
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
    }
    // A checksum of the lists (each entry weighted by its list and its place), to check
    // that two passes or two builds give the same lists.
    let checksum = (0..lists.len()).fold(0u64, |sum, i| {
        lists.neighbors(i).iter().fold(sum, |sum, &j| {
            sum.rotate_left(5) ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(j)
        })
    });
    println!(
        "{scene} {n} {order}: best {best:.2} ms, {} entries (checksum {checksum:016x}), pass \
         {:?}, {} exceptions (budget {}), bucket occupancy {:.2}",
        lists.indices().len(),
        grid.list_pass(),
        exception_count(&grid),
        max_exceptions(&grid),
        bucket_occupancy(&grid)
    );
}
