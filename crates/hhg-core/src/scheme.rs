//! The one shape every hashing scheme's fixed-radius search has (hhg-core's geometric
//! hashing, and the XOR, Pouchol and group schemes of the sibling crates), so that a caller
//! or the bench swaps schemes with one line; and the bucket statistics each scheme reports.

use crate::error::Error;
use crate::grid::Grid;
use crate::lists::NeighborLists;
use crate::pairs::PairList;
use crate::real::Real;

/// Bucket-load statistics of a built search (Jung and Choi's measure), and the cost of its
/// collisions: how many candidate tests its unique-pairs search makes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SchemeStats {
    /// Buckets in the table.
    pub buckets: usize,
    /// Buckets holding at least one point.
    pub occupied: usize,
    /// The most points in one bucket.
    pub max_load: usize,
    /// Mean points per occupied bucket.
    pub mean_load: f64,
    /// Variance of the points per occupied bucket.
    pub load_variance: f64,
    /// Occupied buckets holding more than [`SchemeStats::OVERLOAD`] points.
    pub overloaded: usize,
    /// Candidate pairs the unique-pairs search tests (each distance test counted once).
    pub pair_candidates: u64,
}

impl SchemeStats {
    /// The load above which a bucket counts as overloaded.
    pub const OVERLOAD: usize = 64;

    /// The load statistics of buckets with the given start offsets (`starts[b]..starts[b + 1]`
    /// holds bucket `b`), with `pair_candidates` left at 0.
    pub fn from_starts(starts: &[u32]) -> Self {
        let buckets = starts.len().saturating_sub(1);
        let loads = || starts.windows(2).map(|w| (w[1] - w[0]) as usize);
        Self::from_loads(buckets, loads())
    }

    /// The load statistics of `buckets` buckets with the given per-bucket loads (empty
    /// buckets may be left out), with `pair_candidates` left at 0.
    pub fn from_loads(buckets: usize, loads: impl Iterator<Item = usize> + Clone) -> Self {
        let occupied = loads.clone().filter(|&l| l > 0).count();
        let total: usize = loads.clone().sum();
        let max_load = loads.clone().max().unwrap_or(0);
        let mean_load = if occupied > 0 {
            total as f64 / occupied as f64
        } else {
            0.0
        };
        let load_variance = if occupied > 0 {
            loads
                .clone()
                .filter(|&l| l > 0)
                .map(|l| (l as f64 - mean_load).powi(2))
                .sum::<f64>()
                / occupied as f64
        } else {
            0.0
        };
        let overloaded = loads.filter(|&l| l > Self::OVERLOAD).count();
        Self {
            buckets,
            occupied,
            max_load,
            mean_load,
            load_variance,
            overloaded,
            pair_candidates: 0,
        }
    }
}

/// A fixed-radius neighbour search over one point set, whatever its hashing scheme.
///
/// Every implementation reports exactly the pairs `(dx*dx + dy*dy) + dz*dz <= r*r` (in the
/// input precision, that order, no FMA), with the same errors for bad input, so swapping
/// schemes changes speed, never results.
pub trait FixedRadiusScheme<T: Real>: Send + Sync {
    /// The scheme's short name (`core`, `xor`, `pouchol`, `group`, ...).
    fn name(&self) -> &'static str;

    /// The search radius.
    fn radius(&self) -> T;

    /// Builds the search over `points` (buffers are reused across builds).
    fn build(&mut self, points: &[[T; 3]]) -> Result<(), Error>;

    /// How many points the last build held.
    fn len(&self) -> usize;

    /// Tells whether the last build held no point.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every pair `[i, j]` within the radius, `i < j`, exactly once, into `out` (without
    /// distances, refilled), in an order that does not depend on the thread count.
    ///
    /// Fails with [`Error::OutOfMemory`] or [`Error::OutputTooLarge`] (past the list's cap,
    /// [`PairList::set_max_pairs`]) and then leaves `out` empty.
    fn pairs(&self, out: &mut PairList<T>) -> Result<(), Error>;

    /// Per-point neighbour lists in CSR form, both directions, each ascending.
    ///
    /// Fails as [`FixedRadiusScheme::pairs`] does and then leaves no list.
    fn neighbor_lists(&self, out: &mut NeighborLists<T>) -> Result<(), Error>;

    /// Calls `visit(i, j)` for every pair (`i < j`), sequentially; stores nothing.
    fn for_each_pair(&self, visit: &mut dyn FnMut(u32, u32));

    /// The points within the radius of `point` (any point, not necessarily in the set),
    /// ascending, into `out` (cleared first).
    fn query_point(&self, point: [T; 3], out: &mut Vec<u32>) -> Result<(), Error>;

    /// Bucket-load statistics of the last build and the candidate tests of its pairs search.
    fn stats(&self) -> SchemeStats;
}

/// hhg-core's own scheme: [`Grid`] (geometric hashing with power-of-two dims and the
/// 13-forward half neighbourhood) behind [`FixedRadiusScheme`].
#[derive(Debug)]
pub struct CoreScheme<T: Real> {
    grid: Grid<T>,
}

impl<T: Real> CoreScheme<T> {
    /// An empty search within `radius`.
    pub fn new(radius: T) -> Result<Self, Error> {
        Ok(Self {
            grid: Grid::new(radius)?,
        })
    }

    /// The underlying grid.
    pub fn grid(&self) -> &Grid<T> {
        &self.grid
    }

    /// The underlying grid, for settings such as the kernel.
    pub fn grid_mut(&mut self) -> &mut Grid<T> {
        &mut self.grid
    }
}

impl<T: Real> FixedRadiusScheme<T> for CoreScheme<T> {
    fn name(&self) -> &'static str {
        "core"
    }

    fn radius(&self) -> T {
        self.grid.radius()
    }

    fn build(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        self.grid.build(points)
    }

    fn len(&self) -> usize {
        self.grid.len()
    }

    fn pairs(&self, out: &mut PairList<T>) -> Result<(), Error> {
        self.grid.pairs(out)
    }

    fn neighbor_lists(&self, out: &mut NeighborLists<T>) -> Result<(), Error> {
        self.grid.neighbor_lists(out)
    }

    fn for_each_pair(&self, visit: &mut dyn FnMut(u32, u32)) {
        self.grid.for_each_pair(|i, j, _| visit(i, j));
    }

    fn query_point(&self, point: [T; 3], out: &mut Vec<u32>) -> Result<(), Error> {
        self.grid.query_point(point, out)
    }

    fn stats(&self) -> SchemeStats {
        let mut stats = SchemeStats::from_starts(&self.grid.starts);
        stats.pair_candidates = self.grid.pair_candidates();
        stats
    }
}
