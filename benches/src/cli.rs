//! Command-line parsing for the `hhg-bench` binary.

use std::path::PathBuf;

use crate::engines::Engine;
use crate::runner::{DEFAULT_SEED, DEFAULT_SIZES, DEFAULT_THREADS, SceneRun};
use crate::scenes::Scene;

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
hhg-bench: compare hhg's fixed-radius neighbour lists with kiddo and brute force

USAGE:
    hhg-bench [OPTIONS]
        Generated scenes (uniform, dambreak, clustered; r = 1) at 10k, 100k and 1M points.
        Every engine runs on the shuffled points (case `<scene>-random`); hhg and kiddo also run
        on the points in hhg's cell order (`<scene>-sorted`). Brute force runs up to 20000
        points. Prints a table and writes <out>/results.json and <out>/report.md.

    hhg-bench --points FILE --radius R [OPTIONS]
        Raw little-endian f32 x, y, z triples (12 bytes per point) from FILE; the case is the
        file stem. Runs hhg and kiddo unless --engine says otherwise, and prints one JSON line
        per engine, plus the table unless --json is given.

OPTIONS:
    --scene NAME      Only this scene (uniform, dambreak, clustered); repeatable.
    --n N             Only this point count (e.g. 20000, 50k, 1M); repeatable.
    --max-n N         Skip point counts above N (default: no limit, i.e. up to 1M).
    --engine NAME     Only this engine (hhg, kiddo, brute); repeatable.
    --threads T       Worker threads in the rayon pool (default: 2).
    --reps K          Runs per measurement, best taken (default: 3 up to 100k points, 2 above).
    --seed S          Base seed of the generated scenes (default: 0x5eed000000000001).
    --out DIR         Where results.json and report.md go (default: $HHG_BENCH_OUT_DIR,
                      else target/bench).
    --points FILE     Benchmark the points in FILE instead of generated scenes.
    --radius R        Search radius for --points.
    --json            Print JSON lines instead of the table.
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
    /// Benchmark generated scenes.
    Scenes {
        /// What to run.
        run: SceneRun,
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
    let mut engines: Vec<Engine> = Vec::new();
    let mut threads = DEFAULT_THREADS;
    let mut reps: Option<usize> = None;
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
                    engines.push(name.trim().parse()?);
                }
            }
            "--n" => {
                for count in value("--n")?.split(',') {
                    sizes.push(parse_count(count.trim())?);
                }
            }
            "--max-n" => max_n = Some(parse_count(&value("--max-n")?)?),
            "--threads" => {
                let v = value("--threads")?;
                threads = match v.parse::<usize>() {
                    Ok(t) if t > 0 => t,
                    _ => return Err(format!("--threads needs a positive integer, got `{v}`")),
                };
            }
            "--reps" => {
                let v = value("--reps")?;
                reps = match v.parse::<usize>() {
                    Ok(k) if k > 0 => Some(k),
                    _ => return Err(format!("--reps needs a positive integer, got `{v}`")),
                };
            }
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
        ];
        if let Some((_, flag)) = scene_only.iter().find(|(given, _)| *given) {
            return Err(format!(
                "{flag} applies to generated scenes, not to --points"
            ));
        }
        let radius = radius.ok_or("--points needs --radius R")?;
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

    let mut run = SceneRun {
        threads,
        reps,
        seed: seed.unwrap_or(DEFAULT_SEED),
        ..SceneRun::default()
    };
    if !scenes.is_empty() {
        scenes.dedup();
        run.scenes = scenes;
    }
    if !engines.is_empty() {
        run.engines = engines;
    }
    run.sizes = if sizes.is_empty() {
        DEFAULT_SIZES.to_vec()
    } else {
        sizes
    };
    if let Some(max) = max_n {
        run.sizes.retain(|&n| n <= max);
    }
    if run.sizes.is_empty() || run.sizes.contains(&0) {
        return Err("no point count left to run (check --n and --max-n)".into());
    }
    Ok(Command::Scenes { run, out, json })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Command, String> {
        parse(s.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn defaults_run_everything() {
        let Command::Scenes { run, out, json } = parse_str("").unwrap() else {
            panic!("expected scenes");
        };
        assert_eq!(run, SceneRun::default());
        assert_eq!(run.threads, 2);
        assert_eq!(out, None);
        assert!(!json);
    }

    #[test]
    fn filters_and_limits() {
        let Command::Scenes { run, out, .. } = parse_str(
            "--max-n 100000 --scene dambreak --scene=uniform --engine hhg,kiddo --threads 1 --reps 5 --seed 0x10 --out x",
        )
        .unwrap() else {
            panic!("expected scenes");
        };
        assert_eq!(run.sizes, [10_000, 100_000]);
        assert_eq!(run.scenes, [Scene::Dambreak, Scene::Uniform]);
        assert_eq!(run.engines, [Engine::Hhg, Engine::Kiddo]);
        assert_eq!((run.threads, run.reps, run.seed), (1, Some(5), 16));
        assert_eq!(out, Some(PathBuf::from("x")));

        let Command::Scenes { run, .. } = parse_str("--n 3k --n 1_500").unwrap() else {
            panic!("expected scenes");
        };
        assert_eq!(run.sizes, [3000, 1500]);
        assert!(parse_str("--max-n 5000").is_err());
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
