//! Legacy VTK output: particles as binary `POLYDATA` files with point data that ParaView and
//! VisIt open directly.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// One field of per-point data.
#[derive(Clone, Copy, Debug)]
pub enum PointData<'a> {
    /// A scalar per point, with its name.
    Scalar(&'a str, &'a [f64]),
    /// A 3-vector per point, with its name.
    Vector(&'a str, &'a [[f64; 3]]),
}

impl PointData<'_> {
    fn len(&self) -> usize {
        match self {
            PointData::Scalar(_, values) => values.len(),
            PointData::Vector(_, values) => values.len(),
        }
    }
}

fn push_f32(bytes: &mut Vec<u8>, value: f64) {
    bytes.extend_from_slice(&(value as f32).to_be_bytes());
}

/// Writes `points` with their `data` as a legacy VTK binary `POLYDATA` file: the points, one
/// vertex cell per point (so that every viewer draws them), then the point data as big-endian
/// 32-bit floats. Names must not contain white space.
///
/// # Errors
/// An I/O error of `out`, or `InvalidInput` when a field's length differs from the point
/// count, a name is empty or holds white space, or there are more points than the format's
/// 32-bit cell indices hold.
pub fn write_polydata<W: Write>(
    mut out: W,
    title: &str,
    points: &[[f64; 3]],
    data: &[PointData<'_>],
) -> io::Result<()> {
    let n = points.len();
    let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
    if n >= (i32::MAX / 2) as usize {
        return Err(invalid(format!("{n} points are too many for a VTK file")));
    }
    for field in data {
        let name = match field {
            PointData::Scalar(name, _) | PointData::Vector(name, _) => name,
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(invalid(format!(
                "the field name {name:?} is not a VTK name"
            )));
        }
        if field.len() != n {
            return Err(invalid(format!(
                "the field {name} has {} values for {n} points",
                field.len()
            )));
        }
    }
    // The title is one line of at most 256 characters.
    let title: String = title
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .take(255)
        .collect();
    let mut bytes = Vec::with_capacity(64 + n * 12 * (2 + data.len()));
    write!(
        bytes,
        "# vtk DataFile Version 3.0\n{title}\nBINARY\nDATASET POLYDATA\nPOINTS {n} float\n"
    )?;
    for p in points {
        for &c in p {
            push_f32(&mut bytes, c);
        }
    }
    write!(bytes, "\nVERTICES {n} {}\n", 2 * n)?;
    for i in 0..n {
        bytes.extend_from_slice(&1i32.to_be_bytes());
        bytes.extend_from_slice(&(i as i32).to_be_bytes());
    }
    if !data.is_empty() {
        write!(bytes, "\nPOINT_DATA {n}\n")?;
    }
    for field in data {
        match field {
            PointData::Scalar(name, values) => {
                write!(bytes, "SCALARS {name} float 1\nLOOKUP_TABLE default\n")?;
                for &v in values.iter() {
                    push_f32(&mut bytes, v);
                }
            }
            PointData::Vector(name, values) => {
                writeln!(bytes, "VECTORS {name} float")?;
                for v in values.iter() {
                    for &c in v {
                        push_f32(&mut bytes, c);
                    }
                }
            }
        }
        bytes.push(b'\n');
    }
    out.write_all(&bytes)?;
    out.flush()
}

/// Writes [`write_polydata`]'s output to a new file at `path`.
///
/// # Errors
/// As [`write_polydata`], or when the file cannot be created.
pub fn write_polydata_file(
    path: &Path,
    title: &str,
    points: &[[f64; 3]],
    data: &[PointData<'_>],
) -> io::Result<()> {
    let file = BufWriter::new(File::create(path)?);
    write_polydata(file, title, points, data)
}
