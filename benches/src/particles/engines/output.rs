//! What a particle engine run produces: neighbour lists in compressed sparse row form
//! ([`Csr`]), the structures an engine keeps between runs, and the timed [`Output`].

use hhg_core::broad::VariableRadiusSearch;
use hhg_core::periodic::{PeriodicPairList, PeriodicSearch};
use hhg_core::plane::Grid2;
use hhg_core::{Grid, ListPass, NeighborLists};
use rayon::prelude::*;

use crate::pairs::{PairStats, pair_stats, periodic_checksum};

/// Points per parallel task when an engine fills neighbour lists point by point.
pub(super) const CHUNK: usize = 1024;

/// Neighbour lists in compressed sparse row form, as the peer engines produce them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Csr {
    /// `offsets[i]..offsets[i + 1]` is the range of point `i`'s neighbours; `n + 1` entries.
    pub offsets: Vec<usize>,
    /// The neighbour indices of all points, back to back.
    pub indices: Vec<u32>,
}

impl Csr {
    /// The neighbours of point `i`.
    pub fn neighbors(&self, i: usize) -> &[u32] {
        &self.indices[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the lists cover no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills the lists of points `0..n` in parallel, `fill(i, out)` pushing point `i`'s neighbours.
    ///
    /// Each task fills a contiguous chunk of points into its own buffer; the buffers are then
    /// copied into one index array in parallel, so the result is deterministic.
    pub fn fill_parallel<F>(n: usize, fill: F) -> Csr
    where
        F: Fn(usize, &mut Vec<u32>) + Sync,
    {
        let chunks: Vec<(Vec<u32>, Vec<u32>)> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let range = c * CHUNK..((c + 1) * CHUNK).min(n);
                let mut counts = Vec::with_capacity(range.len());
                let mut indices = Vec::new();
                for i in range {
                    let before = indices.len();
                    fill(i, &mut indices);
                    counts.push((indices.len() - before) as u32);
                }
                (counts, indices)
            })
            .collect();

        let mut offsets = Vec::with_capacity(n + 1);
        let mut total = 0usize;
        offsets.push(0);
        for (counts, _) in &chunks {
            for &c in counts {
                total += c as usize;
                offsets.push(total);
            }
        }

        let mut indices = vec![0u32; total];
        let mut rest = indices.as_mut_slice();
        let mut targets = Vec::with_capacity(chunks.len());
        for (_, chunk_indices) in &chunks {
            let (head, tail) = rest.split_at_mut(chunk_indices.len());
            targets.push(head);
            rest = tail;
        }
        targets
            .into_par_iter()
            .zip(chunks.par_iter())
            .for_each(|(dst, (_, src))| dst.copy_from_slice(src));
        Csr { offsets, indices }
    }
}

/// What an engine built and found, kept so that the results can be checked after the timing.
pub(super) enum Lists {
    /// The peer engines' lists.
    Csr(Csr),
    /// hhg's grid (which knows the cell order) and its lists.
    Hhg {
        grid: Box<Grid<f32>>,
        lists: NeighborLists<f32>,
    },
    /// hhg's plane grid (the 2-D scenes) and its lists.
    HhgPlane {
        grid: Box<Grid2<f32>>,
        lists: NeighborLists<f32>,
    },
    /// hhg's variable-radius search and its lists.
    HhgVariable {
        search: Box<VariableRadiusSearch<f32>>,
        lists: NeighborLists<f32>,
    },
    /// hhg's variable-radius search in the plane (the 2-D variable-radius scenes) and its
    /// lists.
    HhgPlaneVariable {
        search: Box<VariableRadiusSearch<f32, 2>>,
        lists: NeighborLists<f32>,
    },
    /// hhg's periodic search (which reports the pairs' shifts) and its lists.
    HhgPeriodic {
        search: Box<PeriodicSearch<f32>>,
        lists: NeighborLists<f32>,
    },
    /// Brute force's minimum-image pairs of `n` points, each once, with their shifts.
    Shifted {
        n: usize,
        pairs: Vec<(u32, u32, [i32; 3])>,
    },
}

/// The result of one timed engine run.
pub struct Output {
    /// Seconds spent building the search structure.
    pub build_s: f64,
    /// Seconds spent filling the neighbour lists of all points.
    pub query_s: f64,
    pub(super) lists: Lists,
}

impl Output {
    /// The number of points the lists cover.
    pub fn len(&self) -> usize {
        match &self.lists {
            Lists::Csr(csr) => csr.len(),
            Lists::Hhg { lists, .. }
            | Lists::HhgPlane { lists, .. }
            | Lists::HhgVariable { lists, .. }
            | Lists::HhgPlaneVariable { lists, .. }
            | Lists::HhgPeriodic { lists, .. } => lists.offsets().len().saturating_sub(1),
            Lists::Shifted { n, .. } => *n,
        }
    }

    /// Whether the lists cover no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pair count and checksum of the lists; `map` translates the engine's point numbering
    /// back to the input's (see [`pair_stats`]). In a periodic box the checksum is that of the
    /// pairs with their shifts ([`periodic_checksum`]); hhg's pair count and consistency still
    /// come from its lists.
    pub fn stats(&self, map: Option<&[u32]>) -> PairStats {
        match &self.lists {
            Lists::Csr(csr) => pair_stats(csr.len(), |i| csr.neighbors(i), map),
            Lists::Hhg { lists, .. }
            | Lists::HhgPlane { lists, .. }
            | Lists::HhgVariable { lists, .. }
            | Lists::HhgPlaneVariable { lists, .. } => {
                pair_stats(self.len(), |i| lists.neighbors(i), map)
            }
            Lists::HhgPeriodic { search, lists } => {
                let mut stats = pair_stats(self.len(), |i| lists.neighbors(i), map);
                let mut found = PeriodicPairList::default();
                search
                    .pairs(&mut found)
                    .expect("the bench's periodic pairs fit in memory");
                // The bench's points lie in the box, so every shift is -1, 0 or 1.
                let narrow = |s: i64| i32::try_from(s).expect("a shift of a point in the box");
                let shifted: Vec<(u32, u32, [i32; 3])> = found
                    .pairs()
                    .iter()
                    .map(|p| (p.i, p.j, p.shift.map(narrow)))
                    .collect();
                stats.checksum = periodic_checksum(&shifted, map);
                if shifted.len() as u64 != stats.pairs {
                    // Pairs and lists that disagree must never pass as consistent.
                    stats.self_refs += 1;
                }
                stats
            }
            Lists::Shifted { pairs, .. } => PairStats {
                pairs: pairs.len() as u64,
                checksum: periodic_checksum(pairs, map),
                directed: 2 * pairs.len() as u64,
                self_refs: pairs.iter().filter(|p| p.0 == p.1).count() as u64,
            },
        }
    }

    /// Which list pass hhg's `Grid` took (`Grid::list_pass`), if this output came from it.
    pub fn list_pass(&self) -> Option<ListPass> {
        match &self.lists {
            Lists::Hhg { grid, .. } => Some(grid.list_pass()),
            _ => None,
        }
    }

    /// hhg's cell order of the points (`order[k]` = input index of the k-th point), if this
    /// output came from hhg's `Grid`.
    pub fn cell_order(&self) -> Option<&[u32]> {
        match &self.lists {
            Lists::Hhg { grid, .. } => Some(grid.order()),
            Lists::Csr(_)
            | Lists::HhgPlane { .. }
            | Lists::HhgVariable { .. }
            | Lists::HhgPlaneVariable { .. }
            | Lists::HhgPeriodic { .. }
            | Lists::Shifted { .. } => None,
        }
    }
}
