//! The point-file readers on arbitrary bytes: the first byte picks the format (raw `f32`,
//! `.xyz`, `.ply`), the rest is the file.

use hhg_pointfile::{BYTES_PER_POINT, PointFormat, encode_points, parse_points};

use crate::input::Input;

/// The format a selector byte picks.
fn format_of(selector: u8) -> PointFormat {
    match selector % 3 {
        0 => PointFormat::Raw,
        1 => PointFormat::Xyz,
        _ => PointFormat::Ply,
    }
}

/// Parses the bytes after the selector in the format it picks. Every outcome must be points
/// or an error message: a raw file of a whole number of points gives exactly its bits back,
/// and a text or PLY file gives at most one point per byte (every point takes at least one
/// byte in every encoding the readers accept).
pub fn point_files(data: &[u8]) {
    let mut input = Input::new(data);
    let format = format_of(input.u8());
    let bytes = input.rest();
    match parse_points(format, bytes) {
        Ok(points) => {
            if format == PointFormat::Raw {
                assert_eq!(points.len() * BYTES_PER_POINT, bytes.len());
                assert_eq!(encode_points(&points), bytes, "raw points round trip");
            } else {
                assert!(
                    points.len() <= bytes.len(),
                    "{} points from {} bytes",
                    points.len(),
                    bytes.len()
                );
            }
        }
        Err(message) => {
            assert!(!message.is_empty(), "an error without a message");
            if format == PointFormat::Raw {
                assert!(!bytes.len().is_multiple_of(BYTES_PER_POINT));
            }
        }
    }
}

/// A seed: the selector byte of `format`, then `file`.
fn seed(format: u8, file: &[u8]) -> Vec<u8> {
    let mut out = vec![format];
    out.extend_from_slice(file);
    out
}

/// Well-formed files of every format and flavour, for the mutations to start from.
pub fn point_file_seeds() -> Vec<Vec<u8>> {
    let header = |format: &str, count: usize| {
        format!(
            "ply\nformat {format} 1.0\ncomment seed\nelement vertex {count}\n\
             property double x\nproperty float y\nproperty int flags\nproperty uchar z\n\
             element face 1\nproperty list uchar int vertex_indices\nend_header\n"
        )
    };
    let mut little = header("binary_little_endian", 2).into_bytes();
    let mut big = header("binary_big_endian", 2).into_bytes();
    for (p, flags) in [([1.5f32, -2.0, 3.0], 7i32), ([0.25, 8.0, 255.0], -1)] {
        little.extend(f64::from(p[0]).to_le_bytes());
        little.extend(p[1].to_le_bytes());
        little.extend(flags.to_le_bytes());
        little.push(p[2] as u8);
        big.extend(f64::from(p[0]).to_be_bytes());
        big.extend(p[1].to_be_bytes());
        big.extend(flags.to_be_bytes());
        big.push(p[2] as u8);
    }
    for body in [&mut little, &mut big] {
        body.extend([3u8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
    }
    let ascii = format!(
        "{}1.5 -2 7 3\n0.25 8.0 -1 255\n3 0 1 1\n",
        header("ascii", 2)
    );
    vec![
        seed(
            0,
            &encode_points(&[[1.0, -2.5, 3e10], [f32::MIN_POSITIVE, 0.0, -0.0]]),
        ),
        seed(0, &[]),
        seed(
            1,
            b"3\nwater\nO 0.0 0.0 0.117\nH 0.0 0.757 -0.467\nH 0.0 -0.757 -0.467\n",
        ),
        seed(1, b"# x y z\n1 2 3\n\n4.5 -5e1 6 7\n"),
        seed(2, ascii.as_bytes()),
        seed(2, &little),
        seed(2, &big),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_parse() {
        for seed in point_file_seeds() {
            let format = format_of(seed[0]);
            parse_points(format, &seed[1..]).unwrap();
            point_files(&seed);
        }
    }
}
