//! Unit tests of the list passes: buffers, sorting, packing, the choice of pass.

use hhg_testkit::SplitMix64;

use super::gather::{PACK_MIN, RUN_WIDTH, UNSORTED_PROBE, UNSORTED_STREAK, is_ascending};
use super::{ListPass, NeighborLists, UnitBuffer};
use crate::RunTimeDispatch;
use crate::kernel::{Avx2Kernel, Avx512Kernel, ScalarKernel, SimdKernel};
use crate::simd::{Build, COMPILED_FOR_AVX2, COMPILED_FOR_AVX512, avx2_detected, avx512_detected};
use crate::smallsort::NETWORK_MAX;
use crate::{Grid, Kernel};

/// The SIMD kernel packs the candidates of batches of at least `PACK_MIN` points, and
/// only of those; the scalar kernel never packs. (The differential tests compare the
/// lists of both kernels with the oracle; this makes sure they compare the two paths.)
#[test]
fn batches_of_enough_points_pack_their_candidates() {
    let mut rng = SplitMix64::new(5);
    // Enough points that a work unit holds a small part of each bucket's points: random
    // order then takes the general pass.
    let dense: Vec<[f32; 3]> = (0..20_000)
        .map(|_| std::array::from_fn(|_| rng.range(0.0, 10.0) as f32))
        .collect();
    // One point in every third cell of a layer (in reverse cell order), few enough for a
    // dense table (no two cells share a bucket): a bucket's batch, or a run of up to
    // RUN_WIDTH buckets of a row, holds at most 3 points, fewer than PACK_MIN.
    const { assert!(RUN_WIDTH <= 9 && PACK_MIN > 3) };
    let sparse: Vec<[f32; 3]> = (0..100)
        .rev()
        .map(|k| {
            [
                (k % 10) as f32 * 3.0 + 0.5,
                (k / 10) as f32 * 3.0 + 0.5,
                0.5,
            ]
        })
        .collect();
    // The sparse points change bucket at every point in any order: they take the pass
    // for input nearly in cell order.
    for (points, kernel, packs, pass) in [
        (&dense, Kernel::Simd, true, ListPass::General),
        (&dense, Kernel::Scalar, false, ListPass::General),
        (&sparse, Kernel::Simd, false, ListPass::NearCellOrder),
    ] {
        let mut grid = Grid::<f32>::new(1.0).unwrap();
        grid.set_kernel(kernel);
        grid.build(points).unwrap();
        assert_eq!(grid.list_pass(), pass, "{} points", points.len());
        for with_distances in [false, true] {
            let mut lists = NeighborLists::default();
            grid.self_lists(&mut lists, with_distances).unwrap();
            let packed = lists.buffers.iter().any(|buffer| buffer.packed.used)
                || lists.in_order.any_packed();
            assert_eq!(
                packed,
                packs,
                "{} points, {kernel:?}, distances {with_distances}",
                points.len()
            );
        }
    }
}

/// The SIMD kernel runs the widest run-time build that the CPU has, the grid allows
/// and the library was not compiled for; the scalar kernel and the kernel of the widest
/// build never switch.
#[test]
fn the_widest_build_runs_where_the_cpu_has_it() {
    let mut grid = Grid::<f32>::new(1.0).unwrap();
    let avx512 = !COMPILED_FOR_AVX512 && avx512_detected();
    let avx2 = !COMPILED_FOR_AVX2 && avx2_detected();
    let widest = if avx512 {
        Build::Avx512
    } else if avx2 {
        Build::Avx2
    } else {
        Build::AsCompiled
    };
    assert_eq!(grid.run_time_build::<SimdKernel>(), widest);
    assert_eq!(grid.run_time_build::<ScalarKernel>(), Build::AsCompiled);
    assert_eq!(grid.run_time_build::<Avx512Kernel>(), Build::AsCompiled);
    // The AVX2 kernel still lacks the AVX-512 loops.
    let above_avx2 = if avx512_detected() {
        Build::Avx512
    } else {
        Build::AsCompiled
    };
    assert_eq!(grid.run_time_build::<Avx2Kernel>(), above_avx2);
    grid.set_run_time_dispatch(RunTimeDispatch::UpToAvx2);
    let up_to_avx2 = if avx2 { Build::Avx2 } else { Build::AsCompiled };
    assert_eq!(grid.run_time_build::<SimdKernel>(), up_to_avx2);
    assert_eq!(grid.run_time_build::<Avx2Kernel>(), Build::AsCompiled);
    grid.set_run_time_dispatch(RunTimeDispatch::Off);
    assert_eq!(grid.run_time_build::<SimdKernel>(), Build::AsCompiled);
    grid.set_run_time_dispatch(RunTimeDispatch::Widest);
    assert_eq!(grid.run_time_build::<SimdKernel>(), widest);
}

/// Lists that keep failing the check thin the checks out to one in `UNSORTED_PROBE`; an
/// ascending list found by such a probe brings them back; every list comes out sorted
/// whether it was checked or not.
#[test]
fn unsorted_lists_thin_out_the_ascending_checks() {
    const LEN: usize = 40;
    let mut buffer = UnitBuffer::<f32>::default();
    buffer.start(64, usize::MAX);
    let descending: Vec<u32> = (0..LEN as u32).rev().collect();
    let ascending: Vec<u32> = (0..LEN as u32).collect();
    // Each list is gathered, sorted and recorded as the list pass does; returns the
    // streak afterwards.
    let gather = |buffer: &mut UnitBuffer<f32>, list: &[u32]| {
        let at = buffer.filled;
        assert!(buffer.reserve_entries(at + NETWORK_MAX, false));
        buffer.entries[at..at + LEN].copy_from_slice(list);
        // SAFETY: the portable form (no AVX2).
        unsafe { buffer.sort_gathered(at, LEN, NETWORK_MAX, false, false, false) };
        assert_eq!(&buffer.entries[at..at + LEN], &ascending[..]);
        let slot = buffer.lens.len();
        buffer.push_list(slot, LEN);
        buffer.unsorted_streak
    };
    for k in 1..=UNSORTED_STREAK {
        assert_eq!(
            gather(&mut buffer, &descending),
            k,
            "every list is checked at first"
        );
    }
    // A probe that fails lengthens the streak; lists between probes are sorted without
    // a check, even an ascending one, and leave the streak as it is.
    while !buffer.lens.len().is_multiple_of(UNSORTED_PROBE) {
        gather(&mut buffer, &descending);
    }
    let streak = gather(&mut buffer, &descending);
    assert!(streak > UNSORTED_STREAK);
    assert_eq!(gather(&mut buffer, &ascending), streak);
    while !buffer.lens.len().is_multiple_of(UNSORTED_PROBE) {
        assert_eq!(gather(&mut buffer, &descending), streak);
    }
    // The next probe that finds an ascending list ends the streak, and every list is
    // checked again.
    assert_eq!(gather(&mut buffer, &ascending), 0);
    assert_eq!(gather(&mut buffer, &descending), 1);
    assert_eq!(gather(&mut buffer, &ascending), 0);
    // A new unit starts with every list checked.
    for _ in 0..UNSORTED_STREAK {
        gather(&mut buffer, &descending);
    }
    buffer.start(64, usize::MAX);
    assert_eq!(buffer.unsorted_streak, 0);
}

/// The 8-lane check agrees with the standard one on every length up to three vectors and
/// a descent at every place, inside a vector, across vectors and in the tail.
#[test]
fn is_ascending_finds_every_descent() {
    for len in 0..=26u32 {
        let ascending: Vec<u32> = (0..len).map(|k| 3 * k).collect();
        assert!(is_ascending(&ascending), "length {len}");
        for at in 1..len as usize {
            let mut list = ascending.clone();
            list.swap(at - 1, at);
            assert!(!is_ascending(&list), "length {len}, descent at {at}");
            let mut equal = ascending.clone();
            equal[at] = equal[at - 1];
            assert!(is_ascending(&equal), "length {len}, repeat at {at}");
        }
    }
    let with_max = [0, 5, u32::MAX, 7, 8, 9, 10, 11, 12, 13];
    assert!(!is_ascending(&with_max));
    assert!(is_ascending(&[1, 2, 3, 4, 5, 6, 7, 8, u32::MAX]));
}
