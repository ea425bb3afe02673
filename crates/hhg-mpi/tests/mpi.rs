//! The distributed search against single-process and brute-force oracles, run by every rank
//! under `mpirun -np 1..4` (`.ci/mpi`): pair sets and lists on uniform, dam-break,
//! cell-border, clustered and periodic clouds; migration that loses nothing while particles
//! cross rank boundaries every step; boxes balanced by a weight per particle; bad input
//! refused on every rank without a hang.
//!
//! One process per rank runs every check in sequence (no libtest harness: its threads
//! would call MPI concurrently). A check fails on a rank by returning an error; the verdict
//! is agreed on by all ranks, and rank 0 prints it.

use std::process::ExitCode;

use hhg_core::periodic::{PeriodicBox, PeriodicPairList, PeriodicSearch};
use hhg_core::{Grid, NeighborLists, PairList, Real};
use hhg_mpi::testing::{Check, CheckFn, ensure, gather_all, run_checks};
use hhg_mpi::{DistributedLists, DistributedSearch, Error, checksum_add};
use hhg_testkit::{
    SplitMix64, gaussian_clusters, lattice, oracle_pairs, oracle_periodic_pairs,
    points_on_cell_borders, shuffle, to_real, uniform_box, uniform_cube,
};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// This rank's slice of a cloud of `n` points: the initial distribution, by numbering,
/// before any migration.
fn my_slice(world: &SimpleCommunicator, n: usize) -> std::ops::Range<usize> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    n * rank / size..n * (rank + 1) / size
}

/// The distributed pairs of `cloud` in global ids (sorted, `i < j`), gathered on every
/// rank, and the search that found them.
fn distributed_pairs<T: Real + bytemuck::Pod>(
    world: &SimpleCommunicator,
    cloud: &[[T; 3]],
    radius: T,
    domain: Option<PeriodicBox<T>>,
) -> Result<(Vec<[u64; 2]>, DistributedSearch<T>), String> {
    let range = my_slice(world, cloud.len());
    let mut positions = cloud[range.clone()].to_vec();
    let mut ids: Vec<u64> = range.map(|i| i as u64).collect();
    let mut search = DistributedSearch::new(world, radius, domain).map_err(|e| e.to_string())?;
    search
        .migrate(&mut positions, &mut ids, &mut [])
        .map_err(|e| e.to_string())?;
    search.update(&positions, &ids).map_err(|e| e.to_string())?;
    let mut local = Vec::new();
    search.pairs(&mut local).map_err(|e| e.to_string())?;
    let mut flat = Vec::with_capacity(2 * local.len());
    for &[i, j] in &local {
        let (a, b) = (search.global_id(i as usize), search.global_id(j as usize));
        flat.push(a.min(b));
        flat.push(a.max(b));
    }
    let all = gather_all(world, &flat);
    let mut pairs: Vec<[u64; 2]> = all.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
    pairs.sort_unstable();
    Ok((pairs, search))
}

fn as_u64(pairs: &[[u32; 2]]) -> Vec<[u64; 2]> {
    let mut out: Vec<[u64; 2]> = pairs
        .iter()
        .map(|&[i, j]| [u64::from(i.min(j)), u64::from(i.max(j))])
        .collect();
    out.sort_unstable();
    out
}

fn compare_pairs(what: &str, got: &[[u64; 2]], expected: &[[u64; 2]]) -> Check {
    if got == expected {
        return Ok(());
    }
    let missing = expected.iter().find(|p| got.binary_search(p).is_err());
    let extra = got.iter().find(|p| expected.binary_search(p).is_err());
    let duplicate = got.windows(2).find(|w| w[0] == w[1]);
    Err(format!(
        "{what}: {} pairs, expected {}; first missing {missing:?}, first extra {extra:?}, first duplicate {duplicate:?}",
        got.len(),
        expected.len()
    ))
}

/// The pairs of an open cloud against the single-process grid, and against brute force when
/// the cloud is small; the lists against the single-process lists; the ghost values.
fn check_open<T: Real + bytemuck::Pod>(
    world: &SimpleCommunicator,
    what: &str,
    cloud: &[[f64; 3]],
    radius: f64,
) -> Check {
    let cloud: Vec<[T; 3]> = to_real(cloud);
    let radius = T::from_f64(radius);
    let (pairs, mut search) = distributed_pairs(world, &cloud, radius, None)?;
    let mut grid = Grid::new(radius).map_err(|e| e.to_string())?;
    grid.build(&cloud).map_err(|e| e.to_string())?;
    let mut single = PairList::default();
    grid.pairs(&mut single).map_err(|e| e.to_string())?;
    let expected = as_u64(single.pairs());
    compare_pairs(
        &format!("{what}: pairs vs single process"),
        &pairs,
        &expected,
    )?;
    if cloud.len() <= 4000 {
        let brute = as_u64(&oracle_pairs(&cloud, radius));
        compare_pairs(&format!("{what}: pairs vs brute force"), &pairs, &brute)?;
    }
    ensure(!expected.is_empty() || cloud.len() < 2, || {
        format!("{what}: the scene has no pairs, the check cannot fail")
    })?;

    let mut single_lists = NeighborLists::default();
    grid.neighbor_lists(&mut single_lists)
        .map_err(|e| e.to_string())?;
    compare_lists(what, &mut search, &single_lists)?;

    // Ghost values: the ids sent along the halo come back as the ghosts' origins.
    let local_ids: Vec<u64> = (0..search.local_count())
        .map(|i| search.global_id(i))
        .collect();
    let mut ghost_ids = Vec::new();
    search
        .exchange_ghost_values(&local_ids, &mut ghost_ids)
        .map_err(|e| e.to_string())?;
    let expected: Vec<u64> = (0..search.ghost_count())
        .map(|g| search.ghost_origin(g).id)
        .collect();
    ensure(ghost_ids == expected, || {
        format!("{what}: the exchanged ghost values differ from the ghosts' ids")
    })
}

/// Each local particle's distributed list, in global ids, equals its single-process list.
fn compare_lists<T: Real + bytemuck::Pod>(
    what: &str,
    search: &mut DistributedSearch<T>,
    single_lists: &NeighborLists<T>,
) -> Check {
    let mut lists = DistributedLists::default();
    search
        .neighbor_lists(&mut lists)
        .map_err(|e| e.to_string())?;
    ensure(lists.len() == search.local_count(), || {
        format!(
            "{what}: {} lists for {} particles",
            lists.len(),
            search.local_count()
        )
    })?;
    for i in 0..lists.len() {
        let id = search.global_id(i);
        let mut got: Vec<u64> = lists
            .neighbors(i)
            .iter()
            .map(|&j| search.global_id(j as usize))
            .collect();
        got.sort_unstable();
        let expected: Vec<u64> = single_lists
            .neighbors(id as usize)
            .iter()
            .map(|&j| u64::from(j))
            .collect();
        ensure(got == expected, || {
            format!("{what}: the list of particle {id} is {got:?}, expected {expected:?}")
        })?;
    }
    Ok(())
}

fn check_periodic<T: Real + bytemuck::Pod>(
    world: &SimpleCommunicator,
    what: &str,
    cloud: &[[f64; 3]],
    radius: f64,
    domain: PeriodicBox<f64>,
) -> Check {
    let cloud: Vec<[T; 3]> = to_real(cloud);
    let radius = T::from_f64(radius);
    let domain = PeriodicBox {
        origin: domain.origin.map(T::from_f64),
        lengths: domain.lengths.map(T::from_f64),
        periodic: domain.periodic,
    };
    let (pairs, mut search) = distributed_pairs(world, &cloud, radius, Some(domain))?;
    let mut single = PeriodicSearch::new(radius, domain).map_err(|e| e.to_string())?;
    single.build(&cloud).map_err(|e| e.to_string())?;
    let mut single_lists = NeighborLists::default();
    single
        .neighbor_lists(&mut single_lists)
        .map_err(|e| e.to_string())?;
    compare_lists(what, &mut search, &single_lists)?;
    let mut out = PeriodicPairList::default();
    single.pairs(&mut out).map_err(|e| e.to_string())?;
    let mut expected: Vec<[u64; 2]> = out
        .pairs()
        .iter()
        .map(|p| [u64::from(p.i.min(p.j)), u64::from(p.i.max(p.j))])
        .collect();
    expected.sort_unstable();
    compare_pairs(
        &format!("{what}: pairs vs single process"),
        &pairs,
        &expected,
    )?;
    if cloud.len() <= 3000 {
        let brute: Vec<[u64; 2]> = oracle_periodic_pairs(&cloud, radius, &domain)
            .iter()
            .map(|(p, _)| [u64::from(p.i), u64::from(p.j)])
            .collect();
        compare_pairs(&format!("{what}: pairs vs brute force"), &pairs, &brute)?;
    }
    ensure(!expected.is_empty(), || {
        format!("{what}: the scene has no pairs, the check cannot fail")
    })
}

/// A dam break's particles: a block of fluid on a lattice of spacing `dx` and the tank's
/// floor and walls, two layers of boundary particles; `r = 2 dx` puts many pairs at exactly
/// the radius (the spacing is a power of two, so lattice distances are exact).
fn dam_break(rng: &mut SplitMix64) -> (Vec<[f64; 3]>, f64) {
    let dx = 0.125;
    let mut points = lattice([12, 8, 10], dx, [0.0, 0.0, 0.0]);
    for p in lattice([28, 12, 2], dx, [-2.0 * dx, -2.0 * dx, -2.0 * dx]) {
        points.push(p);
    }
    for p in lattice([2, 12, 14], dx, [-2.0 * dx, -2.0 * dx, 0.0]) {
        points.push(p);
    }
    shuffle(rng, &mut points);
    (points, 2.0 * dx)
}

fn pair_scenes(world: &SimpleCommunicator) -> Check {
    let mut rng = SplitMix64::new(0x005e_ed24);
    let uniform = uniform_cube(&mut rng, 3000, [0.0; 3], 1.0, 30.0);
    check_open::<f64>(world, "uniform f64", &uniform, 1.0)?;
    check_open::<f32>(world, "uniform f32", &uniform, 1.0)?;
    let far = uniform_cube(&mut rng, 2000, [-3.0e4, 5.0e5, -7.0e3], 4.0, 25.0);
    check_open::<f64>(world, "negative and large coordinates", &far, 4.0)?;
    let (dam, r) = dam_break(&mut rng);
    check_open::<f64>(world, "dam break", &dam, r)?;
    check_open::<f32>(world, "dam break f32", &dam, r)?;
    let borders = points_on_cell_borders(&mut rng, 1500, 0.5, 8);
    check_open::<f32>(world, "cell borders", &borders, 0.5)?;
    let mut clustered = gaussian_clusters(&mut rng, &[(800, 0.3), (600, 0.05), (400, 1.5)], 6.0);
    // A degenerate cluster: 300 copies of one point, which no cut can separate.
    clustered.extend(std::iter::repeat_n([2.0, 2.0, 2.0], 300));
    shuffle(&mut rng, &mut clustered);
    check_open::<f64>(world, "clustered", &clustered, 0.4)?;
    let line: Vec<[f64; 3]> = (0..1000).map(|i| [i as f64 * 0.25, 0.0, 0.0]).collect();
    check_open::<f64>(world, "a line of points", &line, 0.5)?;
    // Fewer points than ranks: some ranks hold nothing.
    check_open::<f64>(
        world,
        "three points",
        &[[0.0; 3], [0.5, 0.0, 0.0], [9.0, 9.0, 9.0]],
        1.0,
    )?;

    let cubic = PeriodicBox::cubic([-2.0; 3], [8.0; 3]);
    let inside = uniform_box(&mut rng, 2500, [-3.0; 3], [7.0; 3]);
    check_periodic::<f64>(world, "periodic", &inside, 1.0, cubic)?;
    check_periodic::<f32>(world, "periodic f32", &inside, 1.0, cubic)?;
    let slab = PeriodicBox {
        origin: [0.0; 3],
        lengths: [2.5, 6.0, 6.0],
        periodic: [true, true, false],
    };
    let slab_points = uniform_box(&mut rng, 2000, [0.0; 3], [2.5, 6.0, 6.0]);
    check_periodic::<f64>(
        world,
        "periodic on two axes, a box 2.5 radii long",
        &slab_points,
        1.0,
        slab,
    )?;
    let periodic_lattice = lattice([16, 16, 16], 0.25, [0.0; 3]);
    check_periodic::<f64>(
        world,
        "periodic lattice, pairs at exactly r across the faces",
        &periodic_lattice,
        0.5,
        PeriodicBox::cubic([0.0; 3], [4.0; 3]),
    )
}

fn migration_periodic(world: &SimpleCommunicator) -> Check {
    migration(world, [true; 3])
}

fn migration_open(world: &SimpleCommunicator) -> Check {
    migration(world, [false; 3])
}

/// Particles with velocities of up to a third of the box move for several steps in a
/// periodic box (or from it into open space, where no axis is periodic); each step they are
/// migrated with their masses and velocities. Every particle must arrive exactly once with
/// its mass and velocity bit for bit, its position as a single process computes it, and the
/// pairs must match the single-process search.
fn migration(world: &SimpleCommunicator, periodic: [bool; 3]) -> Check {
    let mut rng = SplitMix64::new(0x000d_15c0);
    let n = 2000;
    let domain = PeriodicBox {
        origin: [0.0; 3],
        lengths: [6.0; 3],
        periodic,
    };
    // Open space is the distributed search without a box; the single process's search on a
    // box with no periodic axis is the plain search (its wrap leaves every point as it is).
    let distributed_domain = periodic.contains(&true).then_some(domain);
    let radius = 0.6;
    let mut expected_positions = uniform_box(&mut rng, n, [0.0; 3], [6.0; 3]);
    let velocities: Vec<[f64; 3]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.range(-2.0, 2.0)))
        .collect();
    let masses: Vec<f64> = (0..n)
        .map(|_| f64::from_bits(rng.next_u64() >> 2))
        .collect();

    // Every particle starts on rank 0: the first migration spreads them.
    let mine = if world.rank() == 0 { 0..n } else { 0..0 };
    let mut positions = expected_positions[mine.clone()].to_vec();
    let mut ids: Vec<u64> = mine.clone().map(|i| i as u64).collect();
    let mut local_masses = masses[mine.clone()].to_vec();
    let mut local_velocities = velocities[mine].to_vec();
    let mut search =
        DistributedSearch::new(world, radius, distributed_domain).map_err(|e| e.to_string())?;
    let mut single = PeriodicSearch::new(radius, domain).map_err(|e| e.to_string())?;
    let mut single_pairs = PeriodicPairList::default();
    let mut crossed_total = 0u64;
    for step in 0..6 {
        // At step 3 every particle is squeezed into the lowest corner (a quarter of the box
        // on each axis): the ranks whose boxes lie elsewhere empty, and the migration must
        // cut the boxes anew.
        let squeeze = step == 3;
        let motion = |p: [f64; 3], v: [f64; 3]| -> [f64; 3] {
            if squeeze {
                p.map(|x| x * 0.25)
            } else {
                std::array::from_fn(|a| p[a] + v[a])
            }
        };
        if step > 0 {
            for (p, v) in positions.iter_mut().zip(&local_velocities) {
                *p = motion(*p, *v);
            }
            for (p, v) in expected_positions.iter_mut().zip(&velocities) {
                *p = domain.wrap(motion(*p, *v)).map_err(|e| e.to_string())?.0;
            }
        }
        let stats = search
            .migrate(
                &mut positions,
                &mut ids,
                &mut [&mut local_masses, &mut local_velocities],
            )
            .map_err(|e| e.to_string())?;
        let mut crossed = 0u64;
        world.all_reduce_into(&(stats.sent as u64), &mut crossed, SystemOperation::sum());
        if step > 0 {
            crossed_total += crossed;
            ensure(crossed > 0 || world.size() == 1, || {
                format!("step {step}: no particle changed rank")
            })?;
        }
        ensure(!squeeze || world.size() == 1 || stats.rebalanced, || {
            format!("step {step}: all particles in a corner of the box, and no rebalance")
        })?;
        let imbalance = search.imbalance(&ids);
        ensure(imbalance <= search.rebalance_threshold() + 1e-9, || {
            format!("step {step}: imbalance {imbalance} past the threshold after migration")
        })?;

        // Every particle exactly once, with its mass, velocity and position bit for bit.
        let mut records = Vec::new();
        for i in 0..ids.len() {
            records.push(ids[i]);
            records.push(local_masses[i].to_bits());
            records.extend(local_velocities[i].map(f64::to_bits));
            records.extend(positions[i].map(f64::to_bits));
        }
        let all = gather_all(world, &records);
        let mut got: Vec<&[u64]> = all.chunks_exact(8).collect();
        got.sort_unstable_by_key(|r| r[0]);
        ensure(got.len() == n, || {
            format!("step {step}: {} particles, expected {n}", got.len())
        })?;
        for (i, r) in got.iter().enumerate() {
            ensure(r[0] == i as u64, || {
                format!("step {step}: particle {i} missing or duplicated")
            })?;
            ensure(r[1] == masses[i].to_bits(), || {
                format!("step {step}: the mass of particle {i} changed")
            })?;
            ensure(r[2..5] == velocities[i].map(f64::to_bits), || {
                format!("step {step}: the velocity of particle {i} changed")
            })?;
            ensure(r[5..8] == expected_positions[i].map(f64::to_bits), || {
                format!("step {step}: particle {i} is not where a single process puts it")
            })?;
        }

        let pairs = gathered_pairs(world, &mut search, &positions, &ids)?;
        single
            .build(&expected_positions)
            .map_err(|e| e.to_string())?;
        single.pairs(&mut single_pairs).map_err(|e| e.to_string())?;
        let mut expected: Vec<[u64; 2]> = single_pairs
            .pairs()
            .iter()
            .map(|p| [u64::from(p.i), u64::from(p.j)])
            .collect();
        expected.sort_unstable();
        compare_pairs(&format!("migration step {step}"), &pairs, &expected)?;
    }
    ensure(world.size() == 1 || crossed_total > 0, || {
        "nothing crossed".into()
    })
}

/// The weight of particle `id` in the weighted-balance check: the first `HEAVY` particles (a
/// block of "fluid") weigh 3, the others (a tank of "walls") nothing.
const HEAVY: u64 = 1200;

fn heavy_weight(id: u64) -> u32 {
    if id < HEAVY { 3 } else { 0 }
}

/// The largest rank's share over the mean of `local`, gathered over the ranks.
fn share_imbalance(world: &SimpleCommunicator, local: u64) -> f64 {
    let all = gather_all(world, &[local]);
    let total: u64 = all.iter().sum();
    let largest = all.iter().copied().max().unwrap_or(0);
    largest as f64 * all.len() as f64 / total.max(1) as f64
}

/// `DistributedSearch::balance_by`: a block of heavy particles in one corner of a tank of
/// weightless ones. The boxes must share the weight (imbalance by weight at most 1.02, while
/// by particle count it is past the rebalance threshold, so the check fails if the weights
/// are ignored); once the block moves to the tank's far end the migration must cut the boxes
/// anew, again by weight; the pairs match the single-process grid each time.
fn weighted_balance(world: &SimpleCommunicator) -> Check {
    let mut rng = SplitMix64::new(0x0ba1_a4ce);
    let radius = 0.5;
    let mut cloud = uniform_box(&mut rng, HEAVY as usize, [0.0; 3], [3.0; 3]);
    cloud.extend(uniform_box(&mut rng, 3600, [0.0; 3], [12.0, 6.0, 6.0]));
    let range = my_slice(world, cloud.len());
    let mut positions = cloud[range.clone()].to_vec();
    let mut ids: Vec<u64> = range.map(|i| i as u64).collect();
    let mut search = DistributedSearch::new(world, radius, None).map_err(|e| e.to_string())?;
    search.balance_by(heavy_weight);
    for step in 0..2 {
        if step == 1 {
            // The heavy block moves to the far corner of the tank, across every cut.
            let far = |p: &mut [f64; 3]| *p = [p[0] + 9.0, p[1] + 3.0, p[2] + 3.0];
            cloud[..HEAVY as usize].iter_mut().for_each(far);
            for (p, &id) in positions.iter_mut().zip(&ids) {
                if id < HEAVY {
                    far(p);
                }
            }
        }
        let stats = search
            .migrate(&mut positions, &mut ids, &mut [])
            .map_err(|e| e.to_string())?;
        let weight: u64 = ids.iter().map(|&id| u64::from(heavy_weight(id))).sum();
        let by_weight = share_imbalance(world, weight);
        let by_count = share_imbalance(world, ids.len() as u64);
        let reported = search.imbalance(&ids);
        let pairs = gathered_pairs(world, &mut search, &positions, &ids)?;
        if world.rank() == 0 {
            println!("  step {step}: imbalance {by_weight:.3} by weight, {by_count:.3} by count");
        }
        ensure(stats.rebalanced || world.size() == 1, || {
            format!("step {step}: the heavy block moved and the boxes were not cut anew")
        })?;
        ensure(by_weight <= 1.02, || {
            format!("step {step}: imbalance {by_weight} by weight")
        })?;
        ensure(
            world.size() == 1 || by_count > search.rebalance_threshold(),
            || {
                format!(
                    "step {step}: imbalance {by_count} by count: the check cannot tell weights from counts"
                )
            },
        )?;
        ensure(reported == by_weight, || {
            format!(
                "step {step}: the search reports imbalance {reported}, the weights give {by_weight}"
            )
        })?;
        let mut grid = Grid::new(radius).map_err(|e| e.to_string())?;
        grid.build(&cloud).map_err(|e| e.to_string())?;
        let mut single = PairList::default();
        grid.pairs(&mut single).map_err(|e| e.to_string())?;
        compare_pairs(
            &format!("weighted balance step {step}"),
            &pairs,
            &as_u64(single.pairs()),
        )?;
    }
    Ok(())
}

/// The pairs of the particles as they are now, in global ids (sorted, `i < j`), gathered on
/// every rank.
fn gathered_pairs(
    world: &SimpleCommunicator,
    search: &mut DistributedSearch<f64>,
    positions: &[[f64; 3]],
    ids: &[u64],
) -> Result<Vec<[u64; 2]>, String> {
    search.update(positions, ids).map_err(|e| e.to_string())?;
    let mut local = Vec::new();
    search.pairs(&mut local).map_err(|e| e.to_string())?;
    let flat: Vec<u64> = local
        .iter()
        .flat_map(|&[i, j]| {
            let (a, b) = (search.global_id(i as usize), search.global_id(j as usize));
            [a.min(b), a.max(b)]
        })
        .collect();
    let mut pairs: Vec<[u64; 2]> = gather_all(world, &flat)
        .chunks_exact(2)
        .map(|p| [p[0], p[1]])
        .collect();
    pairs.sort_unstable();
    Ok(pairs)
}

/// Bad input is refused on the rank that holds it, the others learn which rank refused,
/// and nobody hangs.
fn bad_input(world: &SimpleCommunicator) -> Check {
    let last = world.size() - 1;
    let rank = world.rank();
    let mut search = DistributedSearch::<f64>::new(world, 1.0, None).map_err(|e| e.to_string())?;
    let mut positions = vec![[rank as f64, 0.0, 0.0]];
    let mut ids = vec![rank as u64];
    if rank == last {
        positions[0][1] = f64::NAN;
    }
    match search.migrate(&mut positions, &mut ids, &mut []) {
        Err(Error::NonFinite {
            index: 0, axis: 1, ..
        }) if rank == last => {}
        Err(Error::OnOtherRank { rank: r }) if rank != last && r == last as usize => {}
        other => return Err(format!("a NaN coordinate on rank {last}: got {other:?}")),
    }
    positions[0][1] = 0.0;
    let mut masses = vec![1.0f64; if rank == 0 { 2 } else { 1 }];
    match search.migrate(&mut positions, &mut ids, &mut [&mut masses]) {
        Err(Error::LengthMismatch {
            expected: 1,
            found: 2,
            ..
        }) if rank == 0 => {}
        Err(Error::OnOtherRank { rank: 0 }) if rank != 0 => {}
        other => {
            return Err(format!(
                "a column of 2 entries for 1 particle: got {other:?}"
            ));
        }
    }
    search
        .migrate(&mut positions, &mut ids, &mut [])
        .map_err(|e| e.to_string())?;
    // A particle moved out of its box without migration: refused by update.
    let mut moved = positions.clone();
    let far = if rank == 0 { 1e9 } else { -1e9 };
    let outside = world.size() > 1 && !moved.is_empty();
    if outside {
        for p in &mut moved {
            p[0] = far;
        }
    }
    let result = search.update(&moved, &ids);
    if outside {
        let refused = matches!(
            result,
            Err(Error::NotOwned { .. }) | Err(Error::OnOtherRank { .. })
        );
        ensure(refused, || {
            format!("a particle outside its box: got {result:?}")
        })?;
    }
    match DistributedSearch::<f64>::new(world, -1.0, None) {
        Err(Error::Core(_)) => {}
        other => return Err(format!("radius -1: got {other:?}")),
    }
    match DistributedSearch::<f64>::new(world, 1.0, Some(PeriodicBox::cubic([0.0; 3], [1.5; 3]))) {
        Err(Error::Core(_)) => Ok(()),
        other => Err(format!(
            "a periodic box below twice the radius: got {other:?}"
        )),
    }
}

/// Writes a point file and its single-process pair count and checksum for `.ci/mpi`, which
/// runs `hhg-mpi-points` on it with 1 to 4 ranks.
fn write_points_fixture(world: &SimpleCommunicator) -> Check {
    let Ok(dir) = std::env::var("HHG_MPI_POINTS_FIXTURE") else {
        return Ok(());
    };
    if world.rank() != 0 {
        return Ok(());
    }
    let mut rng = SplitMix64::new(0xf11e);
    let points: Vec<[f32; 3]> = to_real(&uniform_cube(
        &mut rng,
        20_000,
        [-5.0, 10.0, 0.0],
        0.05,
        30.0,
    ));
    let radius = 0.05f32;
    let mut grid = Grid::new(radius).map_err(|e| e.to_string())?;
    grid.build(&points).map_err(|e| e.to_string())?;
    let mut pairs = PairList::default();
    grid.pairs(&mut pairs).map_err(|e| e.to_string())?;
    let checksum = pairs.pairs().iter().fold(0, |sum, &[i, j]| {
        checksum_add(sum, u64::from(i), u64::from(j))
    });
    let dir = std::path::Path::new(&dir);
    hhg_pointfile::write_points(&dir.join("points.bin"), &points).map_err(|e| e.to_string())?;
    std::fs::write(
        dir.join("expected.json"),
        format!(
            "{{\"n\":{},\"pairs\":{},\"checksum\":{checksum},\"radius\":{radius}}}\n",
            points.len(),
            pairs.len()
        ),
    )
    .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let universe = mpi::initialize().expect("MPI initialises once");
    let world = universe.world();
    let checks: [(&str, CheckFn); 6] = [
        ("pairs and lists on every scene", pair_scenes),
        ("migration every step, periodic", migration_periodic),
        ("migration every step, open space", migration_open),
        ("balance by weight", weighted_balance),
        ("bad input", bad_input),
        ("the points client's fixture", write_points_fixture),
    ];
    run_checks(&world, &checks)
}
