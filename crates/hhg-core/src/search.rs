//! Several point sets in one search (fluid, static boundary samples, a second phase), with
//! an activation table saying which set looks for neighbours in which.

use crate::error::Error;
use crate::geometry::{Kernel, Points};
use crate::grid::{Grid, check_radius};
use crate::lists::{ListOrder, NeighborLists};
use crate::real::Real;

/// The id of a point set inside a [`NeighborSearch`], in order of addition from 0.
pub type SetId = usize;

/// One point set: its grid, whether it moves, and whether its grid is stale.
#[derive(Debug)]
struct PointSet<T: Real> {
    grid: Grid<T>,
    dynamic: bool,
}

/// A neighbour search over several point sets sharing one radius.
///
/// Each set has its own grid. `set_active(a, b, true)` makes set `a` look for neighbours in
/// set `b`; after [`NeighborSearch::find_neighbors`], [`NeighborSearch::neighbors`] gives,
/// for every point of `a`, its neighbours in `b` (numbered as set `b` was given; a set
/// against itself excludes the point itself). A static set's grid is built once, when it is
/// added or its positions are replaced, and reused by every later search.
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
#[derive(Debug)]
pub struct NeighborSearch<T: Real> {
    radius: T,
    kernel: Kernel,
    list_order: ListOrder,
    with_distances: bool,
    /// The cap on the entries of each pair of sets' lists.
    max_entries: Option<usize>,
    sets: Vec<PointSet<T>>,
    /// `active[a][b]`: set `a` searches set `b`.
    active: Vec<Vec<bool>>,
    /// `lists[a][b]`: the lists of the last search, kept for reuse.
    lists: Vec<Vec<NeighborLists<T>>>,
    /// `fresh[a][b]`: `lists[a][b]` holds the result of the last search.
    fresh: Vec<Vec<bool>>,
}

impl<T: Real> NeighborSearch<T> {
    /// A search with no point set, for pairs within `radius`.
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
        })
    }

    /// Chooses the kernel of every set's grid (the scalar one exists for testing).
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
        for set in &mut self.sets {
            set.grid.set_kernel(kernel);
        }
    }

    /// The kernel of every set's grid.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The order of the entries of every list.
    pub fn list_order(&self) -> ListOrder {
        self.list_order
    }

    /// Whether the searches store squared distances.
    pub fn with_distances(&self) -> bool {
        self.with_distances
    }

    /// Chooses the order of the entries of every list (see [`Grid::set_list_order`]): each
    /// list ascending (the default) or in the searched set's cell order, which is faster
    /// on input not exactly in cell order.
    pub fn set_list_order(&mut self, order: ListOrder) {
        if self.list_order != order {
            self.list_order = order;
            for set in &mut self.sets {
                set.grid.set_list_order(order);
            }
            for row in &mut self.fresh {
                row.fill(false);
            }
        }
    }

    /// Makes every later search also store the squared distance of each list entry
    /// ([`NeighborLists::distances_squared`]); SPH kernels evaluate `W(|xi - xj|)` from it.
    pub fn set_with_distances(&mut self, with_distances: bool) {
        if self.with_distances != with_distances {
            self.with_distances = with_distances;
            for row in &mut self.fresh {
                row.fill(false);
            }
        }
    }

    /// Caps the lists of each pair of sets at `max_entries` entries (`None`, the default: no
    /// cap; see [`NeighborLists::set_max_entries`]): a search past it fails with
    /// [`Error::OutputTooLarge`] before the lists grow past it.
    pub fn set_max_entries(&mut self, max_entries: Option<usize>) {
        self.max_entries = max_entries;
    }

    /// The cap set by [`NeighborSearch::set_max_entries`].
    pub fn max_entries(&self) -> Option<usize> {
        self.max_entries
    }

    /// How many sets the search holds.
    pub fn set_count(&self) -> usize {
        self.sets.len()
    }

    fn add_set(&mut self, points: Points<'_, T>, dynamic: bool) -> Result<SetId, Error> {
        let mut grid = Grid::new(self.radius)?;
        grid.set_kernel(self.kernel);
        grid.set_list_order(self.list_order);
        grid.build_points(points)?;
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

    /// Adds a set whose points move every step (its grid is rebuilt by every search).
    pub fn add_dynamic_set(&mut self, points: &[[T; 3]]) -> Result<SetId, Error> {
        self.add_set(Points::Aos(points), true)
    }

    /// Adds a static set (boundary samples): its grid is built now and reused.
    pub fn add_static_set(&mut self, points: &[[T; 3]]) -> Result<SetId, Error> {
        self.add_set(Points::Aos(points), false)
    }

    /// Adds a set given as separate coordinate slices.
    pub fn add_set_soa(
        &mut self,
        x: &[T],
        y: &[T],
        z: &[T],
        dynamic: bool,
    ) -> Result<SetId, Error> {
        self.add_set(Points::Soa(x, y, z), dynamic)
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

    /// Makes set `searching` look (or stop looking) for neighbours in set `searched`.
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

    /// Whether set `searching` looks for neighbours in set `searched`.
    pub fn is_active(&self, searching: SetId, searched: SetId) -> bool {
        self.active
            .get(searching)
            .and_then(|row| row.get(searched))
            .copied()
            .unwrap_or(false)
    }

    /// Replaces the positions of a set (same point count). A dynamic set's grid is rebuilt
    /// by the next search; a static set's grid is rebuilt now.
    pub fn update_positions(&mut self, set: SetId, points: &[[T; 3]]) -> Result<(), Error> {
        self.update_points(set, Points::Aos(points))
    }

    /// Like [`NeighborSearch::update_positions`] for separate coordinate slices.
    pub fn update_positions_soa(
        &mut self,
        set: SetId,
        x: &[T],
        y: &[T],
        z: &[T],
    ) -> Result<(), Error> {
        self.update_points(set, Points::Soa(x, y, z))
    }

    /// Replaces the points of a set by `points`, whose count may differ from the set's (a
    /// set that grows or shrinks). The set's grid is rebuilt now and every list involving it
    /// is stale until the next search. On an error the set keeps its points.
    pub fn replace_set(&mut self, set: SetId, points: Points<'_, T>) -> Result<(), Error> {
        self.check_set(set)?;
        let mut grid = Grid::new(self.radius)?;
        grid.set_kernel(self.kernel);
        grid.set_list_order(self.list_order);
        grid.build_points(points)?;
        self.sets[set].grid = grid;
        self.invalidate(set);
        Ok(())
    }

    fn update_points(&mut self, set: SetId, points: Points<'_, T>) -> Result<(), Error> {
        self.check_set(set)?;
        let expected = self.sets[set].grid.len();
        if points.len() != expected {
            return Err(Error::PointCountChanged {
                set,
                expected,
                given: points.len(),
            });
        }
        self.sets[set].grid.build_points(points)?;
        self.invalidate(set);
        Ok(())
    }

    /// Makes the cell order of a set's last build its numbering, without a rebuild (see
    /// [`Grid::adopt_cell_order`]), and returns the permutation to apply to each of the
    /// caller's per-point arrays of that set. Lists involving the set are stale until the
    /// next [`NeighborSearch::find_neighbors`], which numbers the set's points in cell order
    /// and takes the faster list pass for them.
    pub fn adopt_cell_order(&mut self, set: SetId) -> Result<&[u32], Error> {
        self.check_set(set)?;
        self.invalidate(set);
        Ok(self.sets[set].grid.adopt_cell_order())
    }

    /// Marks every list involving `set` stale.
    fn invalidate(&mut self, set: SetId) {
        for a in 0..self.sets.len() {
            self.fresh[a][set] = false;
            self.fresh[set][a] = false;
        }
    }

    /// Computes the lists of every active pair of sets. Dynamic sets must have been given
    /// their positions for this step with [`NeighborSearch::update_positions`] (each call
    /// rebuilds that set's grid); lists between two static sets are computed once.
    ///
    /// Fails with [`Error::OutOfMemory`] when lists cannot be allocated, or with
    /// [`Error::OutputTooLarge`] past their cap ([`NeighborSearch::set_max_entries`]); the
    /// lists of that pair of sets are then empty and not searched, those searched before it
    /// in this call are fresh.
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
                let searched = if a == b && self.with_distances {
                    self.sets[a].grid.neighbor_lists_with_distances(lists)
                } else if a == b {
                    self.sets[a].grid.neighbor_lists(lists)
                } else {
                    let searching = &self.sets[a].grid;
                    self.sets[b]
                        .grid
                        .lists_for_into(searching, lists, self.with_distances)
                };
                // Lists that could not be made (no memory, or past their cap) are empty
                // and not searched: `neighbors` gives `None` for them until a search
                // succeeds.
                self.fresh[a][b] = searched.is_ok();
                searched?;
            }
        }
        Ok(())
    }

    /// The lists of the last search for points of `searching` in set `searched`, or `None`
    /// when that pair is not active or was not searched yet.
    pub fn neighbors(&self, searching: SetId, searched: SetId) -> Option<&NeighborLists<T>> {
        (self.is_active(searching, searched) && self.fresh[searching][searched])
            .then(|| &self.lists[searching][searched])
    }

    /// The grid of a set: its locality permutation ([`Grid::order`]), pairs and queries.
    pub fn grid(&self, set: SetId) -> Option<&Grid<T>> {
        self.sets.get(set).map(|s| &s.grid)
    }
}
