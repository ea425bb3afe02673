//! Compiles the public entry points for `f32` and `f64` once, in hhg-core, for builds with
//! debug assertions (the test and dev profiles).
//!
//! At opt-level 0 and 1 rustc lets a crate link the generic instances its dependencies
//! already compiled instead of compiling its own. Without these, every test binary, example
//! and dependant compiled the whole search again (grid build, every list and pair pass, each
//! kernel in three forms and two precisions), about a minute and a half each on two cores:
//! most of `.ci/run`. Release builds optimise each crate's instances and skip this module.

use crate::broad::{BroadPhase, Scene, VariableRadiusSearch};
use crate::periodic::PeriodicSearch;
use crate::{Grid, NeighborSearch, Real};

/// The addresses of one precision's entry points: taking them makes this crate compile them.
fn entry_points<T: Real>() -> Vec<*const ()> {
    vec![
        Grid::<T>::build as *const (),
        Grid::<T>::build_soa as *const (),
        Grid::<T>::adopt_cell_order as *const (),
        Grid::<T>::neighbor_lists as *const (),
        Grid::<T>::neighbor_lists_with_distances as *const (),
        Grid::<T>::query as *const (),
        Grid::<T>::query_points as *const (),
        Grid::<T>::lists_for as *const (),
        Grid::<T>::pairs as *const (),
        Grid::<T>::pairs_with_distances as *const (),
        NeighborSearch::<T>::add_dynamic_set as *const (),
        NeighborSearch::<T>::add_static_set as *const (),
        NeighborSearch::<T>::update_positions as *const (),
        NeighborSearch::<T>::find_neighbors as *const (),
        NeighborSearch::<T>::adopt_cell_order as *const (),
        PeriodicSearch::<T>::build as *const (),
        PeriodicSearch::<T>::pairs as *const (),
        PeriodicSearch::<T>::pairs_with_distances as *const (),
        PeriodicSearch::<T>::neighbor_lists as *const (),
        BroadPhase::<T>::build as *const (),
        BroadPhase::<T>::build_filtered as *const (),
        BroadPhase::<T>::pairs as *const (),
        BroadPhase::<T>::query_aabb as *const (),
        Scene::<T>::update as *const (),
        Scene::<T>::detect as *const (),
        VariableRadiusSearch::<T>::build as *const (),
        VariableRadiusSearch::<T>::pairs as *const (),
    ]
}

/// The entry points of both precisions. Public only so that it is compiled into the crate
/// (a root for rustc); nothing needs to call it.
#[doc(hidden)]
pub fn shared_entry_points() -> Vec<*const ()> {
    let mut points = entry_points::<f32>();
    points.extend(entry_points::<f64>());
    points
}
