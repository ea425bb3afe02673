//! Property-based tests (proptest, with shrinking) of hhg-xor's fixed-radius schemes against
//! brute force: `XorScheme` and `PoucholScheme` on small random scenes from hhg-testkit's
//! strategies, with table sizes down to one bucket, both kernels and 1 and 3 threads.
//!
//! Cases: `xor_f32`, `xor_f64`, `pouchol_f32` and `pouchol_f64` 256 each.

use crate::common;

use common::{Expected, check_scheme};
use hhg_core::{FixedRadiusScheme, Kernel, NeighborLists, PairList};
use hhg_testkit::strategies::{Cloud, cloud};
use hhg_testkit::{Scene, TestReal, assert_same_seq, in_pool};
use hhg_xor::{Levels, PoucholScheme, Primes, TableSize, XorScheme};
use proptest::prelude::*;
use proptest::sample::select;

/// Table sizes: the default, and tables so small that most cells share a bucket.
fn table_size() -> impl Strategy<Value = TableSize> {
    select(vec![
        TableSize::PerPoint(2),
        TableSize::Fixed(8),
        TableSize::Fixed(1),
    ])
}

/// Checks a scheme made by `make(kernel)` against the oracle, and that both kernels and 1
/// and 3 threads give the same pairs in the same order and the same lists.
fn check<T: TestReal, S: FixedRadiusScheme<T>>(
    cloud: &Cloud,
    make: impl Fn(T, Kernel) -> S + Sync,
) {
    let scene = Scene::<T>::new("proptest scene", &cloud.points, cloud.radius);
    let expected = Expected::of(11, &scene);
    let mut reference = None;
    for kernel in [Kernel::Simd, Kernel::Scalar] {
        for threads in [1, 3] {
            let got = in_pool(threads, || {
                let mut scheme = make(scene.radius, kernel);
                let what = format!("{} ({kernel:?}, {threads} threads)", scheme.name());
                check_scheme(&what, &mut scheme, &scene, &expected);
                let mut pairs = PairList::default();
                scheme.pairs(&mut pairs).unwrap();
                let mut lists = NeighborLists::default();
                scheme.neighbor_lists(&mut lists).unwrap();
                (pairs.pairs().to_vec(), lists.indices().to_vec())
            });
            match &reference {
                None => reference = Some(got),
                Some((pairs, lists)) => {
                    let what = format!("{kernel:?} with {threads} threads against SIMD with 1");
                    assert_same_seq(&format!("{what}: pairs"), &got.0, pairs);
                    assert_same_seq(&format!("{what}: lists"), &got.1, lists);
                }
            }
        }
    }
}

fn xor<T: TestReal>(cloud: &Cloud, primes: Primes, size: TableSize) {
    check::<T, _>(cloud, |radius, kernel| {
        let mut scheme = XorScheme::with_table_size(radius, primes, size).unwrap();
        scheme.set_kernel(kernel);
        scheme
    });
}

fn pouchol<T: TestReal>(cloud: &Cloud, primes: Primes, size: TableSize, levels: Levels) {
    check::<T, _>(cloud, |radius, kernel| {
        let mut scheme = PoucholScheme::with_config(radius, primes, size, levels).unwrap();
        scheme.set_kernel(kernel);
        scheme
    });
}

fn primes() -> impl Strategy<Value = Primes> {
    select(vec![Primes::Teschner, Primes::Mueller])
}

fn levels() -> impl Strategy<Value = Levels> {
    select(vec![Levels::Auto, Levels::Fixed(0), Levels::Fixed(3)])
}

proptest! {
    #![proptest_config(hhg_testkit::strategies::config(256))]

    #[test]
    fn xor_f32(cloud in cloud(false), primes in primes(), size in table_size()) {
        xor::<f32>(&cloud, primes, size);
    }

    #[test]
    fn xor_f64(cloud in cloud(true), primes in primes(), size in table_size()) {
        xor::<f64>(&cloud, primes, size);
    }

    #[test]
    fn pouchol_f32(cloud in cloud(false), primes in primes(), size in table_size(), levels in levels()) {
        pouchol::<f32>(&cloud, primes, size, levels);
    }

    #[test]
    fn pouchol_f64(cloud in cloud(true), primes in primes(), size in table_size(), levels in levels()) {
        pouchol::<f64>(&cloud, primes, size, levels);
    }
}
