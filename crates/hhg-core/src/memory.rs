//! Fallible growth of outputs and of the scratch that gathers them: allocation failures and
//! caps on an output's size become [`Error::OutOfMemory`] and [`Error::OutputTooLarge`]
//! instead of aborting the process.
//!
//! An output grows only through these helpers: `Vec::try_reserve` in place of `resize` and
//! `push`, and a cap check before anything is allocated for entries beyond the cap.

use crate::error::Error;

/// Makes `buffer` hold exactly `len` values (growing as `resize` does), the new ones `fill`, without aborting when the
/// memory is not there: [`Error::OutOfMemory`] naming `what`, the buffer unchanged.
pub(crate) fn try_resize<V: Clone>(
    buffer: &mut Vec<V>,
    len: usize,
    fill: V,
    what: &'static str,
) -> Result<(), Error> {
    if len > buffer.len() {
        // Amortized, as `resize` grows: a buffer that grows a little each step does not
        // allocate each step.
        buffer
            .try_reserve(len - buffer.len())
            .map_err(|_| out_of_memory::<V>(len, what))?;
    }
    buffer.resize(len, fill);
    Ok(())
}

/// Makes room for `total` values in `buffer` (its capacity, exactly, when it grows), without
/// aborting when the memory is not there: [`Error::OutOfMemory`] naming `what`.
pub(crate) fn try_reserve_total<V>(
    buffer: &mut Vec<V>,
    total: usize,
    what: &'static str,
) -> Result<(), Error> {
    if total <= buffer.capacity() {
        return Ok(());
    }
    buffer
        .try_reserve_exact(total - buffer.len())
        .map_err(|_| out_of_memory::<V>(total, what))
}

/// The error of `values` values of `V` that could not be allocated.
pub(crate) fn out_of_memory<V>(values: usize, what: &'static str) -> Error {
    Error::OutOfMemory {
        what,
        bytes: values.saturating_mul(size_of::<V>()),
    }
}

/// Fails with [`Error::OutputTooLarge`] when an output of `what` needs `at_least` entries,
/// more than `cap`.
pub(crate) fn check_cap(what: &'static str, at_least: usize, cap: usize) -> Result<(), Error> {
    if at_least > cap {
        return Err(Error::OutputTooLarge {
            what,
            at_least,
            cap,
        });
    }
    Ok(())
}

/// The pairs one work unit finds, for [`PairList::collect_units`](crate::PairList::collect_units):
/// a buffer whose growth cannot abort. A push that finds no memory, or that would take the
/// unit past the output's cap, records why and drops the pair, and so does every later
/// push; the collection then fails with that error.
#[derive(Clone, Debug, Default)]
pub struct PairSink {
    pairs: Vec<[u32; 2]>,
    /// The most pairs the output may hold (the unit alone may not exceed it).
    cap: usize,
    failure: Option<Error>,
}

/// Pairs a sink makes room for at least, when it grows.
const SINK_MIN_GROWTH: usize = 64;

impl PairSink {
    /// Adds a pair (see the type's documentation for what happens without memory).
    #[inline]
    pub fn push(&mut self, pair: [u32; 2]) {
        // Growth is amortized, so the capacity may pass the cap: the cap is checked too.
        let full = self.pairs.len() == self.pairs.capacity() || self.pairs.len() >= self.cap;
        if full && !self.grow(1) {
            return;
        }
        self.pairs.push(pair);
    }

    /// Adds every pair of `pairs`.
    pub fn extend(&mut self, pairs: impl IntoIterator<Item = [u32; 2]>) {
        for pair in pairs {
            self.push(pair);
        }
    }

    /// The pairs pushed so far.
    pub fn pairs(&self) -> &[[u32; 2]] {
        &self.pairs
    }

    /// How many pairs were pushed.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Tells whether no pair was pushed.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Tells whether a push failed (the unit's pairs are then incomplete): a long search may
    /// stop early.
    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }

    /// Empties the sink for a unit of an output capped at `cap` pairs.
    pub(crate) fn start(&mut self, cap: usize) {
        self.pairs.clear();
        self.cap = cap;
        self.failure = None;
    }

    /// Takes the reason a push failed, if one did.
    pub(crate) fn take_failure(&mut self) -> Option<Error> {
        self.failure.take()
    }

    /// The bytes the sink holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        size_of::<[u32; 2]>() * self.pairs.capacity()
    }

    /// Makes room for `more` pairs, doubling; false (with the reason recorded) when the cap
    /// or the allocator refuses.
    #[cold]
    fn grow(&mut self, more: usize) -> bool {
        if self.failure.is_some() {
            return false;
        }
        let len = self.pairs.len();
        let wanted = len.saturating_add(more);
        if let Err(error) = check_cap("pairs", wanted, self.cap) {
            self.failure = Some(error);
            return false;
        }
        // Amortized growth, as `Vec::push` grows (at least doubling).
        if self.pairs.try_reserve(more.max(SINK_MIN_GROWTH)).is_err() {
            self.failure = Some(out_of_memory::<[u32; 2]>(wanted, "a work unit's pairs"));
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink refuses the pair past its cap, keeps refusing, and reports the cap.
    #[test]
    fn sink_stops_at_its_cap() {
        let mut sink = PairSink::default();
        sink.start(100);
        for k in 0..150 {
            sink.push([k, k + 1]);
        }
        assert_eq!(sink.len(), 100);
        assert!(sink.failed());
        assert_eq!(
            sink.take_failure(),
            Some(Error::OutputTooLarge {
                what: "pairs",
                at_least: 101,
                cap: 100
            })
        );
        sink.start(usize::MAX);
        sink.extend([[1, 2], [3, 4]]);
        assert_eq!(sink.pairs(), &[[1, 2], [3, 4]]);
        assert!(!sink.failed());
    }

    /// A size the allocator cannot give is an error, not an abort, and leaves the buffer.
    #[test]
    fn impossible_sizes_are_errors() {
        let mut buffer = vec![1u64, 2, 3];
        let error = try_resize(&mut buffer, usize::MAX / 4, 0, "a test buffer").unwrap_err();
        assert!(matches!(
            error,
            Error::OutOfMemory {
                what: "a test buffer",
                ..
            }
        ));
        assert_eq!(buffer, [1, 2, 3]);
        try_resize(&mut buffer, 5, 9, "a test buffer").unwrap();
        assert_eq!(buffer, [1, 2, 3, 9, 9]);
        assert!(check_cap("pairs", 5, 4).is_err());
        assert!(check_cap("pairs", 4, 4).is_ok());
    }
}
