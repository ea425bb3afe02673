//! Reading and writing point files: the readers of the `hhg-pointfile` crate (raw
//! little-endian `f32` triples, `.xyz` text and `.ply` point clouds), re-exported under the
//! bench's own path. They live in their own crate so that the fuzz targets reach them without
//! the bench's dependencies.

pub use hhg_pointfile::{
    BYTES_PER_POINT, PointFileError, PointFormat, decode_points, encode_points, parse_ply,
    parse_points, parse_xyz, read_points, write_points,
};
