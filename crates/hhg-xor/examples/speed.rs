//! A quick speed comparison of the hashing schemes on one uniform scene: build and pairs times, candidates per true pair and bucket loads of hhg-core's CoreScheme, XorScheme and PoucholScheme.
//!
//! Run with `cargo run --release -p hhg-xor --example speed -- [points] [neighbours] [threads]`
//! (defaults: 1,000,000 points, about 40 neighbours each, 2 threads).

use std::time::Instant;

use hhg_core::{CoreScheme, FixedRadiusScheme, Real};
use hhg_testkit::SplitMix64;
use hhg_xor::{PoucholScheme, Primes, XorScheme};

/// The median of some timings, in milliseconds.
fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Measures one scheme: median build and pairs times over `runs` after one warm-up.
fn measure<T: Real>(scheme: &mut dyn FixedRadiusScheme<T>, points: &[[T; 3]], runs: usize) {
    let mut pairs = hhg_core::PairList::default();
    scheme.build(points).unwrap();
    scheme.pairs(&mut pairs).unwrap();
    let (mut build, mut search) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let start = Instant::now();
        scheme.build(points).unwrap();
        build.push(start.elapsed().as_secs_f64() * 1e3);
        let start = Instant::now();
        scheme.pairs(&mut pairs).unwrap();
        search.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let stats = scheme.stats();
    println!(
        "{:>8}  build {:8.1} ms  pairs {:8.1} ms  pairs {:>9}  candidates/pair {:5.2}  buckets {:>9}  occupied {:>8}  mean load {:5.2}  max load {:>4}",
        scheme.name(),
        median(build),
        median(search),
        pairs.len(),
        stats.pair_candidates as f64 / pairs.len().max(1) as f64,
        stats.buckets,
        stats.occupied,
        stats.mean_load,
        stats.max_load,
    );
}

/// Runs the comparison in one precision.
fn compare<T: Real>(n: usize, neighbours: f64, runs: usize) {
    let edge = (n as f64 * 4.0 / 3.0 * std::f64::consts::PI / neighbours).cbrt();
    let mut rng = SplitMix64::new(42);
    let points: Vec<[T; 3]> = (0..n)
        .map(|_| std::array::from_fn(|_| T::from_f64(edge * rng.uniform())))
        .collect();
    let radius = T::from_f64(1.0);
    println!(
        "{} points uniform in a cube of edge {edge:.2}, r = 1, {} threads, {}:",
        n,
        rayon::current_num_threads(),
        std::any::type_name::<T>()
    );
    measure(&mut CoreScheme::new(radius).unwrap(), &points, runs);
    let mut xor = XorScheme::new(radius, Primes::Teschner).unwrap();
    measure(&mut xor, &points, runs);
    println!(
        "{:>8}  foreign points a whole-bucket scan would add: {:.3} per pair",
        "xor",
        xor.foreign_candidates() as f64 / (n as f64 * neighbours / 2.0)
    );
    measure(
        &mut XorScheme::new(radius, Primes::Mueller).unwrap(),
        &points,
        runs,
    );
    let mut pouchol = PoucholScheme::new(radius, Primes::Teschner).unwrap();
    measure(&mut pouchol, &points, runs);
    println!(
        "{:>8}  {} classes above class 0",
        "pouchol",
        pouchol.top_class()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = args.get(1).map_or(1_000_000, |a| a.parse().unwrap());
    let neighbours = args.get(2).map_or(40.0, |a| a.parse().unwrap());
    let threads = args.get(3).map_or(2, |a| a.parse().unwrap());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        compare::<f32>(n, neighbours, 5);
        compare::<f64>(n, neighbours, 5);
    });
}
