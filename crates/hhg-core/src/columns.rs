//! Structure-of-arrays point storage: 64-byte aligned coordinate columns padded to whole
//! lanes, and the parallel walk over chunks of several columns at once.

use aligned_vec::{AVec, ConstAlign};
use rayon::prelude::*;

use crate::error::Error;
use crate::real::{LANES, Real};

/// One 64-byte aligned column of values.
pub type Column<T> = AVec<T, ConstAlign<64>>;

/// Points per rayon task when copying or gathering columns: large enough that the task
/// overhead is negligible next to the memory traffic, small enough to balance two cores.
pub(crate) const COPY_CHUNK: usize = 1 << 14;

/// The largest point count a set may hold: indices are `u32`, and one value is kept free.
pub const MAX_POINTS: usize = u32::MAX as usize - 1;

/// Coordinate columns sharing one length, stored once: three (x, y, z) by default, `D` in
/// general (the broad phase's hierarchy in the plane stores two).
///
/// Each column holds `len` values followed by at least [`LANES`] padding values
/// ([`Real::PAD`], which never pass a distance test), so an 8-lane load that starts
/// before `len` stays inside the allocation.
#[derive(Debug)]
pub struct PointColumns<T: Real, const D: usize = 3> {
    columns: [Column<T>; D],
    len: usize,
}

impl<T: Real, const D: usize> Default for PointColumns<T, D> {
    fn default() -> Self {
        Self {
            columns: std::array::from_fn(|_| AVec::new(64)),
            len: 0,
        }
    }
}

/// The padded length of a column holding `len` values.
#[inline]
pub(crate) fn padded_len(len: usize) -> usize {
    len.div_ceil(LANES) * LANES + LANES
}

impl<T: Real, const D: usize> PointColumns<T, D> {
    /// How many points the columns hold.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Tells whether the columns hold no point.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many values each column can hold without reallocating.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.columns[0].capacity()
    }

    /// The columns including their padding lanes.
    #[inline]
    pub fn padded(&self) -> [&[T]; D] {
        self.columns.each_ref().map(|c| &c[..])
    }

    /// The columns without padding.
    #[inline]
    pub fn columns(&self) -> [&[T]; D] {
        self.columns.each_ref().map(|c| &c[..self.len])
    }

    /// Point `i`, one value per axis.
    #[inline]
    pub fn point(&self, i: usize) -> [T; D] {
        std::array::from_fn(|a| self.columns[a][i])
    }

    /// Sets the length to `len`, keeping the allocation when it is large enough, and
    /// writes the padding; the first `len` values are left to the caller to fill.
    pub(crate) fn set_len(&mut self, len: usize) {
        let padded = padded_len(len);
        for column in &mut self.columns {
            column.resize(padded, T::PAD);
            column[len..].fill(T::PAD);
        }
        self.len = len;
    }

    /// The columns, mutable and without padding.
    pub(crate) fn columns_mut(&mut self) -> [&mut [T]; D] {
        let len = self.len;
        self.columns.each_mut().map(|c| &mut c[..len])
    }
}

impl<T: Real> PointColumns<T> {
    /// The x column, without padding.
    #[inline]
    pub fn x(&self) -> &[T] {
        &self.columns[0][..self.len]
    }

    /// The y column, without padding.
    #[inline]
    pub fn y(&self) -> &[T] {
        &self.columns[1][..self.len]
    }

    /// The z column, without padding.
    #[inline]
    pub fn z(&self) -> &[T] {
        &self.columns[2][..self.len]
    }

    /// Copies array-of-structs points into the columns (in parallel).
    pub fn assign_aos(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        check_count(points.len())?;
        self.set_len(points.len());
        let [x, y, z] = self.columns_mut();
        x.par_chunks_mut(COPY_CHUNK)
            .zip(y.par_chunks_mut(COPY_CHUNK))
            .zip(z.par_chunks_mut(COPY_CHUNK))
            .zip(points.par_chunks(COPY_CHUNK))
            .for_each(|(((x, y), z), source)| {
                for (k, p) in source.iter().enumerate() {
                    x[k] = p[0];
                    y[k] = p[1];
                    z[k] = p[2];
                }
            });
        Ok(())
    }

    /// Gathers `points[order[k]]` into position `k` of the columns (in parallel): the
    /// sorted columns of a counting sort's `order`. Indices must be `< points.len()`.
    pub fn gather_from(&mut self, points: &[[T; 3]], order: &[u32]) -> Result<(), Error> {
        check_count(order.len())?;
        self.set_len(order.len());
        let [x, y, z] = self.columns_mut();
        x.par_chunks_mut(COPY_CHUNK)
            .zip(y.par_chunks_mut(COPY_CHUNK))
            .zip(z.par_chunks_mut(COPY_CHUNK))
            .zip(order.par_chunks(COPY_CHUNK))
            .for_each(|(((x, y), z), order)| {
                for (k, &i) in order.iter().enumerate() {
                    let p = points[i as usize];
                    x[k] = p[0];
                    y[k] = p[1];
                    z[k] = p[2];
                }
            });
        Ok(())
    }

    /// Copies separate coordinate slices into the columns.
    pub fn assign_soa(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<(), Error> {
        if x.len() != y.len() || x.len() != z.len() {
            return Err(Error::LengthMismatch {
                x: x.len(),
                y: y.len(),
                z: z.len(),
            });
        }
        check_count(x.len())?;
        self.set_len(x.len());
        let [cx, cy, cz] = self.columns_mut();
        cx.copy_from_slice(x);
        cy.copy_from_slice(y);
        cz.copy_from_slice(z);
        Ok(())
    }
}

/// Refuses point counts the `u32` index type cannot number ([`Error::TooManyPoints`]).
pub fn check_count(count: usize) -> Result<(), Error> {
    if count > MAX_POINTS {
        return Err(Error::TooManyPoints {
            count,
            limit: MAX_POINTS,
        });
    }
    Ok(())
}

/// Values that can be cut in two at a position and handed to two tasks: slices, arrays of
/// mutable slices (columns), and pairs of such. See [`par_chunks`].
pub(crate) trait Split: Sized + Send {
    /// How many positions the value spans.
    fn span(&self) -> usize;
    /// The positions `..mid` and `mid..`.
    fn split(self, mid: usize) -> (Self, Self);
}

impl<T: Sync> Split for &[T] {
    fn span(&self) -> usize {
        self.len()
    }

    fn split(self, mid: usize) -> (Self, Self) {
        self.split_at(mid)
    }
}

impl<T: Send, const D: usize> Split for [&mut [T]; D] {
    fn span(&self) -> usize {
        self[0].len()
    }

    fn split(self, mid: usize) -> (Self, Self) {
        let mut low = self;
        let high = std::array::from_fn(|a| {
            let (l, h) = std::mem::take(&mut low[a]).split_at_mut(mid);
            low[a] = l;
            h
        });
        (low, high)
    }
}

impl<A: Split, B: Split> Split for (A, B) {
    fn span(&self) -> usize {
        self.0.span()
    }

    fn split(self, mid: usize) -> (Self, Self) {
        let (a0, a1) = self.0.split(mid);
        let (b0, b1) = self.1.split(mid);
        ((a0, b0), (a1, b1))
    }
}

/// Calls `f(start, part)` in parallel for the parts of `value` at positions
/// `start..start + chunk` (the last one shorter), cut by halving at multiples of `chunk`:
/// the parallel walk over several columns of any count at once, without allocating (rayon's
/// `zip` takes a fixed number of iterators). Every part of a pair must span as many
/// positions as the first.
pub(crate) fn par_chunks<S: Split>(value: S, chunk: usize, f: &(impl Fn(usize, S) + Sync)) {
    fn walk<S: Split>(value: S, start: usize, chunk: usize, f: &(impl Fn(usize, S) + Sync)) {
        let len = value.span();
        if len <= chunk {
            if len > 0 {
                f(start, value);
            }
            return;
        }
        let mid = len.div_ceil(chunk) / 2 * chunk;
        let (low, high) = value.split(mid);
        rayon::join(
            || walk(low, start, chunk, f),
            || walk(high, start + mid, chunk, f),
        );
    }
    walk(value, 0, chunk, f);
}
