//! What every suite shares: the worker-thread pool and the thread counts of the scaling
//! measurement, the sizes of the `--full` run, the default seed and repetitions, and whether a
//! record agrees with its group's reference.

use std::fmt;

use rayon::ThreadPool;

/// The smallest size of the `--full` run, whose sizes are the powers of ten from it up to
/// `--max-n`.
pub const FULL_MIN_SIZE: usize = 1_000;

/// The largest size of the `--full` run unless `--max-n` says otherwise.
pub const FULL_MAX_SIZE: usize = 1_000_000;

/// The default number of worker threads: one per logical CPU.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The thread counts of a scaling measurement on `cpus` logical CPUs: 1, 2, 4, ... below
/// `cpus`, then `cpus` itself.
pub fn scaling_threads(cpus: usize) -> Vec<usize> {
    let mut counts = Vec::new();
    let mut t = 1;
    while t < cpus {
        counts.push(t);
        t *= 2;
    }
    counts.push(cpus.max(1));
    counts
}

/// The sizes of a `--full` run: the powers of ten from [`FULL_MIN_SIZE`] up to `max_n`, then
/// `max_n` itself if it lies above the last of them.
pub fn full_sizes(max_n: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut n = FULL_MIN_SIZE;
    while n <= max_n {
        sizes.push(n);
        n *= 10;
    }
    if sizes.last().is_none_or(|&last| last < max_n) && max_n >= FULL_MIN_SIZE {
        sizes.push(max_n);
    }
    sizes
}

/// The base seed of the default run.
pub const DEFAULT_SEED: u64 = 0x5EED_0000_0000_0001;

/// How many runs a measurement takes the best of: 3 up to 100k points, 2 above.
pub fn default_reps(n: usize) -> usize {
    if n <= 100_000 { 3 } else { 2 }
}

/// Whether a record's pairs and checksum match its group's reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// The record is the reference of its group (brute force if it ran, else kiddo, else hhg).
    Reference,
    /// Same pair count and checksum as the reference, and symmetric lists without self entries.
    Agrees,
    /// Anything else.
    Differs,
}

impl fmt::Display for Agreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Agreement::Reference => "ref",
            Agreement::Agrees => "yes",
            Agreement::Differs => "NO",
        })
    }
}

/// Builds the rayon pool every measurement runs in.
pub fn thread_pool(threads: usize) -> Result<ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("hhg-bench-{i}"))
        .build()
        .map_err(|e| format!("cannot start {threads} worker threads: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_thread_counts() {
        assert_eq!(scaling_threads(1), [1]);
        assert_eq!(scaling_threads(2), [1, 2]);
        assert_eq!(scaling_threads(6), [1, 2, 4, 6]);
        assert_eq!(scaling_threads(8), [1, 2, 4, 8]);
        assert_eq!(full_sizes(1_000_000), [1_000, 10_000, 100_000, 1_000_000]);
        assert_eq!(full_sizes(300_000), [1_000, 10_000, 100_000, 300_000]);
        assert_eq!(full_sizes(500), Vec::<usize>::new());
    }
}
