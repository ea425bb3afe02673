//! `hhg.Grid`: one point set's grid, with its neighbour lists, pairs and queries.

use hhg_core::{NeighborLists, PairList, Real};
use numpy::Element;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::arrays::{self, CsrArrays, Points, Precision};
use crate::errors::to_py;
use crate::threads;

/// A grid in one precision, with the lists and pairs it refills (reused across calls).
pub struct Typed<T: Real> {
    pub grid: hhg_core::Grid<T>,
    pub lists: NeighborLists<T>,
    pub pairs: PairList<T>,
}

impl<T: Real + Element> Typed<T> {
    fn new(radius: T) -> Result<Self, hhg_core::Error> {
        Ok(Self {
            grid: hhg_core::Grid::new(radius)?,
            lists: NeighborLists::default(),
            pairs: PairList::default(),
        })
    }

    fn lists(&mut self, with_distances: bool) -> Result<CsrArrays<T>, hhg_core::Error> {
        if with_distances {
            self.grid.neighbor_lists_with_distances(&mut self.lists)?;
        } else {
            self.grid.neighbor_lists(&mut self.lists)?;
        }
        Ok(CsrArrays::from_taken(self.lists.take(), with_distances))
    }

    fn query(
        &mut self,
        queries: &[[T; 3]],
        with_distances: bool,
    ) -> Result<CsrArrays<T>, hhg_core::Error> {
        if with_distances {
            self.grid.query_with_distances(queries, &mut self.lists)?;
        } else {
            self.grid.query(queries, &mut self.lists)?;
        }
        Ok(CsrArrays::from_taken(self.lists.take(), with_distances))
    }

    fn pairs(&mut self, with_distances: bool) -> Result<PairArrays<T>, hhg_core::Error> {
        if with_distances {
            self.grid.pairs_with_distances(&mut self.pairs)?;
        } else {
            self.grid.pairs(&mut self.pairs)?;
        }
        Ok(PairArrays::from_list(&mut self.pairs, with_distances))
    }
}

/// Unique pairs as owned arrays.
pub struct PairArrays<T> {
    pairs: Vec<[u32; 2]>,
    distances_squared: Option<Vec<T>>,
}

impl<T: Real + Element> PairArrays<T> {
    /// Takes the pairs (and distances) out of the core's list without a copy.
    pub fn from_list(list: &mut PairList<T>, with_distances: bool) -> Self {
        let (pairs, distances_squared) = list.take_pairs();
        Self {
            pairs,
            distances_squared: distances_squared.filter(|_| with_distances),
        }
    }

    /// `pairs` as an `(m, 2)` uint32 array, or `(pairs, distances_squared)`.
    pub fn into_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let pairs = arrays::matrix(py, self.pairs).into_any();
        match self.distances_squared {
            Some(d2) => {
                Ok(PyTuple::new(py, [pairs, arrays::vector(py, d2).into_any()])?.into_any())
            }
            None => Ok(pairs),
        }
    }
}

/// The grid of the last build, in the precision of its points.
enum Built {
    None,
    F32(Typed<f32>),
    F64(Typed<f64>),
}

/// A grid over one set of points, searching within ``radius`` (``<=``).
///
/// ``build(points)`` takes an ``(n, 3)`` float32 or float64 array (anything else is converted
/// to float64 once; a non-contiguous array is copied once) and the searches run in the
/// points' precision.
#[pyclass(module = "hhg")]
pub struct Grid {
    /// The search radius.
    #[pyo3(get)]
    radius: f64,
    built: Built,
}

impl Grid {
    fn not_built() -> PyErr {
        PyValueError::new_err("the grid holds no points: call build(points) first")
    }
}

#[pymethods]
impl Grid {
    /// An empty grid searching within ``radius`` (finite and > 0).
    #[new]
    fn new(radius: f64) -> PyResult<Self> {
        hhg_core::building_blocks::check_radius(radius).map_err(to_py)?;
        Ok(Self {
            radius,
            built: Built::None,
        })
    }

    /// Builds the grid over ``points`` (an ``(n, 3)`` array), replacing the last build.
    #[pyo3(signature = (points, *, n_threads = None))]
    fn build(
        &mut self,
        py: Python<'_>,
        points: &Bound<'_, PyAny>,
        n_threads: Option<i64>,
    ) -> PyResult<()> {
        let radius = self.radius;
        match arrays::points(points, "points", Precision::Keep)? {
            Points::F32(array) => {
                let rows = arrays::rows(&array)?;
                if !matches!(self.built, Built::F32(_)) {
                    self.built = Built::F32(Typed::new(radius as f32).map_err(to_py)?);
                }
                let Built::F32(typed) = &mut self.built else {
                    unreachable!("the float32 grid was made above")
                };
                threads::run(py, n_threads, || typed.grid.build(rows))?.map_err(to_py)
            }
            Points::F64(array) => {
                let rows = arrays::rows(&array)?;
                if !matches!(self.built, Built::F64(_)) {
                    self.built = Built::F64(Typed::new(radius).map_err(to_py)?);
                }
                let Built::F64(typed) = &mut self.built else {
                    unreachable!("the float64 grid was made above")
                };
                threads::run(py, n_threads, || typed.grid.build(rows))?.map_err(to_py)
            }
        }
    }

    /// The neighbour lists of the built points (each point's neighbours, ascending, itself
    /// excluded): ``(offsets, indices)`` or, with ``with_distances=True``,
    /// ``(offsets, indices, distances_squared)``. Point ``i``'s neighbours are
    /// ``indices[offsets[i]:offsets[i + 1]]``; offsets are int64, indices uint32, squared
    /// distances in the points' dtype.
    #[pyo3(signature = (with_distances = false, *, n_threads = None))]
    fn neighbor_lists<'py>(
        &mut self,
        py: Python<'py>,
        with_distances: bool,
        n_threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        match &mut self.built {
            Built::None => Err(Self::not_built()),
            Built::F32(typed) => threads::run(py, n_threads, || typed.lists(with_distances))?
                .map_err(to_py)?
                .into_tuple(py),
            Built::F64(typed) => threads::run(py, n_threads, || typed.lists(with_distances))?
                .map_err(to_py)?
                .into_tuple(py),
        }
    }

    /// Each pair within the radius once, ``i < j``: an ``(m, 2)`` uint32 array, or with
    /// ``with_distances=True`` the tuple ``(pairs, distances_squared)``. The order is
    /// deterministic (the same for every thread count).
    #[pyo3(signature = (with_distances = false, *, n_threads = None))]
    fn pairs<'py>(
        &mut self,
        py: Python<'py>,
        with_distances: bool,
        n_threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match &mut self.built {
            Built::None => Err(Self::not_built()),
            Built::F32(typed) => threads::run(py, n_threads, || typed.pairs(with_distances))?
                .map_err(to_py)?
                .into_py(py),
            Built::F64(typed) => threads::run(py, n_threads, || typed.pairs(with_distances))?
                .map_err(to_py)?
                .into_py(py),
        }
    }

    /// The built points within the radius of each query point (an ``(m, 3)`` array,
    /// converted to the grid's dtype): ``(offsets, indices[, distances_squared])`` as for
    /// ``neighbor_lists``, one list per query.
    #[pyo3(signature = (points, with_distances = false, *, n_threads = None))]
    fn query<'py>(
        &mut self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        with_distances: bool,
        n_threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        match &mut self.built {
            Built::None => Err(Self::not_built()),
            Built::F32(typed) => {
                let Points::F32(array) = arrays::points(points, "points", Precision::F32)? else {
                    unreachable!("converted to float32")
                };
                let queries = arrays::rows(&array)?;
                threads::run(py, n_threads, || typed.query(queries, with_distances))?
                    .map_err(to_py)?
                    .into_tuple(py)
            }
            Built::F64(typed) => {
                let Points::F64(array) = arrays::points(points, "points", Precision::F64)? else {
                    unreachable!("converted to float64")
                };
                let queries = arrays::rows(&array)?;
                threads::run(py, n_threads, || typed.query(queries, with_distances))?
                    .map_err(to_py)?
                    .into_tuple(py)
            }
        }
    }

    /// The permutation that sorts the built points by cell (uint32): apply it to per-point
    /// arrays for locality.
    fn order<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let order = match &self.built {
            Built::None => return Err(Self::not_built()),
            Built::F32(typed) => typed.grid.order().to_vec(),
            Built::F64(typed) => typed.grid.order().to_vec(),
        };
        Ok(arrays::vector(py, order).into_any())
    }

    /// How many points the last build held.
    fn __len__(&self) -> usize {
        match &self.built {
            Built::None => 0,
            Built::F32(typed) => typed.grid.len(),
            Built::F64(typed) => typed.grid.len(),
        }
    }

    /// The dtype name of the built points (``None`` before the first build).
    #[getter]
    fn dtype(&self) -> Option<&'static str> {
        match &self.built {
            Built::None => None,
            Built::F32(_) => Some("float32"),
            Built::F64(_) => Some("float64"),
        }
    }

    fn __repr__(&self) -> String {
        format!("hhg.Grid(radius={})", self.radius)
    }
}
