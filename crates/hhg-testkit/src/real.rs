//! The coordinate types under test.

use hhg_core::Real;

/// The coordinate types under test, with the few extra operations the tests need.
pub trait TestReal: Real {
    /// The type's name, for messages.
    const NAME: &'static str;

    /// The next representable value towards +infinity.
    fn next_up(self) -> Self;

    /// The next representable value towards -infinity.
    fn next_down(self) -> Self;

    /// The bit pattern, widened (exact comparison of values, including the sign of zero).
    fn bits(self) -> u64;
}

impl TestReal for f32 {
    const NAME: &'static str = "f32";

    fn next_up(self) -> Self {
        f32::next_up(self)
    }

    fn next_down(self) -> Self {
        f32::next_down(self)
    }

    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl TestReal for f64 {
    const NAME: &'static str = "f64";

    fn next_up(self) -> Self {
        f64::next_up(self)
    }

    fn next_down(self) -> Self {
        f64::next_down(self)
    }

    fn bits(self) -> u64 {
        self.to_bits()
    }
}
