//! numpy arrays in and out: the rule that turns any array-like into C-contiguous `(n, 3)`
//! float32 or float64 points (copied at most once), and outputs that own their `Vec`.

use numpy::ndarray::Array2;
use numpy::{Element, IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

/// The precision a conversion asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// float32 arrays stay float32; everything else becomes float64.
    Keep,
    /// Everything becomes float64.
    F64,
    /// Everything becomes float32.
    F32,
}

/// Points borrowed from a numpy array, in its precision.
pub enum Points<'py> {
    /// float32 points.
    F32(PyReadonlyArray2<'py, f32>),
    /// float64 points.
    F64(PyReadonlyArray2<'py, f64>),
}

/// Converts `object` to a C-contiguous `(n, 3)` array of reals and borrows it.
///
/// The rule: a float32 array stays float32 under [`Precision::Keep`]; any other real dtype
/// (float64, float16, integers) is converted to float64. An array of the target dtype that is
/// C-contiguous is used in place; otherwise it is copied once (`numpy.ascontiguousarray`).
/// Complex, boolean, object and string arrays and other shapes than `(n, 3)` are refused.
pub fn points<'py>(
    object: &Bound<'py, PyAny>,
    what: &str,
    precision: Precision,
) -> PyResult<Points<'py>> {
    let array = real_array(object, what, precision)?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    if shape.len() != 2 || shape[1] != 3 {
        return Err(PyValueError::new_err(format!(
            "{what} must have shape (n, 3), got shape {shape:?}"
        )));
    }
    if is_float32(&array)? {
        Ok(Points::F32(array.extract()?))
    } else {
        Ok(Points::F64(array.extract()?))
    }
}

/// A C-contiguous array of reals in the precision asked for (see [`points`]).
pub fn real_array<'py>(
    object: &Bound<'py, PyAny>,
    what: &str,
    precision: Precision,
) -> PyResult<Bound<'py, PyAny>> {
    let py = object.py();
    let numpy = py.import("numpy")?;
    let array = numpy.call_method1("asarray", (object,))?;
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "f" | "i" | "u") {
        return Err(PyTypeError::new_err(format!(
            "{what} must hold real numbers (a float or integer dtype), got dtype {}",
            dtype.str()?
        )));
    }
    let keep_f32 = is_float32(&array)?;
    let target = match precision {
        Precision::Keep if keep_f32 => "float32",
        Precision::F32 => "float32",
        _ => "float64",
    };
    let options = PyDict::new(py);
    options.set_item("dtype", numpy.getattr(target)?)?;
    numpy.call_method("ascontiguousarray", (array,), Some(&options))
}

/// Whether `array` (a numpy array) has dtype float32.
pub fn is_float32(array: &Bound<'_, PyAny>) -> PyResult<bool> {
    let dtype = array.getattr("dtype")?;
    let name: String = dtype.getattr("name")?.extract()?;
    Ok(name == "float32")
}

/// The points of a borrowed `(n, 3)` array as `[x, y, z]` rows.
pub fn rows<'a, T: Element>(array: &'a PyReadonlyArray2<'_, T>) -> PyResult<&'a [[T; 3]]> {
    let flat = array
        .as_slice()
        .map_err(|error| PyValueError::new_err(format!("points are not contiguous: {error}")))?;
    Ok(flat.as_chunks::<3>().0)
}

/// A 1-D array that owns `values`.
pub fn vector<T: Element>(py: Python<'_>, values: Vec<T>) -> Bound<'_, PyArray1<T>> {
    PyArray1::from_vec(py, values)
}

/// An `(n, N)` array that owns `rows` (flattened without a copy).
pub fn matrix<T: Element, const N: usize>(
    py: Python<'_>,
    rows: Vec<[T; N]>,
) -> Bound<'_, PyArray2<T>> {
    let n = rows.len();
    Array2::from_shape_vec((n, N), rows.into_flattened())
        .expect("a Vec of n rows of N values has n * N values")
        .into_pyarray(py)
}

/// Elements per rayon task of the parallel copies out of the core's buffers.
const PAR_COPY_MIN: usize = 1 << 14;

/// A copy of `values` made by one parallel pass, for outputs the core keeps (the lists of a
/// `NeighborSearch`, which can be asked for again).
pub fn par_copy<V: Copy + Send + Sync>(values: &[V]) -> Vec<V> {
    let mut out = Vec::new();
    values
        .par_iter()
        .with_min_len(PAR_COPY_MIN)
        .copied()
        .collect_into_vec(&mut out);
    out
}

/// Compressed sparse row lists as owned arrays: offsets as int64 (numpy's index type) and
/// indices as uint32, taken from the core or copied by one parallel pass.
pub struct CsrArrays<T> {
    /// `offsets[i] .. offsets[i + 1]` are list `i`'s entries.
    pub offsets: Vec<i64>,
    /// The neighbours' indices.
    pub indices: Vec<u32>,
    /// The squared distances, when asked for.
    pub distances_squared: Option<Vec<T>>,
}

impl<T: hhg_core::Real + Element> CsrArrays<T> {
    /// Copies the lists out of the core's reused buffers, in parallel.
    pub fn from_lists(lists: &hhg_core::NeighborLists<T>, with_distances: bool) -> Self {
        let mut offsets = Vec::new();
        lists
            .offsets()
            .par_iter()
            .with_min_len(PAR_COPY_MIN)
            .map(|&o| o as i64)
            .collect_into_vec(&mut offsets);
        let distances_squared = lists.distances_squared().filter(|_| with_distances);
        Self {
            offsets,
            indices: par_copy(lists.indices()),
            distances_squared: distances_squared.map(par_copy),
        }
    }

    /// The lists the core hands over ([`hhg_core::NeighborLists::take`]): indices and
    /// distances without a copy, the offsets widened to int64 in one parallel pass.
    pub fn from_taken(lists: hhg_core::TakenLists<T>, with_distances: bool) -> Self {
        let mut offsets = Vec::new();
        lists
            .offsets
            .par_iter()
            .with_min_len(PAR_COPY_MIN)
            .map(|&o| o as i64)
            .collect_into_vec(&mut offsets);
        Self {
            offsets,
            indices: lists.indices,
            distances_squared: lists.distances_squared.filter(|_| with_distances),
        }
    }

    /// The Python tuple `(offsets, indices)` or `(offsets, indices, distances_squared)`.
    pub fn into_tuple(self, py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyTuple>> {
        let offsets = vector(py, self.offsets).into_any();
        let indices = vector(py, self.indices).into_any();
        match self.distances_squared {
            Some(d2) => {
                pyo3::types::PyTuple::new(py, [offsets, indices, vector(py, d2).into_any()])
            }
            None => pyo3::types::PyTuple::new(py, [offsets, indices]),
        }
    }
}
