//! The smoothing kernel and the equation of state against their definitions.

use hhg_sph::{Tait, Wendland};

/// The Wendland kernel integrates to one over space (Simpson's rule over the support).
#[test]
fn wendland_integrates_to_one() {
    for h in [0.01, 0.5, 2.0] {
        let kernel = Wendland::new(h);
        let n = 2000;
        let step = kernel.support() / f64::from(n);
        let mut integral = 0.0;
        for k in 0..=n {
            let r = f64::from(k) * step;
            let weight = if k == 0 || k == n {
                1.0
            } else if k % 2 == 1 {
                4.0
            } else {
                2.0
            };
            integral += weight * 4.0 * std::f64::consts::PI * r * r * kernel.value(r);
        }
        integral *= step / 3.0;
        assert!((integral - 1.0).abs() < 1e-9, "h = {h}: {integral}");
        assert_eq!(kernel.value(kernel.support()), 0.0);
        assert_eq!(kernel.value(3.0 * h), 0.0);
    }
}

/// `r F(r)` is the derivative of the kernel (central differences), and `F` is never positive.
#[test]
fn wendland_gradient_is_the_derivative() {
    let kernel = Wendland::new(0.1);
    for k in 1..40 {
        let r = 0.005 * f64::from(k);
        let e = 1e-7;
        let numeric = (kernel.value(r + e) - kernel.value(r - e)) / (2.0 * e);
        let analytic = r * kernel.gradient_factor(r);
        assert!(
            (numeric - analytic).abs() <= 1e-5 * analytic.abs().max(1.0),
            "r = {r}: {numeric} against {analytic}"
        );
        assert!(kernel.gradient_factor(r) <= 0.0);
    }
}

/// The Tait equation: zero pressure at rest, its inverse, and the sound speed.
#[test]
fn tait_density_inverts_pressure() {
    let eos = Tait::new(1000.0, 10.0);
    assert_eq!(eos.pressure(1000.0), 0.0);
    assert_eq!(eos.stiffness(), 1000.0 * 100.0 / 7.0);
    for rho in [980.0, 999.0, 1000.0, 1003.0, 1050.0] {
        let back = eos.density(eos.pressure(rho));
        assert!((back - rho).abs() < 1e-9 * rho, "{rho} -> {back}");
        // c^2 = dp/drho.
        let e = 1e-4;
        let c2 = (eos.pressure(rho + e) - eos.pressure(rho - e)) / (2.0 * e);
        let c = eos.sound_speed(rho);
        assert!(
            (c * c - c2).abs() < 1e-6 * c2,
            "{rho}: {c2} against {}",
            c * c
        );
    }
    assert_eq!(eos.density(-2.0 * eos.stiffness()), 0.0);
}
