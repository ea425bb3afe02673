//! The state of a 2-D search in one precision: hhg-core's `NeighborSearch2` plus each point
//! set's settings and unique pairs, with the same checks and messages as the 3-D state.

use hhg_core::plane::NeighborSearch2;
use hhg_core::{Error, NeighborLists, SetId};

use super::Precision;
use super::results::{HhgNeighborLists, HhgPairList, lists_view};
use super::state::{SetState, check_set, not_searched};
use crate::status::Failure;

/// Points of the plane as the caller gave them.
#[derive(Clone, Copy)]
pub(super) enum PlanePoints<'a, T> {
    /// `(x, y)` pairs.
    Aos(&'a [[T; 2]]),
    /// Separate `x` and `y` columns of one length.
    Soa(&'a [T], &'a [T]),
}

/// A 2-D search in one precision: the core search plus the sets' settings and pairs.
pub(super) struct PlaneState<T: Precision> {
    pub(super) search: NeighborSearch2<T>,
    pub(super) sets: Vec<SetState<T>>,
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
        self.sets
            .push(SetState::new(dynamic, self.search.max_entries()));
        Ok(set)
    }

    pub(super) fn update(&mut self, set: SetId, points: PlanePoints<'_, T>) -> Result<(), Error> {
        match points {
            PlanePoints::Aos(points) => self.search.update_positions(set, points)?,
            PlanePoints::Soa(x, y) => self.search.update_positions_soa(set, x, y)?,
        }
        self.sets[set].pairs_fresh = false;
        Ok(())
    }

    pub(super) fn resize(&mut self, set: SetId, points: PlanePoints<'_, T>) -> Result<(), Error> {
        match points {
            PlanePoints::Aos(points) => self.search.replace_set(set, points)?,
            PlanePoints::Soa(x, y) => self.search.replace_set_soa(set, x, y)?,
        }
        self.sets[set].pairs_fresh = false;
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
        self.sets[set].set_pairs(enabled);
        Ok(())
    }

    pub(super) fn set_with_distances(&mut self, with_distances: bool) {
        if self.with_distances != with_distances {
            self.with_distances = with_distances;
            self.search.set_with_distances(with_distances);
            for set in &mut self.sets {
                set.pairs_fresh = false;
            }
        }
    }

    pub(super) fn set_max_entries(&mut self, cap: Option<usize>) {
        self.search.set_max_entries(cap);
        for set in &mut self.sets {
            set.pairs.set_max_pairs(cap);
        }
    }

    pub(super) fn find(&mut self) -> Result<(), Error> {
        self.search.find_neighbors()?;
        for (id, set) in self.sets.iter_mut().enumerate() {
            if !set.needs_pairs() {
                continue;
            }
            let Some(grid) = self.search.grid(id) else {
                continue;
            };
            let found = if self.with_distances {
                grid.pairs_with_distances(&mut set.pairs)
            } else {
                grid.pairs(&mut set.pairs)
            };
            set.pairs_fresh = found.is_ok();
            found?;
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
        state.pairs_view(set, state.pairs.pairs(), state.pairs.distances_squared())
    }

    pub(super) fn order(&self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        Ok(self.search.grid(set).map_or(&[], |grid| grid.order()))
    }

    pub(super) fn adopt_cell_order(&mut self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        self.sets[set].pairs_fresh = false;
        self.search.adopt_cell_order(set)
    }

    pub(super) fn set_len(&self, set: SetId) -> Result<usize, Error> {
        self.check_set(set)?;
        Ok(self.search.grid(set).map_or(0, |grid| grid.len()))
    }
}
