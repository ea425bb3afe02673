//! Sorting short neighbour lists with a branch-free bitonic network on 8-lane vectors.
//!
//! Lists of points given in random order map to random caller indices, and each of the
//! million lists of ~40 entries must come out ascending; a data-independent network of
//! min/max on `u32x8` sorts up to 128 entries without a single unpredictable branch.

use wide::u32x8;

use crate::simd::{
    COMPILED_FOR_AVX2, COMPILED_FOR_AVX512, avx2_build, avx512_build, min_max8, permute8,
};

/// Lists up to this long are sorted by one network; longer ones by networks over chunks of
/// this length, then merged ([`sort_long`]). The 128-entry network (16 registers, the two
/// halves presorted like a 64-entry one) replaced two 64-entry networks and a scalar merge:
/// the clustered cloud in random order, 1M points, went from 1,995 to 1,826 instructions
/// per point (callgrind), its lists from 144-169 to 129-145 ms on two threads.
pub(crate) const NETWORK_MAX: usize = 128;

/// The lanes of register `a` that keep the larger value in stage `(K, J)` of a bitonic
/// sort: lane `l` (global index `8a + l`) takes the maximum when it is the upper partner
/// (`l & J != 0`) of an ascending block, or the lower partner of a descending one.
const fn upper_lanes<const K: usize, const J: usize>() -> [[u32; 8]; 16] {
    let mut table = [[0u32; 8]; 16];
    let mut a = 0;
    while a < 16 {
        let mut lane = 0;
        while lane < 8 {
            let upper = (lane & J) != 0;
            let descending = ((8 * a + lane) & K) != 0;
            table[a][lane] = if upper != descending { u32::MAX } else { 0 };
            lane += 1;
        }
        a += 1;
    }
    table
}

/// Lane `l` of the result reads lane `l ^ J`.
const fn partner_lanes<const J: usize>() -> [u32; 8] {
    let mut perm = [0u32; 8];
    let mut lane = 0;
    while lane < 8 {
        perm[lane] = (lane ^ J) as u32;
        lane += 1;
    }
    perm
}

/// One compare-exchange stage `(K, J)` over `8 * R` values held in `R` registers.
///
/// # Safety
/// With `avx2`, the CPU has AVX2 (as for every function of this module that takes it).
#[inline(always)]
unsafe fn stage<const R: usize, const K: usize, const J: usize>(v: &mut [u32x8; R], avx2: bool) {
    if K > 8 * R {
        return;
    }
    if J >= 8 {
        // Partners sit in different registers, at the same lane.
        for a in 0..R {
            let b = a ^ (J / 8);
            if b > a {
                // SAFETY: the caller's contract.
                let (lo, hi) = unsafe { min_max8(avx2, v[a], v[b]) };
                let ascending = (8 * a) & K == 0;
                (v[a], v[b]) = if ascending { (lo, hi) } else { (hi, lo) };
            }
        }
    } else {
        // Partners sit in the same register, `J` lanes apart.
        let perm = u32x8::new(const { partner_lanes::<J>() });
        let upper = const { upper_lanes::<K, J>() };
        for (a, value) in v.iter_mut().enumerate() {
            // SAFETY: the caller's contract.
            let (lo, hi) = unsafe { min_max8(avx2, *value, permute8(avx2, *value, perm)) };
            *value = u32x8::new(upper[a]).bitselect(hi, lo);
        }
    }
}

/// Batcher's odd-even merge sort of 8 inputs: 19 compare-exchanges in 6 rounds.
const SORT_8: [(usize, usize); 19] = [
    (0, 1),
    (2, 3),
    (4, 5),
    (6, 7),
    (0, 2),
    (1, 3),
    (4, 6),
    (5, 7),
    (1, 2),
    (5, 6),
    (0, 4),
    (1, 5),
    (2, 6),
    (3, 7),
    (2, 4),
    (3, 5),
    (1, 2),
    (3, 4),
    (5, 6),
];

/// Leaves 64 values as the first three rounds of a bitonic sort do (each register sorted,
/// ascending in even registers and descending in odd ones), by another route: [`SORT_8`]
/// sorts the 8 columns across the registers with whole-register min/max, a transpose turns
/// the columns into registers, and the odd registers are reversed. About 70 instructions
/// where the six in-register stages take about 190.
///
/// # Safety
/// As for [`stage`].
#[inline(always)]
unsafe fn presort_columns(v: &mut [u32x8; 8], avx2: bool) {
    // One call per comparator, so every register index is a constant (a loop over the
    // table kept the registers in memory).
    exchange::<0>(v, avx2);
    exchange::<1>(v, avx2);
    exchange::<2>(v, avx2);
    exchange::<3>(v, avx2);
    exchange::<4>(v, avx2);
    exchange::<5>(v, avx2);
    exchange::<6>(v, avx2);
    exchange::<7>(v, avx2);
    exchange::<8>(v, avx2);
    exchange::<9>(v, avx2);
    exchange::<10>(v, avx2);
    exchange::<11>(v, avx2);
    exchange::<12>(v, avx2);
    exchange::<13>(v, avx2);
    exchange::<14>(v, avx2);
    exchange::<15>(v, avx2);
    exchange::<16>(v, avx2);
    exchange::<17>(v, avx2);
    exchange::<18>(v, avx2);
    *v = u32x8::transpose(*v);
    let reverse = u32x8::new([7, 6, 5, 4, 3, 2, 1, 0]);
    for value in v.iter_mut().skip(1).step_by(2) {
        // SAFETY: the caller's contract.
        *value = unsafe { permute8(avx2, *value, reverse) };
    }
}

/// Comparator `C` of [`SORT_8`] on whole registers: the smaller values to the first.
#[inline(always)]
fn exchange<const C: usize>(v: &mut [u32x8; 8], avx2: bool) {
    let (a, b) = const { SORT_8[C] };
    // SAFETY: `exchange` is called only by `presort_columns`, whose caller guarantees AVX2
    // when `avx2` is set.
    (v[a], v[b]) = unsafe { min_max8(avx2, v[a], v[b]) };
}

/// Sorts `8 * R` values (`R` = 1, 2, 4, 8 or 16) ascending across the registers.
///
/// # Safety
/// As for [`stage`].
#[inline(always)]
unsafe fn bitonic<const R: usize>(v: &mut [u32x8; R], avx2: bool) {
    // SAFETY: every call below passes on the caller's contract.
    unsafe {
        if let Ok(all) = <&mut [u32x8; 8]>::try_from(&mut v[..]) {
            presort_columns(all, avx2);
        } else if R == 16 {
            let (low, high) = v.split_at_mut(8);
            presort_columns(low.try_into().unwrap(), avx2);
            presort_columns(high.try_into().unwrap(), avx2);
        } else {
            stage::<R, 2, 1>(v, avx2);
            stage::<R, 4, 2>(v, avx2);
            stage::<R, 4, 1>(v, avx2);
            stage::<R, 8, 4>(v, avx2);
            stage::<R, 8, 2>(v, avx2);
            stage::<R, 8, 1>(v, avx2);
        }
        stage::<R, 16, 8>(v, avx2);
        stage::<R, 16, 4>(v, avx2);
        stage::<R, 16, 2>(v, avx2);
        stage::<R, 16, 1>(v, avx2);
        stage::<R, 32, 16>(v, avx2);
        stage::<R, 32, 8>(v, avx2);
        stage::<R, 32, 4>(v, avx2);
        stage::<R, 32, 2>(v, avx2);
        stage::<R, 32, 1>(v, avx2);
        stage::<R, 64, 32>(v, avx2);
        stage::<R, 64, 16>(v, avx2);
        stage::<R, 64, 8>(v, avx2);
        stage::<R, 64, 4>(v, avx2);
        stage::<R, 64, 2>(v, avx2);
        stage::<R, 64, 1>(v, avx2);
        stage::<R, 128, 64>(v, avx2);
        stage::<R, 128, 32>(v, avx2);
        stage::<R, 128, 16>(v, avx2);
        stage::<R, 128, 8>(v, avx2);
        stage::<R, 128, 4>(v, avx2);
        stage::<R, 128, 2>(v, avx2);
        stage::<R, 128, 1>(v, avx2);
    }
}

/// Sorts a list of at most `8 * R` values through `R` registers padded with `u32::MAX`.
///
/// Whole registers move straight between the list and the vectors; only the one partly
/// filled register goes through a small array (a variable-length copy through a buffer
/// costs several times the network itself).
///
/// # Safety
/// As for [`stage`].
#[inline(always)]
#[allow(clippy::manual_memcpy)] // A call to memcpy for at most 7 values is what this avoids.
unsafe fn sort_in_registers<const R: usize>(list: &mut [u32], avx2: bool) {
    let len = list.len();
    debug_assert!(len <= 8 * R);
    // A plain loop rather than `array::from_fn`, which the compiler left as a call.
    let mut v = [u32x8::splat(u32::MAX); R];
    for (a, value) in v.iter_mut().enumerate() {
        let start = 8 * a;
        if start + 8 <= len {
            *value = u32x8::new(list[start..start + 8].try_into().unwrap());
        } else if start < len {
            let mut lanes = [u32::MAX; 8];
            for k in start..len {
                lanes[k - start] = list[k];
            }
            *value = u32x8::new(lanes);
        }
    }
    // SAFETY: the caller's contract.
    unsafe { bitonic(&mut v, avx2) };
    for (a, value) in v.iter().enumerate() {
        let start = 8 * a;
        let lanes = value.to_array();
        if start + 8 <= len {
            list[start..start + 8].copy_from_slice(&lanes);
        } else {
            for k in start..len {
                list[k] = lanes[k - start];
            }
        }
    }
}

/// Sorts a short list ascending: a bitonic network up to [`NETWORK_MAX`] entries, the
/// standard library's unstable sort beyond.
///
/// # Safety
/// As for [`stage`].
#[inline(always)]
unsafe fn sort_short(list: &mut [u32], avx2: bool) {
    // SAFETY: the caller's contract.
    unsafe {
        match list.len() {
            0..=1 => {}
            2..=8 => sort_in_registers::<1>(list, avx2),
            9..=16 => sort_in_registers::<2>(list, avx2),
            17..=32 => sort_in_registers::<4>(list, avx2),
            33..=64 => sort_in_registers::<8>(list, avx2),
            65..=NETWORK_MAX => sort_in_registers::<16>(list, avx2),
            _ => list.sort_unstable(),
        }
    }
}

/// Sorts a list longer than [`NETWORK_MAX`]: each chunk of [`NETWORK_MAX`] entries by the
/// network, then bottom-up merges of neighbouring runs, back and forth between the list and
/// `scratch` (grown as needed, kept by the caller). Measured against the standard library's
/// unstable sort on the lists of dense clusters (hundreds of entries), which spent 17 % of
/// a list pass in it.
///
/// # Safety
/// As for [`stage`].
#[inline(always)]
unsafe fn sort_long(list: &mut [u32], scratch: &mut Vec<u32>, avx2: bool) {
    let len = list.len();
    for chunk in list.chunks_mut(NETWORK_MAX) {
        // SAFETY: the caller's contract.
        unsafe { sort_short(chunk, avx2) };
    }
    if len <= NETWORK_MAX {
        return;
    }
    if scratch.len() < len {
        scratch.resize(len, 0);
    }
    let scratch = &mut scratch[..len];
    let mut width = NETWORK_MAX;
    let mut in_list = true;
    while width < len {
        let (from, to): (&[u32], &mut [u32]) = if in_list {
            (list, scratch)
        } else {
            (scratch, list)
        };
        for start in (0..len).step_by(2 * width) {
            let mid = (start + width).min(len);
            let end = (start + 2 * width).min(len);
            merge(&from[start..mid], &from[mid..end], &mut to[start..end]);
        }
        // The two buffers swap roles; rebinding them keeps the borrows apart.
        in_list = !in_list;
        width *= 2;
    }
    if !in_list {
        list.copy_from_slice(scratch);
    }
}

/// Merges the ascending runs `a` and `b` into `out` (`a.len() + b.len()` long), choosing each
/// entry without a branch.
#[inline(always)]
fn merge(a: &[u32], b: &[u32], out: &mut [u32]) {
    debug_assert_eq!(a.len() + b.len(), out.len());
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let take_a = x <= y;
        out[k] = if take_a { x } else { y };
        i += usize::from(take_a);
        j += usize::from(!take_a);
        k += 1;
    }
    out[k..k + a.len() - i].copy_from_slice(&a[i..]);
    let k = k + a.len() - i;
    out[k..].copy_from_slice(&b[j..]);
}

/// Sorts `row[..len]` ascending, using `row[len..]` as scratch: up to [`NETWORK_MAX`]
/// entries are padded in place to whole registers and sorted by the network with no
/// partial register at all (lists are gathered into rows with room to spare); longer lists
/// go to [`sort_long`] with `scratch`.
///
/// `row.len()` must be at least `len` rounded up to 8, 16, 32, 64 or 128 (whichever network
/// `len` needs), or the list falls back to [`sort_short`]. With `avx2`, a library compiled
/// without AVX2 sorts in its run-time AVX2 build (see `simd`); with `avx512`, lists of 9 to
/// 128 entries go through the 16-lane network of [`wide16`] (in the run-time AVX-512 build
/// where the library was compiled without it), which pads in registers and needs no room.
///
/// # Safety
/// With `avx2`, [`avx2_detected`](crate::simd::avx2_detected) holds; with `avx512`,
/// [`avx512_detected`](crate::simd::avx512_detected) holds and so does `avx2`.
pub(crate) unsafe fn sort_padded(
    row: &mut [u32],
    len: usize,
    scratch: &mut Vec<u32>,
    avx2: bool,
    avx512: bool,
) {
    debug_assert!(len <= row.len(), "the list is longer than its row");
    #[cfg(target_arch = "x86_64")]
    if avx512 && (9..=NETWORK_MAX).contains(&len) {
        if COMPILED_FOR_AVX512 {
            // SAFETY: the caller guarantees AVX-512; the row holds the list.
            unsafe { wide16::sort(row, len) };
        } else {
            // SAFETY: as above.
            unsafe { sort_wide16_avx512(row, len) };
        }
        return;
    }
    let _ = avx512;
    if avx2 && !COMPILED_FOR_AVX2 {
        // SAFETY: the caller guarantees that the CPU has AVX2.
        unsafe { sort_padded_avx2(row, len, scratch) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { sort_padded_in(row, len, scratch, avx2) }
    }
}

avx2_build! {
    /// [`sort_padded`] compiled with AVX2 enabled (see `simd`), so that the network's
    /// permutes and comparisons inline as AVX2 instructions.
    ///
    /// # Safety
    /// [`avx2_detected`](crate::simd::avx2_detected) holds.
    unsafe fn sort_padded_avx2(row: &mut [u32], len: usize, scratch: &mut Vec<u32>) {
        // SAFETY: the caller guarantees that the CPU has AVX2.
        unsafe { sort_padded_in(row, len, scratch, true) }
    }
}

#[cfg(target_arch = "x86_64")]
avx512_build! {
    /// [`wide16::sort`] compiled with AVX-512 enabled (see `simd`).
    ///
    /// # Safety
    /// As for [`wide16::sort`].
    unsafe fn sort_wide16_avx512(row: &mut [u32], len: usize) {
        // SAFETY: the caller's contract.
        unsafe { wide16::sort(row, len) }
    }
}

/// The bitonic network on 16-lane AVX-512 registers, for lists of 9 to 128 entries: the
/// same stages as [`bitonic`], with twice the lanes per register, one shuffle, one minimum
/// and one masked maximum per register and in-register stage.
#[cfg(target_arch = "x86_64")]
mod wide16 {
    use std::arch::x86_64::{
        __m512i, __mmask16, _mm512_mask_loadu_epi32, _mm512_mask_max_epu32,
        _mm512_mask_storeu_epi32, _mm512_max_epu32, _mm512_min_epu32, _mm512_set1_epi32,
        _mm512_shuffle_epi32, _mm512_shuffle_i32x4,
    };

    /// Lanes per register.
    const WIDE: usize = 16;

    /// The lanes of register `a` that keep the larger value in stage `(K, J)` (see
    /// `upper_lanes`), as one mask per register.
    const fn upper_masks<const K: usize, const J: usize>() -> [u16; 8] {
        let mut masks = [0u16; 8];
        let mut a = 0;
        while a < 8 {
            let mut lane = 0;
            while lane < WIDE {
                let upper = (lane & J) != 0;
                let descending = ((WIDE * a + lane) & K) != 0;
                if upper != descending {
                    masks[a] |= 1 << lane;
                }
                lane += 1;
            }
            a += 1;
        }
        masks
    }

    /// One compare-exchange stage `(K, J)` over `16 * R` values in `R` registers.
    ///
    /// # Safety
    /// The CPU has AVX-512 F.
    #[inline(always)]
    unsafe fn stage<const R: usize, const K: usize, const J: usize>(v: &mut [__m512i; R]) {
        if K > WIDE * R {
            return;
        }
        // SAFETY: the caller guarantees AVX-512 F (for every intrinsic below).
        unsafe {
            if J >= WIDE {
                for a in 0..R {
                    let b = a ^ (J / WIDE);
                    if b > a {
                        let lo = _mm512_min_epu32(v[a], v[b]);
                        let hi = _mm512_max_epu32(v[a], v[b]);
                        let ascending = (WIDE * a) & K == 0;
                        (v[a], v[b]) = if ascending { (lo, hi) } else { (hi, lo) };
                    }
                }
            } else {
                let upper = const { upper_masks::<K, J>() };
                for (a, value) in v.iter_mut().enumerate() {
                    // The partner lanes by the cheapest shuffle for the distance: within
                    // 128-bit lanes (one cycle) for 1 and 2, of whole 128-bit lanes for 4
                    // and 8.
                    let partner = match J {
                        1 => _mm512_shuffle_epi32::<0xB1>(*value),
                        2 => _mm512_shuffle_epi32::<0x4E>(*value),
                        4 => _mm512_shuffle_i32x4::<0xB1>(*value, *value),
                        _ => _mm512_shuffle_i32x4::<0x4E>(*value, *value),
                    };
                    let lo = _mm512_min_epu32(*value, partner);
                    *value = _mm512_mask_max_epu32(lo, upper[a] as __mmask16, *value, partner);
                }
            }
        }
    }

    /// Sorts `16 * R` values (`R` = 1, 2, 4 or 8) ascending across the registers.
    ///
    /// # Safety
    /// As for [`stage`].
    #[inline(always)]
    unsafe fn bitonic<const R: usize>(v: &mut [__m512i; R]) {
        // SAFETY: the caller's contract.
        unsafe {
            stage::<R, 2, 1>(v);
            stage::<R, 4, 2>(v);
            stage::<R, 4, 1>(v);
            stage::<R, 8, 4>(v);
            stage::<R, 8, 2>(v);
            stage::<R, 8, 1>(v);
            stage::<R, 16, 8>(v);
            stage::<R, 16, 4>(v);
            stage::<R, 16, 2>(v);
            stage::<R, 16, 1>(v);
            stage::<R, 32, 16>(v);
            stage::<R, 32, 8>(v);
            stage::<R, 32, 4>(v);
            stage::<R, 32, 2>(v);
            stage::<R, 32, 1>(v);
            stage::<R, 64, 32>(v);
            stage::<R, 64, 16>(v);
            stage::<R, 64, 8>(v);
            stage::<R, 64, 4>(v);
            stage::<R, 64, 2>(v);
            stage::<R, 64, 1>(v);
            stage::<R, 128, 64>(v);
            stage::<R, 128, 32>(v);
            stage::<R, 128, 16>(v);
            stage::<R, 128, 8>(v);
            stage::<R, 128, 4>(v);
            stage::<R, 128, 2>(v);
            stage::<R, 128, 1>(v);
        }
    }

    /// Sorts the `len` entries of `row` in `R` registers, the lanes past `len` filled with
    /// `u32::MAX` as they are loaded (masked loads read nothing past the list, and no store
    /// of the padding stands between the gather's stores and these loads).
    ///
    /// # Safety
    /// As for [`stage`], `len <= 16 * R`, and `row` holds `len` entries.
    #[inline(always)]
    unsafe fn sort_registers<const R: usize>(row: &mut [u32], len: usize) {
        debug_assert!(len <= WIDE * R, "list does not fit");
        debug_assert!(row.len() >= len, "row shorter than the list");
        // The lanes of register `a` that hold entries of the list.
        let lanes = |a: usize| {
            let held = len.saturating_sub(WIDE * a).min(WIDE);
            ((1u32 << held) - 1) as __mmask16
        };
        // SAFETY: the caller guarantees AVX-512 F and `len` entries. Registers that hold no
        // entry are neither loaded nor stored (their address would lie past the row), and the
        // masked-off lanes of the others are not accessed.
        unsafe {
            let base = row.as_mut_ptr();
            let mut v = [_mm512_set1_epi32(-1); R];
            for (a, value) in v.iter_mut().enumerate() {
                if WIDE * a < len {
                    *value = _mm512_mask_loadu_epi32(*value, lanes(a), base.add(WIDE * a).cast());
                }
            }
            bitonic(&mut v);
            for (a, value) in v.iter().enumerate() {
                if WIDE * a < len {
                    _mm512_mask_storeu_epi32(base.add(WIDE * a).cast(), lanes(a), *value);
                }
            }
        }
    }

    /// Sorts `row[..len]` (9 to 128 entries) ascending.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, `9 <= len <= 128`, and `row` holds `len` entries.
    #[inline(always)]
    pub(super) unsafe fn sort(row: &mut [u32], len: usize) {
        debug_assert!(
            (9..=super::NETWORK_MAX).contains(&len),
            "no 16-lane network for {len} entries"
        );
        // SAFETY: the caller's contract.
        unsafe {
            match len {
                0..=16 => sort_registers::<1>(row, len),
                17..=32 => sort_registers::<2>(row, len),
                33..=64 => sort_registers::<4>(row, len),
                _ => sort_registers::<8>(row, len),
            }
        }
    }
}

/// The body of [`sort_padded`].
///
/// # Safety
/// As for [`stage`].
#[inline(always)]
unsafe fn sort_padded_in(row: &mut [u32], len: usize, scratch: &mut Vec<u32>, avx2: bool) {
    let width = match len {
        0..=1 => return,
        2..=8 => 8,
        9..=16 => 16,
        17..=32 => 32,
        33..=64 => 64,
        65..=NETWORK_MAX => NETWORK_MAX,
        // SAFETY: the caller's contract.
        _ => return unsafe { sort_long(&mut row[..len], scratch, avx2) },
    };
    if row.len() < width {
        // SAFETY: the caller's contract.
        unsafe { sort_short(&mut row[..len], avx2) };
        return;
    }
    row[len..width].fill(u32::MAX);
    // SAFETY: the caller's contract.
    unsafe {
        match width {
            8 => sort_in_registers::<1>(&mut row[..8], avx2),
            16 => sort_in_registers::<2>(&mut row[..16], avx2),
            32 => sort_in_registers::<4>(&mut row[..32], avx2),
            64 => sort_in_registers::<8>(&mut row[..64], avx2),
            _ => sort_in_registers::<16>(&mut row[..NETWORK_MAX], avx2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{avx2_detected, avx512_detected};

    /// The 0-1 principle: a comparator network that sorts every sequence of zeros and ones
    /// sorts every sequence.
    #[test]
    fn sort_8_sorts_every_zero_one_input() {
        for bits in 0u32..256 {
            let mut values: [u32; 8] = std::array::from_fn(|k| bits >> k & 1);
            for (a, b) in SORT_8 {
                if values[a] > values[b] {
                    values.swap(a, b);
                }
            }
            assert!(values.is_sorted(), "input {bits:08b} gave {values:?}");
        }
    }

    /// Every length up to past the network's limit, with random, sorted, reversed and
    /// duplicate-heavy values, against the standard sort; past the network's limit through
    /// the chunked merge sort (one, two and more merge rounds, partial last chunks).
    #[test]
    fn network_sorts_like_std() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut scratch = Vec::new();
        let lengths = (0..=NETWORK_MAX + 5).chain([127, 128, 129, 191, 256, 300, 700]);
        for len in lengths {
            for pattern in 0..5 {
                let list: Vec<u32> = (0..len)
                    .map(|i| match pattern {
                        0 => next() as u32,
                        1 => i as u32,
                        2 => (len - i) as u32,
                        3 => (next() % 3) as u32,
                        _ => u32::MAX - (next() % 2) as u32,
                    })
                    .collect();
                let mut expected = list.clone();
                expected.sort_unstable();
                // The portable form, the AVX2 form and the AVX-512 form where the CPU has them.
                let forms: &[(bool, bool)] = if avx512_detected() {
                    &[(false, false), (true, false), (true, true)]
                } else if avx2_detected() {
                    &[(false, false), (true, false)]
                } else {
                    &[(false, false)]
                };
                for &(avx2, avx512) in forms {
                    let what =
                        format!("length {len}, pattern {pattern}, avx2 {avx2}, avx512 {avx512}");
                    let mut list = list.clone();
                    let mut row = list.clone();
                    row.resize(len.max(NETWORK_MAX) + 8, 7);
                    let mut short = expected.clone();
                    short.reverse();
                    // SAFETY: `avx2` and `avx512` are set only where the CPU has the features.
                    unsafe {
                        sort_short(&mut list, avx2);
                        sort_padded(&mut row, len, &mut scratch, avx2, avx512);
                        sort_padded(&mut short, len, &mut scratch, avx2, avx512);
                    }
                    assert_eq!(list, expected, "{what}");
                    assert_eq!(row[..len], expected[..], "padded, {what}");
                    assert_eq!(short, expected, "unpadded, {what}");
                }
            }
        }
    }
}
