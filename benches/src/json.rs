//! JSON scalars as the result files write them: escaped strings, seconds at the clock's
//! resolution, and `null` for values JSON cannot represent.

use std::fmt::Write as _;

/// Escapes a string as a JSON string literal, quotes included.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Seconds as a JSON number with nanosecond resolution, the resolution of the clock.
pub fn json_seconds(s: f64) -> String {
    if s.is_finite() {
        format!("{s:.9}")
    } else {
        "null".to_owned()
    }
}

/// A JSON number, or `null` for values JSON cannot represent.
pub fn json_f64(x: f64) -> String {
    if x.is_finite() {
        format!("{x:?}")
    } else {
        "null".to_owned()
    }
}
