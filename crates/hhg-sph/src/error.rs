//! The error type of the solver: a rejected configuration or a failed neighbour search.

use std::fmt;

/// Why a simulation could not be set up or advanced.
#[derive(Clone, Debug, PartialEq)]
pub enum SphError {
    /// A configuration value is out of range; the message names it.
    Config(String),
    /// The neighbour search refused the particles (for example a non-finite position after
    /// the simulation blew up).
    Search(hhg_core::Error),
    /// The distributed search failed (feature `mpi`): on the rank whose input it refused,
    /// its message names the particle; on the others, which rank refused.
    Distributed(String),
}

impl fmt::Display for SphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SphError::Config(message) => write!(f, "invalid configuration: {message}"),
            SphError::Search(error) => write!(f, "neighbour search failed: {error}"),
            SphError::Distributed(message) => {
                write!(f, "distributed neighbour search failed: {message}")
            }
        }
    }
}

impl std::error::Error for SphError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SphError::Config(_) | SphError::Distributed(_) => None,
            SphError::Search(error) => Some(error),
        }
    }
}

impl From<hhg_core::Error> for SphError {
    fn from(error: hhg_core::Error) -> Self {
        SphError::Search(error)
    }
}
