//! [`PoucholScheme`]: Pouchol, Ahmad, Crespin and Terraz's top-down hierarchical hashing
//! (2009) for fixed-radius search, with its broad-phase box query.
//!
//! # Design
//!
//! Classes are nested cubic grids: class 0 has cells of edge `r * (1 + CELL_MARGIN)` (the
//! interaction radius, the paper's smallest class), class `j` has cells `2^j` times larger, and
//! the class-`j` cell containing class-0 cell `c` is `c >> j` (arithmetic shift per axis), so
//! the classes nest exactly like an octree. There are `L` classes above class 0: by default
//! just enough that the points' box fits one cell of the top class ([`Levels::Auto`]).
//!
//! - **Keys** (Eq. 4): a class-`c` cell's key is `(h^L + h^(L-1) + ... + h^c) mod n`, each
//!   `h^j` the XOR-of-primes hash of the containing class-`j` cell, summed from the top class
//!   down. One table of `n` buckets (a power of two) serves every class.
//! - **Insertion** (Listing 1): a point goes to the bucket of its class-0 key, and every
//!   coarser cell on its way down sets the `has_children` flag of its own key's bucket. The
//!   build inserts all points at once: keys 8 lanes at a time, [`hhg_core::building_blocks::counting_sort`]
//!   by bucket, cells ordered inside their buckets (each cell is one run of sorted positions),
//!   [`hhg_core::PointColumns::gather_from`], then the flags, once per occupied cell, in
//!   parallel (setting a flag is idempotent, so the result does not depend on the threads).
//! - **NNS with on-the-fly lists** (Listing 3): a particle descends from the top class with
//!   its 27 neighbour cells, dropping a cell as soon as its bucket has no children, and at
//!   class 0 retrieves the particles of the cells that survived. Listing 3 inserts the
//!   particles one at a time, so each particle sees exactly the particles inserted before it
//!   and each pair is found once, by the later one, and written to both lists. Here the
//!   insertion order is the sorted order: every cell run, in parallel, takes the neighbour
//!   runs that precede it (and the earlier points of its own run), which is the same
//!   computation with the structure complete up front. Pairs come in an order fixed by the
//!   data (work units cut by point count, buffers concatenated in unit order); the lists are
//!   the pairs written both ways.
//! - **Broad phase** (Listing 2): a box's cells are enumerated top-down, class by class. At a
//!   class where the box is larger than the cells, the paper subdivides it so that no
//!   overlapped cell is missed; here the class-`j` cells overlapped by the box are exactly the
//!   children of the surviving class-`j + 1` cells within the box's cell range, so the
//!   subdivision is that expansion, and every cell whose bucket has no children ends its
//!   branch. At class 0 the surviving cells' buckets give the candidates (foreign points
//!   included, as in the paper); the exact query keeps the points inside the box.
//!
//! Neighbour cells of a class are not neighbouring buckets, and distinct cells (of any class)
//! may share a bucket: points are looked up by cell (see the crate docs, "Cells, buckets and
//! collisions"), and a flag set by a foreign cell only costs a descent that finds nothing,
//! never a wrong result.

use std::sync::atomic::{AtomicU64, Ordering};

use hhg_core::broad::Aabb;
use hhg_core::building_blocks::{NEIGHBOURHOOD_OFFSETS, check_radius};
use hhg_core::{Error, FixedRadiusScheme, Kernel, Real};
use rayon::prelude::*;

use crate::hash::{CellHasher, KeyRule, Primes, XorHash};
use crate::kernel::{MaskKernel, ScalarKernel, SimdKernel, inside_box, query_runs, within_run};
use crate::table::{Buckets, TableSize, add, cell_geometry, query_cell};

/// The largest number of classes above class 0.
pub const MAX_LEVELS: u32 = 30;

/// The sample index of the centre of the 27-cell neighbourhood.
const CENTRE: usize = 13;

/// How many classes the hierarchy has above class 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Levels {
    /// Just enough that the points' bounding box fits one cell of the top class.
    #[default]
    Auto,
    /// This many (at most [`MAX_LEVELS`]); 0 is plain XOR hashing with the 27-cell search.
    Fixed(u32),
}

/// Fixed-radius neighbour search with Pouchol's hierarchical hashing (name `"pouchol"`),
/// plus the paper's broad-phase query of a box.
///
/// ```
/// use hhg_core::FixedRadiusScheme;
/// use hhg_core::broad::Aabb;
/// use hhg_xor::{PoucholScheme, Primes};
///
/// let points = [[0.0f32, 0.0, 0.0], [0.5, 0.0, 0.0], [3.0, 0.0, 0.0]];
/// let mut scheme = PoucholScheme::new(1.0, Primes::Teschner)?;
/// scheme.build(&points)?;
/// let mut pairs = hhg_core::PairList::default();
/// scheme.pairs(&mut pairs)?;
/// assert_eq!(pairs.pairs(), [[0, 1]]);
/// let mut inside = Vec::new();
/// scheme.query_aabb(&Aabb::new([0.4, -1.0, -1.0], [5.0, 1.0, 1.0]), &mut inside)?;
/// assert_eq!(inside, vec![1, 2]);
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct PoucholScheme<T: Real> {
    radius: T,
    r2: T,
    primes: Primes,
    size: TableSize,
    levels: Levels,
    kernel: Kernel,
    hasher: Option<CellHasher>,
    /// Classes above class 0 in the last build.
    top: u32,
    table: Buckets<T>,
    /// The `has_children` flag of every bucket, one bit each.
    children: Vec<AtomicU64>,
}

impl<T: Real> PoucholScheme<T> {
    /// An empty search within `radius` hashing with `primes`, about 2 buckets per point and
    /// [`Levels::Auto`].
    pub fn new(radius: T, primes: Primes) -> Result<Self, Error> {
        Self::with_config(radius, primes, TableSize::default(), Levels::Auto)
    }

    /// An empty search within `radius` hashing with `primes` into tables of `size`, with
    /// `levels` classes above class 0.
    pub fn with_config(
        radius: T,
        primes: Primes,
        size: TableSize,
        levels: Levels,
    ) -> Result<Self, Error> {
        check_radius(radius)?;
        size.check()?;
        check_levels(levels)?;
        Ok(Self {
            radius,
            r2: radius * radius,
            primes,
            size,
            levels,
            kernel: Kernel::Simd,
            hasher: None,
            top: 0,
            table: Buckets::default(),
            children: Vec::new(),
        })
    }

    crate::table::table_accessors! {
        hasher: "The cell geometry (of class 0) and hash of the last build (`None` while empty).",
        sorted_cells: "The class-0 cell of each sorted position.",
    }

    /// Sets the number of classes of later builds.
    pub fn set_levels(&mut self, levels: Levels) -> Result<(), Error> {
        check_levels(levels)?;
        self.levels = levels;
        Ok(())
    }

    /// The number of classes above class 0 in the last build.
    pub fn top_class(&self) -> u32 {
        self.top
    }

    /// Tells whether bucket `b`'s `has_children` flag is set.
    #[inline(always)]
    pub fn has_children(&self, b: u32) -> bool {
        self.children
            .get(b as usize >> 6)
            .is_some_and(|w| w.load(Ordering::Relaxed) >> (b & 63) & 1 != 0)
    }

    /// Builds the structure: validate, key, sort, order by cell, gather, flag.
    fn build_table(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        let Some(table) = cell_geometry(points, self.radius)? else {
            self.hasher = None;
            self.table.clear();
            self.children.clear();
            self.top = 0;
            return Ok(());
        };
        let top = match self.levels {
            Levels::Auto => {
                let widest = table.span.iter().copied().max().unwrap_or(1).max(1) as u32;
                u32::BITS - (widest - 1).leading_zeros()
            }
            Levels::Fixed(levels) => levels,
        };
        let hasher = CellHasher {
            table,
            hash: XorHash::new(self.primes, self.size.buckets(points.len()))?,
            rule: KeyRule::TopDown { levels: top },
        };
        self.table.build(points, None, &hasher, self.kernel)?;
        self.top = top;
        self.set_flags(&hasher);
        self.hasher = Some(hasher);
        Ok(())
    }

    /// Sets the `has_children` flags: for every occupied class-0 cell, the buckets of the
    /// keys of its ancestors in classes `1..=top` (Listing 1's descent).
    fn set_flags(&mut self, hasher: &CellHasher) {
        let words = hasher.hash.buckets().div_ceil(64);
        self.children.truncate(words);
        self.children
            .par_iter()
            .for_each(|w| w.store(0, Ordering::Relaxed));
        self.children.resize_with(words, || AtomicU64::new(0));
        let (table, children, top) = (&self.table, &self.children, self.top);
        let mask = hasher.hash.mask();
        table.units.par_iter().for_each(|&(lo, hi)| {
            for b in lo..hi {
                table.for_each_run(b, |_, _, c| {
                    let mut prefix = 0u32;
                    for j in (1..=top).rev() {
                        prefix = prefix.wrapping_add(hasher.hash.raw(c.map(|v| v >> j)));
                        let key = prefix & mask;
                        let word = &children[key as usize >> 6];
                        let bit = 1u64 << (key & 63);
                        if word.load(Ordering::Relaxed) & bit == 0 {
                            word.fetch_or(bit, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
    }

    /// The top-down descent of the 27 cells around class-0 cell `c` (Listing 3): returns the
    /// samples that reached class 0 (bit `s` for offset `NEIGHBOURHOOD_OFFSETS[s]`) and their keys.
    #[inline]
    fn descend_neighbourhood(&self, hasher: &CellHasher, c: [i32; 3]) -> (u32, [u32; 27]) {
        let primes = hasher.hash.primes();
        let mask = hasher.hash.mask();
        let mut prefix = [0u32; 27];
        let mut alive = (1u32 << 27) - 1;
        for j in (0..=self.top).rev() {
            // The class-j hash terms per axis of the offsets -1, 0, +1.
            let terms: [[u32; 3]; 3] = std::array::from_fn(|a| {
                std::array::from_fn(|o| {
                    (((c[a] + o as i32 - 1) >> j) as u32).wrapping_mul(primes[a])
                })
            });
            let mut bits = alive;
            while bits != 0 {
                let s = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let h = terms[0][s % 3] ^ terms[1][(s / 3) % 3] ^ terms[2][s / 9];
                prefix[s] = prefix[s].wrapping_add(h);
                if j > 0 && !self.has_children(prefix[s] & mask) {
                    alive &= !(1 << s);
                }
            }
            if alive == 0 {
                break;
            }
        }
        (alive, prefix.map(|k| k & mask))
    }

    /// The runs of the cells around class-0 cell `c` that the descent reaches (all 27, or
    /// the 26 without `c` itself), looked up together; returns how many it wrote to `out`.
    #[inline(always)]
    fn neighbour_runs(
        &self,
        hasher: &CellHasher,
        c: [i32; 3],
        centre: bool,
        out: &mut [(u32, u32); 27],
    ) -> usize {
        let (mut alive, keys) = self.descend_neighbourhood(hasher, c);
        if !centre {
            alive &= !(1 << CENTRE);
        }
        let mut found_keys = [0u32; 27];
        let mut cells = [[0i32; 3]; 27];
        let mut count = 0;
        while alive != 0 {
            let k = alive.trailing_zeros() as usize;
            alive &= alive - 1;
            found_keys[count] = keys[k];
            cells[count] = add(c, NEIGHBOURHOOD_OFFSETS[k]);
            count += 1;
        }
        self.table
            .runs(&found_keys[..count], &cells[..count], &mut out[..count]);
        count
    }

    /// Walks the pairs of one work unit: per cell run, its earlier points and the neighbour
    /// runs inserted before it (preceding it in sorted order); calls `emit(p, q)` with sorted
    /// positions.
    #[inline(always)]
    fn walk_unit<K: MaskKernel>(
        &self,
        hasher: &CellHasher,
        unit: (u32, u32),
        emit: &mut impl FnMut(u32, u32),
    ) {
        let table = &self.table;
        for b in unit.0..unit.1 {
            table.for_each_run(b, |s, e, c| {
                within_run::<T, K>(table, self.r2, (s, e), (s, e), true, emit);
                let mut runs = [(0, 0); 27];
                let found = self.neighbour_runs(hasher, c, false, &mut runs);
                // The runs inserted before this one (Listing 3's structure at its insertion).
                let mut earlier = 0;
                for k in 0..found {
                    let run = runs[k];
                    debug_assert!(run.0 == run.1 || run.1 <= s || run.0 >= e);
                    if run.0 < run.1 && run.1 <= s {
                        runs[earlier] = run;
                        earlier += 1;
                    }
                }
                table.touch(&runs[..earlier]);
                for &run in &runs[..earlier] {
                    within_run::<T, K>(table, self.r2, (s, e), run, false, emit);
                }
            });
        }
    }

    /// Appends the neighbours of `point` (caller indices, unsorted) with kernel `K`.
    fn query_with<K: MaskKernel>(&self, point: [T; 3], out: &mut Vec<u32>) {
        let Some((hasher, c)) = query_cell(self.hasher.as_ref(), point) else {
            return;
        };
        let mut runs = [(0, 0); 27];
        let found = self.neighbour_runs(hasher, c, true, &mut runs);
        query_runs::<T, K>(&self.table, self.r2, point, &runs[..found], out);
    }

    /// The class-0 cells overlapped by `aabb` (after validation), clamped to the occupied
    /// span; `None` when the box misses the span.
    fn box_cells(&self, hasher: &CellHasher, aabb: &Aabb<T>) -> Option<([i32; 3], [i32; 3])> {
        let table = &hasher.table;
        let mut lo = [0i32; 3];
        let mut hi = [0i32; 3];
        for a in 0..3 {
            lo[a] = table.coord(aabb.min[a].to_f64(), a).max(0);
            hi[a] = table.coord(aabb.max[a].to_f64(), a).min(table.span[a] - 1);
            if lo[a] > hi[a] {
                return None;
            }
        }
        Some((lo, hi))
    }

    /// Listing 2's top-down walk over the class-0 cells `lo..=hi`: calls `visit(cell, key)`
    /// for every class-0 cell in the range all of whose ancestors' buckets have children.
    /// Returns false (visiting nothing) when some class would need more than `limit` cells:
    /// a hierarchy too shallow for the box, or a table so small that most buckets have
    /// children and nothing is pruned.
    fn descend_box(
        &self,
        hasher: &CellHasher,
        lo: [i32; 3],
        hi: [i32; 3],
        limit: usize,
        mut visit: impl FnMut([i32; 3], u32),
    ) -> bool {
        let top = self.top;
        let (tlo, thi) = (lo.map(|v| v >> top), hi.map(|v| v >> top));
        let count = (0..3).fold(1usize, |n, a| {
            n.saturating_mul((thi[a] - tlo[a] + 1) as usize)
        });
        if count > limit {
            return false;
        }
        let mut frontier: Vec<([i32; 3], u32)> = Vec::with_capacity(count);
        for z in tlo[2]..=thi[2] {
            for y in tlo[1]..=thi[1] {
                for x in tlo[0]..=thi[0] {
                    frontier.push(([x, y, z], 0));
                }
            }
        }
        let mut next = Vec::new();
        let mask = hasher.hash.mask();
        for j in (1..=top).rev() {
            next.clear();
            let (clo, chi) = (lo.map(|v| v >> (j - 1)), hi.map(|v| v >> (j - 1)));
            for &(cell, prefix) in &frontier {
                let key = prefix.wrapping_add(hasher.hash.raw(cell));
                if !self.has_children(key & mask) {
                    continue;
                }
                // The box's subdivision at class j - 1: the children inside its cell range.
                let from: [i32; 3] = std::array::from_fn(|a| (2 * cell[a]).max(clo[a]));
                let to: [i32; 3] = std::array::from_fn(|a| (2 * cell[a] + 1).min(chi[a]));
                for z in from[2]..=to[2] {
                    for y in from[1]..=to[1] {
                        for x in from[0]..=to[0] {
                            next.push(([x, y, z], key));
                        }
                    }
                }
            }
            if next.len() > limit {
                return false;
            }
            std::mem::swap(&mut frontier, &mut next);
        }
        for &(cell, prefix) in &frontier {
            visit(cell, prefix.wrapping_add(hasher.hash.raw(cell)) & mask);
        }
        true
    }

    /// The cell budget of a box query's classes before it falls back to a linear scan (which
    /// tests every point once).
    fn box_limit(&self) -> usize {
        8 * self.len() + 64
    }

    /// Appends the points inside `aabb` (caller indices, unsorted) with kernel `K`.
    fn query_aabb_with<K: MaskKernel>(&self, aabb: &Aabb<T>, out: &mut Vec<u32>) {
        let Some(hasher) = self.hasher.as_ref() else {
            return;
        };
        let Some((lo, hi)) = self.box_cells(hasher, aabb) else {
            return;
        };
        let table = &self.table;
        let mut emit = |q: u32| out.push(table.order[q as usize]);
        let walked = self.descend_box(hasher, lo, hi, self.box_limit(), |cell, key| {
            let run = table.run(key, cell);
            inside_box::<T, K>(table, aabb.min, aabb.max, run, &mut emit);
        });
        if !walked {
            inside_box::<T, K>(table, aabb.min, aabb.max, (0, self.len() as u32), &mut emit);
        }
    }

    /// The points inside the closed box `aabb` (`min <= p <= max` on every axis), ascending,
    /// into `out` (cleared first): Listing 2's candidates, tested exactly.
    pub fn query_aabb(&self, aabb: &Aabb<T>, out: &mut Vec<u32>) -> Result<(), Error> {
        check_box(aabb)?;
        out.clear();
        match self.kernel {
            Kernel::Simd => self.query_aabb_with::<SimdKernel>(aabb, out),
            Kernel::Scalar => self.query_aabb_with::<ScalarKernel>(aabb, out),
        }
        out.sort_unstable();
        Ok(())
    }

    /// The broad-phase candidates of the closed box `aabb` (Listing 2): every point stored in
    /// the bucket of a class-0 cell the top-down walk reaches, foreign points of a shared
    /// bucket included, ascending and without repetition, into `out` (cleared first). A
    /// superset of [`PoucholScheme::query_aabb`]; all points when the walk would visit more
    /// than about 8 cells per point (a hierarchy too shallow for the box, see
    /// [`Levels::Fixed`], or a table too small to prune).
    pub fn query_aabb_candidates(&self, aabb: &Aabb<T>, out: &mut Vec<u32>) -> Result<(), Error> {
        check_box(aabb)?;
        out.clear();
        let Some(hasher) = self.hasher.as_ref() else {
            return Ok(());
        };
        let Some((lo, hi)) = self.box_cells(hasher, aabb) else {
            return Ok(());
        };
        let table = &self.table;
        let walked = self.descend_box(hasher, lo, hi, self.box_limit(), |_, key| {
            let (s, e) = table.bucket_range(key);
            out.extend_from_slice(&table.order[s as usize..e as usize]);
        });
        if !walked {
            out.extend_from_slice(&table.order);
        }
        out.sort_unstable();
        out.dedup();
        Ok(())
    }

    /// Distance tests of the pairs search: per cell run of `m` points, `m (m - 1) / 2` inside
    /// it plus `m` times the points of the neighbour runs before it.
    fn pair_candidates(&self) -> u64 {
        let Some(hasher) = self.hasher.as_ref() else {
            return 0;
        };
        let table = &self.table;
        table
            .units
            .par_iter()
            .map(|&(lo, hi)| {
                let mut tests = 0u64;
                for b in lo..hi {
                    table.for_each_run(b, |s, e, c| {
                        let m = u64::from(e - s);
                        tests += m * (m - 1) / 2;
                        let mut runs = [(0, 0); 27];
                        let found = self.neighbour_runs(hasher, c, false, &mut runs);
                        for &run in &runs[..found] {
                            if run.1 <= s {
                                tests += m * u64::from(run.1 - run.0);
                            }
                        }
                    });
                }
                tests
            })
            .sum()
    }
}

/// Refuses a number of classes beyond [`MAX_LEVELS`].
fn check_levels(levels: Levels) -> Result<(), Error> {
    if let Levels::Fixed(k) = levels
        && k > MAX_LEVELS
    {
        return Err(Error::InvalidConfig {
            name: "levels",
            value: f64::from(k),
            expected: "at most 30",
        });
    }
    Ok(())
}

/// Refuses a query box as hhg-core refuses boxes (index 0): a NaN bound is a
/// [`Error::NonFiniteCoordinate`]; `min > max`, a `+inf` minimum or a `-inf` maximum is an
/// [`Error::InvalidBox`]. Other infinite bounds are allowed.
fn check_box<T: Real>(aabb: &Aabb<T>) -> Result<(), Error> {
    for axis in 0..3 {
        for value in [aabb.min[axis], aabb.max[axis]] {
            if value.to_f64().is_nan() {
                return Err(Error::NonFiniteCoordinate {
                    index: 0,
                    axis,
                    value: value.to_f64(),
                });
            }
        }
        let (min, max) = (aabb.min[axis].to_f64(), aabb.max[axis].to_f64());
        if min > max || min == f64::INFINITY || max == f64::NEG_INFINITY {
            return Err(Error::InvalidBox {
                index: 0,
                axis,
                min,
                max,
            });
        }
    }
    Ok(())
}

crate::table::impl_fixed_radius_scheme!(PoucholScheme, "pouchol", |this| this.pair_candidates());
