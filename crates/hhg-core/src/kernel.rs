//! The inner loops every search shares: a batch of points that share one neighbourhood is
//! tested against contiguous ranges of sorted candidates, 8 lanes at a time, and the hit
//! masks are counted or compressed into index lists.

use wide::u32x8;

use crate::real::{LANES, Real};

/// At most this many searching points share one pass over a neighbourhood's candidates:
/// each block of 8 candidates is loaded once and tested against every point of the batch.
pub(crate) const BATCH: usize = 16;

/// A distance-mask kernel: SIMD or the scalar reference (identical by construction and test).
pub(crate) trait MaskKernel {
    /// 8 loaded candidates.
    type Block<T: Real>: Copy;

    /// Loads 8 candidates.
    fn load<T: Real>(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block<T>;

    /// Bit `k` set when candidate `k` of the block is within `sqrt(r2)` of `p`.
    fn mask<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32;
}

/// The `wide` 8-lane kernel.
pub(crate) struct SimdKernel;

/// The one-lane-at-a-time reference kernel.
pub(crate) struct ScalarKernel;

impl MaskKernel for SimdKernel {
    type Block<T: Real> = T::Block;

    #[inline(always)]
    fn load<T: Real>(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block<T> {
        T::load_block(x, y, z)
    }

    #[inline(always)]
    fn mask<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32 {
        T::block_mask(p, block, r2)
    }
}

impl MaskKernel for ScalarKernel {
    type Block<T: Real> = [[T; 8]; 3];

    #[inline(always)]
    fn load<T: Real>(x: &[T; 8], y: &[T; 8], z: &[T; 8]) -> Self::Block<T> {
        [*x, *y, *z]
    }

    #[inline(always)]
    fn mask<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32 {
        T::within_mask_scalar(p, &block[0], &block[1], &block[2], r2)
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

/// For each 8-bit mask, the lanes of its set bits packed to the front.
static COMPRESS_LANES: [[u32; 8]; 256] = {
    let mut table = [[0u32; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut k = 0;
        let mut lane = 0;
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                table[mask][k] = lane as u32;
                k += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
};

/// Appends the positions `base + lane` of the set bits of `mask` to `out` at `cursor` and
/// returns the new cursor. Where 8 slots remain it writes all 8 from a lookup table (one
/// vector add and store, no branch per hit); the slots past the new cursor are overwritten
/// later or lie beyond the list's final length only when nothing follows in this list.
#[inline(always)]
pub(crate) fn compress_store(base: u32, mask: u32, out: &mut [u32], cursor: usize) -> usize {
    debug_assert!(mask < 256);
    if let Some(slots) = out.get_mut(cursor..cursor + LANES) {
        let lanes = u32x8::new(COMPRESS_LANES[mask as usize]) + u32x8::splat(base);
        slots.copy_from_slice(&lanes.to_array());
        cursor + mask.count_ones() as usize
    } else {
        let mut cursor = cursor;
        for_each_hit(base, mask, |q| {
            out[cursor] = q;
            cursor += 1;
        });
        cursor
    }
}

/// Calls `emit(position)` for each set bit of `mask`, lowest first.
#[inline(always)]
pub(crate) fn for_each_hit(base: u32, mut mask: u32, mut emit: impl FnMut(u32)) {
    while mask != 0 {
        emit(base + mask.trailing_zeros());
        mask &= mask - 1;
    }
}
