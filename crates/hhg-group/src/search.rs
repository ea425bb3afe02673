//! Enumeration over the group table: each neighbour cell is mapped to its bucket by probing
//! its candidate buckets, the foreign cells sharing that bucket are skipped, and the cell's
//! own contiguous run of sorted points is distance-tested 8 lanes at a time.
//!
//! # Lookup
//!
//! Neighbouring cells are not neighbouring buckets, so a cell's neighbours are found one by
//! one: the candidate buckets of the neighbour cell are hashed (8 neighbours at a time with
//! the SIMD kernel), and each candidate bucket's directory (its cells, with coordinates and
//! point ranges) is scanned for the cell, in candidate order, until it is found. A foreign
//! cell that shares the bucket never matches, so its points are never scanned and no pair
//! is reported twice; a cell found in no candidate is empty. Cells outside the occupied span
//! are skipped before hashing. The cells are walked in greedy order, which runs along x,
//! so a cell and the one before it share 8 of their 13 forward neighbours: those are taken
//! from the previous cell's lookups and only 5 are looked up afresh.
//!
//! This probe needs no map beyond the bucket directory the layout produces anyway. The
//! candidate-counting pass of [`crate::GroupScheme::pair_candidates`] performs exactly the
//! pairs search's lookups and nothing else, so its time bounds what any other lookup
//! structure (a sorted cell array, a separate hash map) could save: about a tenth of the
//! pairs time at a million uniform points (see the crate documentation).
//!
//! # Pairs
//!
//! The points lie in (bucket, cell) order, which follows the hash, not space; the searches
//! therefore walk the cells in greedy order, which follows space, so that consecutive cells
//! share neighbours that are still in cache (walking in memory order measured twice as
//! slow). Work units of about 2048 points, consecutive in that walk, end at cell borders.
//! Per cell, its 13 forward neighbour cells (`x + 1`, then `(dy, dz)` in `(+1, 0)` and
//! `(-1..=1, +1)`) are looked up once; the cell's points, in batches of up to 16, are
//! tested against the later points of their own cell, then against each forward
//! neighbour's run, each block of 8 candidates loaded once for the whole batch. Every unordered pair of points in the same or adjacent cells is
//! thus tested exactly once. Each unit fills its own buffer; the buffers are concatenated in
//! unit order, so the output does not depend on the thread count.

use hhg_core::building_blocks::{FORWARD_OFFSETS, LANES, NEIGHBOURHOOD_OFFSETS};
use hhg_core::{Error, FixedRadiusScheme, Kernel, NeighborLists, PairList, Real, SchemeStats};
use rayon::prelude::*;

use crate::hash::{GroupHasher, MAX_CANDIDATES};
use crate::scheme::GroupScheme;

/// At most this many points of one cell share a pass over the candidate blocks.
const BATCH: usize = 16;

/// For each forward offset `o`, the forward offset `o + (1, 0, 0)` when it is one: the
/// neighbour that cell `c + (1, 0, 0)` shares with cell `c`.
const SHIFTED: [Option<usize>; 13] = {
    let mut shifted = [None; 13];
    let mut o = 0;
    while o < 13 {
        let mut p = 0;
        while p < 13 {
            if FORWARD_OFFSETS[p][0] == FORWARD_OFFSETS[o][0] + 1
                && FORWARD_OFFSETS[p][1] == FORWARD_OFFSETS[o][1]
                && FORWARD_OFFSETS[p][2] == FORWARD_OFFSETS[o][2]
            {
                shifted[o] = Some(p);
            }
            p += 1;
        }
        o += 1;
    }
    shifted
};

/// The resolved forward neighbours of the cell walked last.
#[derive(Clone, Copy, Debug, Default)]
struct ForwardCache {
    cell: Option<[i32; 3]>,
    found: [(u32, u32); 13],
}

/// A distance-mask kernel together with the matching candidate hashing.
pub(crate) trait Lanes<T: Real> {
    /// Whether candidate buckets are hashed 8 cells at a time.
    const SIMD: bool;
    /// 8 loaded candidates.
    type Block: Copy;
    /// Loads 8 candidates.
    fn load(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block;
    /// Bit `k` set when candidate `k` is within `sqrt(r2)` of `p`.
    fn mask(p: [T; 3], block: &Self::Block, r2: T) -> u32;
}

/// The `wide` kernels.
pub(crate) struct Simd;

/// The one-lane-at-a-time reference kernels.
pub(crate) struct Scalar;

impl<T: Real> Lanes<T> for Simd {
    const SIMD: bool = true;
    type Block = T::Block;

    #[inline(always)]
    fn load(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block {
        T::load_block(x, y, z)
    }

    #[inline(always)]
    fn mask(p: [T; 3], block: &Self::Block, r2: T) -> u32 {
        T::block_mask(p, block, r2)
    }
}

impl<T: Real> Lanes<T> for Scalar {
    const SIMD: bool = false;
    type Block = [[T; 8]; 3];

    #[inline(always)]
    fn load(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block {
        [*x, *y, *z]
    }

    #[inline(always)]
    fn mask(p: [T; 3], block: &Self::Block, r2: T) -> u32 {
        T::within_mask_scalar(p, &block[0], &block[1], &block[2], r2)
    }
}

/// Up to 27 ranges of sorted positions, one per occupied neighbour cell.
#[derive(Clone, Copy, Debug, Default)]
struct Ranges {
    ranges: [(u32, u32); 27],
    len: usize,
}

impl Ranges {
    #[inline(always)]
    fn as_slice(&self) -> &[(u32, u32)] {
        &self.ranges[..self.len]
    }

    /// The candidates the ranges hold.
    #[inline(always)]
    fn candidates(&self) -> u64 {
        self.as_slice().iter().map(|&(s, e)| u64::from(e - s)).sum()
    }
}

/// The 8 lanes of `column` starting at `base` (the columns are padded by whole blocks).
#[inline(always)]
fn lanes<T: Real>(column: &[T], base: u32) -> &[T; 8] {
    let base = base as usize;
    column[base..base + LANES].try_into().unwrap()
}

/// Tests the points of `batch` (sorted positions `first..`) against the candidates
/// `start..end`, 8 lanes at a time, and calls `emit(p, q)` for every hit; with `AFTER`,
/// only candidates `q > p` count (the point's own cell).
#[inline(always)]
#[allow(clippy::too_many_arguments)] // The hot loop takes its inputs unpacked on purpose.
fn scan<T: Real, K: Lanes<T>, const AFTER: bool>(
    columns: [&[T]; 3],
    batch: &[[T; 3]],
    first: u32,
    r2: T,
    start: u32,
    end: u32,
    emit: &mut impl FnMut(u32, u32),
) {
    let mut base = start;
    while base < end {
        let block = K::load(
            lanes(columns[0], base),
            lanes(columns[1], base),
            lanes(columns[2], base),
        );
        let valid = if end - base < LANES as u32 {
            (1u32 << (end - base)) - 1
        } else {
            (1u32 << LANES) - 1
        };
        for (j, &p) in batch.iter().enumerate() {
            let pos = first + j as u32;
            let mut mask = K::mask(p, &block, r2) & valid;
            if AFTER && pos >= base {
                let d = pos - base;
                // Keep only the lanes past the point itself.
                mask &= if d >= LANES as u32 - 1 {
                    0
                } else {
                    !((2u32 << d) - 1)
                };
            }
            while mask != 0 {
                emit(pos, base + mask.trailing_zeros());
                mask &= mask - 1;
            }
        }
        base += LANES as u32;
    }
}

impl<T: Real> GroupScheme<T> {
    /// The point range and bucket of `cell`, probing its `candidates` in order and skipping
    /// the foreign cells of each bucket; `None` when the cell holds no point.
    #[inline]
    pub(crate) fn find_cell(
        &self,
        cell: [i32; 3],
        candidates: &[u32; MAX_CANDIDATES],
    ) -> Option<((u32, u32), u32)> {
        let g = self.hasher.as_ref().map_or(0, GroupHasher::candidates);
        for &b in &candidates[..g] {
            let lo = self.bucket_cells[b as usize] as usize;
            let hi = self.bucket_cells[b as usize + 1] as usize;
            for c in lo..hi {
                if self.directory[c].cell == cell {
                    let range = (self.directory[c].start, self.directory[c + 1].start);
                    return Some((range, b));
                }
            }
        }
        None
    }

    /// Looks up the cells `cell + offsets[o]` for each `o` of `which` and writes their point
    /// ranges to `found[o]` (`(0, 0)` for an empty cell), hashing 8 cells at a time with the
    /// SIMD kernel; cells outside the occupied span are empty without a lookup.
    #[inline]
    fn resolve<K: Lanes<T>>(
        &self,
        hasher: &GroupHasher,
        span: [i32; 3],
        cell: [i32; 3],
        offsets: &[[i32; 3]],
        which: &[usize],
        found: &mut [(u32, u32)],
    ) {
        let at = |o: usize| std::array::from_fn::<i32, 3, _>(|a| cell[a] + offsets[o][a]);
        let inside = |c: [i32; 3]| (0..3).all(|a| c[a] >= 0 && c[a] < span[a]);
        let look = |c: [i32; 3], candidates: &[u32; MAX_CANDIDATES]| {
            self.find_cell(c, candidates)
                .map_or((0, 0), |(range, _)| range)
        };
        if K::SIMD {
            for block in which.chunks(LANES) {
                let axis =
                    |a: usize| std::array::from_fn(|k| block.get(k).map_or(cell[a], |&o| at(o)[a]));
                let rows = hasher.candidates8(&axis(0), &axis(1), &axis(2));
                for (k, &o) in block.iter().enumerate() {
                    let c = at(o);
                    found[o] = if inside(c) {
                        look(c, &std::array::from_fn(|r| rows[r][k]))
                    } else {
                        (0, 0)
                    };
                }
            }
        } else {
            for &o in which {
                let c = at(o);
                found[o] = if inside(c) {
                    look(c, &hasher.candidates_of(c))
                } else {
                    (0, 0)
                };
            }
        }
    }

    /// The point ranges of the occupied forward neighbours of `cell`, in offset order. When
    /// `cell` follows the previous cell along x, the 8 neighbours both share are taken from
    /// `cache` and only 5 are looked up.
    #[inline]
    fn forward_ranges<K: Lanes<T>>(
        &self,
        hasher: &GroupHasher,
        span: [i32; 3],
        cell: [i32; 3],
        cache: &mut ForwardCache,
        out: &mut Ranges,
    ) {
        let follows = cache.cell == Some([cell[0].wrapping_sub(1), cell[1], cell[2]]);
        let mut found = [(0u32, 0u32); 13];
        let mut fresh = [0usize; 13];
        let mut count = 0;
        for o in 0..FORWARD_OFFSETS.len() {
            match SHIFTED[o] {
                Some(p) if follows => found[o] = cache.found[p],
                _ => {
                    fresh[count] = o;
                    count += 1;
                }
            }
        }
        self.resolve::<K>(
            hasher,
            span,
            cell,
            &FORWARD_OFFSETS,
            &fresh[..count],
            &mut found,
        );
        cache.cell = Some(cell);
        cache.found = found;
        out.len = 0;
        for &(s, e) in &found {
            if s < e {
                out.ranges[out.len] = (s, e);
                out.len += 1;
            }
        }
    }

    /// The point ranges of the occupied cells among the 27 around `cell`, in offset order.
    #[inline]
    fn full_ranges<K: Lanes<T>>(
        &self,
        hasher: &GroupHasher,
        span: [i32; 3],
        cell: [i32; 3],
        out: &mut Ranges,
    ) {
        let mut found = [(0u32, 0u32); 27];
        let all: [usize; 27] = std::array::from_fn(|o| o);
        self.resolve::<K>(hasher, span, cell, &NEIGHBOURHOOD_OFFSETS, &all, &mut found);
        out.len = 0;
        for &(s, e) in &found {
            if s < e {
                out.ranges[out.len] = (s, e);
                out.len += 1;
            }
        }
    }

    /// Walks the pairs of one work unit (walking positions `unit.0..unit.1`) and calls
    /// `emit(p, q)` with the sorted positions of every pair within the radius, in a fixed
    /// order.
    #[inline]
    fn walk_unit<K: Lanes<T>>(
        &self,
        hasher: &GroupHasher,
        span: [i32; 3],
        unit: (u32, u32),
        emit: &mut impl FnMut(u32, u32),
    ) {
        let columns = self.sorted.padded();
        let mut ranges = Ranges::default();
        let mut cache = ForwardCache::default();
        let mut batch = [[T::default(); 3]; BATCH];
        for &c in &self.walk[unit.0 as usize..unit.1 as usize] {
            let entry = self.directory[c as usize];
            let (s, e) = (entry.start, self.directory[c as usize + 1].start);
            self.forward_ranges::<K>(hasher, span, entry.cell, &mut cache, &mut ranges);
            let mut first = s;
            while first < e {
                let count = ((e - first) as usize).min(BATCH);
                for (j, slot) in batch[..count].iter_mut().enumerate() {
                    *slot = self.sorted.point(first as usize + j);
                }
                let points = &batch[..count];
                scan::<T, K, true>(columns, points, first, self.r2, first + 1, e, emit);
                for &(rs, re) in ranges.as_slice() {
                    scan::<T, K, false>(columns, points, first, self.r2, rs, re, emit);
                }
                first += count as u32;
            }
        }
    }

    /// The hasher and span of the last build, `None` while empty.
    #[inline]
    fn built(&self) -> Option<(&GroupHasher, [i32; 3])> {
        Some((self.hasher.as_ref()?, self.table.as_ref()?.span))
    }

    /// The caller's pair of sorted positions `p` and `q`, smaller index first.
    #[inline(always)]
    fn caller_pair(&self, p: u32, q: u32) -> [u32; 2] {
        let (i, j) = (self.order[p as usize], self.order[q as usize]);
        if i < j { [i, j] } else { [j, i] }
    }

    /// Every pair into `out`, through one buffer per work unit kept in it.
    pub(crate) fn pairs_into(&self, out: &mut PairList<T>) -> Result<(), Error> {
        match self.config.kernel {
            Kernel::Simd => self.pairs_with::<Simd>(out),
            Kernel::Scalar => self.pairs_with::<Scalar>(out),
        }
    }

    fn pairs_with<K: Lanes<T>>(&self, out: &mut PairList<T>) -> Result<(), Error> {
        let Some((hasher, span)) = self.built() else {
            return out.collect_units(0, |_, _| {});
        };
        out.collect_units(self.units.len(), |u, sink| {
            self.walk_unit::<K>(hasher, span, self.units[u], &mut |p, q| {
                sink.push(self.caller_pair(p, q));
            });
        })
    }

    fn visit_pairs<K: Lanes<T>>(&self, visit: &mut dyn FnMut(u32, u32)) {
        let Some((hasher, span)) = self.built() else {
            return;
        };
        for &unit in &self.units {
            self.walk_unit::<K>(hasher, span, unit, &mut |p, q| {
                let [i, j] = self.caller_pair(p, q);
                visit(i, j);
            });
        }
    }

    fn query_with<K: Lanes<T>>(&self, point: [T; 3], out: &mut Vec<u32>) {
        out.clear();
        let (Some((hasher, span)), Some(table)) = (self.built(), self.table.as_ref()) else {
            return;
        };
        let mut ranges = Ranges::default();
        self.full_ranges::<K>(hasher, span, table.coords(point), &mut ranges);
        let columns = self.sorted.padded();
        for &(s, e) in ranges.as_slice() {
            scan::<T, K, false>(columns, &[point], 0, self.r2, s, e, &mut |_, q| {
                out.push(self.order[q as usize]);
            });
        }
        out.sort_unstable();
    }

    /// The candidate count of the pairs search (see [`GroupScheme::pair_candidates`]).
    pub(crate) fn count_pair_candidates(&self) -> u64 {
        match self.config.kernel {
            Kernel::Simd => self.count_with::<Simd>(),
            Kernel::Scalar => self.count_with::<Scalar>(),
        }
    }

    fn count_with<K: Lanes<T>>(&self) -> u64 {
        let Some((hasher, span)) = self.built() else {
            return 0;
        };
        self.units
            .par_iter()
            .map(|&(lo, hi)| {
                let mut ranges = Ranges::default();
                let mut cache = ForwardCache::default();
                let mut count = 0u64;
                for &c in &self.walk[lo as usize..hi as usize] {
                    let entry = self.directory[c as usize];
                    let m = u64::from(self.directory[c as usize + 1].start - entry.start);
                    self.forward_ranges::<K>(hasher, span, entry.cell, &mut cache, &mut ranges);
                    count += m * (m - 1) / 2 + m * ranges.candidates();
                }
                count
            })
            .sum()
    }
}

impl<T: Real> FixedRadiusScheme<T> for GroupScheme<T> {
    fn name(&self) -> &'static str {
        "group"
    }

    fn radius(&self) -> T {
        self.radius
    }

    fn build(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        self.build_points(points)
    }

    fn len(&self) -> usize {
        self.len_points()
    }

    fn pairs(&self, out: &mut PairList<T>) -> Result<(), Error> {
        self.pairs_into(out)
    }

    fn neighbor_lists(&self, out: &mut NeighborLists<T>) -> Result<(), Error> {
        self.lists_from_pairs(out)
    }

    fn for_each_pair(&self, visit: &mut dyn FnMut(u32, u32)) {
        match self.config.kernel {
            Kernel::Simd => self.visit_pairs::<Simd>(visit),
            Kernel::Scalar => self.visit_pairs::<Scalar>(visit),
        }
    }

    fn query_point(&self, point: [T; 3], out: &mut Vec<u32>) -> Result<(), Error> {
        if let Some(axis) = (0..3).find(|&a| !point[a].is_finite()) {
            return Err(Error::NonFiniteCoordinate {
                index: 0,
                axis,
                value: point[axis].to_f64(),
            });
        }
        match self.config.kernel {
            Kernel::Simd => self.query_with::<Simd>(point, out),
            Kernel::Scalar => self.query_with::<Scalar>(point, out),
        }
        Ok(())
    }

    fn stats(&self) -> SchemeStats {
        let mut stats = self.load_stats();
        stats.pair_candidates = self.pair_candidates();
        stats
    }
}
