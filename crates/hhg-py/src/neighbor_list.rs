//! `hhg.NeighborList`: vesin's neighbour list interface (`NeighborList(cutoff, full_list)` and
//! `compute(points, box, periodic, quantities)`) over hhg's grid and all-images search.

use hhg_core::triclinic::{
    AllImagesSearch, ImagePairColumns, ImagePairList, PairOrder, PairSet, TriclinicBox,
};
use hhg_core::{Error, Grid, NeighborLists, PairList};
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::prelude::*;

use crate::arrays::{self, Points, Precision};
use crate::errors::to_py;
use crate::threads;

/// The quantities `compute` can return, in vesin's letters.
const QUANTITIES: &str = "ijPSdD";

/// Entries per task of the parallel output passes.
const MIN_TASK: usize = 1 << 13;

/// A neighbour list calculator with vesin's interface: ``NeighborList(cutoff, full_list)``.
///
/// ``compute(points, box, periodic, quantities="ij", copy=True)`` returns the pairs within
/// ``cutoff`` (``|D| <= cutoff``: a pair at exactly the cutoff is included). See the package
/// documentation for the differences from vesin.
#[pyclass(module = "hhg")]
pub struct NeighborList {
    /// The cutoff.
    #[pyo3(get)]
    cutoff: f64,
    /// Whether each pair is returned twice (``i, j, S`` and ``j, i, -S``).
    #[pyo3(get)]
    full_list: bool,
    /// Whether the pairs are sorted by ``i`` (then ``j`` and ``S``).
    #[pyo3(get)]
    sorted: bool,
    /// The threads of each `compute` (``None`` or ``0``: all cores).
    #[pyo3(get, set)]
    n_threads: Option<i64>,
    grid: Grid<f64>,
    lists: NeighborLists<f64>,
    pairs: PairList<f64>,
    images: Option<AllImagesSearch<f64>>,
    image_pairs: ImagePairList<f64>,
}

/// Where the pairs of one open-cell `compute` are read from (the periodic search writes its
/// outputs itself, see [`periodic_outputs`]).
enum Source<'a> {
    /// Open cell, half list: the grid's pairs `i < j`.
    Pairs {
        pairs: &'a [[u32; 2]],
        points: &'a [[f64; 3]],
        /// The engine's squared distances, when `d` was asked for.
        distances_squared: Option<&'a [f64]>,
    },
    /// Open cell, full list: the grid's lists, with the row of each entry.
    Lists {
        rows: &'a [u32],
        indices: &'a [u32],
        points: &'a [[f64; 3]],
        /// The engine's squared distances, when `d` was asked for.
        distances_squared: Option<&'a [f64]>,
    },
}

impl Source<'_> {
    fn len(&self) -> usize {
        match self {
            Source::Pairs { pairs, .. } => pairs.len(),
            Source::Lists { indices, .. } => indices.len(),
        }
    }

    #[inline]
    fn ij(&self, e: usize) -> (u32, u32) {
        match self {
            Source::Pairs { pairs, .. } => (pairs[e][0], pairs[e][1]),
            Source::Lists { rows, indices, .. } => (rows[e], indices[e]),
        }
    }

    /// `x[j] - x[i] + S . box`.
    #[inline]
    fn vector(&self, e: usize) -> [f64; 3] {
        let (Source::Pairs { points, .. } | Source::Lists { points, .. }) = self;
        let (i, j) = self.ij(e);
        let (xi, xj) = (points[i as usize], points[j as usize]);
        [xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]]
    }

    #[inline]
    fn distance(&self, e: usize) -> f64 {
        match self {
            // The engine's squared distance is the same formula on the same coordinates.
            Source::Pairs {
                distances_squared: Some(d2),
                ..
            }
            | Source::Lists {
                distances_squared: Some(d2),
                ..
            } => d2[e].sqrt(),
            _ => {
                let v = self.vector(e);
                ((v[0] * v[0] + v[1] * v[1]) + v[2] * v[2]).sqrt()
            }
        }
    }
}

/// Rows of floats in the precision the caller's points came in.
enum Floats<const N: usize> {
    F32(Vec<[f32; N]>),
    F64(Vec<[f64; N]>),
}

/// Floats in the precision the caller's points came in.
enum Reals {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// The requested outputs of one `compute`, before they become numpy arrays.
#[derive(Default)]
struct Outputs {
    i: Option<Vec<u64>>,
    j: Option<Vec<u64>>,
    pairs: Option<Vec<[u64; 2]>>,
    shifts: Option<Vec<[i32; 3]>>,
    distances: Option<Reals>,
    vectors: Option<Floats<3>>,
}

/// `(0..count).map(value)` collected in parallel, straight into its final `Vec`.
fn collect<V: Send>(count: usize, value: impl Fn(usize) -> V + Sync + Send) -> Vec<V> {
    let mut out = Vec::new();
    (0..count)
        .into_par_iter()
        .with_min_len(MIN_TASK)
        .map(value)
        .collect_into_vec(&mut out);
    out
}

/// The list (row) of each entry of compressed sparse row lists, in parallel: each task finds
/// its first row by bisection.
fn entry_rows(offsets: &[usize]) -> Vec<u32> {
    let total = offsets.last().copied().unwrap_or(0);
    let mut rows = vec![0u32; total];
    rows.par_chunks_mut(MIN_TASK)
        .enumerate()
        .for_each(|(chunk, slots)| {
            let start = chunk * MIN_TASK;
            let mut row = offsets.partition_point(|&o| o <= start) - 1;
            for (k, slot) in slots.iter_mut().enumerate() {
                while offsets[row + 1] <= start + k {
                    row += 1;
                }
                *slot = row as u32;
            }
        });
    rows
}

/// Fills the outputs `wanted` asks for from `source`, each in one parallel pass.
fn assemble(source: &Source<'_>, wanted: &str, output_f32: bool) -> Outputs {
    let n = source.len();
    let mut out = Outputs::default();
    if wanted.contains('i') && wanted.contains('j') {
        // One pass reads each pair once for both columns.
        let (mut i, mut j) = (Vec::new(), Vec::new());
        (0..n)
            .into_par_iter()
            .with_min_len(MIN_TASK)
            .map(|e| {
                let (i, j) = source.ij(e);
                (u64::from(i), u64::from(j))
            })
            .unzip_into_vecs(&mut i, &mut j);
        out.i = Some(i);
        out.j = Some(j);
    } else if wanted.contains('i') {
        out.i = Some(collect(n, |e| u64::from(source.ij(e).0)));
    } else if wanted.contains('j') {
        out.j = Some(collect(n, |e| u64::from(source.ij(e).1)));
    }
    if wanted.contains('P') {
        out.pairs = Some(collect(n, |e| {
            let (i, j) = source.ij(e);
            [u64::from(i), u64::from(j)]
        }));
    }
    if wanted.contains('S') {
        // An open cell: every shift is zero.
        out.shifts = Some(vec![[0; 3]; n]);
    }
    if wanted.contains('d') {
        out.distances = Some(if output_f32 {
            Reals::F32(collect(n, |e| source.distance(e) as f32))
        } else {
            Reals::F64(collect(n, |e| source.distance(e)))
        });
    }
    if wanted.contains('D') {
        out.vectors = Some(if output_f32 {
            Floats::F32(collect(n, |e| source.vector(e).map(|v| v as f32)))
        } else {
            Floats::F64(collect(n, |e| source.vector(e)))
        });
    }
    out
}

/// The outputs `wanted` asks for from a periodic search's pairs: `i`, `j` and the shifts as
/// the search wrote them (`uint64`, `int32`), distances and vectors as it computed them
/// (taken without a copy in float64, narrowed by one pass for float32 points).
fn periodic_outputs(
    columns: &mut ImagePairColumns<u64>,
    list: &mut ImagePairList<f64>,
    wanted: &str,
    output_f32: bool,
) -> Outputs {
    let (i, j, shifts) = columns.take();
    let mut out = Outputs::default();
    if wanted.contains('P') {
        out.pairs = Some(collect(i.len(), |e| [i[e], j[e]]));
    }
    out.i = wanted.contains('i').then_some(i);
    out.j = wanted.contains('j').then_some(j);
    out.shifts = wanted.contains('S').then_some(shifts);
    if wanted.contains('d') {
        let distances = list.take_distances();
        out.distances = Some(if output_f32 {
            Reals::F32(collect(distances.len(), |e| distances[e] as f32))
        } else {
            Reals::F64(distances)
        });
    }
    if wanted.contains('D') {
        let vectors = list.take_vectors();
        out.vectors = Some(if output_f32 {
            Floats::F32(collect(vectors.len(), |e| vectors[e].map(|v| v as f32)))
        } else {
            Floats::F64(vectors)
        });
    }
    out
}

/// `periodic` as three flags: one boolean for all axes, or a sequence of three.
fn periodic_flags(periodic: &Bound<'_, PyAny>) -> PyResult<[bool; 3]> {
    let numpy = periodic.py().import("numpy")?;
    let array = numpy.call_method1("asarray", (periodic,))?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let flags: Vec<bool> = match shape.as_slice() {
        [] => vec![array.call_method0("item")?.is_truthy()?; 3],
        [3] => array
            .call_method1("astype", (numpy.getattr("bool_")?,))?
            .call_method0("tolist")?
            .extract()?,
        _ => {
            return Err(PyValueError::new_err(format!(
                "`periodic` must be a single boolean or a sequence of three booleans, got \
                 shape {shape:?}"
            )));
        }
    };
    Ok([flags[0], flags[1], flags[2]])
}

/// The cell matrix (rows = cell vectors) as a 3x3 float64 array.
fn cell_matrix(cell: &Bound<'_, PyAny>) -> PyResult<[[f64; 3]; 3]> {
    let array = arrays::real_array(cell, "box", Precision::F64)?;
    let array: PyReadonlyArray2<'_, f64> = array
        .extract()
        .map_err(|_| PyValueError::new_err("`box` must be a 3x3 matrix"))?;
    if array.shape() != [3, 3] {
        return Err(PyValueError::new_err(format!(
            "`box` must be a 3x3 matrix, got shape {:?}",
            array.shape()
        )));
    }
    let rows = arrays::rows(&array)?;
    Ok([rows[0], rows[1], rows[2]])
}

#[pymethods]
impl NeighborList {
    /// A neighbour list calculator for pairs within ``cutoff`` (``<=``), each pair once
    /// (``full_list=False``) or twice (``full_list=True``).
    ///
    /// ``n_threads`` is the default thread count of ``compute`` (``None`` or ``0``: all
    /// cores). ``sorted``, ``algorithm`` and ``skin`` are vesin's keywords: ``sorted=True``
    /// sorts the pairs by ``i`` (then ``j``); ``algorithm`` (``"auto"``, ``"cell_list"`` or
    /// ``"brute_force"``) is accepted and always runs hhg's grid; ``skin`` (>= 0) is
    /// accepted and every ``compute`` searches afresh (the result is the same).
    #[new]
    #[pyo3(signature = (cutoff, full_list, n_threads = None, *, sorted = false, algorithm = "auto", skin = 0.0))]
    fn new(
        cutoff: f64,
        full_list: bool,
        n_threads: Option<i64>,
        sorted: bool,
        algorithm: &str,
        skin: f64,
    ) -> PyResult<Self> {
        threads::resolve(n_threads)?;
        if !matches!(algorithm, "auto" | "cell_list" | "brute_force") {
            return Err(PyValueError::new_err(format!(
                "Unknown algorithm '{algorithm}'. Must be one of 'auto', 'brute_force', or \
                 'cell_list'."
            )));
        }
        if !(skin.is_finite() && skin >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "skin must be finite and >= 0, got {skin}"
            )));
        }
        let grid = Grid::new(cutoff).map_err(to_py)?;
        Ok(Self {
            cutoff,
            full_list,
            sorted,
            n_threads,
            grid,
            lists: NeighborLists::default(),
            pairs: PairList::default(),
            images: None,
            image_pairs: ImagePairList::default(),
        })
    }

    /// Computes the pairs of ``points`` (an ``(n, 3)`` array) in the cell ``box`` (a 3x3
    /// matrix, rows = cell vectors) with ``periodic`` (one boolean or three) and returns the
    /// ``quantities`` in the order asked: ``i``, ``j`` (uint64), ``P`` (``(n, 2)`` uint64),
    /// ``S`` (``(n, 3)`` int32 cell shifts), ``d`` (distances), ``D`` (vectors
    /// ``x[j] - x[i] + S @ box``), ``d`` and ``D`` in the points' float dtype (float64 for
    /// integer points). The search runs in float64.
    ///
    /// ``copy`` is accepted for vesin's sake: the arrays are always new and own their data.
    /// ``n_threads`` overrides the calculator's thread count for this call.
    #[pyo3(signature = (points, r#box, periodic, quantities = "ij", copy = true, *, n_threads = None))]
    #[allow(clippy::too_many_arguments)]
    fn compute<'py>(
        &mut self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        r#box: &Bound<'py, PyAny>,
        periodic: &Bound<'py, PyAny>,
        quantities: &str,
        copy: bool,
        n_threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = copy;
        if let Some(c) = quantities.chars().find(|c| !QUANTITIES.contains(*c)) {
            return Err(PyValueError::new_err(format!(
                "unexpected character in `quantities`: {c}"
            )));
        }
        let cell = cell_matrix(r#box)?;
        let flags = periodic_flags(periodic)?;
        let kept = arrays::real_array(points, "points", Precision::Keep)?;
        let output_f32 = kept
            .getattr("dtype")?
            .getattr("name")?
            .extract::<String>()?
            == "float32";
        let Points::F64(points) = arrays::points(&kept, "points", Precision::F64)? else {
            return Err(PyTypeError::new_err("points were not converted to float64"));
        };
        let points = arrays::rows(&points)?;
        let n_threads = n_threads.or(self.n_threads);
        let (full, sorted, cutoff) = (self.full_list, self.sorted, self.cutoff);
        let periodic_any = flags.iter().any(|&p| p);
        if periodic_any {
            let domain = TriclinicBox {
                vectors: cell,
                periodic: flags,
            };
            if self.images.as_ref().map(|s| *s.domain()) != Some(domain) {
                self.images = Some(AllImagesSearch::new(cutoff, domain).map_err(to_py)?);
            }
        }
        let Self {
            grid,
            lists,
            pairs,
            images,
            image_pairs,
            ..
        } = self;
        let outputs = threads::run(py, n_threads, || -> Result<Outputs, Error> {
            let with_distances = quantities.contains('d');
            if periodic_any {
                let search = images.as_mut().expect("the search was made above");
                search.build(points)?;
                // Only what `quantities` asks for, and the sort only when `sorted` asks.
                image_pairs.set_order(if sorted {
                    PairOrder::Sorted
                } else {
                    PairOrder::Found
                });
                image_pairs.set_distances(with_distances);
                image_pairs.set_vectors(quantities.contains('D'));
                let set = if full { PairSet::Full } else { PairSet::Half };
                let mut columns = ImagePairColumns::<u64>::new(
                    quantities.contains(['i', 'j', 'P']),
                    quantities.contains('S'),
                );
                search.pair_columns(set, image_pairs, &mut columns)?;
                return Ok(periodic_outputs(
                    &mut columns,
                    image_pairs,
                    quantities,
                    output_f32,
                ));
            }
            grid.build(points)?;
            if full {
                if with_distances {
                    grid.neighbor_lists_with_distances(lists)?;
                } else {
                    grid.neighbor_lists(lists)?;
                }
                let rows = entry_rows(lists.offsets());
                let source = Source::Lists {
                    rows: &rows,
                    indices: lists.indices(),
                    points,
                    distances_squared: lists.distances_squared(),
                };
                return Ok(assemble(&source, quantities, output_f32));
            }
            if !sorted && quantities.chars().all(|c| matches!(c, 'i' | 'j' | 'S')) {
                // Only indices (and zero shifts): the engine writes the uint64 columns itself.
                let (mut i, mut j) = (Vec::new(), Vec::new());
                grid.pair_columns(pairs, &mut i, &mut j)?;
                return Ok(Outputs {
                    shifts: quantities.contains('S').then(|| vec![[0; 3]; i.len()]),
                    i: quantities.contains('i').then_some(i),
                    j: quantities.contains('j').then_some(j),
                    ..Outputs::default()
                });
            }
            // Sorted pairs lose their place beside the engine's distances: their distances
            // are computed again from the points.
            if with_distances && !sorted {
                grid.pairs_with_distances(pairs)?;
            } else {
                grid.pairs(pairs)?;
            }
            let mut sorted_pairs = Vec::new();
            let pair_slice = if sorted {
                sorted_pairs.extend_from_slice(pairs.pairs());
                sorted_pairs.par_sort_unstable();
                &sorted_pairs[..]
            } else {
                pairs.pairs()
            };
            let source = Source::Pairs {
                pairs: pair_slice,
                points,
                distances_squared: if sorted {
                    None
                } else {
                    pairs.distances_squared()
                },
            };
            Ok(assemble(&source, quantities, output_f32))
        })?
        .map_err(to_py)?;
        let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(quantities.len());
        let Outputs {
            i,
            j,
            pairs,
            shifts,
            distances,
            vectors,
        } = outputs;
        let i = i.map(|v| arrays::vector(py, v).into_any());
        let j = j.map(|v| arrays::vector(py, v).into_any());
        let pairs = pairs.map(|v| arrays::matrix(py, v).into_any());
        let shifts = shifts.map(|v| arrays::matrix(py, v).into_any());
        let distances = distances.map(|d| match d {
            Reals::F32(v) => arrays::vector(py, v).into_any(),
            Reals::F64(v) => arrays::vector(py, v).into_any(),
        });
        let vectors = vectors.map(|d| match d {
            Floats::F32(v) => arrays::matrix(py, v).into_any(),
            Floats::F64(v) => arrays::matrix(py, v).into_any(),
        });
        for c in quantities.chars() {
            let item = match c {
                'i' => &i,
                'j' => &j,
                'P' => &pairs,
                'S' => &shifts,
                'd' => &distances,
                _ => &vectors,
            };
            items.push(item.clone().expect("every quantity asked for was computed"));
        }
        PyTuple::new(py, items)
    }

    fn __repr__(&self) -> String {
        format!(
            "hhg.NeighborList(cutoff={}, full_list={}, n_threads={}, sorted={})",
            self.cutoff,
            if self.full_list { "True" } else { "False" },
            self.n_threads
                .map_or_else(|| "None".to_string(), |n| n.to_string()),
            if self.sorted { "True" } else { "False" },
        )
    }
}
