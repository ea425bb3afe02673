//! Shared rayon pools, so that every path runs with several thread counts.

use std::sync::OnceLock;

use rayon::{ThreadPool, ThreadPoolBuilder};

/// The thread counts every path is run with.
pub const THREAD_COUNTS: [usize; 3] = [1, 2, 16];

/// Runs `op` inside a rayon pool of `threads` threads (pools of [`THREAD_COUNTS`] are
/// created once per test binary and shared; other counts get a fresh pool).
pub fn in_pool<R: Send>(threads: usize, op: impl FnOnce() -> R + Send) -> R {
    static POOLS: [OnceLock<ThreadPool>; 3] = [const { OnceLock::new() }; 3];
    let build = || {
        ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool")
    };
    match THREAD_COUNTS.iter().position(|&t| t == threads) {
        Some(slot) => POOLS[slot].get_or_init(build).install(op),
        None => build().install(op),
    }
}
