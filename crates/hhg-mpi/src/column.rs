//! Per-particle arrays that travel with their particles: the solver registers its arrays as
//! columns, and migration packs, removes and appends their entries.

use bytemuck::Pod;

/// A per-particle array that `DistributedSearch::migrate` moves with its particles.
///
/// Implemented for `Vec<T>` of any plain-data `T` (`f64`, `[f64; 3]`, `u32`, ...), whose
/// entries are copied bit for bit.
pub trait Column {
    /// The number of entries (one per particle).
    fn len(&self) -> usize;

    /// Whether the column is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The size of one entry in bytes.
    fn entry_bytes(&self) -> usize;

    /// Appends the bytes of entry `index` to `out`.
    fn pack(&self, index: usize, out: &mut Vec<u8>);

    /// Keeps the entries whose `keep` is true, in their order.
    fn retain_mask(&mut self, keep: &[bool]);

    /// Appends one entry read from `bytes` (exactly [`Column::entry_bytes`] long).
    fn push_bytes(&mut self, bytes: &[u8]);
}

impl<T: Pod> Column for Vec<T> {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    fn entry_bytes(&self) -> usize {
        size_of::<T>()
    }

    fn pack(&self, index: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(bytemuck::bytes_of(&self[index]));
    }

    fn retain_mask(&mut self, keep: &[bool]) {
        retain_by_mask(self, keep);
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        self.push(bytemuck::pod_read_unaligned(bytes));
    }
}

/// Keeps the entries of `values` whose `keep` is true, in their order.
pub(crate) fn retain_by_mask<T>(values: &mut Vec<T>, keep: &[bool]) {
    debug_assert_eq!(values.len(), keep.len());
    let mut flags = keep.iter();
    values.retain(|_| *flags.next().unwrap_or(&false));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_pack_retain_and_append_bitwise() {
        let mut masses = vec![1.5f64, -0.0, f64::MIN_POSITIVE];
        let mut bytes = Vec::new();
        masses.pack(2, &mut bytes);
        masses.pack(1, &mut bytes);
        Column::retain_mask(&mut masses, &[true, false, false]);
        masses.push_bytes(&bytes[..8]);
        masses.push_bytes(&bytes[8..]);
        let bits: Vec<u64> = masses.iter().map(|m| m.to_bits()).collect();
        assert_eq!(
            bits,
            [
                1.5f64.to_bits(),
                f64::MIN_POSITIVE.to_bits(),
                (-0.0f64).to_bits()
            ]
        );
    }
}
