//! One grid level over one point set: the build (validate, hash, counting sort, gather into
//! sorted SoA columns) and the neighbourhood ranges every search walks.

use rayon::prelude::*;

use crate::columns::{COPY_CHUNK, PointColumns, check_count};
use crate::error::Error;
use crate::geometry::{Bounds, CellTable, Kernel, Points, bounds};
use crate::kernel::MaskKernel;
use crate::lists::ListOrder;
use crate::real::{LANES, Real};
use crate::simd::{Build, avx2_detected, avx512_detected};
use crate::sort::{SortScratch, adopt_identity, counting_sort, cut_units};

/// Points per work unit of a search: units end at bucket borders, so a unit holds about
/// this many points; small enough to balance two to sixteen threads, large enough that
/// scheduling costs nothing next to ~100 distance tests per point.
pub(crate) const UNIT_POINTS: usize = 2048;

/// How many points ahead the build's gather of the sorted columns asks the cache for the
/// caller's point: input in random order makes every read a miss, and 24 ahead took the
/// gather at 1M points from 31 to 23 ms on one thread (12 and 48 measured no better).
const PREFETCH_AHEAD: usize = 24;

/// At most this many contiguous ranges of sorted positions make up a neighbourhood: 9 rows
/// of 3 cells, each row split in two where it wraps around the table.
pub(crate) const MAX_RANGES: usize = 18;

/// Contiguous ranges of sorted positions, ascending within each row.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ranges {
    pub(crate) ranges: [(u32, u32); MAX_RANGES],
    pub(crate) len: usize,
}

impl Ranges {
    #[inline(always)]
    pub(crate) fn push(&mut self, start: u32, end: u32) {
        if start < end {
            self.ranges[self.len] = (start, end);
            self.len += 1;
        }
    }

    /// These ranges with `start..end` in front (when it is not empty).
    #[inline(always)]
    pub(crate) fn prepend(&self, start: u32, end: u32) -> Ranges {
        let mut ranges = Ranges::default();
        ranges.push(start, end);
        for &(s, e) in self.as_slice() {
            ranges.push(s, e);
        }
        ranges
    }

    /// Tells whether every range starts at or after the end of the one before, so positions
    /// taken range by range ascend.
    #[inline(always)]
    pub(crate) fn ascending(&self) -> bool {
        self.as_slice().windows(2).all(|w| w[0].1 <= w[1].0)
    }

    /// The number of candidates the ranges hold.
    #[inline(always)]
    pub(crate) fn candidates(&self) -> usize {
        self.as_slice().iter().map(|&(s, e)| (e - s) as usize).sum()
    }

    /// The non-empty ranges.
    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[(u32, u32)] {
        &self.ranges[..self.len]
    }

    /// These ranges ordered by their start, so that positions taken range by range ascend
    /// (the ranges of distinct buckets never overlap); a row that wraps around the table
    /// comes out of [`full_neighbourhood`] in two ranges out of that order.
    #[inline(always)]
    pub(crate) fn sorted(&self) -> Ranges {
        let mut ranges = *self;
        for i in 1..ranges.len {
            let range = ranges.ranges[i];
            let mut j = i;
            while j > 0 && ranges.ranges[j - 1].0 > range.0 {
                ranges.ranges[j] = ranges.ranges[j - 1];
                j -= 1;
            }
            ranges.ranges[j] = range;
        }
        ranges
    }
}

/// A built search structure over one point set for one radius: the points sorted by cell
/// into SoA columns, the bucket starts, and the permutation back to the caller's numbering.
///
/// Build once per time step with [`Grid::build`]; every buffer is kept and reused, so a
/// rebuild with no more points than before allocates nothing.
#[derive(Debug)]
pub struct Grid<T: Real> {
    pub(crate) radius: T,
    pub(crate) r2: T,
    pub(crate) kernel: Kernel,
    pub(crate) table: Option<CellTable>,
    pub(crate) bounds: Option<Bounds>,
    pub(crate) sorted: PointColumns<T>,
    pub(crate) order: Vec<u32>,
    /// Whether `order` is the identity: the caller gave the points in cell order (the steady
    /// state of a solver that reorders its particles), so sorted positions are caller indices.
    pub(crate) in_cell_order: bool,
    /// Whether the caller's points of the last build came in cell order by themselves (not
    /// through [`Grid::adopt_cell_order`]): then the next build copies the points into the
    /// columns while it hashes them, expecting them in cell order again.
    given_in_cell_order: bool,
    /// The order before the last [`Grid::adopt_cell_order`], kept for the caller (and as a
    /// buffer for the next call).
    adopted_from: Vec<u32>,
    /// Which run-time builds the SIMD kernel may switch to (see
    /// [`Grid::set_run_time_dispatch`]).
    run_time_dispatch: RunTimeDispatch,
    /// The order of the entries of each list (see [`Grid::set_list_order`]).
    pub(crate) list_order: ListOrder,
    /// The pass for cell order with exceptions is taken while at most one point in this many
    /// is an exception; 0 never takes it; `None` follows the density (see
    /// `lists::exceptions::max_exceptions`).
    pub(crate) exceptions_share: Option<usize>,
    pub(crate) starts: Vec<u32>,
    pub(crate) units: Vec<(u32, u32)>,
    /// The bucket of each point, in the caller's numbering.
    pub(crate) keys: Vec<u32>,
    sort_scratch: SortScratch,
}

/// How far the SIMD kernel's passes may switch at run time to builds of their inner loops
/// for wider instruction sets than the library was compiled for (see
/// [`Grid::set_run_time_dispatch`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunTimeDispatch {
    /// Only the instructions the library was compiled for.
    Off,
    /// The AVX2 build where the CPU has AVX2; never the AVX-512 one.
    UpToAvx2,
    /// The widest build the CPU runs: AVX-512, else AVX2 (the default).
    #[default]
    Widest,
}

/// Refuses a radius that is not finite and positive, or whose square is not a normal number
/// in the input precision: with `r * r` infinite, zero or subnormal the predicate
/// `d2 <= r * r` no longer measures distance (an overflowing or underflowing `d2` passes or
/// fails regardless of the true distance), so no cell size can honour it.
pub fn check_radius<T: Real>(radius: T) -> Result<(), Error> {
    let r = radius.to_f64();
    if !(r.is_finite() && r > 0.0 && (radius * radius).is_normal()) {
        return Err(Error::InvalidRadius { radius: r });
    }
    Ok(())
}

impl<T: Real> Grid<T> {
    /// An empty grid for neighbour search within `radius` (pairs with distance `<= radius`).
    pub fn new(radius: T) -> Result<Self, Error> {
        check_radius(radius)?;
        Ok(Self {
            radius,
            r2: radius * radius,
            kernel: Kernel::Simd,
            table: None,
            bounds: None,
            sorted: PointColumns::default(),
            order: Vec::new(),
            in_cell_order: false,
            given_in_cell_order: false,
            adopted_from: Vec::new(),
            run_time_dispatch: RunTimeDispatch::Widest,
            list_order: ListOrder::Ascending,
            exceptions_share: None,
            starts: Vec::new(),
            units: Vec::new(),
            keys: Vec::new(),
            sort_scratch: SortScratch::default(),
        })
    }

    /// Chooses the SIMD (default) or the scalar reference kernel; both give identical results.
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
    }

    /// The kernel the searches run.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Which builds of its inner loops the SIMD kernel's passes may switch to at run time
    /// (default [`RunTimeDispatch::Widest`]): builds compiled for AVX2 or AVX-512, taken
    /// where the CPU has the features and the library itself was compiled for less (the
    /// default x86_64 target is SSE2). Every setting gives the same results bit for bit;
    /// the setting exists to compare and test the builds.
    pub fn set_run_time_dispatch(&mut self, dispatch: RunTimeDispatch) {
        self.run_time_dispatch = dispatch;
    }

    /// Which run-time builds the SIMD kernel's passes may switch to.
    pub fn run_time_dispatch(&self) -> RunTimeDispatch {
        self.run_time_dispatch
    }

    /// Chooses the order of the entries of every neighbour list this grid gathers (self
    /// lists, queries, lists of another set): [`ListOrder::Ascending`] (the default) or
    /// [`ListOrder::CellOrder`], which skips sorting each list and is faster on input that
    /// is not exactly in cell order. Both are deterministic; the lists hold the same entries.
    pub fn set_list_order(&mut self, order: ListOrder) {
        self.list_order = order;
    }

    /// The order of the entries of every list (see [`Grid::set_list_order`]).
    pub fn list_order(&self) -> ListOrder {
        self.list_order
    }

    /// The build a pass with kernel `K` runs in: the widest run-time build that `K` lacks,
    /// the grid allows and the CPU has, or `K` as compiled.
    #[inline]
    pub(crate) fn run_time_build<K: MaskKernel>(&self) -> Build {
        if !K::DISPATCHES {
            return Build::AsCompiled;
        }
        let widest = self.run_time_dispatch;
        if !K::AVX512 && widest == RunTimeDispatch::Widest && avx512_detected() {
            Build::Avx512
        } else if !K::AVX2 && widest != RunTimeDispatch::Off && avx2_detected() {
            Build::Avx2
        } else {
            Build::AsCompiled
        }
    }

    /// Makes `view` a grid with this grid's radius, kernel, run-time dispatch, table and
    /// bounds, in cell order and with ascending lists, keeping `view`'s buffers: the shell
    /// of a view of the same points in another numbering (see `lists::exceptions`), whose
    /// columns, order, starts and units the caller fills.
    pub(crate) fn shape_view(&self, view: &mut Grid<T>) {
        view.radius = self.radius;
        view.r2 = self.r2;
        view.kernel = self.kernel;
        view.run_time_dispatch = self.run_time_dispatch;
        view.list_order = ListOrder::Ascending;
        view.table = self.table;
        view.bounds = self.bounds;
        view.in_cell_order = true;
        view.given_in_cell_order = false;
    }

    /// The search radius.
    pub fn radius(&self) -> T {
        self.radius
    }

    /// How many points the grid holds.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// Tells whether the grid holds no point.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The cell table of the last build (`None` while empty).
    pub fn table(&self) -> Option<&CellTable> {
        self.table.as_ref()
    }

    /// The locality permutation: `order()[k]` is the caller's index of the `k`-th point in
    /// cell order. Apply it to solver arrays with [`crate::reorder::apply_order`].
    pub fn order(&self) -> &[u32] {
        &self.order[..self.len()]
    }

    /// Whether the points were given in cell order (`order()` is the identity), by the
    /// caller or through [`Grid::adopt_cell_order`]: the list pass then needs no sort and
    /// copies each work unit's lists into place while they are in cache.
    pub fn in_cell_order(&self) -> bool {
        self.in_cell_order
    }

    /// Makes the cell order of the last build the caller's numbering, without a rebuild:
    /// point `k` is from now on the `k`-th point of [`Grid::sorted_points`], `order()` is the
    /// identity, and lists, pairs and queries use the new numbering (and take the faster
    /// list pass for input in cell order).
    ///
    /// Returns the permutation the caller must apply to each of its own per-point arrays
    /// ([`crate::reorder::apply_order`]): `order()` as it was before the call. A solver that
    /// calls this after every build, then permutes its arrays, searches in cell order at every
    /// step for the cost of those permutations; reordering its arrays by a stale order and
    /// rebuilding gives input that is only nearly in cell order, whose lists still need
    /// sorting. The returned slice is overwritten by the next call; the buffers are reused.
    pub fn adopt_cell_order(&mut self) -> &[u32] {
        let n = self.len();
        // Padded like a built order, so the gather kernel can load 8 indices anywhere.
        adopt_identity(&mut self.order, &mut self.adopted_from, n, LANES);
        self.in_cell_order = n > 0;
        &self.adopted_from[..n.min(self.adopted_from.len())]
    }

    /// The points in cell order, as SoA columns.
    pub fn sorted_points(&self) -> &PointColumns<T> {
        &self.sorted
    }

    /// Builds the grid over array-of-structs positions.
    pub fn build(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        self.build_points(Points::Aos(points))
    }

    /// Builds the grid over separate coordinate slices.
    pub fn build_soa(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<(), Error> {
        self.build_points(Points::Soa(x, y, z))
    }

    /// Builds the grid: validate and bound, choose the table, hash 8 lanes at a time,
    /// counting-sort by bucket, gather the sorted columns, cut the work units.
    pub fn build_points(&mut self, points: Points<'_, T>) -> Result<(), Error> {
        points.check_lengths()?;
        let n = points.len();
        check_count(n)?;
        let Some(bounds) = bounds(points)? else {
            self.clear();
            return Ok(());
        };
        let table = CellTable::choose(&bounds, n, self.radius.to_f64(), points)?;
        // Points that came in cell order at the last build most likely do again (a caller
        // that sorts its points before each build): the key pass then copies them into the
        // columns as it reads them, which are the sorted columns if the keys ascend, and
        // the gather below, a second read of the input, is skipped. Otherwise the gather
        // overwrites them. (Points renumbered by `adopt_cell_order` move before the next
        // build and some cross cells: a build whose own keys did not ascend makes no copy
        // at the next.)
        let speculate = self.given_in_cell_order;
        self.sorted.set_len(n);
        let columns = speculate.then(|| self.sorted.columns_mut());
        table.keys_and_columns(points, self.kernel, &mut self.keys, columns);
        self.in_cell_order = counting_sort(
            &self.keys,
            table.buckets(),
            &mut self.starts,
            &mut self.order,
            &mut self.sort_scratch,
        );
        self.given_in_cell_order = self.in_cell_order;
        // Padding lets the gather kernel load 8 caller indices at any sorted position.
        self.order.resize(n + LANES, 0);
        if !(speculate && self.in_cell_order) {
            self.gather_columns(points);
        }
        self.table = Some(table);
        self.bounds = Some(bounds);
        self.cut_units();
        Ok(())
    }

    /// Copies the caller's points into the sorted columns, in the order of the sort.
    fn gather_columns(&mut self, points: Points<'_, T>) {
        let n = points.len();
        let order = &self.order[..n];
        let [x, y, z] = self.sorted.columns_mut();
        x.par_chunks_mut(COPY_CHUNK)
            .zip(y.par_chunks_mut(COPY_CHUNK))
            .zip(z.par_chunks_mut(COPY_CHUNK))
            .zip(order.par_chunks(COPY_CHUNK))
            .for_each(|(((x, y), z), order)| {
                // A chunk of consecutive caller indices (input in cell order) reads its points
                // in sequence, which the hardware prefetches by itself.
                let (first, last) = (order[0] as usize, order[order.len() - 1] as usize);
                let in_sequence = last.wrapping_sub(first) == order.len() - 1;
                for (k, &i) in order.iter().enumerate() {
                    if !in_sequence && let Some(&ahead) = order.get(k + PREFETCH_AHEAD) {
                        points.prefetch(ahead as usize);
                    }
                    let p = points.get(i as usize);
                    x[k] = p[0];
                    y[k] = p[1];
                    z[k] = p[2];
                }
            });
    }

    /// Empties the grid, keeping its buffers.
    fn clear(&mut self) {
        self.table = None;
        self.bounds = None;
        self.sorted.set_len(0);
        self.order.clear();
        self.in_cell_order = false;
        self.given_in_cell_order = false;
        self.starts.clear();
        self.units.clear();
    }

    /// Cuts the buckets into work units of about [`UNIT_POINTS`] points each.
    fn cut_units(&mut self) {
        let n = self.len();
        cut_units(&self.starts, n, UNIT_POINTS, &mut self.units);
    }

    /// The points in the buckets of work unit `unit`.
    #[inline]
    pub(crate) fn unit_points(&self, unit: (u32, u32)) -> usize {
        (self.starts[unit.1 as usize] - self.starts[unit.0 as usize]) as usize
    }

    /// Sorted positions of bucket `b`.
    #[inline(always)]
    pub(crate) fn bucket_range(&self, b: u32) -> (u32, u32) {
        (self.starts[b as usize], self.starts[b as usize + 1])
    }
}

/// Appends the sorted positions of the 3 buckets `bx - 1 ..= bx + 1` of one row, in
/// ascending order, splitting where the row wraps around the table.
#[inline(always)]
fn push_row<const D: usize>(
    starts: &[u32],
    ranges: &mut Ranges,
    table: &CellTable<D>,
    bx: u32,
    row: u32,
) {
    let mx = (1u32 << table.shift[0]) - 1;
    let at = |x: u32| starts[(row + x) as usize];
    if bx >= 1 && bx < mx {
        ranges.push(at(bx - 1), at(bx + 2));
    } else if bx == 0 {
        ranges.push(at(0), at(2));
        ranges.push(at(mx), starts[(row + mx) as usize + 1]);
    } else {
        ranges.push(at(0), at(1));
        ranges.push(at(mx - 1), starts[(row + mx) as usize + 1]);
    }
}

/// The bucket-row base of bucket coordinates `(.., by + dy, bz + dz)`, wrapped (in the
/// plane, `(.., by + dy)`: `bz` and `dz` are not used).
#[inline(always)]
fn row_base<const D: usize>(table: &CellTable<D>, b: [u32; D], dy: i32, dz: i32) -> u32 {
    let my = (1u32 << table.shift[1]) - 1;
    let y = b[1].wrapping_add(dy as u32) & my;
    let mut base = y << table.shift[0];
    if D == 3 {
        // Axis `D - 1` is z here (written so, the plane's instance indexes no third axis).
        let mz = (1u32 << table.shift[D - 1]) - 1;
        let z = b[D - 1].wrapping_add(dz as u32) & mz;
        base |= z << (table.shift[0] + table.shift[1]);
    }
    base
}

/// The offsets `dz` of the rows of a neighbourhood: `-1..=1` in space, `0` in the plane.
#[inline(always)]
fn layers<const D: usize>() -> std::ops::RangeInclusive<i32> {
    if D == 3 { -1..=1 } else { 0..=0 }
}

/// All 27 buckets around bucket coordinates `b` (including `b`), as position ranges of a
/// counting sort with bucket starts `starts` (in the plane, the 9 around `b`).
#[inline]
pub(crate) fn full_neighbourhood<const D: usize>(
    starts: &[u32],
    table: &CellTable<D>,
    b: [u32; D],
) -> Ranges {
    let mut ranges = Ranges::default();
    for dz in layers::<D>() {
        for dy in -1..=1 {
            push_row(starts, &mut ranges, table, b[0], row_base(table, b, dy, dz));
        }
    }
    ranges
}

/// The buckets around the `width` buckets of one row from bucket coordinates `b` on (`b`
/// and the `width - 1` after it in x), as the 9 rows `x - 1 ..= x + width` of position
/// ranges; `width` 1 is [`full_neighbourhood`]. For a wider run, the run and its two
/// neighbours in x must not wrap: `b[0] >= 1` and `b[0] + width` at most the last x.
#[inline]
pub(crate) fn run_neighbourhood(
    starts: &[u32],
    table: &CellTable,
    b: [u32; 3],
    width: u32,
) -> Ranges {
    if width == 1 {
        return full_neighbourhood(starts, table, b);
    }
    debug_assert!(b[0] >= 1 && b[0] + width < 1u32 << table.shift[0]);
    let mut ranges = Ranges::default();
    for dz in -1..=1 {
        for dy in -1..=1 {
            let row = row_base(table, b, dy, dz);
            ranges.push(
                starts[(row + b[0] - 1) as usize],
                starts[(row + b[0] + width + 1) as usize],
            );
        }
    }
    ranges
}

/// The 13 forward neighbours of bucket `b` (coordinates `bc`) as position ranges: the
/// `x + 1` bucket of its own row, then the rows `(dy, dz)` in `(+1, 0)`, `(-1..=1, +1)`.
/// With the backward 13 being some other bucket's forward ones, every pair of distinct
/// buckets is visited exactly once (the table has at least 4 buckets per axis, so the 26
/// offsets stay distinct under wrap-around). In the plane: the `x + 1` bucket and the row
/// `dy = +1`, the 4 forward of the 8 neighbours.
#[inline]
pub(crate) fn forward_neighbourhood<const D: usize>(
    starts: &[u32],
    table: &CellTable<D>,
    b: u32,
    bc: [u32; D],
) -> Ranges {
    let mut ranges = Ranges::default();
    let mx = (1u32 << table.shift[0]) - 1;
    let next = if bc[0] < mx { b + 1 } else { b - mx };
    ranges.push(starts[next as usize], starts[next as usize + 1]);
    push_forward_rows(starts, &mut ranges, table, bc);
    ranges
}

/// The 12 forward neighbours of bucket coordinates `bc` outside its own row: the rows
/// `(dy, dz)` in `(+1, 0)`, `(-1..=1, +1)`, 3 buckets each, as position ranges (in the
/// plane, the 3 of the row `dy = +1`).
#[inline]
pub(crate) fn forward_rows<const D: usize>(
    starts: &[u32],
    table: &CellTable<D>,
    bc: [u32; D],
) -> Ranges {
    let mut ranges = Ranges::default();
    push_forward_rows(starts, &mut ranges, table, bc);
    ranges
}

/// Appends the forward rows of bucket coordinates `bc` (4 in space, 1 in the plane).
#[inline(always)]
fn push_forward_rows<const D: usize>(
    starts: &[u32],
    ranges: &mut Ranges,
    table: &CellTable<D>,
    bc: [u32; D],
) {
    // The rows `(dy, dz)` as constants in the loop, which the compiler unrolls.
    if D == 3 {
        for (dy, dz) in [(1, 0), (-1, 1), (0, 1), (1, 1)] {
            push_row(starts, ranges, table, bc[0], row_base(table, bc, dy, dz));
        }
    } else {
        push_row(starts, ranges, table, bc[0], row_base(table, bc, 1, 0));
    }
}

impl<T: Real> Grid<T> {
    /// All 27 buckets around bucket coordinates `b` (including `b`), as position ranges.
    #[inline]
    pub(crate) fn full_neighbourhood(&self, table: &CellTable, b: [u32; 3]) -> Ranges {
        full_neighbourhood(&self.starts, table, b)
    }

    /// The 13 forward neighbours of bucket `b` (coordinates `bc`), as position ranges.
    #[inline]
    pub(crate) fn forward_neighbourhood(&self, table: &CellTable, b: u32, bc: [u32; 3]) -> Ranges {
        forward_neighbourhood(&self.starts, table, b, bc)
    }
}
