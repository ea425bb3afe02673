//! Run-time dispatch to an AVX2 build of the list pass, and the 8-lane permutes and
//! unsigned minima it needs, which `wide` emulates lane by lane below AVX2.
//!
//! `wide` chooses its instructions when the crate is compiled: for the default x86_64
//! target (SSE2) its `u32x8::shuffle` is a loop over the lanes, and the list pass (one
//! permute per point and block of 8 candidates, four per packed block, dozens per sorted
//! list) took 3-4x as long as with `-C target-cpu=native`. The kernels therefore take an
//! `avx2` flag, a constant in each monomorphized copy: where it is set they permute and
//! compare with AVX2 instructions, and the list pass runs each work unit through a function
//! compiled with AVX2 enabled ([`avx2_build`]), entered only when the CPU reports those
//! features. A build for a CPU with AVX2 sets the flag everywhere and never dispatches.
//!
//! Where the CPU has AVX-512, the same passes run through a third build
//! ([`avx512_build`]) whose gather and packing take 16 `f32` or 8 `f64` candidates per
//! block and compress with `vpcompressd` (see `kernel::avx512`), and whose lists sort on
//! 16-lane registers (`smallsort::wide16`); a library compiled for AVX-512 uses those
//! loops everywhere, and one compiled for AVX2 only still switches to them.

use wide::u32x8;

/// Compiles the function it wraps with the target features of the run-time AVX2 build:
/// AVX2 with the bit manipulation and counting instructions that come with it on every
/// AVX2 CPU (the features [`avx2_detected`] asks for). No FMA: the predicate is evaluated
/// without fused multiply-add, and Rust never fuses by itself. Such a function may run only
/// where [`avx2_detected`] holds.
macro_rules! avx2_build {
    ($function:item) => {
        #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
        $function
    };
}
pub(crate) use avx2_build;

/// Compiles the function it wraps with the target features of the run-time AVX-512
/// build: those of [`avx2_build`] and AVX-512 F, VL, BW and DQ (the features
/// [`avx512_detected`] asks for). Still no FMA. Such a function may run only where
/// [`avx512_detected`] holds.
macro_rules! avx512_build {
    ($function:item) => {
        #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512vl,avx512bw,avx512dq")]
        $function
    };
}
pub(crate) use avx512_build;

/// Which build of the list pass's loops runs a pass (see
/// [`Grid::run_time_build`](crate::Grid::run_time_build)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Build {
    /// The loops as the library was compiled, with the pass's own kernel.
    AsCompiled,
    /// The run-time AVX2 build ([`avx2_build`]).
    Avx2,
    /// The run-time AVX-512 build ([`avx512_build`]).
    Avx512,
}

/// Whether the library was compiled for AVX2, so that `wide` and every kernel already use
/// it and nothing dispatches.
pub(crate) const COMPILED_FOR_AVX2: bool = cfg!(all(
    target_arch = "x86_64",
    target_feature = "avx2",
    target_feature = "bmi1",
    target_feature = "bmi2",
    target_feature = "lzcnt",
    target_feature = "popcnt"
));

/// Whether the library was compiled for AVX-512 as [`avx512_build`] enables it, so that
/// the kernels use the 16-lane loops without dispatching.
pub(crate) const COMPILED_FOR_AVX512: bool = COMPILED_FOR_AVX2
    && cfg!(all(
        target_arch = "x86_64",
        target_feature = "avx512f",
        target_feature = "avx512vl",
        target_feature = "avx512bw",
        target_feature = "avx512dq"
    ));

/// Whether this CPU runs the AVX-512 build: it reports every feature [`avx512_build`]
/// enables.
#[inline]
pub(crate) fn avx512_detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        avx2_detected()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU runs the AVX2 build: it reports every feature [`avx2_build`] enables
/// (`std` caches the answer after the first query).
#[inline]
pub(crate) fn avx2_detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Lane `k` of the result is lane `indices[k] & 7` of `values` (indices are below 8
/// wherever this is used): one `vpermd` with `avx2`, `wide`'s shuffle otherwise.
///
/// # Safety
/// With `avx2`, the CPU has AVX2 (the code runs in an AVX2 build, or after
/// [`avx2_detected`]).
#[inline(always)]
pub(crate) unsafe fn permute8(avx2: bool, values: u32x8, indices: u32x8) -> u32x8 {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        use std::arch::x86_64::{__m256i, _mm256_permutevar8x32_epi32};
        debug_assert!(avx2_detected(), "AVX2 kernel on a CPU without AVX2");
        let (values, indices): (__m256i, __m256i) =
            (bytemuck::cast(values), bytemuck::cast(indices));
        // SAFETY: the caller guarantees that the CPU has AVX2.
        return bytemuck::cast(unsafe { _mm256_permutevar8x32_epi32(values, indices) });
    }
    let _ = avx2;
    values.shuffle(indices)
}

/// The lane-wise unsigned minimum and maximum of `a` and `b`: `vpminud` and `vpmaxud` with
/// `avx2`, `wide`'s (emulated below SSE4.1) otherwise.
///
/// # Safety
/// As for [`permute8`].
#[inline(always)]
pub(crate) unsafe fn min_max8(avx2: bool, a: u32x8, b: u32x8) -> (u32x8, u32x8) {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        use std::arch::x86_64::{__m256i, _mm256_max_epu32, _mm256_min_epu32};
        debug_assert!(avx2_detected(), "AVX2 kernel on a CPU without AVX2");
        let (a, b): (__m256i, __m256i) = (bytemuck::cast(a), bytemuck::cast(b));
        // SAFETY: the caller guarantees that the CPU has AVX2.
        let (low, high) = unsafe { (_mm256_min_epu32(a, b), _mm256_max_epu32(a, b)) };
        return (bytemuck::cast(low), bytemuck::cast(high));
    }
    let _ = avx2;
    (a.min(b), a.max(b))
}

#[cfg(test)]
mod tests {
    use wide::u32x8;

    use super::{avx2_detected, min_max8, permute8};

    /// Both forms of each primitive agree on every index pattern of a rotation and on
    /// values across the sign bit (an unsigned comparison done as signed would fail).
    #[test]
    fn avx2_and_portable_primitives_agree() {
        let values = u32x8::new([0, 1, u32::MAX, 1 << 31, 7, (1 << 31) - 1, 42, 3]);
        let others = u32x8::new([1, 0, 5, (1 << 31) + 1, 7, 1 << 31, 41, u32::MAX]);
        let forms: &[bool] = if avx2_detected() {
            &[false, true]
        } else {
            &[false]
        };
        for &avx2 in forms {
            for shift in 0..8u32 {
                let indices = u32x8::new(std::array::from_fn(|k| (k as u32 + shift) % 8));
                // SAFETY: `avx2` is set only when the CPU reports AVX2.
                let permuted = unsafe { permute8(avx2, values, indices) };
                let expected: [u32; 8] =
                    std::array::from_fn(|k| values.to_array()[(k + shift as usize) % 8]);
                assert_eq!(permuted.to_array(), expected, "avx2 {avx2}, shift {shift}");
            }
            // SAFETY: as above.
            let (low, high) = unsafe { min_max8(avx2, values, others) };
            let (a, b) = (values.to_array(), others.to_array());
            assert_eq!(low.to_array(), std::array::from_fn(|k| a[k].min(b[k])));
            assert_eq!(high.to_array(), std::array::from_fn(|k| a[k].max(b[k])));
        }
    }
}
