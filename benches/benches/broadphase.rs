//! Criterion benchmark of the broad phase: hhg against sort-and-sweep on the thesis scenario.
//!
//! Like `search.rs`, this measures the steady state of a simulation loop: the structure and the
//! pair buffer are created once and reused, and each iteration updates the structure on the
//! boxes of one scenario step and writes all overlapping pairs. Work runs on rayon's global pool
//! (one thread per logical CPU). Use `cargo xtask bench --suite broadphase` for the comparison
//! with all engines over moving boxes.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hhg_benches::broadphase::sap::SweepAndPrune;
use hhg_benches::broadphase::scenario::Scenario;
use hhg_benches::suite::DEFAULT_SEED;
use hhg_core::PairList;
use hhg_core::broad::BroadPhase;

/// The box counts benchmarked.
const SIZES: [(usize, &str); 2] = [(10_000, "10k"), (100_000, "100k")];

/// One benchmark group per engine, one benchmark per size.
fn broadphase(c: &mut Criterion) {
    let scenes: Vec<(Scenario, &str)> = SIZES
        .iter()
        .map(|&(n, label)| {
            let mut scenario = Scenario::new(n, Scenario::seed(DEFAULT_SEED, n));
            // One step away from the generated state, as in the runner's measured steps.
            scenario.step();
            (scenario, label)
        })
        .collect();

    let mut group = c.benchmark_group("broadphase-hhg");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for (scenario, label) in &scenes {
        let mut broad = BroadPhase::<f32>::new();
        let mut pairs = PairList::default();
        group.throughput(Throughput::Elements(scenario.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(label), scenario, |b, s| {
            b.iter(|| {
                broad
                    .build(black_box(s.boxes()))
                    .expect("scenario boxes are finite");
                broad.pairs(&mut pairs).unwrap();
                black_box(pairs.len())
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("broadphase-sap");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for (scenario, label) in &scenes {
        let mut sap = SweepAndPrune::new();
        let mut pairs = Vec::new();
        group.throughput(Throughput::Elements(scenario.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(label), scenario, |b, s| {
            b.iter(|| {
                sap.update(black_box(s.boxes()));
                sap.pairs(&mut pairs);
                black_box(pairs.len())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, broadphase);
criterion_main!(benches);
