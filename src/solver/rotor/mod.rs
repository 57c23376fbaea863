//! A rotor that is not meshed: its time-averaged blade forces enter the momentum equations as
//! sources spread over the cells the disk crosses (Rajagopalan & Mathur, J. Am. Helicopter
//! Soc. 38, 1993; Lohry 2010, ch. 5, couples it to SIMPLER for a rotor in hover).
//!
//! The disk is sampled on a polar lattice (`radial` rings from the root cut-out to the tip,
//! `azimuthal` points a ring, [`Rotor::samples`]). At each point the loading gives the force
//! per unit disk area on the fluid: a uniform actuator disk `-T / A n`, or the blades' loads
//! ([`blade_element`]) from the local velocity, time-averaged over a revolution by the
//! fraction of the time a blade passes, `N_b / (2 pi r)`: `f = -N_b (T' n - H' e_psi) /
//! (2 pi r)` (`e_psi = n x e_r`, the direction of rotation: the blades push the air down the
//! axis and swirl it with the rotor). Each sample carries its force times its area;
//! [`spread`] distributes the samples to the velocity points of the grid so that the sources
//! sum to the disk's force exactly.

pub mod blade_element;
pub mod spread;

use blade_element::Blades;
use std::f64::consts::PI;

/// What loads the disk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Loading {
    /// A uniformly loaded actuator disk carrying `thrust` along the axis (momentum theory).
    Uniform { thrust: f64 },
    /// Blade elements in the local flow.
    Blades(Blades),
}

/// The rotor: a disk of `radius` about `centre`, normal `axis` (the thrust's direction, a unit
/// vector), loaded from `root` (the root cut-out radius) to the tip, in fluid of density `rho`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rotor {
    pub centre: [f64; 3],
    pub axis: [f64; 3],
    pub radius: f64,
    pub root: f64,
    pub rho: f64,
    pub loading: Loading,
}

/// A point of the disk and the force on the fluid it stands for (its area times the force per
/// unit area).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub position: [f64; 3],
    pub force: [f64; 3],
}

/// The disk's loads in one evaluation: the samples and their totals on the rotor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskLoads {
    pub samples: Vec<Sample>,
    /// Along the axis, on the rotor [force].
    pub thrust: f64,
    /// About the axis, against the rotation [force x length]; 0 for a uniform disk.
    pub torque: f64,
    /// The power the rotor gives the fluid: the shaft power `omega Q` of blades; the work of
    /// a uniform disk's force on the flow through it, `sum f . v dA` (momentum theory's `T v_i`).
    pub power: f64,
    /// The mean inflow through the disk, `-v . n` averaged over its area.
    pub inflow: f64,
}

/// The rotor's coefficients and figure of merit (Leishman ch. 2): `C_T = T / (rho A (omega
/// R)^2)`, `C_P = P / (rho A (omega R)^3)`, `FM = C_T^{3/2} / (sqrt 2 C_P)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coefficients {
    pub thrust: f64,
    pub power: f64,
    pub figure_of_merit: f64,
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

impl Rotor {
    /// The loaded area `pi (R^2 - r_root^2)`.
    pub fn area(&self) -> f64 {
        PI * (self.radius * self.radius - self.root * self.root)
    }

    /// Two unit vectors spanning the disk, `e_1 x e_2 = n`.
    fn plane(&self) -> ([f64; 3], [f64; 3]) {
        let n = self.axis;
        // The coordinate axis least aligned with n, made orthogonal to it.
        let k = (0..3)
            .min_by(|&a, &b| n[a].abs().total_cmp(&n[b].abs()))
            .expect("three axes");
        let mut e = [0.0; 3];
        e[k] = 1.0;
        let d = dot(e, n);
        let e1 = std::array::from_fn(|a| e[a] - d * n[a]);
        let len = dot(e1, e1).sqrt();
        let e1 = e1.map(|x| x / len);
        (e1, cross(n, e1))
    }

    /// The disk's sample points: ring `i` of `radial` at the midpoint radius of its annulus,
    /// `azimuthal` points a ring; each with its position, its radial and azimuthal unit
    /// vectors and its area (the areas sum to [`Rotor::area`]).
    fn lattice(
        &self,
        radial: usize,
        azimuthal: usize,
    ) -> impl Iterator<Item = ([f64; 3], [f64; 3], [f64; 3], f64, f64)> + '_ {
        let (e1, e2) = self.plane();
        let dr = (self.radius - self.root) / radial as f64;
        let dpsi = 2.0 * PI / azimuthal as f64;
        (0..radial).flat_map(move |i| {
            let (inner, outer) = (self.root + i as f64 * dr, self.root + (i + 1) as f64 * dr);
            let r = 0.5 * (inner + outer);
            let area = 0.5 * (outer * outer - inner * inner) * dpsi;
            (0..azimuthal).map(move |j| {
                let (s, c) = ((j as f64 + 0.5) * dpsi).sin_cos();
                let e_r: [f64; 3] = std::array::from_fn(|a| c * e1[a] + s * e2[a]);
                let e_psi = cross(self.axis, e_r);
                let position = std::array::from_fn(|a| self.centre[a] + r * e_r[a]);
                (position, e_r, e_psi, r, area)
            })
        })
    }

    /// The loads of the disk sampled on `radial x azimuthal` points (module docs), the blades'
    /// from the flow velocity `velocity(x)` at each point.
    pub fn loads(
        &self,
        radial: usize,
        azimuthal: usize,
        velocity: impl Fn([f64; 3]) -> [f64; 3],
    ) -> DiskLoads {
        let n = self.axis;
        let mut out = DiskLoads {
            samples: Vec::with_capacity(radial * azimuthal),
            ..DiskLoads::default()
        };
        let (mut inflow, mut work) = (0.0, 0.0);
        for (position, _, e_psi, r, area) in self.lattice(radial, azimuthal) {
            let v = velocity(position);
            let u_p = -dot(v, n);
            inflow += u_p * area;
            let (thrust, in_plane) = match self.loading {
                Loading::Uniform { thrust } => (thrust / self.area(), 0.0),
                Loading::Blades(b) => {
                    let u_t = b.omega * r - dot(v, e_psi);
                    let chord = b.chord_at(r, self.root, self.radius);
                    let s = b.section(self.rho, chord, b.pitch_at(r, self.radius), u_t, u_p);
                    let per_area = b.count as f64 / (2.0 * PI * r);
                    (s.thrust * per_area, s.in_plane * per_area)
                }
            };
            out.thrust += thrust * area;
            out.torque += in_plane * r * area;
            let force = std::array::from_fn(|a| area * (-thrust * n[a] + in_plane * e_psi[a]));
            work += dot(force, v);
            out.samples.push(Sample { position, force });
        }
        out.inflow = inflow / self.area();
        out.power = match self.loading {
            Loading::Uniform { .. } => work,
            Loading::Blades(b) => b.omega * out.torque,
        };
        out
    }

    /// The coefficients of `loads` for a rotor turning at `omega` (the disk area `pi R^2`).
    pub fn coefficients(&self, loads: &DiskLoads, omega: f64) -> Coefficients {
        let area = PI * self.radius * self.radius;
        let tip = omega * self.radius;
        let thrust = loads.thrust / (self.rho * area * tip * tip);
        let power = loads.power / (self.rho * area * tip * tip * tip);
        Coefficients {
            thrust,
            power,
            figure_of_merit: thrust.max(0.0).powf(1.5) / (2f64.sqrt() * power),
        }
    }
}

#[cfg(test)]
mod tests;
