//! The fuzz targets and their seed inputs (see the crate documentation).

mod capi;
mod point_files;
mod search;

pub use capi::{capi_calls, capi_seeds};
pub use point_files::{point_file_seeds, point_files};
pub use search::{search_coordinates, search_seeds};
