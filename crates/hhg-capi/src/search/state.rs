//! The state of a search in one precision: the core search plus each point set's settings
//! and unique pairs, with the checks and messages the entry points report.

use hhg_core::{Error, NeighborSearch, PairList, Points, Real, SetId};

use super::Precision;
use super::results::{HhgNeighborLists, HhgPairList, lists_view};
use crate::status::{Failure, HhgStatus};

/// A point set's settings and unique pairs, next to its grid in the core search.
pub(super) struct SetState<T: Real> {
    dynamic: bool,
    pairs_enabled: bool,
    /// `pairs` holds the pairs of the set's current positions.
    pairs_fresh: bool,
    pairs: PairList<T>,
}

/// A search in one precision: the core search plus the unique pairs per set.
pub(super) struct State<T: Real> {
    pub(super) search: NeighborSearch<T>,
    pub(super) sets: Vec<SetState<T>>,
    with_distances: bool,
}

impl<T: Precision> State<T> {
    pub(super) fn new(radius: T) -> Result<Self, Error> {
        Ok(Self {
            search: NeighborSearch::new(radius)?,
            sets: Vec::new(),
            with_distances: false,
        })
    }

    fn check_set(&self, set: SetId) -> Result<(), Error> {
        if set >= self.sets.len() {
            return Err(Error::UnknownPointSet {
                set,
                sets: self.sets.len(),
            });
        }
        Ok(())
    }

    pub(super) fn add(&mut self, points: Points<'_, T>, dynamic: bool) -> Result<SetId, Error> {
        let set = match points {
            Points::Aos(points) if dynamic => self.search.add_dynamic_set(points)?,
            Points::Aos(points) => self.search.add_static_set(points)?,
            Points::Soa(x, y, z) => self.search.add_set_soa(x, y, z, dynamic)?,
        };
        let mut pairs = PairList::default();
        pairs.set_max_pairs(self.search.max_entries());
        self.sets.push(SetState {
            dynamic,
            pairs_enabled: false,
            pairs_fresh: false,
            pairs,
        });
        Ok(set)
    }

    pub(super) fn update(&mut self, set: SetId, points: Points<'_, T>) -> Result<(), Error> {
        match points {
            Points::Aos(points) => self.search.update_positions(set, points)?,
            Points::Soa(x, y, z) => self.search.update_positions_soa(set, x, y, z)?,
        }
        self.sets[set].pairs_fresh = false;
        Ok(())
    }

    pub(super) fn resize(&mut self, set: SetId, points: Points<'_, T>) -> Result<(), Error> {
        self.search.replace_set(set, points)?;
        self.sets[set].pairs_fresh = false;
        Ok(())
    }

    /// The points of set `searched` within the radius of `point`, ascending, into `out`.
    pub(super) fn query_point(
        &self,
        searched: SetId,
        point: [T; 3],
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        self.check_set(searched)?;
        match self.search.grid(searched) {
            Some(grid) => grid.query_point(point, out),
            None => {
                out.clear();
                Ok(())
            }
        }
    }

    pub(super) fn set_pairs(&mut self, set: SetId, enabled: bool) -> Result<(), Error> {
        self.check_set(set)?;
        let state = &mut self.sets[set];
        state.pairs_enabled = enabled;
        if !enabled {
            state.pairs_fresh = false;
        }
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
            if !set.pairs_enabled || (set.pairs_fresh && !set.dynamic) {
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
            let why = if self.search.is_active(searching, searched) {
                "was not searched since it was activated or a set changed: call \
                 hhg_search_find_neighbors first"
            } else {
                "is not active: call hhg_search_set_active, then hhg_search_find_neighbors"
            };
            return Err(Failure::new(
                HhgStatus::NotSearched,
                format!("set {searching} searching set {searched} {why}"),
            ));
        };
        Ok(lists_view(lists))
    }

    pub(super) fn pairs(&self, set: SetId) -> Result<HhgPairList, Failure> {
        self.check_set(set)?;
        let state = &self.sets[set];
        if !state.pairs_fresh {
            let why = if state.pairs_enabled {
                "were not computed since they were enabled or the set changed: call \
                 hhg_search_find_neighbors first"
            } else {
                "are not enabled: call hhg_search_set_pairs, then hhg_search_find_neighbors"
            };
            return Err(Failure::new(
                HhgStatus::NotSearched,
                format!("the unique pairs of set {set} {why}"),
            ));
        }
        let pairs = state.pairs.pairs();
        let (distances_f32, distances_f64) = T::distance_fields(state.pairs.distances_squared());
        Ok(HhgPairList {
            count: pairs.len(),
            pairs: pairs.as_ptr().cast::<u32>(),
            distances_f32,
            distances_f64,
        })
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
