//! A probe of the periodic search behind the Python package's `NeighborList.compute(...,
//! periodic=True)`, for instruction counts: `AllImagesSearch::build` plus
//! `AllImagesSearch::pair_columns` (`u64` `i`, `j`, half list, the grid's order) on seeded
//! uniform points in a cubic cell, run `RUNS` times.
//!
//! `cargo run -p hhg-core --example periodic_probe --profile bench-fast -- N RUNS [shifts]
//! [dist] [full]`: `N` points at density 8 (a cell `(N / 8)^(1/3)` wide), cutoff 1, `f64`.
//! Under `valgrind --tool=callgrind` with `RAYON_NUM_THREADS=1`, the instructions of one
//! pass are the difference between two values of `RUNS`, over their difference: that takes
//! out the set-up and the buffers' growth on the first run. `shifts` adds the shift column
//! (`"ijS"`), `dist` the distances (`"ijd"`), `full` asks for the full list.

use hhg_core::triclinic::{
    AllImagesSearch, ImagePairColumns, ImagePairList, PairOrder, PairSet, TriclinicBox,
};
use hhg_testkit::SplitMix64;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: periodic_probe N RUNS [shifts] [dist] [full]");
        std::process::exit(2);
    }
    let n: usize = args[1].parse().expect("N is a count");
    let runs: usize = args[2].parse().expect("RUNS is a count");
    let flag = |name: &str| args[3..].iter().any(|a| a == name);
    let edge = (n as f64 / 8.0).cbrt();
    let mut rng = SplitMix64::new(0x5eed_0022);
    let points: Vec<[f64; 3]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.range(0.0, edge)))
        .collect();
    let cell = TriclinicBox::new([[edge, 0.0, 0.0], [0.0, edge, 0.0], [0.0, 0.0, edge]]);
    let mut search = AllImagesSearch::new(1.0, cell).expect("a valid cell");
    let mut list = ImagePairList::default();
    list.set_order(PairOrder::Found);
    list.set_distances(flag("dist"));
    list.set_vectors(false);
    let mut columns = ImagePairColumns::<u64>::new(true, flag("shifts"));
    let set = if flag("full") {
        PairSet::Full
    } else {
        PairSet::Half
    };
    let mut checksum = 0u64;
    let (mut build_time, mut pairs_time) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..runs {
        let start = Instant::now();
        search.build(&points).expect("the periodic build");
        let built = Instant::now();
        search
            .pair_columns(set, &mut list, &mut columns)
            .expect("the periodic columns");
        build_time += built - start;
        pairs_time += built.elapsed();
        // A cheap check that the runs agree (the outputs are the same each run).
        let i_sum: u64 = columns.i().iter().sum();
        let j_sum: u64 = columns.j().iter().sum();
        checksum = checksum.wrapping_add(i_sum.wrapping_mul(3).wrapping_add(j_sum));
    }
    println!(
        "n {n}, edge {edge:.4}, ghosts {}, pairs {}, distances {}, checksum {checksum:x}",
        search.ghosts(),
        columns.i().len(),
        list.distances().len()
    );
    // Wall times are for a quiet machine only; under callgrind they are meaningless.
    println!(
        "build {:.3} ms, pairs {:.3} ms per run",
        build_time.as_secs_f64() * 1e3 / runs.max(1) as f64,
        pairs_time.as_secs_f64() * 1e3 / runs.max(1) as f64
    );
}
