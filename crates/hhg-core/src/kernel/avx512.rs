//! AVX-512 forms of the list pass's two hot loops for `f32` points, the gather and the
//! packing: 16 candidates per block, the hit mask straight from the comparison, and the
//! hits packed by `vpcompressd` instead of a lookup table and a permute.
//!
//! Both are `#[inline(always)]` and without target features of their own: they are
//! inlined into a function compiled for AVX-512 (`simd::avx512_build`, or a library built
//! for such a CPU), where the intrinsics inline too. Every load of a block that may reach
//! past its range is masked (fault-free on masked-off lanes), so the columns need no
//! padding beyond their length; every store writes 16 lanes, so each output needs
//! [`WIDE`] entries of room past its last hit.

use std::arch::x86_64::{
    __m512, __m512i, __mmask16, _CMP_LE_OQ, _mm512_add_epi32, _mm512_add_ps,
    _mm512_mask_cmp_ps_mask, _mm512_maskz_compress_epi32, _mm512_maskz_compress_ps,
    _mm512_maskz_loadu_epi32, _mm512_maskz_loadu_ps, _mm512_max_ps, _mm512_mul_ps,
    _mm512_set1_epi32, _mm512_set1_ps, _mm512_setr_epi32, _mm512_setzero_ps, _mm512_storeu_epi32,
    _mm512_storeu_ps, _mm512_sub_ps,
};

use crate::simd::avx512_detected;

/// Candidates per block.
pub(crate) const WIDE: usize = 16;

/// The lanes of a block at `base` that lie before `end`.
#[inline(always)]
fn block_lanes(base: usize, end: usize) -> __mmask16 {
    let left = end - base;
    if left >= WIDE {
        0xFFFF
    } else {
        ((1u32 << left) - 1) as __mmask16
    }
}

/// Lane `k` holds `k`.
#[inline(always)]
unsafe fn iota() -> __m512i {
    // SAFETY: the caller runs where the CPU has AVX-512 (the module's contract).
    unsafe { _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) }
}

/// The 16 lanes of `column` at `base` that `lanes` selects, zero elsewhere.
///
/// # Safety
/// The CPU has AVX-512, and every selected lane lies inside `column`.
#[inline(always)]
unsafe fn load(column: &[f32], base: usize, lanes: __mmask16) -> __m512 {
    debug_assert!(
        base + (16 - lanes.leading_zeros() as usize) <= column.len(),
        "masked load past the column"
    );
    // SAFETY: the caller guarantees the selected lanes are inside the column; the others
    // are not accessed.
    unsafe { _mm512_maskz_loadu_ps(lanes, column.as_ptr().add(base)) }
}

/// The 16 identifiers of `ids` at `base` that `lanes` selects, zero elsewhere.
///
/// # Safety
/// As for [`load`].
#[inline(always)]
unsafe fn load_ids(ids: &[u32], base: usize, lanes: __mmask16) -> __m512i {
    debug_assert!(
        base + (16 - lanes.leading_zeros() as usize) <= ids.len(),
        "masked load past the identifiers"
    );
    // SAFETY: as in `load`.
    unsafe { _mm512_maskz_loadu_epi32(lanes, ids.as_ptr().add(base).cast()) }
}

/// [`gather_many`](super::gather_many) for `f32` points with AVX-512: the same contract
/// and the same output, with rows of at least the candidates plus [`WIDE`] entries.
///
/// # Safety
/// The CPU has AVX-512 (F, VL, BW, DQ); every range lies inside the columns (and `ids`,
/// with `IDS`); every `itself[k]` other than `u32::MAX` lies inside range `self_range`;
/// and every row holds the candidates of `ranges` plus [`WIDE`].
#[allow(clippy::too_many_arguments)] // The hot loop's inputs, all used on every block.
#[inline(always)]
pub(crate) unsafe fn gather_many<const IDS: bool, const N: usize>(
    columns: [&[f32]; 3],
    ids: &[u32],
    p: [[f32; 3]; N],
    r2: f32,
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
    // SAFETY: the caller guarantees AVX-512 (for every intrinsic of this function).
    let (mut px, mut py, mut pz, radius2, lane) = unsafe {
        let zero = _mm512_setzero_ps();
        ([zero; N], [zero; N], [zero; N], _mm512_set1_ps(r2), iota())
    };
    for k in 0..N {
        // SAFETY: as above.
        unsafe {
            px[k] = _mm512_set1_ps(p[k][0]);
            py[k] = _mm512_set1_ps(p[k][1]);
            pz[k] = _mm512_set1_ps(p[k][2]);
        }
    }
    for (index, &(start, end)) in ranges.iter().enumerate() {
        let (start, end) = (start as usize, end as usize);
        // The block (by its base) that holds each point to skip, and the lanes it keeps.
        let mut skip: [(usize, __mmask16); N] = [(usize::MAX, 0xFFFF); N];
        if index == self_range {
            for k in 0..N {
                if itself[k] != u32::MAX {
                    let offset = itself[k] as usize - start;
                    debug_assert!(start + offset < end, "a point to skip outside the range");
                    skip[k] = (
                        start + offset / WIDE * WIDE,
                        !(1u32 << (offset % WIDE)) as __mmask16,
                    );
                }
            }
        }
        let mut base = start;
        while base < end {
            let lanes = block_lanes(base, end);
            // SAFETY: the selected lanes lie inside the range, inside the columns and ids.
            let (x, y, z, values) = unsafe {
                (
                    load(columns[0], base, lanes),
                    load(columns[1], base, lanes),
                    load(columns[2], base, lanes),
                    if IDS {
                        load_ids(ids, base, lanes)
                    } else {
                        _mm512_add_epi32(_mm512_set1_epi32(base as i32), lane)
                    },
                )
            };
            for k in 0..N {
                // SAFETY: AVX-512 (the caller's contract); the row holds every candidate plus
                // WIDE, and the cursor counts the hits among the candidates seen so far.
                unsafe {
                    let dx = _mm512_sub_ps(x, px[k]);
                    let dy = _mm512_sub_ps(y, py[k]);
                    let dz = _mm512_sub_ps(z, pz[k]);
                    // The predicate's one formula: (dx*dx + dy*dy) + dz*dz, no fusing.
                    let d2 = _mm512_add_ps(
                        _mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)),
                        _mm512_mul_ps(dz, dz),
                    );
                    let mut hits = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(lanes, d2, radius2);
                    if base == skip[k].0 {
                        hits &= skip[k].1;
                    }
                    debug_assert!(cursors[k] + WIDE <= out_len, "gather row too short");
                    _mm512_storeu_epi32(
                        out[k].add(cursors[k]).cast(),
                        _mm512_maskz_compress_epi32(hits, values),
                    );
                    cursors[k] += hits.count_ones() as usize;
                }
            }
            base += WIDE;
        }
    }
    cursors
}

/// Where [`pack_within_box`] writes: four columns with room for every candidate plus
/// [`WIDE`].
pub(crate) struct PackTarget {
    pub(crate) columns: [*mut f32; 3],
    pub(crate) ids: *mut u32,
    pub(crate) room: usize,
}

/// [`pack_within_box`](super::pack_within_box) for `f32` points with AVX-512: the same
/// filter ([`Real::box_mask`](crate::real::Real::box_mask)'s gaps and sum) and the same
/// packed order and positions.
///
/// # Safety
/// The CPU has AVX-512 (F, VL, BW, DQ); every range lies inside the columns (and `ids`,
/// with `IDS`); range `self_range` (unless `usize::MAX`) holds `first_self`; and `out`
/// has room for every candidate of the ranges plus [`WIDE`].
#[allow(clippy::too_many_arguments)] // The packing's inputs, all used on every block.
#[inline(always)]
pub(crate) unsafe fn pack_within_box<const IDS: bool>(
    columns: [&[f32]; 3],
    ids: &[u32],
    lo: [f32; 3],
    hi: [f32; 3],
    r2: f32,
    ranges: &[(u32, u32)],
    self_range: usize,
    first_self: u32,
    out: &PackTarget,
) -> (usize, u32) {
    debug_assert!(avx512_detected(), "AVX-512 kernel on a CPU without AVX-512");
    // No closures here (see `gather_many`).
    // SAFETY: the caller guarantees AVX-512 (for every intrinsic of this function).
    let (low, high, radius2, zero, lane) = unsafe {
        (
            [
                _mm512_set1_ps(lo[0]),
                _mm512_set1_ps(lo[1]),
                _mm512_set1_ps(lo[2]),
            ],
            [
                _mm512_set1_ps(hi[0]),
                _mm512_set1_ps(hi[1]),
                _mm512_set1_ps(hi[2]),
            ],
            _mm512_set1_ps(r2),
            _mm512_setzero_ps(),
            iota(),
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
            start + (first_self as usize - start) / WIDE * WIDE
        } else {
            usize::MAX
        };
        let mut base = start;
        while base < end {
            let lanes = block_lanes(base, end);
            debug_assert!(cursor + WIDE <= out.room, "packed columns too short");
            // SAFETY: the selected lanes lie inside the range, inside the columns and ids;
            // the target has room for every candidate plus WIDE and the cursor counts the
            // candidates kept so far; AVX-512 is the caller's contract.
            let kept = unsafe {
                let q = [
                    load(columns[0], base, lanes),
                    load(columns[1], base, lanes),
                    load(columns[2], base, lanes),
                ];
                // The squared gap to the box per axis, `max(lo - q, q - hi, 0)`, summed as
                // the predicate sums (see `Real::box_mask`).
                macro_rules! gap2 {
                    ($axis:expr) => {{
                        let below = _mm512_sub_ps(low[$axis], q[$axis]);
                        let above = _mm512_sub_ps(q[$axis], high[$axis]);
                        let g = _mm512_max_ps(_mm512_max_ps(below, above), zero);
                        _mm512_mul_ps(g, g)
                    }};
                }
                let d2 = _mm512_add_ps(_mm512_add_ps(gap2!(0), gap2!(1)), gap2!(2));
                let kept = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(lanes, d2, radius2);
                for axis in 0..3 {
                    _mm512_storeu_ps(
                        out.columns[axis].add(cursor),
                        _mm512_maskz_compress_ps(kept, q[axis]),
                    );
                }
                let values = if IDS {
                    load_ids(ids, base, lanes)
                } else {
                    _mm512_add_epi32(_mm512_set1_epi32(base as i32), lane)
                };
                _mm512_storeu_epi32(
                    out.ids.add(cursor).cast(),
                    _mm512_maskz_compress_epi32(kept, values),
                );
                kept
            };
            if base == self_block {
                let before = (1u32 << (first_self as usize - base)) - 1;
                self_at = (cursor + (u32::from(kept) & before).count_ones() as usize) as u32;
            }
            cursor += kept.count_ones() as usize;
            base += WIDE;
        }
    }
    (cursor, self_at)
}
