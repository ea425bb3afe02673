//! Updating a built hierarchy in place (thesis Algorithm 2): a box that keeps its level and
//! its bucket is rewritten where it is; a box that leaves them is taken out (its entry
//! becomes NaN, which never overlaps) for the caller to hold elsewhere.

use crate::geometry::CELL_MARGIN;
use crate::real::Real;

use super::build::exponent_of;
use super::{Aabb, BroadPhase};

/// Where a box of the last build is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    /// Sorted position `pos` of level `level`.
    Level { level: u32, pos: u32 },
    /// Entry `index` of the huge list.
    Huge { index: u32 },
    /// Entry `index` of an all-pairs build.
    Flat { index: u32 },
}

impl<T: Real, const D: usize> BroadPhase<T, D> {
    /// Records where every box of the last build is stored, for [`BroadPhase::patch`].
    pub(crate) fn locate_all(&self, locations: &mut Vec<Location>) {
        locations.clear();
        locations.resize(self.len, Location::Flat { index: 0 });
        if self.flat {
            for (i, location) in locations.iter_mut().enumerate() {
                *location = Location::Flat { index: i as u32 };
            }
            return;
        }
        for (l, level) in self.active_levels().iter().enumerate() {
            for (pos, &i) in level.order[..level.len()].iter().enumerate() {
                locations[i as usize] = Location::Level {
                    level: l as u32,
                    pos: pos as u32,
                };
            }
        }
        for (k, &i) in self.huge.iter().enumerate() {
            locations[i as usize] = Location::Huge { index: k as u32 };
        }
    }

    /// Rewrites the box stored at `location` to `aabb` when that keeps every invariant of the
    /// build (see [`BroadPhase::patchable`]). Returns false (and changes nothing) otherwise.
    /// `aabb` must be valid (see `check_box`).
    pub(crate) fn patch(&mut self, location: Location, aabb: &Aabb<T, D>) -> bool {
        if !self.patchable(location, aabb) {
            return false;
        }
        match location {
            Location::Flat { index } => {
                write_box(&mut self.flat_min, &mut self.flat_max, index as usize, aabb);
            }
            Location::Huge { index } => self.huge_boxes[index as usize] = *aabb,
            Location::Level { level, pos } => {
                let level = &mut self.levels[level as usize];
                write_box(&mut level.min, &mut level.max, pos as usize, aabb);
            }
        }
        true
    }

    /// Tells whether [`BroadPhase::patch`] would rewrite the box stored at `location` to
    /// `aabb` in place: always for an all-pairs build and a huge box (which is tested against
    /// everything, whatever its size now); for a box of a level, when it keeps the level (the
    /// level's cell still covers it), and its minimum corner stays inside the level's occupied
    /// span and in the same bucket.
    pub(crate) fn patchable(&self, location: Location, aabb: &Aabb<T, D>) -> bool {
        let Location::Level { level, pos } = location else {
            return true;
        };
        let finite = aabb
            .min
            .iter()
            .chain(aabb.max.iter())
            .all(|v| v.is_finite());
        if !finite {
            return false;
        }
        let size = aabb.longest_edge();
        let exponent = exponent_of(size, &self.ladder);
        let level = &self.levels[level as usize];
        if exponent != level.exponent || size * (1.0 + CELL_MARGIN) > level.table.cell {
            return false;
        }
        let table = &level.table;
        let mut cell = [0i32; D];
        for axis in 0..D {
            let scaled = (aabb.min[axis].to_f64() - table.origin[axis]) * table.inv_cell;
            if !(scaled >= 0.0 && scaled < f64::from(table.span[axis])) {
                return false;
            }
            cell[axis] = scaled.floor() as i32;
        }
        let old = table.bucket(table.coords(level.min.point(pos as usize)));
        table.bucket(cell) == old
    }

    /// Takes the box at `location` out: its entry becomes NaN and overlaps nothing.
    pub(crate) fn kill(&mut self, location: Location) {
        let dead = Aabb {
            min: [T::PAD; D],
            max: [T::PAD; D],
        };
        match location {
            Location::Flat { index } => write_box(
                &mut self.flat_min,
                &mut self.flat_max,
                index as usize,
                &dead,
            ),
            Location::Huge { index } => self.huge_boxes[index as usize] = dead,
            Location::Level { level, pos } => {
                let level = &mut self.levels[level as usize];
                write_box(&mut level.min, &mut level.max, pos as usize, &dead);
            }
        }
    }
}

/// Writes `aabb` at position `k` of a pair of minimum and maximum columns.
fn write_box<T: Real, const D: usize>(
    min: &mut crate::columns::PointColumns<T, D>,
    max: &mut crate::columns::PointColumns<T, D>,
    k: usize,
    aabb: &Aabb<T, D>,
) {
    for (column, value) in min.columns_mut().into_iter().zip(aabb.min) {
        column[k] = value;
    }
    for (column, value) in max.columns_mut().into_iter().zip(aabb.max) {
        column[k] = value;
    }
}
