//! A probe of the searches behind the Python package's `NeighborList.compute`, in Rust on the
//! points the Python side used: the binding's overhead is its time less this probe's, and the
//! phases of the periodic search show where its time goes.
//!
//! `cargo run -p hhg-core --example images_probe --profile bench-fast -- FILE CUTOFF EDGE REPS
//! [full] [sorted] [dist]`: FILE holds raw little-endian `f64` x, y, z triples (numpy's
//! `points.tofile(FILE)`), EDGE the edge of the cubic cell. It prints, best of REPS runs each:
//! the open search (`Grid::build` plus `Grid::pairs`, the half list the binding returns), and
//! the periodic search (`AllImagesSearch::build` plus `AllImagesSearch::pairs`, in the grid's
//! order unless `sorted`, without distances and vectors unless `dist`), with its ghosts and
//! candidate pairs.

use std::time::Instant;

use hhg_core::triclinic::{AllImagesSearch, ImagePairList, PairOrder, PairSet, TriclinicBox};
use hhg_core::{Grid, PairList};

/// The best wall time of `reps` runs of `run`, in seconds.
fn best(reps: usize, mut run: impl FnMut()) -> f64 {
    (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: images_probe FILE CUTOFF EDGE REPS [full] [sorted] [dist]");
        std::process::exit(2);
    }
    let bytes = std::fs::read(&args[1]).expect("the points file is readable");
    let values: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("eight bytes")))
        .collect();
    let points: Vec<[f64; 3]> = values.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    let cutoff: f64 = args[2].parse().expect("CUTOFF is a number");
    let edge: f64 = args[3].parse().expect("EDGE is a number");
    let reps: usize = args[4].parse().expect("REPS is a count");
    let flag = |name: &str| args[5..].iter().any(|a| a == name);
    let set = if flag("full") {
        PairSet::Full
    } else {
        PairSet::Half
    };
    let n = points.len();

    let mut grid = Grid::new(cutoff).expect("a valid cutoff");
    let mut pairs = PairList::default();
    let open = best(reps, || {
        grid.build(&points).expect("the open build");
        grid.pairs(&mut pairs).expect("the open pairs");
    });
    println!(
        "open: n {n}, pairs {}, build + pairs {open:.4} s",
        pairs.len()
    );

    let cell = TriclinicBox::new([[edge, 0.0, 0.0], [0.0, edge, 0.0], [0.0, 0.0, edge]]);
    let mut search = AllImagesSearch::new(cutoff, cell).expect("a valid cell");
    let mut list = ImagePairList::default();
    list.set_order(if flag("sorted") {
        PairOrder::Sorted
    } else {
        PairOrder::Found
    });
    list.set_distances(flag("dist"));
    list.set_vectors(flag("dist"));
    let (mut build_s, mut pairs_s) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        search.build(&points).expect("the periodic build");
        let built = Instant::now();
        search.pairs(set, &mut list).expect("the periodic pairs");
        build_s = build_s.min((built - start).as_secs_f64());
        pairs_s = pairs_s.min(built.elapsed().as_secs_f64());
    }
    println!(
        "periodic: n {n}, ghosts {}, pairs {}, build {build_s:.4} s, pairs {pairs_s:.4} s",
        search.ghosts(),
        list.len()
    );
}
