//! The seeded mutation driver: a deterministic stand-in for libFuzzer that `cargo test` can
//! run on the stable toolchain. Each case mutates one of the target's seed inputs (or an
//! earlier case) a few times (bit flips, interesting bytes and floating-point values,
//! insertions, deletions, copies within the input and splices with other seeds) and runs the
//! target on it; a finding is the target's panic, reported with the case number and the
//! input's bytes so that it can be replayed.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::Target;

/// The environment variable that sets the number of cases per target.
pub const CASES_VARIABLE: &str = "HHG_FUZZ_CASES";

/// The number of cases per target: `HHG_FUZZ_CASES` when it is set to a number, else
/// `default`.
pub fn cases_from_env(default: usize) -> usize {
    std::env::var(CASES_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value below `bound` (positive).
    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// Byte strings worth writing over an input: the limits of the integer widths and the
/// special and extreme values of both float widths, little-endian.
fn interesting(rng: &mut Rng) -> Vec<u8> {
    let floats32 = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        -0.0,
        1e15,
        3e38,
    ];
    let floats64 = [
        f64::NAN,
        f64::INFINITY,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        1e15,
        1e300,
        -1e12,
    ];
    match rng.below(5) {
        0 => vec![[0u8, 1, 0x7f, 0x80, 0xff, b'\n', b' ', b'-', b'9'][rng.below(9)]],
        1 => [0u32, 1, 0x7fff_ffff, 0x8000_0000, u32::MAX][rng.below(5)]
            .to_le_bytes()
            .to_vec(),
        2 => floats32[rng.below(floats32.len())].to_le_bytes().to_vec(),
        3 => floats64[rng.below(floats64.len())].to_le_bytes().to_vec(),
        _ => [
            &b"18446744073709551615"[..],
            b"4294967296",
            b"-1",
            b"1e999",
            b"nan",
            b"end_header\n",
            b"element vertex ",
            b"property list uint double v\n",
        ][rng.below(8)]
        .to_vec(),
    }
}

/// Applies one random mutation to `data`, `other` being a second input to splice from.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    let len = data.len();
    match rng.below(8) {
        0 if len > 0 => {
            let at = rng.below(len);
            data[at] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let at = rng.below(len);
            data[at] = rng.next() as u8;
        }
        2 => {
            let bytes = interesting(rng);
            let at = rng.below(len + 1);
            if rng.below(2) == 0 {
                data.splice(at..at, bytes);
            } else {
                let end = (at + bytes.len()).min(len);
                data.splice(at..end, bytes);
            }
        }
        3 if len > 0 => {
            let at = rng.below(len);
            let end = (at + 1 + rng.below(16)).min(len);
            data.drain(at..end);
        }
        4 if len > 0 => {
            let at = rng.below(len);
            let end = (at + 1 + rng.below(32)).min(len);
            let copy = data[at..end].to_vec();
            let to = rng.below(len + 1);
            data.splice(to..to, copy);
        }
        5 if !other.is_empty() => {
            let cut = rng.below(len + 1);
            let from = rng.below(other.len());
            data.truncate(cut);
            data.extend_from_slice(&other[from..]);
        }
        6 => {
            let at = rng.below(len + 1);
            let count = 1 + rng.below(8);
            let random: Vec<u8> = (0..count).map(|_| rng.next() as u8).collect();
            data.splice(at..at, random);
        }
        _ if len > 1 => {
            // A run of one byte value: repeated tokens, long numbers.
            let at = rng.below(len);
            let end = (at + 1 + rng.below(8)).min(len);
            let value = data[at];
            data[at..end].fill(value);
        }
        _ => data.push(rng.next() as u8),
    }
}

/// Runs `target` on its `seeds` as they are, then on `cases` mutated inputs made from them
/// with the generator seeded by `seed`; returns the number of inputs run. Inputs that did
/// not fail are kept (up to a few hundred) as further starting points.
///
/// A panic of the target is re-raised after printing the case and its input in hex.
pub fn run(target: Target, seeds: &[Vec<u8>], cases: usize, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let mut pool: Vec<Vec<u8>> = seeds.to_vec();
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let mut ran = 0;
    for input in seeds {
        execute(target, input, ran);
        ran += 1;
    }
    for _ in 0..cases {
        let mut data = pool[rng.below(pool.len())].clone();
        let other = pool[rng.below(pool.len())].clone();
        for _ in 0..1 + rng.below(6) {
            mutate(&mut rng, &mut data, &other);
        }
        data.truncate(4096);
        execute(target, &data, ran);
        ran += 1;
        if pool.len() < 256 {
            pool.push(data);
        } else {
            let slot = seeds.len() + rng.below(256 - seeds.len().min(255));
            if slot < pool.len() {
                pool[slot] = data;
            }
        }
    }
    ran
}

/// Runs one input, reporting it if the target panics.
fn execute(target: Target, input: &[u8], case: usize) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| target(input))) {
        let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
        eprintln!(
            "fuzz finding at case {case}: input ({} bytes) {hex}",
            input.len()
        );
        resume_unwind(panic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_is_deterministic_and_reports_findings() {
        fn record(data: &[u8]) {
            SEEN.with(|s| s.borrow_mut().push(data.to_vec()));
        }
        thread_local! {
            static SEEN: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let seeds = vec![b"seed one".to_vec(), vec![0, 1, 2]];
        assert_eq!(run(record, &seeds, 50, 7), 52);
        let first = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
        run(record, &seeds, 50, 7);
        let second = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
        assert_eq!(first, second);
        assert!(
            first
                .iter()
                .skip(2)
                .any(|d| d != &seeds[0] && d != &seeds[1])
        );

        fn fails_on_long(data: &[u8]) {
            assert!(data.len() < 12, "long input");
        }
        let caught = catch_unwind(|| run(fails_on_long, &seeds, 1000, 1));
        assert!(caught.is_err(), "the driver passes a finding on");
    }
}
