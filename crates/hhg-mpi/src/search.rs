//! `DistributedSearch`: the particles of one rank, the ghosts of its neighbours' particles
//! (the halo), migration between ranks, and hhg-core's search on local and ghost particles.

use std::time::{Duration, Instant};

use bytemuck::Pod;
use hhg_core::periodic::{PeriodicBox, PeriodicSearch};
use hhg_core::{Grid, NeighborLists, PairList, Real};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use rayon::prelude::*;

use crate::column::{Column, retain_by_mask};
use crate::decomposition::{Bounds, Decomposition};
use crate::error::Error;

/// The message tags of the exchanges (on the search's own duplicate of the communicator).
const HALO_TAG: i32 = 1;
const VALUES_TAG: i32 = 2;
const MIGRATION_TAG: i32 = 3;

/// The default imbalance (largest rank's particle count, or weight with
/// [`DistributedSearch::balance_by`], over the mean) past which
/// [`DistributedSearch::migrate`] cuts the boxes anew.
pub const DEFAULT_REBALANCE_THRESHOLD: f64 = 1.25;

/// The balancing weight of a particle from its global id ([`DistributedSearch::balance_by`]).
type BalanceWeight = Box<dyn Fn(u64) -> u32 + Send + Sync>;

/// Where a ghost comes from: the rank that owns the particle and its global id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GhostOrigin {
    /// The owning rank.
    pub rank: usize,
    /// The particle's global id.
    pub id: u64,
}

/// The ghosts of the last [`DistributedSearch::update`], in the order of their neighbour
/// ranks (ascending) and, per rank, of the shifts and the sender's particles.
#[derive(Clone, Debug, Default)]
struct Ghosts<T> {
    /// The positions the grid searches: the owner's position moved by `shifts` box lengths.
    positions: Vec<[T; 3]>,
    /// The owner's (wrapped) positions.
    unshifted: Vec<[T; 3]>,
    /// The periodic image of each ghost, in box lengths per axis.
    shifts: Vec<[i64; 3]>,
    origins: Vec<GhostOrigin>,
}

/// A rank this rank exchanges ghosts with (itself too, for periodic images of its own box).
#[derive(Clone, Debug)]
struct Neighbour {
    rank: usize,
    /// The shifts under which this rank's particles are ghosts on `rank`.
    shifts_out: Vec<[i64; 3]>,
}

/// What the last halo exchange moved, on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HaloStats {
    /// Ghosts received (particles of other ranks and periodic images).
    pub ghosts: usize,
    /// Ghost entries sent.
    pub sent: usize,
    /// Bytes sent to other ranks (messages to itself not counted).
    pub bytes_sent: usize,
    /// Messages sent to other ranks.
    pub messages_sent: usize,
    /// The ranks exchanged with, not counting itself.
    pub neighbour_ranks: usize,
}

/// What the last migration moved, on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MigrationStats {
    /// Particles sent to other ranks.
    pub sent: usize,
    /// Particles received.
    pub received: usize,
    /// Bytes sent.
    pub bytes_sent: usize,
    /// Whether the boxes were cut anew (the first migration, or an imbalance past the
    /// threshold).
    pub rebalanced: bool,
}

/// Wall-clock times of the last calls, on this rank.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// The last [`DistributedSearch::migrate`] (with the decomposition when it cut anew).
    pub migrate: Duration,
    /// The halo exchange of the last [`DistributedSearch::update`].
    pub halo: Duration,
    /// The grid build of the last update plus the last pairs or lists.
    pub search: Duration,
}

/// Neighbour lists of a rank's particles in its local numbering: particle `i`'s neighbours
/// are `neighbors(i)`, ascending; an index below [`DistributedSearch::local_count`] is a
/// local particle, one at or above it the ghost `index - local_count`
/// ([`DistributedSearch::ghost_origin`]).
#[derive(Clone, Debug, Default)]
pub struct DistributedLists {
    offsets: Vec<usize>,
    indices: Vec<u32>,
}

impl DistributedLists {
    /// The number of lists (the local particle count).
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no lists.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The CSR offsets (`len() + 1` entries).
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// All lists back to back.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// The neighbours of local particle `i`.
    pub fn neighbors(&self, i: usize) -> &[u32] {
        &self.indices[self.offsets[i]..self.offsets[i + 1]]
    }
}

/// Fixed-radius neighbour search over particles distributed on the ranks of an MPI
/// communicator, driven like [`hhg_core::NeighborSearch`]: each step the solver migrates
/// its particles ([`DistributedSearch::migrate`], with its per-particle arrays), updates the
/// search ([`DistributedSearch::update`]: halo exchange and grid build) and reads lists or
/// pairs in its local numbering, ghosts numbered after the local particles.
///
/// Every method that communicates is collective: all ranks call it, in the same order.
/// A pair `(p, q)` is within the radius iff hhg-core's predicate
/// `(dx*dx + dy*dy) + dz*dz <= r*r` holds on the particles' coordinates (in a periodic
/// domain, on the wrapped coordinates by [`PeriodicBox::image_distance_squared`]), as in a
/// single-process [`Grid`] or [`PeriodicSearch`].
pub struct DistributedSearch<T: Real> {
    comm: SimpleCommunicator,
    rank: usize,
    radius: T,
    domain: Option<PeriodicBox<T>>,
    /// How far from a box its ghosts reach, in `f64`: the search radius with a margin.
    reach: f64,
    root: Bounds,
    decomposition: Option<Decomposition>,
    rebalance_threshold: f64,
    /// The balancing weight of a particle from its global id (`None`: every particle 1).
    weight: Option<BalanceWeight>,
    neighbours: Vec<Neighbour>,
    ids: Vec<u64>,
    local_positions: Vec<[T; 3]>,
    ghosts: Ghosts<T>,
    /// Per neighbour: the local particles sent in the last update, all shifts in order.
    send_lists: Vec<Vec<u32>>,
    /// Per neighbour: the ghosts received from it in the last update.
    receive_counts: Vec<usize>,
    points: Vec<[T; 3]>,
    grid: Grid<T>,
    pair_scratch: PairList<T>,
    list_scratch: NeighborLists<T>,
    halo_stats: HaloStats,
    migration_stats: MigrationStats,
    timings: Timings,
}

impl<T: Real> std::fmt::Debug for DistributedSearch<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributedSearch")
            .field("rank", &self.rank)
            .field("radius", &self.radius)
            .field("domain", &self.domain)
            .field("decomposition", &self.decomposition)
            .field("local_count", &self.ids.len())
            .field("ghost_count", &self.ghosts.origins.len())
            .finish_non_exhaustive()
    }
}

impl<T: Real + Pod> DistributedSearch<T> {
    /// A search of `radius` over the ranks of `comm` (duplicated, so its messages never meet
    /// the caller's), in open space (`domain` `None`) or in a periodic box.
    ///
    /// # Errors
    /// The radius is not finite and positive, or the periodic box is refused (a length not
    /// above twice the radius, a non-finite origin).
    pub fn new<C: Communicator>(
        comm: &C,
        radius: T,
        domain: Option<PeriodicBox<T>>,
    ) -> Result<Self, Error> {
        hhg_core::building_blocks::check_radius(radius)?;
        let mut root = Bounds::everything();
        // The grid's radius: the radius, plus a bound on the rounding of periodic images.
        let mut search_radius = radius;
        let mut reach = radius.to_f64() * (1.0 + 1e-5);
        if let Some(domain) = domain {
            // The same checks as the single-process periodic search.
            PeriodicSearch::new(radius, domain)?;
            let epsilon = if size_of::<T>() == 4 {
                f64::from(f32::EPSILON)
            } else {
                f64::EPSILON
            };
            let mut magnitude = 0.0f64;
            for a in 0..3 {
                if domain.periodic[a] {
                    let (o, l) = (domain.origin[a].to_f64(), domain.lengths[a].to_f64());
                    root.lo[a] = o;
                    root.hi[a] = o + l;
                    magnitude = magnitude.max(o.abs() + 2.0 * l);
                }
            }
            // A ghost moved down by a box length and the canonical image (the other point
            // moved up) differ by a few roundings of coordinates of this magnitude.
            let widened = radius.to_f64() * (1.0 + 1e-5) + 16.0 * epsilon * magnitude;
            search_radius = T::from_f64(widened * (1.0 + 4.0 * epsilon));
            reach = search_radius.to_f64() * (1.0 + 1e-5) + 16.0 * epsilon * magnitude;
        }
        let comm = comm.duplicate();
        Ok(Self {
            rank: comm.rank() as usize,
            comm,
            radius,
            domain,
            reach,
            root,
            decomposition: None,
            rebalance_threshold: DEFAULT_REBALANCE_THRESHOLD,
            weight: None,
            neighbours: Vec::new(),
            ids: Vec::new(),
            local_positions: Vec::new(),
            ghosts: Ghosts::default(),
            send_lists: Vec::new(),
            receive_counts: Vec::new(),
            points: Vec::new(),
            grid: Grid::new(search_radius)?,
            pair_scratch: PairList::default(),
            list_scratch: NeighborLists::default(),
            halo_stats: HaloStats::default(),
            migration_stats: MigrationStats::default(),
            timings: Timings::default(),
        })
    }

    /// Sets the imbalance (largest rank's particle count over the mean, or weight with
    /// [`DistributedSearch::balance_by`]) past which a migration cuts the boxes anew.
    ///
    /// # Errors
    /// A threshold that is not a finite number of at least 1.
    pub fn set_rebalance_threshold(&mut self, threshold: f64) -> Result<(), Error> {
        if !(threshold.is_finite() && threshold >= 1.0) {
            return Err(Error::Invalid(format!(
                "the rebalance threshold must be finite and at least 1, not {threshold}"
            )));
        }
        self.rebalance_threshold = threshold;
        Ok(())
    }

    /// The rebalance threshold.
    pub fn rebalance_threshold(&self) -> f64 {
        self.rebalance_threshold
    }

    /// Balances the boxes by a weight per particle instead of the particle count: `weight`
    /// gives the cost of the particle of a global id (for an SPH solver, 1 for a fluid
    /// particle and 0 for a static wall particle, whose cost per step is small). The cuts
    /// then leave each rank about the same total weight, and
    /// [`DistributedSearch::imbalance`] (and so the rebalance threshold) compares weights.
    /// A box whose particles all weigh 0 is cut by particle count.
    ///
    /// Not collective, but every rank must set the same weights: they take effect at the
    /// next cut of the boxes (the first [`DistributedSearch::migrate`], or a rebalance) and
    /// at the next imbalance check.
    pub fn balance_by(&mut self, weight: impl Fn(u64) -> u32 + Send + Sync + 'static) {
        self.weight = Some(Box::new(weight));
    }

    /// The balancing weights of `ids` (`None` when every particle weighs 1).
    fn weights_of(&self, ids: &[u64]) -> Option<Vec<u32>> {
        self.weight
            .as_ref()
            .map(|weight| ids.iter().map(|&id| weight(id)).collect())
    }

    /// The search radius.
    pub fn radius(&self) -> T {
        self.radius
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.comm.size() as usize
    }

    /// The boxes of the ranks, once the particles were first migrated.
    pub fn decomposition(&self) -> Option<&Decomposition> {
        self.decomposition.as_ref()
    }

    /// The local particles of the last update.
    pub fn local_count(&self) -> usize {
        self.ids.len()
    }

    /// The ghosts of the last update.
    pub fn ghost_count(&self) -> usize {
        self.ghosts.origins.len()
    }

    /// Where ghost `g` (local index `local_count() + g`) comes from.
    pub fn ghost_origin(&self, g: usize) -> GhostOrigin {
        self.ghosts.origins[g]
    }

    /// The position the search used for ghost `g` (the owner's position, moved by whole
    /// box lengths for a periodic image).
    pub fn ghost_position(&self, g: usize) -> [T; 3] {
        self.ghosts.positions[g]
    }

    /// The global id of local index `index` (a local particle or a ghost).
    pub fn global_id(&self, index: usize) -> u64 {
        match index.checked_sub(self.ids.len()) {
            None => self.ids[index],
            Some(g) => self.ghosts.origins[g].id,
        }
    }

    /// What the last halo exchange moved.
    pub fn halo_stats(&self) -> HaloStats {
        self.halo_stats
    }

    /// What the last migration moved.
    pub fn migration_stats(&self) -> MigrationStats {
        self.migration_stats
    }

    /// The times of the last calls on this rank.
    pub fn timings(&self) -> Timings {
        self.timings
    }

    /// Turns this rank's verdict into everyone's: `Ok` only where all ranks succeeded.
    fn agree(&self, local: Result<(), Error>) -> Result<(), Error> {
        let flag = if local.is_err() {
            self.rank as i64
        } else {
            i64::MAX
        };
        let mut lowest = 0i64;
        self.comm
            .all_reduce_into(&flag, &mut lowest, SystemOperation::min());
        match local {
            Err(e) => Err(e),
            Ok(()) if lowest == i64::MAX => Ok(()),
            Ok(()) => Err(Error::OnOtherRank {
                rank: lowest as usize,
            }),
        }
    }

    /// Checks the particles' arrays and coordinates and wraps them into a periodic box.
    fn check_and_wrap(
        &self,
        positions: &mut [[T; 3]],
        ids: &[u64],
        columns: &[&mut dyn Column],
    ) -> Result<(), Error> {
        let n = positions.len();
        check_ids(n, ids)?;
        for (c, column) in columns.iter().enumerate() {
            if column.len() != n {
                return Err(Error::LengthMismatch {
                    what: format!("column {c}"),
                    expected: n,
                    found: column.len(),
                });
            }
        }
        for (index, p) in positions.iter_mut().enumerate() {
            check_finite(index, ids[index], p.map(|x| x.to_f64()))?;
            if let Some(domain) = &self.domain {
                let (wrapped, _) = domain.wrap(*p).map_err(|e| {
                    Error::Invalid(format!("particle {index} (global id {}): {e}", ids[index]))
                })?;
                *p = wrapped;
            }
        }
        Ok(())
    }

    /// Cuts the boxes anew for the particles as they are now, balanced by their count or
    /// their weights (collective).
    fn decompose(&mut self, positions: &[[T; 3]], ids: &[u64]) {
        let points: Vec<[f64; 3]> = positions.iter().map(|p| p.map(|x| x.to_f64())).collect();
        let weights = self.weights_of(ids);
        let decomposition =
            Decomposition::bisect_weighted(&self.comm, self.root, &points, weights.as_deref());
        self.neighbours = self.find_neighbours(&decomposition);
        self.decomposition = Some(decomposition);
    }

    /// The periodic shifts to try: every combination of -1, 0, 1 on the periodic axes.
    fn shifts(&self) -> Vec<[i64; 3]> {
        let range = |a: usize| -> Vec<i64> {
            match &self.domain {
                Some(d) if d.periodic[a] => vec![-1, 0, 1],
                _ => vec![0],
            }
        };
        let mut out = Vec::new();
        for &x in &range(0) {
            for &y in &range(1) {
                for &z in &range(2) {
                    out.push([x, y, z]);
                }
            }
        }
        out
    }

    /// The translation of `shift` box lengths, in `f64`.
    fn offset(&self, shift: [i64; 3]) -> [f64; 3] {
        std::array::from_fn(|a| match &self.domain {
            Some(d) if shift[a] != 0 => shift[a] as f64 * d.lengths[a].to_f64(),
            _ => 0.0,
        })
    }

    /// The ranks this rank exchanges ghosts with: those whose box is within reach of this
    /// rank's box or one of its periodic images, either way round, so both sides of an
    /// exchange agree that it happens.
    fn find_neighbours(&self, decomposition: &Decomposition) -> Vec<Neighbour> {
        // A coarse, conservative test on boxes; the particles are tested exactly.
        let reach2 = (self.reach * (1.0 + 1e-6)).powi(2);
        let shifts = self.shifts();
        let me = self.rank;
        let mine = *decomposition.bounds(me);
        let mut out = Vec::new();
        for n in 0..decomposition.ranks() {
            let theirs = *decomposition.bounds(n);
            let mut shifts_out = Vec::new();
            let mut incoming = false;
            for &s in &shifts {
                if n == me && s == [0; 3] {
                    continue;
                }
                let offset = self.offset(s);
                if mine.translated(offset).distance_squared_to_box(&theirs) <= reach2 {
                    shifts_out.push(s);
                }
                if theirs.translated(offset).distance_squared_to_box(&mine) <= reach2 {
                    incoming = true;
                }
            }
            if !shifts_out.is_empty() || incoming {
                out.push(Neighbour {
                    rank: n,
                    shifts_out,
                });
            }
        }
        out
    }

    /// Moves every particle to the rank whose box holds it, with its global id and the
    /// entries of every column (bit for bit); in a periodic domain the positions are wrapped
    /// into the box first. The first call cuts the boxes; a later one cuts them anew when
    /// the largest rank holds more than the rebalance threshold times the mean (of particles,
    /// or of weight with [`DistributedSearch::balance_by`]). Collective.
    ///
    /// The particles that stay keep their order; arrivals follow, by sending rank.
    ///
    /// # Errors
    /// A column or the ids of another length than the positions, a non-finite coordinate,
    /// a coordinate too far outside a periodic box: on the rank that holds it, and
    /// [`Error::OnOtherRank`] on the others. Nothing is moved then.
    pub fn migrate(
        &mut self,
        positions: &mut Vec<[T; 3]>,
        ids: &mut Vec<u64>,
        columns: &mut [&mut dyn Column],
    ) -> Result<MigrationStats, Error> {
        let start = Instant::now();
        let checked = self.check_and_wrap(positions, ids, columns);
        self.agree(checked)?;
        let mut rebalanced = false;
        if self.decomposition.is_none() {
            self.decompose(positions, ids);
            rebalanced = true;
        }
        let mut stats = self.move_particles(positions, ids, columns)?;
        if !rebalanced && self.imbalance(ids) > self.rebalance_threshold {
            self.decompose(positions, ids);
            let again = self.move_particles(positions, ids, columns)?;
            stats.sent += again.sent;
            stats.received += again.received;
            stats.bytes_sent += again.bytes_sent;
            rebalanced = true;
        }
        stats.rebalanced = rebalanced;
        self.migration_stats = stats;
        self.timings.migrate = start.elapsed();
        Ok(stats)
    }

    /// The largest rank's share over the mean, for this rank's particles of global ids
    /// `ids`: of the particle count, or with [`DistributedSearch::balance_by`] of the weight
    /// (of the count where all particles weigh 0); 1 when there are no particles.
    /// Collective.
    pub fn imbalance(&self, ids: &[u64]) -> f64 {
        let weight = self
            .weights_of(ids)
            .map_or(ids.len() as u64, |w| w.iter().map(|&x| u64::from(x)).sum());
        let local = [weight, ids.len() as u64];
        let (mut largest, mut total) = ([0u64; 2], [0u64; 2]);
        self.comm
            .all_reduce_into(&local[..], &mut largest[..], SystemOperation::max());
        self.comm
            .all_reduce_into(&local[..], &mut total[..], SystemOperation::sum());
        let measure = if total[0] > 0 { 0 } else { 1 };
        if total[measure] == 0 {
            1.0
        } else {
            largest[measure] as f64 * self.ranks() as f64 / total[measure] as f64
        }
    }

    /// Sends every particle outside this rank's box to its owner and appends the arrivals.
    fn move_particles(
        &mut self,
        positions: &mut Vec<[T; 3]>,
        ids: &mut Vec<u64>,
        columns: &mut [&mut dyn Column],
    ) -> Result<MigrationStats, Error> {
        let decomposition = self.decomposition.as_ref().ok_or(Error::NotDecomposed)?;
        let size = self.ranks();
        let stride =
            8 + size_of::<[T; 3]>() + columns.iter().map(|c| c.entry_bytes()).sum::<usize>();
        let mut outgoing: Vec<Vec<u8>> = vec![Vec::new(); size];
        let mut keep = vec![true; positions.len()];
        let mut stats = MigrationStats::default();
        for (i, p) in positions.iter().enumerate() {
            let owner = decomposition.owner(p.map(|x| x.to_f64()));
            if owner == self.rank {
                continue;
            }
            keep[i] = false;
            let out = &mut outgoing[owner];
            out.extend_from_slice(&ids[i].to_le_bytes());
            out.extend_from_slice(bytemuck::bytes_of(p));
            for column in columns.iter() {
                column.pack(i, out);
            }
            stats.sent += 1;
        }
        // The sizes first (one collective of one count per rank), then the particles.
        let counts: Vec<u64> = outgoing.iter().map(|o| o.len() as u64).collect();
        let mut incoming_counts = vec![0u64; size];
        self.comm
            .all_to_all_into(&counts[..], &mut incoming_counts[..]);
        stats.bytes_sent = counts.iter().sum::<u64>() as usize;
        let mut received: Vec<Vec<u8>> = vec![Vec::new(); size];
        for (source, &count) in incoming_counts.iter().enumerate() {
            received[source] = vec![0u8; count as usize];
        }
        let comm = &self.comm;
        mpi::request::multiple_scope(2 * size, |scope, requests| {
            for (destination, message) in outgoing.iter().enumerate() {
                if !message.is_empty() {
                    requests.add(
                        comm.process_at_rank(destination as i32)
                            .immediate_send_with_tag(scope, &message[..], MIGRATION_TAG),
                    );
                }
            }
            for (source, buffer) in received.iter_mut().enumerate() {
                if !buffer.is_empty() {
                    requests.add(
                        comm.process_at_rank(source as i32)
                            .immediate_receive_into_with_tag(scope, &mut buffer[..], MIGRATION_TAG),
                    );
                }
            }
            let mut done = Vec::new();
            requests.wait_all(&mut done);
        });
        retain_by_mask(positions, &keep);
        retain_by_mask(ids, &keep);
        for column in columns.iter_mut() {
            column.retain_mask(&keep);
        }
        for message in &received {
            if message.len() % stride != 0 {
                return Err(Error::Invalid(format!(
                    "a migration message of {} bytes is not a whole number of {stride}-byte particles",
                    message.len()
                )));
            }
            for record in message.chunks_exact(stride) {
                ids.push(u64::from_le_bytes(record[..8].try_into().expect("8 bytes")));
                let end = 8 + size_of::<[T; 3]>();
                positions.push(bytemuck::pod_read_unaligned(&record[8..end]));
                let mut at = end;
                for column in columns.iter_mut() {
                    let bytes = column.entry_bytes();
                    column.push_bytes(&record[at..at + bytes]);
                    at += bytes;
                }
                stats.received += 1;
            }
        }
        Ok(stats)
    }

    /// Exchanges the halo for the particles' current positions and builds the grid over
    /// local and ghost particles. Collective. The particles must lie in this rank's box (as
    /// [`DistributedSearch::migrate`] leaves them).
    ///
    /// Each neighbour rank gets one message (non-blocking sends): for each periodic image,
    /// the ids and positions of this rank's particles within reach of the neighbour's box.
    ///
    /// # Errors
    /// Ids of another length than the positions, a non-finite coordinate, a particle outside
    /// this rank's box ([`Error::NotOwned`]), no migration yet, too many points for the grid:
    /// on the rank that holds it, and [`Error::OnOtherRank`] on the others.
    pub fn update(&mut self, positions: &[[T; 3]], ids: &[u64]) -> Result<(), Error> {
        let checked = self.check_owned(positions, ids);
        self.agree(checked)?;
        let start = Instant::now();
        self.ids.clear();
        self.ids.extend_from_slice(ids);
        self.local_positions.clear();
        self.local_positions.extend_from_slice(positions);
        self.exchange_halo();
        self.timings.halo = start.elapsed();

        let start = Instant::now();
        self.points.clear();
        self.points.extend_from_slice(positions);
        self.points.extend_from_slice(&self.ghosts.positions);
        let built = self.grid.build(&self.points).map_err(Error::from);
        self.timings.search = start.elapsed();
        self.agree(built)
    }

    fn check_owned(&self, positions: &[[T; 3]], ids: &[u64]) -> Result<(), Error> {
        let decomposition = self.decomposition.as_ref().ok_or(Error::NotDecomposed)?;
        check_ids(positions.len(), ids)?;
        let mine = decomposition.bounds(self.rank);
        for (index, p) in positions.iter().enumerate() {
            let q = p.map(|x| x.to_f64());
            check_finite(index, ids[index], q)?;
            if !mine.contains(q) {
                return Err(Error::NotOwned {
                    index,
                    id: ids[index],
                    position: q,
                    owner: decomposition.owner(q),
                });
            }
        }
        Ok(())
    }

    /// The halo exchange: decides which particles are whose ghosts, sends them, receives
    /// this rank's ghosts.
    fn exchange_halo(&mut self) {
        let decomposition = self.decomposition.as_ref().expect("checked by update");
        let mine = *decomposition.bounds(self.rank);
        let reach2 = self.reach * self.reach;
        // Only particles within reach of their own box's faces can be anyone's ghost. Both
        // selections run in parallel and keep the particles' order (rayon's collect does).
        let (positions, domain, reach) = (&self.local_positions, &self.domain, self.reach);
        let border: Vec<u32> = (0..positions.len() as u32)
            .into_par_iter()
            .filter(|&i| mine.depth_of(positions[i as usize].map(|x| x.to_f64())) <= reach)
            .collect();
        let mut messages: Vec<Vec<u8>> = Vec::with_capacity(self.neighbours.len());
        self.send_lists.clear();
        let mut stats = HaloStats::default();
        for neighbour in &self.neighbours {
            let theirs = decomposition.bounds(neighbour.rank);
            let mut message = Vec::new();
            let mut sent = Vec::new();
            message.extend_from_slice(&(neighbour.shifts_out.len() as u64).to_le_bytes());
            for &shift in &neighbour.shifts_out {
                let first = sent.len();
                let selected: Vec<u32> = border
                    .par_iter()
                    .copied()
                    .filter(|&i| {
                        let p = image(domain, positions[i as usize], shift);
                        theirs.distance_squared_to(p.map(|x| x.to_f64())) <= reach2
                    })
                    .collect();
                sent.extend_from_slice(&selected);
                for s in shift {
                    message.extend_from_slice(&s.to_le_bytes());
                }
                message.extend_from_slice(&((sent.len() - first) as u64).to_le_bytes());
                for &i in &sent[first..] {
                    message.extend_from_slice(&self.ids[i as usize].to_le_bytes());
                    message
                        .extend_from_slice(bytemuck::bytes_of(&self.local_positions[i as usize]));
                }
            }
            stats.sent += sent.len();
            if neighbour.rank != self.rank {
                stats.bytes_sent += message.len();
                stats.messages_sent += 1;
                stats.neighbour_ranks += 1;
            }
            self.send_lists.push(sent);
            messages.push(message);
        }
        let received = exchange(&self.comm, &self.neighbours, self.rank, &messages, HALO_TAG);
        self.ghosts.positions.clear();
        self.ghosts.unshifted.clear();
        self.ghosts.shifts.clear();
        self.ghosts.origins.clear();
        self.receive_counts.clear();
        let ranks: Vec<usize> = self.neighbours.iter().map(|n| n.rank).collect();
        for (rank, message) in ranks.into_iter().zip(&received) {
            let before = self.ghosts.origins.len();
            self.parse_halo_message(rank, message);
            self.receive_counts.push(self.ghosts.origins.len() - before);
        }
        stats.ghosts = self.ghosts.origins.len();
        self.halo_stats = stats;
    }

    fn parse_halo_message(&mut self, rank: usize, message: &[u8]) {
        let mut reader = Reader { bytes: message };
        let segments = reader.u64();
        for _ in 0..segments {
            let shift = [reader.i64(), reader.i64(), reader.i64()];
            let count = reader.u64();
            for _ in 0..count {
                let id = reader.u64();
                let p: [T; 3] = bytemuck::pod_read_unaligned(reader.take(size_of::<[T; 3]>()));
                self.ghosts.positions.push(image(&self.domain, p, shift));
                self.ghosts.unshifted.push(p);
                self.ghosts.shifts.push(shift);
                self.ghosts.origins.push(GhostOrigin { rank, id });
            }
        }
        debug_assert!(reader.bytes.is_empty());
    }

    /// Whether local particle `i` and local index `j` (a particle or a ghost) are within
    /// the radius by the single-process rule (the grid may propose a little more in a
    /// periodic domain, whose search radius is widened for the images' rounding).
    fn within(&self, i: usize, j: usize) -> bool {
        let Some(domain) = &self.domain else {
            return true;
        };
        let r2 = self.radius * self.radius;
        let n = self.ids.len();
        let a = self.local_positions[i];
        match j.checked_sub(n) {
            None => T::distance_squared(a, self.local_positions[j]) <= r2,
            Some(g) => {
                domain.image_distance_squared(a, self.ghosts.unshifted[g], self.ghosts.shifts[g])
                    <= r2
            }
        }
    }

    /// The unique pairs within the radius that this rank reports, in its local numbering
    /// (`[i, j]` with `i` a local particle and `j` a local particle or a ghost, numbered
    /// after the local particles). Over all ranks, every pair of particles within the radius
    /// (in a periodic domain, of minimum images) is reported exactly once: a pair of local
    /// particles by their rank, a pair across ranks by the owner of the smaller global id.
    /// Not collective.
    ///
    /// # Errors
    /// The output would exceed memory (hhg-core's refusal).
    pub fn pairs(&mut self, out: &mut Vec<[u32; 2]>) -> Result<(), Error> {
        let start = Instant::now();
        out.clear();
        self.grid.pairs(&mut self.pair_scratch)?;
        let n = self.ids.len();
        for &[p, q] in self.pair_scratch.pairs() {
            let (a, b) = (p.min(q) as usize, p.max(q) as usize);
            if a >= n {
                continue;
            }
            if b >= n && self.ids[a] > self.ghosts.origins[b - n].id {
                continue;
            }
            if self.within(a, b) {
                out.push([a as u32, b as u32]);
            }
        }
        self.timings.search += start.elapsed();
        Ok(())
    }

    /// The neighbour lists of the local particles (local particles and ghosts, both
    /// directions of every pair, without the particle itself). Not collective.
    ///
    /// # Errors
    /// The output would exceed memory (hhg-core's refusal).
    pub fn neighbor_lists(&mut self, out: &mut DistributedLists) -> Result<(), Error> {
        let start = Instant::now();
        self.grid
            .query(&self.local_positions, &mut self.list_scratch)?;
        out.offsets.clear();
        out.indices.clear();
        out.offsets.push(0);
        for i in 0..self.ids.len() {
            for &j in self.list_scratch.neighbors(i) {
                if j as usize != i && self.within(i, j as usize) {
                    out.indices.push(j);
                }
            }
            out.offsets.push(out.indices.len());
        }
        self.timings.search += start.elapsed();
        Ok(())
    }

    /// Sends each local particle's `values` entry to the ranks that hold it as a ghost, along
    /// the halo of the last update, and fills `ghosts` with the ghosts' entries (in ghost
    /// order). One message per neighbour rank; the values are not shifted for periodic
    /// images. Collective.
    ///
    /// # Errors
    /// `values` of another length than the local particles of the last update (on that
    /// rank; [`Error::OnOtherRank`] on the others).
    pub fn exchange_ghost_values<V: Pod>(
        &self,
        values: &[V],
        ghosts: &mut Vec<V>,
    ) -> Result<(), Error> {
        let checked = if values.len() == self.ids.len() {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                what: "the values to exchange".into(),
                expected: self.ids.len(),
                found: values.len(),
            })
        };
        self.agree(checked)?;
        let messages: Vec<Vec<u8>> = self
            .send_lists
            .iter()
            .map(|list| {
                let mut message = Vec::with_capacity(list.len() * size_of::<V>());
                for &i in list {
                    message.extend_from_slice(bytemuck::bytes_of(&values[i as usize]));
                }
                message
            })
            .collect();
        let received = exchange(
            &self.comm,
            &self.neighbours,
            self.rank,
            &messages,
            VALUES_TAG,
        );
        ghosts.clear();
        for (message, &count) in received.iter().zip(&self.receive_counts) {
            debug_assert_eq!(message.len(), count * size_of::<V>());
            ghosts.extend(
                message
                    .chunks_exact(size_of::<V>())
                    .map(bytemuck::pod_read_unaligned::<V>),
            );
        }
        Ok(())
    }
}

/// Refuses ids of another length than the positions.
fn check_ids(particles: usize, ids: &[u64]) -> Result<(), Error> {
    if ids.len() == particles {
        return Ok(());
    }
    Err(Error::LengthMismatch {
        what: "the global ids".into(),
        expected: particles,
        found: ids.len(),
    })
}

/// Refuses a non-finite coordinate of particle `index`, naming it.
fn check_finite(index: usize, id: u64, p: [f64; 3]) -> Result<(), Error> {
    match (0..3).find(|&axis| !p[axis].is_finite()) {
        None => Ok(()),
        Some(axis) => Err(Error::NonFinite {
            index,
            id,
            axis,
            value: p[axis],
        }),
    }
}

/// The image of `p` moved by `shift` box lengths, as hhg-core computes it (`p` itself in
/// open space).
fn image<T: Real>(domain: &Option<PeriodicBox<T>>, p: [T; 3], shift: [i64; 3]) -> [T; 3] {
    match domain {
        Some(domain) => domain.shifted(p, shift),
        None => p,
    }
}

/// Sends `messages[k]` to neighbour `k` (non-blocking) and receives one message from each
/// neighbour, in the neighbours' order; the message to this rank itself is copied.
fn exchange(
    comm: &SimpleCommunicator,
    neighbours: &[Neighbour],
    me: usize,
    messages: &[Vec<u8>],
    tag: i32,
) -> Vec<Vec<u8>> {
    let mut received = vec![Vec::new(); neighbours.len()];
    mpi::request::multiple_scope(neighbours.len(), |scope, requests| {
        for (neighbour, message) in neighbours.iter().zip(messages) {
            if neighbour.rank != me {
                requests.add(
                    comm.process_at_rank(neighbour.rank as i32)
                        .immediate_send_with_tag(scope, &message[..], tag),
                );
            }
        }
        for (k, neighbour) in neighbours.iter().enumerate() {
            received[k] = if neighbour.rank == me {
                messages[k].clone()
            } else {
                let (message, _) = comm
                    .process_at_rank(neighbour.rank as i32)
                    .receive_vec_with_tag::<u8>(tag);
                message
            };
        }
        let mut done = Vec::new();
        requests.wait_all(&mut done);
    });
    received
}

/// Reads little-endian values off the front of a message.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> &'a [u8] {
        let (head, tail) = self.bytes.split_at(count);
        self.bytes = tail;
        head
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().expect("8 bytes"))
    }

    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take(8).try_into().expect("8 bytes"))
    }
}
