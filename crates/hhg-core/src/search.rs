//! Several point sets in one search (fluid, static boundary samples, a second phase), with
//! an activation table saying which set looks for neighbours in which: [`NeighborSearchOn`],
//! generic over the sets' grid, [`NeighborSearch`] in space and
//! [`crate::plane::NeighborSearch2`] in the plane.

use std::marker::PhantomData;

use crate::error::Error;
use crate::geometry::{Kernel, Points};
use crate::grid::{Grid, check_radius};
use crate::lists::{ListOrder, NeighborLists};
use crate::periodic::PeriodicGrid;
use crate::plane::Grid2;
use crate::real::Real;

/// The id of a point set inside a [`NeighborSearchOn`], in order of addition from 0.
pub type SetId = usize;

/// The grid of each point set of a [`NeighborSearchOn`] over points of `D` coordinates:
/// [`Grid`] in space, [`Grid2`] in the plane, sealed as [`PeriodicGrid`] (what a periodic
/// search needs of its grid) is.
pub trait SetGrid<T: Real, const D: usize>: PeriodicGrid<T, D> {
    /// Chooses the order of list entries.
    #[doc(hidden)]
    fn choose_list_order(&mut self, list_order: ListOrder);
    /// How many points the last build took.
    #[doc(hidden)]
    fn point_count(&self) -> usize;
    /// The lists of the grid's points among themselves, with squared distances when asked.
    #[doc(hidden)]
    fn own_lists(&self, lists: &mut NeighborLists<T>, with_distances: bool) -> Result<(), Error>;
    /// The lists of the points of `searching` among the grid's points.
    #[doc(hidden)]
    fn lists_of(
        &self,
        searching: &Self,
        lists: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error>;
    /// Makes the last build's cell order the numbering; returns the order before.
    #[doc(hidden)]
    fn adopt_order(&mut self) -> &[u32];
}

/// The methods of [`SetGrid`] alike in both dimensions: [`Grid`] and [`Grid2`] have inherent
/// methods of the same names.
macro_rules! alike_in_both_dimensions {
    () => {
        fn point_count(&self) -> usize {
            self.len()
        }
        fn own_lists(
            &self,
            lists: &mut NeighborLists<T>,
            with_distances: bool,
        ) -> Result<(), Error> {
            if with_distances {
                self.neighbor_lists_with_distances(lists)
            } else {
                self.neighbor_lists(lists)
            }
        }
        fn adopt_order(&mut self) -> &[u32] {
            self.adopt_cell_order()
        }
    };
}

impl<T: Real> SetGrid<T, 3> for Grid<T> {
    fn choose_list_order(&mut self, list_order: ListOrder) {
        self.set_list_order(list_order);
    }
    alike_in_both_dimensions!();
    fn lists_of(
        &self,
        searching: &Self,
        lists: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        self.lists_for_into(searching, lists, with_distances)
    }
}

/// The plane's grid has ascending lists only: the search over it never asks for another
/// order ([`NeighborSearchOn::set_list_order`] is the 3-D search's).
impl<T: Real> SetGrid<T, 2> for Grid2<T> {
    fn choose_list_order(&mut self, list_order: ListOrder) {
        debug_assert_eq!(list_order, ListOrder::Ascending, "the plane's lists ascend");
    }
    alike_in_both_dimensions!();
    fn lists_of(
        &self,
        searching: &Self,
        lists: &mut NeighborLists<T>,
        with_distances: bool,
    ) -> Result<(), Error> {
        if with_distances {
            self.lists_for_with_distances(searching, lists)
        } else {
            self.lists_for(searching, lists)
        }
    }
}

/// One point set: its grid, and whether it moves.
#[derive(Debug)]
struct PointSet<G> {
    grid: G,
    dynamic: bool,
}

/// A neighbour search over several point sets sharing one radius, each set with its own
/// grid `G` of points with `D` coordinates: [`NeighborSearch`] in space,
/// [`crate::plane::NeighborSearch2`] in the plane.
///
/// `set_active(a, b, true)` makes set `a` look for neighbours in set `b`; after
/// [`NeighborSearchOn::find_neighbors`], [`NeighborSearchOn::neighbors`] gives, for every
/// point of `a`, its neighbours in `b` (numbered as set `b` was given; a set against itself
/// excludes the point itself), with their squared distances when
/// [`NeighborSearchOn::set_with_distances`] asked for them. A static set's grid is built
/// once, when it is added or its positions are replaced, and the lists between two static
/// sets are computed once.
#[derive(Debug)]
pub struct NeighborSearchOn<T: Real, G, const D: usize> {
    radius: T,
    kernel: Kernel,
    list_order: ListOrder,
    with_distances: bool,
    /// The cap on the entries of each pair of sets' lists.
    max_entries: Option<usize>,
    sets: Vec<PointSet<G>>,
    /// `active[a][b]`: set `a` searches set `b`.
    active: Vec<Vec<bool>>,
    /// `lists[a][b]`: the lists of the last search, kept for reuse.
    lists: Vec<Vec<NeighborLists<T>>>,
    /// `fresh[a][b]`: `lists[a][b]` holds the result of the last search.
    fresh: Vec<Vec<bool>>,
    /// The points have `D` coordinates.
    dimension: PhantomData<[T; D]>,
}

/// A neighbour search over several point sets of space sharing one radius (see
/// [`NeighborSearchOn`], whose 3-D form this is).
///
/// ```
/// use hhg_core::NeighborSearch;
///
/// let fluid = vec![[0.0f64, 0.0, 0.5], [0.0, 0.0, 1.0]];
/// let boundary = vec![[0.0f64, 0.0, 0.0], [5.0, 0.0, 0.0]];
/// let mut search = NeighborSearch::new(0.6)?;
/// let f = search.add_dynamic_set(&fluid)?;
/// let b = search.add_static_set(&boundary)?;
/// search.set_active(f, f, true)?;
/// search.set_active(f, b, true)?;
/// search.find_neighbors()?;
/// assert_eq!(search.neighbors(f, f).unwrap().neighbors(0), &[1]);
/// assert_eq!(search.neighbors(f, b).unwrap().neighbors(0), &[0]);
/// assert!(search.neighbors(f, b).unwrap().neighbors(1).is_empty());
/// # Ok::<(), hhg_core::Error>(())
/// ```
pub type NeighborSearch<T> = NeighborSearchOn<T, Grid<T>, 3>;

impl<T: Real, G: SetGrid<T, D>, const D: usize> NeighborSearchOn<T, G, D> {
    /// A search with no point set, for pairs within `radius` (`|xi - xj| <= radius`).
    ///
    /// Fails with [`Error::InvalidRadius`] for a radius that is zero, negative, NaN or
    /// infinite, or whose square is not a normal number in `T`.
    pub fn new(radius: T) -> Result<Self, Error> {
        check_radius(radius)?;
        Ok(Self {
            radius,
            kernel: Kernel::Simd,
            list_order: ListOrder::Ascending,
            with_distances: false,
            max_entries: None,
            sets: Vec::new(),
            active: Vec::new(),
            lists: Vec::new(),
            fresh: Vec::new(),
            dimension: PhantomData,
        })
    }

    /// The search radius.
    pub fn radius(&self) -> T {
        self.radius
    }

    /// Chooses the kernel of every set's grid (the scalar one exists for testing; both give
    /// identical lists).
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
        for set in &mut self.sets {
            set.grid.choose_kernel(kernel);
        }
    }

    /// The kernel of every set's grid.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The order of the entries of every list (ascending, unless the 3-D search's
    /// `set_list_order` chose another).
    pub fn list_order(&self) -> ListOrder {
        self.list_order
    }

    /// Whether the searches store squared distances.
    pub fn with_distances(&self) -> bool {
        self.with_distances
    }

    /// Makes every later search also store the squared distance of each list entry
    /// ([`NeighborLists::distances_squared`]), by the predicate's formula; SPH kernels
    /// evaluate `W(|xi - xj|)` from it.
    pub fn set_with_distances(&mut self, with_distances: bool) {
        if self.with_distances != with_distances {
            self.with_distances = with_distances;
            self.invalidate_all();
        }
    }

    /// Caps the lists of each pair of sets at `max_entries` entries (`None`, the default: no
    /// cap; see [`NeighborLists::set_max_entries`]): a search past it fails with
    /// [`Error::OutputTooLarge`] before the lists grow past it.
    pub fn set_max_entries(&mut self, max_entries: Option<usize>) {
        self.max_entries = max_entries;
    }

    /// The cap set by [`NeighborSearchOn::set_max_entries`].
    pub fn max_entries(&self) -> Option<usize> {
        self.max_entries
    }

    /// How many sets the search holds.
    pub fn set_count(&self) -> usize {
        self.sets.len()
    }

    /// A grid with the search's radius, kernel and list order over what `build` gives it;
    /// the error of the build, if any, and then nothing of the search has changed.
    fn new_grid(&self, build: impl FnOnce(&mut G) -> Result<(), Error>) -> Result<G, Error> {
        let mut grid = G::with_radius(self.radius)?;
        grid.choose_kernel(self.kernel);
        grid.choose_list_order(self.list_order);
        build(&mut grid)?;
        Ok(grid)
    }

    /// Adds a set over what `build` gives its grid: a row and a column of the activation
    /// table, all off. A failed build adds nothing.
    fn add_built(
        &mut self,
        build: impl FnOnce(&mut G) -> Result<(), Error>,
        dynamic: bool,
    ) -> Result<SetId, Error> {
        let grid = self.new_grid(build)?;
        self.sets.push(PointSet { grid, dynamic });
        let sets = self.sets.len();
        for row in self.active.iter_mut().chain(self.fresh.iter_mut()) {
            row.push(false);
        }
        for row in &mut self.lists {
            row.push(NeighborLists::default());
        }
        self.active.push(vec![false; sets]);
        self.fresh.push(vec![false; sets]);
        self.lists
            .push((0..sets).map(|_| NeighborLists::default()).collect());
        Ok(sets - 1)
    }

    /// Adds a set whose points move (its positions are given every step with
    /// [`NeighborSearchOn::update_positions`], which rebuilds its grid).
    ///
    /// Fails as the grid's build does (a NaN or infinite coordinate names its point and
    /// axis), and then adds no set.
    pub fn add_dynamic_set(&mut self, points: &[[T; D]]) -> Result<SetId, Error> {
        self.add_built(|grid| grid.build_points(points), true)
    }

    /// Adds a static set (boundary samples): its grid is built now and reused; fails as
    /// [`NeighborSearchOn::add_dynamic_set`] does.
    pub fn add_static_set(&mut self, points: &[[T; D]]) -> Result<SetId, Error> {
        self.add_built(|grid| grid.build_points(points), false)
    }

    /// Fails with [`Error::UnknownPointSet`] unless `set` is a set of the search.
    fn check_set(&self, set: SetId) -> Result<(), Error> {
        if set >= self.sets.len() {
            return Err(Error::UnknownPointSet {
                set,
                sets: self.sets.len(),
            });
        }
        Ok(())
    }

    /// Makes set `searching` look (or stop looking) for neighbours in set `searched`.
    ///
    /// Fails with [`Error::UnknownPointSet`] for an id that names no set.
    pub fn set_active(
        &mut self,
        searching: SetId,
        searched: SetId,
        active: bool,
    ) -> Result<(), Error> {
        self.check_set(searching)?;
        self.check_set(searched)?;
        self.active[searching][searched] = active;
        Ok(())
    }

    /// Whether set `searching` looks for neighbours in set `searched` (false for an id that
    /// names no set).
    pub fn is_active(&self, searching: SetId, searched: SetId) -> bool {
        self.active
            .get(searching)
            .and_then(|row| row.get(searched))
            .copied()
            .unwrap_or(false)
    }

    /// Replaces the positions of a set (the same point count) and rebuilds its grid; every
    /// list involving the set is stale until the next search.
    ///
    /// Fails with [`Error::UnknownPointSet`], [`Error::PointCountChanged`] or as the grid's
    /// build does, and then the set keeps its points and its lists.
    pub fn update_positions(&mut self, set: SetId, points: &[[T; D]]) -> Result<(), Error> {
        self.rebuild(set, points.len(), |grid| grid.build_points(points))
    }

    /// Rebuilds set `set`'s grid by `build` over `given` points: fails unless the set exists
    /// and holds `given` points, or as `build` does, and then changes nothing.
    fn rebuild(
        &mut self,
        set: SetId,
        given: usize,
        build: impl FnOnce(&mut G) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.check_set(set)?;
        let expected = self.sets[set].grid.point_count();
        if given != expected {
            return Err(Error::PointCountChanged {
                set,
                expected,
                given,
            });
        }
        build(&mut self.sets[set].grid)?;
        self.invalidate(set);
        Ok(())
    }

    /// Replaces set `set`'s grid by a new one over what `build` gives it (any point count);
    /// fails with [`Error::UnknownPointSet`] or as `build` does, and then changes nothing.
    fn replace_built(
        &mut self,
        set: SetId,
        build: impl FnOnce(&mut G) -> Result<(), Error>,
    ) -> Result<(), Error> {
        self.check_set(set)?;
        self.sets[set].grid = self.new_grid(build)?;
        self.invalidate(set);
        Ok(())
    }

    /// Makes the cell order of a set's last build its numbering, without a rebuild (see
    /// [`Grid::adopt_cell_order`], [`Grid2::adopt_cell_order`]), and returns the permutation
    /// to apply to each of the caller's per-point arrays of that set. Lists involving the
    /// set are stale until the next [`NeighborSearchOn::find_neighbors`], which numbers the
    /// set's points in cell order and takes the faster list pass for them.
    ///
    /// Fails with [`Error::UnknownPointSet`], and then changes nothing.
    pub fn adopt_cell_order(&mut self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        self.invalidate(set);
        Ok(self.sets[set].grid.adopt_order())
    }

    /// Marks every list involving `set` stale.
    fn invalidate(&mut self, set: SetId) {
        for a in 0..self.sets.len() {
            self.fresh[a][set] = false;
            self.fresh[set][a] = false;
        }
    }

    /// Marks every list stale.
    fn invalidate_all(&mut self) {
        for row in &mut self.fresh {
            row.fill(false);
        }
    }

    /// Computes the lists of every active pair of sets from the sets' current grids
    /// (dynamic sets are given their positions for the step with
    /// [`NeighborSearchOn::update_positions`] first); lists between two static sets are
    /// computed once.
    ///
    /// Fails with [`Error::OutOfMemory`] when lists cannot be allocated, or with
    /// [`Error::OutputTooLarge`] past their cap ([`NeighborSearchOn::set_max_entries`]); the
    /// lists of that pair of sets are then empty and not searched
    /// ([`NeighborSearchOn::neighbors`] gives `None` for them), those searched before it in
    /// this call are fresh. The sets and their grids are left as they were.
    pub fn find_neighbors(&mut self) -> Result<(), Error> {
        let sets = self.sets.len();
        for a in 0..sets {
            for b in 0..sets {
                if !self.active[a][b] {
                    continue;
                }
                if self.fresh[a][b] && !self.sets[a].dynamic && !self.sets[b].dynamic {
                    continue;
                }
                let lists = &mut self.lists[a][b];
                lists.set_max_entries(self.max_entries);
                let searched = &self.sets[b].grid;
                let result = if a == b {
                    searched.own_lists(lists, self.with_distances)
                } else {
                    searched.lists_of(&self.sets[a].grid, lists, self.with_distances)
                };
                // Lists that could not be made (no memory, or past their cap) are empty
                // and not searched: `neighbors` gives `None` for them until a search
                // succeeds.
                self.fresh[a][b] = result.is_ok();
                result?;
            }
        }
        Ok(())
    }

    /// The lists of the last search for the points of `searching` in set `searched`, or
    /// `None` when that pair is not active, was not searched since it or its sets changed,
    /// or names no set.
    pub fn neighbors(&self, searching: SetId, searched: SetId) -> Option<&NeighborLists<T>> {
        (self.is_active(searching, searched) && self.fresh[searching][searched])
            .then(|| &self.lists[searching][searched])
    }

    /// The grid of a set: its locality permutation (`order()`), pairs and queries.
    pub fn grid(&self, set: SetId) -> Option<&G> {
        self.sets.get(set).map(|s| &s.grid)
    }
}

/// What only the search in space has: the order of list entries, and points given as
/// [`Points`] (three coordinate columns).
impl<T: Real> NeighborSearch<T> {
    /// Chooses the order of the entries of every list (see [`Grid::set_list_order`]): each
    /// list ascending (the default) or in the searched set's cell order, which is faster
    /// on input not exactly in cell order.
    pub fn set_list_order(&mut self, order: ListOrder) {
        if self.list_order != order {
            self.list_order = order;
            for set in &mut self.sets {
                set.grid.set_list_order(order);
            }
            self.invalidate_all();
        }
    }

    /// Adds a set given as separate coordinate slices; fails as [`Grid::build_soa`] does.
    pub fn add_set_soa(
        &mut self,
        x: &[T],
        y: &[T],
        z: &[T],
        dynamic: bool,
    ) -> Result<SetId, Error> {
        self.add_built(|grid| grid.build_soa(x, y, z), dynamic)
    }

    /// Like [`NeighborSearch::update_positions`] for separate coordinate slices.
    pub fn update_positions_soa(
        &mut self,
        set: SetId,
        x: &[T],
        y: &[T],
        z: &[T],
    ) -> Result<(), Error> {
        self.rebuild(set, x.len(), |grid| grid.build_soa(x, y, z))
    }

    /// Replaces the points of a set by `points`, whose count may differ from the set's (a
    /// set that grows or shrinks). The set's grid is rebuilt now and every list involving it
    /// is stale until the next search. On an error the set keeps its points.
    pub fn replace_set(&mut self, set: SetId, points: Points<'_, T>) -> Result<(), Error> {
        self.replace_built(set, |grid| grid.build_points(points))
    }
}

/// What only the search in the plane has: points given as two coordinate columns.
impl<T: Real> NeighborSearchOn<T, Grid2<T>, 2> {
    /// Adds a set given as separate coordinate columns; fails as [`Grid2::build_soa`] does.
    pub fn add_set_soa(&mut self, x: &[T], y: &[T], dynamic: bool) -> Result<SetId, Error> {
        self.add_built(|grid| grid.build_soa(x, y), dynamic)
    }

    /// Like [`NeighborSearchOn::update_positions`] for separate coordinate columns.
    pub fn update_positions_soa(&mut self, set: SetId, x: &[T], y: &[T]) -> Result<(), Error> {
        self.rebuild(set, x.len(), |grid| grid.build_soa(x, y))
    }

    /// Replaces the points of a set by `points`, whose count may differ from the set's (a
    /// set that grows or shrinks). The set's grid is rebuilt now and every list involving it
    /// is stale until the next search.
    ///
    /// Fails with [`Error::UnknownPointSet`] or as [`Grid2::build`] does, and then the set
    /// keeps its points and its lists.
    pub fn replace_set(&mut self, set: SetId, points: &[[T; 2]]) -> Result<(), Error> {
        self.replace_built(set, |grid| grid.build(points))
    }

    /// Like [`crate::plane::NeighborSearch2::replace_set`] for separate coordinate columns.
    pub fn replace_set_soa(&mut self, set: SetId, x: &[T], y: &[T]) -> Result<(), Error> {
        self.replace_built(set, |grid| grid.build_soa(x, y))
    }
}
