//! The packing of a batch's candidates: the bounding box of the batch, and the candidates of
//! its neighbourhood within reach of that box, compressed into padded columns that
//! [`gather_many`](super::gather_many) then scans in place of the whole ranges.

use wide::u32x8;

#[cfg(target_arch = "x86_64")]
use super::avx512;
use super::{ROW_SLACK, lanes_unchecked};
use crate::parallel::{candidate_room, keep_larger};
use crate::real::{COMPRESS_LANES, LANES, Real};
use crate::simd::permute8;

/// The candidates of a batch's neighbourhood that may lie within reach of one of its points,
/// packed as padded columns (`x`, `y`, `z` and an identifier each) for
/// [`gather_many`](super::gather_many).
#[derive(Clone, Debug, Default)]
pub(crate) struct PackedCandidates<T> {
    x: Vec<T>,
    y: Vec<T>,
    z: Vec<T>,
    ids: Vec<u32>,
    /// Whether a batch was packed here (the tests tell the passes that pack).
    #[cfg(test)]
    pub(crate) used: bool,
}

impl<T: Real> PackedCandidates<T> {
    /// Keeps, column by column, the larger allocation of `self` and `other`.
    pub(crate) fn absorb(&mut self, other: Self) {
        keep_larger(&mut self.x, other.x);
        keep_larger(&mut self.y, other.y);
        keep_larger(&mut self.z, other.z);
        keep_larger(&mut self.ids, other.ids);
    }

    /// Makes the columns at least `len` long, growing them only past their high-water mark,
    /// and then with slack ([`candidate_room`]): a neighbourhood a little fuller than any
    /// before (points moved between steps) finds room.
    pub(crate) fn make_room(&mut self, len: usize) {
        if self.ids.len() < len {
            let len = candidate_room(len);
            self.x.resize(len, T::PAD);
            self.y.resize(len, T::PAD);
            self.z.resize(len, T::PAD);
            self.ids.resize(len, 0);
        }
    }

    /// The three coordinate columns.
    pub(crate) fn columns(&self) -> [&[T]; 3] {
        [&self.x, &self.y, &self.z]
    }

    /// The identifier of each packed candidate.
    pub(crate) fn ids(&self) -> &[u32] {
        &self.ids
    }
}

/// The bounding box of `points`, one axis at a time: the loop over the points with all three
/// axes inside was vectorized into shuffles of the interleaved coordinates, ~6 % of the list
/// pass in cell order (perf, 1M uniform, AVX-512 build).
#[inline(always)]
pub(crate) fn bounding_box<T: Real>(points: &[[T; 3]]) -> ([T; 3], [T; 3]) {
    let mut lo = points[0];
    let mut hi = points[0];
    for axis in 0..3 {
        let (mut low, mut high) = (lo[axis], hi[axis]);
        for p in &points[1..] {
            let v = p[axis];
            low = if v < low { v } else { low };
            high = if v > high { v } else { high };
        }
        lo[axis] = low;
        hi[axis] = high;
    }
    (lo, hi)
}

/// What [`pack_within_box`] packs: the candidates of `ranges` of padded `columns` within
/// `sqrt(r2)` of the box `lo..=hi`, and where the batch's first point `first_self` is
/// (range `self_range`, or `usize::MAX` for a batch of query points).
pub(crate) struct PackRequest<'a, T> {
    pub(crate) columns: [&'a [T]; 3],
    /// The identifier of each position (padded by `LANES`), packed with `IDS`.
    pub(crate) ids: &'a [u32],
    pub(crate) lo: [T; 3],
    pub(crate) hi: [T; 3],
    pub(crate) r2: T,
    pub(crate) ranges: &'a [(u32, u32)],
    pub(crate) self_range: usize,
    pub(crate) first_self: u32,
    /// Whether the permutes are AVX2 instructions (only where the CPU has AVX2).
    pub(crate) avx2: bool,
    /// Whether candidates are packed by the AVX-512 loop (only where the CPU has AVX-512;
    /// see [`MaskKernel::AVX512`](super::MaskKernel::AVX512)).
    pub(crate) avx512: bool,
}

/// Packs into `out` the candidates of `request.ranges` within `sqrt(r2)` of the box
/// `lo..=hi` (see [`Real::box_mask`]), in range order, each with its identifier:
/// `ids[position]` with `IDS`, its position without. Returns how many were packed and, when
/// `self_range` is a range (not `usize::MAX`), the packed position of `first_self`
/// (`u32::MAX` otherwise).
///
/// Every point inside the box is its own candidate at distance 0 (`r2` is positive), so
/// the points of a batch that follow `first_self` in its range follow it in the packed
/// columns too.
///
/// # Safety
/// `columns` are padded `PointColumns`, `ids` (with `IDS`) is padded by `LANES` past the
/// point count, every range lies below the point count, range `self_range` (unless
/// `usize::MAX`) holds `first_self`, with `avx2` the CPU has AVX2, and with `avx512` it
/// has AVX-512.
#[inline(always)]
pub(crate) unsafe fn pack_within_box<T: Real, const IDS: bool>(
    request: &PackRequest<'_, T>,
    out: &mut PackedCandidates<T>,
) -> (usize, u32) {
    let PackRequest {
        columns,
        ids,
        lo,
        hi,
        r2,
        ranges,
        self_range,
        first_self,
        avx2,
        avx512,
    } = *request;
    let candidates: usize = ranges.iter().map(|&(s, e)| (e - s) as usize).sum();
    out.make_room(candidates + ROW_SLACK);
    #[cfg(test)]
    {
        out.used = true;
    }
    #[cfg(target_arch = "x86_64")]
    if avx512 {
        // As in `gather_many`: `T` is the scalar of the block its size picks.
        macro_rules! pack_in {
            ($block:ty, $scalar:ty) => {{
                let cast = |v: T| bytemuck::cast::<T, $scalar>(v);
                let target = avx512::PackTarget {
                    columns: [out.x.as_mut_ptr(), out.y.as_mut_ptr(), out.z.as_mut_ptr()]
                        .map(|column| column.cast::<$scalar>()),
                    ids: out.ids.as_mut_ptr(),
                    room: out.ids.len(),
                };
                // SAFETY: the caller's contract, with AVX-512 (`avx512`); the columns have
                // room for every candidate plus ROW_SLACK (at least a block).
                return unsafe {
                    avx512::pack_within_box::<$block, IDS>(
                        columns.map(bytemuck::cast_slice::<T, $scalar>),
                        ids,
                        lo.map(cast),
                        hi.map(cast),
                        cast(r2),
                        ranges,
                        self_range,
                        first_self,
                        &target,
                    )
                };
            }};
        }
        if size_of::<T>() == size_of::<f32>() {
            pack_in!(avx512::F32x16, f32);
        } else {
            pack_in!(avx512::F64x8, f64);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = avx512;
    let dst = [out.x.as_mut_ptr(), out.y.as_mut_ptr(), out.z.as_mut_ptr()];
    let dst_ids = out.ids.as_mut_ptr();
    let room = out.ids.len();
    // Packs the lanes of `keep` at `base` that lie within reach of the box at `cursor`, and
    // gives the mask of those lanes. A macro, not a closure (see `gather_many`'s `block`).
    macro_rules! pack {
        ($base:expr, $keep:expr, $cursor:expr) => {{
            let (base, keep, cursor): (usize, u32, usize) = ($base, $keep, $cursor);
            // SAFETY: base is below the point count, and the columns are padded by LANES.
            let [x, y, z] = unsafe { lanes_unchecked(columns, base) };
            let mask = T::box_mask(lo, hi, &T::load_block(x, y, z), r2) & keep;
            let id_values = if IDS {
                debug_assert!(base + LANES <= ids.len(), "ids not padded");
                // SAFETY: the caller pads `ids` by LANES past the point count.
                u32x8::new(unsafe { ids.as_ptr().add(base).cast::<[u32; 8]>().read_unaligned() })
            } else {
                u32x8::splat(base as u32) + u32x8::new([0, 1, 2, 3, 4, 5, 6, 7])
            };
            debug_assert!(cursor + LANES <= room, "packed columns too short");
            // SAFETY: the columns hold every candidate of the ranges plus LANES, and the cursor
            // counts the candidates kept so far, so `cursor..cursor + 8` is inside.
            // `avx2` is set only where the CPU has AVX2 (the request's contract).
            unsafe {
                T::compress_lanes(x, mask, dst[0].add(cursor), avx2);
                T::compress_lanes(y, mask, dst[1].add(cursor), avx2);
                T::compress_lanes(z, mask, dst[2].add(cursor), avx2);
                let lanes = u32x8::new(COMPRESS_LANES[mask as usize]);
                dst_ids
                    .add(cursor)
                    .cast::<[u32; 8]>()
                    .write_unaligned(permute8(avx2, id_values, lanes).to_array());
            }
            mask
        }};
    }
    let mut cursor = 0usize;
    let mut self_at = u32::MAX;
    let all = (1u32 << LANES) - 1;
    for (index, &(start, end)) in ranges.iter().enumerate() {
        let (start, end) = (start as usize, end as usize);
        let tail = (end - start) % LANES;
        let full_end = end - tail;
        let mut base = start;
        if index == self_range {
            debug_assert!(
                (start..end).contains(&(first_self as usize)),
                "the self range does not hold the batch's first point"
            );
            // The block that holds `first_self` also gives its packed position.
            let offset = (first_self as usize).wrapping_sub(start);
            let self_block = start + offset / LANES * LANES;
            while base < self_block {
                cursor += pack!(base, all, cursor).count_ones() as usize;
                base += LANES;
            }
            let keep = if base < full_end {
                all
            } else {
                (1 << tail) - 1
            };
            let mask = pack!(base, keep, cursor);
            let before = (1u32 << (first_self as usize - base)) - 1;
            self_at = (cursor + (mask & before).count_ones() as usize) as u32;
            cursor += mask.count_ones() as usize;
            base += LANES;
        }
        while base < full_end {
            cursor += pack!(base, all, cursor).count_ones() as usize;
            base += LANES;
        }
        if base < end {
            cursor += pack!(base, (1 << tail) - 1, cursor).count_ones() as usize;
        }
    }
    (cursor, self_at)
}
