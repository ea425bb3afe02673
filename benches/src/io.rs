//! Reading and writing point files: raw little-endian `f32` triples, 12 bytes per point.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Bytes per point in a raw point file.
pub const BYTES_PER_POINT: usize = 12;

/// Why a point file could not be read.
#[derive(Debug)]
pub enum PointFileError {
    /// The file could not be read at all.
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file's size is not a whole number of points.
    BadLength {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        bytes: usize,
    },
}

impl fmt::Display for PointFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PointFileError::Io { path, source } => {
                write!(f, "cannot read point file {}: {source}", path.display())
            }
            PointFileError::BadLength { path, bytes } => write!(
                f,
                "point file {} has {bytes} bytes, which is not a multiple of {BYTES_PER_POINT} \
                 (one point is three little-endian f32: x, y, z); the last {} byte(s) do not \
                 form a point",
                path.display(),
                bytes % BYTES_PER_POINT
            ),
        }
    }
}

impl std::error::Error for PointFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PointFileError::Io { source, .. } => Some(source),
            PointFileError::BadLength { .. } => None,
        }
    }
}

/// Decodes raw little-endian `f32` xyz triples.
pub fn decode_points(bytes: &[u8]) -> Option<Vec<[f32; 3]>> {
    if !bytes.len().is_multiple_of(BYTES_PER_POINT) {
        return None;
    }
    let coord = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    Some(
        bytes
            .chunks_exact(BYTES_PER_POINT)
            .map(|p| [coord(&p[0..4]), coord(&p[4..8]), coord(&p[8..12])])
            .collect(),
    )
}

/// Encodes points as raw little-endian `f32` xyz triples.
pub fn encode_points(points: &[[f32; 3]]) -> Vec<u8> {
    points
        .iter()
        .flat_map(|p| p.iter().flat_map(|c| c.to_le_bytes()))
        .collect()
}

/// Reads a raw point file.
pub fn read_points(path: &Path) -> Result<Vec<[f32; 3]>, PointFileError> {
    let bytes = fs::read(path).map_err(|source| PointFileError::Io {
        path: path.to_owned(),
        source,
    })?;
    decode_points(&bytes).ok_or_else(|| PointFileError::BadLength {
        path: path.to_owned(),
        bytes: bytes.len(),
    })
}

/// Writes a raw point file.
pub fn write_points(path: &Path, points: &[[f32; 3]]) -> io::Result<()> {
    fs::write(path, encode_points(points))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenes::Scene;

    /// A file name under the system's temporary directory that no other test uses.
    fn temp_file(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("hhg-benches-{}-{name}", std::process::id()))
    }

    #[test]
    fn raw_file_round_trip() {
        let mut points = Scene::Clustered.generate(1000, 4);
        points.push([-0.0, f32::MIN_POSITIVE, f32::MAX]);
        let path = temp_file("round-trip.f32");
        write_points(&path, &points).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), 1001 * 12);
        let back = read_points(&path).unwrap();
        fs::remove_file(&path).unwrap();
        assert_eq!(back.len(), points.len());
        for (a, b) in back.iter().zip(&points) {
            assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits));
        }
        // The byte layout is little-endian x, y, z.
        assert_eq!(
            encode_points(&[[1.0, 2.0, 3.0]]),
            [1.0f32, 2.0, 3.0]
                .iter()
                .flat_map(|c| c.to_le_bytes())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn bad_length_is_a_clear_error() {
        let path = temp_file("bad-length.f32");
        fs::write(&path, [0u8; 25]).unwrap();
        let err = read_points(&path).unwrap_err();
        fs::remove_file(&path).unwrap();
        assert!(matches!(err, PointFileError::BadLength { bytes: 25, .. }));
        let message = err.to_string();
        assert!(
            message.contains("25 bytes") && message.contains("multiple of 12"),
            "{message}"
        );

        let missing = read_points(&temp_file("does-not-exist.f32")).unwrap_err();
        assert!(matches!(missing, PointFileError::Io { .. }));
        assert!(decode_points(&[]).unwrap().is_empty());
    }
}
