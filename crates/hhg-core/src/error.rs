//! The typed errors every fallible entry point of hhg-core returns.

use std::fmt;

/// The coordinate axis a point error refers to.
pub const AXIS_NAMES: [char; 3] = ['x', 'y', 'z'];

/// Why a search could not be built or queried. Each variant names the offending value.
///
/// New kinds of bad input may add variants without a major version: match with a `_` arm.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The search radius was zero, negative, NaN or infinite, or its square overflows,
    /// underflows or is subnormal in the input precision.
    InvalidRadius {
        /// The radius as given, widened to `f64`.
        radius: f64,
    },
    /// A coordinate was NaN or infinite.
    NonFiniteCoordinate {
        /// Index of the point in the caller's numbering.
        index: usize,
        /// Axis of the coordinate: 0 = x, 1 = y, 2 = z.
        axis: usize,
        /// The coordinate, widened to `f64`.
        value: f64,
    },
    /// The points span more cells along one axis than the grid's integer cell index holds.
    CoordinateOutOfRange {
        /// Index of a point at the far end of the offending axis.
        index: usize,
        /// Axis of the coordinate: 0 = x, 1 = y, 2 = z.
        axis: usize,
        /// The coordinate, widened to `f64`.
        value: f64,
        /// How many cells the points span along that axis.
        cells: f64,
        /// The largest span in cells the grid accepts.
        limit: f64,
    },
    /// More points than the `u32` index type can number.
    TooManyPoints {
        /// How many points were given.
        count: usize,
        /// The largest count accepted.
        limit: usize,
    },
    /// Separate coordinate slices of different lengths.
    LengthMismatch {
        /// Length of the x slice.
        x: usize,
        /// Length of the y slice.
        y: usize,
        /// Length of the z slice.
        z: usize,
    },
    /// A box whose minimum exceeds its maximum along an axis (or a bound that is `+inf` as a
    /// minimum or `-inf` as a maximum, which leaves the box empty).
    InvalidBox {
        /// Index of the box in the caller's numbering.
        index: usize,
        /// Axis of the bounds: 0 = x, 1 = y, 2 = z.
        axis: usize,
        /// The minimum, widened to `f64`.
        min: f64,
        /// The maximum, widened to `f64`.
        max: f64,
    },
    /// A particle radius that is negative, NaN or infinite, or whose square overflows in the
    /// input precision.
    InvalidParticleRadius {
        /// Index of the particle in the caller's numbering.
        index: usize,
        /// The radius, widened to `f64`.
        radius: f64,
    },
    /// A configuration value outside its valid range.
    InvalidConfig {
        /// The name of the setting.
        name: &'static str,
        /// The value given, widened to `f64`.
        value: f64,
        /// What the value must satisfy.
        expected: &'static str,
    },
    /// A handle that does not name a live object (removed, or from another scene).
    StaleHandle {
        /// The slot the handle names.
        slot: u32,
        /// The generation the handle carries.
        generation: u32,
    },
    /// A point-set id that the search does not hold.
    UnknownPointSet {
        /// The id as given.
        set: usize,
        /// How many sets the search holds.
        sets: usize,
    },
    /// The new positions of a point set do not have the set's point count.
    PointCountChanged {
        /// The set's id.
        set: usize,
        /// Points the set had.
        expected: usize,
        /// Points given now.
        given: usize,
    },
    /// A point so far outside a periodic box that how many box lengths it lies away cannot
    /// be counted exactly (the box length is below the spacing of its coordinate).
    ImageCountOutOfRange {
        /// Index of the point in the caller's numbering.
        index: usize,
        /// Axis of the coordinate: 0 = x, 1 = y, 2 = z.
        axis: usize,
        /// The coordinate, widened to `f64`.
        value: f64,
        /// How many box lengths the wrap would move the point by.
        images: f64,
        /// The largest count accepted.
        limit: f64,
    },
    /// A pair names a point index not below the point count.
    PairIndexOutOfRange {
        /// Index of the pair in the caller's numbering.
        pair: usize,
        /// The pair as given.
        indices: [u32; 2],
        /// The point count, which both indices must be below.
        count: usize,
    },
    /// A cell vector entry that is NaN or infinite.
    NonFiniteCellVector {
        /// The cell vector (row of the matrix).
        row: usize,
        /// The coordinate (column): 0 = x, 1 = y, 2 = z.
        column: usize,
        /// The entry, widened to `f64`.
        value: f64,
    },
    /// A periodic cell vector that is zero or (nearly) in the span of the other periodic
    /// vectors: the cell's width between its two faces along that axis vanishes.
    DegenerateCell {
        /// The cell vector (row of the matrix).
        axis: usize,
        /// The distance between the cell's faces along that axis.
        width: f64,
        /// The length of the cell vector.
        length: f64,
    },
    /// A cutoff so large next to a periodic cell's width (or points so far from the cell that
    /// rounding widens the search as much) that the points and their images within the
    /// cutoff would exceed the limit.
    TooManyImages {
        /// How many points and images the search would hold (infinite when the search
        /// radius does not settle).
        images: f64,
        /// The most accepted.
        limit: u64,
        /// The cutoff.
        cutoff: f64,
        /// The cell's narrowest width between faces along a periodic axis.
        width: f64,
    },
    /// A pair's cell shift does not fit in the 32 bits per axis of the output asked for
    /// ([`AllImagesSearch::pair_columns`](crate::triclinic::AllImagesSearch::pair_columns)):
    /// the points lie more than `2^31` cell vectors away from the cell. The output is left
    /// empty.
    ShiftOutOfRange {
        /// The pair's first point.
        i: u32,
        /// The pair's second point.
        j: u32,
        /// The shift, in cell vectors per axis.
        shift: [i64; 3],
    },
    /// Memory for an output, or for the scratch that gathers it, could not be allocated
    /// (the allocator refused, or the size overflows `isize`). The output is left empty;
    /// the search itself is unchanged.
    OutOfMemory {
        /// What was being allocated.
        what: &'static str,
        /// The bytes asked for.
        bytes: usize,
    },
    /// The output would hold more entries than the cap the caller set on it
    /// ([`NeighborLists::set_max_entries`](crate::NeighborLists::set_max_entries),
    /// [`PairList::set_max_pairs`](crate::PairList::set_max_pairs)). Found before the output
    /// is allocated; the output is left empty and the search unchanged.
    OutputTooLarge {
        /// What the output holds (list entries or pairs).
        what: &'static str,
        /// Entries found so far: the output needs at least this many.
        at_least: usize,
        /// The cap.
        cap: usize,
    },
}

impl Error {
    /// The error with the point of an [`Error::CoordinateOutOfRange`] renumbered by
    /// `to_caller` (from a numbering of the engine's own, such as a level's boxes or the
    /// ghosts of a periodic search, to the caller's); any other error as it is.
    pub(crate) fn with_caller_point(self, to_caller: impl FnOnce(usize) -> usize) -> Self {
        match self {
            Error::CoordinateOutOfRange {
                index,
                axis,
                value,
                cells,
                limit,
            } => Error::CoordinateOutOfRange {
                index: to_caller(index),
                axis,
                value,
                cells,
                limit,
            },
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidRadius { radius } => {
                write!(
                    f,
                    "the search radius must be finite and > 0 with a finite, normal square in \
                     the input precision, got {radius}"
                )
            }
            Error::NonFiniteCoordinate { index, axis, value } => write!(
                f,
                "point {index} has a non-finite {} coordinate ({value})",
                AXIS_NAMES[axis]
            ),
            Error::CoordinateOutOfRange {
                index,
                axis,
                value,
                cells,
                limit,
            } => write!(
                f,
                "point {index} ({} = {value}) puts the points {cells:.3e} cells apart along {}, \
                 beyond the grid's integer range of {limit:.3e} cells; use a larger radius or split the domain",
                AXIS_NAMES[axis], AXIS_NAMES[axis]
            ),
            Error::TooManyPoints { count, limit } => {
                write!(
                    f,
                    "{count} points given, but at most {limit} can be indexed"
                )
            }
            Error::LengthMismatch { x, y, z } => write!(
                f,
                "coordinate slices differ in length: x has {x}, y has {y}, z has {z}"
            ),
            Error::InvalidBox {
                index,
                axis,
                min,
                max,
            } => write!(
                f,
                "box {index} is empty along {}: min = {min} is not <= max = {max} \
                 (or an infinite bound points the wrong way)",
                AXIS_NAMES[axis]
            ),
            Error::InvalidParticleRadius { index, radius } => write!(
                f,
                "particle {index} has radius {radius}; radii must be finite and >= 0 with a \
                 finite square in the input precision"
            ),
            Error::InvalidConfig {
                name,
                value,
                expected,
            } => write!(
                f,
                "setting {name} = {value} is invalid: it must be {expected}"
            ),
            Error::StaleHandle { slot, generation } => write!(
                f,
                "handle (slot {slot}, generation {generation}) does not name a live object"
            ),
            Error::UnknownPointSet { set, sets } => {
                write!(
                    f,
                    "point set {set} does not exist (the search holds {sets})"
                )
            }
            Error::PointCountChanged {
                set,
                expected,
                given,
            } => write!(
                f,
                "point set {set} has {expected} points but {given} positions were given"
            ),
            Error::ImageCountOutOfRange {
                index,
                axis,
                value,
                images,
                limit,
            } => write!(
                f,
                "point {index} ({} = {value}) would be moved by {images:.3e} box lengths to \
                 wrap it into the periodic box, beyond the {limit:.3e} whose count is exact",
                AXIS_NAMES[axis]
            ),
            Error::PairIndexOutOfRange {
                pair,
                indices: [i, j],
                count,
            } => write!(
                f,
                "pair {pair} = [{i}, {j}] names a point index out of range: there are {count} \
                 points"
            ),
            Error::NonFiniteCellVector { row, column, value } => write!(
                f,
                "cell vector {row} has a non-finite {} component ({value})",
                AXIS_NAMES[column]
            ),
            Error::DegenerateCell {
                axis,
                width,
                length,
            } => write!(
                f,
                "periodic cell vector {axis} (length {length}) leaves a width of {width} between \
                 the cell's faces: the periodic cell vectors must be nonzero and linearly \
                 independent"
            ),
            Error::TooManyImages {
                images,
                limit,
                cutoff,
                width,
            } => write!(
                f,
                "the cutoff {cutoff} is {:.3e} times the cell's narrowest width {width}: the \
                 points and their periodic images within it would number {images:.3e}, more \
                 than the {limit} accepted (or the points lie so far from the cell that \
                 rounding widens the search as much)",
                cutoff / width
            ),
            Error::ShiftOutOfRange { i, j, shift } => write!(
                f,
                "the cell shift {shift:?} of pair ({i}, {j}) does not fit in 32 bits: the \
                 points lie too many cells away from the cell (wrap them into it first)"
            ),
            Error::OutOfMemory { what, bytes } => write!(
                f,
                "out of memory: could not allocate {bytes} bytes for {what}; the output is \
                 left empty (cap its size, or take the lists in chunks)"
            ),
            Error::OutputTooLarge {
                what,
                at_least,
                cap,
            } => write!(
                f,
                "the output would hold at least {at_least} {what}, more than its cap of {cap}; \
                 the output is left empty (raise the cap, or take the lists in chunks)"
            ),
        }
    }
}

impl std::error::Error for Error {}
