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
pub fn counting_sort(
    keys: &[u32],
    buckets: usize,
    starts: &mut Vec<u32>,
    order: &mut Vec<u32>,
    scratch: &mut SortScratch,
) {
    let n = keys.len();
    if buckets == 0 {
        // No bucket can hold a key, so there is none: empty starts and order.
        assert!(n == 0, "counting_sort: {n} keys but no bucket");
        starts.clear();
        starts.push(0);
        order.clear();
        return;
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
}
