//! A small, self-contained run of `VariableRadiusSearch` (build plus neighbour lists) on
//! points uniform in a cube with radii log-uniform over a given spread, for profiling with
//! `valgrind --tool=callgrind`, whose instruction counts do not depend on the machine's load.
//!
//! `cargo run --release -p hhg-core --example variable_radius -- [n] [spread] [max|mean] [steps]
//! [hierarchy factor]`

use std::time::Instant;

use hhg_core::NeighborLists;
use hhg_core::broad::{BroadPhaseConfig, RadiusRule, VariableRadiusSearch};

/// The mean neighbour count the cube is sized for, as in the bench's `variable` scene.
const NEIGHBORS: f64 = 40.0;

/// SplitMix64: a tiny seeded generator, enough for a profiling input.
fn next_unit(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(20_000, |s| s.parse().expect("n"));
    let spread: f64 = args.get(2).map_or(8.0, |s| s.parse().expect("spread"));
    let rule = match args.get(3).map_or("max", String::as_str) {
        "mean" => RadiusRule::Mean,
        _ => RadiusRule::Max,
    };
    let steps: usize = args.get(4).map_or(1, |s| s.parse().expect("steps"));
    let factor: f64 = args
        .get(5)
        .map_or(2.0, |s| s.parse().expect("hierarchy factor"));
    let mut state = 7u64;
    let radii: Vec<f32> = (0..n)
        .map(|_| (0.25 * spread.powf(next_unit(&mut state))) as f32)
        .collect();
    // The expected neighbour count is rho * 4/3 pi E[max(ri, rj)^3]; E is estimated by
    // sampling pairs of radii.
    let samples = 10_000;
    let mean_cubed: f64 = (0..samples)
        .map(|k| {
            let a = f64::from(radii[k % n]);
            let b = f64::from(radii[(k * 7919 + 13) % n]);
            a.max(b).powi(3)
        })
        .sum::<f64>()
        / samples as f64;
    let side = (n as f64 * 4.0 / 3.0 * std::f64::consts::PI * mean_cubed / NEIGHBORS).cbrt();
    let points: Vec<[f32; 3]> = (0..n)
        .map(|_| [0; 3].map(|_| (next_unit(&mut state) * side) as f32))
        .collect();
    let mut search = VariableRadiusSearch::new(rule);
    search
        .set_config(BroadPhaseConfig {
            hierarchy_factor: factor,
            ..BroadPhaseConfig::default()
        })
        .expect("hierarchy factor");
    let mut lists = NeighborLists::default();
    for _ in 0..steps {
        let start = Instant::now();
        search.build(&points, &radii).expect("build");
        let built = start.elapsed();
        search.neighbor_lists(&mut lists).expect("lists");
        let total = start.elapsed();
        println!(
            "n {n} spread {spread} {rule:?} factor {factor} ({} levels): build {:.2} ms, build + lists {:.2} ms, {} entries ({:.1} per point)",
            search.levels().len(),
            built.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3,
            lists.indices().len(),
            lists.indices().len() as f64 / n as f64
        );
    }
}
