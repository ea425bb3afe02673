//! Reading typed values from a fuzz input: every read succeeds (zeros once the bytes run
//! out), so that any byte string is a valid program for a target.

/// A cursor over the bytes of one fuzz input.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// Tells whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    /// The next `N` bytes, zero-filled past the end.
    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let taken = N.min(self.bytes.len());
        out[..taken].copy_from_slice(&self.bytes[..taken]);
        self.bytes = &self.bytes[taken..];
        out
    }

    /// The next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        self.array::<1>()[0]
    }

    /// The next byte as a boolean (its lowest bit).
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// The next 4 bytes, little-endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    /// The next 8 bytes, little-endian.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }

    /// A value below `bound` (which must be positive) from the next byte, or from the next
    /// 4 bytes when `bound` exceeds 256.
    pub fn below(&mut self, bound: usize) -> usize {
        debug_assert!(bound > 0);
        if bound <= 256 {
            usize::from(self.u8()) % bound
        } else {
            self.u32() as usize % bound
        }
    }

    /// The next 4 bytes as the bits of an `f32` (any value: NaN, infinities, subnormals).
    pub fn f32_bits(&mut self) -> f32 {
        f32::from_bits(self.u32())
    }

    /// The next 8 bytes as the bits of an `f64` (any value).
    pub fn f64_bits(&mut self) -> f64 {
        f64::from_bits(self.u64())
    }

    /// Takes the next `len` bytes (fewer at the end).
    pub fn take(&mut self, len: usize) -> &'a [u8] {
        let taken = len.min(self.bytes.len());
        let (head, tail) = self.bytes.split_at(taken);
        self.bytes = tail;
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_past_the_end_are_zeros() {
        let mut input = Input::new(&[1, 2, 3]);
        assert_eq!(input.u8(), 1);
        assert_eq!(input.u32(), 0x0302);
        assert!(input.is_empty());
        assert_eq!(input.u64(), 0);
        assert_eq!(input.below(7), 0);
        assert_eq!(input.take(4), &[] as &[u8]);
        let mut input = Input::new(&[9, 9, 1, 0, 0, 0]);
        assert_eq!(input.below(4), 1);
        assert_eq!(input.take(1), &[9]);
        assert_eq!(input.below(1000), 1);
    }
}
