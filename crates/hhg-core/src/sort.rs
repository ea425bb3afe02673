//! The parallel, stable counting sort that orders points by bucket, and the cut of its buckets
//! into work units.

use rayon::prelude::*;

use crate::parallel::DisjointSlice;

/// Fewest points per part of the sort: below this a part's histogram costs more than the
/// points it sorts, so small inputs run in one part.
const MIN_PART: usize = 1 << 15;

/// Buckets per rayon task when turning histograms into cursors.
const CURSOR_BLOCK: usize = 1 << 14;

/// Tables with at least this many buckets sort in two passes (see [`grouped_sort`]): one
/// histogram row per thread over all buckets (2 MiB and more) no longer fits in the cache,
/// so nearly every count and every cursor is a miss. Measured at 1M points: 2M buckets
/// 18-22 -> 8 ms, 512k buckets about 1.5 ms faster on two threads and equal on one, 256k
/// buckets (a 1 MiB row) 6-7 -> 10 ms on one thread, so it keeps the single pass.
const GROUPED_MIN_BUCKETS: usize = 1 << 19;

/// Bits of a key below its group in [`grouped_sort`]: groups of 1024 buckets, whose
/// histogram (4 KiB) stays in the first-level cache.
const GROUP_BITS: u32 = 10;

/// Reusable buffers of the counting sort.
#[derive(Debug, Default)]
pub struct SortScratch {
    /// One histogram row per part; after the scan, each part's write cursors.
    cursors: Vec<u32>,
    /// The start of each block of buckets when the counts become cursors.
    scan: Vec<u32>,
    /// The points in group order between the two passes of [`grouped_sort`]: each point's
    /// bucket within its group above its index.
    grouped: Vec<u64>,
    /// The start of each group in `grouped`, and the end.
    group_starts: Vec<u32>,
}

impl SortScratch {
    /// The bytes the scratch buffers hold.
    pub(crate) fn heap_bytes(&self) -> usize {
        4 * (self.cursors.capacity() + self.scan.capacity() + self.group_starts.capacity())
            + 8 * self.grouped.capacity()
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
///
/// # Panics
///
/// When a key is not below `buckets` (the caller computes keys as bucket numbers, so that
/// is a bug of the caller's). Every path (one bucket table or two passes by group, keys in
/// any order or ascending) checks every key the same way, and the panic names the key and
/// its position.
pub fn counting_sort(
    keys: &[u32],
    buckets: usize,
    starts: &mut Vec<u32>,
    order: &mut Vec<u32>,
    scratch: &mut SortScratch,
) -> bool {
    counting_sort_mapped(keys, buckets, starts, order, scratch, false, |position| {
        position as u32
    })
}

/// The neighbour lists of the undirected pairs `pairs` over `buckets` objects in CSR form:
/// after the call, `partners[starts[i]..starts[i + 1]]` holds every object paired with `i`
/// (in no particular order). One counting sort of the pairs' `2 * pairs.len()` ends by
/// object, writing each end's partner directly, so neither the sort keys nor the order are
/// materialized. Panics like [`counting_sort`] on an index not below `buckets`.
pub(crate) fn pair_partners(
    pairs: &[[u32; 2]],
    buckets: usize,
    starts: &mut Vec<u32>,
    partners: &mut Vec<u32>,
    scratch: &mut SortScratch,
) {
    let ends: &[u32] = bytemuck::cast_slice(pairs);
    // The ends of pair `k` are entries `2k` and `2k + 1`, so each one's partner is the entry
    // whose position differs in the lowest bit.
    counting_sort_mapped(ends, buckets, starts, partners, scratch, true, |position| {
        ends[position ^ 1]
    });
}

/// [`counting_sort`] writing `value(position)` where it writes `position` into the order;
/// returns whether the keys ascended (the order was the identity). With `pair_ends`, the
/// keys are the ends of pairs (`2k` and `2k + 1` of pair `k`) and `value` gives each end's
/// partner: the parts are then cut between pairs, and the one-pass scatter reads each pair
/// once for both its ends instead of looking every partner up.
fn counting_sort_mapped(
    keys: &[u32],
    buckets: usize,
    starts: &mut Vec<u32>,
    order: &mut Vec<u32>,
    scratch: &mut SortScratch,
    pair_ends: bool,
    value: impl Fn(usize) -> u32 + Sync,
) -> bool {
    let n = keys.len();
    if buckets == 0 {
        // No bucket can hold a key, so there is none: empty starts and order.
        if let Some(&key) = keys.first() {
            key_out_of_range(0, key, buckets);
        }
        starts.clear();
        starts.push(0);
        order.clear();
        return true;
    }
    if n > 0 && keys_ascend(keys) {
        identity_sort(keys, buckets, starts, order, value);
        return true;
    }
    let parts = rayon::current_num_threads()
        .min(n.div_ceil(MIN_PART))
        .max(1);
    let mut part_len = n.div_ceil(parts).max(1);
    if pair_ends {
        debug_assert!(n.is_multiple_of(2), "pair ends come two by two");
        part_len = part_len.next_multiple_of(2);
    }
    let parts = n.div_ceil(part_len).max(1);
    if buckets >= GROUPED_MIN_BUCKETS {
        grouped_sort(
            keys,
            buckets,
            (parts, part_len),
            starts,
            order,
            scratch,
            value,
        );
        return n == 0;
    }

    let cursors = &mut scratch.cursors;
    count_parts(cursors, buckets, keys, part_len, buckets, |key| {
        key as usize
    });

    // Bucket starts and each part's cursor in each bucket, in two passes over blocks of
    // buckets: the first sums each block's counts over all parts, and after a scan of the
    // block totals the second runs the prefix sum over (bucket, part) inside each block,
    // writing the bucket starts and turning the counts into cursors (the bucket start plus
    // the counts of earlier parts). Two parallel regions instead of five (per-bucket sums,
    // the two of a separate scan, the cursors).
    let blocks = buckets.div_ceil(CURSOR_BLOCK);
    let block_starts = &mut scratch.scan;
    block_starts.clear();
    block_starts.resize(blocks, 0);
    let counts = &cursors[..];
    block_starts
        .par_iter_mut()
        .enumerate()
        .for_each(|(block, total)| {
            let bucket_range = block * CURSOR_BLOCK..((block + 1) * CURSOR_BLOCK).min(buckets);
            *total = (0..parts)
                .map(|p| {
                    counts[p * buckets + bucket_range.start..p * buckets + bucket_range.end]
                        .iter()
                        .sum::<u32>()
                })
                .sum();
        });
    let mut running = 0u32;
    for start in block_starts.iter_mut() {
        running += std::mem::replace(start, running);
    }
    debug_assert_eq!(running as usize, n);
    starts.resize(buckets + 1, 0);
    starts[buckets] = running;
    let block_starts = &scratch.scan[..];
    let cursors_shared = DisjointSlice::new(cursors.as_mut_slice());
    starts[..buckets]
        .par_chunks_mut(CURSOR_BLOCK)
        .enumerate()
        .for_each(|(block, block_bucket_starts)| {
            let mut running = block_starts[block];
            for (offset, start) in block_bucket_starts.iter_mut().enumerate() {
                let b = block * CURSOR_BLOCK + offset;
                *start = running;
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
    if pair_ends {
        // Pair `k`'s ends are keys `2k` and `2k + 1`, in that order, as the scatter by key
        // takes them, so the result is the same.
        let pairs: &[[u32; 2]] = bytemuck::cast_slice(keys);
        scatter_pair_parts(cursors, buckets, pairs, part_len / 2, order);
    } else {
        scatter_parts(
            cursors,
            buckets,
            keys,
            part_len,
            |key| key as usize,
            |_, index| value(index),
            order,
        );
    }
    // The keys did not ascend, so the order is the identity only if there are none.
    n == 0
}

/// Cuts the buckets of a counting sort (bucket starts `starts`, `n` entries) into work units
/// of about `unit` entries each, ending at bucket borders, as bucket ranges `lo..hi`.
///
/// The grid and the broad phase cut their buckets with it, and so do the sibling crates'
/// tables that sort with [`counting_sort`] (hhg-xor's `Buckets`).
pub fn cut_units(starts: &[u32], n: usize, unit: usize, units: &mut Vec<(u32, u32)>) {
    units.clear();
    let buckets = starts.len().saturating_sub(1);
    let mut lo = 0usize;
    while lo < buckets {
        let target = starts[lo] as usize + unit;
        let hi = if target >= n {
            buckets
        } else {
            // The first bucket starting at or past the target ends the unit.
            first_start_at_or_past(&starts[..buckets], lo, target)
        };
        units.push((lo as u32, hi as u32));
        lo = hi;
    }
}

/// The first bucket after `lo` whose start in `starts` (ascending) is at or past `target`
/// (`starts.len()` if none), found by galloping from `lo`: a unit spans a few thousand
/// buckets at most, so the search reads a few cache lines near `lo` where a binary search of
/// all the starts missed the cache ~20 times per unit (0.9 ms of a 1M-box build's serial
/// time). Every bucket up to `lo` counts as starting below the target, so the result is
/// the binary search's `max(lo + 1)`.
fn first_start_at_or_past(starts: &[u32], lo: usize, target: usize) -> usize {
    let below = |s: &u32| (*s as usize) < target;
    let mut from = lo + 1;
    let mut step = 1;
    while from + step <= starts.len() && below(&starts[from + step - 1]) {
        from += step;
        step *= 2;
    }
    let to = (from + step).min(starts.len());
    from + starts[from..to].partition_point(below)
}

/// Counts, for each part of `part_len` keys, how many keys fall in each of `rows` rows
/// (`row_of(key)`), into `cursors` (one row of counts per part, zeroed first). Panics on a
/// key not below `buckets` (see [`key_out_of_range`]).
fn count_parts(
    cursors: &mut Vec<u32>,
    rows: usize,
    keys: &[u32],
    part_len: usize,
    buckets: usize,
    row_of: impl Fn(u32) -> usize + Sync,
) {
    let parts = keys.len().div_ceil(part_len).max(1);
    cursors.resize(parts * rows, 0);
    cursors
        .par_chunks_mut(rows)
        .zip(keys.par_chunks(part_len))
        .enumerate()
        .for_each(|(part, (histogram, keys))| {
            histogram.fill(0);
            for (k, &key) in keys.iter().enumerate() {
                if key as usize >= buckets {
                    key_out_of_range(part * part_len + k, key, buckets);
                }
                histogram[row_of(key)] += 1;
            }
        });
    if keys.is_empty() {
        // No part ran: the one row is zeroed here.
        cursors.fill(0);
    }
}

/// The stable scatter of a counting sort: each part of `part_len` keys writes, in key order,
/// `value(key, index)` of every key at its row's cursor in `cursors` (the part's row of
/// write positions, `rows` long, turned from counts by the caller) and advances it.
fn scatter_parts<V: Copy + Send + Sync>(
    cursors: &mut [u32],
    rows: usize,
    keys: &[u32],
    part_len: usize,
    row_of: impl Fn(u32) -> usize + Sync,
    value: impl Fn(u32, usize) -> V + Sync,
    out: &mut [V],
) {
    let out_len = out.len();
    let out = DisjointSlice::new(out);
    cursors
        .par_chunks_mut(rows)
        .zip(keys.par_chunks(part_len))
        .enumerate()
        .for_each(|(part, (cursor, keys))| {
            let base = part * part_len;
            for (k, &key) in keys.iter().enumerate() {
                let slot = &mut cursor[row_of(key)];
                debug_assert!((*slot as usize) < out_len, "a cursor past the output");
                // SAFETY: the cursors of all parts and rows partition 0..n (n = out.len(),
                // the keys' count), each cursor advances only inside its own (row, part)
                // range, so every position is written by exactly one task, once.
                unsafe { out.write(*slot as usize, value(key, base + k)) };
                *slot += 1;
            }
        });
}

/// [`scatter_parts`] over the ends of pairs, writing each end's partner: each part of
/// `part_pairs` pairs writes, for the two ends of every pair in order, the other end at the
/// cursor of the end's row, and advances it. Reading each pair once for both ends saves
/// looking up every end's partner (6 % of a `VariableRadiusSearch` step's instructions).
fn scatter_pair_parts(
    cursors: &mut [u32],
    rows: usize,
    pairs: &[[u32; 2]],
    part_pairs: usize,
    out: &mut [u32],
) {
    let out_len = out.len();
    let out = DisjointSlice::new(out);
    cursors
        .par_chunks_mut(rows)
        .zip(pairs.par_chunks(part_pairs))
        .for_each(|(cursor, pairs)| {
            for &[a, b] in pairs {
                for (end, partner) in [(a, b), (b, a)] {
                    let slot = &mut cursor[end as usize];
                    debug_assert!((*slot as usize) < out_len, "a cursor past the output");
                    // SAFETY: as in `scatter_parts`: the cursors of all parts and rows
                    // partition 0..out_len, and each advances only inside its own range.
                    unsafe { out.write(*slot as usize, partner) };
                    *slot += 1;
                }
            }
        });
}

/// The counting sort for tables of many buckets (at least [`GROUPED_MIN_BUCKETS`]), in two
/// passes that stay in the cache: a stable counting sort of the points by group (the key's
/// bits above [`GROUP_BITS`], a histogram of a few thousand counts per part of `part_len`
/// keys, `parts` of them), then, for each group in parallel, a counting sort of its points by bucket that
/// also writes the group's bucket starts. Both passes are stable, so the result is the one
/// stable order, whatever the thread count.
///
/// At 1M points in a hashed table of 2M buckets, the single pass kept one histogram of 8 MB
/// per thread and spent ~20 ms on misses; see docs/performance.md.
fn grouped_sort(
    keys: &[u32],
    buckets: usize,
    (parts, part_len): (usize, usize),
    starts: &mut Vec<u32>,
    order: &mut Vec<u32>,
    scratch: &mut SortScratch,
    value: impl Fn(usize) -> u32 + Sync,
) {
    let n = keys.len();
    let groups = buckets.div_ceil(1 << GROUP_BITS);
    // Pass 1: per part, the points of each group; cursors by (group, part).
    let cursors = &mut scratch.cursors;
    count_parts(cursors, groups, keys, part_len, buckets, |key| {
        (key >> GROUP_BITS) as usize
    });
    // Group starts, then each part's cursor in each group (a few thousand counts: serial).
    let group_starts = &mut scratch.group_starts;
    group_starts.resize(groups + 1, 0);
    let mut running = 0u32;
    for g in 0..groups {
        group_starts[g] = running;
        for p in 0..parts {
            let count = cursors[p * groups + g];
            cursors[p * groups + g] = running;
            running += count;
        }
    }
    group_starts[groups] = running;
    debug_assert_eq!(running as usize, n);
    let grouped = &mut scratch.grouped;
    grouped.resize(n, 0);
    let low = (1u32 << GROUP_BITS) - 1;
    scatter_parts(
        cursors,
        groups,
        keys,
        part_len,
        |key| (key >> GROUP_BITS) as usize,
        |key, index| (u64::from(key & low) << 32) | index as u64,
        grouped,
    );
    // Pass 2: each group's points by bucket, with the group's bucket starts.
    order.resize(n, 0);
    starts.resize(buckets + 1, 0);
    starts[buckets] = n as u32;
    let order_shared = DisjointSlice::new(order.as_mut_slice());
    let grouped = &scratch.grouped[..];
    let group_starts = &scratch.group_starts[..];
    starts[..buckets]
        .par_chunks_mut(1 << GROUP_BITS)
        .enumerate()
        .for_each(|(g, group_bucket_starts)| {
            let (from, to) = (group_starts[g] as usize, group_starts[g + 1] as usize);
            let mut cursor = [0u32; 1 << GROUP_BITS];
            for &entry in &grouped[from..to] {
                cursor[(entry >> 32) as usize] += 1;
            }
            let mut running = from as u32;
            for (count, start) in cursor.iter_mut().zip(group_bucket_starts.iter_mut()) {
                *start = running;
                running += std::mem::replace(count, running);
            }
            // SAFETY: the groups' ranges `from..to` partition 0..n (group starts are an
            // exclusive scan of the group counts), and only this task touches its own.
            let out = unsafe { order_shared.range_mut(from, to - from) };
            for &entry in &grouped[from..to] {
                let slot = &mut cursor[(entry >> 32) as usize];
                out[*slot as usize - from] = value(entry as u32 as usize);
                *slot += 1;
            }
        });
}

/// The panic of [`counting_sort`] on key `key` at `position`, not below `buckets`.
#[cold]
#[inline(never)]
#[track_caller]
fn key_out_of_range(position: usize, key: u32, buckets: usize) -> ! {
    panic!(
        "counting_sort: key {key} at position {position} is not below the bucket count {buckets}"
    )
}

/// Makes `order` the identity over `n` points followed by `padding` zeros, keeping the order
/// it held in `adopted_from` (its buffer reused): the step of both grids'
/// `adopt_cell_order`.
pub(crate) fn adopt_identity(
    order: &mut Vec<u32>,
    adopted_from: &mut Vec<u32>,
    n: usize,
    padding: usize,
) {
    std::mem::swap(order, adopted_from);
    order.clear();
    order.resize(n + padding, 0);
    fill_identity(&mut order[..n]);
}

/// Writes `order[k] = k` for every position, in parallel blocks.
pub(crate) fn fill_identity(order: &mut [u32]) {
    fill_mapped(order, |position| position as u32);
}

/// Writes `order[k] = value(k)` for every position, in parallel blocks.
fn fill_mapped(order: &mut [u32], value: impl Fn(usize) -> u32 + Sync) {
    order
        .par_chunks_mut(CURSOR_BLOCK)
        .enumerate()
        .for_each(|(block, chunk)| {
            for (k, slot) in chunk.iter_mut().enumerate() {
                *slot = value(block * CURSOR_BLOCK + k);
            }
        });
}

/// Tells whether the keys ascend: blocks in parallel, each checked without a branch per
/// key (so that it vectorizes) and against the last key of the block before it. A
/// `par_windows(2).all` took 0.7-0.8 ms for 1M keys, a rayon item per key.
fn keys_ascend(keys: &[u32]) -> bool {
    keys.par_chunks(CURSOR_BLOCK)
        .enumerate()
        .all(|(block, chunk)| {
            let start = block * CURSOR_BLOCK;
            let joined = start == 0 || keys[start - 1] <= chunk[0];
            joined
                && chunk
                    .windows(2)
                    .fold(true, |ascend, pair| ascend & (pair[0] <= pair[1]))
        })
}

/// The counting sort of keys that already ascend (points given in cell order, the steady
/// state of a solver that reorders its particles): the order is the identity, and bucket
/// `b` starts at the first position whose key reaches `b`. No histogram, no scatter: at 1M
/// points in a hashed table of 2M buckets this is a few reads and writes of each array
/// instead of four passes over a histogram per thread (the starts by [`ascending_starts`]).
fn identity_sort(
    keys: &[u32],
    buckets: usize,
    starts: &mut Vec<u32>,
    order: &mut Vec<u32>,
    value: impl Fn(usize) -> u32 + Sync,
) {
    let n = keys.len();
    debug_assert!(n > 0 && keys.windows(2).all(|pair| pair[0] <= pair[1]));
    if keys[n - 1] as usize >= buckets {
        // The keys ascend: the first one out of range follows the last one in range.
        let position = keys.partition_point(|&key| (key as usize) < buckets);
        key_out_of_range(position, keys[position], buckets);
    }
    order.resize(n, 0);
    fill_mapped(order, value);
    ascending_starts(n, |k| keys[k], buckets, starts);
}

/// Writes the bucket starts of `n` positions whose keys `key(k)` ascend: bucket `b` starts
/// at the first position whose key reaches `b` (at `n` past the last key), for every one of
/// the `buckets` buckets and the end. Every key must be below `buckets`.
///
/// The starts are written in parallel blocks of buckets: each block finds its first key by
/// a binary search, then fills the run of buckets up to each next key at once. (Blocks of
/// positions, each writing the buckets its keys pass over, left the long runs of empty
/// buckets between clusters to single tasks one write at a time: 2.8 ms for 1M points in
/// 2M buckets.)
pub(crate) fn ascending_starts(
    n: usize,
    key: impl Fn(usize) -> u32 + Sync,
    buckets: usize,
    starts: &mut Vec<u32>,
) {
    debug_assert!(
        (1..n).all(|k| key(k - 1) <= key(k)),
        "keys that do not ascend"
    );
    debug_assert!(
        n == 0 || (key(n - 1) as usize) < buckets,
        "a key out of range"
    );
    starts.resize(buckets + 1, 0);
    starts
        .par_chunks_mut(CURSOR_BLOCK)
        .enumerate()
        .for_each(|(block, out)| {
            let first = block * CURSOR_BLOCK;
            // The first position whose key reaches the block's first bucket.
            let (mut low, mut high) = (0, n);
            while low < high {
                let middle = low + (high - low) / 2;
                if (key(middle) as usize) < first {
                    low = middle + 1;
                } else {
                    high = middle;
                }
            }
            let mut k = low;
            let mut i = 0;
            while i < out.len() {
                let bucket = first + i;
                while k < n && (key(k) as usize) < bucket {
                    k += 1;
                }
                // Buckets `bucket..=key(k)` all start at `k` (past the last key, every
                // bucket starts at `n`).
                let run_end = if k < n {
                    (key(k) as usize + 1 - first).min(out.len())
                } else {
                    out.len()
                };
                out[i..run_end].fill(k as u32);
                i = run_end;
            }
        });
}

#[cfg(test)]
mod tests {
    use super::{
        CURSOR_BLOCK, GROUPED_MIN_BUCKETS, SortScratch, ascending_starts, counting_sort, cut_units,
        pair_partners,
    };

    /// A key not below the bucket count panics the same way on every path, naming the key
    /// and its position: no bucket at all, one table with keys in any order and ascending,
    /// and two passes by group with the key in the last, partial group or past every group.
    #[test]
    fn a_key_out_of_range_panics_alike_on_every_path() {
        const { assert!(600_007 >= GROUPED_MIN_BUCKETS) };
        let cases: [(&[u32], usize, usize); 7] = [
            (&[0], 0, 0),
            (&[0, 5, 2], 3, 1),
            (&[0, 1, 1, 5, 7], 3, 3),
            (&[5, 0], 5, 0),
            (&[600_010, 0], 600_007, 0),
            (&[0, 600_007, 600_010], 600_007, 1),
            (&[1, 0, 2_000_000], 600_007, 2),
        ];
        for (keys, buckets, position) in cases {
            let result = std::panic::catch_unwind(|| {
                let (mut starts, mut order) = (Vec::new(), Vec::new());
                counting_sort(
                    keys,
                    buckets,
                    &mut starts,
                    &mut order,
                    &mut SortScratch::default(),
                )
            });
            let payload = result.expect_err(&format!("{keys:?} in {buckets} buckets sorted"));
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            let key = keys[position];
            assert_eq!(
                message,
                format!(
                    "counting_sort: key {key} at position {position} is not below the bucket \
                     count {buckets}"
                ),
                "{keys:?} in {buckets} buckets"
            );
        }
    }

    /// `cut_units`' galloping search cuts the units a binary search of all the starts cut
    /// (the search it replaced): empty and crowded buckets, units of one entry, of more
    /// entries than a bucket run holds, and of more than all of them.
    #[test]
    fn cut_units_match_a_binary_search_of_all_starts() {
        let mut next = xorshift(0x5eed_c0de);
        for case in 0..300 {
            let buckets = 1 + (next() % 3000) as usize;
            // Mostly empty buckets in some cases, crowded ones in others.
            let crowd = 1 + case % 7;
            let mut starts = Vec::with_capacity(buckets + 1);
            let mut n = 0u32;
            for _ in 0..buckets {
                starts.push(n);
                if next().is_multiple_of(4) {
                    n += (next() % (crowd as u64 * 3)) as u32;
                }
            }
            starts.push(n);
            for unit in [1, 2, 7, 64, 1024, n as usize + 5] {
                let mut units = Vec::new();
                cut_units(&starts, n as usize, unit, &mut units);
                let mut want = Vec::new();
                let mut lo = 0usize;
                while lo < buckets {
                    let target = starts[lo] as usize + unit;
                    let hi = if target >= n as usize {
                        buckets
                    } else {
                        starts[..buckets]
                            .partition_point(|&s| (s as usize) < target)
                            .max(lo + 1)
                    };
                    want.push((lo as u32, hi as u32));
                    lo = hi;
                }
                assert_eq!(units, want, "case {case}, unit {unit}");
            }
        }
    }

    /// A xorshift generator from `seed`: the tests' random keys.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// `pair_partners` gives each object the partners of its pairs in the stable order (the
    /// order of the pairs' ends), on each path of the counting sort: ends in random order
    /// (one table, and two passes by group for `GROUPED_MIN_BUCKETS` objects and more), ends
    /// that ascend (the identity shortcut), an object paired with itself, and no pair; with
    /// 1 and 4 threads, and with a pair count whose parts of ends would split a pair (the
    /// parts are then cut between pairs).
    #[test]
    fn pair_partners_lists_both_ends() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let random = |objects: usize, count: usize, next: &mut dyn FnMut() -> u64| {
            (0..count)
                .map(|_| [0; 2].map(|_| (next() % objects as u64) as u32))
                .collect::<Vec<[u32; 2]>>()
        };
        let cases: Vec<(usize, Vec<[u32; 2]>)> = vec![
            (5, Vec::new()),
            (4, vec![[0, 1], [1, 2], [2, 3]]),
            (3, vec![[1, 1], [0, 2]]),
            (1000, random(1000, 50_000, &mut next)),
            // 100_002 ends in 4 parts of 25_001, an odd length: cut at 25_002.
            (1000, random(1000, 50_001, &mut next)),
            (
                GROUPED_MIN_BUCKETS + 77,
                random(GROUPED_MIN_BUCKETS + 77, 40_000, &mut next),
            ),
        ];
        for (objects, pairs) in cases {
            // Ends in order, each appended to its object's list: the stable order.
            let mut want = vec![Vec::new(); objects];
            for &[a, b] in &pairs {
                want[a as usize].push(b);
                want[b as usize].push(a);
            }
            for threads in [1, 4] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (mut starts, mut partners) = (vec![3; 2], vec![8; 9]);
                pool.install(|| {
                    pair_partners(
                        &pairs,
                        objects,
                        &mut starts,
                        &mut partners,
                        &mut SortScratch::default(),
                    )
                });
                let what = format!(
                    "{} pairs of {objects} objects, {threads} threads",
                    pairs.len()
                );
                assert_eq!(starts.len(), objects + 1, "{what}: starts");
                assert_eq!(partners.len(), 2 * pairs.len(), "{what}: entries");
                for (i, list) in want.iter().enumerate() {
                    let got = &partners[starts[i] as usize..starts[i + 1] as usize];
                    assert_eq!(got, list, "{what}: object {i}");
                }
            }
        }
    }

    /// The stable order and bucket starts, the slow and obvious way.
    fn reference(keys: &[u32], buckets: usize) -> (Vec<u32>, Vec<u32>) {
        let mut order: Vec<u32> = (0..keys.len() as u32).collect();
        order.sort_by_key(|&i| keys[i as usize]);
        let mut starts = vec![0u32; buckets + 1];
        for &key in keys {
            starts[key as usize + 1] += 1;
        }
        for b in 0..buckets {
            starts[b + 1] += starts[b];
        }
        (order, starts)
    }

    /// The starts of ascending keys through a key function, against the reference: keys
    /// that start late, end early, repeat and skip buckets, over several blocks of buckets,
    /// and no key at all.
    #[test]
    fn ascending_starts_match_the_reference() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        for (n, buckets) in [
            (0, 5),
            (1, 1),
            (3, 3 * CURSOR_BLOCK + 7),
            (5000, 40),
            (20_000, 100_003),
        ] {
            let mut keys: Vec<u32> = (0..n).map(|_| (next() % buckets as u64) as u32).collect();
            keys.sort_unstable();
            let (_, want) = reference(&keys, buckets);
            let mut starts = vec![7; 3];
            ascending_starts(n, |k| keys[k], buckets, &mut starts);
            assert_eq!(starts, want, "{n} keys in {buckets} buckets");
        }
    }

    /// Keys in random order and the same keys ascending (the shortcut that skips the
    /// histogram) give the reference order and starts: gaps, repeats, empty leading and
    /// trailing buckets, one key, and more keys than one part of the parallel sort holds;
    /// one table of more buckets than a block of cursors; tables of at least `GROUPED_MIN_BUCKETS` buckets (the two-pass sort) with a whole
    /// and a partial last group, and with no key at all.
    #[test]
    fn sorts_random_and_ascending_keys() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        const { assert!(GROUPED_MIN_BUCKETS <= 1 << 19) };
        let cases: [(usize, usize); 12] = [
            (1, 1),
            (1, 9),
            (7, 3),
            (100, 1000),
            (5000, 40),
            (70_000, 300),
            // One table of several blocks of cursors, in one part and in several.
            (100, 2 * CURSOR_BLOCK + 3),
            (70_000, 3 * CURSOR_BLOCK + 5),
            (0, 1 << 19),
            (3, 1 << 19),
            (5000, 1 << 19),
            (100_000, 600_007),
        ];
        for (n, buckets) in cases {
            let random: Vec<u32> = (0..n).map(|_| (next() % buckets as u64) as u32).collect();
            let mut ascending = random.clone();
            ascending.sort_unstable();
            let same = vec![(buckets / 2) as u32; n];
            // Ascending but for one pair across a block border of the ascending check: the
            // first border between two different keys swapped, or else a key lowered (or the
            // one before raised) at the first border.
            let mut broken = ascending.clone();
            if n > CURSOR_BLOCK {
                let b = (CURSOR_BLOCK..n)
                    .step_by(CURSOR_BLOCK)
                    .find(|&b| broken[b - 1] != broken[b]);
                match b {
                    Some(b) => broken.swap(b - 1, b),
                    None if broken[CURSOR_BLOCK] > 0 => broken[CURSOR_BLOCK] -= 1,
                    None => broken[CURSOR_BLOCK - 1] += 1,
                }
                assert!(!broken.is_sorted(), "{n} keys: the border was not broken");
            }
            for keys in [&random, &ascending, &same, &broken] {
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
