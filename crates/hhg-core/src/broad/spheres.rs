//! Neighbour search for particles with their own radii (adaptive SPH, mixed grain sizes) on
//! the hierarchy: each particle goes to the level whose cells cover its radius.

use crate::error::Error;
use crate::lists::NeighborLists;
use crate::pairs::PairList;
use crate::real::Real;

use super::build::Particles;
use crate::geometry::Kernel;

use super::{
    BlockTest, BoxTest, BroadPhase, BroadPhaseConfig, Kind, LevelInfo, RadiusRule, ScanColumns,
    SphereTest, scan_around, scan_columns, with_test,
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
/// use hhg_core::PairList;
/// use hhg_core::broad::{RadiusRule, VariableRadiusSearch};
///
/// let points = [[0.0f32, 0.0, 0.0], [1.5, 0.0, 0.0], [10.0, 0.0, 0.0]];
/// let radii = [2.0f32, 0.5, 0.5];
/// let mut search = VariableRadiusSearch::new(RadiusRule::Max);
/// search.build(&points, &radii)?;
/// let mut pairs = PairList::default();
/// search.pairs(&mut pairs)?;
/// assert_eq!(pairs.pairs(), &[[0, 1]]); // 1.5 <= max(2.0, 0.5)
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct VariableRadiusSearch<T: Real, const D: usize = 3> {
    broad: BroadPhase<T, D>,
    rule: RadiusRule,
}

impl<T: Real, const D: usize> VariableRadiusSearch<T, D> {
    /// An empty search with neighbour rule `rule` and the default hierarchy settings.
    pub fn new(rule: RadiusRule) -> Self {
        let mut broad = BroadPhase::new();
        broad.kind = Kind::Spheres(rule);
        Self { broad, rule }
    }

    /// Replaces the hierarchy settings, used from the next build on; an invalid setting is
    /// an error naming it, and leaves the search as it was.
    pub fn set_config(&mut self, config: BroadPhaseConfig) -> Result<(), Error> {
        self.broad.set_config(config)
    }

    /// The hierarchy settings.
    pub fn config(&self) -> &BroadPhaseConfig {
        self.broad.config()
    }

    /// Chooses the kernel for cell keys and distance masks (SIMD by default; the scalar
    /// reference gives identical results).
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.broad.set_kernel(kernel);
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.broad.kernel()
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
        self.broad.heap_bytes()
    }

    /// Builds the search over `points` with radii `radii` (finite, `>= 0`, one per point).
    pub fn build(&mut self, points: &[[T; D]], radii: &[T]) -> Result<(), Error> {
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
    /// depend on the thread count, into `out` (without distances; cleared first).
    ///
    /// Fails as [`BroadPhase::pairs`](crate::broad::BroadPhase::pairs) does, for want of
    /// memory or past the list's cap; `out` is then empty.
    pub fn pairs(&self, out: &mut PairList<T>) -> Result<(), Error> {
        self.broad.pairs(out)
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
    ///
    /// Fails for want of memory or past the lists' cap
    /// ([`NeighborLists::set_max_entries`]); `lists` then holds no list.
    pub fn neighbor_lists(&self, lists: &mut NeighborLists<T>) -> Result<(), Error> {
        let n = self.len();
        lists.assign_from_collected_pairs(n, |pairs| self.broad.pairs(pairs))
    }

    /// The particles whose radius reaches `p` (`|p - xj| <= rj`, the gather of an SPH
    /// interpolation at `p`), ascending, into `out` (cleared first).
    pub fn query_point(&self, p: [T; D], out: &mut Vec<u32>) -> Result<(), Error> {
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
        with_test!(kind, broad.kernel, |test| self
            .query_point_with(p, test, out));
        out.sort_unstable();
        Ok(())
    }

    fn query_point_with(&self, p: [T; D], test: impl BlockTest<T>, out: &mut Vec<u32>) {
        let broad = &self.broad;
        let zero = [T::default(); D];
        if broad.flat {
            scan_columns(
                ScanColumns::new(&broad.flat_min, &broad.flat_max),
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
            scan_around(level, test, p, zero, |q| out.push(level.order[q]));
        }
        let kind = Kind::Spheres(RadiusRule::Max);
        for (k, particle) in broad.huge_boxes.iter().enumerate() {
            if kind.test((p, zero), (particle.min, particle.max)) {
                out.push(broad.huge[k]);
            }
        }
    }
}
