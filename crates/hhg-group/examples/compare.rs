//! Quick speed comparison of the group scheme against hhg-core's geometric hashing: one
//! million uniform points with about 40 neighbours each, radius 1, on two threads.
//!
//! Run with `cargo run --release -p hhg-group --example compare [points] [threads]`.

use std::time::{Duration, Instant};

use hhg_core::{CoreScheme, FixedRadiusScheme, Kernel, Real};
use hhg_group::{GroupConfig, GroupScheme};
use hhg_testkit::SplitMix64;

/// Timed repetitions per measurement; the median is reported.
const REPS: usize = 7;

/// The median of `REPS` timings of `op` (after one warm-up run).
fn median(mut op: impl FnMut()) -> Duration {
    op();
    let mut times: Vec<Duration> = (0..REPS)
        .map(|_| {
            let start = Instant::now();
            op();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[REPS / 2]
}

/// Milliseconds of a duration.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Builds and searches with `scheme`, and prints one row of the table.
fn measure<T: Real>(label: &str, scheme: &mut dyn FixedRadiusScheme<T>, points: &[[T; 3]]) -> u64 {
    let build = median(|| scheme.build(points).unwrap());
    let mut pairs = hhg_core::PairList::default();
    let search = median(|| scheme.pairs(&mut pairs).unwrap());
    let count = pairs.len() as u64;
    let start = Instant::now();
    let stats = scheme.stats();
    let counting = start.elapsed();
    println!(
        "{label:<28} build {:>7.1} ms  pairs {:>7.1} ms  pairs {count}  candidates/pair {:>5.2}  \
         max load {:>5}  mean load {:>6.2}  occupied {:>8}/{:<8}  (candidate count {:.1} ms)",
        ms(build),
        ms(search),
        stats.pair_candidates as f64 / count as f64,
        stats.max_load,
        stats.mean_load,
        stats.occupied,
        stats.buckets,
        ms(counting),
    );
    count
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1_000_000, |a| a.parse().unwrap());
    let threads: usize = args.next().map_or(2, |a| a.parse().unwrap());
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .unwrap();
    let radius = 1.0f32;
    let edge = (n as f64 * 4.0 / 3.0 * std::f64::consts::PI / 40.0).cbrt();
    let mut rng = SplitMix64::new(7);
    let points: Vec<[f32; 3]> = (0..n)
        .map(|_| std::array::from_fn(|_| (rng.uniform() * edge) as f32))
        .collect();
    println!("{n} uniform points in a cube of edge {edge:.2}, r = 1, f32, {threads} threads");

    let mut core = CoreScheme::new(radius).unwrap();
    let expected = measure("core", &mut core, &points);

    for (candidates, fraction) in [(3, 0.2), (4, 0.2), (1, 0.2), (3, 0.05), (3, 1.0)] {
        let config = GroupConfig {
            candidates,
            bucket_fraction: fraction,
            kernel: Kernel::Simd,
        };
        let mut group = GroupScheme::with_config(radius, config).unwrap();
        let label = format!("group g={candidates} f={fraction}");
        let count = measure(&label, &mut group, &points);
        assert_eq!(count, expected, "the group scheme found other pairs");
        let p = group.build_profile();
        println!(
            "    build phases: validate {:.1}, keys+sort {:.1}, cells {:.1}, candidates {:.1}, \
             greedy {:.1}, layout {:.1} of {:.1} ms (greedy share {:.1} %; {} cells)",
            ms(p.validate),
            ms(p.sort),
            ms(p.cells),
            ms(p.candidates),
            ms(p.greedy),
            ms(p.layout),
            ms(p.total),
            100.0 * p.greedy_share(),
            group.cell_count(),
        );
    }
}
