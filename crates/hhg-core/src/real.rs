//! The coordinate precisions hhg searches in (`f32`, `f64`) and their 8-lane distance kernels.

use std::fmt::Debug;
use std::ops::{Add, Mul, Sub};

use wide::{f32x8, f64x4, u32x8};

use crate::simd::permute8;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// How many candidates one distance kernel call tests.
pub const LANES: usize = 8;

/// A coordinate type: `f32` or `f64`. The distance test runs in this precision.
///
/// The neighbour predicate is `(dx*dx + dy*dy) + dz*dz <= r2`, evaluated in `Self` in exactly
/// that order and without fused multiply-add, so that every code path agrees bit for bit.
pub trait Real:
    sealed::Sealed
    + Copy
    + Send
    + Sync
    + Debug
    + Default
    + PartialOrd
    + bytemuck::Pod
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + 'static
{
    /// The value padding lanes hold past the end of a column; it never passes a distance test.
    const PAD: Self;

    /// Widens to `f64` (exact for both precisions).
    fn to_f64(self) -> f64;

    /// Narrows from `f64`, rounding to nearest.
    fn from_f64(value: f64) -> Self;

    /// Tells whether the value is neither NaN nor infinite.
    fn is_finite(self) -> bool;

    /// Tells whether the value is finite, nonzero and not subnormal.
    fn is_normal(self) -> bool;

    /// The squared distance by the one formula every path uses: `(dx*dx + dy*dy) + dz*dz`.
    #[inline(always)]
    fn distance_squared(p: [Self; 3], q: [Self; 3]) -> Self {
        let dx = q[0] - p[0];
        let dy = q[1] - p[1];
        let dz = q[2] - p[2];
        (dx * dx + dy * dy) + dz * dz
    }

    /// Bit `k` of the result is set when candidate `k` lies within `sqrt(r2)` of `p` (SIMD path).
    #[inline(always)]
    fn within_mask(p: [Self; 3], x: &[Self; 8], y: &[Self; 8], z: &[Self; 8], r2: Self) -> u32 {
        Self::block_mask(p, &Self::load_block(x, y, z), r2)
    }

    /// 8 candidates loaded into SIMD registers, tested against many points in turn.
    type Block: Copy;

    /// Loads 8 candidates.
    fn load_block(x: &[Self; 8], y: &[Self; 8], z: &[Self; 8]) -> Self::Block;

    /// The hit mask of a loaded block against `p` (the SIMD form of [`Real::within_mask`]).
    fn block_mask(p: [Self; 3], block: &Self::Block, r2: Self) -> u32;

    /// The hit masks of a loaded block against `p` within `sqrt(r2)` and within
    /// `sqrt(inner_r2)`, from one computed distance per candidate: the same two masks as two
    /// calls of [`Real::block_mask`].
    fn block_masks(p: [Self; 3], block: &Self::Block, r2: Self, inner_r2: Self) -> (u32, u32);

    /// Bit `k` set when candidate `k` of the block lies within `sqrt(r2)` of the box
    /// `lo..=hi`: the squared gaps to the box, per axis `max(lo - q, q - hi, 0)`, summed as
    /// in [`Real::distance_squared`]. For every point `p` inside the box, each computed gap is
    /// at most `|q - p|` as computed (rounding is monotone), so a candidate that
    /// [`Real::block_mask`] keeps for any such point is kept here: the filter loses no pair.
    /// The result for a NaN lane (padding) is unspecified; callers mask those lanes off.
    fn box_mask(lo: [Self; 3], hi: [Self; 3], block: &Self::Block, r2: Self) -> u32;

    /// Writes the lanes of `values` whose bits are set in `mask` (below `1 << 8`) packed
    /// to `dst`, lowest first; all 8 lanes after `dst` may be written. With `avx2`, the
    /// permutes are AVX2 instructions (see `simd`).
    ///
    /// # Safety
    /// `dst..dst + 8` is valid for writes, and with `avx2` the CPU has AVX2.
    unsafe fn compress_lanes(values: &[Self; 8], mask: u32, dst: *mut Self, avx2: bool);

    /// The scalar reference of [`Real::within_mask`]: one lane at a time, same formula.
    #[inline(always)]
    fn within_mask_scalar(
        p: [Self; 3],
        x: &[Self; 8],
        y: &[Self; 8],
        z: &[Self; 8],
        r2: Self,
    ) -> u32 {
        let mut mask = 0;
        for k in 0..LANES {
            if Self::distance_squared(p, [x[k], y[k], z[k]]) <= r2 {
                mask |= 1 << k;
            }
        }
        mask
    }

    /// Squared distances of the 8 candidates to `p`, by the same formula.
    #[inline(always)]
    fn distances_squared(p: [Self; 3], x: &[Self; 8], y: &[Self; 8], z: &[Self; 8]) -> [Self; 8] {
        std::array::from_fn(|k| Self::distance_squared(p, [x[k], y[k], z[k]]))
    }

    /// The squared distance of two points of the plane ([`crate::plane`]) by the one formula
    /// its every path uses: `dx*dx + dy*dy` with `d = q - p`.
    #[inline(always)]
    fn plane_distance_squared(p: [Self; 2], q: [Self; 2]) -> Self {
        let dx = q[0] - p[0];
        let dy = q[1] - p[1];
        dx * dx + dy * dy
    }

    /// Bit `k` of the result is set when plane candidate `k` (`x[k]`, `y[k]`) lies within
    /// `sqrt(r2)` of `p` by [`Real::plane_distance_squared`] (SIMD path; NaN padding never
    /// passes).
    fn plane_mask(p: [Self; 2], x: &[Self; 8], y: &[Self; 8], r2: Self) -> u32;

    /// The scalar reference of [`Real::plane_mask`]: one lane at a time, same formula.
    #[inline(always)]
    fn plane_mask_scalar(p: [Self; 2], x: &[Self; 8], y: &[Self; 8], r2: Self) -> u32 {
        let mut mask = 0;
        for k in 0..LANES {
            if Self::plane_distance_squared(p, [x[k], y[k]]) <= r2 {
                mask |= 1 << k;
            }
        }
        mask
    }

    /// Widens 4 lanes to `f64` for cell hashing.
    fn widen4(values: &[Self; 4]) -> f64x4;

    /// Bit `k` of the result is set when box `k` of the 8 candidates (`min[axis][k]`,
    /// `max[axis][k]`) overlaps the box `lo..=hi`: closed intervals on every axis,
    /// `lo <= max && min <= hi` (SIMD path; NaN padding never overlaps).
    fn overlap_mask<const D: usize>(
        lo: [Self; D],
        hi: [Self; D],
        min: [&[Self; 8]; D],
        max: [&[Self; 8]; D],
    ) -> u32;

    /// The scalar reference of [`Real::overlap_mask`]: one lane at a time, same comparisons.
    #[inline(always)]
    fn overlap_mask_scalar<const D: usize>(
        lo: [Self; D],
        hi: [Self; D],
        min: [&[Self; 8]; D],
        max: [&[Self; 8]; D],
    ) -> u32 {
        let mut mask = 0;
        for k in 0..LANES {
            if boxes_overlap(lo, hi, min.map(|c| c[k]), max.map(|c| c[k])) {
                mask |= 1 << k;
            }
        }
        mask
    }

    /// Bit `k` is set when particle `k` of the 8 candidates (positions `xyz`, radii
    /// `radii`) and the particle at `p` with radius `r` are neighbours by
    /// [`sphere_pair_within`] (SIMD path; NaN padding never passes).
    fn sphere_mask<const D: usize>(
        p: [Self; D],
        r: Self,
        xyz: [&[Self; 8]; D],
        radii: &[Self; 8],
        mean: bool,
    ) -> u32;

    /// The scalar reference of [`Real::sphere_mask`].
    #[inline(always)]
    fn sphere_mask_scalar<const D: usize>(
        p: [Self; D],
        r: Self,
        xyz: [&[Self; 8]; D],
        radii: &[Self; 8],
        mean: bool,
    ) -> u32 {
        let mut mask = 0;
        for k in 0..LANES {
            if sphere_pair_within(p, r, xyz.map(|c| c[k]), radii[k], mean) {
                mask |= 1 << k;
            }
        }
        mask
    }

    /// Half of a value.
    fn half(self) -> Self;

    /// The larger of two values (the first when they compare equal or unordered).
    #[inline(always)]
    fn max_of(self, other: Self) -> Self {
        if other > self { other } else { self }
    }
}

/// The neighbour predicate of two particles with their own radii: `d2 <= s * s` with `d2` by
/// [`Real::distance_squared`] and `s = max(ri, rj)` (or `(ri + rj) / 2` when `mean`),
/// evaluated in `T` in exactly this way on every path.
#[inline(always)]
pub fn sphere_pair_within<T: Real, const D: usize>(
    p: [T; D],
    rp: T,
    q: [T; D],
    rq: T,
    mean: bool,
) -> bool {
    let s = if mean {
        (rp + rq).half()
    } else {
        rp.max_of(rq)
    };
    distance_squared_in(p, q) <= s * s
}

/// The squared distance of `p` and `q`, summed from the first axis on:
/// `(dx*dx + dy*dy) + dz*dz` in 3-D (as [`Real::distance_squared`] and the grid's kernels),
/// `dx*dx + dy*dy` in the plane (as [`Real::plane_distance_squared`]).
#[inline(always)]
pub(crate) fn distance_squared_in<T: Real, const D: usize>(p: [T; D], q: [T; D]) -> T {
    let d = q[0] - p[0];
    let mut sum = d * d;
    for a in 1..D {
        let d = q[a] - p[a];
        sum = sum + d * d;
    }
    sum
}

/// The overlap predicate of two closed boxes: `a_lo <= b_hi && b_lo <= a_hi` on every axis.
#[inline(always)]
pub fn boxes_overlap<T: Real, const D: usize>(
    a_lo: [T; D],
    a_hi: [T; D],
    b_lo: [T; D],
    b_hi: [T; D],
) -> bool {
    (0..D).all(|axis| a_lo[axis] <= b_hi[axis] && b_lo[axis] <= a_hi[axis])
}

impl Real for f32 {
    const PAD: Self = f32::NAN;

    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }

    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value as f32
    }

    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }

    #[inline(always)]
    fn is_normal(self) -> bool {
        f32::is_normal(self)
    }

    type Block = [f32x8; 3];

    #[inline(always)]
    fn load_block(x: &[Self; 8], y: &[Self; 8], z: &[Self; 8]) -> Self::Block {
        [f32x8::from(*x), f32x8::from(*y), f32x8::from(*z)]
    }

    #[inline(always)]
    fn block_mask(p: [Self; 3], block: &Self::Block, r2: Self) -> u32 {
        let dx = block[0] - f32x8::splat(p[0]);
        let dy = block[1] - f32x8::splat(p[1]);
        let dz = block[2] - f32x8::splat(p[2]);
        let d2 = (dx * dx + dy * dy) + dz * dz;
        d2.simd_le(f32x8::splat(r2)).to_bitmask()
    }

    #[inline(always)]
    fn block_masks(p: [Self; 3], block: &Self::Block, r2: Self, inner_r2: Self) -> (u32, u32) {
        let dx = block[0] - f32x8::splat(p[0]);
        let dy = block[1] - f32x8::splat(p[1]);
        let dz = block[2] - f32x8::splat(p[2]);
        let d2 = (dx * dx + dy * dy) + dz * dz;
        (
            d2.simd_le(f32x8::splat(r2)).to_bitmask(),
            d2.simd_le(f32x8::splat(inner_r2)).to_bitmask(),
        )
    }

    #[inline(always)]
    fn box_mask(lo: [Self; 3], hi: [Self; 3], block: &Self::Block, r2: Self) -> u32 {
        let gap = |axis: usize| {
            let q = block[axis];
            let below = f32x8::splat(lo[axis]) - q;
            let above = q - f32x8::splat(hi[axis]);
            below.fast_max(above).fast_max(f32x8::ZERO)
        };
        let (gx, gy, gz) = (gap(0), gap(1), gap(2));
        let d2 = (gx * gx + gy * gy) + gz * gz;
        d2.simd_le(f32x8::splat(r2)).to_bitmask()
    }

    #[inline(always)]
    unsafe fn compress_lanes(values: &[Self; 8], mask: u32, dst: *mut Self, avx2: bool) {
        debug_assert!(mask < 1 << LANES, "mask wider than a block");
        let bits = u32x8::new(bytemuck::cast(*values));
        // SAFETY: the caller sets `avx2` only where the CPU has AVX2.
        let packed = unsafe { permute8(avx2, bits, u32x8::new(COMPRESS_LANES[mask as usize])) };
        // SAFETY: the caller guarantees `dst..dst + 8` is valid for writes.
        unsafe { dst.cast::<[u32; 8]>().write_unaligned(packed.to_array()) };
    }

    #[inline(always)]
    fn widen4(values: &[Self; 4]) -> f64x4 {
        f64x4::new(values.map(f64::from))
    }

    #[inline(always)]
    fn plane_mask(p: [Self; 2], x: &[Self; 8], y: &[Self; 8], r2: Self) -> u32 {
        let dx = f32x8::from(*x) - f32x8::splat(p[0]);
        let dy = f32x8::from(*y) - f32x8::splat(p[1]);
        (dx * dx + dy * dy).simd_le(f32x8::splat(r2)).to_bitmask()
    }

    #[inline(always)]
    fn sphere_mask<const D: usize>(
        p: [Self; D],
        r: Self,
        xyz: [&[Self; 8]; D],
        radii: &[Self; 8],
        mean: bool,
    ) -> u32 {
        // Summed from the first axis on, as `distance_squared_in`.
        let delta = |a: usize| f32x8::from(*xyz[a]) - f32x8::splat(p[a]);
        let mut d2 = delta(0) * delta(0);
        for a in 1..D {
            d2 += delta(a) * delta(a);
        }
        let radii = f32x8::from(*radii);
        let rp = f32x8::splat(r);
        // Like `max_of`: the candidate's radius only where it is strictly larger.
        let s = if mean {
            (rp + radii) * f32x8::splat(0.5)
        } else {
            radii.simd_gt(rp).bitselect(radii, rp)
        };
        d2.simd_le(s * s).to_bitmask()
    }

    #[inline(always)]
    fn half(self) -> Self {
        self * 0.5
    }

    #[inline(always)]
    fn overlap_mask<const D: usize>(
        lo: [Self; D],
        hi: [Self; D],
        min: [&[Self; 8]; D],
        max: [&[Self; 8]; D],
    ) -> u32 {
        let axis = |a: usize| {
            f32x8::splat(lo[a]).simd_le(f32x8::from(*max[a]))
                & f32x8::from(*min[a]).simd_le(f32x8::splat(hi[a]))
        };
        let mut mask = axis(0);
        for a in 1..D {
            mask &= axis(a);
        }
        mask.to_bitmask()
    }
}

impl Real for f64 {
    const PAD: Self = f64::NAN;

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }

    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value
    }

    #[inline(always)]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }

    #[inline(always)]
    fn is_normal(self) -> bool {
        f64::is_normal(self)
    }

    type Block = [[f64x4; 2]; 3];

    #[inline(always)]
    fn load_block(x: &[Self; 8], y: &[Self; 8], z: &[Self; 8]) -> Self::Block {
        let halves = |c: &[f64; 8]| {
            [
                f64x4::new([c[0], c[1], c[2], c[3]]),
                f64x4::new([c[4], c[5], c[6], c[7]]),
            ]
        };
        [halves(x), halves(y), halves(z)]
    }

    #[inline(always)]
    fn block_mask(p: [Self; 3], block: &Self::Block, r2: Self) -> u32 {
        let half = |h: usize| {
            let dx = block[0][h] - f64x4::splat(p[0]);
            let dy = block[1][h] - f64x4::splat(p[1]);
            let dz = block[2][h] - f64x4::splat(p[2]);
            let d2 = (dx * dx + dy * dy) + dz * dz;
            d2.simd_le(f64x4::splat(r2)).to_bitmask()
        };
        half(0) | (half(1) << 4)
    }

    #[inline(always)]
    fn block_masks(p: [Self; 3], block: &Self::Block, r2: Self, inner_r2: Self) -> (u32, u32) {
        let half = |h: usize| {
            let dx = block[0][h] - f64x4::splat(p[0]);
            let dy = block[1][h] - f64x4::splat(p[1]);
            let dz = block[2][h] - f64x4::splat(p[2]);
            let d2 = (dx * dx + dy * dy) + dz * dz;
            (
                d2.simd_le(f64x4::splat(r2)).to_bitmask(),
                d2.simd_le(f64x4::splat(inner_r2)).to_bitmask(),
            )
        };
        let (low, high) = (half(0), half(1));
        (low.0 | (high.0 << 4), low.1 | (high.1 << 4))
    }

    #[inline(always)]
    fn box_mask(lo: [Self; 3], hi: [Self; 3], block: &Self::Block, r2: Self) -> u32 {
        let half = |h: usize| {
            let gap = |axis: usize| {
                let q = block[axis][h];
                let below = f64x4::splat(lo[axis]) - q;
                let above = q - f64x4::splat(hi[axis]);
                below.fast_max(above).fast_max(f64x4::ZERO)
            };
            let (gx, gy, gz) = (gap(0), gap(1), gap(2));
            let d2 = (gx * gx + gy * gy) + gz * gz;
            d2.simd_le(f64x4::splat(r2)).to_bitmask()
        };
        half(0) | (half(1) << 4)
    }

    #[inline(always)]
    unsafe fn compress_lanes(values: &[Self; 8], mask: u32, dst: *mut Self, avx2: bool) {
        debug_assert!(mask < 1 << LANES, "mask wider than a block");
        // Each half of 4 lanes is 8 words; its set lanes move as pairs of words.
        let halves: [[u32; 8]; 2] = bytemuck::cast(*values);
        let low = mask & 0xf;
        let (low_pairs, high_pairs) = (
            COMPRESS_PAIRS[low as usize],
            COMPRESS_PAIRS[(mask >> 4) as usize],
        );
        // SAFETY: the caller sets `avx2` only where the CPU has AVX2.
        let (packed_low, packed_high) = unsafe {
            (
                permute8(avx2, u32x8::new(halves[0]), u32x8::new(low_pairs)),
                permute8(avx2, u32x8::new(halves[1]), u32x8::new(high_pairs)),
            )
        };
        // SAFETY: the caller guarantees `dst..dst + 8` is valid for writes; the low half
        // writes lanes 0..4 and the high half lanes `low.count_ones()..` + 4, both below 8.
        unsafe {
            dst.cast::<[u32; 8]>()
                .write_unaligned(packed_low.to_array());
            dst.add(low.count_ones() as usize)
                .cast::<[u32; 8]>()
                .write_unaligned(packed_high.to_array());
        }
    }

    #[inline(always)]
    fn widen4(values: &[Self; 4]) -> f64x4 {
        f64x4::new(*values)
    }

    #[inline(always)]
    fn plane_mask(p: [Self; 2], x: &[Self; 8], y: &[Self; 8], r2: Self) -> u32 {
        let half = |h: usize| {
            let quad =
                |c: &[f64; 8]| f64x4::new([c[4 * h], c[4 * h + 1], c[4 * h + 2], c[4 * h + 3]]);
            let dx = quad(x) - f64x4::splat(p[0]);
            let dy = quad(y) - f64x4::splat(p[1]);
            (dx * dx + dy * dy).simd_le(f64x4::splat(r2)).to_bitmask()
        };
        half(0) | (half(1) << 4)
    }

    #[inline(always)]
    fn sphere_mask<const D: usize>(
        p: [Self; D],
        r: Self,
        xyz: [&[Self; 8]; D],
        radii: &[Self; 8],
        mean: bool,
    ) -> u32 {
        let quad = |c: &[f64; 8], h: usize| {
            f64x4::new([c[4 * h], c[4 * h + 1], c[4 * h + 2], c[4 * h + 3]])
        };
        let half = |h: usize| {
            // Summed from the first axis on, as `distance_squared_in`.
            let delta = |a: usize| quad(xyz[a], h) - f64x4::splat(p[a]);
            let mut d2 = delta(0) * delta(0);
            for a in 1..D {
                d2 += delta(a) * delta(a);
            }
            let radii = quad(radii, h);
            let rp = f64x4::splat(r);
            let s = if mean {
                (rp + radii) * f64x4::splat(0.5)
            } else {
                radii.simd_gt(rp).bitselect(radii, rp)
            };
            d2.simd_le(s * s).to_bitmask()
        };
        half(0) | (half(1) << 4)
    }

    #[inline(always)]
    fn half(self) -> Self {
        self * 0.5
    }

    #[inline(always)]
    fn overlap_mask<const D: usize>(
        lo: [Self; D],
        hi: [Self; D],
        min: [&[Self; 8]; D],
        max: [&[Self; 8]; D],
    ) -> u32 {
        let quad = |c: &[f64; 8], h: usize| {
            f64x4::new([c[4 * h], c[4 * h + 1], c[4 * h + 2], c[4 * h + 3]])
        };
        let half = |h: usize| {
            let axis = |a: usize| {
                f64x4::splat(lo[a]).simd_le(quad(max[a], h))
                    & quad(min[a], h).simd_le(f64x4::splat(hi[a]))
            };
            let mut mask = axis(0);
            for a in 1..D {
                mask &= axis(a);
            }
            mask.to_bitmask()
        };
        half(0) | (half(1) << 4)
    }
}

/// For each 8-bit mask, the lanes of its set bits packed to the front.
pub(crate) static COMPRESS_LANES: [[u32; 8]; 256] = compress_table(1);

/// For each 4-bit mask, the word pairs of its set 64-bit lanes packed to the front (lanes
/// of 64 bits compressed with a permute of 32-bit words).
pub(crate) static COMPRESS_PAIRS: [[u32; 8]; 16] = compress_table(2);

/// The permutes that compress lanes of `words` 32-bit words each (8 / `words` lanes, one
/// mask bit per lane): for each of the `MASKS` masks, the words of its set lanes packed to
/// the front, in order.
const fn compress_table<const MASKS: usize>(words: usize) -> [[u32; 8]; MASKS] {
    let mut table = [[0u32; 8]; MASKS];
    let mut mask = 0;
    while mask < MASKS {
        let mut k = 0;
        let mut lane = 0;
        while lane < LANES / words {
            if mask & (1 << lane) != 0 {
                let mut word = 0;
                while word < words {
                    table[mask][k] = (lane * words + word) as u32;
                    k += 1;
                    word += 1;
                }
            }
            lane += 1;
        }
        mask += 1;
    }
    table
}
