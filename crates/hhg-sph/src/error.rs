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
}

impl fmt::Display for SphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SphError::Config(message) => write!(f, "invalid configuration: {message}"),
            SphError::Search(error) => write!(f, "neighbour search failed: {error}"),
        }
    }
}

impl std::error::Error for SphError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SphError::Config(_) => None,
            SphError::Search(error) => Some(error),
        }
    }
}

impl From<hhg_core::Error> for SphError {
    fn from(error: hhg_core::Error) -> Self {
        SphError::Search(error)
    }
}
