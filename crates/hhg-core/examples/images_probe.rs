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
//! candidate pairs, and the same search writing `u64` `i`, `j` columns
//! (`AllImagesSearch::pair_columns`, what `NeighborList.compute(..., "ij")` runs). The open
//! search and the columns also print their CPU time over all threads (Linux: the sum of
//! `/proc/self/task/*/schedstat`), which a loaded machine inflates far less than wall time.
//! The lines `open taken`, `open columns` and `periodic fresh` time the binding's own calls
//! with their outputs in new memory each call, as numpy receives them (`Grid.pairs()`,
//! `NeighborList.compute(..., "ij")` open and periodic): the like-for-like figures for the
//! binding's overhead. A last argument `only=NAME` runs one of them alone (`open`, `open-taken`,
//! `open-columns`, `periodic`, `periodic-columns`, `periodic-fresh`), REPS times: the
//! difference of two runs' instruction counts under `valgrind --tool=callgrind` is then that
//! call's cost, to set beside the same call's from Python.

use std::time::Instant;

use hhg_core::triclinic::{
    AllImagesSearch, ImagePairColumns, ImagePairList, PairOrder, PairSet, TriclinicBox,
};
use hhg_core::{Grid, PairList};

/// The CPU time of all the process's threads so far, in seconds (0 where `/proc` does not
/// tell).
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let nanos: u64 = tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    nanos as f64 * 1e-9
}

/// The best wall time and the best CPU time of `reps` runs of `run`, in seconds.
fn best(reps: usize, mut run: impl FnMut()) -> (f64, f64) {
    (0..reps.max(1))
        .map(|_| {
            let (start, cpu) = (Instant::now(), cpu_seconds());
            run();
            (start.elapsed().as_secs_f64(), cpu_seconds() - cpu)
        })
        .fold((f64::INFINITY, f64::INFINITY), |(w, c), (wall, cpu)| {
            (w.min(wall), c.min(cpu))
        })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: images_probe FILE CUTOFF EDGE REPS [full] [sorted] [dist] [only=NAME]");
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
    let only = args[5..].iter().find_map(|a| a.strip_prefix("only="));
    let runs = |name: &str| only.is_none_or(|o| o == name);
    let set = if flag("full") {
        PairSet::Full
    } else {
        PairSet::Half
    };
    let n = points.len();

    let mut grid = Grid::new(cutoff).expect("a valid cutoff");
    let mut pairs = PairList::default();
    if runs("open") {
        let (open, open_cpu) = best(reps, || {
            grid.build(&points).expect("the open build");
            grid.pairs(&mut pairs).expect("the open pairs");
        });
        println!(
            "open: n {n}, pairs {}, build + pairs {open:.4} s, cpu {open_cpu:.4} s",
            pairs.len()
        );
    }
    // What the binding runs, with outputs handed over each call as numpy receives them (new
    // memory every time): `Grid.pairs()` takes the pair list, `NeighborList.compute(...,
    // False, "ij")` writes fresh `u64` columns.
    if runs("open-taken") {
        let (taken, taken_cpu) = best(reps, || {
            grid.build(&points).expect("the open build");
            grid.pairs(&mut pairs).expect("the open pairs");
            drop(pairs.take_pairs());
        });
        println!("open taken: build + taken pairs {taken:.4} s, cpu {taken_cpu:.4} s");
    }
    if runs("open-columns") {
        let (fresh, fresh_cpu) = best(reps, || {
            grid.build(&points).expect("the open build");
            let (mut i, mut j) = (Vec::<u64>::new(), Vec::<u64>::new());
            grid.pair_columns(&mut pairs, &mut i, &mut j)
                .expect("the open columns");
        });
        println!("open columns: build + fresh columns {fresh:.4} s, cpu {fresh_cpu:.4} s");
    }

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
    if runs("periodic") {
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
    let mut columns = ImagePairColumns::<u64>::new(true, false);
    if runs("periodic-columns") {
        let (columns_s, columns_cpu) = best(reps, || {
            search.build(&points).expect("the periodic build");
            search
                .pair_columns(set, &mut list, &mut columns)
                .expect("the periodic columns");
        });
        println!(
            "periodic columns: n {n}, pairs {}, build + columns {columns_s:.4} s, cpu {columns_cpu:.4} s",
            columns.i().len()
        );
    }
    if runs("periodic-fresh") {
        let (fresh, fresh_cpu) = best(reps, || {
            search.build(&points).expect("the periodic build");
            search
                .pair_columns(set, &mut list, &mut columns)
                .expect("the periodic columns");
            drop(columns.take());
        });
        println!("periodic fresh: build + fresh columns {fresh:.4} s, cpu {fresh_cpu:.4} s");
    }
}
