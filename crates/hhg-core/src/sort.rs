//! The parallel, stable counting sort that orders points by bucket.

use rayon::prelude::*;

use crate::parallel::{DisjointSlice, exclusive_scan};

/// Fewest points per part of the sort: below this a part's histogram costs more than the
/// points it sorts, so small inputs run in one part.
const MIN_PART: usize = 1 << 15;

/// Buckets per rayon task when turning histograms into cursors.
const CURSOR_BLOCK: usize = 1 << 14;

/// Reusable buffers of the counting sort.
#[derive(Debug, Default)]
pub struct SortScratch {
    /// One histogram row per part; after the scan, each part's write cursors.
    cursors: Vec<u32>,
    /// Block totals of the prefix sum.
    scan: Vec<u32>,
}

impl SortScratch {
    /// The bytes the scratch buffers hold.
    pub(crate) fn heap_bytes(&self) -> usize {
        4 * (self.cursors.capacity() + self.scan.capacity())
    }
}

/// Sorts point indices by `keys` (stable) into `order`, and writes the bucket starts:
/// the points of bucket `b` are `order[starts[b]..starts[b + 1]]`, ascending.
///
/// The input is cut into one part per thread; each part counts its keys, a prefix sum
/// over (bucket, part) gives every part its write cursors, and the parts scatter in
/// parallel. A stable sort has one result, so the output does not depend on the thread count.
///
/// Returns whether `order` is the identity, which it is exactly when the keys already
/// ascend (points given in cell order).
pub fn counting_sort(
    keys: &[u32],
    buckets: usize,
    starts: &mut Vec<u32>,
    order: &mut Vec<u32>,
    scratch: &mut SortScratch,
) -> bool {
    let n = keys.len();
    if buckets == 0 {
        // No bucket can hold a key, so there is none: empty starts and order.
        assert!(n == 0, "counting_sort: {n} keys but no bucket");
        starts.clear();
        starts.push(0);
        order.clear();
        return true;
    }
    if n > 0 && keys.par_windows(2).all(|pair| pair[0] <= pair[1]) {
        identity_sort(keys, buckets, starts, order);
        return true;
    }
    let parts = rayon::current_num_threads()
        .min(n.div_ceil(MIN_PART))
        .max(1);
    let part_len = n.div_ceil(parts).max(1);
    let parts = n.div_ceil(part_len).max(1);

    let cursors = &mut scratch.cursors;
    cursors.resize(parts * buckets, 0);
    cursors
        .par_chunks_mut(buckets)
        .zip(keys.par_chunks(part_len))
        .for_each(|(histogram, keys)| {
            histogram.fill(0);
            for &key in keys {
                histogram[key as usize] += 1;
            }
        });
    if n == 0 {
        cursors.fill(0);
    }

    // Bucket starts: the sum over parts, scanned.
    starts.resize(buckets + 1, 0);
    starts[..buckets]
        .par_iter_mut()
        .enumerate()
        .for_each(|(b, start)| *start = (0..parts).map(|p| cursors[p * buckets + b]).sum());
    starts[buckets] = 0;
    let total = exclusive_scan(&mut starts[..buckets], &mut scratch.scan);
    starts[buckets] = total;
    debug_assert_eq!(total as usize, n);

    // Each part's cursor in bucket b: the bucket start plus the counts of earlier parts.
    let starts_ref = &starts[..buckets];
    let cursors_shared = DisjointSlice::new(cursors.as_mut_slice());
    starts_ref
        .par_chunks(CURSOR_BLOCK)
        .enumerate()
        .for_each(|(block, block_starts)| {
            for (offset, &start) in block_starts.iter().enumerate() {
                let b = block * CURSOR_BLOCK + offset;
                let mut running = start;
                for p in 0..parts {
                    // SAFETY: bucket b of every part belongs to this block's task alone, and
                    // p * buckets + b < parts * buckets, the slice's length.
                    let slot = unsafe { cursors_shared.range_mut(p * buckets + b, 1) };
                    let count = slot[0];
                    slot[0] = running;
                    running += count;
                }
            }
        });

    order.resize(n, 0);
    let order_shared = DisjointSlice::new(order.as_mut_slice());
    cursors
        .par_chunks_mut(buckets)
        .zip(keys.par_chunks(part_len))
        .enumerate()
        .for_each(|(part, (cursor, keys))| {
            let base = part * part_len;
            for (k, &key) in keys.iter().enumerate() {
                let slot = &mut cursor[key as usize];
                // SAFETY: the cursors of all parts and buckets partition 0..n, each cursor
                // advances only inside its own (bucket, part) range, so every position is
                // written by exactly one task, once; positions are < n = order.len().
                unsafe { order_shared.write(*slot as usize, (base + k) as u32) };
                *slot += 1;
            }
        });
    // The keys did not ascend, so the order is the identity only if there are none.
    n == 0
}

/// The counting sort of keys that already ascend (points given in cell order, the steady
/// state of a solver that reorders its particles): the order is the identity, and bucket
/// `b` starts at the first position whose key reaches `b`. No histogram, no scatter: at 1M
/// points in a hashed table of 2M buckets this is a few reads and writes of each array
/// instead of four passes over a histogram per thread.
fn identity_sort(keys: &[u32], buckets: usize, starts: &mut Vec<u32>, order: &mut Vec<u32>) {
    let n = keys.len();
    debug_assert!(n > 0 && keys.windows(2).all(|pair| pair[0] <= pair[1]));
    assert!(
        (keys[n - 1] as usize) < buckets,
        "counting_sort: key {} but {buckets} buckets",
        keys[n - 1]
    );
    order.resize(n, 0);
    order
        .par_chunks_mut(CURSOR_BLOCK)
        .enumerate()
        .for_each(|(block, chunk)| {
            for (k, slot) in chunk.iter_mut().enumerate() {
                *slot = (block * CURSOR_BLOCK + k) as u32;
            }
        });
    starts.resize(buckets + 1, 0);
    let last = keys[n - 1] as usize;
    // The buckets after the last key start (empty) at the end.
    starts[last + 1..]
        .par_iter_mut()
        .for_each(|start| *start = n as u32);
    let shared = DisjointSlice::new(&mut starts[..=last]);
    (0..n)
        .into_par_iter()
        .with_min_len(CURSOR_BLOCK)
        .for_each(|k| {
            // Position k starts every bucket its key passes over: those after the previous key
            // (all from 0 for the first) up to its own.
            let from = if k == 0 { 0 } else { keys[k - 1] as usize + 1 };
            for bucket in from..=keys[k] as usize {
                // SAFETY: the keys ascend, so the ranges `from..=keys[k]` of distinct
                // positions are disjoint, and every bucket up to `last` lies in one of them.
                unsafe { shared.write(bucket, k as u32) };
            }
        });
}

#[cfg(test)]
mod tests {
    use super::{SortScratch, counting_sort};

    /// The stable order and bucket starts, the slow and obvious way.
    fn reference(keys: &[u32], buckets: usize) -> (Vec<u32>, Vec<u32>) {
        let mut order: Vec<u32> = (0..keys.len() as u32).collect();
        order.sort_by_key(|&i| keys[i as usize]);
        let starts = (0..=buckets)
            .map(|b| keys.iter().filter(|&&k| (k as usize) < b).count() as u32)
            .collect();
        (order, starts)
    }

    /// Keys in random order and the same keys ascending (the shortcut that skips the
    /// histogram) give the reference order and starts: gaps, repeats, empty leading and
    /// trailing buckets, one key, and more keys than one part of the parallel sort holds.
    #[test]
    fn sorts_random_and_ascending_keys() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let cases: [(usize, usize); 6] = [
            (1, 1),
            (1, 9),
            (7, 3),
            (100, 1000),
            (5000, 40),
            (70_000, 300),
        ];
        for (n, buckets) in cases {
            let random: Vec<u32> = (0..n).map(|_| (next() % buckets as u64) as u32).collect();
            let mut ascending = random.clone();
            ascending.sort_unstable();
            let same = vec![(buckets / 2) as u32; n];
            for keys in [&random, &ascending, &same] {
                let (order_want, starts_want) = reference(keys, buckets);
                for threads in [1, 4] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let (mut starts, mut order) = (vec![7; 3], vec![9; 5]);
                    let mut scratch = SortScratch::default();
                    let identity = pool.install(|| {
                        counting_sort(keys, buckets, &mut starts, &mut order, &mut scratch)
                    });
                    let what = format!("{n} keys, {buckets} buckets, {threads} threads");
                    assert_eq!(identity, keys.is_sorted(), "{what}: identity reported");
                    assert_eq!(order, order_want, "{what}: order");
                    assert_eq!(starts, starts_want, "{what}: starts");
                }
            }
        }
    }
}
