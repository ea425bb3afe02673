//! The native module `hhg._native` of the Python package `hhg`: the search classes over numpy
//! arrays, with the GIL released and a thread count per call.
//!
//! Every search runs inside a rayon pool of the requested size (module `threads`), detached from
//! the interpreter. Inputs are borrowed numpy arrays (converted once by the rule of
//! `arrays::points`); outputs are numpy arrays that take ownership of a `Vec`: the core's own
//! output buffer handed over without a copy where it has the dtype the call returns (pairs,
//! lists, the periodic search's `i`, `j`, `S` columns written in the binding's widths), else
//! one filled by one parallel pass.

mod alloc;
mod arrays;
mod broad;
mod errors;
mod grid;
mod neighbor_list;
mod search;
mod threads;

use pyo3::prelude::*;

/// Large outputs fault in huge pages (see `alloc`).
#[global_allocator]
static ALLOCATOR: alloc::HugePages = alloc::HugePages;

/// hhg's native module: see the package `hhg` for the documentation.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<neighbor_list::NeighborList>()?;
    module.add_class::<grid::Grid>()?;
    module.add_class::<search::NeighborSearch>()?;
    module.add_class::<broad::BroadPhase>()?;
    module.add_function(wrap_pyfunction!(threads::default_threads, module)?)?;
    Ok(())
}
