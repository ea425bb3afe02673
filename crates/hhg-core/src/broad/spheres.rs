//! Neighbour search for particles with their own radii (adaptive SPH, mixed grain sizes) on
//! the hierarchy: each particle goes to the level whose cells cover its radius.

use std::sync::Mutex;

use crate::error::Error;
use crate::grid::full_neighbourhood;
use crate::lists::NeighborLists;
use crate::real::Real;
use crate::sort::SortScratch;

use super::build::Particles;
use crate::geometry::Kernel;

use super::{
    BlockTest, BoxTest, BroadPhase, BroadPhaseConfig, Kind, LevelInfo, RadiusRule, SphereTest,
    scan, scan_columns, with_test,
};

/// Fixed-radius search generalised to one radius per particle: `i` and `j` are neighbours
/// iff `|xi - xj| <= max(ri, rj)` ([`RadiusRule::Max`], the default) or
/// `|xi - xj| <= (ri + rj) / 2` ([`RadiusRule::Mean`]), decided by
/// [`crate::broad::sphere_pair_within`] in the input precision.
///
/// Particle `i` lives in the level whose cell edge is at least `ri`; for a pair, the
/// particle with the larger radius sits in the coarser (or the same) level, and its cell
/// covers the pair's distance, so the hierarchy's detection step finds each pair once.
/// With all radii equal there is one level, and the search is the particle engine's.
///
/// ```
/// use hhg_core::broad::{RadiusRule, VariableRadiusSearch};
///
/// let points = [[0.0f32, 0.0, 0.0], [1.5, 0.0, 0.0], [10.0, 0.0, 0.0]];
/// let radii = [2.0f32, 0.5, 0.5];
/// let mut search = VariableRadiusSearch::new(RadiusRule::Max);
/// search.build(&points, &radii)?;
/// let mut pairs = Vec::new();
/// search.pairs(&mut pairs);
/// assert_eq!(pairs, vec![[0, 1]]); // 1.5 <= max(2.0, 0.5)
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct VariableRadiusSearch<T: Real> {
    broad: BroadPhase<T>,
    rule: RadiusRule,
    scratch: Mutex<ListScratch>,
}

/// Buffers of the pairs-to-lists conversion.
#[derive(Debug, Default)]
struct ListScratch {
    pairs: Vec<[u32; 2]>,
    keys: Vec<u32>,
    order: Vec<u32>,
    sort: SortScratch,
}

impl<T: Real> VariableRadiusSearch<T> {
    /// An empty search with the default hierarchy settings.
    pub fn new(rule: RadiusRule) -> Self {
        Self::with_config(rule, BroadPhaseConfig::default())
            .expect("the default configuration is valid")
    }

    /// An empty search with hierarchy settings `config`.
    pub fn with_config(rule: RadiusRule, config: BroadPhaseConfig) -> Result<Self, Error> {
        let mut broad = BroadPhase::with_config(config)?;
        broad.kind = Kind::Spheres(rule);
        Ok(Self {
            broad,
            rule,
            scratch: Mutex::new(ListScratch::default()),
        })
    }

    /// The neighbour rule.
    pub fn rule(&self) -> RadiusRule {
        self.rule
    }

    /// How many particles the last build held.
    pub fn len(&self) -> usize {
        self.broad.len()
    }

    /// Tells whether the last build held no particle.
    pub fn is_empty(&self) -> bool {
        self.broad.is_empty()
    }

    /// The levels in use, finest first.
    pub fn levels(&self) -> Vec<LevelInfo> {
        self.broad.levels()
    }

    /// The bytes held by the structure's buffers.
    pub fn heap_bytes(&self) -> usize {
        let lists = self.scratch.lock().map_or(0, |s| {
            8 * s.pairs.capacity() + 4 * (s.keys.capacity() + s.order.capacity())
        });
        self.broad.heap_bytes() + lists
    }

    /// Builds the search over `points` with radii `radii` (finite, `>= 0`, one per point).
    pub fn build(&mut self, points: &[[T; 3]], radii: &[T]) -> Result<(), Error> {
        if points.len() != radii.len() {
            return Err(Error::LengthMismatch {
                x: points.len(),
                y: radii.len(),
                z: points.len(),
            });
        }
        self.broad.kind = Kind::Spheres(self.rule);
        self.broad.build_inner(&Particles { points, radii }, None)
    }

    /// Every neighbour pair `[i, j]`, `i < j`, exactly once, in an order that does not
    /// depend on the thread count; `out` is cleared first.
    pub fn pairs(&self, out: &mut Vec<[u32; 2]>) {
        self.broad.pairs(out);
    }

    /// Calls `visit(i, j)` for every pair (`i < j`), sequentially; stores nothing.
    pub fn for_each_pair(&self, visit: impl FnMut(u32, u32)) {
        self.broad.for_each_pair(visit);
    }

    /// Calls `visit(i, j)` for every pair (`i < j`) from the rayon pool; stores nothing.
    pub fn par_for_each_pair(&self, visit: impl Fn(u32, u32) + Sync) {
        self.broad.par_for_each_pair(visit);
    }

    /// Per-particle neighbour lists in CSR form, both directions, each ascending.
    pub fn neighbor_lists(&self, lists: &mut NeighborLists<T>) {
        let mut guard = self
            .scratch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let scratch = &mut *guard;
        self.broad.pairs(&mut scratch.pairs);
        lists.assign_pairs(
            self.len(),
            &scratch.pairs,
            &mut scratch.keys,
            &mut scratch.order,
            &mut scratch.sort,
        );
    }

    /// The particles whose radius reaches `p` (`|p - xj| <= rj`, the gather of an SPH
    /// interpolation at `p`), ascending, into `out` (cleared first).
    pub fn query_point(&self, p: [T; 3], out: &mut Vec<u32>) -> Result<(), Error> {
        for (axis, v) in p.iter().enumerate() {
            if !v.is_finite() {
                return Err(Error::NonFiniteCoordinate {
                    index: 0,
                    axis,
                    value: v.to_f64(),
                });
            }
        }
        out.clear();
        let broad = &self.broad;
        let kind = Kind::Spheres(RadiusRule::Max);
        with_test!(kind, broad.config.kernel, |test| self
            .query_point_with(p, test, out));
        out.sort_unstable();
        Ok(())
    }

    fn query_point_with(&self, p: [T; 3], test: impl BlockTest<T>, out: &mut Vec<u32>) {
        let broad = &self.broad;
        let zero = [T::default(); 3];
        if broad.flat {
            scan_columns(
                &broad.flat_min,
                &broad.flat_max,
                test,
                p,
                zero,
                0,
                broad.len,
                |i| out.push(i as u32),
            );
            return;
        }
        for level in broad.active_levels() {
            let table = &level.table;
            let cell = table.coords(p);
            if !table.may_have_neighbours(cell) {
                continue;
            }
            let around = full_neighbourhood(
                &level.starts,
                table,
                table.bucket_coords(table.bucket(cell)),
            );
            for &(s, e) in around.as_slice() {
                scan(level, test, p, zero, s as usize, e as usize, |q| {
                    out.push(level.order[q])
                });
            }
        }
        let kind = Kind::Spheres(RadiusRule::Max);
        for (k, particle) in broad.huge_boxes.iter().enumerate() {
            if kind.test((p, zero), (particle.min, particle.max)) {
                out.push(broad.huge[k]);
            }
        }
    }
}
