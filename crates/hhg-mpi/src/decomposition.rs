//! Recursive coordinate bisection: the box of space each rank owns, balanced by particle
//! count or by a weight per particle, and the owner of a point.

use mpi::collective::SystemOperation;
use mpi::traits::*;

/// An axis-aligned box `lo <= p < hi` per axis (half-open; bounds may be infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// The lower corner (inclusive).
    pub lo: [f64; 3],
    /// The upper corner (exclusive).
    pub hi: [f64; 3],
}

impl Bounds {
    /// All of space.
    pub fn everything() -> Self {
        Self {
            lo: [f64::NEG_INFINITY; 3],
            hi: [f64::INFINITY; 3],
        }
    }

    /// Whether `p` lies in the box.
    pub fn contains(&self, p: [f64; 3]) -> bool {
        (0..3).all(|a| p[a] >= self.lo[a] && p[a] < self.hi[a])
    }

    /// The squared distance from `p` to the box (0 inside).
    pub fn distance_squared_to(&self, p: [f64; 3]) -> f64 {
        (0..3)
            .map(|a| {
                let gap = (self.lo[a] - p[a]).max(p[a] - self.hi[a]).max(0.0);
                gap * gap
            })
            .sum()
    }

    /// The squared distance between two boxes (0 where they touch or overlap).
    pub fn distance_squared_to_box(&self, other: &Bounds) -> f64 {
        (0..3)
            .map(|a| {
                let gap = (other.lo[a] - self.hi[a])
                    .max(self.lo[a] - other.hi[a])
                    .max(0.0);
                // Two infinite bounds on the same side give NaN gaps only when a box is
                // empty along the axis; such a box is far from everything.
                if gap.is_nan() {
                    f64::INFINITY
                } else {
                    gap * gap
                }
            })
            .sum()
    }

    /// The box moved by `offset` per axis (infinite bounds stay infinite).
    pub fn translated(&self, offset: [f64; 3]) -> Self {
        Self {
            lo: std::array::from_fn(|a| self.lo[a] + offset[a]),
            hi: std::array::from_fn(|a| self.hi[a] + offset[a]),
        }
    }

    /// The distance from `p` to the nearest face of the box, for a point inside it: a
    /// point farther than the halo's reach from every face is nobody's ghost.
    pub fn depth_of(&self, p: [f64; 3]) -> f64 {
        (0..3)
            .map(|a| (p[a] - self.lo[a]).min(self.hi[a] - p[a]))
            .fold(f64::INFINITY, f64::min)
    }
}

/// A node of the bisection tree: a rank's box, or a cut of a box along one axis.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Node {
    Leaf {
        rank: usize,
    },
    Split {
        axis: usize,
        /// Points with `p[axis] < cut` go to `low`, the others to `high`.
        cut: f64,
        low: usize,
        high: usize,
    },
}

/// The boxes of all ranks, from recursive coordinate bisection: every rank holds the whole
/// tree (`ranks - 1` cuts), so any rank finds the owner of any point.
#[derive(Clone, Debug, PartialEq)]
pub struct Decomposition {
    nodes: Vec<Node>,
    boxes: Vec<Bounds>,
}

/// A box being cut: its node, its ranks and its bounds.
#[derive(Clone, Copy, Debug)]
struct Group {
    node: usize,
    first_rank: usize,
    ranks: usize,
    bounds: Bounds,
}

/// The bisection of a cut stops after this many halvings of the interval (an `f64`
/// interval collapses to adjacent values in at most about 2100, but the counts match the
/// target long before on any cloud that can be split; clustered clouds end at a tie).
const MAX_BISECTION_STEPS: usize = 200;

impl Decomposition {
    /// One rank owning `root`.
    pub fn single(root: Bounds) -> Self {
        Self {
            nodes: vec![Node::Leaf { rank: 0 }],
            boxes: vec![root],
        }
    }

    /// Cuts `root` into one box per rank of `comm`, each holding about as many of the
    /// points (all ranks' `points` together) as the others. Collective: every rank calls it
    /// with its own points and gets the same tree.
    ///
    /// Each box of `k > 1` ranks is cut along the longest axis of its points' bounding box,
    /// at the coordinate that leaves `floor(k / 2) / k` of its points below the cut (found
    /// by bisection on the coordinate, each step one `all_reduce` of the counts of all boxes
    /// of the tree's level); points with equal coordinates cannot be separated, so a cloud
    /// of coincident points gets uneven boxes. The levels take `ceil(log2 k)` rounds.
    pub fn bisect<C: Communicator>(comm: &C, root: Bounds, points: &[[f64; 3]]) -> Self {
        Self::bisect_weighted(comm, root, points, None)
    }

    /// As [`Decomposition::bisect`], balanced by `weights` (one per point, as `points`)
    /// instead of the point count: each box holds about as much of the total weight as the
    /// others, and is cut along the longest axis of the bounding box of its points of
    /// positive weight. A box whose points all weigh nothing is cut by point count, as
    /// [`Decomposition::bisect`] cuts it. `None` weighs every point 1. Collective.
    /// [`crate::DistributedSearch`] computes the weights itself, one per point.
    pub(crate) fn bisect_weighted<C: Communicator>(
        comm: &C,
        root: Bounds,
        points: &[[f64; 3]],
        weights: Option<&[u32]>,
    ) -> Self {
        debug_assert!(weights.is_none_or(|w| w.len() == points.len()));
        let weight_of = |index: usize| weights.map_or(1, |w| u64::from(w[index]));
        let size = comm.size() as usize;
        let mut nodes = vec![Node::Leaf { rank: 0 }];
        let mut boxes = vec![root; size];
        let mut groups = vec![Group {
            node: 0,
            first_rank: 0,
            ranks: size,
            bounds: root,
        }];
        // The group (index into `groups`) of each local point, `u32::MAX` once its box is a leaf.
        let mut membership = vec![0u32; points.len()];
        while !groups.is_empty() {
            let g = groups.len();
            // Per group: the bounding box of all its points and of its points of positive
            // weight (negated lower corners, so that one maximum reduces both ends), its point
            // count and its weight.
            let mut local = vec![f64::NEG_INFINITY; 12 * g];
            let mut sums = vec![0u64; 2 * g];
            for (index, (p, &m)) in points.iter().zip(&membership).enumerate() {
                if m == u32::MAX {
                    continue;
                }
                let m = m as usize;
                let weight = weight_of(index);
                sums[2 * m] += 1;
                sums[2 * m + 1] += weight;
                let heavy = if weight > 0 { 2 } else { 1 };
                for set in 0..heavy {
                    let at = 12 * m + 6 * set;
                    for a in 0..3 {
                        local[at + a] = local[at + a].max(-p[a]);
                        local[at + 3 + a] = local[at + 3 + a].max(p[a]);
                    }
                }
            }
            let mut all_extents = vec![0.0; 12 * g];
            comm.all_reduce_into(&local[..], &mut all_extents[..], SystemOperation::max());
            let mut all_sums = vec![0u64; 2 * g];
            comm.all_reduce_into(&sums[..], &mut all_sums[..], SystemOperation::sum());
            // Each group is balanced by weight where it has any, else by count.
            let by_weight: Vec<bool> = (0..g).map(|i| all_sums[2 * i + 1] > 0).collect();
            let totals: Vec<u64> = (0..g)
                .map(|i| all_sums[2 * i + usize::from(by_weight[i])])
                .collect();
            let mut extent = vec![0.0; 6 * g];
            for i in 0..g {
                let at = 12 * i + 6 * usize::from(by_weight[i]);
                extent[6 * i..6 * i + 6].copy_from_slice(&all_extents[at..at + 6]);
            }

            // Per group: the axis, the sorted local coordinates along it, the target weight.
            let mut axes = vec![0usize; g];
            // The sorted coordinates along the axis, and the prefix sums of their balancing
            // weights (`prefix[k]`: the weight of the first `k` coordinates).
            let mut sorted: Vec<Vec<(f64, u64)>> = vec![Vec::new(); g];
            let mut prefix: Vec<Vec<u64>> = vec![Vec::new(); g];
            let mut targets = vec![0u64; g];
            let mut interval = vec![(0.0f64, 0.0f64); g];
            let mut interval_counts = vec![(0u64, 0u64); g];
            let mut done = vec![false; g];
            for (i, group) in groups.iter().enumerate() {
                if group.ranks == 1 {
                    done[i] = true;
                    continue;
                }
                let lo: [f64; 3] = std::array::from_fn(|a| -extent[6 * i + a]);
                let hi: [f64; 3] = std::array::from_fn(|a| extent[6 * i + 3 + a]);
                let empty = totals[i] == 0;
                let axis = if empty {
                    longest_axis(&group.bounds.lo, &group.bounds.hi)
                } else {
                    longest_axis(&lo, &hi)
                };
                axes[i] = axis;
                let low_ranks = group.ranks / 2;
                targets[i] =
                    (u128::from(totals[i]) * low_ranks as u128 / group.ranks as u128) as u64;
                if empty {
                    interval[i] = (fallback_cut(&group.bounds, axis), 0.0);
                    done[i] = true;
                    continue;
                }
                // Every point lies in `lo[axis] ..= hi[axis]`: nothing is below the lower end
                // of the interval, everything below the next value above its upper end.
                interval[i] = (lo[axis], hi[axis].next_up());
                interval_counts[i] = (0, totals[i]);
                if targets[i] == 0 {
                    done[i] = true;
                }
            }
            for (index, (p, &m)) in points.iter().zip(&membership).enumerate() {
                let m = m as usize;
                if m != u32::MAX as usize && !done[m] {
                    let weight = if by_weight[m] { weight_of(index) } else { 1 };
                    sorted[m].push((p[axes[m]], weight));
                }
            }
            for (column, sums) in sorted.iter_mut().zip(&mut prefix) {
                column.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
                sums.push(0);
                let mut running = 0u64;
                sums.extend(column.iter().map(|&(_, weight)| {
                    running += weight;
                    running
                }));
            }
            // Bisection on the cut of every unfinished group at once.
            for _ in 0..MAX_BISECTION_STEPS {
                let mut local_below = vec![0u64; g];
                let mut mids = vec![0.0f64; g];
                let mut active = false;
                for i in 0..g {
                    if done[i] {
                        continue;
                    }
                    let (lo, hi) = interval[i];
                    let mid = lo + (hi - lo) * 0.5;
                    if mid <= lo || mid >= hi {
                        done[i] = true;
                        continue;
                    }
                    active = true;
                    mids[i] = mid;
                    local_below[i] = prefix[i][sorted[i].partition_point(|&(x, _)| x < mid)];
                }
                // Every rank sees the same intervals, so all agree on whether to go on.
                if !active {
                    break;
                }
                let mut below = vec![0u64; g];
                comm.all_reduce_into(&local_below[..], &mut below[..], SystemOperation::sum());
                for i in 0..g {
                    if done[i] {
                        continue;
                    }
                    if below[i] == targets[i] {
                        interval[i] = (mids[i], mids[i]);
                        interval_counts[i] = (below[i], below[i]);
                        done[i] = true;
                    } else if below[i] < targets[i] {
                        interval[i].0 = mids[i];
                        interval_counts[i].0 = below[i];
                    } else {
                        interval[i].1 = mids[i];
                        interval_counts[i].1 = below[i];
                    }
                }
            }

            // Cut every group of several ranks at the end of its interval nearer the target.
            let mut next = Vec::new();
            let mut next_index = vec![u32::MAX; 2 * g];
            for (i, group) in groups.iter().enumerate() {
                if group.ranks == 1 {
                    nodes[group.node] = Node::Leaf {
                        rank: group.first_rank,
                    };
                    boxes[group.first_rank] = group.bounds;
                    continue;
                }
                let axis = axes[i];
                let (lo, hi) = interval[i];
                let (count_lo, count_hi) = interval_counts[i];
                // A box without points keeps its fallback cut (in `lo`); otherwise the end of
                // the interval whose count is nearer the target (`count_lo <= target <= count_hi`).
                let lower_is_nearer =
                    targets[i] - count_lo.min(targets[i]) <= count_hi - targets[i].min(count_hi);
                let cut = if totals[i] == 0 || lower_is_nearer {
                    lo
                } else {
                    hi
                };
                let cut = cut.clamp(group.bounds.lo[axis], group.bounds.hi[axis]);
                let (mut low, mut high) = (group.bounds, group.bounds);
                low.hi[axis] = cut;
                high.lo[axis] = cut;
                let low_ranks = group.ranks / 2;
                let low_node = nodes.len();
                nodes.push(Node::Leaf { rank: 0 });
                nodes.push(Node::Leaf { rank: 0 });
                nodes[group.node] = Node::Split {
                    axis,
                    cut,
                    low: low_node,
                    high: low_node + 1,
                };
                next_index[2 * i] = next.len() as u32;
                next.push(Group {
                    node: low_node,
                    first_rank: group.first_rank,
                    ranks: low_ranks,
                    bounds: low,
                });
                next_index[2 * i + 1] = next.len() as u32;
                next.push(Group {
                    node: low_node + 1,
                    first_rank: group.first_rank + low_ranks,
                    ranks: group.ranks - low_ranks,
                    bounds: high,
                });
            }
            for (p, m) in points.iter().zip(membership.iter_mut()) {
                if *m == u32::MAX {
                    continue;
                }
                let i = *m as usize;
                *m = match nodes[groups[i].node] {
                    Node::Leaf { .. } => u32::MAX,
                    Node::Split { axis, cut, .. } => {
                        next_index[2 * i + usize::from(p[axis] >= cut)]
                    }
                };
            }
            groups = next;
        }
        Self { nodes, boxes }
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.boxes.len()
    }

    /// The box of `rank`.
    pub fn bounds(&self, rank: usize) -> &Bounds {
        &self.boxes[rank]
    }

    /// The rank whose box holds `p` (every point has one: the outer boxes reach as far as
    /// the root box).
    pub fn owner(&self, p: [f64; 3]) -> usize {
        let mut node = 0;
        loop {
            match self.nodes[node] {
                Node::Leaf { rank } => return rank,
                Node::Split {
                    axis,
                    cut,
                    low,
                    high,
                } => node = if p[axis] < cut { low } else { high },
            }
        }
    }
}

/// The axis along which `hi - lo` is longest (the first of equals; infinite extents count
/// as longest).
fn longest_axis(lo: &[f64; 3], hi: &[f64; 3]) -> usize {
    let mut best = 0;
    for a in 1..3 {
        if hi[a] - lo[a] > hi[best] - lo[best] {
            best = a;
        }
    }
    best
}

/// A cut for a box without points: its middle where it is finite, else a finite bound, else 0.
fn fallback_cut(bounds: &Bounds, axis: usize) -> f64 {
    let (lo, hi) = (bounds.lo[axis], bounds.hi[axis]);
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) => lo + (hi - lo) * 0.5,
        (true, false) => lo,
        (false, true) => hi,
        (false, false) => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_distances() {
        let b = Bounds {
            lo: [0.0; 3],
            hi: [1.0; 3],
        };
        assert_eq!(b.distance_squared_to([0.5, 0.5, 0.5]), 0.0);
        assert_eq!(b.distance_squared_to([3.0, 0.5, -1.0]), 5.0);
        let c = b.translated([3.0, 0.0, 0.0]);
        assert_eq!(b.distance_squared_to_box(&c), 4.0);
        assert_eq!(Bounds::everything().distance_squared_to_box(&b), 0.0);
        assert!(b.contains([0.0, 0.0, 0.0]));
        assert!(!b.contains([1.0, 0.0, 0.0]));
        assert_eq!(b.depth_of([0.25, 0.5, 0.5]), 0.25);
    }

    #[test]
    fn a_single_rank_owns_everything() {
        let d = Decomposition::single(Bounds::everything());
        assert_eq!(d.owner([1e300, -1e300, 0.0]), 0);
        assert_eq!(d.ranks(), 1);
    }
}
