//! What the tests under `mpirun` share (hhg-mpi's own and those of its clients, such as
//! hhg-sph's distributed dam break): checks that every rank runs, their agreed verdict, and
//! a gather of every rank's values.

use std::process::ExitCode;

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The outcome of a check on one rank: an error message names what differed.
pub type Check = Result<(), String>;

/// One check, run by every rank.
pub type CheckFn = fn(&SimpleCommunicator) -> Check;

/// `Ok` when `condition` holds, else the error `message()`.
pub fn ensure(condition: bool, message: impl FnOnce() -> String) -> Check {
    if condition { Ok(()) } else { Err(message()) }
}

/// Every rank's `values`, concatenated in rank order, on every rank. Collective.
pub fn gather_all(world: &SimpleCommunicator, values: &[u64]) -> Vec<u64> {
    let size = world.size() as usize;
    let count = values.len() as i32;
    let mut counts = vec![0i32; size];
    world.all_gather_into(&count, &mut counts[..]);
    let displacements: Vec<i32> = counts
        .iter()
        .scan(0, |at, &c| {
            let d = *at;
            *at += c;
            Some(d)
        })
        .collect();
    let mut all = vec![0u64; counts.iter().map(|&c| c as usize).sum()];
    let mut partition = PartitionMut::new(&mut all[..], &counts[..], &displacements[..]);
    world.all_gather_varcount_into(values, &mut partition);
    all
}

/// Runs every check on every rank in order. A rank whose check fails prints why; the
/// verdict of each check is agreed on by all ranks (failed on one, failed on all) and rank 0
/// prints it. A check must run the same collective calls on every rank whatever it finds,
/// or the ranks wait for each other forever. Collective.
pub fn run_checks(world: &SimpleCommunicator, checks: &[(&str, CheckFn)]) -> ExitCode {
    let mut failed = 0;
    for &(name, check) in checks {
        let result = check(world);
        if let Err(message) = &result {
            eprintln!("rank {}: {name}: {message}", world.rank());
        }
        let local = u32::from(result.is_err());
        let mut any = 0u32;
        world.all_reduce_into(&local, &mut any, SystemOperation::max());
        if world.rank() == 0 {
            println!(
                "{name} on {} ranks ... {}",
                world.size(),
                if any == 0 { "ok" } else { "FAILED" }
            );
        }
        failed += any;
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
