//! [`MultilevelSearch`]: Eitz and Lixu's multilevel hashing (2007) for particles with their
//! own radii: one XOR-hashed table per level, each particle in the level that fits it.
//!
//! # Design
//!
//! Particles `i` and `j` are neighbours iff `|xi - xj| <= max(ri, rj)`, evaluated exactly as
//! [`hhg_core::broad::sphere_pair_within`] with the `Max` rule does (the rule of
//! [`hhg_core::broad::VariableRadiusSearch`] with [`hhg_core::broad::RadiusRule::Max`]).
//!
//! - **Levels**: level `k` has cubic cells of edge `c0 * 2^k`, where `c0` is the smallest
//!   positive radius times `1 + CELL_MARGIN` (never below `extent * 2^-26`, so that the finest
//!   level's cell coordinates stay in range; 1 when no radius is positive). Particle `i` goes
//!   to the first level whose cell is at least `ri * (1 + CELL_MARGIN)`; particles of radius 0
//!   go to level 0. Only levels that receive particles are built, every one over the same
//!   origin (the minimum of all positions).
//! - **Build**: the particles are grouped by level with [`hhg_core::building_blocks::counting_sort`]; each
//!   level is a table of its own, built like the XOR scheme's: cells and XOR keys 8 lanes at a
//!   time, counting sort by bucket, cells ordered inside their buckets, sorted SoA columns
//!   with [`hhg_core::PointColumns::gather_from`], and the radii in the same order.
//! - **Pairs**: for two neighbours with `ri >= rj`, `i` sits in the coarser (or the same)
//!   level `k`, whose cells are at least `ri * (1 + CELL_MARGIN)`, so their level-`k` cells are
//!   adjacent. A particle therefore tests its own level's half neighbourhood (the later
//!   points of its own cell and the 13 forward cells, each looked up by cell in its bucket)
//!   and the 27 cells around it in every coarser level; every pair is found once. The
//!   particles of a cell that share their cell in a coarser level share that lookup.
//!   Work units are bucket ranges of every level, run in parallel, concatenated in order.
//! - **Queries**: the particles whose radius reaches a point `p` (`|p - xj| <= rj`, an SPH
//!   gather) are in the 27 cells around `p` in every level.

use hhg_core::building_blocks::{
    CELL_MARGIN, CellTable, FORWARD_OFFSETS, LANES, NEIGHBOURHOOD_OFFSETS, SortScratch, bounds,
    check_count, counting_sort,
};
use hhg_core::{Error, Kernel, NeighborLists, PairList, Points, Real};
use rayon::prelude::*;

use crate::hash::{CellHasher, KeyRule, Primes, XorHash};
use crate::kernel::{MaskKernel, ScalarKernel, SimdKernel, spheres_point, spheres_run};
use crate::table::{Buckets, TableSize, add, check_point, near_span};

/// The finest level spans at most `2^BASE_SPAN_BITS` cells of the scene's extent.
const BASE_SPAN_BITS: i32 = 26;

/// One level's table and the radii of its particles in sorted order.
#[derive(Debug)]
struct Level<T: Real> {
    exponent: u32,
    hasher: CellHasher,
    table: Buckets<T>,
    /// Radii by sorted position, padded with [`Real::PAD`] for 8-lane loads.
    radii: Vec<T>,
}

/// What one level of a built [`MultilevelSearch`] holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultilevelLevel {
    /// The level number `k`: cells of edge `base_cell * 2^k`.
    pub exponent: u32,
    /// The cell edge.
    pub cell: f64,
    /// How many particles the level holds.
    pub particles: usize,
    /// How many buckets its table has.
    pub buckets: usize,
}

/// Neighbour search for particles with their own radii on multilevel XOR hashing (Eitz and
/// Lixu): `i` and `j` are neighbours iff `|xi - xj| <= max(ri, rj)`.
///
/// ```
/// use hhg_xor::{MultilevelSearch, Primes};
///
/// let points = [[0.0f32, 0.0, 0.0], [1.5, 0.0, 0.0], [10.0, 0.0, 0.0]];
/// let radii = [2.0f32, 0.5, 0.5];
/// let mut search = MultilevelSearch::new(Primes::Teschner);
/// search.build(&points, &radii)?;
/// let mut pairs = hhg_core::PairList::default();
/// search.pairs(&mut pairs)?;
/// assert_eq!(pairs.pairs(), [[0, 1]]); // 1.5 <= max(2.0, 0.5)
/// assert_eq!(search.levels().len(), 2);
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct MultilevelSearch<T: Real> {
    primes: Primes,
    size: TableSize,
    kernel: Kernel,
    len: usize,
    base_cell: f64,
    levels: Vec<Level<T>>,
    used: usize,
    ladder: Vec<f64>,
    exponents: Vec<u32>,
    member_starts: Vec<u32>,
    members: Vec<u32>,
    sort_scratch: SortScratch,
    /// Work units: (level index, bucket range).
    units: Vec<(u32, u32, u32)>,
}

impl<T: Real> MultilevelSearch<T> {
    /// An empty search hashing with `primes`, about 2 buckets per particle in every level.
    pub fn new(primes: Primes) -> Self {
        Self {
            primes,
            size: TableSize::default(),
            kernel: Kernel::Simd,
            len: 0,
            base_cell: 1.0,
            levels: Vec::new(),
            used: 0,
            ladder: Vec::new(),
            exponents: Vec::new(),
            member_starts: Vec::new(),
            members: Vec::new(),
            sort_scratch: SortScratch::default(),
            units: Vec::new(),
        }
    }

    /// Sets the table size (per level) of later builds.
    pub fn set_table_size(&mut self, size: TableSize) -> Result<(), Error> {
        size.check()?;
        self.size = size;
        Ok(())
    }

    /// Chooses the SIMD (default) or the scalar reference kernel; both give identical results.
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
    }

    /// The table size (per level) of later builds.
    pub fn table_size(&self) -> TableSize {
        self.size
    }

    /// The kernel later searches run.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The primes the levels hash with.
    pub fn primes(&self) -> Primes {
        self.primes
    }

    /// How many particles the last build held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Tells whether the last build held no particle.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cell edge of level 0 in the last build.
    pub fn base_cell(&self) -> f64 {
        self.base_cell
    }

    /// The levels that hold particles, finest first.
    pub fn levels(&self) -> Vec<MultilevelLevel> {
        self.levels[..self.used]
            .iter()
            .map(|level| MultilevelLevel {
                exponent: level.exponent,
                cell: level.hasher.table.cell,
                particles: level.table.len(),
                buckets: level.hasher.hash.buckets(),
            })
            .collect()
    }

    /// Builds the search over `points` with radii `radii` (finite, `>= 0`, with a finite
    /// square; one per point), refusing bad input with the errors of
    /// [`hhg_core::broad::VariableRadiusSearch::build`]; a refused build leaves the previous
    /// one in place.
    pub fn build(&mut self, points: &[[T; 3]], radii: &[T]) -> Result<(), Error> {
        if points.len() != radii.len() {
            return Err(Error::LengthMismatch {
                x: points.len(),
                y: radii.len(),
                z: points.len(),
            });
        }
        let n = points.len();
        check_count(n)?;
        if let Some(error) = (0..n)
            .into_par_iter()
            .find_map_first(|i| check_particle(points[i], radii[i], i).err())
        {
            return Err(error);
        }
        let Some(bounds) = bounds(Points::Aos(points))? else {
            self.len = 0;
            self.used = 0;
            self.units.clear();
            return Ok(());
        };
        let extent = (0..3)
            .map(|a| bounds.max[a] - bounds.min[a])
            .fold(0.0f64, f64::max);
        if !extent.is_finite() {
            // Refused with hhg-core's error before anything changes (no cell edge spans an
            // infinite extent in range).
            CellTable::with_cell(&bounds, n, 1.0, 64, Points::Aos(points))?;
        }
        self.len = 0;
        self.used = 0;
        self.units.clear();
        let (smallest, largest) = radii
            .par_iter()
            .map(|r| {
                let r = r.to_f64();
                (if r > 0.0 { r } else { f64::INFINITY }, r)
            })
            .reduce(|| (f64::INFINITY, 0.0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
        let floor = extent * f64::from(-BASE_SPAN_BITS).exp2();
        let mut base = if smallest.is_finite() {
            smallest * (1.0 + CELL_MARGIN)
        } else {
            0.0
        };
        base = base.max(floor);
        if !(base > 0.0 && base.is_finite()) {
            base = 1.0;
        }
        self.base_cell = base;
        self.ladder.clear();
        let need = largest * (1.0 + CELL_MARGIN);
        let mut cell = base;
        loop {
            self.ladder.push(cell);
            if cell >= need {
                break;
            }
            cell *= 2.0;
        }
        let ladder = &self.ladder;
        self.exponents.resize(n, 0);
        self.exponents
            .par_iter_mut()
            .zip(radii.par_iter())
            .for_each(|(e, r)| {
                let need = r.to_f64() * (1.0 + CELL_MARGIN);
                *e = ladder.partition_point(|&cell| cell < need) as u32;
            });
        counting_sort(
            &self.exponents,
            ladder.len(),
            &mut self.member_starts,
            &mut self.members,
            &mut self.sort_scratch,
        );
        for exponent in 0..ladder.len() {
            let (s, e) = (
                self.member_starts[exponent] as usize,
                self.member_starts[exponent + 1] as usize,
            );
            if s == e {
                continue;
            }
            let members = &self.members[s..e];
            let table = CellTable::with_cell(
                &bounds,
                members.len(),
                ladder[exponent],
                64,
                Points::Aos(points),
            )?;
            let hasher = CellHasher {
                table,
                hash: XorHash::new(self.primes, self.size.buckets(members.len()))?,
                rule: KeyRule::Xor,
            };
            if self.levels.len() == self.used {
                self.levels.push(Level {
                    exponent: 0,
                    hasher,
                    table: Buckets::default(),
                    radii: Vec::new(),
                });
            }
            let level = &mut self.levels[self.used];
            level.exponent = exponent as u32;
            level.hasher = hasher;
            level
                .table
                .build(points, Some(members), &hasher, self.kernel)?;
            level.radii.clear();
            level
                .radii
                .extend(level.table.order.iter().map(|&i| radii[i as usize]));
            level.radii.extend([T::PAD; LANES]);
            for &(lo, hi) in &level.table.units {
                self.units.push((self.used as u32, lo, hi));
            }
            self.used += 1;
        }
        self.len = n;
        Ok(())
    }

    /// Walks the pairs found from the particles of one work unit: per cell run, the run's
    /// half neighbourhood in its own level, then the 27 cells around its particles in every
    /// coarser level; calls `emit(i, j)` with caller indices.
    #[inline(always)]
    fn walk_unit<K: MaskKernel>(&self, unit: (u32, u32, u32), emit: &mut impl FnMut(u32, u32)) {
        let (li, lo, hi) = unit;
        let level = &self.levels[li as usize];
        let coarser = &self.levels[li as usize + 1..self.used];
        let table = &level.table;
        let radii = &level.radii[..];
        for b in lo..hi {
            table.for_each_run(b, |s, e, c| {
                let mut same =
                    |p: u32, q: u32| emit(table.order[p as usize], table.order[q as usize]);
                spheres_run::<T, K>(table, radii, (s, e), table, radii, (s, e), true, &mut same);
                let cells = FORWARD_OFFSETS.map(|offset| add(c, offset));
                let keys = cells.map(|n| level.hasher.key(n));
                let mut runs = [(0, 0); 13];
                table.runs(&keys, &cells, &mut runs);
                table.touch(&runs);
                for run in runs {
                    if run.0 < run.1 {
                        spheres_run::<T, K>(
                            table,
                            radii,
                            (s, e),
                            table,
                            radii,
                            run,
                            false,
                            &mut same,
                        );
                    }
                }
                for other in coarser {
                    let mut cross = |p: u32, q: u32| {
                        emit(table.order[p as usize], other.table.order[q as usize])
                    };
                    // Consecutive particles of the run that share their coarser cell share
                    // its 27-cell lookup.
                    let mut start = s;
                    while start < e {
                        let cell = other.hasher.cell(table.sorted.point(start as usize));
                        let mut end = start + 1;
                        while end < e && other.hasher.cell(table.sorted.point(end as usize)) == cell
                        {
                            end += 1;
                        }
                        let cells = NEIGHBOURHOOD_OFFSETS.map(|offset| add(cell, offset));
                        let keys = cells.map(|n| other.hasher.key(n));
                        let mut runs = [(0, 0); 27];
                        other.table.runs(&keys, &cells, &mut runs);
                        other.table.touch(&runs);
                        for run in runs {
                            if run.0 < run.1 {
                                spheres_run::<T, K>(
                                    table,
                                    radii,
                                    (start, end),
                                    &other.table,
                                    &other.radii,
                                    run,
                                    false,
                                    &mut cross,
                                );
                            }
                        }
                        start = end;
                    }
                }
            });
        }
    }

    /// Every pair, in unit order, with kernel `K`.
    fn pairs_with<K: MaskKernel>(&self, out: &mut PairList<T>) -> Result<(), Error> {
        out.collect_units(self.units.len(), |u, sink| {
            self.walk_unit::<K>(self.units[u], &mut |i, j| {
                sink.push(if i < j { [i, j] } else { [j, i] })
            })
        })
    }

    /// Every neighbour pair `[i, j]`, `i < j`, exactly once, into `out` (refilled, without
    /// distances), in an order that does not depend on the thread count.
    ///
    /// Fails with [`Error::OutOfMemory`] or [`Error::OutputTooLarge`] (past the list's cap,
    /// [`PairList::set_max_pairs`]) and then leaves `out` empty.
    pub fn pairs(&self, out: &mut PairList<T>) -> Result<(), Error> {
        match self.kernel {
            Kernel::Simd => self.pairs_with::<SimdKernel>(out),
            Kernel::Scalar => self.pairs_with::<ScalarKernel>(out),
        }
    }

    /// Calls `visit(i, j)` for every pair (`i < j`), sequentially, in the order of
    /// [`MultilevelSearch::pairs`]; stores nothing.
    pub fn for_each_pair(&self, mut visit: impl FnMut(u32, u32)) {
        let mut emit = |i: u32, j: u32| if i < j { visit(i, j) } else { visit(j, i) };
        for &unit in &self.units {
            match self.kernel {
                Kernel::Simd => self.walk_unit::<SimdKernel>(unit, &mut emit),
                Kernel::Scalar => self.walk_unit::<ScalarKernel>(unit, &mut emit),
            }
        }
    }

    /// Per-particle neighbour lists in CSR form, both directions, each ascending.
    ///
    /// Fails as [`MultilevelSearch::pairs`] does and then leaves no list.
    pub fn neighbor_lists(&self, out: &mut NeighborLists<T>) -> Result<(), Error> {
        out.assign_from_pair_search(self.len, |pairs| self.pairs(pairs))
    }

    /// Appends the particles whose radius reaches `p` (unsorted) with kernel `K`.
    fn query_with<K: MaskKernel>(&self, p: [T; 3], out: &mut Vec<u32>) {
        for level in &self.levels[..self.used] {
            let c = level.hasher.cell(p);
            if !near_span(&level.hasher.table, c) {
                continue;
            }
            let cells = NEIGHBOURHOOD_OFFSETS.map(|offset| add(c, offset));
            let keys = cells.map(|n| level.hasher.key(n));
            let mut runs = [(0, 0); 27];
            level.table.runs(&keys, &cells, &mut runs);
            for run in runs {
                spheres_point::<T, K>(&level.table, &level.radii, p, run, &mut |q| {
                    out.push(level.table.order[q as usize])
                });
            }
        }
    }

    /// The particles whose radius reaches `p` (`|p - xj| <= rj`, the gather of an SPH
    /// interpolation at `p`), ascending, into `out` (cleared first).
    pub fn query_point(&self, p: [T; 3], out: &mut Vec<u32>) -> Result<(), Error> {
        check_point(p)?;
        out.clear();
        match self.kernel {
            Kernel::Simd => self.query_with::<SimdKernel>(p, out),
            Kernel::Scalar => self.query_with::<ScalarKernel>(p, out),
        }
        out.sort_unstable();
        Ok(())
    }
}

/// Refuses particle `index` as hhg-core's variable-radius search does: a NaN or infinite
/// coordinate, then a radius that is negative, NaN or infinite or whose square overflows.
fn check_particle<T: Real>(p: [T; 3], r: T, index: usize) -> Result<(), Error> {
    for (axis, v) in p.iter().enumerate() {
        if !v.is_finite() {
            return Err(Error::NonFiniteCoordinate {
                index,
                axis,
                value: v.to_f64(),
            });
        }
    }
    if !(r.is_finite() && r.to_f64() >= 0.0 && (r * r).is_finite()) {
        return Err(Error::InvalidParticleRadius {
            index,
            radius: r.to_f64(),
        });
    }
    Ok(())
}
