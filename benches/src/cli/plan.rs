//! What the options of `hhg-bench` ask for: the suites to run on generated scenes (each with
//! its scenes, sizes and engines) and the thread-scaling plan, or the run on a point file; and
//! the checks that the options given make sense together.

use std::path::PathBuf;

use crate::broadphase::engines::BroadEngine;
use crate::broadphase::runner::{BROAD_SIZES, BroadRun};
use crate::broadphase::scenario::BroadScene;
use crate::cli::{Args, Peers, SceneName};
use crate::particles::engines::{Engine, PyPeer};
use crate::particles::runner::{DEFAULT_SIZES, SceneRun};
use crate::points::PointRun;
use crate::scenes::Scene;
use crate::schemes::{SchemeKind, SchemeRun};
use crate::suite::{DEFAULT_SEED, FULL_MAX_SIZE, default_threads, full_sizes, scaling_threads};

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

/// What a run of generated scenes covers.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenePlan {
    /// What the particle suite runs; `None` when it is not run.
    pub run: Option<SceneRun>,
    /// What the scheme suite runs; `None` when it is not run.
    pub schemes: Option<SchemeRun>,
    /// What the broad-phase suite runs; `None` when it is not run.
    pub broad: Option<BroadRun>,
    /// The thread-scaling measurement; `None` when it is not run.
    pub scaling: Option<ScalingPlan>,
    /// Whether this is the `--full` matrix.
    pub full: bool,
    /// Where the result files go; `None` means the default.
    pub out: Option<PathBuf>,
    /// An earlier `results.json` to compare with.
    pub compare: Option<PathBuf>,
    /// JSON lines instead of the tables.
    pub json: bool,
}

/// What the binary was asked to do.
// One command is made per process, so the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Benchmark generated inputs: particle scenes, hashing schemes, the broad phase.
    Scenes(ScenePlan),
    /// The stream suite: chunked lists of uniform clouds up to 1e8 points.
    Stream {
        /// Point counts, ascending.
        sizes: Vec<usize>,
        /// Runs per size below 1e7 points, best taken.
        reps: usize,
        /// Worker threads.
        threads: usize,
        /// Seed of the clouds.
        seed: u64,
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
    /// The neighbour lists of uniform clouds up to 1e8 points, in chunks (not part of `all`).
    Stream,
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
            "stream" => Ok(Suite::Stream),
            _ => Err(format!(
                "unknown suite `{s}` (expected particles, schemes, broadphase, all or stream)"
            )),
        }
    }
}

/// The options after parsing, sorted by the suite they belong to.
struct Selection {
    /// The options as given.
    args: Args,
    /// The particle scenes named by `--scene`, duplicates next to each other removed.
    scenes: Vec<Scene>,
    /// The broad-phase scenes named by `--scene`.
    broad_scenes: Vec<BroadScene>,
    /// The particle engines named by `--engine`, with the Python peers `--peers` adds.
    particle_engines: Vec<Engine>,
    /// The worker threads of the main run.
    threads: usize,
}

impl Selection {
    /// Sorts the options of `args` by suite.
    fn new(args: Args) -> Self {
        let mut scenes = Vec::new();
        let mut broad_scenes = Vec::new();
        for name in &args.scene {
            match *name {
                SceneName::Particle(scene) => scenes.push(scene),
                SceneName::Broad(scene) => broad_scenes.push(scene),
            }
        }
        let mut particle_engines: Vec<Engine> =
            args.engine.iter().filter_map(|n| n.parse().ok()).collect();
        let python_named = particle_engines
            .iter()
            .any(|e| matches!(e, Engine::Python(_)));
        if args.peers == Some(Peers::Python) && !python_named {
            if particle_engines.is_empty() {
                particle_engines.extend(Engine::ALL);
            }
            particle_engines.extend(PyPeer::ALL.map(Engine::Python));
        }
        let threads = args.threads.unwrap_or_else(default_threads);
        Self {
            args,
            scenes,
            broad_scenes,
            particle_engines,
            threads,
        }
    }

    /// Whether any scene of either suite was named.
    fn any_scene_named(&self) -> bool {
        !self.args.scene.is_empty()
    }

    /// The sizes a suite runs: those of `--n` (below `--max-n`), else the `--full` sizes, else
    /// the suite's `defaults` (below `--max-n`).
    fn sizes(&self, defaults: &[usize]) -> Vec<usize> {
        let args = &self.args;
        let mut list = if !args.sizes.is_empty() {
            args.sizes.clone()
        } else if args.full {
            return full_sizes(args.max_n.unwrap_or(FULL_MAX_SIZE));
        } else {
            defaults.to_vec()
        };
        if let Some(max) = args.max_n {
            list.retain(|&n| n <= max);
        }
        list
    }

    /// The base seed of the generated inputs.
    fn seed(&self) -> u64 {
        self.args.seed.unwrap_or(DEFAULT_SEED)
    }
}

/// Turns the parsed options into what they ask for, or says why they do not fit together.
pub fn plan(args: Args) -> Result<Command, String> {
    let selection = Selection::new(args);
    if selection.args.points.is_some() {
        return point_command(selection);
    }
    if selection.args.suite == Some(Suite::Stream) {
        return stream_command(selection);
    }
    scene_command(selection)
}

/// The stream suite (`--suite stream`): `--n` sizes (default 1e5, 1e6, 1e7), `--reps`,
/// `--threads` and `--seed`; nothing else applies.
fn stream_command(selection: Selection) -> Result<Command, String> {
    let args = &selection.args;
    let other = [
        (!args.scene.is_empty(), "--scene"),
        (!args.engine.is_empty(), "--engine"),
        (!args.scheme.is_empty(), "--scheme"),
        (args.peers.is_some(), "--peers"),
        (args.steps.is_some(), "--steps"),
        (args.full, "--full"),
        (args.compare.is_some(), "--compare"),
    ];
    if let Some((_, flag)) = other.iter().find(|(given, _)| *given) {
        return Err(format!("{flag} does not apply to --suite stream"));
    }
    let mut sizes = if args.sizes.is_empty() {
        crate::stream::DEFAULT_SIZES.to_vec()
    } else {
        args.sizes.clone()
    };
    if sizes.contains(&0) {
        return Err("a count of 0 cannot be benchmarked".into());
    }
    sizes.sort_unstable();
    sizes.dedup();
    Ok(Command::Stream {
        sizes,
        reps: args.reps.unwrap_or(3),
        threads: selection.threads,
        seed: args.seed.unwrap_or(DEFAULT_SEED),
    })
}

/// The run on a point file (`--points FILE --radius R`).
fn point_command(selection: Selection) -> Result<Command, String> {
    let Selection {
        args,
        particle_engines,
        threads,
        ..
    } = selection;
    let scene_only = [
        (!args.scene.is_empty(), "--scene"),
        (!args.sizes.is_empty(), "--n"),
        (args.max_n.is_some(), "--max-n"),
        (args.out.is_some(), "--out"),
        (args.suite.is_some(), "--suite"),
        (args.steps.is_some(), "--steps"),
        (args.full, "--full"),
        (args.compare.is_some(), "--compare"),
        (args.scaling_threads.is_some(), "--scaling-threads"),
        (args.no_scaling, "--no-scaling"),
    ];
    if let Some((_, flag)) = scene_only.iter().find(|(given, _)| *given) {
        return Err(format!(
            "{flag} applies to generated scenes, not to --points"
        ));
    }
    let radius = args.radius.ok_or("--points needs --radius R")?;
    if let Some(name) = args.engine.iter().find(|n| n.parse::<Engine>().is_err()) {
        return Err(format!(
            "`{name}` is a broad-phase engine, not one for --points"
        ));
    }
    let mut engines = particle_engines;
    // --scheme alone runs only the schemes, as it runs only the scheme suite on scenes.
    if engines.is_empty() && args.scheme.is_empty() {
        engines = vec![Engine::Hhg, Engine::Kiddo];
    }
    let mut schemes = args.scheme;
    schemes.sort();
    schemes.dedup();
    let mut orders: Vec<_> = args.order.iter().map(|order| order.0).collect();
    if orders.is_empty() {
        orders.push(None);
    }
    orders.sort();
    orders.dedup();
    Ok(Command::Points {
        file: args.points.unwrap_or_default(),
        run: PointRun {
            radius,
            engines,
            schemes,
            orders,
            threads,
            reps: args.reps,
            seed: args.seed.unwrap_or(DEFAULT_SEED),
        },
        json: args.json,
    })
}

/// Checks a suite's selection: a suite that `--suite` named must have an engine, a scene and
/// a size left (an error otherwise); with `--suite all`, a suite without them is skipped.
/// Returns whether the suite runs.
fn suite_runs(explicit: bool, missing: [(bool, &str); 3]) -> Result<bool, String> {
    match missing.iter().find(|(lacking, _)| *lacking) {
        Some((_, message)) if explicit => Err((*message).to_owned()),
        Some(_) => Ok(false),
        None => Ok(true),
    }
}

/// The run of generated scenes: every suite that is selected and has something left to run.
fn scene_command(mut selection: Selection) -> Result<Command, String> {
    let args = &selection.args;
    if args.radius.is_some() {
        return Err("--radius applies to --points only (generated scenes have their own)".into());
    }
    if !args.order.is_empty() {
        return Err(
            "--order applies to --points only (generated scenes run in every order)".into(),
        );
    }
    // --scheme alone asks for the scheme suite.
    let suite = args
        .suite
        .unwrap_or(if !args.scheme.is_empty() && args.engine.is_empty() {
            Suite::Schemes
        } else {
            Suite::All
        });
    if !suite.particles() && !suite.schemes() {
        let particle_only = [
            (!selection.scenes.is_empty(), "--scene"),
            (args.reps.is_some(), "--reps"),
        ];
        if let Some((_, flag)) = particle_only.iter().find(|(given, _)| *given) {
            return Err(format!(
                "{flag} applies to the particle and scheme suites, not to --suite broadphase"
            ));
        }
    }
    if !suite.broadphase() && (args.steps.is_some() || !selection.broad_scenes.is_empty()) {
        let flag = if args.steps.is_some() {
            "--steps"
        } else {
            "--scene"
        };
        return Err(format!(
            "{flag} applies to the broad-phase suite, which is not selected"
        ));
    }
    if !suite.schemes() && !args.scheme.is_empty() {
        return Err("--scheme applies to the scheme suite, which is not selected".into());
    }
    if args.sizes.contains(&0) {
        return Err("a count of 0 cannot be benchmarked".into());
    }
    selection.scenes.dedup();
    selection.broad_scenes.dedup();
    let explicit = |s: Suite| args.suite == Some(s);

    let run = if suite.particles() {
        particle_suite(&selection, explicit(Suite::Particles))?
    } else {
        None
    };
    let schemes = if suite.schemes() {
        scheme_suite(&selection, explicit(Suite::Schemes))?
    } else {
        None
    };
    let broad = if suite.broadphase() {
        broad_suite(&selection, explicit(Suite::Broadphase))?
    } else {
        None
    };
    if run.is_none() && schemes.is_none() && broad.is_none() {
        return Err(
            "nothing left to run (check --suite, --scene, --scheme, --n, --max-n and --engine)"
                .into(),
        );
    }
    let scaling = scaling_plan(&selection, run.as_ref(), broad.as_ref());
    let args = selection.args;
    Ok(Command::Scenes(ScenePlan {
        run,
        schemes,
        broad,
        scaling,
        full: args.full,
        out: args.out,
        compare: args.compare,
        json: args.json,
    }))
}

/// The particle suite of a scene run, if it runs.
fn particle_suite(selection: &Selection, explicit: bool) -> Result<Option<SceneRun>, String> {
    let args = &selection.args;
    let engines = &selection.particle_engines;
    let config = SceneRun {
        scenes: if selection.scenes.is_empty() {
            Scene::ALL.to_vec()
        } else {
            selection.scenes.clone()
        },
        sizes: selection.sizes(&DEFAULT_SIZES),
        engines: if engines.is_empty() && args.full {
            Engine::ALL.to_vec()
        } else if engines.is_empty() {
            Engine::QUICK.to_vec()
        } else {
            engines.clone()
        },
        threads: selection.threads,
        reps: args.reps,
        seed: selection.seed(),
    };
    let runs = suite_runs(
        explicit,
        [
            (
                !args.engine.is_empty() && engines.is_empty(),
                "no particle engine among --engine (hhg, hhg-cellorder, kiddo, rstar, brute, \
                 vesin, freud, scipy, matscipy, hhg-python)",
            ),
            (
                selection.any_scene_named() && selection.scenes.is_empty(),
                "no particle scene among --scene",
            ),
            (
                config.sizes.is_empty(),
                "no point count left to run (check --n and --max-n)",
            ),
        ],
    )?;
    Ok(runs.then_some(config))
}

/// The scheme suite of a scene run, if it runs.
fn scheme_suite(selection: &Selection, explicit: bool) -> Result<Option<SchemeRun>, String> {
    let args = &selection.args;
    let fixed: Vec<Scene> = selection
        .scenes
        .iter()
        .copied()
        .filter(|s| s.is_plain())
        .collect();
    let no_scene = selection.any_scene_named() && fixed.is_empty();
    let config = SchemeRun {
        scenes: if !fixed.is_empty() {
            fixed
        } else if args.full {
            Scene::ALL.into_iter().filter(|s| s.is_plain()).collect()
        } else {
            Scene::SCHEME_DEFAULT.to_vec()
        },
        sizes: selection.sizes(&DEFAULT_SIZES),
        schemes: if args.scheme.is_empty() {
            SchemeKind::ALL.to_vec()
        } else {
            let mut kinds = args.scheme.clone();
            kinds.sort();
            kinds.dedup();
            kinds
        },
        threads: selection.threads,
        reps: args.reps,
        seed: selection.seed(),
    };
    let runs = suite_runs(
        explicit,
        [
            (
                no_scene,
                "no fixed-radius particle scene among --scene for the schemes",
            ),
            (
                config.sizes.is_empty(),
                "no point count left to run (check --n and --max-n)",
            ),
            (false, ""),
        ],
    )?;
    let no_engine = !args.engine.is_empty() && args.scheme.is_empty();
    Ok((runs && !no_engine).then_some(config))
}

/// The broad-phase suite of a scene run, if it runs.
fn broad_suite(selection: &Selection, explicit: bool) -> Result<Option<BroadRun>, String> {
    let args = &selection.args;
    let engines: Vec<BroadEngine> = args.engine.iter().filter_map(|n| n.parse().ok()).collect();
    if let Some(missing) = engines.iter().find(|e| !e.built()) {
        return Err(missing.not_built_message());
    }
    let no_engine = !args.engine.is_empty() && engines.is_empty();
    let config = BroadRun {
        scenes: if selection.broad_scenes.is_empty() {
            BroadScene::ALL.to_vec()
        } else {
            selection.broad_scenes.clone()
        },
        sizes: selection.sizes(&BROAD_SIZES),
        engines: if engines.is_empty() {
            BroadEngine::all_built()
        } else {
            engines
        },
        threads: selection.threads,
        steps: args.steps,
        seed: selection.seed(),
    };
    let runs = suite_runs(
        explicit,
        [
            (
                no_engine,
                "no broad-phase engine among --engine (hhg, sap, parry, brute)",
            ),
            (
                selection.any_scene_named() && selection.broad_scenes.is_empty(),
                "no broad-phase scene among --scene",
            ),
            (
                config.sizes.is_empty(),
                "no box count left to run (check --n and --max-n)",
            ),
        ],
    )?;
    Ok(runs.then_some(config))
}

/// The thread-scaling plan: at the largest size, every scene with `--full`, else the uniform
/// and cuboids scenes (or the first named); `None` with `--no-scaling` or when no other
/// thread count than the main run's is left.
fn scaling_plan(
    selection: &Selection,
    run: Option<&SceneRun>,
    broad: Option<&BroadRun>,
) -> Option<ScalingPlan> {
    let args = &selection.args;
    if args.no_scaling {
        return None;
    }
    let mut counts = args
        .scaling_threads
        .clone()
        .unwrap_or_else(|| scaling_threads(default_threads()));
    counts.sort_unstable();
    counts.dedup();
    let mut plan = ScalingPlan {
        threads: counts,
        ..ScalingPlan::default()
    };
    if let Some(run) = run
        && let Some(&n) = run.sizes.iter().max()
    {
        plan.particles = if args.full {
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
    if let Some(broad) = broad
        && let Some(&n) = broad.sizes.iter().max()
    {
        plan.broad = if args.full {
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
    let other_counts = plan.threads.iter().any(|&t| t != selection.threads);
    let any_case = !plan.particles.is_empty() || !plan.broad.is_empty();
    (other_counts && any_case).then_some(plan)
}

#[cfg(test)]
mod tests;
