//! `hhg.BroadPhase`: overlapping pairs of axis-aligned boxes of any mix of sizes.

use hhg_core::broad::Aabb;
use hhg_core::{PairList, Real};
use numpy::Element;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrays::{self, Points, Precision};
use crate::errors::to_py;
use crate::grid::PairArrays;
use crate::threads;

/// The broad phase in the precision of its boxes.
struct Typed<T: Real> {
    broad: hhg_core::broad::BroadPhase<T>,
    pairs: PairList<T>,
    boxes: Vec<Aabb<T>>,
    found: Vec<u32>,
}

impl<T: Real> Typed<T> {
    fn new() -> Self {
        Self {
            broad: hhg_core::broad::BroadPhase::new(),
            pairs: PairList::default(),
            boxes: Vec::new(),
            found: Vec::new(),
        }
    }

    fn build(&mut self, mins: &[[T; 3]], maxs: &[[T; 3]]) -> Result<(), hhg_core::Error> {
        self.boxes.clear();
        self.boxes.extend(
            mins.iter()
                .zip(maxs)
                .map(|(&min, &max)| Aabb::new(min, max)),
        );
        self.broad.build(&self.boxes)
    }
}

enum Built {
    None,
    F32(Typed<f32>),
    F64(Typed<f64>),
}

/// A broad phase over axis-aligned boxes: ``build(mins, maxs)`` with two ``(n, 3)`` arrays
/// (box ``k`` spans ``mins[k] .. maxs[k]``, closed; boxes of any size mix, infinite bounds
/// allowed), then ``pairs()`` (each overlapping pair once) and queries.
///
/// float32 boxes are searched in float32 (both arrays float32), anything else in float64.
#[pyclass(module = "hhg")]
pub struct BroadPhase {
    built: Built,
}

fn query_point<T: Real + Element>(typed: &mut Typed<T>, p: [T; 3]) -> PyResult<Vec<u32>> {
    typed
        .broad
        .query_point(p, &mut typed.found)
        .map_err(to_py)?;
    Ok(typed.found.clone())
}

fn query_box<T: Real + Element>(
    typed: &mut Typed<T>,
    min: [T; 3],
    max: [T; 3],
) -> PyResult<Vec<u32>> {
    typed
        .broad
        .query_aabb(&Aabb::new(min, max), &mut typed.found)
        .map_err(to_py)?;
    Ok(typed.found.clone())
}

/// One point of three coordinates, as float64.
fn triple(object: &Bound<'_, PyAny>, what: &str) -> PyResult<[f64; 3]> {
    let values: Vec<f64> = arrays::real_array(object, what, Precision::F64)?
        .call_method0("ravel")?
        .call_method0("tolist")?
        .extract()?;
    values.try_into().map_err(|values: Vec<f64>| {
        PyValueError::new_err(format!(
            "{what} must have 3 coordinates, got {}",
            values.len()
        ))
    })
}

impl BroadPhase {
    fn not_built() -> PyErr {
        PyValueError::new_err("the broad phase holds no boxes: call build(mins, maxs) first")
    }
}

#[pymethods]
impl BroadPhase {
    /// An empty broad phase.
    #[new]
    fn new() -> Self {
        Self { built: Built::None }
    }

    /// Builds over the boxes ``mins[k] .. maxs[k]`` (two ``(n, 3)`` arrays).
    #[pyo3(signature = (mins, maxs, *, n_threads = None))]
    fn build(
        &mut self,
        py: Python<'_>,
        mins: &Bound<'_, PyAny>,
        maxs: &Bound<'_, PyAny>,
        n_threads: Option<i64>,
    ) -> PyResult<()> {
        let mins = arrays::real_array(mins, "mins", Precision::Keep)?;
        let maxs = arrays::real_array(maxs, "maxs", Precision::Keep)?;
        if arrays::is_float32(&mins)? && arrays::is_float32(&maxs)? {
            let (Points::F32(mins), Points::F32(maxs)) = (
                arrays::points(&mins, "mins", Precision::F32)?,
                arrays::points(&maxs, "maxs", Precision::F32)?,
            ) else {
                unreachable!("converted to float32")
            };
            let (mins, maxs) = (arrays::rows(&mins)?, arrays::rows(&maxs)?);
            check_lengths(mins.len(), maxs.len())?;
            if !matches!(self.built, Built::F32(_)) {
                self.built = Built::F32(Typed::new());
            }
            let Built::F32(typed) = &mut self.built else {
                unreachable!("made above")
            };
            threads::run(py, n_threads, || typed.build(mins, maxs))?.map_err(to_py)
        } else {
            let (Points::F64(mins), Points::F64(maxs)) = (
                arrays::points(&mins, "mins", Precision::F64)?,
                arrays::points(&maxs, "maxs", Precision::F64)?,
            ) else {
                unreachable!("converted to float64")
            };
            let (mins, maxs) = (arrays::rows(&mins)?, arrays::rows(&maxs)?);
            check_lengths(mins.len(), maxs.len())?;
            if !matches!(self.built, Built::F64(_)) {
                self.built = Built::F64(Typed::new());
            }
            let Built::F64(typed) = &mut self.built else {
                unreachable!("made above")
            };
            threads::run(py, n_threads, || typed.build(mins, maxs))?.map_err(to_py)
        }
    }

    /// Each overlapping pair of boxes once (``i < j``), as an ``(m, 2)`` uint32 array, in a
    /// deterministic order.
    #[pyo3(signature = (*, n_threads = None))]
    fn pairs<'py>(
        &mut self,
        py: Python<'py>,
        n_threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        match &mut self.built {
            Built::None => Err(Self::not_built()),
            Built::F32(typed) => threads::run(py, n_threads, || {
                typed
                    .broad
                    .pairs(&mut typed.pairs)
                    .map(|()| PairArrays::from_list(&mut typed.pairs, false))
            })?
            .map_err(to_py)?
            .into_py(py),
            Built::F64(typed) => threads::run(py, n_threads, || {
                typed
                    .broad
                    .pairs(&mut typed.pairs)
                    .map(|()| PairArrays::from_list(&mut typed.pairs, false))
            })?
            .map_err(to_py)?
            .into_py(py),
        }
    }

    /// The boxes containing ``point`` (closed bounds), ascending, as a uint32 array.
    fn query_point<'py>(
        &mut self,
        py: Python<'py>,
        point: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = triple(point, "point")?;
        let found = match &mut self.built {
            Built::None => return Err(Self::not_built()),
            Built::F32(typed) => query_point(typed, p.map(|v| v as f32))?,
            Built::F64(typed) => query_point(typed, p)?,
        };
        Ok(arrays::vector(py, found).into_any())
    }

    /// The boxes overlapping the box ``min .. max`` (closed bounds), ascending, as a uint32
    /// array.
    fn query_box<'py>(
        &mut self,
        py: Python<'py>,
        min: &Bound<'py, PyAny>,
        max: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (lo, hi) = (triple(min, "min")?, triple(max, "max")?);
        let found = match &mut self.built {
            Built::None => return Err(Self::not_built()),
            Built::F32(typed) => query_box(typed, lo.map(|v| v as f32), hi.map(|v| v as f32))?,
            Built::F64(typed) => query_box(typed, lo, hi)?,
        };
        Ok(arrays::vector(py, found).into_any())
    }

    /// How many boxes the last build held.
    fn __len__(&self) -> usize {
        match &self.built {
            Built::None => 0,
            Built::F32(typed) => typed.broad.len(),
            Built::F64(typed) => typed.broad.len(),
        }
    }
}

fn check_lengths(mins: usize, maxs: usize) -> PyResult<()> {
    if mins != maxs {
        return Err(PyValueError::new_err(format!(
            "mins and maxs must have the same number of boxes, got {mins} and {maxs}"
        )));
    }
    Ok(())
}
