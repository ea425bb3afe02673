//! Periodic boundaries: per-axis periodic orthorhombic boxes (rectangles in the plane), pairs
//! by the minimum-image rule reported with their image shift, for box lengths that need not be
//! a multiple of the cell size.
//!
//! The points are wrapped into the box, points within one cell of a lower periodic face get
//! ghost images shifted up by one box length on those axes (up to 7 per point near the lower
//! corner in 3-D, 3 in the plane), and the grid searches points and ghosts together: the same
//! code runs on the 3-D [`Grid`] ([`PeriodicSearch`]) and on the plane's [`Grid2`]
//! ([`crate::plane::PeriodicSearch2`]), through [`PeriodicGrid`]. Every minimum-image pair
//! then appears exactly once with no axis on which both of its members are shifted (its
//! canonical representation), and both of its members' lists come from that one distance, so
//! the result is symmetric and does not depend on how the caller numbers the points.

use rayon::prelude::*;

use crate::error::Error;
use crate::geometry::{CELL_MARGIN, Kernel};
use crate::grid::{Grid, check_radius};
use crate::lists::NeighborLists;
use crate::memory::{check_cap, try_reserve_total};
use crate::pairs::PairList;
use crate::parallel::{DisjointSlice, exclusive_scan};
use crate::plane::Grid2;
use crate::real::{Real, distance_squared_in as distance_squared};

/// An orthorhombic box `origin .. origin + lengths` of `D` axes (3 by default; 2 for the
/// plane's rectangles), periodic along the axes where `periodic` is true (open along the
/// others).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeriodicBox<T, const D: usize = 3> {
    /// The lower corner.
    pub origin: [T; D],
    /// The edge lengths (used along periodic axes only).
    pub lengths: [T; D],
    /// Which axes are periodic.
    pub periodic: [bool; D],
}

impl<T: Real, const D: usize> PeriodicBox<T, D> {
    /// A box periodic along every axis.
    pub fn cubic(origin: [T; D], lengths: [T; D]) -> Self {
        Self {
            origin,
            lengths,
            periodic: [true; D],
        }
    }

    /// The point wrapped into the box along the periodic axes, and how many box lengths it
    /// was moved by (`p = wrapped - count * L` up to rounding). The wrap, in `T`:
    /// `x' = x - L * floor((x - o) / L)`, then `x' = o` where rounding left `x'` outside
    /// `o .. o + L` (one more length down when it reached `o + L`); along open axes `x' = x`.
    ///
    /// The count is exact (the integer `floor` above, in `f64`) up to [`MAX_IMAGES`] box
    /// lengths; farther away, where the box length is below the spacing of the point's own
    /// coordinate so that its place in the box is lost to rounding, the point is refused with
    /// [`Error::ImageCountOutOfRange`] (naming point 0, the point given).
    pub fn wrap(&self, p: [T; D]) -> Result<([T; D], [i64; D]), Error> {
        self.wrap_point(p)
            .map_err(|(axis, images)| image_error(0, axis, p[axis], images))
    }

    /// [`PeriodicBox::wrap`], failing with the axis and the image count (in `f64`) of a
    /// count beyond [`MAX_IMAGES`].
    #[inline]
    fn wrap_point(&self, p: [T; D]) -> Result<([T; D], [i64; D]), (usize, f64)> {
        let mut out = p;
        let mut count = [0i64; D];
        for a in 0..D {
            if !self.periodic[a] {
                continue;
            }
            let (o, l) = (self.origin[a], self.lengths[a]);
            if p[a] >= o && p[a] < o + l {
                // Already inside (the common case): `k = 0` leaves `x` as it is.
                continue;
            }
            let mut k = ((p[a] - o).to_f64() / l.to_f64()).floor();
            let mut x = p[a] - l * T::from_f64(k);
            if x.to_f64() >= (o + l).to_f64() {
                // Rounding reached the upper face: one more box length down.
                x = o;
                k += 1.0;
            } else if x.to_f64() < o.to_f64() {
                x = o;
            }
            if k.abs() > MAX_IMAGES as f64 {
                return Err((a, -k));
            }
            out[a] = x;
            // Exact: `k` is an integer of at most 53 bits.
            count[a] = -(k as i64);
        }
        Ok((out, count))
    }

    /// The image of `p` shifted by `shift` box lengths, in `T`: `p + shift * L`.
    #[inline]
    pub fn shifted(&self, p: [T; D], shift: [i64; D]) -> [T; D] {
        std::array::from_fn(|a| {
            if shift[a] == 0 {
                p[a]
            } else {
                p[a] + T::from_f64(shift[a] as f64) * self.lengths[a]
            }
        })
    }

    /// The squared distance between `a` and the image `b + shift * L` of `b`, computed
    /// symmetrically: per axis, `a` is moved up by `L` where `shift` is `-1` and `b` where it
    /// is `1` (in `T`, as [`PeriodicBox::shifted`] does), then
    /// `(dx*dx + dy*dy) + dz*dz` (`dx*dx + dy*dy` in the plane). Exchanging `a` and `b` and
    /// negating `shift` gives the same value bit for bit. This is the distance
    /// [`PeriodicSearch`] decides pairs by.
    #[inline]
    pub fn image_distance_squared(&self, a: [T; D], b: [T; D], shift: [i64; D]) -> T {
        let up_a = shift.map(|s| i64::from(s < 0));
        let up_b = shift.map(|s| i64::from(s > 0));
        distance_squared(self.shifted(a, up_a), self.shifted(b, up_b))
    }

    fn check(&self, radius: T) -> Result<(), Error> {
        for a in 0..D {
            if !self.periodic[a] {
                continue;
            }
            let (o, l) = (self.origin[a].to_f64(), self.lengths[a].to_f64());
            if !o.is_finite() {
                return Err(Error::InvalidConfig {
                    name: "periodic box origin",
                    value: o,
                    expected: "finite",
                });
            }
            if !(l.is_finite() && l > 2.0 * radius.to_f64() * (1.0 + CELL_MARGIN)) {
                return Err(Error::InvalidConfig {
                    name: "periodic box length",
                    value: l,
                    expected: "finite and more than twice the radius (the minimum image must be unique)",
                });
            }
            // The upper face, in `T`: the wrapped points lie below it and their ghost images
            // less than a radius above it (whose square is finite, so far below the
            // precision's range: they stay finite where the face is).
            let top = self.origin[a] + self.lengths[a];
            if !top.is_finite() {
                return Err(Error::InvalidConfig {
                    name: "periodic box extent",
                    value: o + l,
                    expected: "an upper face (origin + length) finite in the input precision",
                });
            }
        }
        // Checked once every axis is known to be finite, so that an overflowing extent is
        // named as such.
        for a in 0..D {
            if !self.periodic[a] {
                continue;
            }
            let (o, l) = (self.origin[a].to_f64(), self.lengths[a].to_f64());
            // The box must stand out of the rounding of the coordinates along it: a ghost is
            // its point moved up by `L` in `T`, which rounds by up to half the spacing of `T`
            // there, and a box not above twice the radius by that spacing (and more) leaves a
            // point within the radius of its own image (at an origin of 1e15 in `f32` a box
            // of 2500 rounds away entirely: the ghost equals its point). The spacing is
            // bounded by the largest coordinate of a ghost, below `|o| + 2 L`, times the
            // precision's epsilon.
            let spacing = (o.abs() + 2.0 * l) * epsilon::<T>();
            if l - spacing <= 2.0 * radius.to_f64() * (1.0 + CELL_MARGIN) {
                return Err(Error::InvalidConfig {
                    name: "periodic box length",
                    value: l,
                    expected: "more than twice the radius plus the spacing of the input \
                               precision's values at the box (a shorter box is lost to \
                               rounding there: a point would be its own neighbour image)",
                });
            }
        }
        Ok(())
    }
}

/// The first NaN or infinite coordinate of `points` as an error naming its point and axis.
fn first_non_finite<T: Real, const D: usize>(points: &[[T; D]]) -> Option<Error> {
    let finite = points
        .par_iter()
        .with_min_len(4096)
        .all(|p| p.iter().all(|v| v.is_finite()));
    if finite {
        return None;
    }
    points.iter().enumerate().find_map(|(index, p)| {
        (0..D)
            .find(|&axis| !p[axis].is_finite())
            .map(|axis| Error::NonFiniteCoordinate {
                index,
                axis,
                value: p[axis].to_f64(),
            })
    })
}

/// The spacing of the values of `T` next to 1 (its machine epsilon), widened to `f64`: the
/// spacing next to a value `x` is at most `|x|` times it.
fn epsilon<T: Real>() -> f64 {
    if size_of::<T>() == 4 {
        f64::from(f32::EPSILON)
    } else {
        f64::EPSILON
    }
}

/// A neighbour pair under periodic boundaries: `x[j] + shift * L - x[i]` (with `x` the
/// wrapped positions, see [`PeriodicBox::wrap`], and the shift then expressed for the caller's
/// own positions) is the minimum-image vector from `i` to `j`, `i < j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeriodicPair<const D: usize = 3> {
    /// The smaller index.
    pub i: u32,
    /// The larger index.
    pub j: u32,
    /// The image of `j` (in box lengths per axis) closest to `i`, for the caller's positions
    /// (at most `2 * MAX_IMAGES + 1` in magnitude).
    pub shift: [i64; D],
}

/// The minimum-image pairs of a [`PeriodicSearch`] (each `i < j`, with its shift), their
/// squared distances when asked for, and the scratch of the search that fills them: cleared
/// and refilled by each call, its buffers only grow.
#[derive(Clone, Debug)]
pub struct PeriodicPairList<T: Real, const D: usize = 3> {
    pairs: Vec<PeriodicPair<D>>,
    distances: Vec<T>,
    has_distances: bool,
    /// The pairs of points and ghost images that the grid finds, mapped into `pairs`.
    image_pairs: PairList<T>,
    /// The most pairs the list may hold ([`PeriodicPairList::set_max_pairs`]).
    max_pairs: Option<usize>,
}

impl<T: Real, const D: usize> Default for PeriodicPairList<T, D> {
    fn default() -> Self {
        Self {
            pairs: Vec::new(),
            distances: Vec::new(),
            has_distances: false,
            image_pairs: PairList::default(),
            max_pairs: None,
        }
    }
}

impl<T: Real, const D: usize> PeriodicPairList<T, D> {
    /// The pairs, `i < j` in each.
    pub fn pairs(&self) -> &[PeriodicPair<D>] {
        &self.pairs
    }

    /// Squared minimum-image distances alongside `pairs()`, when they were requested
    /// ([`PeriodicSearch::pairs_with_distances`]).
    pub fn distances_squared(&self) -> Option<&[T]> {
        self.has_distances.then_some(&self.distances[..])
    }

    /// How many pairs there are.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Tells whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The bytes held by the list's buffers (capacity, not length), scratch included.
    pub fn heap_bytes(&self) -> usize {
        size_of::<PeriodicPair<D>>() * self.pairs.capacity()
            + size_of::<T>() * self.distances.capacity()
            + self.image_pairs.heap_bytes()
    }

    /// Caps the list at `max_pairs` pairs (`None`, the default: no cap); see
    /// [`PairList::set_max_pairs`]. The search fails with [`Error::OutputTooLarge`] past it.
    pub fn set_max_pairs(&mut self, max_pairs: Option<usize>) {
        self.max_pairs = max_pairs;
    }

    /// The cap set by [`PeriodicPairList::set_max_pairs`].
    pub fn max_pairs(&self) -> Option<usize> {
        self.max_pairs
    }
}

/// The grid a periodic search of `D` axes runs on: [`Grid`] in 3-D, [`Grid2`] in the plane.
/// Sealed: the searches rely on what these two grids promise (exactly the pairs within the
/// radius, the distance summed from the first axis on, lists ascending).
pub trait PeriodicGrid<T: Real, const D: usize>:
    sealed::Sealed + std::fmt::Debug + Sized + Send + Sync
{
    /// An empty grid for the radius.
    #[doc(hidden)]
    fn with_radius(radius: T) -> Result<Self, Error>;
    /// Builds the grid over the points.
    #[doc(hidden)]
    fn build_points(&mut self, points: &[[T; D]]) -> Result<(), Error>;
    /// Every pair within the radius into `out`, with its squared distance where the grid
    /// gives them and `with_distances` asks (`out.distances_squared()` tells).
    #[doc(hidden)]
    fn find_pairs(&self, out: &mut PairList<T>, with_distances: bool) -> Result<(), Error>;
    /// Every point's neighbour list, ascending.
    #[doc(hidden)]
    fn find_lists(&self, lists: &mut NeighborLists<T>) -> Result<(), Error>;
    /// Chooses the kernel.
    #[doc(hidden)]
    fn choose_kernel(&mut self, kernel: Kernel);
    /// The kernel chosen.
    #[doc(hidden)]
    fn chosen_kernel(&self) -> Kernel;
}

mod sealed {
    /// Only the crate's grids are [`super::PeriodicGrid`]s.
    pub trait Sealed {}
    impl<T: crate::real::Real> Sealed for crate::grid::Grid<T> {}
    impl<T: crate::real::Real> Sealed for crate::plane::Grid2<T> {}
}

impl<T: Real> PeriodicGrid<T, 3> for Grid<T> {
    fn with_radius(radius: T) -> Result<Self, Error> {
        Grid::new(radius)
    }
    fn build_points(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        self.build(points)
    }
    fn find_pairs(&self, out: &mut PairList<T>, with_distances: bool) -> Result<(), Error> {
        if with_distances {
            self.pairs_with_distances(out)
        } else {
            self.pairs(out)
        }
    }
    fn find_lists(&self, lists: &mut NeighborLists<T>) -> Result<(), Error> {
        self.neighbor_lists(lists)
    }
    fn choose_kernel(&mut self, kernel: Kernel) {
        self.set_kernel(kernel);
    }
    fn chosen_kernel(&self) -> Kernel {
        self.kernel()
    }
}

impl<T: Real> PeriodicGrid<T, 2> for Grid2<T> {
    fn with_radius(radius: T) -> Result<Self, Error> {
        Grid2::new(radius)
    }
    fn build_points(&mut self, points: &[[T; 2]]) -> Result<(), Error> {
        self.build(points)
    }
    /// The plane's grid gives no distances: the search computes them from the images.
    fn find_pairs(&self, out: &mut PairList<T>, _with_distances: bool) -> Result<(), Error> {
        self.pairs(out)
    }
    fn find_lists(&self, lists: &mut NeighborLists<T>) -> Result<(), Error> {
        self.neighbor_lists(lists)
    }
    fn choose_kernel(&mut self, kernel: Kernel) {
        self.set_kernel(kernel);
    }
    fn chosen_kernel(&self) -> Kernel {
        self.kernel()
    }
}

/// Fixed-radius search in a periodic box of 3 axes: the minimum-image pairs within the radius
/// (see [`PeriodicSearchOn`], whose 3-D form this is).
pub type PeriodicSearch<T> = PeriodicSearchOn<T, Grid<T>, 3>;

/// Fixed-radius search in a periodic box: the minimum-image pairs within the radius, on the
/// grid `G` of `D` axes ([`PeriodicSearch`] in 3-D, [`crate::plane::PeriodicSearch2`] in the
/// plane).
///
/// A pair is reported iff [`PeriodicBox::image_distance_squared`]`(w[i], w[j], s) <= r * r`
/// for the shift `s` in `{-1, 0, 1}` per periodic axis (`0` along open axes) of the wrapped
/// positions `w`: per axis, whichever of the two points needs moving up by `L` is moved up,
/// so the distance is the same from either side. The box must be longer than `2 r` along
/// periodic axes, so at most one shift passes.
///
/// ```
/// use hhg_core::periodic::{PeriodicBox, PeriodicPairList, PeriodicSearch};
///
/// let points = [[0.1f64, 5.0, 5.0], [9.8, 5.0, 5.0], [5.0, 5.0, 5.0]];
/// let mut search = PeriodicSearch::new(1.0, PeriodicBox::cubic([0.0; 3], [10.0; 3]))?;
/// search.build(&points)?;
/// let mut pairs = PeriodicPairList::default();
/// search.pairs(&mut pairs)?;
/// assert_eq!(pairs.len(), 1);
/// let pair = pairs.pairs()[0];
/// assert_eq!((pair.i, pair.j, pair.shift), (0, 1, [-1, 0, 0]));
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct PeriodicSearchOn<T: Real, G, const D: usize> {
    radius: T,
    domain: PeriodicBox<T, D>,
    grid: G,
    /// The wrapped points and their ghosts of the last good build.
    images: Images<T, D>,
    /// The images of the build under way, swapped with `images` once it succeeded.
    staged: Images<T, D>,
    /// Scratch of the prefix sum over the ghost counts.
    scan: Vec<u32>,
    len: usize,
}

/// The points of a build wrapped into the box, and their ghost images.
#[derive(Debug)]
struct Images<T, const D: usize> {
    /// Wrapped points, then ghosts.
    extended: Vec<[T; D]>,
    /// Per ghost: its original point and its shift (relative to the wrapped point; each
    /// component 0 or 1). The ghosts of a point are consecutive, in point order.
    ghosts: Vec<(u32, [i32; D])>,
    /// Per point `k`: its ghosts are `ghost_starts[k]..ghost_starts[k + 1]`.
    ghost_starts: Vec<u32>,
    /// Per point: the box lengths its wrap moved it by; empty when no point was moved.
    wraps: Vec<[i64; D]>,
}

impl<T, const D: usize> Default for Images<T, D> {
    fn default() -> Self {
        Self {
            extended: Vec::new(),
            ghosts: Vec::new(),
            ghost_starts: Vec::new(),
            wraps: Vec::new(),
        }
    }
}

impl<T: Real, G: PeriodicGrid<T, D>, const D: usize> PeriodicSearchOn<T, G, D> {
    /// An empty search within `radius` in `domain`.
    ///
    /// Fails with [`Error::InvalidRadius`] for a bad radius and with [`Error::InvalidConfig`]
    /// for a periodic axis whose origin is not finite, whose length is not finite or not more
    /// than twice the radius plus the spacing of `T`'s values at the box (a box below the
    /// coordinates' resolution, e.g. 2500 long at an origin of 1e15 in `f32`, where a point
    /// and its image round to the same value), or whose upper face overflows `T`.
    pub fn new(radius: T, domain: PeriodicBox<T, D>) -> Result<Self, Error> {
        check_radius(radius)?;
        domain.check(radius)?;
        Ok(Self {
            radius,
            domain,
            grid: G::with_radius(radius)?,
            images: Images::default(),
            staged: Images::default(),
            scan: Vec::new(),
            len: 0,
        })
    }

    /// The box.
    pub fn domain(&self) -> &PeriodicBox<T, D> {
        &self.domain
    }

    /// The radius.
    pub fn radius(&self) -> T {
        self.radius
    }

    /// Chooses the SIMD (default) or the scalar reference kernel of the grid behind the
    /// search; both give identical results.
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.grid.choose_kernel(kernel);
    }

    /// The kernel the searches run.
    pub fn kernel(&self) -> Kernel {
        self.grid.chosen_kernel()
    }

    /// How many points the last build held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Tells whether the last build held no point.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many ghost images the last build made.
    pub fn ghosts(&self) -> usize {
        self.images.ghosts.len()
    }

    /// Builds the search over `points` (anywhere; they are wrapped into the box).
    ///
    /// Fails on a non-finite coordinate, too many points, a point too far outside the box
    /// for its image count (see [`PeriodicBox::wrap`]), or points (with their ghost images)
    /// spanning more cells than the grid numbers along an open axis or a long box; each error
    /// names a caller's point. The checks of the points come before anything changes.
    pub fn build(&mut self, points: &[[T; D]]) -> Result<(), Error> {
        crate::columns::check_count(points.len())?;
        if let Some(error) = first_non_finite(points) {
            return Err(error);
        }
        let domain = self.domain;
        // A solver usually keeps its points inside the box: then they are copied as they are
        // and `wraps` stays empty (no point was moved).
        let inside = points
            .par_iter()
            .with_min_len(4096)
            .all(|&p| domain.wrap_point(p) == Ok((p, [0; D])));
        if !inside
            && let Some(k) = points
                .par_iter()
                .with_min_len(4096)
                .position_first(|&p| domain.wrap_point(p).is_err())
        {
            let (axis, images) = domain
                .wrap_point(points[k])
                .expect_err("the point was just refused");
            return Err(image_error(k, axis, points[k][axis], images));
        }
        let n = points.len();
        // Everything is made in the staged buffers and swapped in once the grid is built, so
        // that a failed build leaves the search as it was.
        let staged = &mut self.staged;
        // The wrapped points first, in the caller's order (the buffers only grow).
        staged.extended.clear();
        staged.wraps.clear();
        staged.ghosts.clear();
        if inside {
            staged.extended.extend_from_slice(points);
        } else {
            staged.extended.resize(n, [T::default(); D]);
            staged.wraps.resize(n, [0; D]);
            staged
                .extended
                .par_iter_mut()
                .zip(staged.wraps.par_iter_mut())
                .zip(points.par_iter())
                .with_min_len(4096)
                .for_each(|((wrapped, count), &p)| {
                    (*wrapped, *count) = domain.wrap_point(p).expect("every point was checked");
                });
        }
        // Ghosts of the points within the margin of a lower periodic face: one per non-empty
        // set of such axes, shifted up by one length on each of them. Counted per point,
        // placed by a prefix sum, written in parallel (in point order whatever the threads).
        let margin = self.radius.to_f64() * (1.0 + CELL_MARGIN) * (1.0 + CELL_MARGIN);
        let origin = domain.origin.map(T::to_f64);
        let near_faces = |p: &[T; D]| -> u32 {
            (0..D).fold(0, |near, a| {
                near | u32::from(domain.periodic[a] && p[a].to_f64() - origin[a] <= margin) << a
            })
        };
        staged.ghost_starts.clear();
        staged.ghost_starts.resize(n + 1, 0);
        staged.ghost_starts[..n]
            .par_iter_mut()
            .zip(staged.extended[..n].par_iter())
            .with_min_len(4096)
            .for_each(|(count, p)| *count = (1 << near_faces(p).count_ones()) - 1);
        let total = exclusive_scan(&mut staged.ghost_starts[..n], &mut self.scan) as usize;
        staged.ghost_starts[n] = total as u32;
        crate::columns::check_count(n + total)?;
        staged.extended.resize(n + total, [T::default(); D]);
        staged.ghosts.resize(total, (0, [0; D]));
        let (points, ghost_points) = staged.extended.split_at_mut(n);
        let ghost_points = DisjointSlice::new(ghost_points);
        let ghosts = DisjointSlice::new(&mut staged.ghosts);
        let starts = &staged.ghost_starts;
        (0..n).into_par_iter().with_min_len(4096).for_each(|k| {
            let near = near_faces(&points[k]);
            if near == 0 {
                // Most points are near no lower face.
                return;
            }
            let mut at = starts[k] as usize;
            for axes in 1u32..1 << D {
                if axes & !near != 0 {
                    continue;
                }
                let shift: [i32; D] = std::array::from_fn(|a| ((axes >> a) & 1) as i32);
                // SAFETY: point k owns ghost slots starts[k]..starts[k + 1] (the prefix sum of
                // the counts just made with the same `near_faces`), which lie below `total`.
                unsafe {
                    ghost_points.write(at, domain.shifted(points[k], shift.map(i64::from)));
                    ghosts.write(at, (k as u32, shift));
                }
                at += 1;
            }
            debug_assert_eq!(at, starts[k + 1] as usize);
        });
        // An error names the point or ghost at the far end of the points; a ghost is named
        // by its point.
        if let Err(error) = self.grid.build_points(&staged.extended) {
            return Err(error.with_caller_point(|index| match index.checked_sub(n) {
                Some(g) => staged.ghosts[g].0 as usize,
                None => index,
            }));
        }
        std::mem::swap(&mut self.images, &mut self.staged);
        self.len = n;
        Ok(())
    }

    /// The minimum-image pairs within the radius, `i < j`, each once, into `out` (refilled,
    /// without distances), in an order that does not depend on the thread count.
    ///
    /// Fails with [`Error::OutOfMemory`] or [`Error::OutputTooLarge`] (past the list's cap,
    /// [`PeriodicPairList::set_max_pairs`]) and then leaves `out` empty.
    pub fn pairs(&self, out: &mut PeriodicPairList<T, D>) -> Result<(), Error> {
        self.fill_pairs(out, false)
    }

    /// [`PeriodicSearch::pairs`] with the squared minimum-image distance of each pair
    /// ([`PeriodicBox::image_distance_squared`] of the wrapped positions).
    pub fn pairs_with_distances(&self, out: &mut PeriodicPairList<T, D>) -> Result<(), Error> {
        self.fill_pairs(out, true)
    }

    /// The pairs of points and ghosts that the grid finds, each kept once (its canonical
    /// copy) and mapped to the caller's points and shift.
    fn fill_pairs(
        &self,
        out: &mut PeriodicPairList<T, D>,
        with_distances: bool,
    ) -> Result<(), Error> {
        let result = self.fill_pairs_inner(out, with_distances);
        if result.is_err() {
            out.pairs.clear();
            out.distances.clear();
            out.image_pairs.clear();
        }
        result
    }

    fn fill_pairs_inner(
        &self,
        out: &mut PeriodicPairList<T, D>,
        with_distances: bool,
    ) -> Result<(), Error> {
        let PeriodicPairList {
            pairs: out_pairs,
            distances: out_distances,
            has_distances,
            image_pairs,
            max_pairs,
        } = out;
        out_pairs.clear();
        out_distances.clear();
        // A pair is found at most once per combination of axes on which both of its members
        // are shifted (8 in 3-D): the images' pairs may take that many times the cap.
        image_pairs.set_max_pairs(max_pairs.map(|cap| cap.saturating_mul(1 << D)));
        self.grid.find_pairs(image_pairs, with_distances)?;
        *has_distances = with_distances;
        let image_distances = image_pairs.distances_squared();
        // Room for every image pair: the canonical copies are at most as many.
        let room = image_pairs.len();
        try_reserve_total(out_pairs, room, "the periodic pairs")?;
        if with_distances {
            try_reserve_total(out_distances, room, "the periodic pair distances")?;
        }
        for (k, &[a, b]) in image_pairs.pairs().iter().enumerate() {
            let (sa, sb) = (self.shift_of(a), self.shift_of(b));
            if !canonical(sa, sb) {
                // A copy of a pair that is also found with neither member shifted on that axis.
                continue;
            }
            let (oa, ob) = (self.original(a), self.original(b));
            debug_assert_ne!(oa, ob, "two images of one point within the radius");
            // The image of `b`'s wrapped point near `a`'s is shifted by `sb - sa`.
            let (i, j, internal): (u32, u32, [i64; D]) = if oa < ob {
                (oa, ob, std::array::from_fn(|k| i64::from(sb[k] - sa[k])))
            } else {
                (ob, oa, std::array::from_fn(|k| i64::from(sa[k] - sb[k])))
            };
            // The shift for the caller's positions: x_j + s L - x_i with x = w - wrap L (no
            // overflow: each wrap is at most `MAX_IMAGES` in magnitude).
            let wrap = |k: u32| self.images.wraps.get(k as usize).copied().unwrap_or([0; D]);
            let (wi, wj) = (wrap(i), wrap(j));
            let shift = std::array::from_fn(|k| internal[k] + wj[k] - wi[k]);
            out_pairs.push(PeriodicPair { i, j, shift });
            if with_distances {
                // The grid's distance where it gives them (the same sum: see
                // `distance_squared`), else that of the two images.
                out_distances.push(match image_distances {
                    Some(image_distances) => image_distances[k],
                    None => {
                        let extended = &self.images.extended;
                        distance_squared(extended[a as usize], extended[b as usize])
                    }
                });
            }
        }
        check_cap("pairs", out_pairs.len(), max_pairs.unwrap_or(usize::MAX))
    }

    /// The shift of a point (none) or ghost of the extended set.
    #[inline]
    fn shift_of(&self, e: u32) -> [i32; D] {
        match (e as usize).checked_sub(self.len) {
            Some(g) => self.images.ghosts[g].1,
            None => [0; D],
        }
    }

    /// The original point of a point or ghost of the extended set.
    #[inline]
    fn original(&self, e: u32) -> u32 {
        match (e as usize).checked_sub(self.len) {
            Some(g) => self.images.ghosts[g].0,
            None => e,
        }
    }

    /// Per-point neighbour lists (indices only, both directions, ascending).
    ///
    /// The grid gathers the lists of every point and ghost in one pass; a point's list is
    /// then its own list plus the canonical entries of its ghosts' lists, each mapped to its
    /// original point and sorted where a ghost took part.
    ///
    /// Fails for want of memory or past the lists' cap
    /// ([`NeighborLists::set_max_entries`]); `lists` then holds no list.
    pub fn neighbor_lists(&self, lists: &mut NeighborLists<T>) -> Result<(), Error> {
        let mut extended = lists.images.0.take().unwrap_or_default();
        // Each entry is found at most once per combination of shifted axes (8 in 3-D).
        extended.set_max_entries(lists.max_entries().map(|cap| cap.saturating_mul(1 << D)));
        let result = self
            .grid
            .find_lists(&mut extended)
            .and_then(|()| self.merge_image_lists(&extended, lists));
        if result.is_err() {
            lists.clear_after_failure();
        }
        lists.images.0 = Some(extended);
        result
    }

    /// The points' lists from `extended`, the lists of every point and ghost.
    fn merge_image_lists(
        &self,
        extended: &NeighborLists<T>,
        lists: &mut NeighborLists<T>,
    ) -> Result<(), Error> {
        let n = self.len;
        let ghosts_of = |i: usize| {
            let (lo, hi) = (self.images.ghost_starts[i], self.images.ghost_starts[i + 1]);
            (lo..hi).map(move |g| (n as u32 + g, self.images.ghosts[g as usize].1))
        };
        let count = |i: usize| {
            let mut count = extended.neighbors(i).len();
            for (e, shift) in ghosts_of(i) {
                count += extended
                    .neighbors(e as usize)
                    .iter()
                    .filter(|&&f| canonical(shift, self.shift_of(f)))
                    .count();
            }
            count
        };
        let fill = |i: usize, out: &mut [u32]| {
            let own = extended.neighbors(i);
            let mut at = own.len();
            out[..at].copy_from_slice(own);
            // Ghost entries end the ascending list (they are numbered after the points).
            let mut mixed = false;
            for entry in out[own.partition_point(|&f| (f as usize) < n)..at].iter_mut() {
                *entry = self.original(*entry);
                mixed = true;
            }
            for (e, shift) in ghosts_of(i) {
                for &f in extended.neighbors(e as usize) {
                    if canonical(shift, self.shift_of(f)) {
                        out[at] = self.original(f);
                        at += 1;
                        mixed = true;
                    }
                }
            }
            debug_assert_eq!(at, out.len());
            if mixed {
                out.sort_unstable();
            }
        };
        lists.assign_with(n, count, fill)
    }
}

/// The most box lengths [`PeriodicBox::wrap`] moves a point by along an axis, `2^53`: up to
/// this count every integer is exact in `f64`, and beyond it the box length is below the
/// spacing of the point's own coordinate (in `f64`; in `f32` that is so from `2^24`).
pub const MAX_IMAGES: i64 = 1 << 53;

/// The error of point `index` (in the caller's numbering), `images` box lengths away from
/// the box along `axis`.
fn image_error<T: Real>(index: usize, axis: usize, value: T, images: f64) -> Error {
    Error::ImageCountOutOfRange {
        index,
        axis,
        value: value.to_f64(),
        images,
        limit: MAX_IMAGES as f64,
    }
}

/// Whether a pair of images with shifts `a` and `b` (components 0 or 1) is the pair's
/// canonical representation: no axis on which both are shifted.
#[inline]
fn canonical<const D: usize>(a: [i32; D], b: [i32; D]) -> bool {
    (0..D).fold(0, |both, k| both | (a[k] & b[k])) == 0
}
