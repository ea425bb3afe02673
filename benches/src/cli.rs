//! Command-line parsing for the `hhg-bench` binary.

use std::path::PathBuf;

use crate::broadphase::engines::BroadEngine;
use crate::broadphase::runner::{BROAD_SIZES, BroadRun};
use crate::broadphase::scenario::BroadScene;
use crate::engines::{Engine, PyPeer};
use crate::runner::{
    DEFAULT_SEED, DEFAULT_SIZES, FULL_MAX_SIZE, Order, PointRun, SceneRun, default_threads,
    full_sizes, scaling_threads,
};
use crate::scenes::Scene;
use crate::schemes::{SchemeKind, SchemeRun};

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
hhg-bench: compare hhg with its peers: fixed-radius neighbour lists (kiddo, rstar, brute force,
Python peers), hashing schemes (core, xor, pouchol, group) and the broad phase of moving boxes
(sort-and-sweep, parry3d's BVH, brute force)

USAGE:
    hhg-bench [OPTIONS]
        Runs the particle, scheme and broad-phase suites (--suite picks one), shows a progress
        bar, prints a table per suite and a summary, and writes results.json, report.md and
        SVG plots to <out>/<timestamp>/ (results.json and report.md also to <out>/).

        The quick default (under a minute on two cores) runs the particle scenes at 10k and
        100k points with hhg, hhg-cellorder, kiddo and brute force (rstar with --full or
        --engine rstar), the schemes on uniform, dambreak and clustered, the broad-phase
        scenes at 1k, 10k and 100k boxes (parry when built: see `cargo xtask help`), and
        thread scaling on the uniform and cuboids scenes at the largest size. --full runs every engine and every scene at the
        powers of ten from 1k to --max-n (default 1M) and thread scaling on every scene at the
        largest size.

        particles: uniform (~40 neighbours), dambreak (SPH block), clustered (50 Gaussian
        clusters), sheet (1024:1 slab), outlier (uniform plus one far point), periodic (uniform
        in a box periodic on all axes, minimum-image pairs with their shifts: hhg, brute force
        and the Python peers only), variable (radii over 8x, rule max(ri, rj)), sph (a frame of
        hhg-sph's dam break, fluid and walls, after 25 solver steps, radius the kernel support,
        about the requested count). Every engine runs on the shuffled points (`<scene>-random`);
        all but brute force also on hhg's cell order (`<scene>-sorted`), on the cell order with
        every point then moved by a seeded uniform offset of up to 0.1 r per axis
        (`<scene>-drift`, other points, so other pairs), on the points sorted by the Morton code
        of their cell of edge r (`<scene>-zorder`) and, on sph, in the solver's own numbering
        (`sph-solver`, nearly cell order). The table's `x sorted` and the point-order table
        give each time over the same engine's `-sorted` time. hhg-cellorder is hhg with its
        lists in cell order (ListOrder::CellOrder) instead of ascending; one radius in open
        space only. Brute force runs up to 20000 points. Python peers (--peers python) run on
        the random order of the fixed-radius scenes.

        schemes: every hashing scheme builds and lists the unique pairs of the same scenes
        (random order); reported with candidate tests per pair and the largest bucket load.

        broadphase: cuboids (Schornbaum's thesis: edges 1 to 12, about 2 overlapping pairs per
        box, moving), long (10 x 1 x 1 objects), static (90 % static), huge (huge and infinite
        boxes mixed in) at 1k, 10k and 100k boxes. hhg, sap (sort and sweep), parry (parry3d's
        BVH; finite boxes only) and brute force (up to 20000 boxes) each time their setup,
        then one warm-up step and the measured steps (update, then detection of all pairs);
        the tables show medians.

    hhg-bench --points FILE --radius R [OPTIONS]
        The points of FILE: `.xyz` text, `.ply` (ASCII or binary), anything else raw
        little-endian f32 x, y, z triples (12 bytes per point); the case is the file stem
        (with the order's suffix, see --order). Runs hhg and kiddo unless --engine, --scheme
        or --peers says otherwise (--scheme alone runs only the schemes), and prints one JSON
        line per engine, plus the tables unless --json is given.

OPTIONS:
    --suite NAME      particles, schemes, broadphase or all (default: all).
    --full            The full matrix: every scene, sizes 1k, 10k, ... up to --max-n, thread
                      scaling on every scene.
    --scene NAME      Only this scene, of either suite (uniform, dambreak, clustered, sheet,
                      outlier, periodic, variable, sph; cuboids, long, static, huge);
                      repeatable.
                      A suite none of whose scenes is named is skipped.
    --scheme NAME     Only this hashing scheme (core, xor, pouchol, group); repeatable. Without
                      --suite or --engine, runs the scheme suite alone. With --points, runs
                      the schemes on the file's points (in every --order).
    --n N             Only this point or box count (e.g. 20000, 50k, 1M); repeatable.
    --max-n N         Skip counts above N; with --full, the largest size (default 1M).
    --engine NAME     Only this engine; repeatable. Particles: hhg, hhg-cellorder, kiddo, rstar,
                      brute, vesin, freud, scipy, matscipy; broad phase: hhg, sap, parry,
                      brute. With --suite all, a suite none of whose engines is named is
                      skipped.
    --peers python    Add the Python peers (vesin, freud, scipy, matscipy) to the particle
                      suite; skipped with a message when Python or a package is missing
                      (pip install vesin freud-analysis scipy matscipy).
    --threads T       Worker threads in the rayon pool (default: all logical CPUs).
    --scaling-threads LIST
                      Thread counts of the scaling measurement (default: 1, 2, 4, ... and all
                      logical CPUs).
    --no-scaling      Skip the thread-scaling measurement.
    --reps K          Particle and scheme suites: runs per measurement, best taken (default: 3
                      up to 100k points, 2 above).
    --steps K         Broad-phase suite: measured steps per run, after one warm-up step
                      (default: 5 up to 100k boxes, 3 above).
    --seed S          Base seed of the generated inputs (default: 0x5eed000000000001); with
                      --points, the seed of the random order's shuffle and the drift.
    --out DIR         Where the result files go (default: $HHG_BENCH_OUT_DIR, else
                      target/bench).
    --compare FILE    Also compare with an earlier results.json: a table of time ratios.
    --points FILE     Benchmark the points in FILE instead of generated scenes.
    --radius R        Search radius for --points.
    --order LIST      With --points: the orders the points run in, any of random (a seeded
                      shuffle), cell (hhg's cell order; case suffix -sorted), drift, zorder
                      and file (as the file has them; the default), comma-separated or
                      repeated; measured file first, then random, cell, drift, zorder. The
                      Python peers run on the file's order only.
    --json            Print JSON lines instead of the tables.
    -h, --help        Print this help.

Exit status: 0 when all engines agree, 1 when they disagree or a run fails, 2 on a usage error.
Run it through `cargo xtask bench` for a native-CPU release build whose flags the report records.
";

/// The environment variable that overrides the default output directory.
pub const OUT_DIR_VAR: &str = "HHG_BENCH_OUT_DIR";

/// The default output directory, relative to the working directory.
pub const DEFAULT_OUT_DIR: &str = "target/bench";

/// Which cases the thread-scaling measurement covers, and with how many threads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalingPlan {
    /// Thread counts, ascending.
    pub threads: Vec<usize>,
    /// Particle cases: scene and point count.
    pub particles: Vec<(Scene, usize)>,
    /// Broad-phase cases: scene and box count.
    pub broad: Vec<(BroadScene, usize)>,
}

/// What the binary was asked to do.
// One command is made per process, so the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Print the usage.
    Help,
    /// Benchmark generated inputs: particle scenes, hashing schemes, the broad phase.
    Scenes {
        /// What the particle suite runs; `None` when it is not run.
        run: Option<SceneRun>,
        /// What the scheme suite runs; `None` when it is not run.
        schemes: Option<SchemeRun>,
        /// What the broad-phase suite runs; `None` when it is not run.
        broad: Option<BroadRun>,
        /// The thread-scaling measurement; `None` when it is not run.
        scaling: Option<ScalingPlan>,
        /// Whether this is the `--full` matrix.
        full: bool,
        /// Where the result files go; `None` means the default.
        out: Option<PathBuf>,
        /// An earlier `results.json` to compare with.
        compare: Option<PathBuf>,
        /// JSON lines instead of the tables.
        json: bool,
    },
    /// Benchmark a point file.
    Points {
        /// The point file.
        file: PathBuf,
        /// The radius, engines, schemes, orders and the rest of the run.
        run: PointRun,
        /// JSON lines only, no table.
        json: bool,
    },
}

/// Which benchmark suites a run covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// Fixed-radius neighbour lists on particle scenes.
    Particles,
    /// Hashing schemes on fixed-radius particle scenes.
    Schemes,
    /// All overlapping pairs of moving boxes.
    Broadphase,
    /// All three.
    All,
}

impl Suite {
    /// Whether the particle suite is included.
    pub fn particles(self) -> bool {
        matches!(self, Suite::Particles | Suite::All)
    }

    /// Whether the scheme suite is included.
    pub fn schemes(self) -> bool {
        matches!(self, Suite::Schemes | Suite::All)
    }

    /// Whether the broad-phase suite is included.
    pub fn broadphase(self) -> bool {
        matches!(self, Suite::Broadphase | Suite::All)
    }
}

impl std::str::FromStr for Suite {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "particles" => Ok(Suite::Particles),
            "schemes" => Ok(Suite::Schemes),
            "broadphase" => Ok(Suite::Broadphase),
            "all" => Ok(Suite::All),
            _ => Err(format!(
                "unknown suite `{s}` (expected particles, schemes, broadphase or all)"
            )),
        }
    }
}

/// Parses a positive integer option value.
fn positive(flag: &str, v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(k) if k > 0 => Ok(k),
        _ => Err(format!("{flag} needs a positive integer, got `{v}`")),
    }
}

/// Parses a point count such as `20000`, `20_000`, `50k` or `1M`.
pub fn parse_count(s: &str) -> Result<usize, String> {
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let (digits, factor) = match clean.chars().last() {
        Some('k' | 'K') => (&clean[..clean.len() - 1], 1_000),
        Some('m' | 'M') => (&clean[..clean.len() - 1], 1_000_000),
        _ => (clean.as_str(), 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|d| d.checked_mul(factor))
        .ok_or_else(|| format!("`{s}` is not a point count (e.g. 20000, 50k, 1M)"))
}

/// Parses a seed in decimal or `0x` hexadecimal.
fn parse_seed(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("`{s}` is not a seed (decimal or 0x hex)"))
}

/// Parses the arguments after the program name.
pub fn parse<I>(args: I) -> Result<Command, String>
where
    I: IntoIterator<Item = String>,
{
    let mut scenes: Vec<Scene> = Vec::new();
    let mut broad_scenes: Vec<BroadScene> = Vec::new();
    let mut scheme_kinds: Vec<SchemeKind> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut max_n: Option<usize> = None;
    let mut engine_names: Vec<String> = Vec::new();
    let mut suite: Option<Suite> = None;
    let mut threads = default_threads();
    let mut scaling_counts: Option<Vec<usize>> = None;
    let mut no_scaling = false;
    let mut reps: Option<usize> = None;
    let mut steps: Option<usize> = None;
    let mut seed: Option<u64> = None;
    let mut out: Option<PathBuf> = None;
    let mut compare: Option<PathBuf> = None;
    let mut points: Option<PathBuf> = None;
    let mut radius: Option<f32> = None;
    let mut orders: Vec<Option<Order>> = Vec::new();
    let mut json = false;
    let mut full = false;
    let mut python = false;

    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        // Both `--flag value` and `--flag=value` are accepted.
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--json" => json = true,
            "--full" => full = true,
            "--no-scaling" => no_scaling = true,
            "--scene" => {
                for name in value("--scene")?.split(',') {
                    let name = name.trim();
                    if let Ok(scene) = name.parse::<Scene>() {
                        scenes.push(scene);
                    } else if let Ok(scene) = name.parse::<BroadScene>() {
                        broad_scenes.push(scene);
                    } else {
                        return Err(format!(
                            "unknown scene `{name}` (expected uniform, dambreak, clustered, \
                             sheet, outlier, periodic, variable, sph, cuboids, long, static or \
                             huge)"
                        ));
                    }
                }
            }
            "--scheme" => {
                for name in value("--scheme")?.split(',') {
                    scheme_kinds.push(name.trim().parse()?);
                }
            }
            "--engine" => {
                for name in value("--engine")?.split(',') {
                    let name = name.trim();
                    if name.parse::<Engine>().is_err() && name.parse::<BroadEngine>().is_err() {
                        return Err(format!(
                            "unknown engine `{name}` (expected hhg, hhg-cellorder, kiddo, rstar, \
                             sap, parry, brute, vesin, freud, scipy or matscipy)"
                        ));
                    }
                    engine_names.push(name.to_owned());
                }
            }
            "--peers" => match value("--peers")?.as_str() {
                "python" => python = true,
                other => {
                    return Err(format!("unknown peers `{other}` (expected python)"));
                }
            },
            "--suite" => suite = Some(value("--suite")?.parse()?),
            "--n" => {
                for count in value("--n")?.split(',') {
                    sizes.push(parse_count(count.trim())?);
                }
            }
            "--max-n" => max_n = Some(parse_count(&value("--max-n")?)?),
            "--threads" => threads = positive("--threads", &value("--threads")?)?,
            "--scaling-threads" => {
                let mut counts = Vec::new();
                for t in value("--scaling-threads")?.split(',') {
                    counts.push(positive("--scaling-threads", t.trim())?);
                }
                counts.sort_unstable();
                counts.dedup();
                scaling_counts = Some(counts);
            }
            "--reps" => reps = Some(positive("--reps", &value("--reps")?)?),
            "--steps" => steps = Some(positive("--steps", &value("--steps")?)?),
            "--seed" => seed = Some(parse_seed(&value("--seed")?)?),
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--compare" => compare = Some(PathBuf::from(value("--compare")?)),
            "--points" => points = Some(PathBuf::from(value("--points")?)),
            "--order" => {
                for name in value("--order")?.split(',') {
                    orders.push(match name.trim() {
                        "file" => None,
                        other => Some(other.parse::<Order>()?),
                    });
                }
            }
            "--radius" => {
                let v = value("--radius")?;
                radius = match v.parse::<f32>() {
                    Ok(r) if r.is_finite() && r > 0.0 => Some(r),
                    _ => return Err(format!("--radius needs a finite number > 0, got `{v}`")),
                };
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }

    // The particle engines named, with the Python peers that --peers adds.
    let mut particle_engines: Vec<Engine> =
        engine_names.iter().filter_map(|n| n.parse().ok()).collect();
    let python_named = particle_engines
        .iter()
        .any(|e| matches!(e, Engine::Python(_)));
    if python && !python_named {
        if particle_engines.is_empty() {
            particle_engines.extend(Engine::ALL);
        }
        particle_engines.extend(PyPeer::ALL.map(Engine::Python));
    }

    if let Some(file) = points {
        let scene_only = [
            (!scenes.is_empty() || !broad_scenes.is_empty(), "--scene"),
            (!sizes.is_empty(), "--n"),
            (max_n.is_some(), "--max-n"),
            (out.is_some(), "--out"),
            (suite.is_some(), "--suite"),
            (steps.is_some(), "--steps"),
            (full, "--full"),
            (compare.is_some(), "--compare"),
            (scaling_counts.is_some(), "--scaling-threads"),
            (no_scaling, "--no-scaling"),
        ];
        if let Some((_, flag)) = scene_only.iter().find(|(given, _)| *given) {
            return Err(format!(
                "{flag} applies to generated scenes, not to --points"
            ));
        }
        let radius = radius.ok_or("--points needs --radius R")?;
        if engine_names
            .iter()
            .any(|name| name.parse::<Engine>().is_err())
        {
            let name = engine_names
                .iter()
                .find(|name| name.parse::<Engine>().is_err())
                .cloned()
                .unwrap_or_default();
            return Err(format!(
                "`{name}` is a broad-phase engine, not one for --points"
            ));
        }
        let mut engines = particle_engines;
        // --scheme alone runs only the schemes, as it runs only the scheme suite on scenes.
        if engines.is_empty() && scheme_kinds.is_empty() {
            engines = vec![Engine::Hhg, Engine::Kiddo];
        }
        let mut schemes = scheme_kinds;
        schemes.sort();
        schemes.dedup();
        if orders.is_empty() {
            orders.push(None);
        }
        orders.sort();
        orders.dedup();
        return Ok(Command::Points {
            file,
            run: PointRun {
                radius,
                engines,
                schemes,
                orders,
                threads,
                reps,
                seed: seed.unwrap_or(DEFAULT_SEED),
            },
            json,
        });
    }
    if radius.is_some() {
        return Err("--radius applies to --points only (generated scenes have their own)".into());
    }
    if !orders.is_empty() {
        return Err(
            "--order applies to --points only (generated scenes run in every order)".into(),
        );
    }

    let suite_given = suite.is_some();
    // --scheme alone asks for the scheme suite.
    let suite = suite.unwrap_or(if !scheme_kinds.is_empty() && engine_names.is_empty() {
        Suite::Schemes
    } else {
        Suite::All
    });
    if !suite.particles() && !suite.schemes() {
        let particle_only = [(!scenes.is_empty(), "--scene"), (reps.is_some(), "--reps")];
        if let Some((_, flag)) = particle_only.iter().find(|(given, _)| *given) {
            return Err(format!(
                "{flag} applies to the particle and scheme suites, not to --suite broadphase"
            ));
        }
    }
    if !suite.broadphase() && (steps.is_some() || !broad_scenes.is_empty()) {
        let flag = if steps.is_some() {
            "--steps"
        } else {
            "--scene"
        };
        return Err(format!(
            "{flag} applies to the broad-phase suite, which is not selected"
        ));
    }
    if !suite.schemes() && !scheme_kinds.is_empty() {
        return Err("--scheme applies to the scheme suite, which is not selected".into());
    }
    if sizes.contains(&0) {
        return Err("a count of 0 cannot be benchmarked".into());
    }
    let pick_sizes = |defaults: &[usize]| -> Vec<usize> {
        if !sizes.is_empty() {
            let mut list = sizes.clone();
            if let Some(max) = max_n {
                list.retain(|&n| n <= max);
            }
            return list;
        }
        if full {
            return full_sizes(max_n.unwrap_or(FULL_MAX_SIZE));
        }
        let mut list = defaults.to_vec();
        if let Some(max) = max_n {
            list.retain(|&n| n <= max);
        }
        list
    };
    let seed = seed.unwrap_or(DEFAULT_SEED);
    let any_scene_named = !scenes.is_empty() || !broad_scenes.is_empty();
    scenes.dedup();
    broad_scenes.dedup();

    // A suite runs when it was asked for and has a scene, a count and an engine left; with
    // `--suite all`, a suite that the filters leave empty is skipped, an explicitly chosen one
    // is an error.
    let explicit = |s: Suite| suite_given && suite == s;
    let mut run = None;
    if suite.particles() {
        let no_engine = !engine_names.is_empty() && particle_engines.is_empty();
        let no_scene = any_scene_named && scenes.is_empty();
        let config = SceneRun {
            scenes: if scenes.is_empty() {
                Scene::ALL.to_vec()
            } else {
                scenes.clone()
            },
            sizes: pick_sizes(&DEFAULT_SIZES),
            engines: if particle_engines.is_empty() && full {
                Engine::ALL.to_vec()
            } else if particle_engines.is_empty() {
                Engine::QUICK.to_vec()
            } else {
                particle_engines.clone()
            },
            threads,
            reps,
            seed,
        };
        if explicit(Suite::Particles) {
            if no_engine {
                return Err(
                    "no particle engine among --engine (hhg, hhg-cellorder, kiddo, rstar, brute, \
                     vesin, freud, scipy, matscipy)"
                        .into(),
                );
            }
            if no_scene {
                return Err("no particle scene among --scene".into());
            }
            if config.sizes.is_empty() {
                return Err("no point count left to run (check --n and --max-n)".into());
            }
        }
        if !no_engine && !no_scene && !config.sizes.is_empty() {
            run = Some(config);
        }
    }
    let mut schemes = None;
    if suite.schemes() {
        let no_engine = !engine_names.is_empty() && scheme_kinds.is_empty();
        let fixed: Vec<Scene> = scenes.iter().copied().filter(|s| s.is_plain()).collect();
        let no_scene = any_scene_named && fixed.is_empty();
        let config = SchemeRun {
            scenes: if !fixed.is_empty() {
                fixed
            } else if full {
                Scene::ALL.into_iter().filter(|s| s.is_plain()).collect()
            } else {
                Scene::SCHEME_DEFAULT.to_vec()
            },
            sizes: pick_sizes(&DEFAULT_SIZES),
            schemes: if scheme_kinds.is_empty() {
                SchemeKind::ALL.to_vec()
            } else {
                let mut kinds = scheme_kinds.clone();
                kinds.sort();
                kinds.dedup();
                kinds
            },
            threads,
            reps,
            seed,
        };
        if explicit(Suite::Schemes) {
            if no_scene {
                return Err("no fixed-radius particle scene among --scene for the schemes".into());
            }
            if config.sizes.is_empty() {
                return Err("no point count left to run (check --n and --max-n)".into());
            }
        }
        if !no_engine && !no_scene && !config.sizes.is_empty() {
            schemes = Some(config);
        }
    }
    let mut broad = None;
    if suite.broadphase() {
        let engines: Vec<BroadEngine> =
            engine_names.iter().filter_map(|n| n.parse().ok()).collect();
        if let Some(missing) = engines.iter().find(|e| !e.built()) {
            return Err(missing.not_built_message());
        }
        let no_engine = !engine_names.is_empty() && engines.is_empty();
        let no_scene = any_scene_named && broad_scenes.is_empty();
        let config = BroadRun {
            scenes: if broad_scenes.is_empty() {
                BroadScene::ALL.to_vec()
            } else {
                broad_scenes.clone()
            },
            sizes: pick_sizes(&BROAD_SIZES),
            engines: if engines.is_empty() {
                BroadEngine::all_built()
            } else {
                engines
            },
            threads,
            steps,
            seed,
        };
        if explicit(Suite::Broadphase) {
            if no_engine {
                return Err("no broad-phase engine among --engine (hhg, sap, parry, brute)".into());
            }
            if no_scene {
                return Err("no broad-phase scene among --scene".into());
            }
            if config.sizes.is_empty() {
                return Err("no box count left to run (check --n and --max-n)".into());
            }
        }
        if !no_engine && !no_scene && !config.sizes.is_empty() {
            broad = Some(config);
        }
    }
    if run.is_none() && schemes.is_none() && broad.is_none() {
        return Err(
            "nothing left to run (check --suite, --scene, --scheme, --n, --max-n and --engine)"
                .into(),
        );
    }
    let scaling = if no_scaling {
        None
    } else {
        let counts = scaling_counts.unwrap_or_else(|| scaling_threads(default_threads()));
        let mut plan = ScalingPlan {
            threads: counts,
            ..ScalingPlan::default()
        };
        if let Some(run) = &run
            && let Some(&n) = run.sizes.iter().max()
        {
            plan.particles = if full {
                run.scenes.iter().map(|&s| (s, n)).collect()
            } else {
                let scene = if run.scenes.contains(&Scene::Uniform) {
                    Scene::Uniform
                } else {
                    run.scenes[0]
                };
                vec![(scene, n)]
            };
        }
        if let Some(broad) = &broad
            && let Some(&n) = broad.sizes.iter().max()
        {
            plan.broad = if full {
                broad.scenes.iter().map(|&s| (s, n)).collect()
            } else {
                let scene = if broad.scenes.contains(&BroadScene::Cuboids) {
                    BroadScene::Cuboids
                } else {
                    broad.scenes[0]
                };
                vec![(scene, n)]
            };
        }
        let other_counts = plan.threads.iter().any(|&t| t != threads);
        let any_case = !plan.particles.is_empty() || !plan.broad.is_empty();
        (other_counts && any_case).then_some(plan)
    };
    Ok(Command::Scenes {
        run,
        schemes,
        broad,
        scaling,
        full,
        out,
        compare,
        json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Command, String> {
        parse(s.split_whitespace().map(str::to_owned))
    }

    /// The suites of a scenes command.
    fn suites(
        command: Command,
    ) -> (
        Option<SceneRun>,
        Option<SchemeRun>,
        Option<BroadRun>,
        Option<ScalingPlan>,
    ) {
        let Command::Scenes {
            run,
            schemes,
            broad,
            scaling,
            ..
        } = command
        else {
            panic!("expected scenes");
        };
        (run, schemes, broad, scaling)
    }

    #[test]
    fn defaults_run_everything_quickly() {
        let Command::Scenes {
            run,
            schemes,
            broad,
            scaling,
            full,
            out,
            compare,
            json,
        } = parse_str("").unwrap()
        else {
            panic!("expected scenes");
        };
        let run = run.expect("the particle suite runs by default");
        assert_eq!(run, SceneRun::default());
        assert_eq!(run.engines, Engine::QUICK);
        assert_eq!(run.sizes, [10_000, 100_000]);
        assert_eq!(run.scenes, Scene::ALL);
        assert_eq!(run.threads, default_threads());
        assert_eq!(schemes, Some(SchemeRun::default()));
        assert_eq!(broad, Some(BroadRun::default()));
        assert_eq!(broad.unwrap().sizes, [1_000, 10_000, 100_000]);
        if default_threads() > 1 {
            let scaling = scaling.expect("scaling runs by default");
            assert_eq!(scaling.particles, [(Scene::Uniform, 100_000)]);
            assert_eq!(scaling.broad, [(BroadScene::Cuboids, 100_000)]);
            assert_eq!(scaling.threads, scaling_threads(default_threads()));
        }
        assert!(!full && !json);
        assert_eq!((out, compare), (None, None));
    }

    #[test]
    fn the_full_matrix() {
        let (run, schemes, broad, scaling) =
            suites(parse_str("--full --max-n 300000 --scaling-threads 1,2 --threads 2").unwrap());
        let run = run.unwrap();
        assert_eq!(run.sizes, [1_000, 10_000, 100_000, 300_000]);
        assert_eq!(run.engines, Engine::ALL);
        assert_eq!(run.scenes, Scene::ALL);
        assert_eq!(
            schemes.unwrap().scenes,
            Scene::ALL
                .into_iter()
                .filter(|s| s.is_plain())
                .collect::<Vec<_>>()
        );
        assert_eq!(broad.unwrap().sizes, [1_000, 10_000, 100_000, 300_000]);
        let scaling = scaling.unwrap();
        assert_eq!(scaling.threads, [1, 2]);
        assert_eq!(scaling.particles.len(), Scene::ALL.len());
        assert_eq!(scaling.broad.len(), BroadScene::ALL.len());
        let (run, ..) = suites(parse_str("--full").unwrap());
        assert_eq!(run.unwrap().sizes, [1_000, 10_000, 100_000, 1_000_000]);
        let (.., scaling) = suites(parse_str("--no-scaling").unwrap());
        assert_eq!(scaling, None);
        let (.., scaling) = suites(parse_str("--threads 1 --scaling-threads 1").unwrap());
        assert_eq!(scaling, None, "no thread count other than the main run's");
    }

    #[test]
    fn filters_and_limits() {
        let (run, schemes, broad, _) = suites(
            parse_str(
                "--max-n 100000 --scene dambreak --scene=uniform --engine hhg,kiddo --threads 1 --reps 5 --seed 0x10 --out x",
            )
            .unwrap(),
        );
        let run = run.unwrap();
        // Only particle scenes are named, so the broad-phase suite is skipped; no scheme is
        // named among the engines, so the scheme suite is too.
        assert_eq!(broad, None);
        assert_eq!(schemes, None);
        assert_eq!(run.sizes, [10_000, 100_000]);
        assert_eq!(run.scenes, [Scene::Dambreak, Scene::Uniform]);
        assert_eq!(run.engines, [Engine::Hhg, Engine::Kiddo]);
        assert_eq!((run.threads, run.reps, run.seed), (1, Some(5), 16));

        let (run, schemes, broad, _) = suites(parse_str("--n 3k --n 1_500").unwrap());
        assert_eq!(run.unwrap().sizes, [3000, 1500]);
        assert_eq!(schemes.unwrap().sizes, [3000, 1500]);
        assert_eq!(broad.unwrap().sizes, [3000, 1500]);
        assert!(parse_str("--suite particles --max-n 5000").is_err());
        assert!(parse_str("--n 0").is_err());

        let (run, schemes, broad, _) =
            suites(parse_str("--scene long,static --engine hhg,sap --steps 2").unwrap());
        assert_eq!((run, schemes), (None, None));
        let broad = broad.unwrap();
        assert_eq!(broad.scenes, [BroadScene::Long, BroadScene::StaticHeavy]);
        assert_eq!(broad.engines, [BroadEngine::Hhg, BroadEngine::Sap]);
        assert_eq!(broad.steps, Some(2));

        // The sph scene alone.
        let (run, schemes, broad, _) =
            suites(parse_str("--suite particles --scene sph --n 20000").unwrap());
        assert_eq!((schemes, broad), (None, None));
        let run = run.unwrap();
        assert_eq!((run.scenes, run.sizes), (vec![Scene::Sph], vec![20_000]));
    }

    #[test]
    fn schemes_and_python_peers() {
        let (run, schemes, broad, _) =
            suites(parse_str("--scheme xor,core --scene sheet").unwrap());
        assert_eq!((run, broad), (None, None));
        let schemes = schemes.unwrap();
        assert_eq!(schemes.schemes, [SchemeKind::Core, SchemeKind::Xor]);
        assert_eq!(schemes.scenes, [Scene::Sheet]);
        assert!(parse_str("--scheme octree").is_err());
        assert!(parse_str("--suite broadphase --scheme core").is_err());
        assert!(parse_str("--suite schemes --scene variable").is_err());

        let (run, ..) = suites(parse_str("--peers python --suite particles").unwrap());
        let engines = run.unwrap().engines;
        assert!(engines.contains(&Engine::Hhg) && engines.contains(&Engine::Python(PyPeer::Vesin)));
        assert_eq!(engines.len(), Engine::ALL.len() + PyPeer::ALL.len());
        let (run, ..) = suites(parse_str("--engine hhg,scipy").unwrap());
        assert_eq!(
            run.unwrap().engines,
            [Engine::Hhg, Engine::Python(PyPeer::Scipy)]
        );
        assert!(parse_str("--peers rust").is_err());
    }

    #[test]
    fn suites_and_their_filters() {
        // Only the broad-phase suite has a count below 10k by default.
        let (run, schemes, broad, _) = suites(parse_str("--max-n 5000").unwrap());
        assert_eq!((run, schemes), (None, None));
        assert_eq!(broad.unwrap().sizes, [1_000]);

        let (run, _, broad, _) = suites(
            parse_str("--suite broadphase --max-n 100000 --steps 4 --engine sap,brute").unwrap(),
        );
        let broad = broad.unwrap();
        assert_eq!(run, None);
        assert_eq!(broad.sizes, [1_000, 10_000, 100_000]);
        assert_eq!(broad.steps, Some(4));
        assert_eq!(broad.engines, [BroadEngine::Sap, BroadEngine::Brute]);

        let (run, schemes, broad, _) = suites(parse_str("--suite=particles").unwrap());
        assert_eq!(
            (run, schemes, broad),
            (Some(SceneRun::default()), None, None)
        );

        // With all suites, an engine of one suite only skips the others.
        let (run, schemes, broad, _) = suites(parse_str("--engine kiddo").unwrap());
        assert_eq!(run.unwrap().engines, [Engine::Kiddo]);
        assert_eq!((schemes, broad), (None, None));
        // parry is in the engine list only when the build holds it; otherwise naming it is
        // an error that says how to build it.
        let parsed = parse_str("--engine parry");
        if cfg!(feature = "parry") {
            let (run, _, broad, _) = suites(parsed.unwrap());
            assert_eq!(
                (run, broad.unwrap().engines),
                (None, vec![BroadEngine::Parry])
            );
            assert!(BroadRun::default().engines.contains(&BroadEngine::Parry));
        } else {
            let err = parsed.unwrap_err();
            assert!(err.contains("`parry` feature"), "{err}");
            assert!(!BroadRun::default().engines.contains(&BroadEngine::Parry));
        }

        assert!(parse_str("--suite broadphase --engine kiddo").is_err());
        assert!(parse_str("--suite particles --engine sap").is_err());
        assert!(parse_str("--suite broadphase --scene uniform").is_err());
        assert!(parse_str("--suite particles --scene huge").is_err());
        assert!(parse_str("--suite broadphase --reps 2").is_err());
        assert!(parse_str("--suite particles --steps 2").is_err());
        assert!(parse_str("--suite everything").is_err());
        assert!(parse_str("--steps 0").is_err());
        assert!(parse_str("--points a.f32 --radius 1 --suite particles").is_err());
        assert!(parse_str("--points a.f32 --radius 1 --engine sap").is_err());
        assert!(parse_str("--points a.f32 --radius 1 --full").is_err());
    }

    #[test]
    fn point_files() {
        let Command::Points { file, run, json } =
            parse_str("--points a/b.f32 --radius 0.5 --json --threads 2").unwrap()
        else {
            panic!("expected points");
        };
        assert_eq!(file, PathBuf::from("a/b.f32"));
        assert_eq!((run.radius, run.threads, json), (0.5, 2, true));
        assert_eq!(run.engines, [Engine::Hhg, Engine::Kiddo]);
        assert_eq!((run.orders, run.seed), (vec![None], DEFAULT_SEED));
        assert!(run.schemes.is_empty());
        let Command::Points { run, .. } =
            parse_str("--points a.ply --radius 1 --peers python").unwrap()
        else {
            panic!("expected points");
        };
        assert!(run.engines.contains(&Engine::Python(PyPeer::Freud)));
        assert!(parse_str("--points a.f32").is_err());
        assert!(parse_str("--points a.f32 --radius 1 --scene uniform").is_err());
        assert!(parse_str("--radius 1").is_err());
        assert!(parse_str("--points a.f32 --radius -1").is_err());
    }

    /// The run of a `--points` command.
    fn point_run(s: &str) -> PointRun {
        match parse_str(s) {
            Ok(Command::Points { run, .. }) => run,
            other => panic!("expected points, got {other:?}"),
        }
    }

    #[test]
    fn point_files_in_any_order_with_any_scheme() {
        let run = point_run("--points a.xyz --radius 1 --order zorder,drift --order file,cell");
        assert_eq!(
            run.orders,
            [
                None,
                Some(Order::Sorted),
                Some(Order::Drift),
                Some(Order::Zorder)
            ]
        );
        let run = point_run("--points a.xyz --radius 1 --order=random,random --seed 7");
        assert_eq!((run.orders, run.seed), (vec![Some(Order::Random)], 7));
        assert!(parse_str("--points a.xyz --radius 1 --order hilbert").is_err());
        assert!(
            parse_str("--order drift").is_err(),
            "scenes run every order"
        );

        // --scheme alone runs the schemes only; with --engine, both.
        let run = point_run("--points a.xyz --radius 1 --scheme xor,core");
        assert_eq!(run.schemes, [SchemeKind::Core, SchemeKind::Xor]);
        assert!(run.engines.is_empty());
        let run = point_run("--points a.xyz --radius 1 --scheme group --engine hhg-cellorder");
        assert_eq!(run.schemes, [SchemeKind::Group]);
        assert_eq!(run.engines, [Engine::HhgCellOrder]);
        assert!(parse_str("--points a.xyz --radius 1 --scheme octree").is_err());
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert_eq!(parse_str("--help").unwrap(), Command::Help);
        assert!(parse_str("--frobnicate").is_err());
        assert!(parse_str("--scene cube").is_err());
        assert!(parse_str("--engine octree").is_err());
        let (run, ..) = suites(parse_str("--engine hhg,hhg-cellorder").unwrap());
        assert_eq!(run.unwrap().engines, [Engine::Hhg, Engine::HhgCellOrder]);
        assert!(parse_str("--threads 0").is_err());
        assert!(parse_str("--threads").is_err());
        assert!(parse_str("--scaling-threads 0").is_err());
        assert!(parse_count("12x").is_err());
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        let Command::Scenes { compare, .. } = parse_str("--compare old.json").unwrap() else {
            panic!("expected scenes");
        };
        assert_eq!(compare, Some(PathBuf::from("old.json")));
    }
}
