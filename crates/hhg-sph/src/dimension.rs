//! The dimension of a simulation: [`Dim<D>`] maps `D` = 3 to hhg-core's
//! [`NeighborSearch`] and `D` = 2 to [`NeighborSearch2`], behind the calls the solver makes
//! ([`ParticleSearch`]), and names the axes of the [`crate::DamBreak`] a simulation of that
//! dimension uses.

use std::fmt::Debug;

use hhg_core::plane::NeighborSearch2;
use hhg_core::{Error, ListOrder, NeighborLists, NeighborSearch, SetId};

use crate::error::SphError;

/// The dimension `D` of a simulation, as a type: `Dim<3>` (the default) or `Dim<2>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim<const D: usize>;

/// What a dimension gives a simulation: its neighbour search and the axes of the scenario.
pub trait Dimension<const D: usize> {
    /// The neighbour search of points with `D` coordinates.
    type Search: ParticleSearch<D>;

    /// The axes of [`crate::DamBreak`]'s `tank` and `column` (x, y, z) that the simulation's
    /// axes take, in order; the last one is vertical (gravity points along `-` it). The
    /// 2-D dam break is the x-z section of the 3-D one.
    const AXES: [usize; D];
}

impl Dimension<3> for Dim<3> {
    type Search = NeighborSearch<f64>;
    const AXES: [usize; 3] = [0, 1, 2];
}

impl Dimension<2> for Dim<2> {
    type Search = NeighborSearch2<f64>;
    const AXES: [usize; 2] = [0, 2];
}

/// The calls of the solver on its neighbour search, for points with `D` coordinates.
pub trait ParticleSearch<const D: usize>: Debug + Send + Sync + Sized {
    /// A search for pairs within `radius`.
    fn with_radius(radius: f64) -> Result<Self, Error>;

    /// Chooses the order of the list entries; the 2-D search only has ascending lists.
    fn choose_list_order(&mut self, order: ListOrder) -> Result<(), SphError>;

    /// Adds a moving set.
    fn add_moving(&mut self, points: &[[f64; D]]) -> Result<SetId, Error>;

    /// Adds a static set.
    fn add_fixed(&mut self, points: &[[f64; D]]) -> Result<SetId, Error>;

    /// Makes set `searching` look for neighbours in set `searched`.
    fn activate(&mut self, searching: SetId, searched: SetId) -> Result<(), Error>;

    /// New positions of a set (the same count); rebuilds its grid.
    fn move_set(&mut self, set: SetId, points: &[[f64; D]]) -> Result<(), Error>;

    /// Makes the cell order of the set's last build its numbering in the search and writes
    /// into `order` the permutation the caller applies to its arrays of that set.
    fn cell_order(&mut self, set: SetId, order: &mut Vec<u32>) -> Result<(), Error>;

    /// Computes the lists of every active pair of sets.
    fn search(&mut self) -> Result<(), Error>;

    /// The lists of set `searching` in set `searched` from the last search.
    fn lists(&self, searching: SetId, searched: SetId) -> Option<&NeighborLists<f64>>;
}

/// In 3-D the search adopts its cell order in place ([`NeighborSearch::adopt_cell_order`]):
/// no rebuild, and the next lists take the faster pass for points in cell order.
impl ParticleSearch<3> for NeighborSearch<f64> {
    fn with_radius(radius: f64) -> Result<Self, Error> {
        NeighborSearch::new(radius)
    }

    fn choose_list_order(&mut self, order: ListOrder) -> Result<(), SphError> {
        self.set_list_order(order);
        Ok(())
    }

    fn add_moving(&mut self, points: &[[f64; 3]]) -> Result<SetId, Error> {
        self.add_dynamic_set(points)
    }

    fn add_fixed(&mut self, points: &[[f64; 3]]) -> Result<SetId, Error> {
        self.add_static_set(points)
    }

    fn activate(&mut self, searching: SetId, searched: SetId) -> Result<(), Error> {
        self.set_active(searching, searched, true)
    }

    fn move_set(&mut self, set: SetId, points: &[[f64; 3]]) -> Result<(), Error> {
        self.update_positions(set, points)
    }

    fn cell_order(&mut self, set: SetId, order: &mut Vec<u32>) -> Result<(), Error> {
        let adopted = self.adopt_cell_order(set)?;
        order.clear();
        order.extend_from_slice(adopted);
        Ok(())
    }

    fn search(&mut self) -> Result<(), Error> {
        self.find_neighbors()
    }

    fn lists(&self, searching: SetId, searched: SetId) -> Option<&NeighborLists<f64>> {
        self.neighbors(searching, searched)
    }
}

/// In 2-D as in 3-D the search adopts its cell order in place
/// ([`NeighborSearch2::adopt_cell_order`]): no rebuild, and the next lists are found without
/// sorting any.
impl ParticleSearch<2> for NeighborSearch2<f64> {
    fn with_radius(radius: f64) -> Result<Self, Error> {
        NeighborSearch2::new(radius)
    }

    fn choose_list_order(&mut self, order: ListOrder) -> Result<(), SphError> {
        match order {
            ListOrder::Ascending => Ok(()),
            other => Err(SphError::Config(format!(
                "the 2-D dam break has ascending neighbour lists only, not {other:?}"
            ))),
        }
    }

    fn add_moving(&mut self, points: &[[f64; 2]]) -> Result<SetId, Error> {
        self.add_dynamic_set(points)
    }

    fn add_fixed(&mut self, points: &[[f64; 2]]) -> Result<SetId, Error> {
        self.add_static_set(points)
    }

    fn activate(&mut self, searching: SetId, searched: SetId) -> Result<(), Error> {
        self.set_active(searching, searched, true)
    }

    fn move_set(&mut self, set: SetId, points: &[[f64; 2]]) -> Result<(), Error> {
        self.update_positions(set, points)
    }

    fn cell_order(&mut self, set: SetId, order: &mut Vec<u32>) -> Result<(), Error> {
        let adopted = self.adopt_cell_order(set)?;
        order.clear();
        order.extend_from_slice(adopted);
        Ok(())
    }

    fn search(&mut self) -> Result<(), Error> {
        self.find_neighbors()
    }

    fn lists(&self, searching: SetId, searched: SetId) -> Option<&NeighborLists<f64>> {
        self.neighbors(searching, searched)
    }
}
