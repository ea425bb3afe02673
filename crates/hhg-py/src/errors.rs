//! The core's errors as Python exceptions, with the core's messages.

use hhg_core::Error;
use pyo3::PyErr;
use pyo3::exceptions::{PyMemoryError, PyValueError};

/// `MemoryError` for an allocation the core could not make, `ValueError` for everything else
/// (bad input: NaN or infinite coordinates, a bad radius or cell, too many points or images).
pub fn to_py(error: Error) -> PyErr {
    match error {
        Error::OutOfMemory { .. } => PyMemoryError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}
