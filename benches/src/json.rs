//! How the result files write seconds: rounded to the clock's resolution, for serde.
//!
//! Everything else is serde_json's own: the records derive `Serialize`, and serde_json writes a
//! number JSON cannot represent (NaN, infinity) as `null`.

use serde::Serializer;

/// Seconds rounded to whole nanoseconds, the resolution of the clock; NaN and infinities are
/// left as they are.
///
/// The rounding goes through the nine-decimal text that the result files held before they
/// were written with serde, so a time reads back as exactly the number it read back as then.
pub fn round_to_nanoseconds(s: f64) -> f64 {
    format!("{s:.9}").parse().unwrap_or(s)
}

/// Writes seconds rounded to whole nanoseconds: `#[serde(serialize_with = "seconds")]`.
pub fn seconds<S: Serializer>(s: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(round_to_nanoseconds(*s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_rounded_to_nanoseconds() {
        #[derive(serde::Serialize)]
        struct Timed {
            #[serde(serialize_with = "seconds")]
            s: f64,
        }
        assert_eq!(round_to_nanoseconds(0.001_234_567_89), 0.001_234_568);
        assert_eq!(round_to_nanoseconds(0.0), 0.0);
        assert_eq!(round_to_nanoseconds(f64::INFINITY), f64::INFINITY);
        assert!(round_to_nanoseconds(f64::NAN).is_nan());
        let json = |s| serde_json::to_string(&Timed { s }).unwrap();
        assert_eq!(json(0.003), "{\"s\":0.003}");
        assert_eq!(json(1.5e-10), "{\"s\":0.0}");
        assert_eq!(json(f64::NAN), "{\"s\":null}");
    }
}
