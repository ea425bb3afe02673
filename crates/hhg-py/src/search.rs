//! `hhg.NeighborSearch`: several point sets (moving and static) with an activation table.

use hhg_core::Real;
use numpy::Element;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::arrays::{self, CsrArrays, Points, Precision};
use crate::errors::to_py;
use crate::threads;

/// The search in its precision.
enum Typed {
    F32(hhg_core::NeighborSearch<f32>),
    F64(hhg_core::NeighborSearch<f64>),
}

/// Runs `$body` with `$search` bound to the search and `$rows` to the points converted to
/// its precision.
macro_rules! with_points {
    ($self:expr, $points:expr, |$search:ident, $rows:ident| $body:expr) => {
        match &mut $self.typed {
            Typed::F32($search) => {
                let Points::F32(array) = arrays::points($points, "points", Precision::F32)? else {
                    unreachable!("converted to float32")
                };
                let $rows = arrays::rows(&array)?;
                $body
            }
            Typed::F64($search) => {
                let Points::F64(array) = arrays::points($points, "points", Precision::F64)? else {
                    unreachable!("converted to float64")
                };
                let $rows = arrays::rows(&array)?;
                $body
            }
        }
    };
}

/// Fixed-radius search between several point sets: each set is ``dynamic`` (its points move
/// every step: ``update_positions`` then ``find_neighbors``) or ``static`` (its grid is built
/// once), and ``set_active(a, b)`` makes set ``a`` look for neighbours in set ``b``
/// (no pair of sets is active until ``set_active`` makes it so).
///
/// ``dtype`` (``"float32"`` or ``"float64"``) is the precision of every set: points of any
/// other dtype are converted once.
#[pyclass(module = "hhg")]
pub struct NeighborSearch {
    /// The search radius.
    #[pyo3(get)]
    radius: f64,
    typed: Typed,
}

fn lists_of<T: Real + Element>(
    search: &hhg_core::NeighborSearch<T>,
    searching: usize,
    searched: usize,
) -> PyResult<CsrArrays<T>> {
    match search.neighbors(searching, searched) {
        Some(lists) => Ok(CsrArrays::from_lists(lists, search.with_distances())),
        None => Err(PyValueError::new_err(format!(
            "no lists for set {searching} searching set {searched}: the pair is not active or \
             find_neighbors() has not run since it was activated"
        ))),
    }
}

#[pymethods]
impl NeighborSearch {
    /// An empty search within ``radius`` in precision ``dtype``; ``with_distances=True`` makes
    /// the lists carry squared distances.
    #[new]
    #[pyo3(signature = (radius, dtype = "float64", with_distances = false))]
    fn new(radius: f64, dtype: &str, with_distances: bool) -> PyResult<Self> {
        let mut typed = match dtype {
            "float32" => Typed::F32(hhg_core::NeighborSearch::new(radius as f32).map_err(to_py)?),
            "float64" => Typed::F64(hhg_core::NeighborSearch::new(radius).map_err(to_py)?),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "dtype must be 'float32' or 'float64', got '{dtype}'"
                )));
            }
        };
        hhg_core::building_blocks::check_radius(radius).map_err(to_py)?;
        match &mut typed {
            Typed::F32(search) => search.set_with_distances(with_distances),
            Typed::F64(search) => search.set_with_distances(with_distances),
        }
        Ok(Self { radius, typed })
    }

    /// Adds a set whose points move (its grid is rebuilt by every ``find_neighbors``) and
    /// returns its id.
    fn add_dynamic_set(&mut self, points: &Bound<'_, PyAny>) -> PyResult<usize> {
        with_points!(self, points, |search, rows| search
            .add_dynamic_set(rows)
            .map_err(to_py))
    }

    /// Adds a static set (its grid is built now and reused) and returns its id.
    #[pyo3(signature = (points, *, n_threads = None))]
    fn add_static_set(
        &mut self,
        py: Python<'_>,
        points: &Bound<'_, PyAny>,
        n_threads: Option<i64>,
    ) -> PyResult<usize> {
        with_points!(self, points, |search, rows| threads::run(
            py,
            n_threads,
            || search.add_static_set(rows)
        )?
        .map_err(to_py))
    }

    /// Replaces the positions of set ``set`` (the same number of points).
    #[pyo3(signature = (set, points, *, n_threads = None))]
    fn update_positions(
        &mut self,
        py: Python<'_>,
        set: usize,
        points: &Bound<'_, PyAny>,
        n_threads: Option<i64>,
    ) -> PyResult<()> {
        with_points!(self, points, |search, rows| threads::run(
            py,
            n_threads,
            || search.update_positions(set, rows)
        )?
        .map_err(to_py))
    }

    /// Makes set ``searching`` look (``active=True``) or stop looking for neighbours in set
    /// ``searched``.
    #[pyo3(signature = (searching, searched, active = true))]
    fn set_active(&mut self, searching: usize, searched: usize, active: bool) -> PyResult<()> {
        match &mut self.typed {
            Typed::F32(search) => search.set_active(searching, searched, active),
            Typed::F64(search) => search.set_active(searching, searched, active),
        }
        .map_err(to_py)
    }

    /// Whether set ``searching`` looks for neighbours in set ``searched``.
    fn is_active(&self, searching: usize, searched: usize) -> bool {
        match &self.typed {
            Typed::F32(search) => search.is_active(searching, searched),
            Typed::F64(search) => search.is_active(searching, searched),
        }
    }

    /// How many sets there are.
    #[getter]
    fn set_count(&self) -> usize {
        match &self.typed {
            Typed::F32(search) => search.set_count(),
            Typed::F64(search) => search.set_count(),
        }
    }

    /// Computes the lists of every active pair of sets.
    #[pyo3(signature = (*, n_threads = None))]
    fn find_neighbors(&mut self, py: Python<'_>, n_threads: Option<i64>) -> PyResult<()> {
        match &mut self.typed {
            Typed::F32(search) => threads::run(py, n_threads, || search.find_neighbors())?,
            Typed::F64(search) => threads::run(py, n_threads, || search.find_neighbors())?,
        }
        .map_err(to_py)
    }

    /// The lists of the last ``find_neighbors`` for the points of set ``searching`` in set
    /// ``searched``: ``(offsets, indices[, distances_squared])``, indices numbered within
    /// ``searched``.
    fn neighbors<'py>(
        &self,
        py: Python<'py>,
        searching: usize,
        searched: usize,
    ) -> PyResult<Bound<'py, PyTuple>> {
        match &self.typed {
            Typed::F32(search) => lists_of(search, searching, searched)?.into_tuple(py),
            Typed::F64(search) => lists_of(search, searching, searched)?.into_tuple(py),
        }
    }

    fn __repr__(&self) -> String {
        let dtype = match self.typed {
            Typed::F32(_) => "float32",
            Typed::F64(_) => "float64",
        };
        format!(
            "hhg.NeighborSearch(radius={}, dtype='{dtype}')",
            self.radius
        )
    }
}
