//! Blade-element aerodynamics of a rotor blade section and the momentum-theory results it is
//! checked against (Leishman, *Principles of Helicopter Aerodynamics*, 2nd ed., ch. 2-3).
//!
//! A section at radius `r` of a blade turning at `omega` [rad/s] about the rotor axis `n` meets
//! the air at `U_T = omega r - v . e_psi` (in-plane, into the leading edge) and
//! `U_P = -v . n` (through the disk against the thrust), `v` the local flow velocity. The
//! inflow angle is `phi = atan2(U_P, U_T)`, the angle of attack `alpha = theta(r) - phi`, and
//! per unit span the lift `L = rho U^2 c c_l(alpha) / 2` and drag `D = rho U^2 c c_d(alpha) / 2`
//! (`U^2 = U_T^2 + U_P^2`, no small-angle approximation) give the blade's thrust and in-plane
//! force per unit span, `T' = L cos(phi) - D sin(phi)` and `H' = L sin(phi) + D cos(phi)`
//! (its torque per span `r H'`). Angles in radians, lengths and speeds in case units.

/// A section's aerofoil: linear lift `c_l = a (alpha - alpha_0)` (no stall) and the drag polar
/// `c_d = c_d0 + c_d1 alpha + c_d2 alpha^2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Airfoil {
    /// Lift slope `a` [1/rad] (thin aerofoil: 2 pi).
    pub lift_slope: f64,
    /// Zero-lift angle `alpha_0` [rad].
    pub zero_lift_angle: f64,
    /// `[c_d0, c_d1, c_d2]`.
    pub drag: [f64; 3],
}

impl Airfoil {
    pub fn lift(&self, alpha: f64) -> f64 {
        self.lift_slope * (alpha - self.zero_lift_angle)
    }

    pub fn drag(&self, alpha: f64) -> f64 {
        let [d0, d1, d2] = self.drag;
        d0 + alpha * (d1 + alpha * d2)
    }
}

/// The blades of a rotor of radius `radius`: chord linear from the root cut-out to the tip,
/// pitch linear in radius, `theta(r) = collective + twist (r / R - 3/4)` (the collective is
/// the pitch at three quarters of the radius, `theta_0.75`; the twist is the change from axis
/// to tip, negative for wash-out).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blades {
    pub count: u32,
    /// Chord at the root cut-out and at the tip.
    pub chord: [f64; 2],
    /// Linear twist `theta_tw` [rad].
    pub twist: f64,
    /// Collective pitch `theta_0.75` [rad].
    pub collective: f64,
    /// Rotational speed `omega` [rad/s], right-handed about the rotor's axis.
    pub omega: f64,
    pub airfoil: Airfoil,
}

/// A section's loads per unit span of one blade.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SectionLoad {
    /// Along the rotor axis, on the blade [force / length].
    pub thrust: f64,
    /// In the disk plane against the rotation, on the blade [force / length].
    pub in_plane: f64,
    /// Angle of attack [rad].
    pub alpha: f64,
}

impl Blades {
    /// The chord at radius `r` of a rotor from `root` to `radius`.
    pub fn chord_at(&self, r: f64, root: f64, radius: f64) -> f64 {
        let s = ((r - root) / (radius - root)).clamp(0.0, 1.0);
        self.chord[0] + s * (self.chord[1] - self.chord[0])
    }

    /// The pitch `theta(r)` of a rotor of radius `radius`.
    pub fn pitch_at(&self, r: f64, radius: f64) -> f64 {
        self.collective + self.twist * (r / radius - 0.75)
    }

    /// The loads of a section of chord `chord` and pitch `pitch` meeting the air at `u_t`
    /// (in-plane) and `u_p` (through the disk), in air of density `rho` (module docs).
    pub fn section(&self, rho: f64, chord: f64, pitch: f64, u_t: f64, u_p: f64) -> SectionLoad {
        let phi = u_p.atan2(u_t);
        let alpha = pitch - phi;
        let q = 0.5 * rho * (u_t * u_t + u_p * u_p) * chord;
        let (lift, drag) = (q * self.airfoil.lift(alpha), q * self.airfoil.drag(alpha));
        let (s, c) = phi.sin_cos();
        SectionLoad {
            thrust: lift * c - drag * s,
            in_plane: lift * s + drag * c,
            alpha,
        }
    }

    /// Solidity `sigma = N_b c / (pi R)` of a constant chord `c`; for a taper, the thrust-weighted
    /// chord `3 int c r^2 dr / R^3` over the blade.
    pub fn solidity(&self, root: f64, radius: f64) -> f64 {
        let n = 256;
        let dr = (radius - root) / n as f64;
        let weighted: f64 = (0..n)
            .map(|i| {
                let r = root + (i as f64 + 0.5) * dr;
                self.chord_at(r, root, radius) * r * r * dr
            })
            .sum();
        self.count as f64 * 3.0 * weighted / radius.powi(3) / (std::f64::consts::PI * radius)
    }
}

/// Hover by momentum theory with uniform inflow and blade-element thrust (Leishman eq. 3.60
/// with `lambda = sqrt(C_T / 2)`): `C_T = (sigma a / 2) (theta_0.75 / 3 - lambda / 2)` solved
/// with `C_T = 2 lambda^2`, a quadratic in `lambda`. Returns `(C_T, lambda)`; constant chord,
/// linear twist, no root cut-out, no tip loss, small angles.
pub fn hover_thrust_coefficient(solidity: f64, lift_slope: f64, collective: f64) -> (f64, f64) {
    // 2 lambda^2 + (sigma a / 4) lambda - sigma a theta / 6 = 0.
    let (b, c) = (
        solidity * lift_slope / 4.0,
        solidity * lift_slope * collective / 6.0,
    );
    let lambda = (-b + (b * b + 8.0 * c).sqrt()) / 4.0;
    (2.0 * lambda * lambda, lambda)
}

/// The ideal induced velocity of a disk of area `area` carrying thrust `thrust` in fluid of
/// density `rho`, `v_i = sqrt(T / (2 rho A))` (Leishman eq. 2.14).
pub fn induced_velocity(thrust: f64, rho: f64, area: f64) -> f64 {
    (thrust / (2.0 * rho * area)).sqrt()
}
