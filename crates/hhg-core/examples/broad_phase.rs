//! A small, self-contained run of the broad phase on the bench's thesis cuboids (edges
//! uniform in 1..12, a cube sized for ~2 overlaps per box, every moving box moving up to 20 %
//! of its size per step), for thread scaling and for `valgrind --tool=callgrind`:
//!
//! - `cuboids`: `BroadPhase::build` (the update) and `BroadPhase::pairs` (the detection);
//! - `static`: a `Scene` whose boxes are 90 % static, `Scene::update` and `Scene::detect`.
//!
//! Each step runs in a rayon pool of every thread count given, alternated, and prints the
//! median and the best update and detection times per thread count and their ratios to the
//! first count.
//!
//! `cargo run --release -p hhg-core --example broad_phase -- [n] [cuboids|static] [steps]
//! [threads,threads,...]`

use std::time::Instant;

use hhg_core::PairList;
use hhg_core::broad::{Aabb, BroadPhase, Filter, Handle, Motion, Scene};
use hhg_testkit::SplitMix64;

/// The cube edge that gives `n` boxes with edges uniform in `1..12` about 2 overlapping pairs
/// each (the bench scenario's formula).
fn cube_edge(n: usize) -> f64 {
    let (lo, hi) = (1.0f64, 12.0f64);
    let mean = 0.5 * (lo + hi);
    let mean_sq = (hi.powi(3) - lo.powi(3)) / (3.0 * (hi - lo));
    let p = (4.0 / (n.max(2) - 1) as f64).cbrt();
    let x = (mean - (mean * mean - mean_sq * p).max(0.0).sqrt()) / mean_sq;
    (1.0 / x).max(hi)
}

/// Moving cuboids in a periodic cube (the motion wraps, the boxes do not).
struct Cuboids {
    edge: f64,
    corners: Vec<[f64; 3]>,
    sizes: Vec<[f64; 3]>,
    velocities: Vec<[f64; 3]>,
}

impl Cuboids {
    fn new(n: usize, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let edge = cube_edge(n);
        let mut unit = || rng.uniform();
        let corners = (0..n).map(|_| [0; 3].map(|_| unit() * edge)).collect();
        let sizes: Vec<[f64; 3]> = (0..n)
            .map(|_| [0; 3].map(|_| 1.0 + 11.0 * unit()))
            .collect();
        let velocities = sizes
            .iter()
            .map(|s| {
                let longest = s[0].max(s[1]).max(s[2]);
                let d = [0; 3].map(|_| unit() - 0.5);
                let norm = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt().max(1e-9);
                let speed = 0.2 * longest * unit();
                d.map(|v| v / norm * speed)
            })
            .collect();
        Self {
            edge,
            corners,
            sizes,
            velocities,
        }
    }

    fn step(&mut self, moving: impl Fn(usize) -> bool) {
        for (i, (c, v)) in self.corners.iter_mut().zip(&self.velocities).enumerate() {
            if moving(i) {
                *c = [0, 1, 2].map(|a| (c[a] + v[a]).rem_euclid(self.edge));
            }
        }
    }

    fn aabb(&self, i: usize) -> Aabb<f32> {
        let c = self.corners[i];
        let s = self.sizes[i];
        Aabb::new(c.map(|v| v as f32), [0, 1, 2].map(|a| (c[a] + s[a]) as f32))
    }
}

/// One engine per thread count, kept from step to step.
enum Engine {
    Broad(Box<BroadPhase<f32>>, PairList<f32>, Vec<Aabb<f32>>),
    Scene(Box<Scene<f32>>, Vec<Handle>, Vec<[Handle; 2]>),
}

impl Engine {
    /// The update and the detection of one step, in seconds, and the pair count.
    fn step(&mut self, cuboids: &Cuboids, moving: &dyn Fn(usize) -> bool) -> (f64, f64, usize) {
        let n = cuboids.corners.len();
        match self {
            Engine::Broad(broad, pairs, boxes) => {
                boxes.clear();
                boxes.extend((0..n).map(|i| cuboids.aabb(i)));
                let start = Instant::now();
                broad.build(boxes).expect("finite boxes");
                let built = Instant::now();
                broad.pairs(pairs).expect("the pairs fit");
                (
                    (built - start).as_secs_f64(),
                    built.elapsed().as_secs_f64(),
                    pairs.len(),
                )
            }
            Engine::Scene(scene, handles, found) => {
                for (i, &h) in handles.iter().enumerate() {
                    if moving(i) {
                        scene.set_aabb(h, cuboids.aabb(i)).expect("a live handle");
                    }
                }
                let start = Instant::now();
                scene.update().expect("finite boxes");
                let updated = Instant::now();
                scene.detect(found).expect("the pairs fit");
                (
                    (updated - start).as_secs_f64(),
                    updated.elapsed().as_secs_f64(),
                    found.len(),
                )
            }
        }
    }
}

/// The median and the smallest of `values` (the best step is the one least disturbed by
/// other processes on a loaded machine).
fn median_and_best(values: &mut [f64]) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2], values[0])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(100_000, |s| s.parse().expect("n"));
    let statics = match args.get(2).map_or("cuboids", String::as_str) {
        "static" => true,
        "cuboids" => false,
        other => panic!("unknown scene {other} (cuboids or static)"),
    };
    let steps: usize = args.get(3).map_or(5, |s| s.parse().expect("steps"));
    let threads: Vec<usize> = args.get(4).map_or(vec![1, 2], |s| {
        s.split(',').map(|t| t.parse().expect("threads")).collect()
    });
    // Every tenth box moves in the static scene (90 % static), every box otherwise.
    let moving = move |i: usize| !statics || i.is_multiple_of(10);
    let mut cuboids = Cuboids::new(n, 7);
    let pools: Vec<rayon::ThreadPool> = threads
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .expect("a pool")
        })
        .collect();
    let mut engines: Vec<Engine> = pools
        .iter()
        .map(|_| {
            if statics {
                let mut scene = Scene::new();
                let handles = (0..n)
                    .map(|i| {
                        let motion = if moving(i) {
                            Motion::Dynamic
                        } else {
                            Motion::Static
                        };
                        scene.insert(cuboids.aabb(i), motion, Filter::ALL).unwrap()
                    })
                    .collect();
                Engine::Scene(Box::new(scene), handles, Vec::new())
            } else {
                Engine::Broad(Box::default(), PairList::default(), Vec::new())
            }
        })
        .collect();
    let mut times = vec![(Vec::new(), Vec::new()); pools.len()];
    // One warm-up step, then the measured ones.
    for step in 0..=steps {
        let mut pairs = Vec::new();
        for (k, pool) in pools.iter().enumerate() {
            let engine = &mut engines[k];
            let (update, detect, count) = pool.install(|| engine.step(&cuboids, &moving));
            if step > 0 {
                times[k].0.push(update);
                times[k].1.push(detect);
            }
            pairs.push(count);
        }
        assert!(
            pairs.windows(2).all(|w| w[0] == w[1]),
            "pair counts {pairs:?}"
        );
        cuboids.step(moving);
    }
    let scene = if statics { "static" } else { "cuboids" };
    println!("{scene}, {n} boxes, {steps} steps (ms; speedups against the first pool):");
    let mut first = None;
    for (k, (update, detect)) in times.iter_mut().enumerate() {
        let (update, best_update) = median_and_best(update);
        let (detect, best_detect) = median_and_best(detect);
        let [u, d, bu, bd] = [update, detect, best_update, best_detect].map(|t| 1e3 * t);
        let (u1, d1, bu1, bd1) = *first.get_or_insert((u, d, bu, bd));
        println!(
            "  {} thread(s): median update {u:8.2} detect {d:8.2} ({:.2}x, {:.2}x, step {:.2}x); \
             best update {bu:8.2} detect {bd:8.2} ({:.2}x, {:.2}x, step {:.2}x)",
            threads[k],
            u1 / u,
            d1 / d,
            (u1 + d1) / (u + d),
            bu1 / bu,
            bd1 / bd,
            (bu1 + bd1) / (bu + bd)
        );
    }
}
