//! The state of a search in one precision and one dimension: the core search plus each point
//! set's settings and unique pairs, with the checks and messages the entry points report. One
//! generic state serves both dimensions; [`StateGrid`] holds what differs between them.

use hhg_core::plane::Grid2;
use hhg_core::{Error, Grid, NeighborSearchOn, PairList, Points, Real, SetGrid, SetId};

use super::Precision;
use super::plane::PlanePoints;
use super::results::{HhgNeighborLists, HhgPairList, lists_view};
use crate::status::{Failure, HhgStatus};

/// A point set's settings and unique pairs, next to its grid in the core search.
pub(super) struct SetState<T: Real> {
    pub(super) dynamic: bool,
    pub(super) pairs_enabled: bool,
    /// `pairs` holds the pairs of the set's current positions.
    pub(super) pairs_fresh: bool,
    pub(super) pairs: PairList<T>,
}

impl<T: Precision> SetState<T> {
    /// The settings of a new set, its pairs capped at `cap`.
    pub(super) fn new(dynamic: bool, cap: Option<usize>) -> Self {
        let mut pairs = PairList::default();
        pairs.set_max_pairs(cap);
        Self {
            dynamic,
            pairs_enabled: false,
            pairs_fresh: false,
            pairs,
        }
    }

    /// Whether `find` must compute the set's pairs: enabled, and not the fresh pairs of a
    /// static set, which are kept.
    pub(super) fn needs_pairs(&self) -> bool {
        self.pairs_enabled && (self.dynamic || !self.pairs_fresh)
    }

    /// Enables or disables the set's pairs.
    pub(super) fn set_pairs(&mut self, enabled: bool) {
        self.pairs_enabled = enabled;
        if !enabled {
            self.pairs_fresh = false;
        }
    }

    /// The view of the set's pairs (set `set`), with `distances` alongside when they were
    /// computed, or why there are none.
    pub(super) fn pairs_view(
        &self,
        set: SetId,
        pairs: &[[u32; 2]],
        distances: Option<&[T]>,
    ) -> Result<HhgPairList, Failure> {
        if !self.pairs_fresh {
            let why = if self.pairs_enabled {
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
        let (distances_f32, distances_f64) = T::distance_fields(distances);
        Ok(HhgPairList {
            count: pairs.len(),
            pairs: pairs.as_ptr().cast::<u32>(),
            distances_f32,
            distances_f64,
        })
    }
}

/// The failure of reading the lists of set `searching` in set `searched` that are not there,
/// `active` telling whether the pair of sets is active.
pub(super) fn not_searched(searching: SetId, searched: SetId, active: bool) -> Failure {
    let why = if active {
        "was not searched since it was activated or a set changed: call \
         hhg_search_find_neighbors first"
    } else {
        "is not active: call hhg_search_set_active, then hhg_search_find_neighbors"
    };
    Failure::new(
        HhgStatus::NotSearched,
        format!("set {searching} searching set {searched} {why}"),
    )
}

/// `Ok` when `set` names one of a search's `sets` point sets, else the error naming both.
pub(super) fn check_set(sets: usize, set: SetId) -> Result<(), Error> {
    if set >= sets {
        return Err(Error::UnknownPointSet { set, sets });
    }
    Ok(())
}

/// What the C API's state does differently in each dimension: how the caller's points reach
/// the core search, and how a set's unique pairs are found on its grid.
pub(super) trait StateGrid<T: Precision, const D: usize>: SetGrid<T, D> + Sized {
    /// A set's points as the caller gave them.
    type Input<'a>: Copy
    where
        T: 'a;

    /// Adds a set of `points` to `search`.
    fn add(
        search: &mut NeighborSearchOn<T, Self, D>,
        points: Self::Input<'_>,
        dynamic: bool,
    ) -> Result<SetId, Error>;

    /// Moves the points of `set` to `points` (as many as before).
    fn update(
        search: &mut NeighborSearchOn<T, Self, D>,
        set: SetId,
        points: Self::Input<'_>,
    ) -> Result<(), Error>;

    /// Replaces the points of `set` by `points` (any count).
    fn replace(
        search: &mut NeighborSearchOn<T, Self, D>,
        set: SetId,
        points: Self::Input<'_>,
    ) -> Result<(), Error>;

    /// The grid's unique pairs, with their squared distances when asked.
    fn unique_pairs(&self, pairs: &mut PairList<T>, with_distances: bool) -> Result<(), Error>;

    /// The caller's index of each point in the order of the last build's cells.
    fn cell_order(&self) -> &[u32];
}

/// The methods of [`StateGrid`] that read the grid, alike in both dimensions: [`Grid`] and
/// [`Grid2`] have inherent methods of the same names.
macro_rules! same_in_both_dimensions {
    () => {
        fn unique_pairs(&self, pairs: &mut PairList<T>, with_distances: bool) -> Result<(), Error> {
            if with_distances {
                self.pairs_with_distances(pairs)
            } else {
                self.pairs(pairs)
            }
        }

        fn cell_order(&self) -> &[u32] {
            self.order()
        }
    };
}

impl<T: Precision> StateGrid<T, 3> for Grid<T> {
    type Input<'a>
        = Points<'a, T>
    where
        T: 'a;

    fn add(
        search: &mut NeighborSearchOn<T, Self, 3>,
        points: Points<'_, T>,
        dynamic: bool,
    ) -> Result<SetId, Error> {
        match points {
            Points::Aos(points) if dynamic => search.add_dynamic_set(points),
            Points::Aos(points) => search.add_static_set(points),
            Points::Soa(x, y, z) => search.add_set_soa(x, y, z, dynamic),
        }
    }

    fn update(
        search: &mut NeighborSearchOn<T, Self, 3>,
        set: SetId,
        points: Points<'_, T>,
    ) -> Result<(), Error> {
        match points {
            Points::Aos(points) => search.update_positions(set, points),
            Points::Soa(x, y, z) => search.update_positions_soa(set, x, y, z),
        }
    }

    fn replace(
        search: &mut NeighborSearchOn<T, Self, 3>,
        set: SetId,
        points: Points<'_, T>,
    ) -> Result<(), Error> {
        search.replace_set(set, points)
    }

    same_in_both_dimensions!();
}

impl<T: Precision> StateGrid<T, 2> for Grid2<T> {
    type Input<'a>
        = PlanePoints<'a, T>
    where
        T: 'a;

    fn add(
        search: &mut NeighborSearchOn<T, Self, 2>,
        points: PlanePoints<'_, T>,
        dynamic: bool,
    ) -> Result<SetId, Error> {
        match points {
            PlanePoints::Aos(points) if dynamic => search.add_dynamic_set(points),
            PlanePoints::Aos(points) => search.add_static_set(points),
            PlanePoints::Soa(x, y) => search.add_set_soa(x, y, dynamic),
        }
    }

    fn update(
        search: &mut NeighborSearchOn<T, Self, 2>,
        set: SetId,
        points: PlanePoints<'_, T>,
    ) -> Result<(), Error> {
        match points {
            PlanePoints::Aos(points) => search.update_positions(set, points),
            PlanePoints::Soa(x, y) => search.update_positions_soa(set, x, y),
        }
    }

    fn replace(
        search: &mut NeighborSearchOn<T, Self, 2>,
        set: SetId,
        points: PlanePoints<'_, T>,
    ) -> Result<(), Error> {
        match points {
            PlanePoints::Aos(points) => search.replace_set(set, points),
            PlanePoints::Soa(x, y) => search.replace_set_soa(set, x, y),
        }
    }

    same_in_both_dimensions!();
}

/// A search in one precision and dimension: the core search plus the unique pairs per set
/// (`State<T>` in space, [`PlaneState`] in the plane).
pub(super) struct State<T: Precision, G = Grid<T>, const D: usize = 3> {
    pub(super) search: NeighborSearchOn<T, G, D>,
    pub(super) sets: Vec<SetState<T>>,
    with_distances: bool,
}

/// The state of a 2-D search.
pub(super) type PlaneState<T> = State<T, Grid2<T>, 2>;

impl<T: Precision, G: StateGrid<T, D>, const D: usize> State<T, G, D> {
    pub(super) fn new(radius: T) -> Result<Self, Error> {
        Ok(Self {
            search: NeighborSearchOn::new(radius)?,
            sets: Vec::new(),
            with_distances: false,
        })
    }

    pub(super) fn check_set(&self, set: SetId) -> Result<(), Error> {
        check_set(self.sets.len(), set)
    }

    pub(super) fn add(&mut self, points: G::Input<'_>, dynamic: bool) -> Result<SetId, Error> {
        let set = G::add(&mut self.search, points, dynamic)?;
        self.sets
            .push(SetState::new(dynamic, self.search.max_entries()));
        Ok(set)
    }

    pub(super) fn update(&mut self, set: SetId, points: G::Input<'_>) -> Result<(), Error> {
        G::update(&mut self.search, set, points)?;
        self.sets[set].pairs_fresh = false;
        Ok(())
    }

    pub(super) fn resize(&mut self, set: SetId, points: G::Input<'_>) -> Result<(), Error> {
        G::replace(&mut self.search, set, points)?;
        self.sets[set].pairs_fresh = false;
        Ok(())
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
            let found = grid.unique_pairs(&mut set.pairs, self.with_distances);
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
        Ok(self.search.grid(set).map_or(&[], |grid| grid.cell_order()))
    }

    pub(super) fn adopt_cell_order(&mut self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        self.sets[set].pairs_fresh = false;
        self.search.adopt_cell_order(set)
    }

    pub(super) fn set_len(&self, set: SetId) -> Result<usize, Error> {
        self.check_set(set)?;
        Ok(self.search.grid(set).map_or(0, |grid| grid.point_count()))
    }
}

impl<T: Precision> State<T> {
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
}
