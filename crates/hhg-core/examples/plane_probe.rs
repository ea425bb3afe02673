//! A probe of the plane's list pass (`Grid2`): build + lists of seeded uniform points of the
//! plane in one order, repeated, timed (the best repetition) or counted with
//! `valgrind --tool=callgrind` (one pass is the difference of a run of 3 repetitions and
//! one of 1, halved).
//!
//! `cargo run -p hhg-core --example plane_probe --profile bench-fast -- N ORDER REPS
//! [distances]`: N points uniform in a square at a density of about 20 neighbours within
//! the radius 1, as the 2-D dam break has; ORDER is `random` (as drawn), `sorted` (the
//! cell order of a first build) or `step` (that order, then every point moved by a seeded
//! uniform offset of up to 0.005 r per axis, about one solver step); `distances` asks for
//! the squared distances too.

use std::time::Instant;

use hhg_core::NeighborLists;
use hhg_core::plane::Grid2;
use hhg_core::reorder::apply_order;
use hhg_testkit::SplitMix64;

/// Expected neighbours per point within the radius 1.
const NEIGHBOURS: f64 = 20.0;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(262_144, |s| s.parse().expect("a count"));
    let order = args.get(2).map_or("sorted", String::as_str);
    let reps: usize = args.get(3).map_or(3, |s| s.parse().expect("a count"));
    let with_distances = args.get(4).is_some_and(|s| s == "distances");
    let side = (n as f64 * std::f64::consts::PI / NEIGHBOURS).sqrt();
    let mut rng = SplitMix64::new(42);
    let mut points: Vec<[f64; 2]> = (0..n)
        .map(|_| [rng.range(0.0, side), rng.range(0.0, side)])
        .collect();
    let mut grid = Grid2::new(1.0f64).expect("a valid radius");
    let reach = match order {
        "random" => None,
        "sorted" => Some(0.0),
        "step" => Some(0.005),
        other => panic!("unknown order {other}"),
    };
    if let Some(reach) = reach {
        grid.build(&points).expect("valid points");
        apply_order(grid.order(), &mut points);
        let mut moves = SplitMix64::new(7);
        for point in &mut points {
            for coordinate in point.iter_mut() {
                *coordinate += moves.range(-reach, reach);
            }
        }
    }
    let mut lists = NeighborLists::default();
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let start = Instant::now();
        grid.build(&points).expect("valid points");
        if with_distances {
            grid.neighbor_lists_with_distances(&mut lists)
        } else {
            grid.neighbor_lists(&mut lists)
        }
        .expect("lists");
        best = best.min(start.elapsed().as_secs_f64() * 1e3);
    }
    // A checksum of the lists (each entry weighted by its list and its place), to check
    // that two builds of the probe give the same lists.
    let checksum = (0..lists.len()).fold(0u64, |sum, i| {
        lists.neighbors(i).iter().fold(sum, |sum, &j| {
            sum.rotate_left(5) ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ u64::from(j)
        })
    });
    let in_order = grid
        .order()
        .iter()
        .enumerate()
        .all(|(k, &i)| k == i as usize);
    println!(
        "plane {n} {order}: best {best:.2} ms, {} entries (checksum {checksum:016x}), given in \
         cell order: {in_order}",
        lists.indices().len(),
    );
}
