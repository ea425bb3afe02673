//! AVX-512 forms of the list pass's two hot loops, the gather and the packing: 16 `f32` or
//! 8 `f64` candidates per block, the hit mask straight from the comparison, and the hits
//! packed by `vpcompressd` instead of a lookup table and a permute.
//!
//! Everything here is `#[inline(always)]` and without target features of its own: it is
//! inlined into a function compiled for AVX-512 (`simd::avx512_build`, or a library built
//! for such a CPU), where the intrinsics inline too. Every load of a block that may reach
//! past its range is masked (fault-free on masked-off lanes), so the columns need no
//! padding beyond their length; every store writes a whole block, so each output needs
//! [`Block::WIDE`] entries of room past its last hit.

use std::arch::x86_64::{
    __m256i, __m512, __m512d, __m512i, _CMP_LE_OQ, _mm256_add_epi32, _mm256_mask_or_epi32,
    _mm256_maskz_compress_epi32, _mm256_maskz_loadu_epi32, _mm256_set1_epi32, _mm256_setr_epi32,
    _mm256_storeu_epi32, _mm512_add_epi32, _mm512_add_pd, _mm512_add_ps, _mm512_mask_cmp_pd_mask,
    _mm512_mask_cmp_ps_mask, _mm512_mask_or_epi32, _mm512_maskz_compress_epi32,
    _mm512_maskz_compress_pd, _mm512_maskz_compress_ps, _mm512_maskz_loadu_epi32,
    _mm512_maskz_loadu_pd, _mm512_maskz_loadu_ps, _mm512_max_pd, _mm512_max_ps, _mm512_mul_pd,
    _mm512_mul_ps, _mm512_set1_epi32, _mm512_set1_pd, _mm512_set1_ps, _mm512_setr_epi32,
    _mm512_storeu_epi32, _mm512_storeu_pd, _mm512_storeu_ps, _mm512_sub_pd, _mm512_sub_ps,
};

use crate::simd::avx512_detected;

/// One precision's block of candidates in a 512-bit register, with the operations the two
/// loops need. Lane masks are `u16` for both (an `f64` block uses the low 8 bits).
///
/// Every method is unsafe: it may run only where the CPU has AVX-512 F, VL, BW and DQ.
pub(crate) trait Block {
    /// The coordinate type.
    type Scalar: Copy;
    /// A block of coordinates.
    type Vector: Copy;
    /// A block of identifiers.
    type Ids: Copy;
    /// Candidates per block.
    const WIDE: usize;

    /// The lanes of `column` at `base` that `lanes` selects, zero elsewhere.
    ///
    /// # Safety
    /// AVX-512, and every selected lane lies inside `column`.
    unsafe fn load(column: &[Self::Scalar], base: usize, lanes: u16) -> Self::Vector;

    /// The identifiers of `ids` at `base` that `lanes` selects, zero elsewhere.
    ///
    /// # Safety
    /// As for [`Block::load`].
    unsafe fn load_ids(ids: &[u32], base: usize, lanes: u16) -> Self::Ids;

    /// The positions `base..base + WIDE`.
    ///
    /// # Safety
    /// AVX-512.
    unsafe fn positions(base: usize) -> Self::Ids;

    /// `value` in every lane.
    ///
    /// # Safety
    /// AVX-512.
    unsafe fn splat(value: Self::Scalar) -> Self::Vector;

    /// `(dx*dx + dy*dy) + dz*dz` of the three differences, no fusing: the predicate's one
    /// formula (see `Real`).
    ///
    /// # Safety
    /// AVX-512.
    unsafe fn sum_of_squares(d: [Self::Vector; 3]) -> Self::Vector;

    /// `a - b` lane by lane.
    ///
    /// # Safety
    /// AVX-512.
    unsafe fn sub(a: Self::Vector, b: Self::Vector) -> Self::Vector;

    /// The gap of `q` to the interval `lo..=hi`: `max(max(lo - q, q - hi), 0)`.
    ///
    /// # Safety
    /// AVX-512.
    unsafe fn gap(lo: Self::Vector, hi: Self::Vector, q: Self::Vector) -> Self::Vector;

    /// The lanes of `lanes` where `a <= b` (false for NaN).
    ///
    /// # Safety
    /// AVX-512.
    unsafe fn le(lanes: u16, a: Self::Vector, b: Self::Vector) -> u16;

    /// Stores the lanes of `v` that `keep` selects, packed, to `dst` (writing `WIDE` lanes).
    ///
    /// # Safety
    /// AVX-512, and `dst..dst + WIDE` is valid for writes.
    unsafe fn store_packed(dst: *mut Self::Scalar, keep: u16, v: Self::Vector);

    /// Stores the identifiers that `keep` selects, packed, to `dst` (writing `WIDE` lanes).
    ///
    /// # Safety
    /// As for [`Block::store_packed`].
    unsafe fn store_packed_ids(dst: *mut u32, keep: u16, ids: Self::Ids);

    /// `ids` with the bits of `flag` set in the lanes of `lanes`.
    ///
    /// # Safety
    /// AVX-512.
    unsafe fn flag_ids(ids: Self::Ids, lanes: u16, flag: u32) -> Self::Ids;
}

/// 16 `f32` lanes.
pub(crate) struct F32x16;

/// 8 `f64` lanes.
pub(crate) struct F64x8;

impl Block for F32x16 {
    type Scalar = f32;
    type Vector = __m512;
    type Ids = __m512i;
    const WIDE: usize = 16;

    #[inline(always)]
    unsafe fn load(column: &[f32], base: usize, lanes: u16) -> __m512 {
        debug_assert!(
            base + (16 - lanes.leading_zeros() as usize) <= column.len(),
            "masked load past the column"
        );
        // SAFETY: the selected lanes are inside the column; the others are not accessed.
        unsafe { _mm512_maskz_loadu_ps(lanes, column.as_ptr().add(base)) }
    }

    #[inline(always)]
    unsafe fn load_ids(ids: &[u32], base: usize, lanes: u16) -> __m512i {
        debug_assert!(
            base + (16 - lanes.leading_zeros() as usize) <= ids.len(),
            "masked load past the identifiers"
        );
        // SAFETY: as in `load`.
        unsafe { _mm512_maskz_loadu_epi32(lanes, ids.as_ptr().add(base).cast()) }
    }

    #[inline(always)]
    unsafe fn positions(base: usize) -> __m512i {
        // SAFETY: AVX-512 (the contract).
        unsafe {
            _mm512_add_epi32(
                _mm512_set1_epi32(base as i32),
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            )
        }
    }

    #[inline(always)]
    unsafe fn splat(value: f32) -> __m512 {
        // SAFETY: AVX-512 (the contract).
        unsafe { _mm512_set1_ps(value) }
    }

    #[inline(always)]
    unsafe fn sum_of_squares(d: [__m512; 3]) -> __m512 {
        // SAFETY: AVX-512 (the contract).
        unsafe {
            _mm512_add_ps(
                _mm512_add_ps(_mm512_mul_ps(d[0], d[0]), _mm512_mul_ps(d[1], d[1])),
                _mm512_mul_ps(d[2], d[2]),
            )
        }
    }

    #[inline(always)]
    unsafe fn sub(a: __m512, b: __m512) -> __m512 {
        // SAFETY: AVX-512 (the contract).
        unsafe { _mm512_sub_ps(a, b) }
    }

    #[inline(always)]
    unsafe fn gap(lo: __m512, hi: __m512, q: __m512) -> __m512 {
        // SAFETY: AVX-512 (the contract).
        unsafe {
            let below = _mm512_sub_ps(lo, q);
            let above = _mm512_sub_ps(q, hi);
            _mm512_max_ps(_mm512_max_ps(below, above), _mm512_set1_ps(0.0))
        }
    }

    #[inline(always)]
    unsafe fn le(lanes: u16, a: __m512, b: __m512) -> u16 {
        // SAFETY: AVX-512 (the contract).
        unsafe { _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(lanes, a, b) }
    }

    #[inline(always)]
    unsafe fn store_packed(dst: *mut f32, keep: u16, v: __m512) {
        // SAFETY: AVX-512, and `dst` has room for a whole block (the contract).
        unsafe { _mm512_storeu_ps(dst, _mm512_maskz_compress_ps(keep, v)) }
    }

    #[inline(always)]
    unsafe fn store_packed_ids(dst: *mut u32, keep: u16, ids: __m512i) {
        // SAFETY: as in `store_packed`.
        unsafe { _mm512_storeu_epi32(dst.cast(), _mm512_maskz_compress_epi32(keep, ids)) }
    }

    #[inline(always)]
    unsafe fn flag_ids(ids: __m512i, lanes: u16, flag: u32) -> __m512i {
        // SAFETY: AVX-512 (the contract).
        unsafe { _mm512_mask_or_epi32(ids, lanes, ids, _mm512_set1_epi32(flag as i32)) }
    }
}

impl Block for F64x8 {
    type Scalar = f64;
    type Vector = __m512d;
    type Ids = __m256i;
    const WIDE: usize = 8;

    #[inline(always)]
    unsafe fn load(column: &[f64], base: usize, lanes: u16) -> __m512d {
        debug_assert!(
            lanes < 1 << 8 && base + (16 - lanes.leading_zeros() as usize) <= column.len(),
            "masked load past the column"
        );
        // SAFETY: the selected lanes are inside the column; the others are not accessed.
        unsafe { _mm512_maskz_loadu_pd(lanes as u8, column.as_ptr().add(base)) }
    }

    #[inline(always)]
    unsafe fn load_ids(ids: &[u32], base: usize, lanes: u16) -> __m256i {
        debug_assert!(
            lanes < 1 << 8 && base + (16 - lanes.leading_zeros() as usize) <= ids.len(),
            "masked load past the identifiers"
        );
        // SAFETY: as in `load`.
        unsafe { _mm256_maskz_loadu_epi32(lanes as u8, ids.as_ptr().add(base).cast()) }
    }

    #[inline(always)]
    unsafe fn positions(base: usize) -> __m256i {
        // SAFETY: AVX-512 (the contract).
        unsafe {
            _mm256_add_epi32(
                _mm256_set1_epi32(base as i32),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            )
        }
    }

    #[inline(always)]
    unsafe fn splat(value: f64) -> __m512d {
        // SAFETY: AVX-512 (the contract).
        unsafe { _mm512_set1_pd(value) }
    }

    #[inline(always)]
    unsafe fn sum_of_squares(d: [__m512d; 3]) -> __m512d {
        // SAFETY: AVX-512 (the contract).
        unsafe {
            _mm512_add_pd(
                _mm512_add_pd(_mm512_mul_pd(d[0], d[0]), _mm512_mul_pd(d[1], d[1])),
                _mm512_mul_pd(d[2], d[2]),
            )
        }
    }

    #[inline(always)]
    unsafe fn sub(a: __m512d, b: __m512d) -> __m512d {
        // SAFETY: AVX-512 (the contract).
        unsafe { _mm512_sub_pd(a, b) }
    }

    #[inline(always)]
    unsafe fn gap(lo: __m512d, hi: __m512d, q: __m512d) -> __m512d {
        // SAFETY: AVX-512 (the contract).
        unsafe {
            let below = _mm512_sub_pd(lo, q);
            let above = _mm512_sub_pd(q, hi);
            _mm512_max_pd(_mm512_max_pd(below, above), _mm512_set1_pd(0.0))
        }
    }

    #[inline(always)]
    unsafe fn le(lanes: u16, a: __m512d, b: __m512d) -> u16 {
        // SAFETY: AVX-512 (the contract).
        u16::from(unsafe { _mm512_mask_cmp_pd_mask::<_CMP_LE_OQ>(lanes as u8, a, b) })
    }

    #[inline(always)]
    unsafe fn store_packed(dst: *mut f64, keep: u16, v: __m512d) {
        // SAFETY: AVX-512, and `dst` has room for a whole block (the contract).
        unsafe { _mm512_storeu_pd(dst, _mm512_maskz_compress_pd(keep as u8, v)) }
    }

    #[inline(always)]
    unsafe fn store_packed_ids(dst: *mut u32, keep: u16, ids: __m256i) {
        // SAFETY: as in `store_packed`.
        unsafe { _mm256_storeu_epi32(dst.cast(), _mm256_maskz_compress_epi32(keep as u8, ids)) }
    }

    #[inline(always)]
    unsafe fn flag_ids(ids: __m256i, lanes: u16, flag: u32) -> __m256i {
        // SAFETY: AVX-512 (the contract).
        unsafe { _mm256_mask_or_epi32(ids, lanes as u8, ids, _mm256_set1_epi32(flag as i32)) }
    }
}

/// The lanes of a block of `W` at `base` that lie before `end`.
#[inline(always)]
fn block_lanes<W: Block>(base: usize, end: usize) -> u16 {
    let left = end - base;
    if left >= W::WIDE {
        ((1u32 << W::WIDE) - 1) as u16
    } else {
        ((1u32 << left) - 1) as u16
    }
}

/// [`gather_many`](super::gather_many) with AVX-512 blocks of `W`: the same contract and
/// the same output, with rows of at least the candidates plus [`Block::WIDE`] entries; with
/// `FLAG` (and `IDS`), each hit whose squared distance exceeds `inner_r2` is written with
/// [`BAND_FLAG`](super::BAND_FLAG) set, as in `gather_rows`.
///
/// # Safety
/// The CPU has AVX-512 (F, VL, BW, DQ); every range lies inside the columns (and `ids`,
/// with `IDS`); every `itself[k]` other than `u32::MAX` lies inside range `self_range`;
/// and every row holds the candidates of `ranges` plus [`Block::WIDE`].
#[allow(clippy::too_many_arguments)] // The hot loop's inputs, all used on every block.
#[inline(always)]
pub(crate) unsafe fn gather_many<W: Block, const IDS: bool, const FLAG: bool, const N: usize>(
    columns: [&[W::Scalar]; 3],
    ids: &[u32],
    p: [[W::Scalar; 3]; N],
    r2: W::Scalar,
    inner_r2: W::Scalar,
    ranges: &[(u32, u32)],
    self_range: usize,
    itself: [u32; N],
    rows: &mut [u32],
) -> [usize; N] {
    debug_assert!(avx512_detected(), "AVX-512 kernel on a CPU without AVX-512");
    let out_len = rows.len() / N;
    // Every row pointer derives from one raw pointer, so writes through one never
    // invalidate another.
    let first = rows.as_mut_ptr();
    let mut out = [first; N];
    for (k, row) in out.iter_mut().enumerate() {
        *row = first.wrapping_add(k * out_len);
    }
    let mut cursors = [0usize; N];
    // No closures here: a closure is compiled as a function of its own, without the target
    // features of the function this loop is inlined into (see `simd`).
    // SAFETY: the caller guarantees AVX-512 (for every method of `W` in this function).
    let (mut point, radius2, inner_radius2) = unsafe {
        let placeholder = W::splat(r2);
        ([[placeholder; 3]; N], W::splat(r2), W::splat(inner_r2))
    };
    for k in 0..N {
        for axis in 0..3 {
            // SAFETY: as above.
            point[k][axis] = unsafe { W::splat(p[k][axis]) };
        }
    }
    let all = ((1u32 << W::WIDE) - 1) as u16;
    // Tests the block at `base` (lanes before `end`) against every point and appends the
    // hits; with `$skip`, point `k` drops lane bits `!skip[k].1` in the block at
    // `skip[k].0`. A macro, not a closure (see above).
    macro_rules! block {
        ($base:expr, $end:expr, $skip:expr) => {{
            let (base, end) = ($base, $end);
            let lanes = block_lanes::<W>(base, end);
            // SAFETY: the selected lanes lie inside the range, inside the columns and ids.
            let (q, values) = unsafe {
                (
                    [
                        W::load(columns[0], base, lanes),
                        W::load(columns[1], base, lanes),
                        W::load(columns[2], base, lanes),
                    ],
                    if IDS {
                        W::load_ids(ids, base, lanes)
                    } else {
                        W::positions(base)
                    },
                )
            };
            for k in 0..N {
                // SAFETY: AVX-512 (the caller's contract); the row holds every candidate plus
                // WIDE, and the cursor counts the hits among the candidates seen so far.
                unsafe {
                    let d2 = W::sum_of_squares([
                        W::sub(q[0], point[k][0]),
                        W::sub(q[1], point[k][1]),
                        W::sub(q[2], point[k][2]),
                    ]);
                    let keep: Option<&[(usize, u16); N]> = $skip;
                    let lanes = match keep {
                        Some(skip) if skip[k].0 == base => lanes & skip[k].1,
                        _ => lanes,
                    };
                    let hits = W::le(lanes, d2, radius2);
                    debug_assert!(cursors[k] + W::WIDE <= out_len, "gather row too short");
                    let values = if FLAG {
                        let band = hits & !W::le(hits, d2, inner_radius2);
                        W::flag_ids(values, band, super::BAND_FLAG)
                    } else {
                        values
                    };
                    W::store_packed_ids(out[k].add(cursors[k]), hits, values);
                    cursors[k] += hits.count_ones() as usize;
                }
            }
        }};
    }
    for (index, &(start, end)) in ranges.iter().enumerate() {
        let (start, end) = (start as usize, end as usize);
        debug_assert!(
            index == self_range
                || itself
                    .iter()
                    .all(|&i| !(start..end).contains(&(i as usize))),
            "a point to skip outside the self range"
        );
        // The block (by its base) that holds each point to skip, the lanes it keeps, and the
        // blocks `masked_from..masked_to` that hold any: only those check.
        let mut skip: [(usize, u16); N] = [(usize::MAX, all); N];
        let (mut masked_from, mut masked_to) = (usize::MAX, 0);
        if index == self_range {
            for k in 0..N {
                if itself[k] != u32::MAX {
                    let offset = itself[k] as usize - start;
                    debug_assert!(start + offset < end, "a point to skip outside the range");
                    let block = start + offset / W::WIDE * W::WIDE;
                    skip[k] = (block, all & !(1u32 << (offset % W::WIDE)) as u16);
                    masked_from = masked_from.min(block);
                    masked_to = masked_to.max(block + W::WIDE);
                }
            }
        }
        let mut base = start;
        while base < masked_from.min(end) {
            block!(base, end, None);
            base += W::WIDE;
        }
        while base < masked_to.min(end) {
            block!(base, end, Some(&skip));
            base += W::WIDE;
        }
        while base < end {
            block!(base, end, None);
            base += W::WIDE;
        }
    }
    cursors
}

/// Where [`pack_within_box`] writes: four columns with room for every candidate plus
/// [`Block::WIDE`].
pub(crate) struct PackTarget<S> {
    pub(crate) columns: [*mut S; 3],
    pub(crate) ids: *mut u32,
    pub(crate) room: usize,
}

/// [`pack_within_box`](super::pack_within_box) with AVX-512 blocks of `W`: the same filter
/// ([`Real::box_mask`](crate::real::Real::box_mask)'s gaps and sum) and the same packed
/// order and positions.
///
/// # Safety
/// The CPU has AVX-512 (F, VL, BW, DQ); every range lies inside the columns (and `ids`,
/// with `IDS`); range `self_range` (unless `usize::MAX`) holds `first_self`; and `out`
/// has room for every candidate of the ranges plus [`Block::WIDE`].
#[allow(clippy::too_many_arguments)] // The packing's inputs, all used on every block.
#[inline(always)]
pub(crate) unsafe fn pack_within_box<W: Block, const IDS: bool>(
    columns: [&[W::Scalar]; 3],
    ids: &[u32],
    lo: [W::Scalar; 3],
    hi: [W::Scalar; 3],
    r2: W::Scalar,
    ranges: &[(u32, u32)],
    self_range: usize,
    first_self: u32,
    out: &PackTarget<W::Scalar>,
) -> (usize, u32) {
    debug_assert!(avx512_detected(), "AVX-512 kernel on a CPU without AVX-512");
    // No closures here (see `gather_many`).
    // SAFETY: the caller guarantees AVX-512 (for every method of `W` in this function).
    let (low, high, radius2) = unsafe {
        (
            [W::splat(lo[0]), W::splat(lo[1]), W::splat(lo[2])],
            [W::splat(hi[0]), W::splat(hi[1]), W::splat(hi[2])],
            W::splat(r2),
        )
    };
    let mut cursor = 0usize;
    let mut self_at = u32::MAX;
    for (index, &(start, end)) in ranges.iter().enumerate() {
        let (start, end) = (start as usize, end as usize);
        let self_block = if index == self_range {
            debug_assert!(
                (start..end).contains(&(first_self as usize)),
                "the self range does not hold the batch's first point"
            );
            start + (first_self as usize - start) / W::WIDE * W::WIDE
        } else {
            usize::MAX
        };
        let mut base = start;
        while base < end {
            let lanes = block_lanes::<W>(base, end);
            debug_assert!(cursor + W::WIDE <= out.room, "packed columns too short");
            // SAFETY: the selected lanes lie inside the range, inside the columns and ids;
            // the target has room for every candidate plus WIDE and the cursor counts the
            // candidates kept so far; AVX-512 is the caller's contract.
            let kept = unsafe {
                let q = [
                    W::load(columns[0], base, lanes),
                    W::load(columns[1], base, lanes),
                    W::load(columns[2], base, lanes),
                ];
                // The squared gaps to the box, summed as the predicate sums (see
                // `Real::box_mask`).
                let d2 = W::sum_of_squares([
                    W::gap(low[0], high[0], q[0]),
                    W::gap(low[1], high[1], q[1]),
                    W::gap(low[2], high[2], q[2]),
                ]);
                let kept = W::le(lanes, d2, radius2);
                for axis in 0..3 {
                    W::store_packed(out.columns[axis].add(cursor), kept, q[axis]);
                }
                let values = if IDS {
                    W::load_ids(ids, base, lanes)
                } else {
                    W::positions(base)
                };
                W::store_packed_ids(out.ids.add(cursor), kept, values);
                kept
            };
            if base == self_block {
                let before = (1u32 << (first_self as usize - base)) - 1;
                self_at = (cursor + (u32::from(kept) & before).count_ones() as usize) as u32;
            }
            cursor += kept.count_ones() as usize;
            base += W::WIDE;
        }
    }
    (cursor, self_at)
}
