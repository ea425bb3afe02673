//! `hhg-mpi-points`: the distributed search on a point file, under `mpirun -np K`.
//!
//! Each rank reads its slice of the file (raw little-endian `f32` triples, the bench's
//! `--points` format), the particles are distributed by recursive coordinate bisection, the
//! halo is exchanged and every rank searches its box; rank 0 prints one JSON line with the
//! number of unique pairs and their checksum `sum (i + j) mod (2^61 - 1)` in the file's
//! numbering, which equals the single-process search's.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hhg_mpi::{CHECKSUM_MODULUS, DistributedSearch, checksum_add};
use mpi::collective::SystemOperation;
use mpi::traits::*;

/// Distributed fixed-radius pairs of a point file.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// The point file: raw little-endian f32 x, y, z triples (12 bytes per point).
    #[arg(long)]
    points: PathBuf,
    /// The search radius.
    #[arg(long)]
    radius: f32,
    /// Also print a second JSON line with each rank's particles, ghosts, halo bytes and
    /// messages per exchange.
    #[arg(long)]
    halo_stats: bool,
}

/// The bytes of one point in the file.
const POINT_BYTES: u64 = 12;

/// Reads points `first .. first + count` of the file.
fn read_slice(path: &PathBuf, rank: u64, ranks: u64) -> Result<(Vec<[f32; 3]>, u64, u64), String> {
    let mut file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bytes = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if bytes % POINT_BYTES != 0 {
        return Err(format!(
            "{}: {bytes} bytes is not a whole number of 12-byte points",
            path.display()
        ));
    }
    let total = bytes / POINT_BYTES;
    let first = total * rank / ranks;
    let last = total * (rank + 1) / ranks;
    file.seek(SeekFrom::Start(first * POINT_BYTES))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut slice = vec![0u8; ((last - first) * POINT_BYTES) as usize];
    file.read_exact(&mut slice)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let points = hhg_pointfile::decode_points(&slice)
        .ok_or_else(|| format!("{}: the slice does not decode", path.display()))?;
    Ok((points, first, total))
}

/// A number as JSON (finite times always; `null` otherwise).
fn json(value: f64) -> serde_json::Value {
    serde_json::Number::from_f64(value).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

fn main() -> ExitCode {
    let Some(universe) = mpi::initialize() else {
        eprintln!("hhg-mpi-points: MPI could not be initialised");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let (rank, ranks) = (world.rank() as u64, world.size() as u64);
    // Every rank parses the same arguments, so all agree on whether to go on.
    let args = Args::parse();
    match run(&world, &args, rank, ranks) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hhg-mpi-points (rank {rank}): {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    world: &mpi::topology::SimpleCommunicator,
    args: &Args,
    rank: u64,
    ranks: u64,
) -> Result<(), String> {
    let read = read_slice(&args.points, rank, ranks);
    // A rank that cannot read its slice must not leave the others waiting.
    let failed = u32::from(read.is_err());
    let mut any_failed = 0u32;
    world.all_reduce_into(&failed, &mut any_failed, SystemOperation::max());
    let (mut positions, first, total) = read?;
    if any_failed != 0 {
        return Err("another rank could not read its slice of the file".into());
    }
    let mut ids: Vec<u64> = (first..first + positions.len() as u64).collect();
    let mut search = DistributedSearch::new(world, args.radius, None).map_err(|e| e.to_string())?;
    search
        .migrate(&mut positions, &mut ids, &mut [])
        .map_err(|e| e.to_string())?;
    search.update(&positions, &ids).map_err(|e| e.to_string())?;
    let mut pairs = Vec::new();
    search.pairs(&mut pairs).map_err(|e| e.to_string())?;

    let mut checksum = 0u64;
    for &[i, j] in &pairs {
        checksum = checksum_add(
            checksum,
            search.global_id(i as usize),
            search.global_id(j as usize),
        );
    }
    let timings = search.timings();
    let local = [
        timings.search.as_secs_f64(),
        timings.halo.as_secs_f64(),
        timings.migrate.as_secs_f64(),
    ];
    let mut slowest = [0.0f64; 3];
    world.all_reduce_into(&local[..], &mut slowest[..], SystemOperation::max());
    let mut pair_count = 0u64;
    world.all_reduce_into(
        &(pairs.len() as u64),
        &mut pair_count,
        SystemOperation::sum(),
    );
    let halo = search.halo_stats();
    let mine = [
        positions.len() as u64,
        halo.ghosts as u64,
        halo.bytes_sent as u64,
        halo.messages_sent as u64,
    ];
    let mut per_rank = vec![0u64; 4 * ranks as usize];
    world.all_gather_into(&mine[..], &mut per_rank[..]);
    // Each partial sum is below 2^61, so they are added on rank 0 without overflow.
    let root = world.process_at_rank(0);
    if rank == 0 {
        let mut partial = vec![0u64; ranks as usize];
        root.gather_into_root(&checksum, &mut partial[..]);
        let checksum = partial.iter().fold(0u64, |sum, &part| {
            ((u128::from(sum) + u128::from(part)) % u128::from(CHECKSUM_MODULUS)) as u64
        });
        // The keys in the documented order (serde_json's maps sort them).
        let line = format!(
            "{{\"ranks\":{ranks},\"n\":{total},\"pairs\":{pair_count},\"checksum\":{checksum},\"search_s\":{},\"halo_s\":{},\"migrate_s\":{}}}",
            json(slowest[0]),
            json(slowest[1]),
            json(slowest[2]),
        );
        println!("{line}");
        if args.halo_stats {
            let column =
                |k: usize| -> Vec<u64> { per_rank.chunks_exact(4).map(|r| r[k]).collect() };
            let ghosts: u64 = column(1).iter().sum();
            let stats = serde_json::json!({
                "local": column(0),
                "ghosts": column(1),
                "halo_bytes_sent": column(2),
                "halo_messages_sent": column(3),
                "halo_fraction": ghosts as f64 / total.max(1) as f64,
            });
            println!("{stats}");
        }
    } else {
        root.gather_into(&checksum);
    }
    Ok(())
}
