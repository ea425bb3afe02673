//! Triclinic periodic cells: every image of every point within a cutoff, for any skew and for
//! cutoffs wider than the cell, each pair reported with its integer cell shift.
//!
//! The points are wrapped into the cell in fractional coordinates (exact integer wrap counts),
//! every image within the cutoff of the cell is added as a ghost (as many layers as
//! `cutoff / width` needs, widths measured between opposite faces), and one [`Grid`] searches
//! the points and ghosts with a slightly wider radius. Each pair the grid finds between a
//! point and an image is mapped to the caller's frame and then decided by one formula on the
//! caller's own coordinates (see [`AllImagesSearch`]), so the result is exactly what a
//! brute-force loop over all shifts with that formula reports.
//!
//! When twice the grid's radius is below every periodic width (any skew), every image within
//! the cutoff is the minimum image, its shift `-1`, `0` or `1` per axis: the search then adds
//! only the images one cell vector up of the points near the lower faces (as
//! [`crate::periodic::PeriodicSearch`] does), about half the ghosts, and keeps each pair from
//! its one pair of images with no axis on which both members are shifted.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::error::Error;
use crate::geometry::{Points, first_non_finite};
use crate::grid::{Grid, check_radius};
use crate::kernel::BAND_FLAG;
use crate::memory::try_reserve_total;
use crate::pairs::{PairIndex, PairList};
use crate::parallel::DisjointSlice;
use crate::periodic::{MAX_IMAGES, PeriodicPair};
use crate::real::Real;

/// The most points and ghost images together that one [`AllImagesSearch`] build holds,
/// `2^27`: the bound on the memory a large cutoff in a small cell can ask for.
pub const MAX_IMAGE_POINTS: usize = 1 << 27;

/// A parallelepiped cell given by its three cell vectors (the rows of `vectors`), periodic
/// along the cell vectors whose `periodic` flag is set.
///
/// The cell spans `f0 * a + f1 * b + f2 * c` for fractional coordinates `0 <= f < 1` from the
/// origin. Rows of open (non-periodic) axes are not used: they may be zero (they must be
/// finite). The periodic vectors must be linearly independent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriclinicBox<T> {
    /// The cell vectors, one per row.
    pub vectors: [[T; 3]; 3],
    /// Which cell vectors are periodic.
    pub periodic: [bool; 3],
}

impl<T: Real> TriclinicBox<T> {
    /// A cell periodic along all three vectors.
    pub fn new(vectors: [[T; 3]; 3]) -> Self {
        Self {
            vectors,
            periodic: [true; 3],
        }
    }

    /// The distances between opposite faces along each periodic axis (`0` along open axes),
    /// after checking the cell (see [`AllImagesSearch::new`] for the errors).
    pub fn widths(&self) -> Result<[f64; 3], Error> {
        Ok(CellGeometry::new(self)?.widths)
    }
}

/// The cell in `f64`, with open axes completed by unit vectors orthogonal to the periodic
/// ones, its inverse and the widths between faces.
#[derive(Clone, Copy, Debug)]
struct CellGeometry {
    /// The caller's rows, widened.
    rows: [[f64; 3]; 3],
    /// The inverse of the completed matrix: column `k` maps a position to its fractional
    /// coordinate along cell vector `k`.
    inverse: [[f64; 3]; 3],
    periodic: [bool; 3],
    widths: [f64; 3],
    /// The largest coordinate of each row, in magnitude (`0` along open axes).
    row_extent: [f64; 3],
    /// A bound on the condition of the completed matrix: the sum of the periodic rows'
    /// lengths over the narrowest width (`1` when nothing is periodic).
    condition: f64,
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    (a[0] * b[0] + a[1] * b[1]) + a[2] * b[2]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

fn unit(a: [f64; 3]) -> [f64; 3] {
    let n = norm(a);
    a.map(|v| v / n)
}

impl CellGeometry {
    fn new<T: Real>(cell: &TriclinicBox<T>) -> Result<Self, Error> {
        let rows = cell.vectors.map(|row| row.map(T::to_f64));
        for (row, values) in rows.iter().enumerate() {
            for (column, &value) in values.iter().enumerate() {
                if !value.is_finite() {
                    return Err(Error::NonFiniteCellVector { row, column, value });
                }
            }
        }
        let periodic = cell.periodic;
        let axes: Vec<usize> = (0..3).filter(|&k| periodic[k]).collect();
        let open: Vec<usize> = (0..3).filter(|&k| !periodic[k]).collect();
        // Open axes get unit vectors orthogonal to the periodic vectors (the caller's rows
        // there are not used), so that the fractional coordinates along periodic axes measure
        // the periodic directions only.
        let mut completed = rows;
        match axes.len() {
            0 => completed = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            1 => {
                let a = rows[axes[0]];
                if norm(a) > 0.0 {
                    // The coordinate axis least aligned with `a` gives the first normal.
                    let least = (0..3)
                        .min_by(|&p, &q| a[p].abs().total_cmp(&a[q].abs()))
                        .unwrap_or(0);
                    let mut e = [0.0; 3];
                    e[least] = 1.0;
                    let b = unit(cross(a, e));
                    let c = unit(cross(a, b));
                    completed[open[0]] = b;
                    completed[open[1]] = c;
                }
            }
            2 => {
                let normal = cross(rows[axes[0]], rows[axes[1]]);
                if norm(normal) > 0.0 {
                    completed[open[0]] = unit(normal);
                }
            }
            _ => {}
        }
        let [a, b, c] = completed;
        let (bc, ca, ab) = (cross(b, c), cross(c, a), cross(a, b));
        let det = dot(a, bc);
        let longest = axes.iter().map(|&k| norm(rows[k])).fold(0.0, f64::max);
        let mut widths = [0.0; 3];
        for &k in &axes {
            let face = [bc, ca, ab][k];
            let width = det.abs() / norm(face);
            // A width that vanishes next to the cell's size (or is NaN for a zero vector)
            // leaves the fractional coordinates undefined.
            if !(width.is_finite() && width > 1e-9 * longest) {
                return Err(Error::DegenerateCell {
                    axis: k,
                    width: if width.is_finite() { width } else { 0.0 },
                    length: norm(rows[k]),
                });
            }
            widths[k] = width;
        }
        // Columns of the inverse: the reciprocal vectors, `(b x c) / det` and so on.
        let mut inverse = [[0.0; 3]; 3];
        for (k, face) in [bc, ca, ab].iter().enumerate() {
            for (row, value) in inverse.iter_mut().zip(face) {
                row[k] = value / det;
            }
        }
        let row_extent = std::array::from_fn(|k| {
            if periodic[k] {
                rows[k].iter().fold(0.0f64, |m, v| m.max(v.abs()))
            } else {
                0.0
            }
        });
        let narrowest = axes
            .iter()
            .map(|&k| widths[k])
            .fold(f64::INFINITY, f64::min);
        let lengths: f64 = axes.iter().map(|&k| norm(rows[k])).sum();
        let condition = if axes.is_empty() {
            1.0
        } else {
            (lengths / narrowest).max(1.0)
        };
        Ok(Self {
            rows,
            inverse,
            periodic,
            widths,
            row_extent,
            condition,
        })
    }

    /// `shift . rows`, per component `(s0 * a + s1 * b) + s2 * c` in `f64`.
    #[inline]
    fn shift_vector(&self, shift: [i64; 3]) -> [f64; 3] {
        let s = shift.map(|v| v as f64);
        std::array::from_fn(|c| {
            (s[0] * self.rows[0][c] + s[1] * self.rows[1][c]) + s[2] * self.rows[2][c]
        })
    }

    /// The fractional coordinate of `p` along cell vector `k`.
    #[inline]
    fn fractional(&self, p: [f64; 3], k: usize) -> f64 {
        (p[0] * self.inverse[0][k] + p[1] * self.inverse[1][k]) + p[2] * self.inverse[2][k]
    }

    /// The narrowest width over periodic axes (infinite when none is periodic).
    fn narrowest(&self) -> f64 {
        (0..3)
            .filter(|&k| self.periodic[k])
            .map(|k| self.widths[k])
            .fold(f64::INFINITY, f64::min)
    }
}

/// A point wrapped into the cell: its position (in `f64`), its fractional coordinates in the
/// cell (`0 <= f < 1` along periodic axes, `0` along open axes) and how many cell vectors the
/// wrap subtracted (`wrapped = p - count . rows`).
#[derive(Clone, Copy, Debug, Default)]
struct Wrapped {
    position: [f64; 3],
    fraction: [f64; 3],
    count: [i64; 3],
}

impl CellGeometry {
    /// Wraps `p` (finite), or names the axis and the fractional coordinate of a point too
    /// many cells away for its count to be exact.
    fn wrap(&self, p: [f64; 3]) -> Result<Wrapped, (usize, f64)> {
        let mut count = [0i64; 3];
        let mut fraction = [0.0; 3];
        for k in 0..3 {
            if !self.periodic[k] {
                continue;
            }
            let f = self.fractional(p, k);
            if f.is_nan() || f.abs() > MAX_IMAGES as f64 {
                return Err((k, f));
            }
            let floor = f.floor();
            // `f - floor(f)` lies in `0 ..= 1`: exact for `f >= 0`, while a tiny negative `f`
            // rounds up to exactly 1 (the point then lies on the upper face of the closed
            // cell).
            fraction[k] = f - floor;
            count[k] = floor as i64;
        }
        let moved = self.shift_vector(count);
        let position = std::array::from_fn(|c| p[c] - moved[c]);
        Ok(Wrapped {
            position,
            fraction,
            count,
        })
    }

    /// [`CellGeometry::wrap`] of a point that already lies in the cell (`0 <= f < 1` along
    /// every periodic axis, as nearly every point of a simulation does), or `None` for any
    /// other point (outside, NaN, or too far away: [`CellGeometry::wrap`] decides those).
    /// The result is bit for bit the general wrap's: its count is zero, its fraction is
    /// `f - floor(f) = f + 0` (only `-0` changes, to `+0`), and its position is
    /// `p - zero_shift`, with `zero_shift` the general wrap's shift of a zero count
    /// ([`CellGeometry::shift_vector`] of `[0; 3]`, whose components are `+0` or `-0`).
    /// No rounding call and no conversion: the wrap pass's common case, kept inline.
    #[inline(always)]
    fn wrap_inside(&self, p: [f64; 3], zero_shift: [f64; 3]) -> Option<Wrapped> {
        let f = [
            self.fractional(p, 0),
            self.fractional(p, 1),
            self.fractional(p, 2),
        ];
        // Written with `&` rather than `&&` so that the three axes compile to compares
        // without branches; a NaN fails both compares.
        let inside = |k: usize| !self.periodic[k] | ((f[k] >= 0.0) & (f[k] < 1.0));
        if !(inside(0) & inside(1) & inside(2)) {
            return None;
        }
        let fraction = |k: usize| if self.periodic[k] { f[k] + 0.0 } else { 0.0 };
        Some(Wrapped {
            position: [
                p[0] - zero_shift[0],
                p[1] - zero_shift[1],
                p[2] - zero_shift[2],
            ],
            fraction: [fraction(0), fraction(1), fraction(2)],
            count: [0; 3],
        })
    }
}

/// What the wrap of all points finds besides the wrapped points.
#[derive(Clone, Copy, Debug, Default)]
struct WrapSummary {
    /// The largest absolute coordinate of the caller's points.
    largest_input: f64,
    /// The largest absolute coordinate of the wrapped points.
    largest_wrapped: f64,
    /// Whether some point lies outside the cell (a nonzero wrap count).
    outside: bool,
    /// The first point that cannot be wrapped.
    first_failure: Option<usize>,
}

impl WrapSummary {
    /// The summary of two parts of the points.
    fn merge(self, other: Self) -> Self {
        Self {
            largest_input: self.largest_input.max(other.largest_input),
            largest_wrapped: self.largest_wrapped.max(other.largest_wrapped),
            outside: self.outside | other.outside,
            first_failure: match (self.first_failure, other.first_failure) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

/// Points per task of the wrap pass.
const WRAP_CHUNK: usize = 4096;

/// Wraps the points of one chunk of the wrap pass (`first` the index of its first point)
/// into `out`, and their wrapped positions in `T` into `originals`, and sums up what the rest
/// of the build needs ([`WrapSummary`]). A plain loop with the common case inline
/// ([`CellGeometry::wrap_inside`]): through rayon's item-by-item `fold` and an out-of-line
/// wrap, the points, the wrapped points and the summary went through the stack once per
/// point, and each of those copies was reloaded wider than it was stored (a failed store
/// forward per copy, most of the pass's samples).
fn wrap_chunk<T: Real>(
    geometry: &CellGeometry,
    zero_shift: [f64; 3],
    first: usize,
    points: &[[T; 3]],
    out: &mut [Wrapped],
    originals: &mut [[T; 3]],
) -> WrapSummary {
    debug_assert!(points.len() == out.len() && points.len() == originals.len());
    let extent = |p: [f64; 3]| p[0].abs().max(p[1].abs()).max(p[2].abs());
    let mut summary = WrapSummary::default();
    for (index, ((out, original), p)) in out.iter_mut().zip(originals).zip(points).enumerate() {
        let p = [p[0].to_f64(), p[1].to_f64(), p[2].to_f64()];
        let wrapped = match geometry.wrap_inside(p, zero_shift) {
            Some(wrapped) => wrapped,
            None => match geometry.wrap(p) {
                Ok(wrapped) => {
                    summary.outside |= wrapped.count != [0; 3];
                    wrapped
                }
                Err(_) => {
                    // The chunk's points are visited in order: the first failure stays.
                    summary.first_failure.get_or_insert(first + index);
                    continue;
                }
            },
        };
        summary.largest_input = summary.largest_input.max(extent(p));
        summary.largest_wrapped = summary.largest_wrapped.max(extent(wrapped.position));
        let position = wrapped.position;
        *original = [
            T::from_f64(position[0]),
            T::from_f64(position[1]),
            T::from_f64(position[2]),
        ];
        *out = wrapped;
    }
    summary
}

/// A ghost image: its point and its shift (in cell vectors) from the wrapped point.
type Ghost = (u32, [i32; 3]);

/// Pairs per task of the parallel output passes.
const OUTPUT_TASK: usize = 1 << 13;

/// Which pairs a list holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PairSet {
    /// Each pair once: `(i, j, S)` with `i < j`, or `i == j` with `S` in the positive half
    /// of the shifts (the first nonzero of `S0 + S1 + S2`, `S2`, `S1` is positive).
    #[default]
    Half,
    /// Both `(i, j, S)` and `(j, i, -S)`.
    Full,
}

/// In which order an [`ImagePairList`] holds its pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PairOrder {
    /// Sorted by `(i, j, shift)`.
    #[default]
    Sorted,
    /// The order in which the grid finds them (a full list holds the half list, then each of
    /// its pairs mirrored, in the same order): the same for any thread count, not sorted, and
    /// without the sort's cost.
    Found,
}

/// A pair the rule accepted, with its squared distance, before it is written out.
#[derive(Clone, Copy, Debug)]
struct Accepted {
    pair: PeriodicPair,
    distance_squared: f64,
}

impl Accepted {
    const EMPTY: Self = Self {
        pair: PeriodicPair {
            i: 0,
            j: 0,
            shift: [0; 3],
        },
        distance_squared: 0.0,
    };

    /// The same pair seen from `j`: `(j, i, -shift)`.
    fn mirrored(self) -> Self {
        Self {
            pair: mirrored(self.pair),
            distance_squared: self.distance_squared,
        }
    }
}

/// The pairs the filtering pass accepted from one work unit's candidates, in the grid's order:
/// each pair `(i, j)`, and where an output needs them its inner shift (the shift of `j`'s
/// image from `i`'s wrapped position, see [`AllImagesSearch::caller_shift`]) and the rule's
/// squared distance. The outputs are written from these, so no accepted pair is found and
/// mapped a second time.
#[derive(Clone, Debug, Default)]
struct KeptBlock {
    pairs: Vec<[u32; 2]>,
    /// Per pair, its inner shift (empty when no output needs the shifts).
    inner_shifts: Vec<[i32; 3]>,
    /// Per pair, the rule's squared distance (empty when no output needs the distances).
    distances_squared: Vec<f64>,
}

impl KeptBlock {
    fn len(&self) -> usize {
        self.pairs.len()
    }

    fn heap_bytes(&self) -> usize {
        size_of::<[u32; 2]>() * self.pairs.capacity()
            + size_of::<[i32; 3]>() * self.inner_shifts.capacity()
            + size_of::<f64>() * self.distances_squared.capacity()
    }
}

/// The pairs of an [`AllImagesSearch`] with their cell shifts, distances and vectors, sorted
/// by `(i, j, shift)` unless [`ImagePairList::set_order`] asks for [`PairOrder::Found`]; the
/// distances and vectors can be left out ([`ImagePairList::set_distances`],
/// [`ImagePairList::set_vectors`]). The buffers only grow, reuse one value across steps.
#[derive(Clone, Debug, Default)]
pub struct ImagePairList<T: Real> {
    pairs: Vec<PeriodicPair>,
    distances: Vec<T>,
    vectors: Vec<[T; 3]>,
    order: PairOrder,
    /// Whether `distances` and `vectors` stay empty (the defaults fill both).
    without_distances: bool,
    without_vectors: bool,
    /// The pairs of points and images the grid finds (scratch).
    candidates: PairList<T>,
    /// The accepted pairs of each work unit's candidates, in the grid's order (scratch).
    blocks: Vec<KeptBlock>,
    /// The accepted pairs in their final order, before they are written out (scratch).
    accepted: Vec<Accepted>,
}

impl<T: Real> ImagePairList<T> {
    /// The pairs: `x[j] - x[i] + shift . vectors` is the pair's vector for the caller's
    /// positions `x`.
    pub fn pairs(&self) -> &[PeriodicPair] {
        &self.pairs
    }

    /// The distance of each pair (the length of its vector), alongside `pairs()` (empty when
    /// the list was set not to hold them).
    pub fn distances(&self) -> &[T] {
        &self.distances
    }

    /// The vector of each pair, `x[j] - x[i] + shift . vectors`, alongside `pairs()` (empty
    /// when the list was set not to hold them).
    pub fn vectors(&self) -> &[[T; 3]] {
        &self.vectors
    }

    /// How many pairs there are (with [`AllImagesSearch::pair_columns`], which leaves
    /// `pairs()` empty: see [`ImagePairColumns`]).
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Tells whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Hands over the distances without a copy (empty when the list was set not to hold
    /// them); `distances()` is left empty.
    pub fn take_distances(&mut self) -> Vec<T> {
        std::mem::take(&mut self.distances)
    }

    /// Hands over the vectors without a copy (empty when the list was set not to hold
    /// them); `vectors()` is left empty.
    pub fn take_vectors(&mut self) -> Vec<[T; 3]> {
        std::mem::take(&mut self.vectors)
    }

    /// The bytes held by the list's buffers (capacity, not length), scratch included.
    pub fn heap_bytes(&self) -> usize {
        size_of::<PeriodicPair>() * self.pairs.capacity()
            + size_of::<T>() * self.distances.capacity()
            + size_of::<[T; 3]>() * self.vectors.capacity()
            + self.candidates.heap_bytes()
            + size_of::<Accepted>() * self.accepted.capacity()
            + self.blocks.iter().map(KeptBlock::heap_bytes).sum::<usize>()
    }

    /// Sets the order of the pairs (the default: [`PairOrder::Sorted`]).
    pub fn set_order(&mut self, order: PairOrder) {
        self.order = order;
    }

    /// The order of the pairs.
    pub fn order(&self) -> PairOrder {
        self.order
    }

    /// Sets whether [`AllImagesSearch::pairs`] fills [`ImagePairList::distances`] (the
    /// default); without them, `distances()` is empty and the search decides most pairs
    /// from the grid's own distance (see [`AllImagesSearch`]).
    pub fn set_distances(&mut self, wanted: bool) {
        self.without_distances = !wanted;
    }

    /// Sets whether [`AllImagesSearch::pairs`] fills [`ImagePairList::vectors`] (the
    /// default); without them, `vectors()` is empty.
    pub fn set_vectors(&mut self, wanted: bool) {
        self.without_vectors = !wanted;
    }
}

/// The pairs of an [`AllImagesSearch`] as columns, filled by
/// [`AllImagesSearch::pair_columns`]: `i` and `j` in the index type `I` a caller needs (for
/// instance `u64` for numpy), and the cell shifts as `[i32; 3]`, each written once, straight
/// from the search's kept candidates. [`ImagePairColumns::take`] hands the columns over
/// without a copy.
#[derive(Clone, Debug, Default)]
pub struct ImagePairColumns<I> {
    i: Vec<I>,
    j: Vec<I>,
    shifts: Vec<[i32; 3]>,
    with_indices: bool,
    with_shifts: bool,
}

impl<I: PairIndex> ImagePairColumns<I> {
    /// Columns that hold `i` and `j` when `indices` is set and the shifts when `shifts` is
    /// set (the columns not asked for stay empty and cost nothing).
    pub fn new(indices: bool, shifts: bool) -> Self {
        Self {
            i: Vec::new(),
            j: Vec::new(),
            shifts: Vec::new(),
            with_indices: indices,
            with_shifts: shifts,
        }
    }

    /// The first index of each pair (empty unless the indices were asked for).
    pub fn i(&self) -> &[I] {
        &self.i
    }

    /// The second index of each pair (empty unless the indices were asked for).
    pub fn j(&self) -> &[I] {
        &self.j
    }

    /// The cell shift of each pair (empty unless the shifts were asked for): the pair's
    /// vector is `x[j] - x[i] + shift . vectors`.
    pub fn shifts(&self) -> &[[i32; 3]] {
        &self.shifts
    }

    /// Hands over `(i, j, shifts)` without a copy; the columns are left empty.
    pub fn take(&mut self) -> (Vec<I>, Vec<I>, Vec<[i32; 3]>) {
        (
            std::mem::take(&mut self.i),
            std::mem::take(&mut self.j),
            std::mem::take(&mut self.shifts),
        )
    }

    fn clear(&mut self) {
        self.i.clear();
        self.j.clear();
        self.shifts.clear();
    }
}

/// The grid's pair `[a, b]` without the kernel's flag, and whether it carried it (its grid
/// distance is beyond the sure bound; see `Grid::pairs_by_unit`).
#[inline(always)]
fn unflagged([a, b]: [u32; 2]) -> ([u32; 2], bool) {
    ([a, b & !BAND_FLAG], b & BAND_FLAG != 0)
}

/// The largest value of `T` at or below `bound` (finite): a value `d` of `T` is at or below
/// it exactly when `d.to_f64() <= bound`.
fn round_down<T: Real>(bound: f64) -> T {
    let nearest = T::from_f64(bound);
    if nearest.to_f64() <= bound {
        nearest
    } else {
        // Only `f32` rounds (every `f64` is its own nearest): one step down in `f32`.
        T::from_f64(f64::from((nearest.to_f64() as f32).next_down()))
    }
}

/// A shift in 32 bits per axis, if it fits.
#[inline]
fn narrow_shift(shift: [i64; 3]) -> Option<[i32; 3]> {
    Some([
        i32::try_from(shift[0]).ok()?,
        i32::try_from(shift[1]).ok()?,
        i32::try_from(shift[2]).ok()?,
    ])
}

/// Fixed-radius search in a triclinic periodic cell with every image: all pairs `(i, j, S)`
/// of points and integer cell shifts `S` (zero along open axes) within the cutoff, also when
/// the cutoff exceeds half the cell's width (several shifts for one `i, j`, and a point with
/// its own images, `i == j` with `S != 0`).
///
/// The rule, for the caller's coordinates `x` and cell vectors `H` (rows), all in `f64`: the
/// vector `D = (x[j] - x[i]) + S . H`, per component
/// `(x[j] - x[i]) + ((S0 * H[0] + S1 * H[1]) + S2 * H[2])`, and the pair is reported iff
/// `(D0*D0 + D1*D1) + D2*D2 <= r * r`, with `r` the cutoff (widened to `f64`) — the same
/// `<=` as every other search of hhg. Exchanging `i` and `j` and negating `S` negates `D`
/// exactly (rounding to nearest is symmetric; only a zero component keeps its `+0`), so the
/// decision and the distance are the same from both sides and full lists are symmetric. The points may lie anywhere: `S` refers to the
/// caller's own positions, wrap counts included.
///
/// ```
/// use hhg_core::triclinic::{AllImagesSearch, ImagePairList, PairSet, TriclinicBox};
///
/// // A cell narrower than the cutoff along x: the point sees its own images at +-1 a.
/// let cell = TriclinicBox::new([[1.5f64, 0.0, 0.0], [0.5, 10.0, 0.0], [0.0, 0.0, 10.0]]);
/// let mut search = AllImagesSearch::new(2.0, cell)?;
/// search.build(&[[0.25, 1.0, 1.0]])?;
/// let mut pairs = ImagePairList::default();
/// search.pairs(PairSet::Half, &mut pairs)?;
/// let shifts: Vec<[i64; 3]> = pairs.pairs().iter().map(|p| p.shift).collect();
/// assert_eq!(shifts, [[1, 0, 0]]);
/// search.pairs(PairSet::Full, &mut pairs)?;
/// assert_eq!(pairs.len(), 2);
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct AllImagesSearch<T: Real> {
    cutoff: T,
    domain: TriclinicBox<T>,
    geometry: CellGeometry,
    /// The grid over points and ghosts, its radius the cutoff plus the rounding margin.
    grid: Grid<T>,
    /// The caller's points of the last build.
    points: Vec<[T; 3]>,
    /// Per point: the cell vectors its wrap subtracted.
    counts: Vec<[i64; 3]>,
    /// Whether every count is zero (the points lie in the cell): the shifts need no counts.
    all_inside: bool,
    /// Whether the last build made the minimum-image ghosts only (twice the grid's radius
    /// below every periodic width): each ghost's shift is then `0` or `1` per axis.
    minimum_image: bool,
    /// Per ghost: its point and its shift from the wrapped point.
    ghosts: Vec<Ghost>,
    /// Scratch: the wrapped points (in `f64`), and the points then ghosts (in `T`).
    wrapped: Vec<Wrapped>,
    extended: Vec<[T; 3]>,
    ghost_counts: Vec<u64>,
}

impl<T: Real> AllImagesSearch<T> {
    /// An empty search within `cutoff` in `domain`.
    ///
    /// Fails on a cutoff that is not finite and positive ([`Error::InvalidRadius`]), a
    /// non-finite cell entry ([`Error::NonFiniteCellVector`]) or periodic cell vectors that
    /// are linearly dependent or zero ([`Error::DegenerateCell`]).
    pub fn new(cutoff: T, domain: TriclinicBox<T>) -> Result<Self, Error> {
        check_radius(cutoff)?;
        let geometry = CellGeometry::new(&domain)?;
        Ok(Self {
            cutoff,
            domain,
            geometry,
            grid: Grid::new(cutoff)?,
            points: Vec::new(),
            counts: Vec::new(),
            all_inside: true,
            minimum_image: false,
            ghosts: Vec::new(),
            wrapped: Vec::new(),
            extended: Vec::new(),
            ghost_counts: Vec::new(),
        })
    }

    /// The cell.
    pub fn domain(&self) -> &TriclinicBox<T> {
        &self.domain
    }

    /// The cutoff.
    pub fn cutoff(&self) -> T {
        self.cutoff
    }

    /// How many points the last build held.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Tells whether the last build held no point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// How many ghost images the last build made.
    pub fn ghosts(&self) -> usize {
        self.ghosts.len()
    }

    /// The radius the grid searches with: the cutoff plus the margin that covers rounding.
    pub fn search_radius(&self) -> T {
        self.grid.radius()
    }

    /// Whether the last build took the minimum-image shortcut: twice the grid's radius
    /// ([`AllImagesSearch::search_radius`], the cutoff plus its rounding margin) was below
    /// every periodic width, so only the images one cell vector up of the points near the
    /// lower faces were added. The pairs are the same either way.
    pub fn minimum_image(&self) -> bool {
        self.minimum_image
    }

    /// Builds the search over `points` (anywhere; they are wrapped into the cell).
    ///
    /// Fails on a non-finite coordinate, too many points, a point more than
    /// [`MAX_IMAGES`] cell vectors away ([`Error::ImageCountOutOfRange`], its `axis` the cell
    /// vector), more than [`MAX_IMAGE_POINTS`] points and images together
    /// ([`Error::TooManyImages`]), or points and images spanning more cells than the grid
    /// numbers. A failed build leaves the search empty.
    pub fn build(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        self.points.clear();
        self.counts.clear();
        self.ghosts.clear();
        self.minimum_image = false;
        crate::columns::check_count(points.len())?;
        if let Some(error) = first_non_finite(Points::Aos(points)) {
            return Err(error);
        }
        let geometry = self.geometry;
        let n = points.len();
        // One parallel pass wraps the points, writes them (in `T`) as the first `n` points
        // of the grid's input, and gathers what the rest of the build needs: the largest
        // coordinates before and after the wrap (for the rounding margin), whether every
        // point lies in the cell, and the first point that cannot be wrapped. Every entry of
        // both buffers is overwritten (only their growth is written by `resize`).
        self.wrapped.resize(n, Wrapped::default());
        self.extended.resize(n, [T::default(); 3]);
        let zero_shift = geometry.shift_vector([0; 3]);
        let summary = self
            .wrapped
            .par_chunks_mut(WRAP_CHUNK)
            .zip(self.extended.par_chunks_mut(WRAP_CHUNK))
            .zip(points.par_chunks(WRAP_CHUNK))
            .enumerate()
            .map(|(chunk, ((out, originals), points))| {
                wrap_chunk(
                    &geometry,
                    zero_shift,
                    chunk * WRAP_CHUNK,
                    points,
                    out,
                    originals,
                )
            })
            .reduce(WrapSummary::default, WrapSummary::merge);
        if let Some(index) = summary.first_failure {
            let (axis, images) = geometry
                .wrap(points[index].map(T::to_f64))
                .expect_err("the point was just refused");
            return Err(Error::ImageCountOutOfRange {
                index,
                axis,
                value: points[index][axis].to_f64(),
                images,
                limit: MAX_IMAGES as f64,
            });
        }
        let (largest_input, largest_wrapped) = (summary.largest_input, summary.largest_wrapped);
        let search_radius = self.search_radius_for(largest_input, largest_wrapped)?;
        let reach: [f64; 3] = std::array::from_fn(|k| {
            if geometry.periodic[k] {
                search_radius / geometry.widths[k]
            } else {
                0.0
            }
        });
        // The minimum image: with twice the search radius below every periodic width, a pair
        // within the search radius has a fractional difference below one half along each
        // periodic axis, so its shift is `-1`, `0` or `1` there, and the point whose image is
        // moved up lies within `reach` of the lower face. The images one cell vector up of
        // such points then hold one copy of every pair with no axis on which both of its
        // members are moved (see `canonical`).
        let minimum_image = (0..3).all(|k| !geometry.periodic[k] || 2.0 * reach[k] < 1.0);
        // The shifts of a point's images within the search radius of the cell, per axis: its
        // fractional coordinate plus the shift lies in `-reach .. 1 + reach` (in the
        // minimum-image case only the upper side, `1 .. 1 + reach`).
        let shift_range = move |w: &Wrapped, k: usize| -> (i64, i64) {
            if !geometry.periodic[k] {
                return (0, 0);
            }
            let f = w.fraction[k];
            if minimum_image {
                // With `0 <= f < 1` and `reach < 1/2`, `ceil(-reach - f)` is `-1` or `0`
                // (raised to `0`: the upper side only) and `floor((1 + reach) - f)` is `0` or
                // `1`, decided here without the rounding calls.
                return (0, i64::from(1.0 + reach[k] - f >= 1.0));
            }
            let lowest = (-reach[k] - f).ceil() as i64;
            (lowest, (1.0 + reach[k] - f).floor() as i64)
        };
        let image_count = move |w: &Wrapped| -> u64 {
            (0..3)
                .map(|k| {
                    let (lo, hi) = shift_range(w, k);
                    (hi - lo + 1) as u64
                })
                .product::<u64>()
                - 1
        };
        // The first `n` counts are overwritten below; the last is the sum's end.
        self.ghost_counts.resize(n + 1, 0);
        self.ghost_counts[n] = 0;
        self.ghost_counts[..n]
            .par_iter_mut()
            .zip(self.wrapped.par_iter())
            .with_min_len(4096)
            .for_each(|(count, w)| *count = image_count(w));
        // The offsets of each point's ghosts (an exclusive prefix sum, checked before any
        // ghost is allocated).
        let mut total = 0u64;
        for count in self.ghost_counts.iter_mut() {
            let c = *count;
            *count = total;
            total = total.saturating_add(c);
        }
        let limit = MAX_IMAGE_POINTS.min(crate::columns::MAX_POINTS) as u64;
        if (n as u64).saturating_add(total) > limit {
            return Err(Error::TooManyImages {
                images: (n as u64).saturating_add(total) as f64,
                limit,
                cutoff: self.cutoff.to_f64(),
                width: geometry.narrowest(),
            });
        }
        let total = total as usize;
        // Points, then each point's ghosts in point order (the same whatever the threads).
        // The ghosts' entries are overwritten below (only the growth is written here).
        self.extended.resize(n + total, [T::default(); 3]);
        self.ghosts.resize(total, (0, [0; 3]));
        let ghost_points = &mut self.extended[n..];
        let starts = &self.ghost_counts;
        let wrapped = &self.wrapped;
        // Each point owns its range of the ghosts, `starts[k] .. starts[k + 1]` in both
        // buffers (most points own none: no per-point split of the buffers is made).
        let (ghost_points, ghost_slots) = (
            DisjointSlice::new(ghost_points),
            DisjointSlice::new(&mut self.ghosts[..]),
        );
        (0..n).into_par_iter().with_min_len(1024).for_each(|k| {
            let (start, end) = (starts[k] as usize, starts[k + 1] as usize);
            if start == end {
                return;
            }
            debug_assert!(start < end && end <= total, "the offsets are a prefix sum");
            // SAFETY: the ranges `starts[k] .. starts[k + 1]` of the points are disjoint
            // (an exclusive prefix sum of the counts, checked above to end at `total`,
            // the length of both buffers), and point `k` is this task's alone.
            let (out_points, out_ghosts) = unsafe {
                (
                    ghost_points.range_mut(start, end - start),
                    ghost_slots.range_mut(start, end - start),
                )
            };
            let w = &wrapped[k];
            let ranges: [(i64, i64); 3] = std::array::from_fn(|a| shift_range(w, a));
            let mut at = 0;
            for s0 in ranges[0].0..=ranges[0].1 {
                for s1 in ranges[1].0..=ranges[1].1 {
                    for s2 in ranges[2].0..=ranges[2].1 {
                        if (s0, s1, s2) == (0, 0, 0) {
                            continue;
                        }
                        let moved = geometry.shift_vector([s0, s1, s2]);
                        out_points[at] =
                            std::array::from_fn(|c| T::from_f64(w.position[c] + moved[c]));
                        out_ghosts[at] = (k as u32, [s0 as i32, s1 as i32, s2 as i32]);
                        at += 1;
                    }
                }
            }
            debug_assert_eq!(at, out_points.len());
        });
        if self.grid.radius().to_f64() != search_radius {
            self.grid = Grid::new(T::from_f64(search_radius))?;
        }
        let ghosts = &self.ghosts;
        if let Err(error) = self.grid.build(&self.extended) {
            let to_caller = |index: usize| match index.checked_sub(n) {
                Some(g) => ghosts[g].0 as usize,
                None => index,
            };
            return Err(match error {
                Error::NonFiniteCoordinate { index, axis, value } => Error::NonFiniteCoordinate {
                    index: to_caller(index),
                    axis,
                    value,
                },
                other => other.with_caller_point(to_caller),
            });
        }
        self.points.extend_from_slice(points);
        // The wrap counts are only read when some point lies outside the cell.
        self.all_inside = !summary.outside;
        if !self.all_inside {
            self.counts.extend(self.wrapped.iter().map(|w| w.count));
        }
        self.minimum_image = minimum_image;
        Ok(())
    }

    /// The grid's radius for this build: the cutoff plus a margin that bounds every rounding
    /// between the caller's coordinates and the images in `T` (the wrap and the shifts in
    /// `f64`, the images rounded to `T`, the grid's distance in `T`, and the rule's `D` in
    /// `f64`), so that every pair the rule accepts is among the pairs the grid finds. The
    /// margin grows with the images' reach, which grows with the radius: iterated to a fixed
    /// point, refused as too many images when it runs away.
    fn search_radius_for(&self, largest_input: f64, largest_wrapped: f64) -> Result<f64, Error> {
        let geometry = &self.geometry;
        let cutoff = self.cutoff.to_f64();
        let unit_t = if size_of::<T>() == 4 {
            f64::from(f32::EPSILON) / 2.0
        } else {
            f64::EPSILON / 2.0
        };
        let unit_f64 = f64::EPSILON / 2.0;
        let margin = |radius: f64| -> f64 {
            // The largest coordinate of an image: the wrapped point moved by at most
            // `ceil(radius / width) + 1` cell vectors per periodic axis.
            let reach: f64 = (0..3)
                .filter(|&k| geometry.periodic[k])
                .map(|k| ((radius / geometry.widths[k]).ceil() + 1.0) * geometry.row_extent[k])
                .sum();
            let largest_image = largest_wrapped + reach;
            8.0 * (unit_t * (largest_image + largest_wrapped + radius)
                + 16.0
                    * unit_f64
                    * (1.0 + geometry.condition)
                    * (largest_input + largest_wrapped + largest_image + radius))
        };
        let mut radius = cutoff + margin(cutoff);
        for _ in 0..32 {
            let needed = cutoff + margin(radius);
            if needed <= radius {
                // Rounded up in `T` so that the grid's radius is not below it.
                let in_t = T::from_f64(radius).to_f64();
                return Ok(if in_t >= radius {
                    in_t
                } else {
                    T::from_f64(radius * (1.0 + 4.0 * unit_t)).to_f64()
                });
            }
            radius = cutoff + 2.0 * (needed - cutoff);
            if !radius.is_finite() || radius / geometry.narrowest() > 1e6 {
                break;
            }
        }
        Err(Error::TooManyImages {
            images: f64::INFINITY,
            limit: MAX_IMAGE_POINTS as u64,
            cutoff,
            width: geometry.narrowest(),
        })
    }

    /// The pairs within the cutoff, into `out` (refilled), in the list's order (by default
    /// sorted by `(i, j, shift)`), with their distances and vectors unless the list was set
    /// not to hold them. The result does not depend on the thread count.
    ///
    /// Fails with [`Error::OutOfMemory`] when the candidate pairs cannot be allocated, and
    /// then leaves `out` empty.
    pub fn pairs(&self, set: PairSet, out: &mut ImagePairList<T>) -> Result<(), Error> {
        self.pairs_or_columns::<u32>(set, out, None)
    }

    /// Like [`AllImagesSearch::pairs`], with the pairs written as the columns `columns`
    /// asks for ([`ImagePairColumns`]: `i`, `j` in the caller's index type, the shifts in
    /// 32 bits) instead of [`PeriodicPair`]s: `out.pairs()` is left empty, and `out` gives
    /// the order and holds the distances and vectors as it is set to. Each column is
    /// written once, straight from the search's kept candidates.
    ///
    /// Fails like [`AllImagesSearch::pairs`], and with [`Error::ShiftOutOfRange`] when a
    /// shift does not fit in 32 bits (points more than `2^31` cell vectors away from the
    /// cell); `out` and `columns` are then left empty.
    pub fn pair_columns<I: PairIndex>(
        &self,
        set: PairSet,
        out: &mut ImagePairList<T>,
        columns: &mut ImagePairColumns<I>,
    ) -> Result<(), Error> {
        self.pairs_or_columns(set, out, Some(columns))
    }

    fn pairs_or_columns<I: PairIndex>(
        &self,
        set: PairSet,
        out: &mut ImagePairList<T>,
        mut columns: Option<&mut ImagePairColumns<I>>,
    ) -> Result<(), Error> {
        let result = self.pairs_into(set, out, columns.as_deref_mut());
        if result.is_err() || self.points.is_empty() {
            // Nothing built, or the last build failed (the grid may hold an older build).
            out.pairs.clear();
            out.distances.clear();
            out.vectors.clear();
            if let Some(columns) = columns {
                columns.clear();
            }
        }
        result
    }

    fn pairs_into<I: PairIndex>(
        &self,
        set: PairSet,
        out: &mut ImagePairList<T>,
        mut columns: Option<&mut ImagePairColumns<I>>,
    ) -> Result<(), Error> {
        if self.points.is_empty() {
            return Ok(());
        }
        let ImagePairList {
            pairs,
            distances,
            vectors,
            order,
            without_distances,
            without_vectors,
            candidates,
            blocks,
            accepted,
        } = out;
        // Without distances or vectors to report, a pair well inside the cutoff by the grid's
        // own distance is accepted without the rule: the search radius exceeds the cutoff by
        // a bound on the difference between the grid's distance and the rule's, so a grid
        // distance below the cutoff less twice that margin is a rule distance below the
        // cutoff. Only the pairs in the thin band around the cutoff are decided by the rule.
        let sure = if *without_distances && *without_vectors {
            let margin = self.grid.radius().to_f64() - self.cutoff.to_f64();
            let inner = self.cutoff.to_f64() - 2.0 * margin;
            (inner > 0.0).then_some(inner * inner)
        } else {
            None
        };
        let cutoff = self.cutoff.to_f64();
        let limit = cutoff * cutoff;
        let sorted = *order == PairOrder::Sorted;
        // What the outputs will read of each accepted pair besides `(i, j)`: the shifts for
        // `PeriodicPair`s, the sort, the vectors and the shift column; the rule's squared
        // distances for the distances.
        let keep_shifts =
            sorted || !*without_vectors || columns.as_deref().is_none_or(|c| c.with_shifts);
        let keep_distances = !*without_distances;
        // Pass 1: each work unit of the grid hands its candidates, still in cache, to the
        // filter, which keeps the pairs it accepts in the unit's block, in the grid's order,
        // with what the outputs need (the blocks' buffers are reused from call to call).
        let unit_count = self.grid.unit_count();
        blocks.truncate(unit_count);
        blocks.resize_with(unit_count, KeptBlock::default);
        // The kernel flags the candidates beyond the sure bound (`BAND_FLAG` on the larger
        // member), from the distance it computed: the bound in `T`, rounded down, so that a
        // grid distance at or below it in `T` is at or below `sure` exactly.
        let band_from = sure.map(|sure| round_down::<T>(sure));
        let filter = |kept: &mut KeptBlock, found: &[[u32; 2]]| {
            kept.pairs.clear();
            kept.pairs.reserve(found.len());
            kept.inner_shifts.clear();
            if keep_shifts {
                kept.inner_shifts.reserve(found.len());
            }
            kept.distances_squared.clear();
            if keep_distances {
                kept.distances_squared.reserve(found.len());
            }
            if let (Some(_), false, false) = (sure, keep_shifts, keep_distances) {
                // The binding's common case, `i` and `j` only: the kernel's flag decides
                // all but the pairs in the band around the cutoff, and only `(i, j)` is kept.
                // Most candidates are two original points well inside (no flag, so the larger
                // member is below `n`): kept as they are, into a local vector (its length
                // stays in a register).
                let n = self.points.len() as u32;
                let mut out = std::mem::take(&mut kept.pairs);
                for &candidate in found {
                    if candidate[1] < n {
                        out.push(candidate);
                        continue;
                    }
                    let (candidate, in_band) = unflagged(candidate);
                    let Some((pair, inner)) = self.canonical(candidate) else {
                        continue;
                    };
                    if !in_band || self.rule_distance_squared(pair, inner) <= limit {
                        out.push(pair);
                    }
                }
                kept.pairs = out;
                return;
            }
            for &candidate in found {
                let (candidate, in_band) = unflagged(candidate);
                let Some((pair, inner)) = self.canonical(candidate) else {
                    continue;
                };
                let distance_squared = match sure {
                    // `sure` is only set when no distance is asked for; without it, nothing
                    // is flagged, and the rule decides every pair.
                    Some(_) if !in_band => None,
                    _ => {
                        let d2 = self.rule_distance_squared(pair, inner);
                        if d2 > limit {
                            continue;
                        }
                        Some(d2)
                    }
                };
                kept.pairs.push(pair);
                if keep_shifts {
                    kept.inner_shifts.push(inner);
                }
                if keep_distances {
                    kept.distances_squared
                        .push(distance_squared.expect("the rule decided every pair"));
                }
            }
        };
        self.grid
            .pairs_by_unit(candidates, band_from, blocks, filter)?;
        let full = set == PairSet::Full;
        // The pair `at` of a block, with its shift for the caller's positions.
        let pair_of = |kept: &KeptBlock, at: usize| {
            let [i, j] = kept.pairs[at];
            PeriodicPair {
                i,
                j,
                shift: self.caller_shift(i, j, kept.inner_shifts[at]),
            }
        };
        match order {
            PairOrder::Found => {
                // Pass 2: the outputs straight from the kept pairs, each in one parallel pass
                // (a full list: the half list, then its mirrors in the same order).
                pairs.clear();
                match columns.as_deref_mut() {
                    Some(columns) => self.write_kept_columns(columns, blocks, full)?,
                    None => write_kept(pairs, blocks, full, pair_of, |kept, at| {
                        mirrored(pair_of(kept, at))
                    })?,
                }
                distances.clear();
                if !*without_distances {
                    let distance = |kept: &KeptBlock, at: usize| {
                        T::from_f64(kept.distances_squared[at].sqrt())
                    };
                    write_kept(distances, blocks, full, distance, distance)?;
                }
                vectors.clear();
                if !*without_vectors {
                    // The rule's vector from each side: the negated vector of the other side,
                    // except that a zero component is `+0` from both sides.
                    let vector =
                        |p: PeriodicPair| self.pair_vector(p.i, p.j, p.shift).map(T::from_f64);
                    write_kept(
                        vectors,
                        blocks,
                        full,
                        |kept, at| vector(pair_of(kept, at)),
                        |kept, at| vector(mirrored(pair_of(kept, at))),
                    )?;
                }
            }
            PairOrder::Sorted => {
                self.sort_accepted(blocks, full, &pair_of, accepted);
                pairs.clear();
                match columns {
                    Some(columns) => columns_from_sorted(columns, accepted)?,
                    None => pairs.par_extend(
                        accepted
                            .par_iter()
                            .with_min_len(OUTPUT_TASK)
                            .map(|pair| pair.pair),
                    ),
                }
                distances.clear();
                if !*without_distances {
                    distances.par_extend(
                        accepted
                            .par_iter()
                            .with_min_len(OUTPUT_TASK)
                            .map(|pair| T::from_f64(pair.distance_squared.sqrt())),
                    );
                }
                vectors.clear();
                if !*without_vectors {
                    vectors.par_extend(accepted.par_iter().with_min_len(OUTPUT_TASK).map(|pair| {
                        let p = pair.pair;
                        self.pair_vector(p.i, p.j, p.shift).map(T::from_f64)
                    }));
                }
            }
        }
        Ok(())
    }

    /// The pair `[i, j]` that the grid's pair `[a, b]` (indices into the points then the
    /// ghosts) stands for, with its inner shift (of `j`'s image from `i`'s wrapped position),
    /// when it is kept from this side: an original point first, then the canonical one of
    /// the two sides.
    #[inline(always)]
    fn canonical(&self, [a, b]: [u32; 2]) -> Option<([u32; 2], [i32; 3])> {
        let n = self.points.len();
        // The grid's pairs have `a < b`, and the ghosts are numbered after the points: two
        // points, a point and a ghost, or two ghosts.
        debug_assert!(a < b, "the grid's pairs are ordered");
        if (b as usize) < n {
            return Some(([a, b], [0; 3]));
        }
        if self.minimum_image {
            return self.minimum_image_canonical(a, b);
        }
        if (a as usize) >= n {
            return None;
        }
        // Each pair is kept where its first member is an original point: its other member is
        // then an image `inner` cells away from that point.
        let (j, inner) = self.ghosts[b as usize - n];
        let i = a;
        // The same pair is also found from its other member (`j, i, -inner`): keep the
        // canonical one of the two.
        if i > j || (i == j && !positive_half(inner.map(i64::from))) {
            return None;
        }
        Some(([i, j], inner))
    }

    /// [`AllImagesSearch::canonical`] for the minimum-image ghosts (each shifted by `0` or `1`
    /// cell vector per axis) of the grid's pair `[a, b]`, `b` a ghost: the pair of the two
    /// original points, with the inner shift `sb - sa` from the smaller one, kept from its
    /// one copy with no axis on which both members are shifted (the other copies are the
    /// same two points moved up together).
    #[inline(always)]
    fn minimum_image_canonical(&self, a: u32, b: u32) -> Option<([u32; 2], [i32; 3])> {
        let n = self.points.len();
        let (ob, sb) = self.ghosts[b as usize - n];
        let (oa, sa) = match (a as usize).checked_sub(n) {
            Some(g) => self.ghosts[g],
            None => (a, [0; 3]),
        };
        if (sa[0] & sb[0]) | (sa[1] & sb[1]) | (sa[2] & sb[2]) != 0 || oa == ob {
            // A copy moved up on a shared axis, or (never within the search radius, whose
            // double is below every width) a point and its own image.
            return None;
        }
        let inner = std::array::from_fn(|k| sb[k] - sa[k]);
        Some(if oa < ob {
            ([oa, ob], inner)
        } else {
            ([ob, oa], inner.map(|s| -s))
        })
    }

    /// The shift of the pair `(i, j)` for the caller's positions, from its inner shift: the
    /// inner shift plus the wrap counts of `i` less those of `j`.
    #[inline]
    fn caller_shift(&self, i: u32, j: u32, inner: [i32; 3]) -> [i64; 3] {
        let inner = inner.map(i64::from);
        if self.all_inside {
            inner
        } else {
            let (ci, cj) = (self.counts[i as usize], self.counts[j as usize]);
            std::array::from_fn(|k| inner[k] + ci[k] - cj[k])
        }
    }

    /// Refills the columns `columns` asks for from the kept pairs of `blocks` (as
    /// [`write_kept`] orders them: block after block, then the mirrors `(j, i, -S)`), all in
    /// one parallel pass.
    fn write_kept_columns<I: PairIndex>(
        &self,
        columns: &mut ImagePairColumns<I>,
        blocks: &[KeptBlock],
        full: bool,
    ) -> Result<(), Error> {
        let count = kept_count(blocks, full);
        let (indices, shifts) = (columns.with_indices, columns.with_shifts);
        let what = "the periodic pairs' columns";
        let index_count = if indices { count } else { 0 };
        reserve_output(&mut columns.i, index_count, what)?;
        reserve_output(&mut columns.j, index_count, what)?;
        reserve_output(&mut columns.shifts, if shifts { count } else { 0 }, what)?;
        let too_far = AtomicBool::new(false);
        let i_targets = block_targets(columns.i.spare_capacity_mut(), blocks, full, indices);
        let j_targets = block_targets(columns.j.spare_capacity_mut(), blocks, full, indices);
        let s_targets = block_targets(columns.shifts.spare_capacity_mut(), blocks, full, shifts);
        // The shift of a kept pair in 32 bits (with every point in the cell, its inner shift
        // as it is).
        let narrow = |kept: &KeptBlock, at: usize| -> Option<[i32; 3]> {
            let inner = kept.inner_shifts[at];
            if self.all_inside {
                return Some(inner);
            }
            let [i, j] = kept.pairs[at];
            narrow_shift(self.caller_shift(i, j, inner))
        };
        i_targets
            .into_par_iter()
            .zip(j_targets)
            .zip(s_targets)
            .zip(blocks.par_iter())
            .for_each(|(((i_out, j_out), s_out), kept)| {
                let (i_half, i_mirror) = i_out;
                let (j_half, j_mirror) = j_out;
                let (s_half, s_mirror) = s_out;
                if indices {
                    for ((i_slot, j_slot), &[i, j]) in
                        i_half.iter_mut().zip(j_half.iter_mut()).zip(&kept.pairs)
                    {
                        i_slot.write(I::from_u32(i));
                        j_slot.write(I::from_u32(j));
                    }
                    // The mirrors: `i` and `j` exchanged.
                    for ((i_slot, j_slot), &[i, j]) in i_mirror
                        .iter_mut()
                        .zip(j_mirror.iter_mut())
                        .zip(&kept.pairs)
                    {
                        i_slot.write(I::from_u32(j));
                        j_slot.write(I::from_u32(i));
                    }
                }
                if shifts {
                    for at in 0..kept.len() {
                        let shift = narrow(kept, at).unwrap_or_else(|| {
                            too_far.store(true, Ordering::Relaxed);
                            [0; 3]
                        });
                        s_half[at].write(shift);
                        if full {
                            s_mirror[at].write(shift.map(|s| -s));
                        }
                    }
                }
            });
        // SAFETY: as in `write_kept`, for each column asked for (the targets of the others
        // are empty and their lengths stay 0): every slot of its targets, which tile its
        // first `count` slots, was written above (the mirror targets are empty unless `full`).
        unsafe {
            columns.i.set_len(index_count);
            columns.j.set_len(index_count);
            if shifts {
                columns.shifts.set_len(count);
            }
        }
        if too_far.into_inner() {
            // The first pair whose shift does not fit, in the list's order.
            let (kept, at) = blocks
                .iter()
                .flat_map(|kept| (0..kept.len()).map(move |at| (kept, at)))
                .find(|&(kept, at)| narrow(kept, at).is_none())
                .expect("a shift did not fit");
            let [i, j] = kept.pairs[at];
            let shift = self.caller_shift(i, j, kept.inner_shifts[at]);
            return Err(shift_out_of_range(PeriodicPair { i, j, shift }));
        }
        Ok(())
    }

    /// The rule's squared distance of the pair `[i, j]` with inner shift `inner`,
    /// `(D0*D0 + D1*D1) + D2*D2` in `f64`.
    #[inline]
    fn rule_distance_squared(&self, [i, j]: [u32; 2], inner: [i32; 3]) -> f64 {
        let d = self.pair_vector(i, j, self.caller_shift(i, j, inner));
        (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2]
    }

    /// Gathers the kept pairs of `blocks` (and, for a full list, their mirrors) with their
    /// squared distances (`0` where none were kept) into `accepted`, sorted by
    /// `(i, j, shift)`: a counting sort by `i` (positions handed out by one atomic cursor per
    /// point), then each point's pairs sorted among themselves. The keys are unique, so the
    /// result is the same for any thread count.
    fn sort_accepted(
        &self,
        blocks: &[KeptBlock],
        full: bool,
        pair_of: &(impl Fn(&KeptBlock, usize) -> PeriodicPair + Sync),
        accepted: &mut Vec<Accepted>,
    ) {
        let n = self.points.len();
        let mut cursors: Vec<AtomicUsize> = Vec::with_capacity(n);
        cursors.resize_with(n, || AtomicUsize::new(0));
        blocks.par_iter().for_each(|kept| {
            for &[i, j] in &kept.pairs {
                cursors[i as usize].fetch_add(1, Ordering::Relaxed);
                if full {
                    cursors[j as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        let mut start = 0;
        for cursor in cursors.iter_mut() {
            let count = *cursor.get_mut();
            *cursor.get_mut() = start;
            start += count;
        }
        accepted.clear();
        accepted.resize(start, Accepted::EMPTY);
        let slots = DisjointSlice::new(accepted);
        let place = |pair: Accepted| {
            let at = cursors[pair.pair.i as usize].fetch_add(1, Ordering::Relaxed);
            // SAFETY: the cursor of point `i` starts at the first position of its range and
            // was counted above once for every pair placed here, so each `fetch_add` hands out
            // a distinct position inside the range (in bounds, written by this task alone).
            unsafe { slots.write(at, pair) };
        };
        blocks.par_iter().for_each(|kept| {
            for at in 0..kept.len() {
                let record = Accepted {
                    pair: pair_of(kept, at),
                    distance_squared: kept.distances_squared.get(at).copied().unwrap_or(0.0),
                };
                place(record);
                if full {
                    place(record.mirrored());
                }
            }
        });
        accepted
            .par_chunk_by_mut(|a, b| a.pair.i == b.pair.i)
            .for_each(|row| row.sort_unstable_by_key(|pair| pair.pair));
    }

    /// The rule's vector `(x[j] - x[i]) + shift . H`, in `f64`.
    #[inline]
    fn pair_vector(&self, i: u32, j: u32, shift: [i64; 3]) -> [f64; 3] {
        let (xi, xj) = (self.points[i as usize], self.points[j as usize]);
        let moved = self.geometry.shift_vector(shift);
        std::array::from_fn(|c| (xj[c].to_f64() - xi[c].to_f64()) + moved[c])
    }
}

/// `(j, i, -shift)`: the pair seen from its other member.
fn mirrored(pair: PeriodicPair) -> PeriodicPair {
    PeriodicPair {
        i: pair.j,
        j: pair.i,
        shift: pair.shift.map(|s| -s),
    }
}

/// One output's slots per block of kept candidates: the block's slots of the half list, and
/// (for a full list) those of its mirrors.
type BlockTargets<'a, V> = Vec<(&'a mut [MaybeUninit<V>], &'a mut [MaybeUninit<V>])>;

/// Empties `out` and makes room for `count` values (an error, not an abort, without the
/// memory).
fn reserve_output<V>(out: &mut Vec<V>, count: usize, what: &'static str) -> Result<(), Error> {
    out.clear();
    try_reserve_total(out, count, what)
}

/// Splits the first `half` (and, with `full`, the next `half`) slots of `spare` into the
/// targets of each block of `blocks` (`half` the blocks' total length); every target is
/// empty when `wanted` is not set.
fn block_targets<'a, V>(
    spare: &'a mut [MaybeUninit<V>],
    blocks: &[KeptBlock],
    full: bool,
    wanted: bool,
) -> BlockTargets<'a, V> {
    if !wanted {
        return blocks.iter().map(|_| (&mut [][..], &mut [][..])).collect();
    }
    let half: usize = blocks.iter().map(KeptBlock::len).sum();
    let (mut first, mut second) = spare.split_at_mut(half);
    let mut targets = Vec::with_capacity(blocks.len());
    for kept in blocks {
        let (target, tail) = first.split_at_mut(kept.len());
        first = tail;
        let mirror_target = if full {
            let (target, tail) = second.split_at_mut(kept.len());
            second = tail;
            target
        } else {
            &mut []
        };
        targets.push((target, mirror_target));
    }
    targets
}

/// The number of values an output of the kept pairs of `blocks` holds.
fn kept_count(blocks: &[KeptBlock], full: bool) -> usize {
    let half: usize = blocks.iter().map(KeptBlock::len).sum();
    if full { 2 * half } else { half }
}

/// Refills `out` with `value(block, at)` for every kept pair `at` of every block of
/// `blocks`, block after block, then (`full`) with `mirror(block, at)` for each in the same
/// order, written in parallel straight into the vector's spare capacity (no pass that first
/// fills it with placeholders).
fn write_kept<V: Send>(
    out: &mut Vec<V>,
    blocks: &[KeptBlock],
    full: bool,
    value: impl Fn(&KeptBlock, usize) -> V + Sync,
    mirror: impl Fn(&KeptBlock, usize) -> V + Sync,
) -> Result<(), Error> {
    let count = kept_count(blocks, full);
    reserve_output(out, count, "the periodic pairs' outputs")?;
    let targets = block_targets(out.spare_capacity_mut(), blocks, full, true);
    targets
        .into_par_iter()
        .zip(blocks.par_iter())
        .for_each(|((target, mirror_target), kept)| {
            for (at, slot) in target.iter_mut().enumerate() {
                slot.write(value(kept, at));
            }
            for (at, slot) in mirror_target.iter_mut().enumerate() {
                slot.write(mirror(kept, at));
            }
        });
    // SAFETY: the targets tile the first `count` slots of the spare capacity (each block's
    // target, and with `full` its mirror target, is as long as the block, and the blocks'
    // lengths sum to `half`), and the loops above wrote every slot of every target.
    unsafe { out.set_len(count) }
    Ok(())
}

/// Refills the columns `columns` asks for from the sorted pairs `accepted`.
fn columns_from_sorted<I: PairIndex>(
    columns: &mut ImagePairColumns<I>,
    accepted: &[Accepted],
) -> Result<(), Error> {
    columns.clear();
    let what = "the periodic pairs' columns";
    if columns.with_shifts {
        if let Some(bad) = accepted
            .par_iter()
            .find_first(|a| narrow_shift(a.pair.shift).is_none())
        {
            return Err(shift_out_of_range(bad.pair));
        }
        try_reserve_total(&mut columns.shifts, accepted.len(), what)?;
        columns.shifts.par_extend(
            accepted
                .par_iter()
                .with_min_len(OUTPUT_TASK)
                .map(|a| narrow_shift(a.pair.shift).unwrap_or([0; 3])),
        );
    }
    if columns.with_indices {
        try_reserve_total(&mut columns.i, accepted.len(), what)?;
        try_reserve_total(&mut columns.j, accepted.len(), what)?;
        accepted
            .par_iter()
            .with_min_len(OUTPUT_TASK)
            .map(|a| (I::from_u32(a.pair.i), I::from_u32(a.pair.j)))
            .unzip_into_vecs(&mut columns.i, &mut columns.j);
    }
    Ok(())
}

/// The error of a pair whose shift does not fit in 32 bits.
fn shift_out_of_range(pair: PeriodicPair) -> Error {
    Error::ShiftOutOfRange {
        i: pair.i,
        j: pair.j,
        shift: pair.shift,
    }
}

/// Whether a point's pair with its own image at `shift` (nonzero) is the one a half list
/// keeps: the first nonzero of `S0 + S1 + S2`, `S2`, `S1` is positive.
#[inline]
pub fn positive_half(shift: [i64; 3]) -> bool {
    let sum = shift[0] + shift[1] + shift[2];
    if sum != 0 {
        return sum > 0;
    }
    if shift[2] != 0 {
        return shift[2] > 0;
    }
    shift[1] > 0
}

#[cfg(test)]
mod tests {
    use hhg_testkit::SplitMix64;

    use super::{CellGeometry, TriclinicBox, Wrapped, round_down};

    /// The sure bound in `T` ([`round_down`]) is the largest value of `T` at or below the
    /// bound in `f64`, so that the kernel's compare in `T` decides exactly what the compare of
    /// the grid's distance widened to `f64` decided: bounds that are `f32` values, one `f64`
    /// ulp either side of them, the midpoints between neighbouring `f32` values (which round
    /// to even, up half of the time) and random bounds.
    #[test]
    fn the_sure_bound_rounds_down() {
        let mut rng = SplitMix64::new(0x7121_0023);
        for _ in 0..20_000 {
            let value = rng.range(1e-4, 16.0) as f32;
            let above = value.next_up();
            let midpoint = (f64::from(value) + f64::from(above)) / 2.0;
            for bound in [
                f64::from(value),
                f64::from(value).next_up(),
                f64::from(value).next_down(),
                midpoint,
                midpoint.next_up(),
                midpoint.next_down(),
                rng.range(1e-4, 16.0),
            ] {
                let single: f32 = round_down(bound);
                assert!(
                    f64::from(single) <= bound && f64::from(single.next_up()) > bound,
                    "f32 bound {bound:e}: {single:e}"
                );
                let double: f64 = round_down(bound);
                assert_eq!(double.to_bits(), bound.to_bits(), "f64 bound {bound:e}");
            }
        }
    }

    /// The bits of a wrapped point, for exact comparisons (the sign of a zero included).
    fn bits(w: &Wrapped) -> ([u64; 3], [u64; 3], [i64; 3]) {
        (
            w.position.map(f64::to_bits),
            w.fraction.map(f64::to_bits),
            w.count,
        )
    }

    /// The wrap's path for points inside the cell ([`CellGeometry::wrap_inside`]) against the
    /// general wrap, bit for bit, on cubic, skewed and partly open cells (one of them with
    /// rows whose components are all negative on an axis, so that the general wrap's shift
    /// of a zero count is `-0` there and turns a `-0` coordinate into `+0`): points at
    /// fractions `0`, `-0`, `1/2`, just below and at `1`, just below `0`, past `1` and far
    /// outside, random points, each coordinate also one ulp up and down, and zeros also as
    /// `-0`. The fast path takes exactly the points whose general wrap count is zero, and
    /// gives the general wrap's position, fraction and count.
    #[test]
    fn the_inside_wrap_is_the_general_wrap_bit_for_bit() {
        let mut rng = SplitMix64::new(0x7121_00f1);
        let cells: [([[f64; 3]; 3], [bool; 3]); 5] = [
            (
                [[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]],
                [true; 3],
            ),
            (
                [[2.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.25, 0.5, 2.0]],
                [true; 3],
            ),
            (
                [[-2.0, -0.0, -0.0], [-0.5, 2.0, 0.0], [-0.25, 0.5, 2.0]],
                [true; 3],
            ),
            (
                [[2.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [0.5, -0.5, 3.0]],
                [true, false, true],
            ),
            (
                [[5.0, 0.0, 0.0], [1.0, 4.0, 0.0], [0.0, 0.0, 1.0]],
                [true, true, false],
            ),
        ];
        let below_one = 1.0f64.next_down();
        let fractions = [
            0.0,
            -0.0,
            0.5,
            below_one,
            1.0,
            1.0f64.next_up(),
            -f64::EPSILON,
            -1e-300,
            3.25,
            -2.5,
            1e5,
        ];
        for (case, (rows, periodic)) in cells.into_iter().enumerate() {
            let mut domain = TriclinicBox::new(rows);
            domain.periodic = periodic;
            let geometry = CellGeometry::new(&domain).unwrap();
            let zero_shift = geometry.shift_vector([0; 3]);
            let at = |f: [f64; 3]| -> [f64; 3] {
                std::array::from_fn(|c| (f[0] * rows[0][c] + f[1] * rows[1][c]) + f[2] * rows[2][c])
            };
            let mut points = Vec::new();
            for f0 in fractions {
                for f1 in fractions {
                    for f2 in fractions {
                        points.push(at([f0, f1, f2]));
                    }
                }
            }
            for _ in 0..200 {
                points.push(at([rng.uniform(), rng.uniform(), rng.uniform()]));
            }
            for p in points.clone() {
                for c in 0..3 {
                    for nudged in [p[c].next_up(), p[c].next_down()] {
                        let mut q = p;
                        q[c] = nudged;
                        points.push(q);
                    }
                }
                if p.contains(&0.0) {
                    points.push(p.map(|v| if v == 0.0 { -0.0 } else { v }));
                }
            }
            let (mut inside, mut outside) = (0, 0);
            for p in points {
                let general = geometry.wrap(p);
                match geometry.wrap_inside(p, zero_shift) {
                    Some(fast) => {
                        let general = general.expect("a point inside wraps");
                        assert_eq!(bits(&fast), bits(&general), "cell {case}, point {p:?}");
                        inside += 1;
                    }
                    None => {
                        assert!(
                            general.is_err() || general.unwrap().count != [0; 3],
                            "cell {case}, point {p:?}: inside, yet not on the fast path"
                        );
                        outside += 1;
                    }
                }
            }
            assert!(
                inside > 500 && outside > 500,
                "cell {case}: {inside} in, {outside} out"
            );
        }
    }
}
