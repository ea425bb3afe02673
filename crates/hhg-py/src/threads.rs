//! The rayon thread pools, one per thread count, built on first use and kept for the process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

/// The pools built so far, by thread count.
static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();

/// The number of threads a call uses when it does not name one: the cores available to the
/// process.
#[pyfunction]
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The thread count a call asked for: `None` or `0` means all cores, a negative count is an
/// error.
pub fn resolve(n_threads: Option<i64>) -> PyResult<usize> {
    match n_threads {
        None | Some(0) => Ok(default_threads()),
        Some(n) if n > 0 => Ok(n as usize),
        Some(n) => Err(PyValueError::new_err(format!(
            "n_threads must be None, 0 (all cores) or a positive count, got {n}"
        ))),
    }
}

/// The pool of `threads` threads, built on first use.
fn pool(threads: usize) -> PyResult<Arc<ThreadPool>> {
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    // A panic while the lock was held cannot leave the map inconsistent: take it back.
    let mut pools = pools
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(pool) = pools.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|k| format!("hhg-{k}"))
        .build()
        .map_err(|error| {
            PyRuntimeError::new_err(format!("could not start {threads} threads: {error}"))
        })?;
    let pool = Arc::new(pool);
    pools.insert(threads, Arc::clone(&pool));
    Ok(pool)
}

/// Runs `work` on the pool of `n_threads` threads (see [`resolve`]) with the GIL released.
pub fn run<R: Send>(
    py: Python<'_>,
    n_threads: Option<i64>,
    work: impl FnOnce() -> R + Send,
) -> PyResult<R> {
    let pool = pool(resolve(n_threads)?)?;
    Ok(py.detach(|| pool.install(work)))
}
