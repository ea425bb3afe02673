//! Unique pairs by the half neighbourhood: each occupied bucket against itself and its 13
//! forward neighbours of 26, so every pair is found exactly once and nothing is deduplicated.

use rayon::prelude::*;

use crate::dispatch::KernelTask;
use crate::error::Error;
use crate::geometry::{CellTable, Kernel};
use crate::grid::{Grid, Ranges};
use crate::kernel::{
    BAND_FLAG, MaskKernel, ROW_SLACK, ScalarKernel, SimdKernel, for_each_hit, gather_point,
    gather_point_flagged, scan_batch,
};
use crate::memory::{PairSink, check_cap, out_of_memory, try_reserve_total, try_resize};
use crate::parallel::{
    DisjointSlice, MIN_ROOM, candidate_room, collect_unit_pairs, exclusive_scan, with_slack,
};
use crate::real::Real;

/// An index type that pair outputs can be written in directly: `u32` (the search's own),
/// `u64`, `usize` or `i64` (the width a caller such as numpy needs), so that no second pass
/// widens the indices.
pub trait PairIndex: Copy + Send + Sync + 'static {
    /// The index `index` in this type (every `u32` fits).
    fn from_u32(index: u32) -> Self;
}

impl PairIndex for u32 {
    #[inline(always)]
    fn from_u32(index: u32) -> Self {
        index
    }
}

impl PairIndex for u64 {
    #[inline(always)]
    fn from_u32(index: u32) -> Self {
        u64::from(index)
    }
}

impl PairIndex for i64 {
    #[inline(always)]
    fn from_u32(index: u32) -> Self {
        i64::from(index)
    }
}

impl PairIndex for usize {
    #[inline(always)]
    fn from_u32(index: u32) -> Self {
        // `usize` is at least 32 bits on every target hhg builds for.
        index as usize
    }
}

/// Unique neighbour pairs `[i, j]` with `i < j` in the caller's numbering, optionally with
/// their squared distances. The order is deterministic (the same for any thread count);
/// reuse one value across steps, its buffers only grow.
#[derive(Clone, Debug, Default)]
pub struct PairList<T: Real> {
    pairs: Vec<[u32; 2]>,
    distances: Vec<T>,
    has_distances: bool,
    unit_pairs: Vec<UnitPairs<T>>,
    /// The per-unit buffers of pairs found without distances ([`PairList::collect_units`]).
    unit_buffers: Vec<PairSink>,
    /// The most pairs the list may hold ([`PairList::set_max_pairs`]).
    max_pairs: Option<usize>,
    unit_offsets: Vec<usize>,
    scan: Vec<usize>,
}

/// The pairs one work unit found, in its deterministic visiting order.
#[derive(Clone, Debug, Default)]
struct UnitPairs<T> {
    pairs: Vec<[u32; 2]>,
    distances: Vec<T>,
    /// The gather row of one point.
    scratch: Vec<u32>,
    /// Why the unit stopped short (no memory, or past the output's cap).
    failure: Option<Error>,
}

impl<T: Copy> UnitPairs<T> {
    /// Makes room for `more` pairs (and distances) past those found, within `cap` pairs;
    /// false, with the reason recorded, when the cap or the allocator refuses.
    #[inline(always)]
    fn room_for(&mut self, more: usize, with_distances: bool, cap: usize) -> bool {
        let wanted = self.pairs.len() + more;
        if wanted <= cap
            && wanted <= self.pairs.capacity()
            && (!with_distances || wanted <= self.distances.capacity())
        {
            return true;
        }
        self.grow(wanted, with_distances, cap)
    }

    #[cold]
    fn grow(&mut self, wanted: usize, with_distances: bool, cap: usize) -> bool {
        if let Err(error) = check_cap("pairs", wanted, cap) {
            self.failure = Some(error);
            return false;
        }
        // Amortized growth, as `push` grows (at least doubling): the step after a growing
        // one then finds the room it needs (`tests/allocations.rs`).
        if self.pairs.try_reserve(wanted - self.pairs.len()).is_err() {
            self.failure = Some(out_of_memory::<[u32; 2]>(wanted, "a work unit's pairs"));
            return false;
        }
        if with_distances
            && self
                .distances
                .try_reserve(wanted - self.distances.len())
                .is_err()
        {
            self.failure = Some(out_of_memory::<T>(wanted, "a work unit's pair distances"));
            return false;
        }
        true
    }
}

/// The unique pairs of work unit `unit` (bucket range), for [`Grid::run_task`].
struct PairTask<'a, T> {
    table: &'a CellTable,
    unit: (u32, u32),
    /// The most pairs the output may hold.
    cap: usize,
    /// The squared inner radius beyond which the pairs are flagged (see
    /// [`Grid::pairs_by_unit`]), or `None` for no flags.
    band_from: Option<T>,
}

impl<T: Real> KernelTask<T> for PairTask<'_, T> {
    type Buffer = UnitPairs<T>;

    #[inline(always)]
    fn run<K: MaskKernel>(&self, grid: &Grid<T>, buffer: &mut UnitPairs<T>, with_distances: bool) {
        grid.pairs_unit_with::<K>(
            self.table,
            self.unit,
            buffer,
            with_distances,
            self.band_from,
            self.cap,
        );
    }
}

impl<T: Real> PairList<T> {
    /// The pairs, `i < j` in each.
    pub fn pairs(&self) -> &[[u32; 2]] {
        &self.pairs
    }

    /// Squared distances alongside `pairs()`, when they were requested.
    pub fn distances_squared(&self) -> Option<&[T]> {
        self.has_distances.then_some(&self.distances[..])
    }

    /// How many pairs there are.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Hands over the pairs and, when they were requested, their squared distances, without
    /// a copy (for a caller that keeps them, such as an array that takes ownership of a
    /// `Vec`). The list is left empty; its scratch stays, and the next search allocates only
    /// the output buffers afresh.
    pub fn take_pairs(&mut self) -> (Vec<[u32; 2]>, Option<Vec<T>>) {
        let pairs = std::mem::take(&mut self.pairs);
        let distances = std::mem::take(&mut self.distances);
        let has_distances = std::mem::replace(&mut self.has_distances, false);
        (pairs, has_distances.then_some(distances))
    }

    /// Tells whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The bytes held by the list's buffers (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        let part_bytes: usize = self
            .unit_pairs
            .iter()
            .map(|buffer| {
                8 * buffer.pairs.capacity()
                    + size_of::<T>() * buffer.distances.capacity()
                    + 4 * buffer.scratch.capacity()
            })
            .sum();
        let sink_bytes: usize = self.unit_buffers.iter().map(PairSink::heap_bytes).sum();
        8 * self.pairs.capacity()
            + size_of::<T>() * self.distances.capacity()
            + size_of::<UnitPairs<T>>() * self.unit_pairs.capacity()
            + part_bytes
            + sink_bytes
            + size_of::<PairSink>() * self.unit_buffers.capacity()
            + size_of::<usize>() * (self.unit_offsets.capacity() + self.scan.capacity())
    }

    /// Empties the list (its buffers stay).
    pub(crate) fn clear(&mut self) {
        self.pairs.clear();
        self.distances.clear();
        self.has_distances = false;
    }

    /// Caps the list at `max_pairs` pairs (`None`, the default: no cap). A search whose
    /// pairs would exceed the cap fails with [`Error::OutputTooLarge`] before the list grows
    /// past it, and leaves the list empty: a guard against a radius or a scene that would
    /// take all memory. The scratch of the work units in flight may hold up to the cap each
    /// before the total is known.
    pub fn set_max_pairs(&mut self, max_pairs: Option<usize>) {
        self.max_pairs = max_pairs;
    }

    /// The cap set by [`PairList::set_max_pairs`].
    pub fn max_pairs(&self) -> Option<usize> {
        self.max_pairs
    }

    /// The cap as a count (no cap: `usize::MAX`).
    fn cap(&self) -> usize {
        self.max_pairs.unwrap_or(usize::MAX)
    }

    /// Replaces the list by pairs without distances found in `units` work units in parallel:
    /// `fill(unit, sink)` pushes the pairs of unit `unit` (each `[i, j]` with `i < j`) into
    /// the empty `sink`, and the units' pairs follow each other in unit order, so the
    /// result does not depend on the thread count. The units' sinks stay in the list, so a
    /// repeated call allocates nothing. For searches built from
    /// [`building_blocks`](crate::building_blocks) (the sibling crates' schemes, the broad
    /// phase) that report their pairs in a `PairList` like [`Grid::pairs`].
    ///
    /// Fails with [`Error::OutOfMemory`] or [`Error::OutputTooLarge`] (see
    /// [`PairList::set_max_pairs`]) and then leaves the list empty.
    pub fn collect_units(
        &mut self,
        units: usize,
        fill: impl Fn(usize, &mut PairSink) + Sync,
    ) -> Result<(), Error> {
        self.has_distances = false;
        self.distances.clear();
        let cap = self.cap();
        collect_unit_pairs(&mut self.unit_buffers, units, cap, fill, &mut self.pairs)
    }

    /// Like [`PairList::collect_units`], with the squared distance of every pair: `fill`
    /// pushes each pair as its search numbers it, and `finish(pair)` gives the pair in the
    /// caller's numbering (`i < j`) and its squared distance, in parallel, in place. Fails
    /// like [`PairList::collect_units`], or without the memory for the distances, and then
    /// leaves the list empty.
    pub(crate) fn collect_units_with_distances(
        &mut self,
        units: usize,
        fill: impl Fn(usize, &mut PairSink) + Sync,
        finish: impl Fn([u32; 2]) -> ([u32; 2], T) + Sync,
    ) -> Result<(), Error> {
        self.collect_units(units, fill)?;
        let count = self.pairs.len();
        if let Err(error) = try_resize(
            &mut self.distances,
            count,
            T::default(),
            "the pair distances",
        ) {
            self.clear();
            return Err(error);
        }
        self.pairs
            .par_iter_mut()
            .zip(&mut self.distances)
            .for_each(|(pair, distance)| (*pair, *distance) = finish(*pair));
        self.has_distances = true;
        Ok(())
    }
}

/// Runs `body` for every point `p` of work unit `unit` (sorted positions, bucket by bucket
/// and in position order) with `ranges`, the candidate ranges of its pairs
/// ([`Grid::pair_ranges`]). A macro rather than a function that takes a closure: the pairs'
/// gather runs in the run-time builds, where no closure may lie on the way to the kernels
/// (see [`KernelTask::run`]); an iterator over the points measured ~5 % slower pairs.
macro_rules! for_each_pair_point {
    ($grid:expr, $table:expr, $unit:expr, |$p:ident, $ranges:ident| $body:expr) => {
        for bucket in $unit.0..$unit.1 {
            let (start, end) = $grid.bucket_range(bucket);
            if start == end {
                continue;
            }
            let forward = $grid.forward_neighbourhood($table, bucket, $table.bucket_coords(bucket));
            for $p in start..end {
                let $ranges = Self::pair_ranges($p, end, &forward);
                $body;
            }
        }
    };
}

impl<T: Real> Grid<T> {
    /// The candidate ranges of sorted position `p` in bucket range `start..end` with the
    /// bucket's forward neighbourhood `forward`: the later points of its own bucket, then the
    /// 13 forward buckets. Every pair of points is covered by exactly one point's ranges.
    #[inline(always)]
    fn pair_ranges(p: u32, end: u32, forward: &Ranges) -> Ranges {
        forward.prepend(p + 1, end)
    }

    /// Calls `visit(p, ranges)` for every point of a unit, bucket by bucket and in position
    /// order, with the candidate ranges of its pairs ([`Grid::pair_ranges`]).
    #[inline(always)]
    fn walk_unit_pair_ranges(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        mut visit: impl FnMut(u32, &Ranges),
    ) {
        for_each_pair_point!(self, table, unit, |p, ranges| visit(p, &ranges));
    }

    /// Walks the pairs of one work unit point by point: calls `visit(p, block_start, mask)`
    /// for each block of candidates with hits, in the same order in which [`Grid::pairs`]
    /// lists the pairs.
    #[inline(always)]
    fn walk_unit_forward<K: MaskKernel>(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        mut visit: impl FnMut(u32, u32, u32),
    ) {
        let columns = self.sorted.padded();
        self.walk_unit_pair_ranges(table, unit, |p, ranges| {
            let point = [self.sorted.point(p as usize)];
            scan_batch::<T, K>(
                columns,
                &point,
                self.r2,
                ranges.as_slice(),
                |_, base, mask| {
                    if mask != 0 {
                        visit(p, base, mask)
                    }
                },
            );
        });
    }

    /// How many candidate pairs the unique-pairs search tests: per bucket of `m` points,
    /// `m (m - 1) / 2` inside it plus `m` times the points of its 13 forward neighbours.
    pub(crate) fn pair_candidates(&self) -> u64 {
        let Some(table) = self.table.as_ref() else {
            return 0;
        };
        self.units
            .par_iter()
            .map(|&(lo, hi)| {
                let mut count = 0u64;
                for b in lo..hi {
                    let (start, end) = self.bucket_range(b);
                    let m = u64::from(end - start);
                    if m == 0 {
                        continue;
                    }
                    let forward = self.forward_neighbourhood(table, b, table.bucket_coords(b));
                    count += m * (m - 1) / 2 + m * forward.candidates() as u64;
                }
                count
            })
            .sum()
    }

    /// Every unique pair within the radius, into `out` (reusing its buffers).
    ///
    /// Fails with [`Error::OutOfMemory`] when the pairs (or their scratch) cannot be
    /// allocated, and with [`Error::OutputTooLarge`] past the list's cap
    /// ([`PairList::set_max_pairs`]); `out` is then empty and the grid unchanged.
    pub fn pairs(&self, out: &mut PairList<T>) -> Result<(), Error> {
        self.pairs_impl(out, false)
    }

    /// Like [`Grid::pairs`], with the squared distance of every pair.
    pub fn pairs_with_distances(&self, out: &mut PairList<T>) -> Result<(), Error> {
        self.pairs_impl(out, true)
    }

    fn pairs_impl(&self, out: &mut PairList<T>, with_distances: bool) -> Result<(), Error> {
        let result = match self.kernel {
            Kernel::Simd => self.pairs_with::<SimdKernel>(out, with_distances),
            Kernel::Scalar => self.pairs_with::<ScalarKernel>(out, with_distances),
        };
        if result.is_err() {
            out.clear();
        }
        result
    }

    /// Like [`Grid::pairs`], with the pairs written as two columns `i` and `j` (`i[e] <
    /// j[e]`, the same pairs in the same order) in the index type a caller needs, such as
    /// `u64` for numpy: each column is written once, straight from the work units' buffers,
    /// so no second pass widens or splits the pairs. `scratch` holds the work units' buffers
    /// (reuse it across calls); its own pairs are left empty.
    ///
    /// Fails like [`Grid::pairs`]; `i` and `j` are then left empty.
    pub fn pair_columns<I: PairIndex>(
        &self,
        scratch: &mut PairList<T>,
        i: &mut Vec<I>,
        j: &mut Vec<I>,
    ) -> Result<(), Error> {
        i.clear();
        j.clear();
        let result = match self.kernel {
            Kernel::Simd => self.gather_unit_pairs::<SimdKernel>(scratch, false),
            Kernel::Scalar => self.gather_unit_pairs::<ScalarKernel>(scratch, false),
        };
        scratch.clear();
        let Some(total) = result? else {
            return Ok(());
        };
        let units = self.units.len();
        let what = "the pair columns";
        try_reserve_total(i, total, what)?;
        try_reserve_total(j, total, what)?;
        let i_slots = DisjointSlice::new(&mut i.spare_capacity_mut()[..total]);
        let j_slots = DisjointSlice::new(&mut j.spare_capacity_mut()[..total]);
        let unit_offsets = &scratch.unit_offsets;
        scratch.unit_pairs[..units]
            .par_iter()
            .enumerate()
            .for_each(|(u, buffer)| {
                let (start, len) = (unit_offsets[u], buffer.pairs.len());
                // SAFETY: unit u owns slots start..start + len of both columns; the units'
                // ranges partition 0..total, within the reserved capacity.
                let (i_out, j_out) =
                    unsafe { (i_slots.range_mut(start, len), j_slots.range_mut(start, len)) };
                for ((i_slot, j_slot), &[a, b]) in i_out.iter_mut().zip(j_out).zip(&buffer.pairs) {
                    i_slot.write(I::from_u32(a));
                    j_slot.write(I::from_u32(b));
                }
            });
        // SAFETY: the units' ranges tile 0..total and each unit wrote every slot of its range
        // in both columns.
        unsafe {
            i.set_len(total);
            j.set_len(total);
        }
        Ok(())
    }

    fn pairs_with<K: MaskKernel>(
        &self,
        out: &mut PairList<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        out.has_distances = with_distances;
        let Some(total) = self.gather_unit_pairs::<K>(out, with_distances)? else {
            out.pairs.clear();
            out.distances.clear();
            return Ok(());
        };
        let units = self.units.len();
        // Pass 2: each unit copies its pairs into place.
        // Only growth writes: every pair below `total` is overwritten by the copies.
        try_resize(&mut out.pairs, total, [0, 0], "the pairs")?;
        if with_distances {
            try_resize(
                &mut out.distances,
                total,
                T::default(),
                "the pair distances",
            )?;
        } else {
            out.distances.clear();
        }
        let pairs = DisjointSlice::new(&mut out.pairs);
        let distances = DisjointSlice::new(&mut out.distances);
        let unit_offsets = &out.unit_offsets;
        out.unit_pairs[..units]
            .par_iter()
            .enumerate()
            .for_each(|(u, buffer)| {
                let (start, len) = (unit_offsets[u], buffer.pairs.len());
                // SAFETY: unit u owns pairs start..start + len; the ranges partition 0..total.
                unsafe { pairs.range_mut(start, len) }.copy_from_slice(&buffer.pairs);
                if with_distances {
                    // SAFETY: as above, for the distances (same layout).
                    unsafe { distances.range_mut(start, len) }.copy_from_slice(&buffer.distances);
                }
            });
        Ok(())
    }

    /// The work units' count: how many buffers [`Grid::pairs_by_unit`] hands out (0 for an
    /// empty grid).
    pub(crate) fn unit_count(&self) -> usize {
        if self.table.is_some() {
            self.units.len()
        } else {
            0
        }
    }

    /// Gathers the unique pairs of each work unit (`[i, j]`, `i < j` in the caller's
    /// numbering) into the unit's buffer of `scratch`, and hands them at once, still in
    /// cache, to `visit(state, pairs)` with the unit's own entry of `states` (one per unit,
    /// [`Grid::unit_count`]), in parallel. The units in order list the same pairs as
    /// [`Grid::pairs`], so a caller that filters the candidates into per-unit outputs needs
    /// neither the list of all candidates nor its copy.
    ///
    /// With `band_from` (a squared radius), the larger member of each pair whose squared
    /// distance (the kernel's, by the formula of [`Real::distance_squared`]) exceeds it is
    /// handed over with [`BAND_FLAG`] set: `[i, j | BAND_FLAG]`. The kernel decides it from
    /// the distance it computed for the hit, so no distance is computed again; the grid's
    /// points must then number below `BAND_FLAG`.
    ///
    /// Fails like [`Grid::pairs`] (a unit's buffer past the cap or without memory); the
    /// states of the units that did not fail have then been visited.
    pub(crate) fn pairs_by_unit<S: Send>(
        &self,
        scratch: &mut PairList<T>,
        band_from: Option<T>,
        states: &mut [S],
        visit: impl Fn(&mut S, &[[u32; 2]]) + Sync,
    ) -> Result<(), Error> {
        assert!(
            band_from.is_none() || self.len() < BAND_FLAG as usize,
            "flagged pairs need identifiers below the flag"
        );
        match self.kernel {
            Kernel::Simd => {
                self.pairs_by_unit_with::<SimdKernel, S>(scratch, band_from, states, visit)
            }
            Kernel::Scalar => {
                self.pairs_by_unit_with::<ScalarKernel, S>(scratch, band_from, states, visit)
            }
        }
    }

    /// [`Grid::pairs_by_unit`] with kernel `K`.
    fn pairs_by_unit_with<K: MaskKernel, S: Send>(
        &self,
        scratch: &mut PairList<T>,
        band_from: Option<T>,
        states: &mut [S],
        visit: impl Fn(&mut S, &[[u32; 2]]) + Sync,
    ) -> Result<(), Error> {
        let Some(table) = self.table.as_ref() else {
            return Ok(());
        };
        let units = self.units.len();
        assert_eq!(states.len(), units, "one state per work unit");
        if scratch.unit_pairs.len() < units {
            try_reserve_total(&mut scratch.unit_pairs, units, "the work units' pairs")?;
            scratch.unit_pairs.resize_with(units, UnitPairs::default);
        }
        scratch.pairs.clear();
        scratch.distances.clear();
        let build = self.run_time_build::<K>();
        let cap = scratch.cap();
        self.units
            .par_iter()
            .zip(scratch.unit_pairs[..units].par_iter_mut())
            .zip(states.par_iter_mut())
            .for_each(|((&unit, buffer), state)| {
                let task = PairTask {
                    table,
                    unit,
                    cap,
                    band_from,
                };
                self.run_task::<K, _>(&task, buffer, false, build);
                if buffer.failure.is_none() {
                    visit(state, &buffer.pairs);
                }
            });
        match scratch.unit_pairs[..units]
            .iter_mut()
            .find_map(|buffer| buffer.failure.take())
        {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Pass 1 of the pairs: each work unit gathers its pairs into its own buffer of `out`,
    /// then `out.unit_offsets` gets each unit's first place in the output. Returns the pair
    /// count (`None` for an empty grid).
    fn gather_unit_pairs<K: MaskKernel>(
        &self,
        out: &mut PairList<T>,
        with_distances: bool,
    ) -> Result<Option<usize>, Error> {
        let Some(table) = self.table.as_ref() else {
            return Ok(None);
        };
        let units = self.units.len();
        if out.unit_pairs.len() < units {
            try_reserve_total(&mut out.unit_pairs, units, "the work units' pairs")?;
            out.unit_pairs.resize_with(units, UnitPairs::default);
        }
        let build = self.run_time_build::<K>();
        let cap = out.cap();
        self.units
            .par_iter()
            .zip(out.unit_pairs[..units].par_iter_mut())
            .for_each(|(&unit, buffer)| {
                let task = PairTask {
                    table,
                    unit,
                    cap,
                    band_from: None,
                };
                self.run_task::<K, _>(&task, buffer, with_distances, build);
            });
        if let Some(error) = out.unit_pairs[..units]
            .iter_mut()
            .find_map(|buffer| buffer.failure.take())
        {
            return Err(error);
        }
        // The unit offsets: where each unit's pairs go in the output.
        out.unit_offsets.clear();
        out.unit_offsets.extend(
            out.unit_pairs[..units]
                .iter()
                .map(|buffer| buffer.pairs.len()),
        );
        out.unit_offsets.push(0);
        let total = exclusive_scan(&mut out.unit_offsets[..units], &mut out.scan);
        out.unit_offsets[units] = total;
        check_cap("pairs", total, cap)?;
        Ok(Some(total))
    }

    /// Gathers the unique pairs of work unit `unit` into `buffer` with kernel `K`: each point
    /// against the later points of its bucket and the bucket's 13 forward neighbours; with
    /// `band_from` (and no distances), flagged as [`Grid::pairs_by_unit`] says. No closure
    /// on the way to the kernels (see [`KernelTask::run`]).
    #[inline(always)]
    fn pairs_unit_with<K: MaskKernel>(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        buffer: &mut UnitPairs<T>,
        with_distances: bool,
        band_from: Option<T>,
        cap: usize,
    ) {
        debug_assert!(
            !(with_distances && band_from.is_some()),
            "flags are for pairs without distances"
        );
        buffer.pairs.clear();
        buffer.distances.clear();
        buffer.failure = None;
        let columns = self.sorted.padded();
        let order = &self.order[..];
        for_each_pair_point!(self, table, unit, |p, ranges| {
            let point = self.sorted.point(p as usize);
            let row = ranges.candidates() + ROW_SLACK;
            if buffer.scratch.len() < row
                && let Err(error) =
                    try_resize(&mut buffer.scratch, candidate_room(row), 0, "a gather row")
            {
                buffer.failure = Some(error);
                return;
            }
            // With distances the hits are sorted positions (to find their coordinates),
            // else the caller's indices (`IDS`). A macro, not a closure: see above.
            macro_rules! gather {
                ($ids:literal) => {
                    // SAFETY: the ranges come from this grid's bucket starts (below its
                    // point count), the columns are its padded columns, `order` is padded
                    // by LANES (see `Grid::build_points`), and the row holds every
                    // candidate plus ROW_SLACK.
                    unsafe {
                        gather_point::<T, K, $ids>(
                            columns,
                            order,
                            point,
                            self.r2,
                            ranges.as_slice(),
                            usize::MAX,
                            u32::MAX,
                            &mut buffer.scratch[..row],
                        )
                    }
                };
            }
            if let Some(inner_r2) = band_from {
                // SAFETY: as above; the caller checked that the identifiers (below the
                // point count) are below BAND_FLAG.
                let hits = unsafe {
                    gather_point_flagged::<T, K>(
                        columns,
                        order,
                        point,
                        self.r2,
                        inner_r2,
                        ranges.as_slice(),
                        usize::MAX,
                        u32::MAX,
                        &mut buffer.scratch[..row],
                    )
                };
                if !buffer.room_for(hits, false, cap) {
                    return;
                }
                let i = order[p as usize];
                for &found in &buffer.scratch[..hits] {
                    // The flag goes with the pair's larger member.
                    let (j, flag) = (found & !BAND_FLAG, found & BAND_FLAG);
                    buffer
                        .pairs
                        .push(if i < j { [i, j | flag] } else { [j, i | flag] });
                }
                continue;
            }
            let hits = if with_distances {
                gather!(false)
            } else {
                gather!(true)
            };
            if !buffer.room_for(hits, with_distances, cap) {
                return;
            }
            let i = order[p as usize];
            for &found in &buffer.scratch[..hits] {
                let j = if with_distances {
                    buffer.distances.push(T::distance_squared(
                        point,
                        self.sorted.point(found as usize),
                    ));
                    order[found as usize]
                } else {
                    found
                };
                buffer.pairs.push(if i < j { [i, j] } else { [j, i] });
            }
        });
        // A unit's pair count changes from step to step (points move, and the unit's cut
        // with them): keep room for `MIN_ROOM` pairs more than now, plus an eighth, so that
        // the next step allocates nothing unless it grows by more. Doubling alone left a
        // unit just below a power of two short; an eighth alone, the small last unit of a
        // set (1,806 pairs, then 2,089).
        // A hint only: without the memory, the next step grows as it goes.
        let needed = (buffer.pairs.len() + MIN_ROOM).min(cap);
        let room = with_slack(needed).min(cap);
        if buffer.pairs.capacity() < needed {
            let _ = buffer.pairs.try_reserve_exact(room - buffer.pairs.len());
        }
        if with_distances && buffer.distances.capacity() < needed {
            let _ = buffer
                .distances
                .try_reserve_exact(room - buffer.distances.len());
        }
    }

    /// Calls `visit(i, j, d2)` for every pair found from the points of one work unit, in
    /// the unit's deterministic order, with `i < j` in the caller's numbering, with the
    /// grid's kernel ([`Grid::set_kernel`]).
    fn visit_unit_pairs(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        visit: &mut impl FnMut(u32, u32, T),
    ) {
        match self.kernel {
            Kernel::Simd => self.visit_unit_pairs_with::<SimdKernel>(table, unit, visit),
            Kernel::Scalar => self.visit_unit_pairs_with::<ScalarKernel>(table, unit, visit),
        }
    }

    /// [`Grid::visit_unit_pairs`] with kernel `K`.
    fn visit_unit_pairs_with<K: MaskKernel>(
        &self,
        table: &CellTable,
        unit: (u32, u32),
        visit: &mut impl FnMut(u32, u32, T),
    ) {
        self.walk_unit_forward::<K>(table, unit, |p, base, mask| {
            let i = self.order[p as usize];
            let point = self.sorted.point(p as usize);
            for_each_hit(base, mask, |q| {
                let j = self.order[q as usize];
                let d2 = T::distance_squared(point, self.sorted.point(q as usize));
                if i < j {
                    visit(i, j, d2)
                } else {
                    visit(j, i, d2)
                }
            });
        });
    }

    /// Calls `visit(i, j, d2)` once for every unique pair (`i < j`, caller's numbering),
    /// sequentially and in the same deterministic order as [`Grid::pairs`]; stores nothing.
    pub fn for_each_pair(&self, mut visit: impl FnMut(u32, u32, T)) {
        let Some(table) = self.table.as_ref() else {
            return;
        };
        for &unit in &self.units {
            self.visit_unit_pairs(table, unit, &mut visit);
        }
    }

    /// Calls `visit(i, j, d2)` once for every unique pair, in parallel and in no fixed order;
    /// stores nothing.
    pub fn par_for_each_pair(&self, visit: impl Fn(u32, u32, T) + Sync) {
        let Some(table) = self.table.as_ref() else {
            return;
        };
        self.units.par_iter().for_each(|&unit| {
            self.visit_unit_pairs(table, unit, &mut |i, j, d2| visit(i, j, d2));
        });
    }
}

#[cfg(test)]
mod tests {
    use hhg_testkit::SplitMix64;

    use super::PairList;
    use crate::geometry::Kernel;
    use crate::grid::{Grid, RunTimeDispatch};
    use crate::kernel::BAND_FLAG;
    use crate::real::Real;

    /// The kernels a test can force: the scalar reference, the SIMD kernel as compiled, and
    /// its run-time AVX2 and AVX-512 builds (each where the CPU has it; else the widest it
    /// has, which the other rounds also cover).
    const KERNELS: [(Kernel, RunTimeDispatch); 4] = [
        (Kernel::Scalar, RunTimeDispatch::Off),
        (Kernel::Simd, RunTimeDispatch::Off),
        (Kernel::Simd, RunTimeDispatch::UpToAvx2),
        (Kernel::Simd, RunTimeDispatch::Widest),
    ];

    /// The value of `T` just below `value`.
    fn just_below<T: Real>(value: T) -> T {
        if size_of::<T>() == size_of::<f32>() {
            T::from_f64(f64::from((value.to_f64() as f32).next_down()))
        } else {
            T::from_f64(value.to_f64().next_down())
        }
    }

    /// The flagged pairs of `pairs_by_unit`, unit after unit, on `grid`.
    fn flagged_pairs<T: Real>(grid: &Grid<T>, band_from: Option<T>) -> Vec<[u32; 2]> {
        let mut states: Vec<Vec<[u32; 2]>> = vec![Vec::new(); grid.unit_count()];
        let mut scratch = PairList::default();
        grid.pairs_by_unit(&mut scratch, band_from, &mut states, |state, pairs| {
            state.extend_from_slice(pairs)
        })
        .unwrap();
        states.concat()
    }

    /// Flagged pairs against brute force in every kernel: the grid's pairs in its order,
    /// each with the flag exactly when its squared distance by the one formula exceeds the
    /// inner bound. The points lie on a lattice of quarters, so many pairs share one squared
    /// distance exactly; the bounds are such shared distances (pairs exactly at the bound
    /// keep no flag), the value just below one (they all take it), random values, zero
    /// (every pair but coincident points flagged) and the radius (none flagged).
    fn flags_match_brute_force<T: Real>() {
        let mut rng = SplitMix64::new(0x7121_0022);
        for round in 0..24 {
            let n = 200 + rng.below(600);
            let points: Vec<[T; 3]> = (0..n)
                .map(|_| std::array::from_fn(|_| T::from_f64(rng.below(24) as f64 * 0.25)))
                .collect();
            let radius = T::from_f64(rng.range(0.9, 1.6));
            let r2 = radius * radius;
            let mut grid = Grid::new(radius).unwrap();
            grid.build(&points).unwrap();
            let mut unflagged = PairList::default();
            grid.pairs(&mut unflagged).unwrap();
            let expected_pairs = unflagged.pairs().to_vec();
            assert!(!expected_pairs.is_empty(), "round {round}: no pairs");
            let d2 = |[i, j]: [u32; 2]| T::distance_squared(points[i as usize], points[j as usize]);
            let shared = d2(expected_pairs[rng.below(expected_pairs.len())]);
            let bounds = [
                shared,
                just_below(shared),
                T::from_f64(rng.range(0.0, r2.to_f64())),
                T::from_f64(0.0),
                r2,
            ];
            for (kernel, dispatch) in KERNELS {
                grid.set_kernel(kernel);
                grid.set_run_time_dispatch(dispatch);
                assert_eq!(
                    flagged_pairs(&grid, None),
                    expected_pairs,
                    "round {round} ({kernel:?}, {dispatch:?}): pairs without flags"
                );
                for inner_r2 in bounds {
                    let expected: Vec<[u32; 2]> = expected_pairs
                        .iter()
                        .map(|&[i, j]| {
                            let flag = if d2([i, j]) > inner_r2 { BAND_FLAG } else { 0 };
                            [i, j | flag]
                        })
                        .collect();
                    let found = flagged_pairs(&grid, Some(inner_r2));
                    assert!(
                        found == expected,
                        "round {round} ({kernel:?}, {dispatch:?}): flags for inner bound {}",
                        inner_r2.to_f64()
                    );
                    if inner_r2 == shared {
                        assert!(
                            found
                                .iter()
                                .any(|&[i, j]| j & BAND_FLAG == 0 && d2([i, j]) == inner_r2),
                            "round {round}: no pair exactly at the bound"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn flagged_pairs_match_brute_force() {
        flags_match_brute_force::<f32>();
        flags_match_brute_force::<f64>();
    }
}
