//! The pair interactions of a time step: the wall pressures extrapolated from the fluid, and
//! the accelerations and density rates of the fluid over its fluid and wall neighbours, in
//! `D` dimensions (the last axis vertical).

use hhg_core::NeighborLists;
use rayon::prelude::*;

use super::{Boundary, PARTICLES_PER_TASK, PairState, Physics, WallState, dot, sub};

/// Neighbour lists as the interactions read them: particle `i`'s neighbours, in the order
/// its sums add them. hhg-core's lists in one process; the distributed solver's lists
/// ordered by global id on MPI ranks.
pub(crate) trait Rows: Sync {
    /// The neighbours of particle `i`.
    fn neighbors(&self, i: usize) -> &[u32];
}

impl Rows for NeighborLists<f64> {
    fn neighbors(&self, i: usize) -> &[u32] {
        NeighborLists::neighbors(self, i)
    }
}

/// The wall condition of Adami, Hu and Adams (2012) for walls at rest: each boundary
/// particle takes the kernel-weighted mean pressure of its fluid neighbours plus the
/// hydrostatic difference, `p_w = (sum p_f W + g . sum rho_f (x_w - x_f) W) / sum W`, and the
/// density that pressure has. Tension is not extrapolated: negative pressures become zero,
/// so that the walls never pull fluid onto themselves.
pub(crate) fn wall_pressures<const D: usize>(
    physics: &Physics<D>,
    fluid: &[PairState<D>],
    lists: &impl Rows,
    boundary: &mut Boundary<D>,
) {
    let (kernel, eos, g) = (physics.kernel, physics.eos, physics.gravity);
    let walls = &boundary.pos;
    boundary
        .state
        .par_iter_mut()
        .enumerate()
        .with_min_len(PARTICLES_PER_TASK)
        .for_each(|(w, wall)| {
            let neighbours = lists.neighbors(w);
            if neighbours.is_empty() {
                if wall.p != 0.0 {
                    *wall = WallState::new(&eos, 0.0);
                }
                return;
            }
            let xw = walls[w];
            let (mut weight, mut sum_p, mut sum_rho_r) = (0.0, 0.0, [0.0; D]);
            for &j in neighbours {
                let s = &fluid[j as usize];
                let r = sub(xw, s.x);
                let wk = kernel.value(dot(r, r).sqrt());
                weight += wk;
                sum_p += s.p * wk;
                for k in 0..D {
                    sum_rho_r[k] += s.rho * r[k] * wk;
                }
            }
            let p = if weight > 0.0 {
                ((sum_p + dot(g, sum_rho_r)) / weight).max(0.0)
            } else {
                0.0
            };
            *wall = WallState::new(&eos, p);
        });
}

/// Accelerations and density rates of every fluid particle, over its fluid and wall
/// neighbours, each in list order (so the sums do not depend on the thread count):
///
/// - momentum: `a_i = g - sum_j m_j (p_i / rho_i^2 + p_j / rho_j^2 + Pi_ij) grad W_ij`, with
///   Monaghan's artificial viscosity `Pi_ij = -alpha c_ij mu_ij / rho_ij` for approaching
///   pairs, `mu_ij = h v_ij . x_ij / (|x_ij|^2 + (0.1 h)^2)`, `c_ij` and `rho_ij` the means;
/// - continuity: `drho_i/dt = sum_j m_j v_ij . grad W_ij`, walls at rest;
/// - a short-range repulsion from wall particles closer than `0.9` spacings, against the
///   slow creep of thin low-pressure films into a wall whose extrapolated pressure is zero;
/// - density diffusion between fluid particles (Molteni and Colagrossi 2009, with the
///   hydrostatic part removed as Fourtakas et al. 2019 do):
///   `2 delta h c0 sum_j (rho_j - rho_i - rho^H_ji) (x_ji . grad W_ij) / |x_ij|^2 m_j / rho_j`.
///
/// `state` holds the fluid particles that the lists name (in the distributed solver also the
/// ghosts, after the particles); `acc` and `drho` those whose rates are computed, the first
/// of `state`.
pub(crate) fn rates<const D: usize>(
    physics: &Physics<D>,
    state: &[PairState<D>],
    acc: &mut [[f64; D]],
    drho: &mut [f64],
    fluid_lists: &impl Rows,
    wall_lists: &impl Rows,
    boundary: &Boundary<D>,
) {
    let physics = *physics;
    let h = physics.kernel.smoothing_length();
    let kernel = physics.kernel;
    // The means of the sound speeds and of the densities in Pi_ij: (c_i + c_j) / 2 over
    // (rho_i + rho_j) / 2, whose halves cancel.
    let viscosity = |vr: f64, r2: f64, c_sum: f64, rho_sum: f64| {
        if vr < 0.0 {
            let mu = h * vr / (r2 + physics.eta2);
            -physics.alpha * c_sum * mu / rho_sum
        } else {
            0.0
        }
    };
    acc.par_iter_mut()
        .zip(drho.par_iter_mut())
        .enumerate()
        .with_min_len(PARTICLES_PER_TASK)
        .for_each(|(i, (acc, drho))| {
            let si = &state[i];
            let mut a = physics.gravity;
            let mut d = 0.0;
            for &j in fluid_lists.neighbors(i) {
                let sj = &state[j as usize];
                let r = sub(si.x, sj.x);
                let r2 = dot(r, r);
                let f = kernel.gradient_factor(r2.sqrt());
                let vr = dot(sub(si.v, sj.v), r);
                let pij = si.p_rho2 + sj.p_rho2 + viscosity(vr, r2, si.c + sj.c, si.rho + sj.rho);
                let mf = sj.mass * f;
                for k in 0..D {
                    a[k] -= mf * pij * r[k];
                }
                // With grad W = x_ij F, x_ji . grad W / |x_ij|^2 is just -F. The last axis
                // is vertical.
                let hydrostatic = physics.hydrostatic * r[D - 1];
                let diffusion = physics.diffusion * (sj.rho - si.rho - hydrostatic) * sj.inv_rho;
                d += mf * (vr - diffusion);
            }
            for &w in wall_lists.neighbors(i) {
                let w = w as usize;
                let sw = &boundary.state[w];
                let r = sub(si.x, boundary.pos[w]);
                let r2 = dot(r, r);
                let f = kernel.gradient_factor(r2.sqrt());
                let vr = dot(si.v, r);
                let pij = si.p_rho2 + sw.p_rho2 + viscosity(vr, r2, si.c + sw.c, si.rho + sw.rho);
                let mf = physics.boundary_mass * f;
                // The safety net: Monaghan's (1994) Lennard-Jones repulsion
                // `D ((r0 / r)^12 - (r0 / r)^4) x_iw / r^2` within `r0` of a wall particle.
                let repulsion = if r2 < physics.repulsion_range2 {
                    let s2 = physics.repulsion_range2 / r2;
                    let s4 = s2 * s2;
                    physics.repulsion * (s4 * s4 * s4 - s4) / r2
                } else {
                    0.0
                };
                for k in 0..D {
                    a[k] += (repulsion - mf * pij) * r[k];
                }
                d += mf * vr;
            }
            *acc = a;
            *drho = d;
        });
}
