//! The errors of hhg-mpi: every refusal names the offending value and where it is.

use std::fmt;

/// Why a distributed call refused its input or failed.
///
/// A collective call that one rank refuses fails on every rank: the refusing rank returns
/// the error that names its input, the others [`Error::OnOtherRank`], so that no rank waits
/// forever for a message that will not come.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// hhg-core refused a value (a radius, a periodic box, a point set).
    Core(hhg_core::Error),
    /// A particle's coordinate is NaN or infinite.
    NonFinite {
        /// The particle's index on this rank.
        index: usize,
        /// Its global id.
        id: u64,
        /// The axis (0, 1, 2).
        axis: usize,
        /// The value.
        value: f64,
    },
    /// Two arrays that describe the same particles have different lengths.
    LengthMismatch {
        /// Which array.
        what: String,
        /// The number of particles.
        expected: usize,
        /// The array's length.
        found: usize,
    },
    /// A particle given to `DistributedSearch::update` lies outside this rank's
    /// box: the particles must be migrated first.
    NotOwned {
        /// The particle's index on this rank.
        index: usize,
        /// Its global id.
        id: u64,
        /// Its position.
        position: [f64; 3],
        /// The rank whose box holds it.
        owner: usize,
    },
    /// A call that needs the particles distributed came before the first
    /// `DistributedSearch::migrate`.
    NotDecomposed,
    /// A value refused by hhg-mpi itself (an option, a message that does not parse).
    Invalid(String),
    /// Another rank refused its part of a collective call (its own error says why).
    OnOtherRank {
        /// The lowest rank that refused.
        rank: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Core(e) => write!(f, "{e}"),
            Error::NonFinite {
                index,
                id,
                axis,
                value,
            } => write!(
                f,
                "particle {index} (global id {id}) has the non-finite coordinate {value} on axis {axis}"
            ),
            Error::LengthMismatch {
                what,
                expected,
                found,
            } => write!(f, "{what} has {found} entries for {expected} particles"),
            Error::NotOwned {
                index,
                id,
                position,
                owner,
            } => write!(
                f,
                "particle {index} (global id {id}) at {position:?} belongs to rank {owner}: migrate the particles before the search"
            ),
            Error::NotDecomposed => write!(
                f,
                "the particles are not distributed yet: call migrate first"
            ),
            Error::Invalid(message) => write!(f, "{message}"),
            Error::OnOtherRank { rank } => {
                write!(f, "rank {rank} refused its part of a collective call")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Core(e) => Some(e),
            _ => None,
        }
    }
}

impl From<hhg_core::Error> for Error {
    fn from(e: hhg_core::Error) -> Self {
        Error::Core(e)
    }
}
