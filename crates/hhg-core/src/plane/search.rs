//! Several point sets of the plane in one search ([`NeighborSearch2`]): the 2-D twin of
//! [`crate::NeighborSearch`], with the same activation table, static sets and errors.

use crate::error::Error;
use crate::geometry::Kernel;
use crate::grid::check_radius;
use crate::lists::NeighborLists;
use crate::real::Real;
use crate::search::SetId;

use super::Grid2;

/// One point set: its grid and whether it moves.
#[derive(Debug)]
struct PointSet2<T: Real> {
    grid: Grid2<T>,
    dynamic: bool,
}

/// A neighbour search over several point sets of the plane sharing one radius (fluid, wall
/// samples), the 2-D twin of [`crate::NeighborSearch`].
///
/// Each set has its own [`Grid2`]. `set_active(a, b, true)` makes set `a` look for
/// neighbours in set `b`; after [`NeighborSearch2::find_neighbors`],
/// [`NeighborSearch2::neighbors`] gives, for every point of `a`, its neighbours in `b`,
/// ascending in the numbering set `b` was given in (a set against itself excludes the point
/// itself), with their squared distances when [`NeighborSearch2::set_with_distances`] asked
/// for them. A static set's grid is built once, when it is added or its positions are
/// replaced, and the lists between two static sets are computed once.
///
/// ```
/// use hhg_core::plane::NeighborSearch2;
///
/// let fluid = vec![[0.0f64, 0.5], [0.0, 1.0]];
/// let wall = vec![[0.0f64, 0.0], [5.0, 0.0]];
/// let mut search = NeighborSearch2::new(0.6)?;
/// let f = search.add_dynamic_set(&fluid)?;
/// let w = search.add_static_set(&wall)?;
/// search.set_active(f, f, true)?;
/// search.set_active(f, w, true)?;
/// search.find_neighbors()?;
/// assert_eq!(search.neighbors(f, f).unwrap().neighbors(0), &[1]);
/// assert_eq!(search.neighbors(f, w).unwrap().neighbors(0), &[0]);
/// assert!(search.neighbors(f, w).unwrap().neighbors(1).is_empty());
/// # Ok::<(), hhg_core::Error>(())
/// ```
#[derive(Debug)]
pub struct NeighborSearch2<T: Real> {
    radius: T,
    kernel: Kernel,
    with_distances: bool,
    /// The cap on the entries of each pair of sets' lists.
    max_entries: Option<usize>,
    sets: Vec<PointSet2<T>>,
    /// `active[a][b]`: set `a` searches set `b`.
    active: Vec<Vec<bool>>,
    /// `lists[a][b]`: the lists of the last search, kept for reuse.
    lists: Vec<Vec<NeighborLists<T>>>,
    /// `fresh[a][b]`: `lists[a][b]` holds the result of the last search.
    fresh: Vec<Vec<bool>>,
}

impl<T: Real> NeighborSearch2<T> {
    /// A search with no point set, for pairs within `radius` (`|xi - xj| <= radius`).
    ///
    /// Fails with [`Error::InvalidRadius`] for a radius that is zero, negative, NaN or
    /// infinite, or whose square is not a normal number in `T`.
    pub fn new(radius: T) -> Result<Self, Error> {
        check_radius(radius)?;
        Ok(Self {
            radius,
            kernel: Kernel::Simd,
            with_distances: false,
            max_entries: None,
            sets: Vec::new(),
            active: Vec::new(),
            lists: Vec::new(),
            fresh: Vec::new(),
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
            set.grid.set_kernel(kernel);
        }
    }

    /// The kernel of every set's grid.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Makes every later search also store the squared distance of each list entry
    /// ([`NeighborLists::distances_squared`]), by the predicate's formula `dx*dx + dy*dy`.
    pub fn set_with_distances(&mut self, with_distances: bool) {
        if self.with_distances != with_distances {
            self.with_distances = with_distances;
            for row in &mut self.fresh {
                row.fill(false);
            }
        }
    }

    /// Whether the searches store squared distances.
    pub fn with_distances(&self) -> bool {
        self.with_distances
    }

    /// Caps the lists of each pair of sets at `max_entries` entries (`None`, the default: no
    /// cap; see [`NeighborLists::set_max_entries`]): a search past it fails with
    /// [`Error::OutputTooLarge`] before the lists grow past it.
    pub fn set_max_entries(&mut self, max_entries: Option<usize>) {
        self.max_entries = max_entries;
    }

    /// The cap set by [`NeighborSearch2::set_max_entries`].
    pub fn max_entries(&self) -> Option<usize> {
        self.max_entries
    }

    /// How many sets the search holds.
    pub fn set_count(&self) -> usize {
        self.sets.len()
    }

    /// A grid over `build`'s points with the search's radius and kernel; the error of the
    /// build, if any, and then nothing of the search has changed.
    fn new_grid(
        &self,
        build: impl FnOnce(&mut Grid2<T>) -> Result<(), Error>,
    ) -> Result<Grid2<T>, Error> {
        let mut grid = Grid2::new(self.radius)?;
        grid.set_kernel(self.kernel);
        build(&mut grid)?;
        Ok(grid)
    }

    /// Adds a set with its grid built: a row and a column of the activation table, all off.
    fn add_set(&mut self, grid: Grid2<T>, dynamic: bool) -> SetId {
        self.sets.push(PointSet2 { grid, dynamic });
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
        sets - 1
    }

    /// Adds a set whose points move (its positions are given every step with
    /// [`NeighborSearch2::update_positions`]).
    ///
    /// Fails as [`Grid2::build`] does (a NaN or infinite coordinate names its point and axis),
    /// and then adds no set.
    pub fn add_dynamic_set(&mut self, points: &[[T; 2]]) -> Result<SetId, Error> {
        let grid = self.new_grid(|grid| grid.build(points))?;
        Ok(self.add_set(grid, true))
    }

    /// Adds a static set (wall samples): its grid is built now and reused; fails as
    /// [`NeighborSearch2::add_dynamic_set`] does.
    pub fn add_static_set(&mut self, points: &[[T; 2]]) -> Result<SetId, Error> {
        let grid = self.new_grid(|grid| grid.build(points))?;
        Ok(self.add_set(grid, false))
    }

    /// Adds a set given as separate coordinate columns; fails as [`Grid2::build_soa`] does.
    pub fn add_set_soa(&mut self, x: &[T], y: &[T], dynamic: bool) -> Result<SetId, Error> {
        let grid = self.new_grid(|grid| grid.build_soa(x, y))?;
        Ok(self.add_set(grid, dynamic))
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
    /// Fails with [`Error::UnknownPointSet`], [`Error::PointCountChanged`] or as
    /// [`Grid2::build`] does, and then the set keeps its points and its lists.
    pub fn update_positions(&mut self, set: SetId, points: &[[T; 2]]) -> Result<(), Error> {
        self.check_count(set, points.len())?;
        self.sets[set].grid.build(points)?;
        self.invalidate(set);
        Ok(())
    }

    /// Like [`NeighborSearch2::update_positions`] for separate coordinate columns.
    pub fn update_positions_soa(&mut self, set: SetId, x: &[T], y: &[T]) -> Result<(), Error> {
        self.check_count(set, x.len())?;
        self.sets[set].grid.build_soa(x, y)?;
        self.invalidate(set);
        Ok(())
    }

    /// Fails unless `set` exists and holds `given` points.
    fn check_count(&self, set: SetId, given: usize) -> Result<(), Error> {
        self.check_set(set)?;
        let expected = self.sets[set].grid.len();
        if given != expected {
            return Err(Error::PointCountChanged {
                set,
                expected,
                given,
            });
        }
        Ok(())
    }

    /// Replaces the points of a set by `points`, whose count may differ from the set's (a
    /// set that grows or shrinks). The set's grid is rebuilt now and every list involving it
    /// is stale until the next search.
    ///
    /// Fails with [`Error::UnknownPointSet`] or as [`Grid2::build`] does, and then the set
    /// keeps its points and its lists.
    pub fn replace_set(&mut self, set: SetId, points: &[[T; 2]]) -> Result<(), Error> {
        self.check_set(set)?;
        let grid = self.new_grid(|grid| grid.build(points))?;
        self.sets[set].grid = grid;
        self.invalidate(set);
        Ok(())
    }

    /// Like [`NeighborSearch2::replace_set`] for separate coordinate columns.
    pub fn replace_set_soa(&mut self, set: SetId, x: &[T], y: &[T]) -> Result<(), Error> {
        self.check_set(set)?;
        let grid = self.new_grid(|grid| grid.build_soa(x, y))?;
        self.sets[set].grid = grid;
        self.invalidate(set);
        Ok(())
    }

    /// Marks every list involving `set` stale.
    fn invalidate(&mut self, set: SetId) {
        for a in 0..self.sets.len() {
            self.fresh[a][set] = false;
            self.fresh[set][a] = false;
        }
    }

    /// Computes the lists of every active pair of sets from the sets' current grids
    /// (dynamic sets are given their positions for the step with
    /// [`NeighborSearch2::update_positions`] first); lists between two static sets are
    /// computed once.
    ///
    /// Fails with [`Error::OutOfMemory`] when lists cannot be allocated, or with
    /// [`Error::OutputTooLarge`] past their cap ([`NeighborSearch2::set_max_entries`]); the
    /// lists of that pair of sets are then empty and not searched
    /// ([`NeighborSearch2::neighbors`] gives `None` for them), those searched before it in
    /// this call are fresh, as in [`crate::NeighborSearch::find_neighbors`]. The sets and
    /// their grids are left as they were.
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
                let result = if a == b && self.with_distances {
                    searched.neighbor_lists_with_distances(lists)
                } else if a == b {
                    searched.neighbor_lists(lists)
                } else if self.with_distances {
                    searched.lists_for_with_distances(&self.sets[a].grid, lists)
                } else {
                    searched.lists_for(&self.sets[a].grid, lists)
                };
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

    /// The grid of a set: its locality permutation ([`Grid2::order`]), pairs and queries.
    pub fn grid(&self, set: SetId) -> Option<&Grid2<T>> {
        self.sets.get(set).map(|s| &s.grid)
    }
}
