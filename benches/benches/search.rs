//! Criterion benchmark of hhg's build plus neighbour lists on the uniform and dam-break scenes.
//!
//! This measures the steady state of a simulation loop: the grid and the lists are created once
//! and reused, and each iteration rebuilds the grid on the same points and refills the lists.
//! Work runs on rayon's global pool (one thread per logical CPU). The sample is kept small so
//! that `cargo bench` finishes in about a minute; use `cargo xtask bench` for the comparison with
//! the other engines.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hhg_benches::scenes::{RADIUS, Scene};
use hhg_benches::suite::DEFAULT_SEED;
use hhg_core::{Grid, NeighborLists};

/// The point counts benchmarked per scene.
const SIZES: [(usize, &str); 2] = [(10_000, "10k"), (100_000, "100k")];

/// One benchmark group per scene, one benchmark per size.
fn search(c: &mut Criterion) {
    for scene in [Scene::Uniform, Scene::Dambreak] {
        let mut group = c.benchmark_group(scene.name());
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
        for (n, label) in SIZES {
            let points = scene.generate(n, scene.seed(DEFAULT_SEED, n));
            let mut grid = Grid::<f32>::new(RADIUS).expect("the scene radius is valid");
            let mut lists = NeighborLists::<f32>::default();
            group.throughput(Throughput::Elements(n as u64));
            group.bench_with_input(BenchmarkId::from_parameter(label), &points, |b, points| {
                b.iter(|| {
                    grid.build(black_box(points))
                        .expect("scene points are finite");
                    grid.neighbor_lists(&mut lists).unwrap();
                    black_box(lists.indices().len())
                });
            });
        }
        group.finish();
    }
}

criterion_group!(benches, search);
criterion_main!(benches);
