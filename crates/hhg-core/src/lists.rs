//! Per-point neighbour lists in CSR form: a set against itself, query points against a set,
//! and one set against another; both directions, the caller's numbering, each list ascending.
//!
//! One pass gathers every list: work units (bucket ranges of the set itself, or ranges of
//! query points) run in parallel, each compressing the hits of batches of points that share
//! a neighbourhood into its own buffer, mapped to the caller's numbering and sorted while
//! they are hot in cache. The per-list counts then give the offsets, and each unit copies its
//! lists to their final place.

mod chunks;
mod cross;
mod exceptions;
pub(crate) mod gather;
mod in_order;
mod near_order;
mod self_lists;

use rayon::prelude::*;

pub use chunks::ListChunk;
pub use exceptions::{bucket_occupancy, exception_count, max_exceptions, set_exceptions_share};

use crate::error::Error;
use crate::kernel::{MaskKernel, PackedCandidates};
use crate::memory::{check_cap, try_reserve_total, try_resize};
use crate::parallel::{DisjointSlice, exclusive_scan, keep_larger, prefetch, reserve_with_slack};
use crate::real::Real;
use crate::smallsort::sort_padded;
use gather::{UNSORTED_PROBE, UNSORTED_STREAK, is_ascending};

/// How many lists ahead the copy of lists into place asks the cache for their places.
const SCATTER_AHEAD: usize = 8;

/// Pairs per parallel chunk of the index check of [`NeighborLists::assign_from_pairs`].
const VALIDATE_CHUNK: usize = 1 << 14;

/// The order of the entries of each neighbour list (see [`Grid::set_list_order`](crate::Grid::set_list_order)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ListOrder {
    /// Each list ascends in the caller's numbering (the default).
    #[default]
    Ascending,
    /// Each list follows the grid's cell order: its entries ascend by their position in
    /// [`Grid::order`](crate::Grid::order) (the sorted position of each point). This is the order the search
    /// finds them in, so no list is sorted; it is deterministic (the same for any thread
    /// count, kernel and run-time build) and, for input in cell order, ascending. SPH sums
    /// over a list do not depend on its order but for rounding; CompactNSearch and
    /// TreeNSearch promise no order at all.
    CellOrder,
}

/// Which list pass [`Grid::neighbor_lists`](crate::Grid::neighbor_lists) takes on the grid as built (see
/// [`Grid::list_pass`](crate::Grid::list_pass)); every pass gives the same lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListPass {
    /// The points came in cell order (`order()` is the identity): no list needs sorting
    /// and each work unit's lists go into place while hot.
    InCellOrder,
    /// The caller's numbering keeps the points of a cell mostly together (cell order after
    /// some motion, Morton or Hilbert order): work units are ranges of the caller's
    /// numbering, whose lists go into place while hot.
    NearCellOrder,
    /// The caller's numbering is cell order but for a few points (a solver's order a step
    /// or so after a reorder): the pass for input in cell order runs over the caller's
    /// numbering, the points out of their place searched apart and merged into the lists.
    /// Taken for ascending lists without distances of a set against itself.
    InCellOrderWithExceptions,
    /// Any other order (random): work units of cells, lists copied into place at the end.
    General,
    /// The grid is empty.
    Empty,
}

/// Neighbour lists in compressed sparse row form.
///
/// The neighbours of list `i` are `indices()[offsets()[i]..offsets()[i + 1]]`, numbered as
/// the caller numbered the searched set, in ascending order (or in the searched grid's cell
/// order, see [`ListOrder`]); with distances requested,
/// `distances_squared()` holds the squared distance of each entry at the same position.
/// Reuse one value across time steps: its buffers only grow.
#[derive(Clone, Debug, Default)]
pub struct NeighborLists<T: Real> {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    distances: Vec<T>,
    has_distances: bool,
    buffers: Vec<UnitBuffer<T>>,
    scan: Vec<usize>,
    /// Bucket starts of the counting sort that turns pairs into lists.
    scan_starts: Vec<u32>,
    /// Scratch of the pass for input in cell order.
    in_order: in_order::Scratch<T>,
    /// The sorted position of each caller index (pass for input nearly in cell order).
    inverse: Vec<u32>,
    /// Scratch of the pass for input in cell order but for a few exceptions.
    exceptions: exceptions::Scratch<T>,
    /// Scratch of the lists made from pairs (`assign_from_pairs`, the variable-radius
    /// search).
    pub(crate) from_pairs: FromPairs<T>,
    /// Scratch of the periodic search: the lists of every point and ghost image.
    pub(crate) images: ImageLists<T>,
    /// Scratch of the plane's list passes (`Grid2`).
    pub(crate) plane: crate::plane::PlaneScratch<T>,
    /// The most entries the lists may hold ([`NeighborLists::set_max_entries`]).
    max_entries: Option<usize>,
}

/// The buffers of [`NeighborLists`] handed over by [`NeighborLists::take`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TakenLists<T> {
    /// `offsets[i] .. offsets[i + 1]` are list `i`'s entries (one more offset than lists).
    pub offsets: Vec<usize>,
    /// All lists, concatenated.
    pub indices: Vec<u32>,
    /// Squared distances alongside `indices`, when they were requested.
    pub distances_squared: Option<Vec<T>>,
}

/// The lists of a periodic search's points and their ghost images, merged into the points'
/// lists afterwards ([`crate::periodic::PeriodicSearch::neighbor_lists`]).
#[derive(Debug, Default)]
pub(crate) struct ImageLists<T: Real>(pub(crate) Option<Box<NeighborLists<T>>>);

/// A clone starts with empty scratch: none of it carries meaning between calls.
impl<T: Real> Clone for ImageLists<T> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Scratch of the conversion of unique pairs into lists: the pairs of a search that finds
/// pairs first, and the counting sort's buffers.
#[derive(Debug, Default)]
pub(crate) struct FromPairs<T: Real> {
    pub(crate) pairs: crate::pairs::PairList<T>,
    sort: crate::sort::SortScratch,
}

/// A clone starts with empty scratch: none of it carries meaning between calls.
impl<T: Real> Clone for FromPairs<T> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// A stretch of a unit's entries as gathered that lands in one piece in list order: the
/// lists of consecutive places, gathered one after the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Piece {
    /// The first entry of the stretch among the entries as gathered.
    from: u32,
    /// Where the stretch starts among the unit's entries in list order.
    to: u32,
    /// The entries of the stretch.
    len: u32,
}

/// The lists one work unit gathered, in the order it visited its searching points.
#[derive(Clone, Debug, Default)]
struct UnitBuffer<T> {
    /// Entries of all lists, back to back; only `..filled` is meaningful, the rest is
    /// scratch kept for the next batch and the next search.
    entries: Vec<u32>,
    /// Squared distances alongside `entries`, when requested.
    distances: Vec<T>,
    filled: usize,
    /// Output list of each gathered list.
    slots: Vec<u32>,
    /// Length of each gathered list.
    lens: Vec<u32>,
    /// Scratch of the merge sort for lists longer than one sorting network.
    merge: Vec<u32>,
    /// Scratch of the sort of lists with distances: packed (index, position) keys and the
    /// distances in their new order.
    sort_keys: Vec<u64>,
    sort_distances: Vec<T>,
    /// The candidates packed for the current batch.
    packed: PackedCandidates<T>,
    /// The most entries the output may hold: a unit alone past it fails.
    cap: usize,
    /// Why the unit stopped short (no memory, or past the cap); its lists are then
    /// incomplete and the pass fails.
    failure: Option<Error>,
    /// Lists checked in a row that did not ascend (see [`UnitBuffer::sort_gathered`]).
    unsorted_streak: u32,
    /// The runs of consecutive sorted positions of a unit of the pass for input nearly in
    /// cell order (see `near_order`).
    runs: Vec<(u32, u32)>,
    /// The other half of the radix sort of `runs`.
    runs_scratch: Vec<(u32, u32)>,
    /// For such a unit's `count` lists, by their place in list order: where each starts
    /// among the entries as gathered (`..count`), then its length (`count..`).
    list_starts: Vec<u32>,
    /// How such a unit's entries, gathered out of list order, go into list order as they are
    /// copied to their place (empty when `entries` holds the lists in list order).
    pieces: Vec<Piece>,
    /// The hits of a unit of the pass for cell order with exceptions that its lists lack
    /// (see `exceptions`).
    missing_hits: Vec<u64>,
}

impl<T: Real> UnitBuffer<T> {
    /// Gives a kernel that packs ([`MaskKernel::PACKS`]) room to pack the candidates of a
    /// small neighbourhood, so that a buffer that never packed before meets its first batch
    /// of [`PACK_MIN`] points with room: in a sparse set only a few of a pass's units meet
    /// one, not always the same units from one step to the next.
    #[inline]
    fn room_to_pack<K: MaskKernel>(&mut self) {
        if K::PACKS {
            self.packed.make_room(crate::parallel::MIN_ROOM);
        }
    }

    /// Keeps, field by field, the larger allocation of `self` and `other`.
    fn absorb(&mut self, other: Self) {
        keep_larger(&mut self.entries, other.entries);
        keep_larger(&mut self.distances, other.distances);
        keep_larger(&mut self.slots, other.slots);
        keep_larger(&mut self.lens, other.lens);
        keep_larger(&mut self.merge, other.merge);
        keep_larger(&mut self.sort_keys, other.sort_keys);
        keep_larger(&mut self.sort_distances, other.sort_distances);
        keep_larger(&mut self.runs, other.runs);
        keep_larger(&mut self.runs_scratch, other.runs_scratch);
        keep_larger(&mut self.list_starts, other.list_starts);
        keep_larger(&mut self.pieces, other.pieces);
        keep_larger(&mut self.missing_hits, other.missing_hits);
        self.packed.absorb(other.packed);
    }

    /// Frees the scratch that only a buffer kept for the next pass needs: a spare buffer
    /// of a growing output waits with its lists and should hold nothing else.
    fn release_scratch(&mut self) {
        self.merge = Vec::new();
        self.sort_keys = Vec::new();
        self.sort_distances = Vec::new();
    }
}

impl<T: Copy + Default> UnitBuffer<T> {
    /// Empties the buffer for `lists` searching points of an output capped at `cap`
    /// entries, with room to record them all.
    fn start(&mut self, lists: usize, cap: usize) {
        self.filled = 0;
        self.unsorted_streak = 0;
        self.pieces.clear();
        self.slots.clear();
        self.lens.clear();
        self.cap = cap;
        self.failure = None;
        reserve_with_slack(&mut self.slots, lists);
        reserve_with_slack(&mut self.lens, lists);
    }

    /// Makes `entries[..len]` (and the distances, when requested) addressable, growing the
    /// buffers only past their high-water mark. False, with the reason recorded, when the
    /// unit's lists already pass the output's cap or the memory is not there: the caller
    /// then gathers nothing more.
    #[inline(always)]
    #[must_use]
    fn reserve_entries(&mut self, len: usize, with_distances: bool) -> bool {
        if self.entries.len() >= len
            && (!with_distances || self.distances.len() >= len)
            && self.filled <= self.cap
        {
            return true;
        }
        self.grow_entries(len, with_distances)
    }

    #[cold]
    fn grow_entries(&mut self, len: usize, with_distances: bool) -> bool {
        if self.failure.is_some() {
            return false;
        }
        let grown = check_cap("list entries", self.filled, self.cap)
            .and_then(|()| {
                if self.entries.len() < len {
                    try_resize(&mut self.entries, len, 0, "a work unit's list entries")?;
                }
                Ok(())
            })
            .and_then(|()| {
                if with_distances && self.distances.len() < len {
                    let what = "a work unit's list distances";
                    try_resize(&mut self.distances, len, T::default(), what)?;
                }
                Ok(())
            });
        match grown {
            Ok(()) => true,
            Err(error) => {
                self.failure = Some(error);
                false
            }
        }
    }

    /// Whether the unit stopped short: then drops its incomplete lists (the unit holds no
    /// list, so the pass may still place it) and hands over the reason.
    fn take_failure(&mut self) -> Option<Error> {
        let failure = self.failure.take()?;
        self.filled = 0;
        self.slots.clear();
        self.lens.clear();
        Some(failure)
    }

    /// Sorts the `len` entries gathered at `entries[from..]` (in a row of `row`, room for the
    /// sorting network) where the numbering broke their order; `ascending` says they are
    /// known to ascend already.
    ///
    /// A list is checked before it is sorted while lists ascend now and then (input nearly
    /// in cell order, such as a solver's between two reorderings). After [`UNSORTED_STREAK`]
    /// checked lists in a row that did not ascend (input in random order), only every
    /// [`UNSORTED_PROBE`]-th list is checked, and the first that ascends brings the checks
    /// back. The check of a list just gathered cost 6-11 % of the list pass in random order.
    ///
    /// # Safety
    /// With `avx2`, [`avx2_detected`](crate::simd::avx2_detected) holds; with `avx512`,
    /// [`avx512_detected`](crate::simd::avx512_detected) holds.
    #[inline(always)]
    unsafe fn sort_gathered(
        &mut self,
        from: usize,
        len: usize,
        row: usize,
        ascending: bool,
        avx2: bool,
        avx512: bool,
    ) {
        if ascending {
            return;
        }
        let check = self.unsorted_streak < UNSORTED_STREAK
            || self.lens.len().is_multiple_of(UNSORTED_PROBE);
        if check {
            if is_ascending(&self.entries[from..from + len]) {
                self.unsorted_streak = 0;
                return;
            }
            self.unsorted_streak = self.unsorted_streak.saturating_add(1);
        }
        // SAFETY: the caller sets `avx2` and `avx512` only where the CPU has the features.
        unsafe {
            sort_padded(
                &mut self.entries[from..from + row],
                len,
                &mut self.merge,
                avx2,
                avx512,
            )
        };
    }

    /// Records the list of output list `slot`, whose `len` entries end the filled buffer.
    #[inline(always)]
    fn push_list(&mut self, slot: usize, len: usize) {
        self.slots.push(slot as u32);
        self.lens.push(len as u32);
        self.filled += len;
    }
}

impl<T: Real> NeighborLists<T> {
    /// How many lists there are (one per searching point).
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Tells whether there is no list.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `len() + 1` offsets into [`NeighborLists::indices`].
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// All lists, concatenated.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Squared distances alongside `indices()`, when they were requested.
    pub fn distances_squared(&self) -> Option<&[T]> {
        self.has_distances.then_some(&self.distances[..])
    }

    /// Hands over the lists' offsets, indices and (when they were requested) squared
    /// distances without a copy, for a caller that keeps them (such as arrays that take
    /// ownership of a `Vec`). The lists are left empty (no list); the scratch stays, and the
    /// next search allocates only these buffers afresh.
    pub fn take(&mut self) -> TakenLists<T> {
        let taken = TakenLists {
            offsets: std::mem::replace(&mut self.offsets, vec![0]),
            indices: std::mem::take(&mut self.indices),
            distances_squared: std::mem::replace(&mut self.has_distances, false)
                .then(|| std::mem::take(&mut self.distances)),
        };
        self.distances.clear();
        taken
    }

    /// The neighbours of point `i`, ascending (or in cell order, see [`ListOrder`]).
    pub fn neighbors(&self, i: usize) -> &[u32] {
        &self.indices[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The squared distances to the neighbours of point `i`, when they were requested.
    pub fn neighbor_distances_squared(&self, i: usize) -> Option<&[T]> {
        self.has_distances
            .then(|| &self.distances[self.offsets[i]..self.offsets[i + 1]])
    }

    /// The total number of list entries (twice the pair count for a set against itself).
    pub fn total(&self) -> usize {
        self.indices.len()
    }

    /// Caps the lists at `max_entries` entries in all (`None`, the default: no cap). A search
    /// whose lists would exceed the cap fails with [`Error::OutputTooLarge`] before the lists
    /// grow past it, and leaves them empty: a guard against a radius or a cloud that would
    /// take all memory (take such lists in chunks instead, see
    /// [`Grid::neighbor_lists_in_chunks`](crate::Grid::neighbor_lists_in_chunks)). The scratch
    /// of the work units in flight may hold up to the cap each before the total is known.
    pub fn set_max_entries(&mut self, max_entries: Option<usize>) {
        self.max_entries = max_entries;
    }

    /// The cap set by [`NeighborLists::set_max_entries`].
    pub fn max_entries(&self) -> Option<usize> {
        self.max_entries
    }

    /// The cap as a count (no cap: `usize::MAX`).
    fn cap(&self) -> usize {
        self.max_entries.unwrap_or(usize::MAX)
    }

    /// Leaves no list and no entry after a failed search (the buffers stay).
    pub(crate) fn clear_after_failure(&mut self) {
        self.offsets.clear();
        self.offsets.push(0);
        self.indices.clear();
        self.distances.clear();
    }

    /// Replaces the lists by those of `n` points with the unique pairs `pairs` (each
    /// `[i, j]` with `i != j`, both `< n`, no pair twice): both directions, each list
    /// ascending, no distances. For schemes that find pairs and need CSR lists.
    ///
    /// Fails with [`Error::PairIndexOutOfRange`], naming the first pair with an index not
    /// below `n`, and then leaves the lists as they were.
    pub fn assign_from_pairs(&mut self, n: usize, pairs: &[[u32; 2]]) -> Result<(), Error> {
        // The largest index first, in a loop the compiler vectorizes; the search for the first
        // pair out of range (a rayon `position_first`, whose per-item bookkeeping cost ~19
        // instructions per pair, 5 % of a `VariableRadiusSearch` step) only when there is one.
        let largest = pairs
            .par_chunks(VALIDATE_CHUNK)
            .map(|chunk| chunk.iter().fold(0u32, |m, &[i, j]| m.max(i).max(j)))
            .max()
            .unwrap_or(0);
        if (largest as usize) < n {
            return self.assign_pairs(n, pairs);
        }
        if let Some(pair) = pairs
            .par_iter()
            .position_first(|&[i, j]| i as usize >= n || j as usize >= n)
        {
            return Err(Error::PairIndexOutOfRange {
                pair,
                indices: pairs[pair],
                count: n,
            });
        }
        self.assign_pairs(n, pairs)
    }

    /// Replaces the lists by those of `n` objects with the unique pairs that `search` writes
    /// into an empty [`PairList`](crate::PairList) (each `[i, j]` with `i != j`, both `< n`, no pair
    /// twice): both directions, each list ascending, no distances. The pair list is scratch
    /// kept in the lists, so a search that finds pairs first (the sibling crates' schemes, a
    /// broad phase) makes its lists without a buffer of its own and, repeated, allocates
    /// nothing.
    ///
    /// Fails with [`Error::PairIndexOutOfRange`], naming the first pair with an index not
    /// below `n`, and then leaves the lists as they were; with the error of `search`, or for
    /// want of memory or past the lists' cap, and then leaves no list.
    pub fn assign_from_pair_search(
        &mut self,
        n: usize,
        search: impl FnOnce(&mut crate::PairList<T>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.from_pairs.pairs.clear();
        self.lists_from_scratch_pairs(search, |lists, pairs| lists.assign_from_pairs(n, pairs))
    }

    /// [`NeighborLists::assign_from_pair_search`] for a search of this crate over a build of
    /// `n` objects that collects its pairs by [`PairList::collect_units`](crate::PairList::collect_units),
    /// which replaces every pair: the scratch keeps the last call's pairs, so that only
    /// growth is zeroed before the search overwrites them (zeroing them all cost 3 % of a
    /// `VariableRadiusSearch` step's instructions), and the indices are not checked (a
    /// build's pairs are below its count; the counting sort panics otherwise).
    pub(crate) fn assign_from_collected_pairs(
        &mut self,
        n: usize,
        search: impl FnOnce(&mut crate::PairList<T>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.lists_from_scratch_pairs(search, |lists, pairs| lists.assign_pairs(n, pairs))
    }

    /// Runs `search` into the scratch pair list, then `assign` on its pairs; leaves no list
    /// when either fails, but for [`Error::PairIndexOutOfRange`], which leaves the lists as
    /// they were.
    fn lists_from_scratch_pairs(
        &mut self,
        search: impl FnOnce(&mut crate::PairList<T>) -> Result<(), Error>,
        assign: impl FnOnce(&mut Self, &[[u32; 2]]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut pairs = std::mem::take(&mut self.from_pairs.pairs);
        // Each pair is two entries: the pairs may take half the lists' cap.
        pairs.set_max_pairs(self.max_entries.map(|cap| cap / 2));
        let result = search(&mut pairs).and_then(|()| assign(self, pairs.pairs()));
        if let Err(error) = &result
            && !matches!(error, Error::PairIndexOutOfRange { .. })
        {
            self.clear_after_failure();
        }
        self.from_pairs.pairs = pairs;
        result
    }

    /// Replaces the lists by those of `n` objects with the unique pairs `pairs`: both
    /// directions, each list ascending, no distances. A parallel counting sort of the
    /// directed pairs by their first object, then a sort of each list. Every index must be
    /// below `n`, as it is for the pairs of a build over `n` objects (the counting sort
    /// panics otherwise). Fails for want of memory or past the cap, before the lists grow,
    /// and then leaves no list.
    pub(crate) fn assign_pairs(&mut self, n: usize, pairs: &[[u32; 2]]) -> Result<(), Error> {
        let result = self.assign_pairs_inner(n, pairs);
        if result.is_err() {
            self.clear_after_failure();
        }
        result
    }

    fn assign_pairs_inner(&mut self, n: usize, pairs: &[[u32; 2]]) -> Result<(), Error> {
        if n == 0 {
            // The counting sort needs a bucket; no object has no pair.
            debug_assert!(pairs.is_empty(), "pairs of no object");
            self.has_distances = false;
            self.distances.clear();
            self.indices.clear();
            self.offsets.clear();
            self.offsets.push(0);
            return Ok(());
        }
        let total = pairs.len().saturating_mul(2);
        check_cap("list entries", total, self.cap())?;
        self.has_distances = false;
        self.distances.clear();
        // The counting sort grows the entries to `total` inside this reservation and writes
        // every one of them: the entries of the last lists stay until then, so that only
        // growth is zeroed first.
        self.indices.truncate(total);
        try_reserve_total(&mut self.indices, total, "the list entries")?;
        let mut starts = std::mem::take(&mut self.scan_starts);
        crate::sort::pair_partners(
            pairs,
            n,
            &mut starts,
            &mut self.indices,
            &mut self.from_pairs.sort,
        );
        debug_assert_eq!(total, self.indices.len());
        self.offsets.clear();
        self.offsets.extend(starts.iter().map(|&s| s as usize));
        self.sort_each_list();
        self.scan_starts = starts;
        Ok(())
    }

    /// Replaces the lists by `n` lists without distances, list `i` holding `count(i)` entries
    /// that `fill(i, list)` writes (in parallel). Fails for want of memory or past the cap,
    /// before the entries are allocated, and then leaves no list.
    pub(crate) fn assign_with(
        &mut self,
        n: usize,
        count: impl Fn(usize) -> usize + Sync,
        fill: impl Fn(usize, &mut [u32]) + Sync,
    ) -> Result<(), Error> {
        if let Err(error) = self.size_lists(n, count, false) {
            self.clear_after_failure();
            return Err(error);
        }
        self.for_each_list_mut(fill);
        Ok(())
    }

    /// Replaces the lists by `n` lists with squared distances, list `i` holding `count(i)`
    /// entries that `fill(i, indices, distances)` writes (in parallel). Fails for want of
    /// memory or past the cap, before the entries are allocated, and then leaves no list.
    pub(crate) fn assign_with_distances(
        &mut self,
        n: usize,
        count: impl Fn(usize) -> usize + Sync,
        fill: impl Fn(usize, &mut [u32], &mut [T]) + Sync,
    ) -> Result<(), Error> {
        let total = match self.size_lists(n, count, true) {
            Ok(total) => total,
            Err(error) => {
                self.clear_after_failure();
                return Err(error);
            }
        };
        let indices = DisjointSlice::new(self.indices.as_mut_slice());
        let distances = DisjointSlice::new(self.distances.as_mut_slice());
        let offsets = &self.offsets;
        (0..n).into_par_iter().with_min_len(1024).for_each(|i| {
            let (s, e) = (offsets[i], offsets[i + 1]);
            debug_assert!(s <= e && e <= total);
            // SAFETY: the offsets ascend from 0 to `total`, the length of both slices, so
            // list `i` owns `s..e` of each alone and the ranges are in bounds.
            let (list, squared) =
                unsafe { (indices.range_mut(s, e - s), distances.range_mut(s, e - s)) };
            fill(i, list, squared);
        });
        Ok(())
    }

    /// The offsets of `n` lists of `count(i)` entries each, and room for their entries (and
    /// their distances when `with_distances`; none are kept otherwise): the total, or the
    /// error of the offsets' or the entries' memory or of the cap, checked before the
    /// entries are allocated. Only growth writes: every entry below the total is left for
    /// the caller's fill to write.
    fn size_lists(
        &mut self,
        n: usize,
        count: impl Fn(usize) -> usize + Sync,
        with_distances: bool,
    ) -> Result<usize, Error> {
        self.has_distances = with_distances;
        if !with_distances {
            self.distances.clear();
        }
        self.offsets.clear();
        try_resize(&mut self.offsets, n + 1, 0, "the list offsets")?;
        self.offsets[..n]
            .par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .for_each(|(i, slot)| *slot = count(i));
        let total = exclusive_scan(&mut self.offsets[..n], &mut self.scan);
        self.offsets[n] = total;
        check_cap("list entries", total, self.cap())?;
        try_resize(&mut self.indices, total, 0, "the list entries")?;
        if with_distances {
            try_resize(
                &mut self.distances,
                total,
                T::default(),
                "the list distances",
            )?;
        }
        Ok(total)
    }

    /// Calls `edit(i, list)` on every list's indices, in parallel (no distances may be
    /// attached).
    pub(crate) fn for_each_list_mut(&mut self, edit: impl Fn(usize, &mut [u32]) + Sync) {
        debug_assert!(!self.has_distances);
        let lists = self.len();
        debug_assert_eq!(self.offsets.get(lists).copied(), Some(self.indices.len()));
        let shared = DisjointSlice::new(self.indices.as_mut_slice());
        let offsets = &self.offsets;
        (0..lists).into_par_iter().with_min_len(1024).for_each(|i| {
            let (s, e) = (offsets[i], offsets[i + 1]);
            debug_assert!(s <= e);
            // SAFETY: the offsets ascend from 0 to the slice's length, so list `i` owns
            // `s..e` alone and the range is in bounds.
            let list = unsafe { shared.range_mut(s, e - s) };
            edit(i, list);
        });
    }

    /// Sorts every list ascending (no distances may be attached) in place with the bitonic
    /// networks of `smallsort`, in the widest build the CPU has. Lists built from pairs
    /// arrive in the pairs' order; the standard library's unstable sort took 18 % of the
    /// instructions of `VariableRadiusSearch::neighbor_lists` (callgrind, 20k particles over
    /// 8x), the networks a fraction of that (docs/performance.md).
    fn sort_each_list(&mut self) {
        debug_assert!(!self.has_distances);
        let lists = self.len();
        debug_assert_eq!(self.offsets.get(lists).copied(), Some(self.indices.len()));
        let avx2 = crate::simd::avx2_detected();
        let avx512 = crate::simd::avx512_detected();
        let shared = DisjointSlice::new(self.indices.as_mut_slice());
        let offsets = &self.offsets;
        (0..lists)
            .into_par_iter()
            .with_min_len(1024)
            .for_each_init(Vec::new, |scratch, i| {
                let (s, e) = (offsets[i], offsets[i + 1]);
                debug_assert!(s <= e);
                // SAFETY: the offsets ascend from 0 to the slice's length, so list `i` owns
                // `s..e` alone and the range is in bounds.
                let list = unsafe { shared.range_mut(s, e - s) };
                let len = list.len();
                // SAFETY: `avx2` and `avx512` are set only where the CPU has the features;
                // a row exactly as long as its list is sorted without padding.
                unsafe { sort_padded(list, len, scratch, avx2, avx512) };
                debug_assert!(list.is_sorted(), "list {i} left unsorted");
            });
    }

    /// Makes `lists` empty lists, keeping the buffers.
    fn reset(&mut self, lists: usize, units: usize, with_distances: bool) -> Result<(), Error> {
        self.offsets.clear();
        try_resize(&mut self.offsets, lists + 1, 0, "the list offsets")?;
        self.has_distances = with_distances;
        if self.buffers.len() < units {
            try_reserve_total(&mut self.buffers, units, "the work units' lists")?;
            self.buffers.resize_with(units, UnitBuffer::default);
        }
        Ok(())
    }

    /// Empties every list (the searched set is empty).
    fn clear_entries(&mut self) {
        self.indices.clear();
        self.distances.clear();
    }

    /// Turns the gathered buffers into the CSR arrays: counts to offsets, then each unit
    /// copies its lists into place (in parallel). Fails, before the output grows, where a
    /// unit stopped short or the total passes the cap.
    fn assemble(&mut self, units: usize) -> Result<(), Error> {
        if let Some(error) = self.buffers[..units]
            .iter_mut()
            .find_map(UnitBuffer::take_failure)
        {
            return Err(error);
        }
        let lists = self.len();
        let offsets = DisjointSlice::new(&mut self.offsets[..lists]);
        self.buffers[..units].par_iter().for_each(|buffer| {
            for (k, (&slot, &len)) in buffer.slots.iter().zip(&buffer.lens).enumerate() {
                if let Some(&later) = buffer.slots.get(k + 2 * SCATTER_AHEAD) {
                    offsets.prefetch(later as usize);
                }
                // SAFETY: every output list is gathered by exactly one unit, once, and
                // slots are < lists.
                unsafe { offsets.write(slot as usize, len as usize) }
            }
        });
        let total = exclusive_scan(&mut self.offsets[..lists], &mut self.scan);
        self.offsets[lists] = total;
        check_cap("list entries", total, self.cap())?;
        // Only growth writes: every entry below `total` is overwritten by the copies.
        try_resize(&mut self.indices, total, 0, "the list entries")?;
        if self.has_distances {
            try_resize(
                &mut self.distances,
                total,
                T::default(),
                "the list distances",
            )?;
        } else {
            self.distances.clear();
        }
        let indices = DisjointSlice::new(&mut self.indices);
        let distances = DisjointSlice::new(&mut self.distances);
        let offsets = &self.offsets;
        let with_distances = self.has_distances;
        self.buffers[..units].par_iter().for_each(|buffer| {
            let (Some(&first), Some(&last)) = (buffer.slots.first(), buffer.slots.last()) else {
                return;
            };
            // Lists gathered for consecutive slots (input in cell order) are consecutive in
            // the output too: one bulk copy instead of one per list.
            let span = last.checked_sub(first).map(|d| d as usize + 1);
            if span == Some(buffer.slots.len()) && buffer.slots.is_sorted() {
                let to = offsets[first as usize];
                // SAFETY: the slots are distinct, ascending and as many as first..=last holds,
                // so they are exactly first..=last in order: their output range belongs to
                // this buffer, and its length is the sum of their lengths, `buffer.filled`.
                let lists = unsafe { indices.range_mut(to, buffer.filled) };
                lists.copy_from_slice(&buffer.entries[..buffer.filled]);
                if with_distances {
                    // SAFETY: as above; the distances share the indices' layout.
                    let dist = unsafe { distances.range_mut(to, buffer.filled) };
                    dist.copy_from_slice(&buffer.distances[..buffer.filled]);
                }
                return;
            }
            let mut from = 0;
            let slots = &buffer.slots;
            for (k, (&slot, &len)) in slots.iter().zip(&buffer.lens).enumerate() {
                // Lists land at random places when the input is not in cell order: ask for
                // the offset of a list further on, and for the place of one nearer.
                if let Some(&later) = slots.get(k + 2 * SCATTER_AHEAD) {
                    prefetch(&offsets[later as usize]);
                }
                if let Some(&next) = slots.get(k + SCATTER_AHEAD) {
                    indices.prefetch(offsets[next as usize]);
                }
                let (to, len) = (offsets[slot as usize], len as usize);
                // SAFETY: list `slot` owns `offsets[slot]..offsets[slot + 1]`, which is
                // `len` long, and only this unit writes it.
                let list = unsafe { indices.range_mut(to, len) };
                list.copy_from_slice(&buffer.entries[from..from + len]);
                if with_distances {
                    // SAFETY: as above; the distances share the indices' layout.
                    let dist = unsafe { distances.range_mut(to, len) };
                    dist.copy_from_slice(&buffer.distances[from..from + len]);
                }
                from += len;
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests;
