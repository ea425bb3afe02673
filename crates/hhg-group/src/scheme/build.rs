//! The build of a [`GroupScheme`], phase by phase (see the parent module's documentation):
//! slot keys and their sort, the distinct cells, their candidate buckets, the greedy mapping
//! and the layout by (bucket, cell).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use hhg_core::building_blocks::{CellTable, bounds, check_count, counting_sort};
use hhg_core::{Error, Kernel, Points, Real, SchemeStats};
use rayon::prelude::*;

use crate::hash::{GroupHasher, MAX_CANDIDATES};

use super::{
    BuildProfile, CANDIDATE_CHUNK, CHUNK_POINTS, CellEntry, GroupScheme, Run, UNIT_POINTS,
};

impl<T: Real> GroupScheme<T> {
    /// Builds the search over `points` (see the module documentation for the phases).
    pub fn build_points(&mut self, points: &[[T; 3]]) -> Result<(), Error> {
        let start = Instant::now();
        self.pair_candidates = OnceLock::new();
        let n = points.len();
        check_count(n)?;
        let source = Points::Aos(points);
        let Some(bounds) = bounds(source)? else {
            self.clear();
            self.profile = BuildProfile {
                total: start.elapsed(),
                ..BuildProfile::default()
            };
            return Ok(());
        };
        let table = CellTable::choose(&bounds, n, self.radius.to_f64(), source)?;
        let mut profile = BuildProfile::default();
        let mut mark = Instant::now();
        profile.validate = mark - start;
        let mut lap = |slot: &mut Duration| {
            let now = Instant::now();
            *slot = now - mark;
            mark = now;
        };

        // 2. Slot keys and the counting sort by slot.
        table.keys(source, self.config.kernel, &mut self.slot_keys);
        counting_sort(
            &self.slot_keys,
            table.buckets(),
            &mut self.slot_starts,
            &mut self.slot_order,
            &mut self.sort_scratch,
        );
        lap(&mut profile.sort);

        // 3. The distinct cells, in slot order.
        self.list_cells(points, &table);
        lap(&mut profile.cells);

        // 4. Candidate buckets of every cell.
        let hasher = GroupHasher::new(self.config.candidates, self.config.buckets_for(n))?;
        self.compute_candidates(&hasher);
        lap(&mut profile.candidates);

        // 5. The greedy mapping, sequential over the distinct cells.
        greedy_map(
            &self.runs,
            &self.run_candidates,
            hasher.candidates(),
            hasher.buckets() as usize,
            &mut self.loads,
            &mut self.run_bucket,
        );
        lap(&mut profile.greedy);

        // 6. Layout by (bucket, cell).
        self.lay_out(points, hasher.buckets() as usize)?;
        self.load_stats =
            SchemeStats::from_loads(self.loads.len(), self.loads.iter().map(|&l| l as usize));
        lap(&mut profile.layout);
        profile.total = start.elapsed();
        self.profile = profile;
        self.table = Some(table);
        self.hasher = Some(hasher);
        Ok(())
    }

    /// Lists the distinct cells of the slot-sorted points into `runs`, in ascending (slot,
    /// cell) order, sorting the points of a slot that holds several cells by (cell, index).
    fn list_cells(&mut self, points: &[[T; 3]], table: &CellTable) {
        let slots = self.slot_starts.len() - 1;
        let starts = &self.slot_starts;
        cut_ranges(slots, |s| starts[s], CHUNK_POINTS, &mut self.chunks);
        let chunks = self.chunks.len();
        if self.chunk_runs.len() < chunks {
            self.chunk_runs.resize_with(chunks, Vec::new);
        }
        // Each chunk owns the points of its slots: split the slot order accordingly.
        let mut pieces = Vec::with_capacity(chunks);
        let mut rest = &mut self.slot_order[..];
        let mut taken = 0usize;
        for &(_, hi) in &self.chunks {
            let end = self.slot_starts[hi as usize] as usize;
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(end - taken);
            pieces.push(piece);
            rest = tail;
            taken = end;
        }
        let starts = &self.slot_starts;
        let dense = table.dense;
        self.chunks
            .par_iter()
            .zip(pieces.into_par_iter())
            .zip(self.chunk_runs[..chunks].par_iter_mut())
            .for_each(|((&(lo, hi), piece), runs)| {
                runs.clear();
                let base = starts[lo as usize];
                let mut cells: Vec<([i32; 3], u32)> = Vec::new();
                for slot in lo as usize..hi as usize {
                    let (s, e) = (starts[slot], starts[slot + 1]);
                    if s == e {
                        continue;
                    }
                    if dense {
                        // A dense table never wraps: the slot's coordinates are the cell's.
                        let c = table.bucket_coords(slot as u32);
                        runs.push(Run {
                            cell: c.map(|v| v as i32),
                            source: s,
                            count: e - s,
                        });
                        continue;
                    }
                    let segment = &mut piece[(s - base) as usize..(e - base) as usize];
                    cells.clear();
                    cells.extend(
                        segment
                            .iter()
                            .map(|&i| (table.coords(points[i as usize]), i)),
                    );
                    if cells.iter().any(|&(c, _)| c != cells[0].0) {
                        cells.sort_unstable();
                        for (slot, &(_, i)) in segment.iter_mut().zip(&cells) {
                            *slot = i;
                        }
                    }
                    let mut k = 0;
                    while k < cells.len() {
                        let c = cells[k].0;
                        let mut end = k + 1;
                        while end < cells.len() && cells[end].0 == c {
                            end += 1;
                        }
                        runs.push(Run {
                            cell: c,
                            source: s + k as u32,
                            count: (end - k) as u32,
                        });
                        k = end;
                    }
                }
            });
        debug_assert!(self.chunks.last().is_none_or(|c| c.1 as usize == slots));
        self.runs.clear();
        for runs in &self.chunk_runs[..chunks] {
            self.runs.extend_from_slice(runs);
        }
    }

    /// The candidate buckets of every distinct cell, 8 cells at a time (or one at a time
    /// with the scalar kernel), in parallel.
    fn compute_candidates(&mut self, hasher: &GroupHasher) {
        let kernel = self.config.kernel;
        self.run_candidates
            .resize(self.runs.len(), [0; MAX_CANDIDATES]);
        self.run_candidates
            .par_chunks_mut(CANDIDATE_CHUNK)
            .zip(self.runs.par_chunks(CANDIDATE_CHUNK))
            .for_each(|(out, runs)| match kernel {
                Kernel::Simd => {
                    for (out, runs) in out.chunks_mut(8).zip(runs.chunks(8)) {
                        let axis = |a: usize| {
                            std::array::from_fn(|k| runs.get(k).map_or(0, |r| r.cell[a]))
                        };
                        let rows = hasher.candidates8(&axis(0), &axis(1), &axis(2));
                        for (k, slot) in out.iter_mut().enumerate() {
                            *slot = std::array::from_fn(|c| rows[c][k]);
                        }
                    }
                }
                Kernel::Scalar => {
                    for (slot, run) in out.iter_mut().zip(runs) {
                        *slot = hasher.candidates_of(run.cell);
                    }
                }
            });
    }

    /// Orders the cells by bucket, copies each cell's points to its place, gathers the
    /// sorted columns and cuts the work units.
    fn lay_out(&mut self, points: &[[T; 3]], buckets: usize) -> Result<(), Error> {
        let n = points.len();
        counting_sort(
            &self.run_bucket,
            buckets,
            &mut self.bucket_cells,
            &mut self.run_order,
            &mut self.sort_scratch,
        );
        let cells = self.runs.len();
        self.directory.clear();
        self.directory.reserve(cells + 1);
        let mut running = 0u32;
        for &r in &self.run_order {
            let run = self.runs[r as usize];
            self.directory.push(CellEntry {
                cell: run.cell,
                start: running,
            });
            running += run.count;
        }
        self.directory.push(CellEntry {
            cell: [i32::MIN; 3],
            start: running,
        });
        debug_assert_eq!(running as usize, n);

        // Copy each cell's points into place, chunk by chunk of cells (each chunk owns a
        // contiguous range of the output).
        let directory = &self.directory;
        cut_ranges(
            cells,
            |c| directory[c].start,
            CHUNK_POINTS,
            &mut self.chunks,
        );
        self.order.resize(n, 0);
        let mut pieces = Vec::with_capacity(self.chunks.len());
        let mut rest = &mut self.order[..];
        let mut taken = 0usize;
        for &(_, hi) in &self.chunks {
            let end = directory[hi as usize].start as usize;
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(end - taken);
            pieces.push(piece);
            rest = tail;
            taken = end;
        }
        let (runs, run_order, slot_order) = (&self.runs, &self.run_order, &self.slot_order);
        self.chunks
            .par_iter()
            .zip(pieces.into_par_iter())
            .for_each(|(&(lo, hi), piece)| {
                let base = directory[lo as usize].start;
                for c in lo as usize..hi as usize {
                    let run = runs[run_order[c] as usize];
                    let at = (directory[c].start - base) as usize;
                    let from = run.source as usize;
                    piece[at..at + run.count as usize]
                        .copy_from_slice(&slot_order[from..from + run.count as usize]);
                }
            });
        self.sorted.gather_from(points, &self.order)?;
        // The searches walk the cells in greedy order, which follows space, so consecutive
        // cells share neighbours that are still in cache.
        self.walk.resize(cells, 0);
        for (k, &r) in self.run_order.iter().enumerate() {
            self.walk[r as usize] = k as u32;
        }
        self.walk_starts.clear();
        self.walk_starts.reserve(cells + 1);
        let mut running = 0u32;
        for run in &self.runs {
            self.walk_starts.push(running);
            running += run.count;
        }
        self.walk_starts.push(running);
        let walk_starts = &self.walk_starts;
        cut_ranges(cells, |w| walk_starts[w], UNIT_POINTS, &mut self.units);
        Ok(())
    }
}

/// Jung and Choi's greedy mapping over distinct cells: each cell, in order, joins the least
/// loaded of its first `g` candidates (the earliest on ties), whose load then grows by the
/// cell's points. Writes the bucket of each cell and the final loads.
fn greedy_map(
    runs: &[Run],
    candidates: &[[u32; MAX_CANDIDATES]],
    g: usize,
    buckets: usize,
    loads: &mut Vec<u32>,
    mapping: &mut Vec<u32>,
) {
    loads.clear();
    loads.resize(buckets, 0);
    mapping.clear();
    mapping.reserve(runs.len());
    for (run, candidates) in runs.iter().zip(candidates) {
        let mut best = candidates[0];
        let mut best_load = loads[best as usize];
        for &b in &candidates[1..g] {
            let load = loads[b as usize];
            if load < best_load {
                best = b;
                best_load = load;
            }
        }
        loads[best as usize] = best_load + run.count;
        mapping.push(best);
    }
}

/// Cuts `items` laid out back to back (item `i` holds entries `start(i)..start(i + 1)`)
/// into ranges of about `unit` entries each, ending at item borders, as item ranges
/// `lo..hi`. The cut depends only on the data.
pub(crate) fn cut_ranges(
    items: usize,
    start: impl Fn(usize) -> u32,
    unit: usize,
    out: &mut Vec<(u32, u32)>,
) {
    out.clear();
    let n = start(items) as usize;
    let mut lo = 0usize;
    while lo < items {
        let target = start(lo) as usize + unit;
        let hi = if target >= n {
            items
        } else {
            // The first item starting at or past the target ends the range.
            let (mut a, mut b) = (lo + 1, items);
            while a < b {
                let m = (a + b) / 2;
                if (start(m) as usize) < target {
                    a = m + 1;
                } else {
                    b = m;
                }
            }
            a
        };
        out.push((lo as u32, hi as u32));
        lo = hi;
    }
}
