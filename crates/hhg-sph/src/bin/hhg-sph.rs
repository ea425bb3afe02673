//! The `hhg-sph` binary: runs the dam break, prints what the neighbour search costs per
//! step, and writes legacy VTK frames; with the `mpi` feature and `--distributed`, runs it
//! on the ranks of `mpirun` and prints what the halo and the migration moved per step.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use hhg_core::ListOrder;
use hhg_sph::{DamBreak, Dim, Dimension, Simulation, StepReport};

const USAGE: &str = "\
hhg-sph: a weakly compressible SPH dam break on hhg's neighbour search

usage: hhg-sph [options]
  --dim D            3 (default) or 2: the 2-D dam break is the x-z section of the 3-D one
  --particles N      approximate number of fluid particles (default 20000)
  --steps K          number of time steps (default 200)
  --threads T        worker threads (default: one per core)
  --frames-every K   write a VTK frame every K steps, 0 for none (default 0)
  --print-every K    print a line every K steps (default 10)
  --reorder-every K  permute the particles into cell order every K steps (default 10)
  --list-order O     ascending (default) or cell: the order of each neighbour list
  --out DIR          directory of the frames (default target/sph)
  --distributed      run under mpirun on its ranks (needs the `mpi` feature); rank 0 prints
                     the halo and migration volumes per step (no frames, no reordering;
                     3-D only)
  --help             print this text";

/// The command line.
#[derive(Debug)]
struct Options {
    dimension: usize,
    particles: usize,
    steps: usize,
    threads: usize,
    frames_every: usize,
    print_every: usize,
    reorder_every: usize,
    list_order: ListOrder,
    out: PathBuf,
    distributed: bool,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        dimension: 3,
        particles: 20_000,
        steps: 200,
        threads: 0,
        frames_every: 0,
        print_every: 10,
        reorder_every: DamBreak::default().reorder_every,
        list_order: ListOrder::Ascending,
        out: PathBuf::from("target/sph"),
        distributed: false,
    };
    let mut args = args.peekable();
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(None);
        }
        if flag == "--distributed" {
            options.distributed = true;
            continue;
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<usize>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--dim" => {
                options.dimension = match value.as_str() {
                    "2" => 2,
                    "3" => 3,
                    _ => return Err(format!("--dim {value}: 2 or 3")),
                }
            }
            "--particles" => options.particles = number()?,
            "--steps" => options.steps = number()?,
            "--threads" => options.threads = number()?,
            "--frames-every" => options.frames_every = number()?,
            "--print-every" => options.print_every = number()?,
            "--reorder-every" => options.reorder_every = number()?,
            "--list-order" => {
                options.list_order = match value.as_str() {
                    "ascending" => ListOrder::Ascending,
                    "cell" => ListOrder::CellOrder,
                    _ => return Err(format!("--list-order {value}: ascending or cell")),
                }
            }
            "--out" => options.out = PathBuf::from(&value),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if options.distributed && options.dimension != 3 {
        return Err("--distributed runs the 3-D dam break only: drop --dim 2".to_owned());
    }
    Ok(Some(options))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The error of a run.
type RunError = Box<dyn std::error::Error + Send + Sync>;

/// Runs the dam break in the dimension of the options.
fn run(options: &Options) -> Result<(), RunError> {
    match options.dimension {
        2 => run_in::<2>(options),
        _ => run_in::<3>(options),
    }
}

/// Runs the dam break in `D` dimensions.
fn run_in<const D: usize>(options: &Options) -> Result<(), RunError>
where
    Dim<D>: Dimension<D>,
{
    let config = DamBreak {
        particles: options.particles,
        reorder_every: options.reorder_every,
        list_order: options.list_order,
        ..DamBreak::default()
    };
    let setup = Instant::now();
    let mut sim = Simulation::<D>::with_config(config)?;
    println!(
        "{D}-D dam break: {} fluid + {} boundary particles, spacing {:.4} m, h {:.4} m, \
         {} threads, set-up {:.1} ms",
        sim.fluid_count(),
        sim.boundary_count(),
        sim.spacing(),
        sim.smoothing_length(),
        rayon::current_num_threads(),
        ms(setup.elapsed()),
    );

    let mut frames = Vec::new();
    let frame = |sim: &Simulation<D>, frames: &mut Vec<PathBuf>| -> std::io::Result<()> {
        let path = options.out.join(format!("fluid_{:06}.vtk", sim.steps()));
        sim.write_frame(&path)?;
        frames.push(path);
        Ok(())
    };
    if options.frames_every > 0 {
        std::fs::create_dir_all(&options.out)?;
        let path = options.out.join("boundary.vtk");
        sim.write_boundary(&path)?;
        frames.push(path);
        frame(&sim, &mut frames)?;
    }

    let mut reports: Vec<StepReport> = Vec::with_capacity(options.steps);
    let start = Instant::now();
    let mut writing = Duration::ZERO;
    for _ in 0..options.steps {
        let report = sim.step()?;
        let k = report.step as usize;
        if options.print_every > 0 && k.is_multiple_of(options.print_every) {
            println!(
                "step {k:6}  t {:.4} s  dt {:.3e} s  step {:7.2} ms  search {:6.2} ms ({:4.1}%)  \
                 Ek {:.4e} J  |rho/rho0-1| max {:.2}% mean {:.3}%",
                report.time,
                report.dt,
                ms(report.step_time),
                ms(report.search_time),
                100.0 * report.search_share(),
                report.kinetic_energy,
                100.0 * report.density_error.max,
                100.0 * report.density_error.mean,
            );
        }
        if options.frames_every > 0 && k.is_multiple_of(options.frames_every) {
            let t = Instant::now();
            frame(&sim, &mut frames)?;
            writing += t.elapsed();
        }
        reports.push(report);
    }
    let wall = start.elapsed();

    let stepping: Duration = reports.iter().map(|r| r.step_time).sum();
    let search: Duration = reports.iter().map(|r| r.search_time).sum();
    let reorder: Duration = reports.iter().map(|r| r.reorder_time).sum();
    let share = |d: Duration| {
        if stepping.is_zero() {
            0.0
        } else {
            100.0 * d.as_secs_f64() / stepping.as_secs_f64()
        }
    };
    let steps = reports.len().max(1) as f64;
    println!("summary");
    println!(
        "  {} steps to t = {:.4} s in {:.2} s ({:.2} s stepping, {:.2} s writing frames)",
        reports.len(),
        sim.time(),
        wall.as_secs_f64(),
        stepping.as_secs_f64(),
        writing.as_secs_f64(),
    );
    println!(
        "  {:.2} ms per step, {:.1} steps/s, {:.2e} particle updates/s",
        ms(stepping) / steps,
        steps / stepping.as_secs_f64().max(f64::MIN_POSITIVE),
        steps * sim.fluid_count() as f64 / stepping.as_secs_f64().max(f64::MIN_POSITIVE),
    );
    let mean_share = reports.iter().map(StepReport::search_share).sum::<f64>() / steps;
    println!(
        "  neighbour search {:.2} ms per step: {:.1}% of the step time (mean of the steps' \
         shares {:.1}%); reordering {:.2}%",
        ms(search) / steps,
        share(search),
        100.0 * mean_share,
        share(reorder),
    );
    println!(
        "  {:.1} neighbours per fluid particle; final |rho/rho0-1| max {:.2}% mean {:.3}%; \
         Ek {:.4e} J",
        sim.mean_neighbors(),
        100.0 * sim.density_error().max,
        100.0 * sim.density_error().mean,
        sim.kinetic_energy(),
    );
    if frames.is_empty() {
        println!("  no frames written");
    } else {
        println!("  {} frames written:", frames.len());
        for path in &frames {
            println!("    {}", path.display());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("hhg-sph: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if options.distributed {
        return distributed::main(&options);
    }
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
    {
        Ok(pool) => pool,
        Err(error) => {
            eprintln!("hhg-sph: cannot start the thread pool: {error}");
            return ExitCode::FAILURE;
        }
    };
    match pool.install(|| run(&options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hhg-sph: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `--distributed` without the `mpi` feature: a clear refusal.
#[cfg(not(feature = "mpi"))]
mod distributed {
    use std::process::ExitCode;

    pub fn main(_options: &super::Options) -> ExitCode {
        eprintln!("hhg-sph: --distributed needs the `mpi` feature (cargo build --features mpi)");
        ExitCode::from(2)
    }
}

/// `--distributed`: the dam break on the ranks of `mpirun`, with the volumes of its halo and
/// migration per step.
#[cfg(feature = "mpi")]
mod distributed {
    use std::process::ExitCode;

    use hhg_mpi::mpi;
    use hhg_mpi::mpi::collective::SystemOperation;
    use hhg_mpi::mpi::topology::SimpleCommunicator;
    use hhg_mpi::mpi::traits::*;
    use hhg_sph::{DamBreak, DistributedSimulation, DistributedStepReport};

    use super::Options;

    /// Per step and rank, what the volumes table reads: fluid, walls, fluid ghosts, all
    /// ghosts, halo bytes, state bytes, migrated particles, fluid crossings, rebalances.
    const MEASURES: usize = 9;

    pub fn main(options: &Options) -> ExitCode {
        let Some(universe) = mpi::initialize() else {
            eprintln!("hhg-sph: MPI was initialised already");
            return ExitCode::FAILURE;
        };
        let world = universe.world();
        // MPI is called from this thread only: the workers of the global pool run the
        // solver's loops, never a message.
        if let Err(error) = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build_global()
        {
            eprintln!("hhg-sph: cannot start the thread pool: {error}");
            return ExitCode::FAILURE;
        }
        match run(&world, options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("hhg-sph: rank {}: {error}", world.rank());
                ExitCode::FAILURE
            }
        }
    }

    /// This rank's measures of one step.
    fn measures(sim: &DistributedSimulation, report: &DistributedStepReport) -> [u64; MEASURES] {
        let search = sim.search();
        let local = search.local_count();
        let fluid_total = sim.fluid_total() as u64;
        let fluid_ghosts = (0..search.ghost_count())
            .filter(|&g| search.ghost_origin(g).id < fluid_total)
            .count();
        [
            sim.fluid_count() as u64,
            (local - sim.fluid_count()) as u64,
            fluid_ghosts as u64,
            search.ghost_count() as u64,
            report.halo.bytes_sent as u64,
            report.state_bytes_sent as u64,
            report.migration.sent as u64,
            report.fluid_crossed as u64,
            u64::from(report.migration.rebalanced),
        ]
    }

    fn run(world: &SimpleCommunicator, options: &Options) -> Result<(), hhg_sph::SphError> {
        let config = DamBreak {
            particles: options.particles,
            ..DamBreak::default()
        };
        let ranks = world.size() as usize;
        let mut sim = DistributedSimulation::new(world, config)?;
        // Per rank and measure, the sum over the steps, and the largest rank's sum.
        let mut sums = [0u64; MEASURES];
        for _ in 0..options.steps {
            let report = sim.step()?;
            let step = measures(&sim, &report);
            for (sum, value) in sums.iter_mut().zip(step) {
                *sum += value;
            }
            if options.print_every > 0 && (report.step as usize).is_multiple_of(options.print_every)
            {
                let mut total = [0u64; MEASURES];
                world.all_reduce_into(&step[..], &mut total[..], SystemOperation::sum());
                if world.rank() == 0 {
                    println!(
                        "step {:6}  t {:.4} s  dt {:.3e} s  fluid ghosts {}  halo {} B  state {} B  migrated {}  fluid crossed {}",
                        report.step,
                        report.time,
                        report.dt,
                        total[2],
                        total[4],
                        total[5],
                        total[6],
                        total[7]
                    );
                }
            }
        }
        let mut total = [0u64; MEASURES];
        world.all_reduce_into(&sums[..], &mut total[..], SystemOperation::sum());
        let mut largest = [0u64; MEASURES];
        world.all_reduce_into(&sums[..], &mut largest[..], SystemOperation::max());
        if world.rank() == 0 {
            let steps = options.steps.max(1) as f64;
            // Means per step: over all ranks (`total`) and of the largest rank (`largest`).
            let mean = |k: usize| total[k] as f64 / steps;
            let per_rank = |k: usize| largest[k] as f64 / steps;
            let fluid = sim.fluid_total() as f64;
            let all = (sim.fluid_total() + sim.boundary_total()) as f64;
            println!(
                "distributed dam break on {ranks} ranks: {} fluid + {} wall particles, {} steps to t = {:.4} s",
                sim.fluid_total(),
                sim.boundary_total(),
                options.steps,
                sim.time()
            );
            println!(
                "  per step, summed over the ranks (largest rank in brackets): fluid ghosts {:.0} ({:.0}), {:.2} % of the fluid; all ghosts {:.0}, {:.2} % of all particles",
                mean(2),
                per_rank(2),
                100.0 * mean(2) / fluid,
                mean(3),
                100.0 * mean(3) / all
            );
            println!(
                "  halo bytes sent {:.0} ({:.0}); state bytes sent {:.0} ({:.0}); particles migrated {:.1} ({:.1}); fluid crossings {:.1} ({:.1}); rebalances {}",
                mean(4),
                per_rank(4),
                mean(5),
                per_rank(5),
                mean(6),
                per_rank(6),
                mean(7),
                per_rank(7),
                largest[8]
            );
            println!(
                "  fluid per rank: largest {:.0} of a mean {:.0}; walls per rank: largest {:.0} of a mean {:.0}",
                per_rank(0),
                mean(0) / ranks as f64,
                per_rank(1),
                mean(1) / ranks as f64
            );
        }
        Ok(())
    }
}
