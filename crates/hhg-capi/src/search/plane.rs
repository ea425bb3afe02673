//! What only a 2-D search's state has: the caller's points of the plane, and the query of
//! one point (the state itself is the generic one of `state`, as [`PlaneState`]).

use hhg_core::{Error, NeighborLists, SetId};

use super::Precision;
use super::state::PlaneState;

/// Points of the plane as the caller gave them.
#[derive(Clone, Copy)]
pub(super) enum PlanePoints<'a, T> {
    /// `(x, y)` pairs.
    Aos(&'a [[T; 2]]),
    /// Separate `x` and `y` columns of one length.
    Soa(&'a [T], &'a [T]),
}

impl<T: Precision> PlaneState<T> {
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
}
