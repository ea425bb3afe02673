//! The inner loops every search shares: a batch of points that share one neighbourhood is
//! tested against contiguous ranges of sorted candidates, 8 lanes at a time, and the hit
//! masks are counted or compressed into index lists. The packing of a batch's candidates
//! within reach of its box is in `pack`, the AVX-512 forms of both in `avx512`.

#[cfg(target_arch = "x86_64")]
mod avx512;
mod pack;

use wide::u32x8;

use crate::real::{COMPRESS_LANES, LANES, Real};
use crate::simd::{COMPILED_FOR_AVX2, COMPILED_FOR_AVX512, permute8};

pub(crate) use pack::{PackRequest, PackedCandidates, bounding_box, pack_within_box};

/// At most this many searching points share one pass over a neighbourhood's candidates:
/// each block of 8 candidates is loaded once and tested against every point of the batch.
pub(crate) const BATCH: usize = 16;

/// A distance-mask kernel: SIMD or the scalar reference (identical by construction and test).
pub(crate) trait MaskKernel {
    /// Whether batches first pack the candidates within reach of their bounding box (see
    /// [`pack_within_box`]); the scalar reference tests every candidate of the ranges, so
    /// the two kernels check the filter against each other.
    const PACKS: bool;

    /// Whether the kernel's permutes and unsigned comparisons are AVX2 instructions (see
    /// `simd`). A kernel that sets it runs only where the CPU has AVX2: in a library
    /// compiled for AVX2, or in a run-time AVX2 or AVX-512 build after detection.
    const AVX2: bool;

    /// Whether the kernel's gather and packing are the AVX-512 loops (16 `f32` or 8 `f64`
    /// lanes; see `kernel::avx512`). A kernel that sets it runs only where the CPU has
    /// AVX-512 F, VL, BW and DQ, and sets [`MaskKernel::AVX2`] too.
    const AVX512: bool;

    /// Whether passes with this kernel switch to a run-time build for a wider instruction
    /// set where the CPU has one (the SIMD kernel of a library compiled without AVX-512).
    const DISPATCHES: bool;

    /// 8 loaded candidates.
    type Block<T: Real>: Copy;

    /// Loads 8 candidates.
    fn load<T: Real>(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block<T>;

    /// Bit `k` set when candidate `k` of the block is within `sqrt(r2)` of `p`.
    fn mask<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32;

    /// The masks of [`MaskKernel::mask`] for `r2` and for `inner_r2`, from one computed
    /// distance per candidate where the kernel can share it.
    fn masks<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T, inner_r2: T) -> (u32, u32);
}

/// The `wide` 8-lane kernel, with its permutes in AVX2 instructions or not, and with the
/// AVX-512 loops (16 `f32` or 8 `f64` lanes) or not.
pub(crate) struct Simd<const AVX2: bool, const AVX512: bool>;

/// The SIMD kernel as the library was compiled: AVX2 permutes in a build for AVX2,
/// `wide`'s otherwise, and the AVX-512 loops in a build for AVX-512.
pub(crate) type SimdKernel = Simd<COMPILED_FOR_AVX2, COMPILED_FOR_AVX512>;

/// The 8-lane kernel of the run-time AVX2 build (see `simd`).
pub(crate) type Avx2Kernel = Simd<true, false>;

/// The kernel of the run-time AVX-512 build (see `simd`).
pub(crate) type Avx512Kernel = Simd<true, true>;

/// Entries of room every gather row and packed column keeps past its last candidate: a
/// block's hits are stored as a whole block (16 lanes in the AVX-512 loops).
pub(crate) const ROW_SLACK: usize = 16;

/// The one-lane-at-a-time reference kernel.
pub(crate) struct ScalarKernel;

impl<const AVX2_BUILD: bool, const AVX512_BUILD: bool> MaskKernel
    for Simd<AVX2_BUILD, AVX512_BUILD>
{
    const PACKS: bool = true;
    const AVX2: bool = AVX2_BUILD;
    const AVX512: bool = AVX512_BUILD;
    const DISPATCHES: bool = !AVX512_BUILD;

    type Block<T: Real> = T::Block;

    #[inline(always)]
    fn load<T: Real>(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block<T> {
        T::load_block(x, y, z)
    }

    #[inline(always)]
    fn mask<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32 {
        T::block_mask(p, block, r2)
    }

    #[inline(always)]
    fn masks<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T, inner_r2: T) -> (u32, u32) {
        T::block_masks(p, block, r2, inner_r2)
    }
}

impl MaskKernel for ScalarKernel {
    const PACKS: bool = false;
    const AVX2: bool = false;
    const AVX512: bool = false;
    const DISPATCHES: bool = false;

    type Block<T: Real> = [[T; 8]; 3];

    #[inline(always)]
    fn load<T: Real>(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block<T> {
        [*x, *y, *z]
    }

    #[inline(always)]
    fn mask<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32 {
        T::within_mask_scalar(p, &block[0], &block[1], &block[2], r2)
    }

    #[inline(always)]
    fn masks<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T, inner_r2: T) -> (u32, u32) {
        (Self::mask(p, block, r2), Self::mask(p, block, inner_r2))
    }
}

/// The 8 lanes of `column` starting at `base`.
#[inline(always)]
fn lanes<T: Real>(column: &[T], base: usize) -> &[T; 8] {
    column[base..base + LANES].try_into().unwrap()
}

/// Tests every point of `batch` against the sorted candidates of every range and calls
/// `visit(j, block_start, mask)` for point `batch[j]` and each block of 8 candidates
/// (lanes past a range's end are masked off; `mask` may be 0).
///
/// `columns` are padded (see `PointColumns`), so a block that starts before a range's end
/// never reads past the allocation.
#[inline(always)]
pub(crate) fn scan_batch<T: Real, K: MaskKernel>(
    columns: [&[T]; 3],
    batch: &[[T; 3]],
    r2: T,
    ranges: &[(u32, u32)],
    mut visit: impl FnMut(usize, u32, u32),
) {
    for &(start, end) in ranges {
        let end = end as usize;
        let mut base = start as usize;
        while base < end {
            let block = K::load(
                lanes(columns[0], base),
                lanes(columns[1], base),
                lanes(columns[2], base),
            );
            let valid = if end - base < LANES {
                (1u32 << (end - base)) - 1
            } else {
                (1u32 << LANES) - 1
            };
            for (j, &p) in batch.iter().enumerate() {
                visit(j, base as u32, K::mask(p, &block, r2) & valid);
            }
            base += LANES;
        }
    }
}

/// The 8 lanes of each column starting at `base`, without bounds checks.
///
/// # Safety
/// `base + LANES <= column.len()` for all three columns (true for any `base` below the
/// point count of padded `PointColumns`).
#[inline(always)]
unsafe fn lanes_unchecked<T: Real>(columns: [&[T]; 3], base: usize) -> [&[T; 8]; 3] {
    columns.map(|column| {
        debug_assert!(
            base + LANES <= column.len(),
            "block at {base} past the padding"
        );
        // SAFETY: the caller guarantees `base..base + LANES` lies inside the column.
        unsafe { &*column.as_ptr().add(base).cast::<[T; 8]>() }
    })
}

/// Gathers the candidates of `ranges` within `sqrt(r2)` of `p` into `out` (in range order,
/// ascending within each range), skipping sorted position `itself` (which only range
/// `self_range` may hold), and returns how many were written: [`gather_many`] for one point.
///
/// # Safety
/// As for [`gather_many`], with `out` the one row.
#[allow(clippy::too_many_arguments)] // The hot loop's inputs, all used on every block.
#[inline(always)]
pub(crate) unsafe fn gather_point<T: Real, K: MaskKernel, const IDS: bool>(
    columns: [&[T]; 3],
    ids: &[u32],
    p: [T; 3],
    r2: T,
    ranges: &[(u32, u32)],
    self_range: usize,
    itself: u32,
    out: &mut [u32],
) -> usize {
    // SAFETY: the caller upholds `gather_many`'s contract with `out` as the one row.
    let [len] = unsafe {
        gather_many::<T, K, IDS, 1>(columns, ids, [p], r2, ranges, self_range, [itself], out)
    };
    len
}

/// The bit that [`gather_point_flagged`] sets in the identifier of each hit beyond the inner
/// radius: free in identifiers below `2^31` (the periodic search's stay below `2^27`).
pub(crate) const BAND_FLAG: u32 = 1 << 31;

/// [`gather_point`] with identifiers, which also flags each hit beyond `sqrt(inner_r2)`: its
/// identifier is written with [`BAND_FLAG`] set. The hit test and the inner test compare
/// the one computed squared distance (the formula of [`Real::distance_squared`]) with
/// `r2` and `inner_r2`, so a hit is unflagged exactly when
/// `Real::distance_squared(p, candidate) <= inner_r2`.
///
/// # Safety
/// As for [`gather_point`] with `IDS`, and every identifier of the ranges is below
/// [`BAND_FLAG`].
#[allow(clippy::too_many_arguments)] // The hot loop's inputs, all used on every block.
#[inline(always)]
pub(crate) unsafe fn gather_point_flagged<T: Real, K: MaskKernel>(
    columns: [&[T]; 3],
    ids: &[u32],
    p: [T; 3],
    r2: T,
    inner_r2: T,
    ranges: &[(u32, u32)],
    self_range: usize,
    itself: u32,
    out: &mut [u32],
) -> usize {
    // SAFETY: the caller upholds `gather_rows`' contract with `out` as the one row.
    let [len] = unsafe {
        gather_rows::<T, K, true, true, 1>(
            columns,
            ids,
            [p],
            r2,
            inner_r2,
            ranges,
            self_range,
            [itself],
            out,
        )
    };
    len
}

/// The index of the range of `ranges` that holds sorted position `itself`, or `usize::MAX`
/// when none does (a query point, or no point to skip).
#[inline(always)]
pub(crate) fn range_holding(ranges: &[(u32, u32)], itself: u32) -> usize {
    ranges
        .iter()
        .position(|&(start, end)| start <= itself && itself < end)
        .unwrap_or(usize::MAX)
}

/// How many searching points [`gather_many`] serves per load of a candidate block: two
/// took the list pass from 220 to 175 ms at 1M uniform points in cell order on one thread
/// (122 to 108 ms on two); three and four measured slower than two (the eight 8-lane
/// registers of four points' coordinates and the block no longer fit beside the temporaries).
pub(crate) const GATHER_GROUP: usize = 2;

/// Gathers, for each of `N` points `p[k]` that share their neighbourhood, the candidates of
/// `ranges` within `sqrt(r2)` of it (in range order, ascending within each range, skipping
/// position `itself[k]` of the columns, `u32::MAX` for none) into row `k` of `rows` (`N`
/// rows of `rows.len() / N` entries), and returns the counts. Only range `self_range`
/// (`usize::MAX`: none) holds the `itself` positions, and only its blocks that hold one
/// check for them (the points of a batch share one bucket, so one range holds them all).
/// With `IDS`, each hit is written as `ids[position]` (the caller's index or a packed
/// identifier, permuted out of one 8-lane load of `ids`); without, as its position (`ids`
/// unused).
///
/// This is the hot loop of the neighbour lists: per block of 8 candidates, three loads (and
/// one of `ids`) shared by the `N` points, then per point the distance mask and a
/// branch-free lookup-table compress straight into its row.
///
/// # Safety
/// `columns` are padded `PointColumns` (or packed columns with `LANES` of room), `ids`
/// (with `IDS`) is padded by `LANES` past the point count, every range lies below the point
/// count, every `itself[k]` other than `u32::MAX` lies inside range `self_range`, and every
/// row holds at least the total candidates of `ranges` plus [`ROW_SLACK`]; with
/// [`MaskKernel::AVX512`], the CPU has AVX-512.
#[allow(clippy::too_many_arguments)] // The hot loop's inputs, all used on every block.
#[inline(always)]
pub(crate) unsafe fn gather_many<T: Real, K: MaskKernel, const IDS: bool, const N: usize>(
    columns: [&[T]; 3],
    ids: &[u32],
    p: [[T; 3]; N],
    r2: T,
    ranges: &[(u32, u32)],
    self_range: usize,
    itself: [u32; N],
    rows: &mut [u32],
) -> [usize; N] {
    // SAFETY: the caller's contract; nothing is flagged.
    unsafe {
        gather_rows::<T, K, IDS, false, N>(
            columns, ids, p, r2, r2, ranges, self_range, itself, rows,
        )
    }
}

/// [`gather_many`], and with `FLAG` (which needs `IDS`) each hit whose squared distance
/// exceeds `inner_r2` is written with [`BAND_FLAG`] set in its identifier (see
/// [`gather_point_flagged`]); without `FLAG`, `inner_r2` is unused.
///
/// # Safety
/// As for [`gather_many`]; with `FLAG`, every identifier of the ranges is below
/// [`BAND_FLAG`].
#[allow(clippy::too_many_arguments)] // The hot loop's inputs, all used on every block.
#[inline(always)]
unsafe fn gather_rows<T: Real, K: MaskKernel, const IDS: bool, const FLAG: bool, const N: usize>(
    columns: [&[T]; 3],
    ids: &[u32],
    p: [[T; 3]; N],
    r2: T,
    inner_r2: T,
    ranges: &[(u32, u32)],
    self_range: usize,
    itself: [u32; N],
    rows: &mut [u32],
) -> [usize; N] {
    const { assert!(IDS || !FLAG, "only identifiers carry the band flag") };
    #[cfg(target_arch = "x86_64")]
    if K::AVX512 {
        // `Real` is sealed to f32 and f64, so `T` is the scalar of the block its size picks,
        // and these casts are the identity.
        macro_rules! gather_in {
            ($block:ty, $scalar:ty) => {{
                // The points element by element, not through `map` with a closure: that
                // was compiled out of line (a call per gathered point, whose argument, stored
                // as three scalars, was reloaded as a pair and missed the store forward).
                let mut points = [[<$scalar>::default(); 3]; N];
                for k in 0..N {
                    for c in 0..3 {
                        points[k][c] = bytemuck::cast::<T, $scalar>(p[k][c]);
                    }
                }
                // SAFETY: the caller's contract, with AVX-512 (`K::AVX512`) and rows of the
                // candidates plus ROW_SLACK (at least a block); the padded columns and ids
                // are longer than every range.
                return unsafe {
                    avx512::gather_many::<$block, IDS, FLAG, N>(
                        columns.map(bytemuck::cast_slice::<T, $scalar>),
                        ids,
                        points,
                        bytemuck::cast::<T, $scalar>(r2),
                        bytemuck::cast::<T, $scalar>(inner_r2),
                        ranges,
                        self_range,
                        itself,
                        rows,
                    )
                };
            }};
        }
        if size_of::<T>() == size_of::<f32>() {
            gather_in!(avx512::F32x16, f32);
        } else {
            gather_in!(avx512::F64x8, f64);
        }
    }
    let out_len = rows.len() / N;
    // Every row pointer derives from one raw pointer, so writes through one never
    // invalidate another.
    let first = rows.as_mut_ptr();
    let out: [*mut u32; N] = std::array::from_fn(|k| first.wrapping_add(k * out_len));
    let mut cursors = [0usize; N];
    // Tests the block at `base` against every point, keeps the lanes of `keep`, and appends
    // the hits. A macro, not a closure: a closure is compiled as a function of its own,
    // without the target features of the run-time AVX2 build (see `simd`).
    macro_rules! block {
        ($base:expr, $keep:expr) => {{
            let (base, keep): (usize, [u32; N]) = ($base, $keep);
            // SAFETY: base is below the point count, and the columns are padded by LANES.
            let [x, y, z] = unsafe { lanes_unchecked(columns, base) };
            let loaded = K::load(x, y, z);
            let ids_block = if IDS {
                debug_assert!(base + LANES <= ids.len(), "ids not padded");
                // SAFETY: the caller pads `ids` by LANES past the point count.
                u32x8::new(unsafe { ids.as_ptr().add(base).cast::<[u32; 8]>().read_unaligned() })
            } else {
                u32x8::splat(base as u32)
            };
            for k in 0..N {
                let (mask, flags) = if FLAG {
                    let (hits, inner) = K::masks(p[k], &loaded, r2, inner_r2);
                    let mask = hits & keep[k];
                    // Lane `l` of `flags` is BAND_FLAG where bit `l` of the band is set.
                    let bits = u32x8::new(LANE_BITS);
                    let band = u32x8::splat(mask & !inner) & bits;
                    (mask, band.simd_eq(bits) & u32x8::splat(BAND_FLAG))
                } else {
                    (K::mask(p[k], &loaded, r2) & keep[k], u32x8::ZERO)
                };
                let lanes = u32x8::new(COMPRESS_LANES[mask as usize]);
                let values = if IDS {
                    let ids_block = if FLAG { ids_block | flags } else { ids_block };
                    // SAFETY: a kernel sets AVX2 only where the CPU has it.
                    unsafe { permute8(K::AVX2, ids_block, lanes) }
                } else {
                    lanes + ids_block
                };
                debug_assert!(cursors[k] + LANES <= out_len, "gather row too short");
                // SAFETY: the caller sized every row for all candidates plus one block of slack,
                // each cursor counts its point's hits among the candidates seen so far, and row
                // `k` starts at `out[k]` inside `rows`, `out_len` entries long.
                unsafe {
                    out[k]
                        .add(cursors[k])
                        .cast::<[u32; 8]>()
                        .write_unaligned(values.to_array());
                }
                cursors[k] += mask.count_ones() as usize;
            }
        }};
    }
    for (index, &(start, end)) in ranges.iter().enumerate() {
        let (start, end) = (start as usize, end as usize);
        let all = (1u32 << LANES) - 1;
        let tail = (end - start) % LANES;
        let full_end = end - tail;
        let tail_keep = (1u32 << tail) - 1;
        debug_assert!(
            itself.iter().all(|&i| {
                let inside = (start..end).contains(&(i as usize));
                if index == self_range {
                    i == u32::MAX || inside
                } else {
                    !inside
                }
            }),
            "a point to skip outside the self range"
        );
        if index != self_range {
            let mut base = start;
            while base < full_end {
                block!(base, [all; N]);
                base += LANES;
            }
            if tail != 0 {
                block!(full_end, [tail_keep; N]);
            }
        } else {
            // Only the blocks from the one that holds the first point to skip to the one that
            // holds the last check for them; the blocks before and after keep all lanes.
            let first = itself.iter().copied().min().unwrap_or(u32::MAX) as usize;
            let last = itself
                .iter()
                .copied()
                .filter(|&i| i != u32::MAX)
                .max()
                .unwrap_or(u32::MAX) as usize;
            let (masked_from, masked_to) = if first < end {
                (
                    start + (first - start) / LANES * LANES,
                    start + ((last - start) / LANES + 1) * LANES,
                )
            } else {
                (full_end, full_end)
            };
            let mut base = start;
            while base < masked_from {
                block!(base, [all; N]);
                base += LANES;
            }
            while base < end && base < masked_to {
                let range_keep = if base < full_end { all } else { tail_keep };
                let keep = itself.map(|i| {
                    let offset = (i as usize).wrapping_sub(base);
                    if offset < LANES {
                        range_keep & !(1 << offset)
                    } else {
                        range_keep
                    }
                });
                block!(base, keep);
                base += LANES;
            }
            while base < full_end {
                block!(base, [all; N]);
                base += LANES;
            }
            if base < end {
                block!(base, [tail_keep; N]);
            }
        }
    }
    cursors
}

/// Bit `l` in lane `l`: turns a lane mask into lanes.
const LANE_BITS: [u32; LANES] = [1, 2, 4, 8, 16, 32, 64, 128];

/// Calls `emit(position)` for each set bit of `mask`, lowest first.
#[inline(always)]
pub(crate) fn for_each_hit(base: u32, mut mask: u32, mut emit: impl FnMut(u32)) {
    while mask != 0 {
        emit(base + mask.trailing_zeros());
        mask &= mask - 1;
    }
}

#[cfg(test)]
mod tests {
    use hhg_testkit::SplitMix64;

    use super::{
        Avx2Kernel, Avx512Kernel, PackRequest, PackedCandidates, ROW_SLACK, SimdKernel,
        bounding_box, gather_many, pack_within_box, range_holding,
    };
    use crate::real::{LANES, Real};
    use crate::simd::{avx2_detected, avx512_detected};

    /// A padded column of `values` (NaN past the end, as in `PointColumns`).
    fn padded<T: Real>(values: &[T]) -> Vec<T> {
        let mut column = values.to_vec();
        column.resize(values.len() + LANES, T::PAD);
        column
    }

    /// The kernel builds a test runs [`gather_many`] and [`pack_within_box`] in.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Form {
        AsCompiled,
        Avx2,
        Avx512,
    }

    /// [`gather_many`] with identifiers, in the kernel of `form`.
    ///
    /// # Safety
    /// As for [`gather_many`], and the CPU has the features of `form`.
    #[allow(clippy::too_many_arguments)] // `gather_many`'s inputs and the form.
    unsafe fn gather_in_form<T: Real, const N: usize>(
        form: Form,
        columns: [&[T]; 3],
        ids: &[u32],
        p: [[T; 3]; N],
        r2: T,
        ranges: &[(u32, u32)],
        self_range: usize,
        itself: [u32; N],
        rows: &mut [u32],
    ) -> [usize; N] {
        // SAFETY: the caller's contract.
        unsafe {
            match form {
                Form::AsCompiled => gather_many::<T, SimdKernel, true, N>(
                    columns, ids, p, r2, ranges, self_range, itself, rows,
                ),
                Form::Avx2 => gather_many::<T, Avx2Kernel, true, N>(
                    columns, ids, p, r2, ranges, self_range, itself, rows,
                ),
                Form::Avx512 => gather_many::<T, Avx512Kernel, true, N>(
                    columns, ids, p, r2, ranges, self_range, itself, rows,
                ),
            }
        }
    }

    /// Packing a batch's candidates and gathering over them gives, for every point of the
    /// batch, exactly the candidates of the ranges within `r` except the point itself, in
    /// range order: ranges shorter than a block, batches at any offset of their range (so the
    /// first point lands in a full block or in the tail), both identifier modes, and query
    /// batches that are not in the set. Gathering over the ranges themselves (as batches too
    /// small to pack do) gives the same lists. Rounds take turns between the kernel as
    /// compiled, the AVX2 kernel and the AVX-512 kernel (where the CPU has them).
    fn packed_gather_matches_brute_force<T: Real>() {
        let mut rng = SplitMix64::new(21);
        let r2 = T::from_f64(0.36);
        for round in 0..3000 {
            let n = 40 + rng.below(160);
            let points: Vec<[T; 3]> = (0..n)
                .map(|_| std::array::from_fn(|_| T::from_f64(rng.range(-1.5, 1.5))))
                .collect();
            let columns: [Vec<T>; 3] = std::array::from_fn(|axis| {
                padded(&points.iter().map(|p| p[axis]).collect::<Vec<_>>())
            });
            let columns = [&columns[0][..], &columns[1][..], &columns[2][..]];
            let ids: Vec<u32> = (0..n as u32).map(|i| i * 7 + 3).chain([0; LANES]).collect();
            // Up to four disjoint ascending ranges, some shorter than a block.
            let mut cuts: Vec<u32> = (0..8).map(|_| rng.below(n + 1) as u32).collect();
            cuts.sort_unstable();
            let ranges: Vec<(u32, u32)> = cuts
                .chunks(2)
                .map(|c| (c[0], c[1]))
                .filter(|&(s, e)| s < e)
                .collect();
            if ranges.is_empty() {
                continue;
            }
            let query = round % 5 == 0;
            let (batch, itself): (Vec<[T; 3]>, Vec<u32>) = if query {
                let len = 4 + rng.below(4);
                let batch = (0..len)
                    .map(|_| std::array::from_fn(|_| T::from_f64(rng.range(-1.0, 1.0))))
                    .collect();
                (batch, vec![u32::MAX; len])
            } else {
                let (start, end) = ranges[rng.below(ranges.len())];
                let first = start + rng.below((end - start) as usize) as u32;
                let len = (1 + rng.below(6)).min((end - first) as usize);
                let itself: Vec<u32> = (first..first + len as u32).collect();
                (itself.iter().map(|&i| points[i as usize]).collect(), itself)
            };
            let (lo, hi) = bounding_box(&batch);
            let self_range = range_holding(&ranges, itself[0]);
            let with_ids = round % 2 == 0;
            let form = match round % 3 {
                1 if avx2_detected() => Form::Avx2,
                2 if avx512_detected() => Form::Avx512,
                _ => Form::AsCompiled,
            };
            let mut packed = PackedCandidates::default();
            let request = PackRequest {
                columns,
                ids: &ids,
                lo,
                hi,
                r2,
                ranges: &ranges,
                self_range,
                first_self: itself[0],
                avx2: form == Form::Avx2 || form == Form::Avx512,
                avx512: form == Form::Avx512,
            };
            // SAFETY: the columns and ids are padded by LANES, the ranges lie below n,
            // `range_holding` found the range of the batch's first point, and `avx2` and
            // `avx512` are set only where the CPU has the features.
            let (count, self_at) = unsafe {
                if with_ids {
                    pack_within_box::<T, true>(&request, &mut packed)
                } else {
                    pack_within_box::<T, false>(&request, &mut packed)
                }
            };
            assert_eq!(self_at == u32::MAX, query, "round {round}: self position");
            let whole = [(0, count as u32)];
            let packed_ranges = &whole[..usize::from(count > 0)];
            let packed_self = if query { usize::MAX } else { 0 };
            // The candidates within `r` of point `k` but itself, as identifiers or positions.
            let expected_of = |k: usize, as_ids: bool| -> Vec<u32> {
                ranges
                    .iter()
                    .flat_map(|&(s, e)| s..e)
                    .filter(|&q| q != itself[k])
                    .filter(|&q| T::distance_squared(batch[k], points[q as usize]) <= r2)
                    .map(|q| if as_ids { ids[q as usize] } else { q })
                    .collect()
            };
            let skip_of = |k: usize| if query { u32::MAX } else { self_at + k as u32 };
            for (k, p) in batch.iter().enumerate() {
                let expected = expected_of(k, with_ids);
                // The next point of the batch shares the gather: two points to skip (two
                // blocks, or two lanes of one).
                let next = (k + 1) % batch.len();
                let mut rows = vec![0u32; 2 * (count + ROW_SLACK)];
                // SAFETY: the packed columns hold `count` candidates plus ROW_SLACK of room,
                // every row holds `count + ROW_SLACK`, both points to skip lie in the packed
                // range, and the form's features are the CPU's.
                let [len, next_len] = unsafe {
                    gather_in_form::<T, 2>(
                        form,
                        packed.columns(),
                        packed.ids(),
                        [*p, batch[next]],
                        r2,
                        packed_ranges,
                        packed_self,
                        [skip_of(k), skip_of(next)],
                        &mut rows,
                    )
                };
                let second = count + ROW_SLACK;
                assert_eq!(
                    rows[second..second + next_len],
                    expected_of(next, with_ids)[..],
                    "round {round} ({form:?}): point {next} of the batch beside {k}"
                );
                let total: usize = ranges.iter().map(|&(s, e)| (e - s) as usize).sum();
                let mut direct = vec![0u32; total + ROW_SLACK];
                // SAFETY: the columns and ids are padded by LANES, the row holds every
                // candidate plus ROW_SLACK, `itself[k]` lies in range `self_range` (or is
                // u32::MAX for a query), and the form's features are the CPU's.
                let [direct_len] = unsafe {
                    gather_in_form::<T, 1>(
                        form,
                        columns,
                        &ids,
                        [*p],
                        r2,
                        &ranges,
                        self_range,
                        [itself[k]],
                        &mut direct,
                    )
                };
                assert_eq!(
                    direct[..direct_len],
                    expected_of(k, true)[..],
                    "round {round} ({form:?}): point {k} over the ranges {ranges:?}"
                );
                assert_eq!(
                    rows[..len],
                    expected[..],
                    "round {round} ({form:?}): point {k} of the batch, ranges {ranges:?}"
                );
            }
        }
    }

    #[test]
    fn packed_gather_equals_brute_force() {
        packed_gather_matches_brute_force::<f32>();
        packed_gather_matches_brute_force::<f64>();
    }
}
