//! The state of a 2-D search in one precision: hhg-core's `NeighborSearch2` plus each point
//! set's settings, unique pairs and a copy of its positions, with the same checks and
//! messages as the 3-D state.
//!
//! The copy of the positions gives what the 2-D grid does not compute itself: the squared
//! distances of the unique pairs (by the predicate's formula `dx*dx + dy*dy`, so they equal
//! the lists' distances bit for bit) and the renumbering of `hhg_search_adopt_cell_order`,
//! which rebuilds the set's grid from the positions in cell order.

use hhg_core::plane::NeighborSearch2;
use hhg_core::{Error, NeighborLists, SetId};

use super::Precision;
use super::results::{HhgNeighborLists, HhgPairList, lists_view};
use super::state::{SetState, check_set, not_searched};
use crate::status::{Failure, HhgStatus};

/// Points of the plane as the caller gave them.
#[derive(Clone, Copy)]
pub(super) enum PlanePoints<'a, T> {
    /// `(x, y)` pairs.
    Aos(&'a [[T; 2]]),
    /// Separate `x` and `y` columns of one length.
    Soa(&'a [T], &'a [T]),
}

impl<T: Copy> PlanePoints<'_, T> {
    /// Replaces `out` by the points as `(x, y)` pairs.
    fn copy_into(self, out: &mut Vec<[T; 2]>) {
        out.clear();
        match self {
            Self::Aos(points) => out.extend_from_slice(points),
            Self::Soa(x, y) => out.extend(x.iter().zip(y).map(|(&x, &y)| [x, y])),
        }
    }
}

/// A 2-D point set's settings and pairs, and what the grid does not keep for it.
pub(super) struct PlaneSet<T: Precision> {
    settings: SetState<T>,
    /// The positions as last given, in the set's numbering.
    positions: Vec<[T; 2]>,
    /// The squared distances of `settings.pairs`, when distances are enabled.
    pair_distances: Vec<T>,
    /// The permutation the last `adopt_cell_order` handed out, kept for the caller's view.
    adopted_order: Vec<u32>,
}

/// A 2-D search in one precision: the core search plus the sets' settings and pairs.
pub(super) struct PlaneState<T: Precision> {
    pub(super) search: NeighborSearch2<T>,
    pub(super) sets: Vec<PlaneSet<T>>,
    with_distances: bool,
}

impl<T: Precision> PlaneState<T> {
    pub(super) fn new(radius: T) -> Result<Self, Error> {
        Ok(Self {
            search: NeighborSearch2::new(radius)?,
            sets: Vec::new(),
            with_distances: false,
        })
    }

    fn check_set(&self, set: SetId) -> Result<(), Error> {
        check_set(self.sets.len(), set)
    }

    pub(super) fn add(
        &mut self,
        points: PlanePoints<'_, T>,
        dynamic: bool,
    ) -> Result<SetId, Error> {
        let set = match points {
            PlanePoints::Aos(points) if dynamic => self.search.add_dynamic_set(points)?,
            PlanePoints::Aos(points) => self.search.add_static_set(points)?,
            PlanePoints::Soa(x, y) => self.search.add_set_soa(x, y, dynamic)?,
        };
        let mut positions = Vec::new();
        points.copy_into(&mut positions);
        self.sets.push(PlaneSet {
            settings: SetState::new(dynamic, self.search.max_entries()),
            positions,
            pair_distances: Vec::new(),
            adopted_order: Vec::new(),
        });
        Ok(set)
    }

    pub(super) fn update(&mut self, set: SetId, points: PlanePoints<'_, T>) -> Result<(), Error> {
        match points {
            PlanePoints::Aos(points) => self.search.update_positions(set, points)?,
            PlanePoints::Soa(x, y) => self.search.update_positions_soa(set, x, y)?,
        }
        let state = &mut self.sets[set];
        points.copy_into(&mut state.positions);
        state.settings.pairs_fresh = false;
        Ok(())
    }

    pub(super) fn resize(&mut self, set: SetId, points: PlanePoints<'_, T>) -> Result<(), Error> {
        match points {
            PlanePoints::Aos(points) => self.search.replace_set(set, points)?,
            PlanePoints::Soa(x, y) => self.search.replace_set_soa(set, x, y)?,
        }
        let state = &mut self.sets[set];
        points.copy_into(&mut state.positions);
        state.settings.pairs_fresh = false;
        Ok(())
    }

    /// The points of set `searched` within the radius of `point`, ascending, through the
    /// reused `lists`.
    pub(super) fn query_point<'l>(
        &self,
        searched: SetId,
        point: [T; 2],
        lists: &'l mut NeighborLists<T>,
    ) -> Result<&'l [u32], Error> {
        self.check_set(searched)?;
        match self.search.grid(searched) {
            Some(grid) => {
                grid.query(&[point], lists)?;
                Ok(lists.neighbors(0))
            }
            None => Ok(&[]),
        }
    }

    pub(super) fn set_pairs(&mut self, set: SetId, enabled: bool) -> Result<(), Error> {
        self.check_set(set)?;
        self.sets[set].settings.set_pairs(enabled);
        Ok(())
    }

    pub(super) fn set_with_distances(&mut self, with_distances: bool) {
        if self.with_distances != with_distances {
            self.with_distances = with_distances;
            self.search.set_with_distances(with_distances);
            for set in &mut self.sets {
                set.settings.pairs_fresh = false;
            }
        }
    }

    pub(super) fn set_max_entries(&mut self, cap: Option<usize>) {
        self.search.set_max_entries(cap);
        for set in &mut self.sets {
            set.settings.pairs.set_max_pairs(cap);
        }
    }

    pub(super) fn find(&mut self) -> Result<(), Failure> {
        self.search.find_neighbors()?;
        for (id, set) in self.sets.iter_mut().enumerate() {
            if !set.settings.needs_pairs() {
                continue;
            }
            let Some(grid) = self.search.grid(id) else {
                continue;
            };
            set.settings.pairs_fresh = false;
            set.pair_distances.clear();
            grid.pairs(&mut set.settings.pairs)?;
            if self.with_distances {
                pair_distances(
                    &set.positions,
                    set.settings.pairs.pairs(),
                    &mut set.pair_distances,
                )?;
            }
            set.settings.pairs_fresh = true;
        }
        Ok(())
    }

    pub(super) fn neighbors(
        &self,
        searching: SetId,
        searched: SetId,
    ) -> Result<HhgNeighborLists, Failure> {
        self.check_set(searching)?;
        self.check_set(searched)?;
        let Some(lists) = self.search.neighbors(searching, searched) else {
            let active = self.search.is_active(searching, searched);
            return Err(not_searched(searching, searched, active));
        };
        Ok(lists_view(lists))
    }

    pub(super) fn pairs(&self, set: SetId) -> Result<HhgPairList, Failure> {
        self.check_set(set)?;
        let state = &self.sets[set];
        let distances = self.with_distances.then_some(&state.pair_distances[..]);
        state
            .settings
            .pairs_view(set, state.settings.pairs.pairs(), distances)
    }

    pub(super) fn order(&self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        Ok(self.search.grid(set).map_or(&[], |grid| grid.order()))
    }

    /// Renumbers set `set` in the cell order of its last build: its positions are permuted
    /// by that order and its grid rebuilt from them (the 2-D grid cannot adopt its order in
    /// place), and the permutation is returned. The set keeps its id and settings; a failed
    /// rebuild leaves the set, its positions and the permutation handed out before as they
    /// were.
    pub(super) fn adopt_cell_order(&mut self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        let order = self.search.grid(set).map_or(&[][..], |grid| grid.order());
        let state = &mut self.sets[set];
        let permuted: Vec<[T; 2]> = order.iter().map(|&k| state.positions[k as usize]).collect();
        let order = order.to_vec();
        self.search.replace_set(set, &permuted)?;
        state.adopted_order = order;
        state.positions = permuted;
        state.settings.pairs_fresh = false;
        Ok(&state.adopted_order)
    }

    pub(super) fn set_len(&self, set: SetId) -> Result<usize, Error> {
        self.check_set(set)?;
        Ok(self.search.grid(set).map_or(0, |grid| grid.len()))
    }
}

/// The squared distance of every pair of `pairs` over `positions` into `out`, by the
/// predicate's formula `dx*dx + dy*dy`.
fn pair_distances<T: Precision>(
    positions: &[[T; 2]],
    pairs: &[[u32; 2]],
    out: &mut Vec<T>,
) -> Result<(), Failure> {
    out.clear();
    out.try_reserve_exact(pairs.len()).map_err(|_| {
        Failure::new(
            HhgStatus::OutOfMemory,
            format!(
                "out of memory: the squared distances of {} pairs could not be allocated",
                pairs.len()
            ),
        )
    })?;
    out.extend(pairs.iter().map(|&[i, j]| {
        let ([xi, yi], [xj, yj]) = (positions[i as usize], positions[j as usize]);
        let (dx, dy) = (xi - xj, yi - yj);
        dx * dx + dy * dy
    }));
    Ok(())
}
