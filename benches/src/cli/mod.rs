//! The command line of the `hhg-bench` binary: the options ([`Args`], parsed by clap, which
//! also writes `--help`) and what they ask for ([`Command`], made by [`plan`]).

pub mod plan;

use std::path::PathBuf;

use clap::Parser;

pub use plan::{Command, ScalingPlan, ScenePlan, Suite};

use crate::broadphase::engines::BroadEngine;
use crate::broadphase::scenario::BroadScene;
use crate::particles::engines::Engine;
use crate::particles::record::Order;
use crate::scenes::Scene;
use crate::schemes::SchemeKind;

/// The environment variable that overrides the default output directory.
pub const OUT_DIR_VAR: &str = "HHG_BENCH_OUT_DIR";

/// The default output directory, relative to the working directory.
pub const DEFAULT_OUT_DIR: &str = "target/bench";

/// What `hhg-bench --help` says before the options.
const ABOUT: &str = "\
hhg-bench: compare hhg with its peers: fixed-radius neighbour lists (kiddo, rstar, brute force,
Python peers), hashing schemes (core, xor, pouchol, group) and the broad phase of moving boxes
(sort-and-sweep, parry3d's BVH, brute force)";

/// What `hhg-bench --help` says about the two ways to run it.
const LONG_ABOUT: &str = "\
hhg-bench: compare hhg with its peers: fixed-radius neighbour lists (kiddo, rstar, brute force,
Python peers), hashing schemes (core, xor, pouchol, group) and the broad phase of moving boxes
(sort-and-sweep, parry3d's BVH, brute force)

hhg-bench [OPTIONS]
    Runs the particle, scheme and broad-phase suites (--suite picks one), shows a progress
    bar, prints a table per suite and a summary, and writes results.json, report.md and
    SVG plots to <out>/<timestamp>/ (results.json and report.md also to <out>/).

    The quick default (under a minute on two cores) runs the particle scenes at 10k and
    100k points with hhg, hhg-cellorder, kiddo and brute force (rstar with --full or
    --engine rstar), the schemes on uniform, dambreak and clustered, the broad-phase
    scenes at 1k, 10k and 100k boxes (parry when built: see `cargo xtask help`), and
    thread scaling on the uniform and cuboids scenes at the largest size. --full runs every
    engine and every scene at the powers of ten from 1k to --max-n (default 1M) and thread
    scaling on every scene at the largest size.

    particles: uniform (~40 neighbours), dambreak (SPH block), clustered (50 Gaussian
    clusters), sheet (1024:1 slab), outlier (uniform plus one far point), periodic (uniform
    in a box periodic on all axes, minimum-image pairs with their shifts: hhg, brute force
    and the Python peers only), variable (radii over 8x, rule max(ri, rj)), variable100
    (radii over 100x), sph (a frame of hhg-sph's dam break, fluid and walls, after 25 solver
    steps, radius the kernel support, about the requested count). Every engine runs on the shuffled points (`<scene>-random`);
    all but brute force also on hhg's cell order (`<scene>-sorted`), on the cell order with
    every point then moved by a seeded uniform offset of up to 0.1 r per axis
    (`<scene>-drift`, other points, so other pairs), the same with offsets of up to 0.005 r
    (`<scene>-step`, about one solver step after a reorder), on the points sorted by the Morton code
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
    line per engine, plus the tables unless --json is given.";

/// What `hhg-bench --help` says after the options.
const AFTER_HELP: &str = "\
Exit status: 0 when all engines agree, 1 when they disagree or a run fails, 2 on a usage error.
Run it through `cargo xtask bench` for a native-CPU release build whose flags the report records.";

/// The options of `hhg-bench`, as given; [`plan`] checks how they combine.
///
/// List options take comma-separated values and may be repeated; an option given twice with a
/// single value keeps the last, as before clap parsed the command line.
#[derive(Clone, Debug, Default, Parser)]
#[command(
    name = "hhg-bench",
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
    args_override_self = true
)]
pub struct Args {
    /// particles, schemes, broadphase or all (default: all).
    #[arg(long, value_name = "NAME")]
    pub suite: Option<Suite>,
    /// The full matrix: every scene, sizes 1k, 10k, ... up to --max-n, thread scaling on
    /// every scene.
    #[arg(long)]
    pub full: bool,
    /// Only this scene, of either suite (uniform, dambreak, clustered, sheet, outlier,
    /// periodic, variable, variable100, sph, uniform2d, dambreak2d, variable2d,
    /// variable100-2d; cuboids, long, static, huge, cuboids2d, static2d); repeatable.
    ///
    /// A suite none of whose scenes is named is skipped. The 2-D scenes (in the plane, where
    /// hhg and kiddo search in 2-D and hhg and parry run their 2-D broad phases) run only
    /// when named.
    #[arg(long, value_name = "NAME", value_delimiter = ',', value_parser = parse_scene)]
    pub scene: Vec<SceneName>,
    /// Only this hashing scheme (core, xor, pouchol, group); repeatable.
    ///
    /// Without --suite or --engine, runs the scheme suite alone. With --points, runs the
    /// schemes on the file's points (in every --order).
    #[arg(long, value_name = "NAME", value_delimiter = ',', value_parser = parse_trimmed::<SchemeKind>)]
    pub scheme: Vec<SchemeKind>,
    /// Only this point or box count (e.g. 20000, 50k, 1M); repeatable.
    #[arg(long = "n", value_name = "N", value_delimiter = ',', value_parser = parse_count_trimmed)]
    pub sizes: Vec<usize>,
    /// Skip counts above N; with --full, the largest size (default 1M).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub max_n: Option<usize>,
    /// Only this engine; repeatable.
    ///
    /// Particles: hhg, hhg-cellorder, kiddo, rstar, brute, vesin, freud, scipy, matscipy,
    /// hhg-python;
    /// broad phase: hhg, sap, parry, brute. With --suite all, a suite none of whose engines
    /// is named is skipped.
    #[arg(long, value_name = "NAME", value_delimiter = ',', value_parser = parse_engine)]
    pub engine: Vec<String>,
    /// Add the Python peers (vesin, freud, scipy, matscipy, hhg-python) to the particle suite.
    ///
    /// Skipped with a message when Python or a package is missing (pip install vesin
    /// freud-analysis scipy matscipy; pip install ./crates/hhg-py for hhg-python).
    #[arg(long, value_name = "python", value_parser = parse_peers)]
    pub peers: Option<Peers>,
    /// Worker threads in the rayon pool (default: all logical CPUs).
    #[arg(long, value_name = "T", value_parser = positive)]
    pub threads: Option<usize>,
    /// Thread counts of the scaling measurement (default: 1, 2, 4, ... and all logical
    /// CPUs).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = positive)]
    pub scaling_threads: Option<Vec<usize>>,
    /// Skip the thread-scaling measurement.
    #[arg(long)]
    pub no_scaling: bool,
    /// Particle and scheme suites: runs per measurement, best taken (default: 3 up to 100k
    /// points, 2 above).
    #[arg(long, value_name = "K", value_parser = positive)]
    pub reps: Option<usize>,
    /// Broad-phase suite: measured steps per run, after one warm-up step (default: 5 up to
    /// 100k boxes, 3 above).
    #[arg(long, value_name = "K", value_parser = positive)]
    pub steps: Option<usize>,
    /// Base seed of the generated inputs (default: 0x5eed000000000001); with --points, the
    /// seed of the random order's shuffle and the drift.
    #[arg(long, value_name = "S", value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Where the result files go (default: $HHG_BENCH_OUT_DIR, else target/bench).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also compare with an earlier results.json: a table of time ratios.
    #[arg(long, value_name = "FILE")]
    pub compare: Option<PathBuf>,
    /// Benchmark the points in FILE instead of generated scenes.
    #[arg(long, value_name = "FILE")]
    pub points: Option<PathBuf>,
    /// Search radius for --points.
    #[arg(long, value_name = "R", value_parser = parse_radius)]
    pub radius: Option<f32>,
    /// With --points: the orders the points run in.
    ///
    /// Any of random (a seeded shuffle), cell (hhg's cell order; case suffix -sorted),
    /// drift, step, zorder and file (as the file has them; the default), comma-separated or
    /// repeated; measured file first, then random, cell, drift, step, zorder. The Python peers run
    /// on the file's order only.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_order)]
    pub order: Vec<PointOrder>,
    /// Print JSON lines instead of the tables.
    #[arg(long)]
    pub json: bool,
}

/// A scene named by `--scene`: one of the particle suite or one of the broad phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneName {
    /// A particle scene (also run by the scheme suite when it has one radius).
    Particle(Scene),
    /// A broad-phase scene.
    Broad(BroadScene),
}

/// The peers that `--peers` adds; Python's are the only ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peers {
    /// vesin, freud, scipy, matscipy and hhg-python, run by `benches/python/peers.py`.
    Python,
}

/// An order of `--order`: `None` is the file's own order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointOrder(pub Option<Order>);

/// Parses a value of a list option after trimming the spaces around it.
fn parse_trimmed<T: std::str::FromStr<Err = String>>(s: &str) -> Result<T, String> {
    s.trim().parse()
}

/// Parses a scene name of either suite.
fn parse_scene(s: &str) -> Result<SceneName, String> {
    let name = s.trim();
    if let Ok(scene) = name.parse::<Scene>() {
        Ok(SceneName::Particle(scene))
    } else if let Ok(scene) = name.parse::<BroadScene>() {
        Ok(SceneName::Broad(scene))
    } else {
        Err(format!(
            "unknown scene `{name}` (expected uniform, dambreak, clustered, sheet, outlier, \
             periodic, variable, variable100, sph, uniform2d, dambreak2d, variable2d, \
             variable100-2d, cuboids, long, static, huge, cuboids2d or static2d)"
        ))
    }
}

/// Checks an engine name of either suite; which suites it selects is decided by [`plan`].
fn parse_engine(s: &str) -> Result<String, String> {
    let name = s.trim();
    if name.parse::<Engine>().is_err() && name.parse::<BroadEngine>().is_err() {
        return Err(format!(
            "unknown engine `{name}` (expected hhg, hhg-cellorder, kiddo, rstar, sap, parry, \
             brute, vesin, freud, scipy, matscipy or hhg-python)"
        ));
    }
    Ok(name.to_owned())
}

/// Parses the value of `--peers`.
fn parse_peers(s: &str) -> Result<Peers, String> {
    match s {
        "python" => Ok(Peers::Python),
        other => Err(format!("unknown peers `{other}` (expected python)")),
    }
}

/// Parses an order of `--order`: `file`, or one of [`Order`]'s names.
fn parse_order(s: &str) -> Result<PointOrder, String> {
    match s.trim() {
        "file" => Ok(PointOrder(None)),
        other => other.parse().map(|order| PointOrder(Some(order))),
    }
}

/// Parses a positive integer option value.
fn positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(k) if k > 0 => Ok(k),
        _ => Err(format!("needs a positive integer, got `{s}`")),
    }
}

/// Parses the search radius: a finite number above 0.
fn parse_radius(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!("--radius needs a finite number > 0, got `{s}`")),
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

/// Parses a point count of a list, after trimming the spaces around it.
fn parse_count_trimmed(s: &str) -> Result<usize, String> {
    parse_count(s.trim())
}

/// Parses a seed in decimal or `0x` hexadecimal.
fn parse_seed(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("`{s}` is not a seed (decimal or 0x hex)"))
}

/// Parses the arguments after the program name into what they ask for.
///
/// A usage error is returned as clap's error, whose exit code is 2 (0 for `--help`); a
/// combination of options that makes no sense is one too.
pub fn parse<I>(args: I) -> Result<Command, clap::Error>
where
    I: IntoIterator<Item = String>,
{
    let args = Args::try_parse_from(std::iter::once("hhg-bench".to_owned()).chain(args))?;
    plan::plan(args).map_err(|message| {
        let mut command = <Args as clap::CommandFactory>::command();
        command.error(clap::error::ErrorKind::ArgumentConflict, message)
    })
}
