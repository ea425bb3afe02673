//! The inner loops: the points of one cell run tested against a contiguous range of sorted
//! candidates, 8 lanes at a time (each block of 8 candidates loaded once for all the points
//! of the run), with the SIMD kernels of hhg-core or their scalar references.

use hhg_core::Real;
use hhg_core::building_blocks::LANES;

use crate::table::Buckets;

/// A distance-mask kernel: hhg-core's SIMD kernels or their scalar references (identical
/// results by construction and by test).
pub(crate) trait MaskKernel {
    /// 8 loaded candidates.
    type Block<T: Real>: Copy;

    /// Loads 8 candidates.
    fn load<T: Real>(lanes: [&[T; 8]; 3]) -> Self::Block<T>;

    /// Bit `k` set when candidate `k` is within `sqrt(r2)` of `p`.
    fn within<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32;

    /// Bit `k` set when particle `k` (radius `radii[k]`) and the particle at `p` with radius
    /// `r` are neighbours by the rule `d <= max(r, radii[k])`.
    fn spheres<T: Real>(p: [T; 3], r: T, lanes: [&[T; 8]; 3], radii: &[T; 8]) -> u32;

    /// Bit `k` set when point `k` lies in the closed box `lo..=hi`.
    fn inside<T: Real>(lo: [T; 3], hi: [T; 3], lanes: [&[T; 8]; 3]) -> u32;
}

/// hhg-core's 8-lane `wide` kernels ([`Real::block_mask`], [`Real::sphere_mask`]).
pub(crate) struct SimdKernel;

/// The one-lane-at-a-time references ([`Real::within_mask_scalar`],
/// [`Real::sphere_mask_scalar`]).
pub(crate) struct ScalarKernel;

impl MaskKernel for SimdKernel {
    type Block<T: Real> = T::Block;

    #[inline(always)]
    fn load<T: Real>(lanes: [&[T; 8]; 3]) -> Self::Block<T> {
        T::load_block(lanes[0], lanes[1], lanes[2])
    }

    #[inline(always)]
    fn within<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32 {
        T::block_mask(p, block, r2)
    }

    #[inline(always)]
    fn spheres<T: Real>(p: [T; 3], r: T, lanes: [&[T; 8]; 3], radii: &[T; 8]) -> u32 {
        T::sphere_mask(p, r, lanes, radii, false)
    }

    #[inline(always)]
    fn inside<T: Real>(lo: [T; 3], hi: [T; 3], lanes: [&[T; 8]; 3]) -> u32 {
        T::overlap_mask(lo, hi, lanes, lanes)
    }
}

impl MaskKernel for ScalarKernel {
    type Block<T: Real> = [[T; 8]; 3];

    #[inline(always)]
    fn load<T: Real>(lanes: [&[T; 8]; 3]) -> Self::Block<T> {
        lanes.map(|l| *l)
    }

    #[inline(always)]
    fn within<T: Real>(p: [T; 3], block: &Self::Block<T>, r2: T) -> u32 {
        T::within_mask_scalar(p, &block[0], &block[1], &block[2], r2)
    }

    #[inline(always)]
    fn spheres<T: Real>(p: [T; 3], r: T, lanes: [&[T; 8]; 3], radii: &[T; 8]) -> u32 {
        T::sphere_mask_scalar(p, r, lanes, radii, false)
    }

    #[inline(always)]
    fn inside<T: Real>(lo: [T; 3], hi: [T; 3], lanes: [&[T; 8]; 3]) -> u32 {
        T::overlap_mask_scalar(lo, hi, lanes, lanes)
    }
}

/// The lanes `base..base + 8` that lie below `end`.
#[inline(always)]
fn valid_lanes(base: usize, end: usize) -> u32 {
    if end - base < LANES {
        (1u32 << (end - base)) - 1
    } else {
        (1u32 << LANES) - 1
    }
}

/// The lanes of the block at `base` whose position is after `p`.
#[inline(always)]
fn lanes_after(p: usize, base: usize) -> u32 {
    if p < base {
        (1u32 << LANES) - 1
    } else {
        // p - base < LANES here: the caller stops at the block's last lane.
        ((1u32 << LANES) - 1) & !((2u32 << (p - base)) - 1)
    }
}

/// Calls `emit(p, q)` for each hit `q` of `mask`, the hits of point `p` in the block at `base`.
#[inline(always)]
fn for_each_hit(p: u32, base: u32, mut mask: u32, emit: &mut impl FnMut(u32, u32)) {
    while mask != 0 {
        emit(p, base + mask.trailing_zeros());
        mask &= mask - 1;
    }
}

/// Tests the points of `run` (sorted positions of `table`) against the candidates
/// `cand` (sorted positions of the same table), calling `emit(p, q)` for every pair within
/// `sqrt(r2)`: block by block of 8 candidates, each block against every point of the run.
/// With `triangle` (`cand == run`), only the candidates after each point are tested.
#[inline(always)]
pub(crate) fn within_run<T: Real, K: MaskKernel>(
    table: &Buckets<T>,
    r2: T,
    run: (u32, u32),
    cand: (u32, u32),
    triangle: bool,
    emit: &mut impl FnMut(u32, u32),
) {
    let (cs, ce) = (cand.0 as usize, cand.1 as usize);
    let mut base = cs;
    while base < ce {
        let block = K::load(table.lanes(base));
        let valid = valid_lanes(base, ce);
        let last = if triangle {
            (run.1 as usize).min(base + LANES)
        } else {
            run.1 as usize
        };
        for p in run.0 as usize..last {
            let mut mask = K::within(table.sorted.point(p), &block, r2) & valid;
            if triangle {
                mask &= lanes_after(p, base);
            }
            for_each_hit(p as u32, base as u32, mask, emit);
        }
        base += LANES;
    }
}

/// Tests the points at sorted positions `query.0..query.1` (of a table whose sorted columns
/// are `search` with radii `search_radii`) against the candidates `cand` of `table` (radii
/// `radii`), by the rule `d <= max(ri, rj)`, calling `emit(p, q)` for every neighbour pair;
/// with `triangle` (same table, `cand == query`), only the candidates after each point.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // Two tables with their radii and two ranges.
pub(crate) fn spheres_run<T: Real, K: MaskKernel>(
    search: &Buckets<T>,
    search_radii: &[T],
    query: (u32, u32),
    table: &Buckets<T>,
    radii: &[T],
    cand: (u32, u32),
    triangle: bool,
    emit: &mut impl FnMut(u32, u32),
) {
    let (cs, ce) = (cand.0 as usize, cand.1 as usize);
    let mut base = cs;
    while base < ce {
        let lanes = table.lanes(base);
        let block_radii: &[T; 8] = radii[base..base + LANES].try_into().unwrap();
        let valid = valid_lanes(base, ce);
        let last = if triangle {
            (query.1 as usize).min(base + LANES)
        } else {
            query.1 as usize
        };
        for p in query.0 as usize..last {
            let point = search.sorted.point(p);
            let mut mask = K::spheres(point, search_radii[p], lanes, block_radii) & valid;
            if triangle {
                mask &= lanes_after(p, base);
            }
            for_each_hit(p as u32, base as u32, mask, emit);
        }
        base += LANES;
    }
}

/// Calls `emit(q)` for every candidate of `cand` (sorted positions of `table`) within
/// `sqrt(r2)` of `p`.
#[inline(always)]
pub(crate) fn within_point<T: Real, K: MaskKernel>(
    table: &Buckets<T>,
    r2: T,
    p: [T; 3],
    cand: (u32, u32),
    emit: &mut impl FnMut(u32),
) {
    let (cs, ce) = (cand.0 as usize, cand.1 as usize);
    let mut base = cs;
    while base < ce {
        let mut mask = K::within(p, &K::load(table.lanes(base)), r2) & valid_lanes(base, ce);
        while mask != 0 {
            emit(base as u32 + mask.trailing_zeros());
            mask &= mask - 1;
        }
        base += LANES;
    }
}

/// Appends the caller's index of every point of the runs `runs` (sorted positions of
/// `table`) within `sqrt(r2)` of the query point `p`.
#[inline(always)]
pub(crate) fn query_runs<T: Real, K: MaskKernel>(
    table: &Buckets<T>,
    r2: T,
    p: [T; 3],
    runs: &[(u32, u32)],
    out: &mut Vec<u32>,
) {
    for &run in runs {
        within_point::<T, K>(table, r2, p, run, &mut |q| {
            out.push(table.order[q as usize])
        });
    }
}

/// Calls `emit(q)` for every point of `cand` (sorted positions of `table`) inside the closed
/// box `lo..=hi`.
#[inline(always)]
pub(crate) fn inside_box<T: Real, K: MaskKernel>(
    table: &Buckets<T>,
    lo: [T; 3],
    hi: [T; 3],
    cand: (u32, u32),
    emit: &mut impl FnMut(u32),
) {
    let (cs, ce) = (cand.0 as usize, cand.1 as usize);
    let mut base = cs;
    while base < ce {
        let mut mask = K::inside(lo, hi, table.lanes(base)) & valid_lanes(base, ce);
        while mask != 0 {
            emit(base as u32 + mask.trailing_zeros());
            mask &= mask - 1;
        }
        base += LANES;
    }
}

/// Calls `emit(q)` for every particle of `cand` (sorted positions of `table`, radii `radii`)
/// whose radius reaches `p`: `d <= max(0, rq)`, the rule with a query of radius 0.
#[inline(always)]
pub(crate) fn spheres_point<T: Real, K: MaskKernel>(
    table: &Buckets<T>,
    radii: &[T],
    p: [T; 3],
    cand: (u32, u32),
    emit: &mut impl FnMut(u32),
) {
    let (cs, ce) = (cand.0 as usize, cand.1 as usize);
    let mut base = cs;
    while base < ce {
        let block_radii: &[T; 8] = radii[base..base + LANES].try_into().unwrap();
        let mut mask =
            K::spheres(p, T::default(), table.lanes(base), block_radii) & valid_lanes(base, ce);
        while mask != 0 {
            emit(base as u32 + mask.trailing_zeros());
            mask &= mask - 1;
        }
        base += LANES;
    }
}
