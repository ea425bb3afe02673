//! The 8-lane scans of the detection step and the queries: the pair tests of 8 candidates
//! at a time ([`BlockTest`]), the macro that picks one per kind and kernel, and the scans
//! over a level's sorted columns.

use crate::columns::PointColumns;
use crate::grid::full_neighbourhood;
use crate::real::{LANES, Real};

use super::Level;

/// The pair test of a scan, chosen once per task so that the block loop is monomorphized.
pub(crate) trait BlockTest<T: Real>: Copy {
    /// The hit mask of 8 candidates (their minimum and maximum columns) against the query
    /// values `lo` and `hi`.
    fn mask<const D: usize>(
        self,
        lo: [T; D],
        hi: [T; D],
        min: [&[T; 8]; D],
        max: [&[T; 8]; D],
    ) -> u32;
}

/// The box overlap test, SIMD or scalar.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxTest<const SIMD: bool>;

impl<T: Real, const SIMD: bool> BlockTest<T> for BoxTest<SIMD> {
    #[inline(always)]
    fn mask<const D: usize>(
        self,
        lo: [T; D],
        hi: [T; D],
        min: [&[T; 8]; D],
        max: [&[T; 8]; D],
    ) -> u32 {
        if SIMD {
            T::overlap_mask(lo, hi, min, max)
        } else {
            T::overlap_mask_scalar(lo, hi, min, max)
        }
    }
}

/// The particle test (position in `lo`, radius in `hi[0]`), SIMD or scalar; `true` for the
/// mean rule.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SphereTest<const SIMD: bool>(pub(crate) bool);

impl<T: Real, const SIMD: bool> BlockTest<T> for SphereTest<SIMD> {
    #[inline(always)]
    fn mask<const D: usize>(
        self,
        lo: [T; D],
        hi: [T; D],
        min: [&[T; 8]; D],
        max: [&[T; 8]; D],
    ) -> u32 {
        if SIMD {
            T::sphere_mask(lo, hi[0], min, max[0], self.0)
        } else {
            T::sphere_mask_scalar(lo, hi[0], min, max[0], self.0)
        }
    }
}

/// Evaluates `$body` with `$test` bound to the [`BlockTest`] of `$kind` and `$kernel`.
macro_rules! with_test {
    ($kind:expr, $kernel:expr, |$test:ident| $body:expr) => {
        match ($kind, $kernel) {
            (Kind::Boxes, Kernel::Simd) => {
                let $test = BoxTest::<true>;
                $body
            }
            (Kind::Boxes, Kernel::Scalar) => {
                let $test = BoxTest::<false>;
                $body
            }
            (Kind::Spheres(rule), Kernel::Simd) => {
                let $test = SphereTest::<true>(rule == RadiusRule::Mean);
                $body
            }
            (Kind::Spheres(rule), Kernel::Scalar) => {
                let $test = SphereTest::<false>(rule == RadiusRule::Mean);
                $body
            }
        }
    };
}
pub(crate) use with_test;

/// Calls `hit(q)` for every sorted position `q` in `start..end` of `level` that passes `test`
/// against `lo..=hi` (boxes: overlap; particles: the particle at `lo` with radius `hi[0]`),
/// in ascending order, 8 candidates per kernel call.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // The scan's inputs are all distinct and all needed.
pub(crate) fn scan<T: Real, const D: usize>(
    level: &Level<T, D>,
    test: impl BlockTest<T>,
    lo: [T; D],
    hi: [T; D],
    start: usize,
    end: usize,
    hit: impl FnMut(usize),
) {
    scan_columns(
        ScanColumns::new(&level.min, &level.max),
        test,
        lo,
        hi,
        start,
        end,
        hit,
    );
}

/// Calls `hit(q)` for every sorted position `q` of `coarse` in the 27 buckets (9 in the
/// plane) around the cell of `lo` that passes `test` against `lo..=hi` (thesis Algorithm 4). Finds every
/// object of `coarse` that passes when the queried object and the level's objects are all
/// no larger than the level's cell (so that two corners of a passing pair lie less than one
/// cell apart on every axis).
#[inline(always)]
pub(crate) fn scan_around<T: Real, const D: usize>(
    coarse: &Level<T, D>,
    test: impl BlockTest<T>,
    lo: [T; D],
    hi: [T; D],
    mut hit: impl FnMut(usize),
) {
    let table = &coarse.table;
    let cell = table.coords(lo);
    if !table.may_have_neighbours(cell) {
        return;
    }
    let around = full_neighbourhood(
        &coarse.starts,
        table,
        table.bucket_coords(table.bucket(cell)),
    );
    // The columns are read once for the 27 buckets' ranges (the compiler reloaded them per
    // range when each scan read them: 8.8 % more instructions in a scene's cross detection).
    let columns = ScanColumns::new(&coarse.min, &coarse.max);
    for &(s, e) in around.as_slice() {
        scan_columns(columns, test, lo, hi, s as usize, e as usize, &mut hit);
    }
}

/// The padded minimum and maximum columns of a level or an all-pairs build, read once for
/// the many scans of a box.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScanColumns<'a, T, const D: usize> {
    min: [&'a [T]; D],
    max: [&'a [T]; D],
    /// The objects the columns hold (each column holds at least [`LANES`] values more).
    len: usize,
}

impl<'a, T: Real, const D: usize> ScanColumns<'a, T, D> {
    /// The columns of `min` and `max`, with their padding.
    #[inline(always)]
    pub(crate) fn new(min: &'a PointColumns<T, D>, max: &'a PointColumns<T, D>) -> Self {
        Self {
            min: min.padded(),
            max: max.padded(),
            len: min.len().min(max.len()),
        }
    }
}

/// [`scan`] over explicit minimum and maximum columns.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // The scan's inputs are all distinct and all needed.
pub(crate) fn scan_columns<T: Real, const D: usize>(
    columns: ScanColumns<'_, T, D>,
    test: impl BlockTest<T>,
    lo: [T; D],
    hi: [T; D],
    start: usize,
    end: usize,
    mut hit: impl FnMut(usize),
) {
    let ScanColumns {
        min: min_columns,
        max: max_columns,
        len,
    } = columns;
    debug_assert!(end <= len, "scan past the columns");
    let block = |column: &[T], k: usize| -> &[T; LANES] {
        debug_assert!(k + LANES <= column.len(), "block at {k} past the padding");
        // SAFETY: `k < end <= len`, and padded columns hold `len` values plus at least
        // `LANES` padding values, so `k..k + LANES` lies inside the column.
        unsafe { &*column.as_ptr().add(k).cast::<[T; LANES]>() }
    };
    let mut k = start;
    while k < end {
        let min: [&[T; LANES]; D] = std::array::from_fn(|a| block(min_columns[a], k));
        let max: [&[T; LANES]; D] = std::array::from_fn(|a| block(max_columns[a], k));
        let mut mask = test.mask(lo, hi, min, max);
        let remaining = end - k;
        if remaining < LANES {
            mask &= (1 << remaining) - 1;
        }
        while mask != 0 {
            hit(k + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
        k += LANES;
    }
}
