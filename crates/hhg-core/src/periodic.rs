//! Periodic boundaries: per-axis periodic orthorhombic boxes, pairs by the minimum-image
//! rule reported with their image shift, for box lengths that need not be a multiple of the
//! cell size.
//!
//! The points are wrapped into the box, points within one cell of a periodic face get ghost
//! images shifted by one box length (up to 7 per point near a corner, more in a box barely wider than the margin), and the grid searches
//! points and ghosts together. A pair of a point and a ghost is kept only from the side of
//! the smaller original index, so each minimum-image pair is reported once.

use rayon::prelude::*;

use crate::error::Error;
use crate::geometry::{CELL_MARGIN, Points, first_non_finite};
use crate::grid::{Grid, check_radius};
use crate::lists::NeighborLists;
use crate::pairs::PairList;
use crate::real::Real;

/// An orthorhombic box `origin .. origin + lengths`, periodic along the axes where
/// `periodic` is true (open along the others).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeriodicBox<T> {
    /// The lower corner.
    pub origin: [T; 3],
    /// The edge lengths (used along periodic axes only).
    pub lengths: [T; 3],
    /// Which axes are periodic.
    pub periodic: [bool; 3],
}

impl<T: Real> PeriodicBox<T> {
    /// A box periodic along all three axes.
    pub fn cubic(origin: [T; 3], lengths: [T; 3]) -> Self {
        Self {
            origin,
            lengths,
            periodic: [true; 3],
        }
    }

    /// The point wrapped into the box along the periodic axes, and how many box lengths it
    /// was moved by (`p = wrapped - count * L` up to rounding). The wrap, in `T`:
    /// `x' = x - L * floor((x - o) / L)`, then `x' = o` where rounding left `x'` outside
    /// `o .. o + L` (one more length down when it reached `o + L`); along open axes `x' = x`.
    pub fn wrap(&self, p: [T; 3]) -> ([T; 3], [i32; 3]) {
        let mut out = p;
        let mut count = [0i32; 3];
        for a in 0..3 {
            if !self.periodic[a] {
                continue;
            }
            let (o, l) = (self.origin[a], self.lengths[a]);
            let mut k = ((p[a] - o).to_f64() / l.to_f64()).floor();
            let mut x = p[a] - l * T::from_f64(k);
            if x.to_f64() >= (o + l).to_f64() {
                // Rounding reached the upper face: one more box length down.
                x = o;
                k += 1.0;
            } else if x.to_f64() < o.to_f64() {
                x = o;
            }
            out[a] = x;
            count[a] = -(k as i32);
        }
        (out, count)
    }

    /// The image of `p` shifted by `shift` box lengths, in `T`: `p + shift * L`.
    #[inline]
    pub fn shifted(&self, p: [T; 3], shift: [i32; 3]) -> [T; 3] {
        std::array::from_fn(|a| {
            if shift[a] == 0 {
                p[a]
            } else {
                p[a] + T::from_f64(f64::from(shift[a])) * self.lengths[a]
            }
        })
    }

    fn check(&self, radius: T) -> Result<(), Error> {
        for a in 0..3 {
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
        }
        Ok(())
    }
}

/// A neighbour pair under periodic boundaries: `x[j] + shift * L - x[i]` (with `x` the
/// wrapped positions, see [`PeriodicBox::wrap`], and the shift then expressed for the caller's
/// own positions) is the minimum-image vector from `i` to `j`, `i < j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeriodicPair {
    /// The smaller index.
    pub i: u32,
    /// The larger index.
    pub j: u32,
    /// The image of `j` (in box lengths per axis) closest to `i`, for the caller's positions.
    pub shift: [i32; 3],
}

/// Fixed-radius search in a periodic box: the minimum-image pairs within the radius.
///
/// A pair is reported iff `distance_squared(w[i], box.shifted(w[j], s)) <= r * r` for the
/// shift `s` in `{-1, 0, 1}` per periodic axis (`0` along open axes) of the wrapped positions
/// `w`; the box must be longer than `2 r` along periodic axes, so at most one shift passes.
///
/// ```
/// use hhg_core::periodic::{PeriodicBox, PeriodicSearch};
///
/// let points = [[0.1f64, 5.0, 5.0], [9.8, 5.0, 5.0], [5.0, 5.0, 5.0]];
/// let mut search = PeriodicSearch::new(1.0, PeriodicBox::cubic([0.0; 3], [10.0; 3]))?;
/// search.build(&points)?;
/// let mut pairs = Vec::new();
/// search.pairs(&mut pairs);
/// assert_eq!(pairs.len(), 1);
/// assert_eq!((pairs[0].i, pairs[0].j, pairs[0].shift), (0, 1, [-1, 0, 0]));
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct PeriodicSearch<T: Real> {
    radius: T,
    domain: PeriodicBox<T>,
    grid: Grid<T>,
    /// Wrapped points, then ghosts.
    extended: Vec<[T; 3]>,
    /// Per ghost: its original point and its shift (relative to the wrapped point).
    ghosts: Vec<(u32, [i32; 3])>,
    /// Per point: the box lengths its wrap moved it by.
    wraps: Vec<[i32; 3]>,
    len: usize,
    pair_list: std::sync::Mutex<PairList<T>>,
}

impl<T: Real> PeriodicSearch<T> {
    /// An empty search within `radius` in `domain`.
    pub fn new(radius: T, domain: PeriodicBox<T>) -> Result<Self, Error> {
        check_radius(radius)?;
        domain.check(radius)?;
        Ok(Self {
            radius,
            domain,
            grid: Grid::new(radius)?,
            extended: Vec::new(),
            ghosts: Vec::new(),
            wraps: Vec::new(),
            len: 0,
            pair_list: std::sync::Mutex::new(PairList::default()),
        })
    }

    /// The box.
    pub fn domain(&self) -> &PeriodicBox<T> {
        &self.domain
    }

    /// The radius.
    pub fn radius(&self) -> T {
        self.radius
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
        self.ghosts.len()
    }

    /// Builds the search over `points` (anywhere; they are wrapped into the box).
    pub fn build(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        crate::columns::check_count(points.len())?;
        if let Some(error) = first_non_finite(Points::Aos(points)) {
            return Err(error);
        }
        let n = points.len();
        self.len = n;
        let domain = self.domain;
        // The wrapped points first, in the caller's order (the buffers only grow).
        self.extended.clear();
        self.wraps.clear();
        self.ghosts.clear();
        self.extended.resize(n, [T::default(); 3]);
        self.wraps.resize(n, [0; 3]);
        self.extended
            .par_iter_mut()
            .zip(self.wraps.par_iter_mut())
            .zip(points.par_iter())
            .with_min_len(4096)
            .for_each(|((wrapped, count), &p)| (*wrapped, *count) = domain.wrap(p));
        // Ghosts of the points within the margin of a periodic face.
        let margin = self.radius.to_f64() * (1.0 + CELL_MARGIN) * (1.0 + CELL_MARGIN);
        for k in 0..n {
            let p = self.extended[k];
            let mut options = [[0i32; 3]; 3];
            let mut counts = [1usize; 3];
            for a in 0..3 {
                if !domain.periodic[a] {
                    continue;
                }
                let low = p[a].to_f64() - domain.origin[a].to_f64();
                let high = (domain.origin[a] + domain.lengths[a]).to_f64() - p[a].to_f64();
                if low <= margin {
                    options[a][counts[a]] = 1;
                    counts[a] += 1;
                }
                if high <= margin {
                    options[a][counts[a]] = -1;
                    counts[a] += 1;
                }
            }
            for x in 0..counts[0] {
                for y in 0..counts[1] {
                    for z in 0..counts[2] {
                        let shift = [options[0][x], options[1][y], options[2][z]];
                        if shift == [0; 3] {
                            continue;
                        }
                        self.extended.push(domain.shifted(p, shift));
                        self.ghosts.push((k as u32, shift));
                    }
                }
            }
        }
        self.grid.build(&self.extended)
    }

    /// The minimum-image pairs within the radius, `i < j`, each once, into `out` (cleared
    /// first), in an order that does not depend on the thread count.
    pub fn pairs(&self, out: &mut Vec<PeriodicPair>) {
        let mut list = self
            .pair_list
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.grid.pairs(&mut list);
        out.clear();
        let n = self.len as u32;
        for &[a, b] in list.pairs() {
            // `a < b`, so a ghost pair has its ghost in `b`; two ghosts are dropped.
            if a >= n {
                continue;
            }
            let (j, internal) = if b < n {
                (b, [0; 3])
            } else {
                self.ghosts[(b - n) as usize]
            };
            if b >= n && a >= j {
                // The same pair is found from the side of `j`'s original and `a`'s ghost.
                continue;
            }
            // The shift for the caller's positions: x_j + s L - x_a with x = w - wrap L.
            let (wa, wj) = (self.wraps[a as usize], self.wraps[j as usize]);
            let shift = std::array::from_fn(|k| internal[k] + wj[k] - wa[k]);
            out.push(PeriodicPair { i: a, j, shift });
        }
    }

    /// Per-point neighbour lists (indices only, both directions, ascending).
    ///
    /// The grid gathers the lists of the real points against points and ghosts in one pass
    /// (ghost lists are never made); a ghost entry is then replaced by its original point,
    /// and a list that had any is sorted again. A minimum-image neighbour appears once, as
    /// the point itself or as one of its ghosts, because the box is longer than `2 r`.
    pub fn neighbor_lists(&self, lists: &mut NeighborLists<T>) {
        self.grid.leading_lists(self.len, lists, false);
        let n = self.len as u32;
        let ghosts = &self.ghosts;
        lists.for_each_list_mut(|list| {
            // Ghosts are numbered after the real points, so they end the ascending list.
            let real = list.partition_point(|&e| e < n);
            if real == list.len() {
                return;
            }
            for entry in &mut list[real..] {
                *entry = ghosts[(*entry - n) as usize].0;
            }
            list.sort_unstable();
        });
    }
}
