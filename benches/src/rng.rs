//! A tiny seeded pseudo-random number generator (xoshiro256++ seeded by SplitMix64) for the scene generators.
//!
//! The benchmarks need reproducible scenes, not cryptographic quality, so a few dozen lines
//! replace an external crate: the same seed gives the same stream on every platform.

/// One step of SplitMix64: advances `state` and returns the next output.
///
/// It is used to expand a single 64-bit seed into the 256-bit xoshiro state and to derive
/// independent seeds for different scenes.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The xoshiro256++ generator with a Box-Muller Gaussian on top.
#[derive(Clone, Debug)]
pub struct Rng {
    state: [u64; 4],
    /// The second value of the last Box-Muller pair, handed out by the next call.
    spare_gaussian: Option<f64>,
}

impl Rng {
    /// Creates a generator whose whole stream is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let state = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Self {
            state,
            spare_gaussian: None,
        }
    }

    /// Returns the next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Returns a uniform `f64` in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Returns a uniform `f64` in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// Returns a uniform integer in `0..bound` (`bound` must be positive).
    ///
    /// The multiply-shift mapping has a bias of at most `bound / 2^64`, far below anything a
    /// benchmark scene can notice.
    pub fn below(&mut self, bound: usize) -> usize {
        debug_assert!(bound > 0, "below() needs a positive bound");
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// Returns a standard normal deviate (mean 0, variance 1) by the Box-Muller transform.
    pub fn gaussian(&mut self) -> f64 {
        if let Some(z) = self.spare_gaussian.take() {
            return z;
        }
        // `1 - u` lies in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        let radius = (-2.0 * u1.ln()).sqrt();
        let angle = std::f64::consts::TAU * u2;
        self.spare_gaussian = Some(radius * angle.sin());
        radius * angle.cos()
    }

    /// Shuffles `items` in place with the Fisher-Yates algorithm.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut c = Rng::new(43);
        assert_ne!(Rng::new(42).next_u64(), c.next_u64());
    }

    #[test]
    fn uniform_and_gaussian_moments_are_plausible() {
        let mut rng = Rng::new(7);
        let n = 200_000;
        let mut sum = 0.0;
        let mut sum_sq = 0.0;
        let mut usum = 0.0;
        for _ in 0..n {
            let g = rng.gaussian();
            sum += g;
            sum_sq += g * g;
            let u = rng.next_f64();
            assert!((0.0..1.0).contains(&u));
            usum += u;
        }
        let mean = sum / n as f64;
        let var = sum_sq / n as f64 - mean * mean;
        assert!(mean.abs() < 0.01, "gaussian mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "gaussian variance {var}");
        assert!((usum / n as f64 - 0.5).abs() < 0.01);
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut rng = Rng::new(1);
        let mut v: Vec<u32> = (0..1000).collect();
        rng.shuffle(&mut v);
        assert_ne!(v, (0..1000).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..1000).collect::<Vec<_>>());
    }
}
