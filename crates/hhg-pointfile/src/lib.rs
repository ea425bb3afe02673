//! Reading and writing point files: raw little-endian `f32` triples (12 bytes per point), `.xyz`
//! text and `.ply` point clouds (ASCII or binary, either byte order).
//!
//! The format is chosen by the file's extension: `.xyz` and `.ply` are parsed, anything else is
//! read as raw `f32` triples. XYZ files may have the usual header (a point count, then a
//! comment line) with an element symbol before the coordinates (`C 1.0 2.0 3.0`; only the first
//! frame is read), or be plain lines of `x y z` (extra columns and `#` comments are ignored).
//! PLY files give the points as the `x`, `y` and `z` properties of their `vertex` element, of
//! any scalar type; other properties and elements are skipped.
//!
//! Every reader takes untrusted bytes: a malformed file is an error naming what is wrong and
//! where, never a panic, and the counts a header gives are not trusted for allocation (memory
//! grows with the points actually read) nor for loops (an element without properties holds
//! no bytes and is skipped at once). The fuzz targets of the workspace (`fuzz/` and
//! `crates/hhg-fuzz`) feed them arbitrary bytes.

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
    /// A text or PLY file that does not parse.
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
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
            PointFileError::Parse { path, message } => {
                write!(f, "cannot parse point file {}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for PointFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PointFileError::Io { source, .. } => Some(source),
            PointFileError::BadLength { .. } | PointFileError::Parse { .. } => None,
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

/// The formats of point files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointFormat {
    /// Raw little-endian `f32` xyz triples.
    Raw,
    /// XYZ text.
    Xyz,
    /// A PLY point cloud.
    Ply,
}

impl PointFormat {
    /// The format of `path` by its extension (case-insensitive); raw for anything unknown.
    pub fn of(path: &Path) -> Self {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("xyz") => PointFormat::Xyz,
            Some("ply") => PointFormat::Ply,
            _ => PointFormat::Raw,
        }
    }
}

/// Reads a point file in the format its extension names (see the module documentation).
pub fn read_points(path: &Path) -> Result<Vec<[f32; 3]>, PointFileError> {
    let bytes = fs::read(path).map_err(|source| PointFileError::Io {
        path: path.to_owned(),
        source,
    })?;
    let parse_error = |message: String| PointFileError::Parse {
        path: path.to_owned(),
        message,
    };
    match PointFormat::of(path) {
        PointFormat::Raw => decode_points(&bytes).ok_or_else(|| PointFileError::BadLength {
            path: path.to_owned(),
            bytes: bytes.len(),
        }),
        format => parse_points(format, &bytes).map_err(parse_error),
    }
}

/// Parses the bytes of a point file in `format`: what [`read_points`] does after reading the
/// file, with the error as a message (a raw file of the wrong length included).
pub fn parse_points(format: PointFormat, bytes: &[u8]) -> Result<Vec<[f32; 3]>, String> {
    match format {
        PointFormat::Raw => decode_points(bytes).ok_or_else(|| {
            format!(
                "{} bytes is not a multiple of {BYTES_PER_POINT} (one point is three \
                 little-endian f32)",
                bytes.len()
            )
        }),
        PointFormat::Xyz => {
            let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?;
            parse_xyz(text)
        }
        PointFormat::Ply => parse_ply(bytes),
    }
}

/// Parses XYZ text: an optional header (point count, comment line), then one point per line,
/// `x y z` or `Symbol x y z`, extra columns ignored. With a header only its count of points is
/// read (the first frame).
pub fn parse_xyz(text: &str) -> Result<Vec<[f32; 3]>, String> {
    let mut lines = text.lines().enumerate().peekable();
    // Skip leading blank lines.
    while lines.peek().is_some_and(|(_, l)| l.trim().is_empty()) {
        lines.next();
    }
    // The point count of a header; `None` for plain lines of points. Any count is a header,
    // `usize::MAX` too: the file must then hold that many points (it cannot).
    let mut limit: Option<usize> = None;
    if let Some((_, first)) = lines.peek() {
        let tokens: Vec<&str> = first.split_whitespace().collect();
        if tokens.len() == 1
            && let Ok(count) = tokens[0].parse::<usize>()
        {
            limit = Some(count);
            lines.next();
            // The comment line.
            lines.next();
        }
    }
    let mut points = Vec::new();
    for (number, line) in lines {
        if Some(points.len()) == limit {
            break;
        }
        let content = line.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            match limit {
                None => continue,
                Some(count) => {
                    return Err(format!(
                        "line {}: empty, but the header promised {count} points",
                        number + 1
                    ));
                }
            }
        }
        let tokens: Vec<&str> = content.split_whitespace().collect();
        // A leading token that is not a number is the element symbol.
        let skip = usize::from(tokens[0].parse::<f32>().is_err());
        if tokens.len() < skip + 3 {
            return Err(format!(
                "line {}: expected x y z, got `{content}`",
                number + 1
            ));
        }
        let mut point = [0.0f32; 3];
        for (axis, token) in tokens[skip..skip + 3].iter().enumerate() {
            point[axis] = token
                .parse::<f32>()
                .map_err(|_| format!("line {}: `{token}` is not a coordinate", number + 1))?;
        }
        points.push(point);
    }
    if let Some(count) = limit
        && points.len() < count
    {
        return Err(format!(
            "the header promised {count} points, the file has {}",
            points.len()
        ));
    }
    Ok(points)
}

/// The scalar types of PLY properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PlyType {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl PlyType {
    fn parse(name: &str) -> Result<Self, String> {
        Ok(match name {
            "char" | "int8" => PlyType::I8,
            "uchar" | "uint8" => PlyType::U8,
            "short" | "int16" => PlyType::I16,
            "ushort" | "uint16" => PlyType::U16,
            "int" | "int32" => PlyType::I32,
            "uint" | "uint32" => PlyType::U32,
            "float" | "float32" => PlyType::F32,
            "double" | "float64" => PlyType::F64,
            _ => return Err(format!("unknown PLY property type `{name}`")),
        })
    }

    fn size(self) -> usize {
        match self {
            PlyType::I8 | PlyType::U8 => 1,
            PlyType::I16 | PlyType::U16 => 2,
            PlyType::I32 | PlyType::U32 | PlyType::F32 => 4,
            PlyType::F64 => 8,
        }
    }

    /// Decodes one value of this type from `b` (exactly `size()` bytes).
    fn decode(self, b: &[u8], little: bool) -> f64 {
        macro_rules! read {
            ($t:ty) => {{
                let bytes = b.try_into().expect("the caller passes size() bytes");
                if little {
                    <$t>::from_le_bytes(bytes) as f64
                } else {
                    <$t>::from_be_bytes(bytes) as f64
                }
            }};
        }
        match self {
            PlyType::I8 => read!(i8),
            PlyType::U8 => read!(u8),
            PlyType::I16 => read!(i16),
            PlyType::U16 => read!(u16),
            PlyType::I32 => read!(i32),
            PlyType::U32 => read!(u32),
            PlyType::F32 => read!(f32),
            PlyType::F64 => read!(f64),
        }
    }
}

/// A property of a PLY element: a scalar, or a list with its count and item types.
#[derive(Clone, Debug)]
struct PlyProperty {
    name: String,
    kind: PlyType,
    /// The count type of a list property.
    list_count: Option<PlyType>,
}

/// An element of a PLY header.
#[derive(Clone, Debug)]
struct PlyElement {
    name: String,
    count: usize,
    properties: Vec<PlyProperty>,
}

/// Parses a PLY file (ASCII, binary little or big endian) into the points of its `vertex`
/// element; the coordinates are read in their own type and rounded to `f32`.
pub fn parse_ply(bytes: &[u8]) -> Result<Vec<[f32; 3]>, String> {
    // The header is ASCII up to and including the `end_header` line.
    let marker = b"end_header";
    let end = bytes
        .windows(marker.len())
        .position(|w| w == marker)
        .ok_or("no `end_header` line: not a PLY file")?;
    let body_start = bytes[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| end + p + 1)
        .ok_or("the header does not end with a newline")?;
    let header = std::str::from_utf8(&bytes[..end]).map_err(|_| "the header is not ASCII")?;
    let mut lines = header.lines().map(str::trim);
    if lines.next() != Some("ply") {
        return Err("the file does not start with `ply`".into());
    }
    let mut format = None;
    let mut elements: Vec<PlyElement> = Vec::new();
    for line in lines {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        match tokens.as_slice() {
            [] | ["comment", ..] | ["obj_info", ..] => {}
            ["format", f, _version] => format = Some(f.to_string()),
            ["element", name, count] => elements.push(PlyElement {
                name: name.to_string(),
                count: count
                    .parse()
                    .map_err(|_| format!("bad element count in `{line}`"))?,
                properties: Vec::new(),
            }),
            ["property", "list", count, item, name] => elements
                .last_mut()
                .ok_or("a property before any element")?
                .properties
                .push(PlyProperty {
                    name: name.to_string(),
                    kind: PlyType::parse(item)?,
                    list_count: Some(PlyType::parse(count)?),
                }),
            ["property", kind, name] => elements
                .last_mut()
                .ok_or("a property before any element")?
                .properties
                .push(PlyProperty {
                    name: name.to_string(),
                    kind: PlyType::parse(kind)?,
                    list_count: None,
                }),
            _ => return Err(format!("cannot read the header line `{line}`")),
        }
    }
    let little = match format.as_deref() {
        Some("ascii") => None,
        Some("binary_little_endian") => Some(true),
        Some("binary_big_endian") => Some(false),
        Some(other) => return Err(format!("unknown PLY format `{other}`")),
        None => return Err("no `format` line in the header".into()),
    };
    let vertex = elements
        .iter()
        .position(|e| e.name == "vertex")
        .ok_or("no `vertex` element")?;
    let axis_of = |p: &PlyProperty| match p.name.as_str() {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    let mut found = [false; 3];
    for p in &elements[vertex].properties {
        if let Some(a) = axis_of(p) {
            if p.list_count.is_some() {
                return Err(format!("the vertex property `{}` is a list", p.name));
            }
            found[a] = true;
        }
    }
    if found != [true; 3] {
        return Err("the vertex element lacks an x, y or z property".into());
    }
    let body = &bytes[body_start..];
    // The header's count is not trusted for memory: every vertex takes at least one byte per
    // property in either encoding, so the body bounds the vertices it can hold.
    let properties = elements[vertex].properties.len();
    let mut points = Vec::with_capacity(elements[vertex].count.min(body.len() / properties));
    // Elements without properties hold no bytes: skipping them keeps a huge count from
    // looping without reading anything.
    let elements = elements[..=vertex]
        .iter()
        .filter(|e| !e.properties.is_empty());
    match little {
        None => {
            let text = std::str::from_utf8(body).map_err(|_| "the ASCII body is not text")?;
            let mut tokens = text.split_whitespace();
            let mut next = |what: &str| -> Result<f64, String> {
                let token = tokens
                    .next()
                    .ok_or_else(|| format!("the body ends early (reading {what})"))?;
                token
                    .parse::<f64>()
                    .map_err(|_| format!("`{token}` is not a number (reading {what})"))
            };
            for element in elements {
                for _ in 0..element.count {
                    let mut point = [0.0f32; 3];
                    for p in &element.properties {
                        if p.list_count.is_some() {
                            let items = list_length(next(&p.name)?, &p.name)?;
                            for _ in 0..items {
                                next(&p.name)?;
                            }
                            continue;
                        }
                        let value = next(&p.name)?;
                        if element.name == "vertex"
                            && let Some(a) = axis_of(p)
                        {
                            point[a] = value as f32;
                        }
                    }
                    if element.name == "vertex" {
                        points.push(point);
                    }
                }
            }
        }
        Some(little) => {
            let mut at = 0usize;
            let mut take = |size: usize| -> Result<&[u8], String> {
                let slice = at
                    .checked_add(size)
                    .and_then(|end| body.get(at..end))
                    .ok_or("the binary body ends early")?;
                at += size;
                Ok(slice)
            };
            for element in elements {
                for _ in 0..element.count {
                    let mut point = [0.0f32; 3];
                    for p in &element.properties {
                        if let Some(count) = p.list_count {
                            let items =
                                list_length(count.decode(take(count.size())?, little), &p.name)?;
                            let bytes = items
                                .checked_mul(p.kind.size())
                                .ok_or("the binary body ends early")?;
                            take(bytes)?;
                            continue;
                        }
                        let value = p.kind.decode(take(p.kind.size())?, little);
                        if element.name == "vertex"
                            && let Some(a) = axis_of(p)
                        {
                            point[a] = value as f32;
                        }
                    }
                    if element.name == "vertex" {
                        points.push(point);
                    }
                }
            }
        }
    }
    Ok(points)
}

/// The length of a PLY list read as `value`: a whole number from 0 up, or an error naming the
/// list property `name`.
fn list_length(value: f64, name: &str) -> Result<usize, String> {
    // Every length below 2^53 is exact in f64; anything longer than that cannot be read anyway.
    if value >= 0.0 && value.fract() == 0.0 && value < 9_007_199_254_740_992.0 {
        Ok(value as usize)
    } else {
        Err(format!(
            "the list property `{name}` has the length {value:?}, not a whole number from 0 up"
        ))
    }
}

/// Writes a raw point file.
pub fn write_points(path: &Path, points: &[[f32; 3]]) -> io::Result<()> {
    fs::write(path, encode_points(points))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file name under the system's temporary directory that no other test uses.
    fn temp_file(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("hhg-pointfile-{}-{name}", std::process::id()))
    }

    #[test]
    fn raw_file_round_trip() {
        // Coordinates of every sign and magnitude, from a fixed integer sequence.
        let mut points: Vec<[f32; 3]> = (0..1000u32)
            .map(|k| {
                let v = k.wrapping_mul(2_654_435_761);
                [v as f32 * 1e-6, -(k as f32) / 7.0, f32::from_bits(v >> 2)]
            })
            .collect();
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

    #[test]
    fn xyz_with_and_without_header() {
        let text = "3\nwater, angstrom\nO 0.0 0.0 0.117\nH 0.0 0.757 -0.467 extra\n\
                    H 0.0 -0.757 -0.467\n2\nsecond frame\nO 9 9 9\nH 9 9 9\n";
        let points = parse_xyz(text).unwrap();
        assert_eq!(
            points,
            [
                [0.0, 0.0, 0.117],
                [0.0, 0.757, -0.467],
                [0.0, -0.757, -0.467]
            ]
        );
        let plain = "# x y z\n1 2 3\n\n4.5 -5e1 6 7\n";
        assert_eq!(
            parse_xyz(plain).unwrap(),
            [[1.0, 2.0, 3.0], [4.5, -50.0, 6.0]]
        );
        assert!(
            parse_xyz("5\ncomment\nC 1 2 3\n")
                .unwrap_err()
                .contains("promised 5")
        );
        assert!(parse_xyz("1 2\n").unwrap_err().contains("expected x y z"));
        assert!(parse_xyz("C 1 two 3\n").unwrap_err().contains("`two`"));
        assert!(parse_xyz("").unwrap().is_empty());

        let path = temp_file("cloud.XYZ");
        fs::write(&path, text).unwrap();
        let read = read_points(&path);
        fs::remove_file(&path).unwrap();
        assert_eq!(read.unwrap().len(), 3);
        assert_eq!(PointFormat::of(Path::new("a/b.f32")), PointFormat::Raw);
    }

    /// A PLY header for `n` vertices with double x, float y, uchar z, an ignored int and a
    /// face element with a list property after them.
    fn ply_header(format: &str, n: usize) -> String {
        format!(
            "ply\nformat {format} 1.0\ncomment made by a test\nelement vertex {n}\n\
             property double x\nproperty float y\nproperty int flags\nproperty uchar z\n\
             element face 1\nproperty list uchar int vertex_indices\nend_header\n"
        )
    }

    #[test]
    fn ply_ascii_and_binary() {
        let want = [[1.5f32, -2.0, 3.0], [0.25, 8.0, 255.0]];
        let ascii = format!(
            "{}1.5 -2 7 3\n0.25 8.0 -1 255\n3 0 1 1\n",
            ply_header("ascii", 2)
        );
        assert_eq!(parse_ply(ascii.as_bytes()).unwrap(), want);

        for little in [true, false] {
            let format = if little {
                "binary_little_endian"
            } else {
                "binary_big_endian"
            };
            let mut bytes = ply_header(format, 2).into_bytes();
            for (p, flags) in want.iter().zip([7i32, -1]) {
                let x = f64::from(p[0]);
                if little {
                    bytes.extend(x.to_le_bytes());
                    bytes.extend(p[1].to_le_bytes());
                    bytes.extend(flags.to_le_bytes());
                } else {
                    bytes.extend(x.to_be_bytes());
                    bytes.extend(p[1].to_be_bytes());
                    bytes.extend(flags.to_be_bytes());
                }
                bytes.push(p[2] as u8);
            }
            bytes.extend([3u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            assert_eq!(parse_ply(&bytes).unwrap(), want, "{format}");
            // A truncated body is an error, not a short cloud.
            let header_len = ply_header(format, 2).len();
            assert!(parse_ply(&bytes[..header_len + 20]).is_err());
        }

        // An element before the vertices is skipped, list properties included.
        let skipped = "ply\nformat ascii 1.0\nelement meta 1\nproperty list uchar float v\n\
                       element vertex 1\nproperty float x\nproperty float y\nproperty float z\n\
                       end_header\n2 9 9\n1 2 3\n";
        assert_eq!(parse_ply(skipped.as_bytes()).unwrap(), [[1.0, 2.0, 3.0]]);
        assert!(
            parse_ply(
                b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nend_header\n1\n"
            )
            .is_err()
        );
        assert!(parse_ply(b"not a ply").is_err());
        assert!(parse_ply(b"ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\nend_header\n1 2 3\n").unwrap_err().contains("ends early"));
    }

    #[test]
    fn an_xyz_header_of_usize_max_points_is_a_header() {
        // The lost fuzz run's finding: the largest count read as "no header", so the comment
        // line became a point (or an error about it) and the count was never checked.
        let text = format!("{}\n1 2 3\n4 5 6\n", usize::MAX);
        let error = parse_xyz(&text).unwrap_err();
        assert!(
            error.contains(&format!("promised {} points, the file has 1", usize::MAX)),
            "{error}"
        );
        // Line 2 is the comment line, whatever it holds.
        assert_eq!(parse_xyz("1\n1 2 3\n4 5 6\n").unwrap(), [[4.0, 5.0, 6.0]]);
    }

    /// A PLY header of format `format` whose vertex element has `count` vertices of float
    /// x, y, z, after `before` (further header lines).
    fn vertex_header(format: &str, before: &str, count: &str) -> String {
        format!(
            "ply\nformat {format} 1.0\n{before}element vertex {count}\nproperty float x\n\
             property float y\nproperty float z\nend_header\n"
        )
    }

    #[test]
    fn ply_counts_are_not_trusted_for_memory() {
        // The lost fuzz run's finding: `Vec::with_capacity(count)` of the header's count
        // panicked with a capacity overflow (or aborted out of memory) before any vertex.
        for format in ["ascii", "binary_little_endian", "binary_big_endian"] {
            let count = usize::MAX.to_string();
            let mut bytes = vertex_header(format, "", &count).into_bytes();
            bytes.extend(if format == "ascii" {
                b"1 2 3\n".to_vec()
            } else {
                vec![0; 12]
            });
            let error = parse_ply(&bytes).unwrap_err();
            assert!(error.contains("ends early"), "{format}: {error}");
        }
    }

    #[test]
    fn ply_elements_without_properties_do_not_loop() {
        // The lost fuzz run's finding: an element with a huge count and no property was
        // walked one empty record at a time (2^64 iterations).
        let before = format!("element nothing {}\n", usize::MAX);
        for format in ["ascii", "binary_little_endian"] {
            let mut bytes = vertex_header(format, &before, "1").into_bytes();
            if format == "ascii" {
                bytes.extend(b"1 2 3\n");
            } else {
                for v in [1.0f32, 2.0, 3.0] {
                    bytes.extend(v.to_le_bytes());
                }
            }
            assert_eq!(parse_ply(&bytes).unwrap(), [[1.0, 2.0, 3.0]], "{format}");
        }
    }

    #[test]
    fn ply_list_lengths_are_checked() {
        // A binary list length whose byte count overflows, and lengths that are not whole
        // numbers, are errors (the multiplication overflowed in debug builds).
        let before = "element meta 1\nproperty list uint double v\n";
        let mut bytes = vertex_header("binary_little_endian", before, "1").into_bytes();
        bytes.extend(u32::MAX.to_le_bytes());
        assert!(parse_ply(&bytes).unwrap_err().contains("ends early"));
        let before = "element meta 1\nproperty list double uchar v\n";
        let mut bytes = vertex_header("binary_big_endian", before, "1").into_bytes();
        bytes.extend(1e300f64.to_be_bytes());
        let error = parse_ply(&bytes).unwrap_err();
        assert!(error.contains("`v` has the length 1e300"), "{error}");
        let before = "element meta 1\nproperty list float uchar v\n";
        for length in ["-1", "0.5", "nan", "inf"] {
            let text = format!(
                "{}{length} 1 1\n1 2 3\n",
                vertex_header("ascii", before, "1")
            );
            let error = parse_ply(text.as_bytes()).unwrap_err();
            assert!(error.contains("not a whole number"), "{length}: {error}");
        }
        let text = format!("{}2 7 7\n1 2 3\n", vertex_header("ascii", before, "1"));
        assert_eq!(parse_ply(text.as_bytes()).unwrap(), [[1.0, 2.0, 3.0]]);
    }

    #[test]
    fn parse_points_reads_every_format() {
        let raw = encode_points(&[[1.0, 2.0, 3.0]]);
        assert_eq!(
            parse_points(PointFormat::Raw, &raw).unwrap(),
            [[1.0, 2.0, 3.0]]
        );
        assert!(
            parse_points(PointFormat::Raw, &raw[..5])
                .unwrap_err()
                .contains("5 bytes")
        );
        assert_eq!(
            parse_points(PointFormat::Xyz, b"1 2 3\n").unwrap(),
            [[1.0, 2.0, 3.0]]
        );
        assert!(
            parse_points(PointFormat::Xyz, &[0xff, b'\n'])
                .unwrap_err()
                .contains("UTF-8")
        );
        let ply = format!("{}1 2 3\n", vertex_header("ascii", "", "1"));
        assert_eq!(
            parse_points(PointFormat::Ply, ply.as_bytes()).unwrap(),
            [[1.0, 2.0, 3.0]]
        );
    }
}
