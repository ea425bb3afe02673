//! Structure-of-arrays point storage: three 64-byte aligned coordinate columns padded to whole lanes.

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

/// Three coordinate columns sharing one length, stored once.
///
/// Each column holds `len` values followed by at least [`LANES`] padding values
/// ([`Real::PAD`], which never pass a distance test), so an 8-lane load that starts
/// before `len` stays inside the allocation.
#[derive(Debug)]
pub struct PointColumns<T: Real> {
    x: Column<T>,
    y: Column<T>,
    z: Column<T>,
    len: usize,
}

impl<T: Real> Default for PointColumns<T> {
    fn default() -> Self {
        Self {
            x: AVec::new(64),
            y: AVec::new(64),
            z: AVec::new(64),
            len: 0,
        }
    }
}

/// The padded length of a column holding `len` values.
#[inline]
pub(crate) fn padded_len(len: usize) -> usize {
    len.div_ceil(LANES) * LANES + LANES
}

impl<T: Real> PointColumns<T> {
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

    /// The x column, without padding.
    #[inline]
    pub fn x(&self) -> &[T] {
        &self.x[..self.len]
    }

    /// The y column, without padding.
    #[inline]
    pub fn y(&self) -> &[T] {
        &self.y[..self.len]
    }

    /// The z column, without padding.
    #[inline]
    pub fn z(&self) -> &[T] {
        &self.z[..self.len]
    }

    /// How many values each column can hold without reallocating.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.x.capacity()
    }

    /// The three columns including their padding lanes.
    #[inline]
    pub fn padded(&self) -> [&[T]; 3] {
        [&self.x, &self.y, &self.z]
    }

    /// Point `i` as `[x, y, z]`.
    #[inline]
    pub fn point(&self, i: usize) -> [T; 3] {
        [self.x[i], self.y[i], self.z[i]]
    }

    /// Sets the length to `len`, keeping the allocation when it is large enough, and
    /// writes the padding; the first `len` values are left to the caller to fill.
    pub(crate) fn set_len(&mut self, len: usize) {
        let padded = padded_len(len);
        for column in [&mut self.x, &mut self.y, &mut self.z] {
            column.resize(padded, T::PAD);
            column[len..].fill(T::PAD);
        }
        self.len = len;
    }

    /// The three columns, mutable and without padding.
    pub(crate) fn columns_mut(&mut self) -> [&mut [T]; 3] {
        let len = self.len;
        [&mut self.x[..len], &mut self.y[..len], &mut self.z[..len]]
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
