//! hhg-core's integration tests in one binary (one link of the library's instantiations instead
//! of one per file); `allocations` and `memory` stay apart because each installs its own global
//! allocator.

// Each module was a test binary of its own; run one with `cargo test -p hhg-core --test suite
// MODULE::`.
mod broad;
mod differential;
mod errors;
mod kernels;
mod multiset;
mod near_order;
mod periodic;
mod plane;
mod plane_periodic;
mod plane_search;
mod properties;
mod scene;
mod scene_model;
mod scheme;
mod triclinic;
mod variable_radius;
