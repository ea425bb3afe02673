//! Command-line parsing for the `hhg-bench` binary.

use std::path::PathBuf;

use crate::broadphase::engines::BroadEngine;
use crate::broadphase::runner::{BROAD_SIZES, BroadRun};
use crate::engines::Engine;
use crate::runner::{DEFAULT_SEED, DEFAULT_SIZES, DEFAULT_THREADS, SceneRun};
use crate::scenes::Scene;

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
hhg-bench: compare hhg with its peers: fixed-radius neighbour lists (kiddo, brute force) and the
broad phase of moving boxes (sort-and-sweep, parry3d's BVH, brute force)

USAGE:
    hhg-bench [OPTIONS]
        Runs the particle suite and the broad-phase suite (--suite picks one), prints a table
        per suite and writes <out>/results.json and <out>/report.md.

        particles: generated scenes (uniform, dambreak, clustered; r = 1) at 10k, 100k and 1M
        points. Every engine runs on the shuffled points (case `<scene>-random`); hhg and kiddo
        also run on the points in hhg's cell order (`<scene>-sorted`). Brute force runs up to
        20000 points.

        broadphase: the moving cuboids of Schornbaum's thesis (edges 1 to 12, about 2
        overlapping pairs per box, periodic motion) at 1k, 10k, 100k and 1M boxes. hhg, sap
        (sort and sweep), parry (parry3d's BVH) and brute force (up to 20000 boxes) each time
        their setup, then one warm-up step and the measured steps (update, then detection of
        all pairs); the table shows medians.

    hhg-bench --points FILE --radius R [OPTIONS]
        Raw little-endian f32 x, y, z triples (12 bytes per point) from FILE; the case is the
        file stem. Runs hhg and kiddo unless --engine says otherwise, and prints one JSON line
        per engine, plus the table unless --json is given.

OPTIONS:
    --suite NAME      particles, broadphase or all (default: all).
    --scene NAME      Only this particle scene (uniform, dambreak, clustered); repeatable.
    --n N             Only this point or box count (e.g. 20000, 50k, 1M); repeatable.
    --max-n N         Skip counts above N (default: no limit, i.e. up to 1M).
    --engine NAME     Only this engine; repeatable. Particles: hhg, kiddo, brute; broad phase:
                      hhg, sap, parry, brute. With --suite all, a suite none of whose engines
                      is named is skipped.
    --threads T       Worker threads in the rayon pool (default: 2).
    --reps K          Particle suite: runs per measurement, best taken (default: 3 up to 100k
                      points, 2 above).
    --steps K         Broad-phase suite: measured steps per run, after one warm-up step
                      (default: 5 up to 100k boxes, 3 above).
    --seed S          Base seed of the generated inputs (default: 0x5eed000000000001).
    --out DIR         Where results.json and report.md go (default: $HHG_BENCH_OUT_DIR,
                      else target/bench).
    --points FILE     Benchmark the points in FILE instead of generated scenes.
    --radius R        Search radius for --points.
    --json            Print JSON lines instead of the tables.
    -h, --help        Print this help.

Exit status: 0 when all engines agree, 1 when they disagree or a run fails, 2 on a usage error.
Run it through `cargo xtask bench` for a native-CPU release build whose flags the report records.
";

/// The environment variable that overrides the default output directory.
pub const OUT_DIR_VAR: &str = "HHG_BENCH_OUT_DIR";

/// The default output directory, relative to the working directory.
pub const DEFAULT_OUT_DIR: &str = "target/bench";

/// What the binary was asked to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Print the usage.
    Help,
    /// Benchmark generated inputs: particle scenes, the broad-phase scenario, or both.
    Scenes {
        /// What the particle suite runs; `None` when it is not run.
        run: Option<SceneRun>,
        /// What the broad-phase suite runs; `None` when it is not run.
        broad: Option<BroadRun>,
        /// Where the result files go; `None` means the default.
        out: Option<PathBuf>,
        /// JSON lines instead of the table.
        json: bool,
    },
    /// Benchmark a point file.
    Points {
        /// The point file.
        file: PathBuf,
        /// The search radius.
        radius: f32,
        /// Engines to run.
        engines: Vec<Engine>,
        /// Worker threads.
        threads: usize,
        /// Runs per measurement; `None` means the default for the size.
        reps: Option<usize>,
        /// JSON lines only, no table.
        json: bool,
    },
}

/// Which benchmark suites a run covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// Fixed-radius neighbour lists on particle scenes.
    Particles,
    /// All overlapping pairs of moving boxes.
    Broadphase,
    /// Both.
    All,
}

impl Suite {
    /// Whether the particle suite is included.
    pub fn particles(self) -> bool {
        self != Suite::Broadphase
    }

    /// Whether the broad-phase suite is included.
    pub fn broadphase(self) -> bool {
        self != Suite::Particles
    }
}

impl std::str::FromStr for Suite {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "particles" => Ok(Suite::Particles),
            "broadphase" => Ok(Suite::Broadphase),
            "all" => Ok(Suite::All),
            _ => Err(format!(
                "unknown suite `{s}` (expected particles, broadphase or all)"
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
    let mut sizes: Vec<usize> = Vec::new();
    let mut max_n: Option<usize> = None;
    let mut engine_names: Vec<String> = Vec::new();
    let mut suite: Option<Suite> = None;
    let mut threads = DEFAULT_THREADS;
    let mut reps: Option<usize> = None;
    let mut steps: Option<usize> = None;
    let mut seed: Option<u64> = None;
    let mut out: Option<PathBuf> = None;
    let mut points: Option<PathBuf> = None;
    let mut radius: Option<f32> = None;
    let mut json = false;

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
            "--scene" => {
                for name in value("--scene")?.split(',') {
                    scenes.push(name.trim().parse()?);
                }
            }
            "--engine" => {
                for name in value("--engine")?.split(',') {
                    let name = name.trim();
                    if name.parse::<Engine>().is_err() && name.parse::<BroadEngine>().is_err() {
                        return Err(format!(
                            "unknown engine `{name}` (expected hhg, kiddo, sap, parry or brute)"
                        ));
                    }
                    engine_names.push(name.to_owned());
                }
            }
            "--suite" => suite = Some(value("--suite")?.parse()?),
            "--n" => {
                for count in value("--n")?.split(',') {
                    sizes.push(parse_count(count.trim())?);
                }
            }
            "--max-n" => max_n = Some(parse_count(&value("--max-n")?)?),
            "--threads" => threads = positive("--threads", &value("--threads")?)?,
            "--reps" => reps = Some(positive("--reps", &value("--reps")?)?),
            "--steps" => steps = Some(positive("--steps", &value("--steps")?)?),
            "--seed" => seed = Some(parse_seed(&value("--seed")?)?),
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--points" => points = Some(PathBuf::from(value("--points")?)),
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

    if let Some(file) = points {
        let scene_only = [
            (!scenes.is_empty(), "--scene"),
            (!sizes.is_empty(), "--n"),
            (max_n.is_some(), "--max-n"),
            (seed.is_some(), "--seed"),
            (out.is_some(), "--out"),
            (suite.is_some(), "--suite"),
            (steps.is_some(), "--steps"),
        ];
        if let Some((_, flag)) = scene_only.iter().find(|(given, _)| *given) {
            return Err(format!(
                "{flag} applies to generated scenes, not to --points"
            ));
        }
        let radius = radius.ok_or("--points needs --radius R")?;
        let mut engines = engine_names
            .iter()
            .map(|name| name.parse::<Engine>())
            .collect::<Result<Vec<Engine>, String>>()?;
        if engines.is_empty() {
            engines = vec![Engine::Hhg, Engine::Kiddo];
        }
        return Ok(Command::Points {
            file,
            radius,
            engines,
            threads,
            reps,
            json,
        });
    }
    if radius.is_some() {
        return Err("--radius applies to --points only (generated scenes use r = 1)".into());
    }

    let suite_given = suite.is_some();
    let suite = suite.unwrap_or(Suite::All);
    if !suite.particles() {
        let particle_only = [(!scenes.is_empty(), "--scene"), (reps.is_some(), "--reps")];
        if let Some((_, flag)) = particle_only.iter().find(|(given, _)| *given) {
            return Err(format!(
                "{flag} applies to the particle suite, not to --suite broadphase"
            ));
        }
    }
    if !suite.broadphase() && steps.is_some() {
        return Err("--steps applies to the broad-phase suite, not to --suite particles".into());
    }
    if sizes.contains(&0) {
        return Err("a count of 0 cannot be benchmarked".into());
    }
    let pick_sizes = |defaults: &[usize]| -> Vec<usize> {
        let mut list = if sizes.is_empty() {
            defaults.to_vec()
        } else {
            sizes.clone()
        };
        if let Some(max) = max_n {
            list.retain(|&n| n <= max);
        }
        list
    };
    let seed = seed.unwrap_or(DEFAULT_SEED);

    // A suite runs when it was asked for and has a count and an engine left; with `--suite all`
    // a suite that filters leave empty is skipped, an explicitly chosen one is an error.
    let mut run = None;
    if suite.particles() {
        let engines: Vec<Engine> = engine_names.iter().filter_map(|n| n.parse().ok()).collect();
        let no_engine = !engine_names.is_empty() && engines.is_empty();
        let mut config = SceneRun {
            threads,
            reps,
            seed,
            sizes: pick_sizes(&DEFAULT_SIZES),
            ..SceneRun::default()
        };
        if !scenes.is_empty() {
            scenes.dedup();
            config.scenes = scenes;
        }
        if !engines.is_empty() {
            config.engines = engines;
        }
        if suite_given && suite == Suite::Particles {
            if no_engine {
                return Err("no particle engine among --engine (hhg, kiddo, brute)".into());
            }
            if config.sizes.is_empty() {
                return Err("no point count left to run (check --n and --max-n)".into());
            }
        }
        if !no_engine && !config.sizes.is_empty() {
            run = Some(config);
        }
    }
    let mut broad = None;
    if suite.broadphase() {
        let engines: Vec<BroadEngine> =
            engine_names.iter().filter_map(|n| n.parse().ok()).collect();
        let no_engine = !engine_names.is_empty() && engines.is_empty();
        let config = BroadRun {
            sizes: pick_sizes(&BROAD_SIZES),
            engines: if engines.is_empty() {
                BroadEngine::ALL.to_vec()
            } else {
                engines
            },
            threads,
            steps,
            seed,
        };
        if suite_given && suite == Suite::Broadphase {
            if no_engine {
                return Err("no broad-phase engine among --engine (hhg, sap, parry, brute)".into());
            }
            if config.sizes.is_empty() {
                return Err("no box count left to run (check --n and --max-n)".into());
            }
        }
        if !no_engine && !config.sizes.is_empty() {
            broad = Some(config);
        }
    }
    if run.is_none() && broad.is_none() {
        return Err("nothing left to run (check --suite, --n, --max-n and --engine)".into());
    }
    Ok(Command::Scenes {
        run,
        broad,
        out,
        json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Command, String> {
        parse(s.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn defaults_run_everything() {
        let Command::Scenes {
            run,
            broad,
            out,
            json,
        } = parse_str("").unwrap()
        else {
            panic!("expected scenes");
        };
        let run = run.expect("the particle suite runs by default");
        assert_eq!(run, SceneRun::default());
        assert_eq!(broad, Some(BroadRun::default()));
        assert_eq!(broad.unwrap().sizes, [1_000, 10_000, 100_000, 1_000_000]);
        assert_eq!(run.threads, 2);
        assert_eq!(out, None);
        assert!(!json);
    }

    #[test]
    fn filters_and_limits() {
        let Command::Scenes {
            run: Some(run),
            broad: Some(broad),
            out,
            ..
        } = parse_str(
            "--max-n 100000 --scene dambreak --scene=uniform --engine hhg,kiddo --threads 1 --reps 5 --seed 0x10 --out x",
        )
        .unwrap() else {
            panic!("expected both suites");
        };
        assert_eq!(broad.sizes, [1_000, 10_000, 100_000]);
        assert_eq!(broad.engines, [BroadEngine::Hhg]);
        assert_eq!((broad.threads, broad.steps, broad.seed), (1, None, 16));
        assert_eq!(run.sizes, [10_000, 100_000]);
        assert_eq!(run.scenes, [Scene::Dambreak, Scene::Uniform]);
        assert_eq!(run.engines, [Engine::Hhg, Engine::Kiddo]);
        assert_eq!((run.threads, run.reps, run.seed), (1, Some(5), 16));
        assert_eq!(out, Some(PathBuf::from("x")));

        let Command::Scenes {
            run: Some(run),
            broad: Some(broad),
            ..
        } = parse_str("--n 3k --n 1_500").unwrap()
        else {
            panic!("expected both suites");
        };
        assert_eq!(run.sizes, [3000, 1500]);
        assert_eq!(broad.sizes, [3000, 1500]);
        assert!(parse_str("--suite particles --max-n 5000").is_err());
        assert!(parse_str("--n 0").is_err());
    }

    #[test]
    fn suites_and_their_filters() {
        // Only the broad-phase suite has a count below 10k by default.
        let Command::Scenes { run, broad, .. } = parse_str("--max-n 5000").unwrap() else {
            panic!("expected scenes");
        };
        assert_eq!(run, None);
        assert_eq!(broad.unwrap().sizes, [1_000]);

        let Command::Scenes {
            run,
            broad: Some(broad),
            ..
        } = parse_str("--suite broadphase --max-n 100000 --steps 4 --engine sap,parry").unwrap()
        else {
            panic!("expected the broad-phase suite");
        };
        assert_eq!(run, None);
        assert_eq!(broad.sizes, [1_000, 10_000, 100_000]);
        assert_eq!(broad.steps, Some(4));
        assert_eq!(broad.engines, [BroadEngine::Sap, BroadEngine::Parry]);

        let Command::Scenes {
            run: Some(run),
            broad,
            ..
        } = parse_str("--suite=particles").unwrap()
        else {
            panic!("expected the particle suite");
        };
        assert_eq!((run, broad), (SceneRun::default(), None));

        // With both suites, an engine of one suite only skips the other suite.
        let Command::Scenes { run, broad, .. } = parse_str("--engine kiddo").unwrap() else {
            panic!("expected scenes");
        };
        assert_eq!(run.unwrap().engines, [Engine::Kiddo]);
        assert_eq!(broad, None);
        let Command::Scenes { run, broad, .. } = parse_str("--engine parry").unwrap() else {
            panic!("expected scenes");
        };
        assert_eq!(
            (run, broad.unwrap().engines),
            (None, vec![BroadEngine::Parry])
        );

        assert!(parse_str("--suite broadphase --engine kiddo").is_err());
        assert!(parse_str("--suite particles --engine sap").is_err());
        assert!(parse_str("--suite broadphase --scene uniform").is_err());
        assert!(parse_str("--suite broadphase --reps 2").is_err());
        assert!(parse_str("--suite particles --steps 2").is_err());
        assert!(parse_str("--suite everything").is_err());
        assert!(parse_str("--steps 0").is_err());
        assert!(parse_str("--points a.f32 --radius 1 --suite particles").is_err());
        assert!(parse_str("--points a.f32 --radius 1 --engine sap").is_err());
    }

    #[test]
    fn point_files() {
        let Command::Points {
            file,
            radius,
            engines,
            threads,
            json,
            ..
        } = parse_str("--points a/b.f32 --radius 0.5 --json").unwrap()
        else {
            panic!("expected points");
        };
        assert_eq!(file, PathBuf::from("a/b.f32"));
        assert_eq!((radius, threads, json), (0.5, 2, true));
        assert_eq!(engines, [Engine::Hhg, Engine::Kiddo]);
        assert!(parse_str("--points a.f32").is_err());
        assert!(parse_str("--points a.f32 --radius 1 --scene uniform").is_err());
        assert!(parse_str("--radius 1").is_err());
        assert!(parse_str("--points a.f32 --radius -1").is_err());
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert_eq!(parse_str("--help").unwrap(), Command::Help);
        assert!(parse_str("--frobnicate").is_err());
        assert!(parse_str("--scene cube").is_err());
        assert!(parse_str("--engine octree").is_err());
        assert!(parse_str("--threads 0").is_err());
        assert!(parse_str("--threads").is_err());
        assert!(parse_count("12x").is_err());
        assert_eq!(parse_count("1M"), Ok(1_000_000));
    }
}
