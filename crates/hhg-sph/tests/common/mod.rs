//! Shared scenarios of the integration tests: small dam breaks that run in seconds in the
//! debug profile.

#![allow(dead_code)]

use hhg_sph::DamBreak;

/// A narrow dam break: a 0.1 m by 0.05 m by 0.08 m block in a 0.2 m by 0.05 m by 0.12 m
/// closed box, with about `particles` fluid particles.
pub fn small_dam_break(particles: usize) -> DamBreak {
    DamBreak {
        tank: [0.2, 0.05, 0.12],
        column: [0.1, 0.05, 0.08],
        particles,
        ..DamBreak::default()
    }
}
