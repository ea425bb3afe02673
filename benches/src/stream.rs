//! The stream suite (`--suite stream`): the neighbour lists of uniform clouds from 1e5 up to
//! 1e8 points taken in chunks ([`hhg_core::Grid::neighbor_lists_in_chunks`]), so that lists
//! larger than memory are made with memory for one chunk; time per point and peak heap per
//! size, for input in random order and in cell order, and the whole lists at once where they
//! fit, for comparison.

use std::time::Instant;

use hhg_core::{Grid, NeighborLists};

use crate::memory::PeakMeter;
use crate::rng::Rng;
use crate::scenes::{RADIUS, uniform_side};

/// Points per chunk: lists of about 160 MB at ~40 neighbours.
pub const CHUNK_POINTS: usize = 1 << 20;

/// The most points whose whole lists are also made at once for comparison (1e7 points:
/// about 1.6 GB of lists).
pub const WHOLE_LISTS_MAX: usize = 10_000_000;

/// The default sizes of the suite.
pub const DEFAULT_SIZES: [usize; 3] = [100_000, 1_000_000, 10_000_000];

/// One size and input order of the stream suite.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamRecord {
    /// Points.
    pub n: usize,
    /// `random` (the points as generated) or `sorted` (in the grid's cell order).
    pub order: &'static str,
    /// Seconds to build the grid.
    pub build_s: f64,
    /// Seconds to make and visit every chunk's lists.
    pub chunks_s: f64,
    /// Chunks visited.
    pub chunks: usize,
    /// List entries in all (twice the pairs).
    pub entries: u64,
    /// The peak heap of the build and the chunked lists, above the points' own.
    pub peak_bytes: Option<u64>,
    /// Seconds of the whole lists at once, where they were made.
    pub whole_s: Option<f64>,
    /// The peak heap of the whole lists at once, above the points' own.
    pub whole_peak_bytes: Option<u64>,
}

impl StreamRecord {
    /// Nanoseconds per point of the build and the chunked lists together.
    pub fn ns_per_point(&self) -> f64 {
        (self.build_s + self.chunks_s) * 1e9 / self.n as f64
    }
}

/// `n` points uniform in the uniform scene's cube (~40 neighbours within [`RADIUS`]).
fn uniform_points(n: usize, seed: u64) -> Vec<[f32; 3]> {
    let side = uniform_side(n);
    let mut rng = Rng::new(seed);
    let mut points = Vec::with_capacity(n);
    points.extend((0..n).map(|_| {
        [
            rng.uniform(0.0, side) as f32,
            rng.uniform(0.0, side) as f32,
            rng.uniform(0.0, side) as f32,
        ]
    }));
    points
}

/// Runs the suite at `n` points: random order, then cell order; best of `reps` for sizes
/// below 1e7 (one run above).
pub fn run(n: usize, reps: usize, seed: u64) -> Result<Vec<StreamRecord>, String> {
    let mut points = uniform_points(n, seed);
    let reps = if n >= 10_000_000 { 1 } else { reps.max(1) };
    let mut records = Vec::new();
    for order in ["random", "sorted"] {
        if order == "sorted" {
            let mut grid = Grid::new(RADIUS).map_err(|e| e.to_string())?;
            grid.build(&points).map_err(|e| e.to_string())?;
            points = grid.order().iter().map(|&i| points[i as usize]).collect();
        }
        let mut best: Option<StreamRecord> = None;
        for _ in 0..reps {
            let record = run_once(&points, order)?;
            let better = best
                .as_ref()
                .is_none_or(|b| record.build_s + record.chunks_s < b.build_s + b.chunks_s);
            if better {
                best = Some(record);
            }
        }
        records.extend(best);
    }
    Ok(records)
}

/// One build and chunked pass over `points`, then the whole lists where they fit.
fn run_once(points: &[[f32; 3]], order: &'static str) -> Result<StreamRecord, String> {
    let n = points.len();
    let meter = PeakMeter::start();
    let start = Instant::now();
    let mut grid = Grid::new(RADIUS).map_err(|e| e.to_string())?;
    grid.build(points).map_err(|e| e.to_string())?;
    let built = Instant::now();
    let mut lists = NeighborLists::default();
    let (mut chunks, mut entries, mut checksum) = (0usize, 0u64, 0u64);
    grid.neighbor_lists_in_chunks(CHUNK_POINTS, &mut lists, |chunk| {
        chunks += 1;
        entries += chunk.lists().total() as u64;
        // Reads every list's length and one entry, as a consumer streaming them would
        // touch them (the lists themselves are not copied anywhere).
        let lists = chunk.lists();
        for k in (0..lists.len()).step_by(64) {
            checksum =
                checksum.wrapping_add(u64::from(lists.neighbors(k).first().copied().unwrap_or(0)));
        }
    })
    .map_err(|e| format!("hhg chunked lists at {n} points: {e}"))?;
    let done = Instant::now();
    drop(lists);
    let peak_bytes = meter.peak_bytes();
    std::hint::black_box(checksum);
    let (whole_s, whole_peak_bytes) = if n <= WHOLE_LISTS_MAX {
        let meter = PeakMeter::start();
        let mut whole = NeighborLists::default();
        let start = Instant::now();
        grid.neighbor_lists(&mut whole)
            .map_err(|e| format!("hhg whole lists at {n} points: {e}"))?;
        let seconds = start.elapsed().as_secs_f64();
        if whole.total() as u64 != entries {
            return Err(format!(
                "the chunks hold {entries} entries, the whole lists {}",
                whole.total()
            ));
        }
        (Some(seconds), meter.peak_bytes())
    } else {
        (None, None)
    };
    Ok(StreamRecord {
        n,
        order,
        build_s: (built - start).as_secs_f64(),
        chunks_s: (done - built).as_secs_f64(),
        chunks,
        entries,
        peak_bytes,
        whole_s,
        whole_peak_bytes,
    })
}

/// The suite's table, in Markdown.
pub fn table(records: &[StreamRecord]) -> String {
    let mib = |b: Option<u64>| b.map_or("-".to_owned(), |b| format!("{:.0}", b as f64 / 1048576.0));
    let mut out = String::from(
        "| points | order | build ms | chunked lists ms | chunks | entries/point | ns/point | peak MiB | whole lists ms | whole peak MiB |\n\
         |---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in records {
        out.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {} | {:.1} | {:.1} | {} | {} | {} |\n",
            r.n,
            r.order,
            r.build_s * 1e3,
            r.chunks_s * 1e3,
            r.chunks,
            r.entries as f64 / r.n as f64,
            r.ns_per_point(),
            mib(r.peak_bytes),
            r.whole_s
                .map_or("-".to_owned(), |s| format!("{:.1}", s * 1e3)),
            mib(r.whole_peak_bytes),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small run: both orders, the chunks' entries equal the whole lists' (checked inside),
    /// about 40 neighbours per point.
    #[test]
    fn a_small_stream_run_agrees_with_the_whole_lists() {
        let records = run(20_000, 1, 5).unwrap();
        assert_eq!(records.len(), 2);
        for r in &records {
            let per_point = r.entries as f64 / r.n as f64;
            assert!((25.0..45.0).contains(&per_point), "{per_point}");
            assert!(r.whole_s.is_some());
            assert_eq!(r.chunks, 1);
        }
        assert!(table(&records).contains("| 20000 | sorted |"));
    }
}
