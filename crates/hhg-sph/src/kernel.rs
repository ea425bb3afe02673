//! The Wendland C2 smoothing kernel in three and in two dimensions, and the Tait equation of
//! state.

use std::f64::consts::PI;

/// The Wendland C2 kernel in 3-D (or 2-D) with smoothing length `h` and support radius `2h`.
///
/// `W(q) = a (1 - q/2)^4 (2q + 1)` for `q = r / h <= 2` and zero beyond, with
/// `a = 21 / (16 pi h^3)` in 3-D ([`Wendland::new`]) and `a = 7 / (4 pi h^2)` in 2-D
/// ([`Wendland::in_dimension`]), so that `W` integrates to one over space or the plane. Its
/// gradient with
/// respect to the first particle is `(x_i - x_j) F(r)` with the scalar factor
/// [`Wendland::gradient_factor`], which needs no division by `r`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wendland {
    h: f64,
    inv_h: f64,
    norm: f64,
    grad_norm: f64,
}

impl Wendland {
    /// The 3-D kernel with smoothing length `h` (support radius `2h`).
    pub fn new(h: f64) -> Self {
        Self::with_norm(h, 21.0 / (16.0 * PI * h * h * h))
    }

    /// The kernel of `dimension` 2 or 3 with smoothing length `h`; `None` for another
    /// dimension.
    pub fn in_dimension(h: f64, dimension: usize) -> Option<Self> {
        match dimension {
            2 => Some(Self::with_norm(h, 7.0 / (4.0 * PI * h * h))),
            3 => Some(Self::new(h)),
            _ => None,
        }
    }

    /// The kernel with smoothing length `h` and normalisation `norm`; the gradient's factor
    /// `-5 a / h^2` follows from `dW/dq = -5 a q (1 - q/2)^3` in any dimension.
    fn with_norm(h: f64, norm: f64) -> Self {
        Self {
            h,
            inv_h: 1.0 / h,
            norm,
            grad_norm: -5.0 * norm / (h * h),
        }
    }

    /// The smoothing length.
    pub fn smoothing_length(&self) -> f64 {
        self.h
    }

    /// The support radius `2h`: the radius of the neighbour search.
    pub fn support(&self) -> f64 {
        2.0 * self.h
    }

    /// The kernel value at distance `r`.
    #[inline]
    pub fn value(&self, r: f64) -> f64 {
        let q = r * self.inv_h;
        if q >= 2.0 {
            return 0.0;
        }
        let t = 1.0 - 0.5 * q;
        let t2 = t * t;
        self.norm * t2 * t2 * (2.0 * q + 1.0)
    }

    /// The factor `F(r)` with `grad_i W(|x_i - x_j|) = (x_i - x_j) F(r)`; it is never
    /// positive, and `dW/dr = r F(r)`.
    #[inline]
    pub fn gradient_factor(&self, r: f64) -> f64 {
        let q = r * self.inv_h;
        if q >= 2.0 {
            return 0.0;
        }
        let t = 1.0 - 0.5 * q;
        self.grad_norm * t * t * t
    }
}

/// The Tait equation of state `p = B ((rho / rho0)^7 - 1)` with `B = rho0 c0^2 / 7`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tait {
    rho0: f64,
    c0: f64,
    b: f64,
}

/// The exponent of the Tait equation of state (water).
pub const TAIT_GAMMA: i32 = 7;

impl Tait {
    /// The equation of state of a fluid with rest density `rho0` and sound speed `c0`.
    pub fn new(rho0: f64, c0: f64) -> Self {
        Self {
            rho0,
            c0,
            b: rho0 * c0 * c0 / f64::from(TAIT_GAMMA),
        }
    }

    /// The rest density.
    pub fn rest_density(&self) -> f64 {
        self.rho0
    }

    /// The sound speed at rest density.
    pub fn sound_speed0(&self) -> f64 {
        self.c0
    }

    /// The stiffness `B = rho0 c0^2 / 7`.
    pub fn stiffness(&self) -> f64 {
        self.b
    }

    /// The pressure at density `rho`.
    #[inline]
    pub fn pressure(&self, rho: f64) -> f64 {
        self.b * ((rho / self.rho0).powi(TAIT_GAMMA) - 1.0)
    }

    /// The density at pressure `p` (the inverse of [`Tait::pressure`]); pressures below
    /// `-B` have no density and give zero.
    #[inline]
    pub fn density(&self, p: f64) -> f64 {
        let base = 1.0 + p / self.b;
        if base <= 0.0 {
            return 0.0;
        }
        self.rho0 * base.powf(1.0 / f64::from(TAIT_GAMMA))
    }

    /// The sound speed at density `rho`: `c0 (rho / rho0)^3`.
    #[inline]
    pub fn sound_speed(&self, rho: f64) -> f64 {
        let s = rho / self.rho0;
        self.c0 * s * s * s
    }
}
