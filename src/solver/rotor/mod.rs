//! A rotor that is not meshed: its time-averaged blade forces enter the momentum equations as
//! sources spread over the cells the disk crosses (Rajagopalan & Mathur, J. Am. Helicopter
//! Soc. 38, 1993; Lohry 2010, ch. 5, couples it to SIMPLER for a rotor in hover).
//!
//! The disk is sampled on a polar lattice (`radial` rings from the root cut-out to the tip,
//! `azimuthal` points a ring, [`Rotor::points`]). At each point the loading gives the force
//! per unit disk area on the fluid: a uniform actuator disk `-T / A n`, or the blades' loads
//! ([`blade_element`]) from the local velocity, time-averaged over a revolution by the
//! fraction of the time a blade passes, `N_b / (2 pi r)`: `f = -N_b (T' n - H' e_psi) /
//! (2 pi r)` (`e_psi = n x e_r`, the direction of rotation: the blades push the air down the
//! axis and swirl it with the rotor). Each sample carries its force times its area;
//! [`spread::Spreading`] distributes the samples to the velocity points of the grid so that the sources
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

/// A point of the disk's polar lattice: where it is, the direction of rotation there
/// (`e_psi`), its radius and the disk area it stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskPoint {
    pub position: [f64; 3],
    pub e_psi: [f64; 3],
    pub radius: f64,
    pub area: f64,
}

/// One point's load: its force on the fluid and its shares of the disk's totals, `[thrust,
/// torque, inflow times area, work]` ([`Rotor::totals`] turns their sums into [`DiskLoads`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLoad {
    pub force: [f64; 3],
    pub shares: [f64; 4],
}

/// The disk's totals on the rotor in one evaluation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiskLoads {
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
    pub fn plane(&self) -> ([f64; 3], [f64; 3]) {
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

    /// The disk's points: ring `i` of `radial` at the midpoint radius of its annulus,
    /// `azimuthal` points a ring (the areas sum to [`Rotor::area`]).
    pub fn points(&self, radial: usize, azimuthal: usize) -> Vec<DiskPoint> {
        let (e1, e2) = self.plane();
        let dr = (self.radius - self.root) / radial as f64;
        let dpsi = 2.0 * PI / azimuthal as f64;
        let mut out = Vec::with_capacity(radial * azimuthal);
        for i in 0..radial {
            let (inner, outer) = (self.root + i as f64 * dr, self.root + (i + 1) as f64 * dr);
            let r = 0.5 * (inner + outer);
            let area = 0.5 * (outer * outer - inner * inner) * dpsi;
            for j in 0..azimuthal {
                let (s, c) = ((j as f64 + 0.5) * dpsi).sin_cos();
                let e_r: [f64; 3] = std::array::from_fn(|a| c * e1[a] + s * e2[a]);
                out.push(DiskPoint {
                    position: std::array::from_fn(|a| self.centre[a] + r * e_r[a]),
                    e_psi: cross(self.axis, e_r),
                    radius: r,
                    area,
                });
            }
        }
        out
    }

    /// The load of point `p` in the flow velocity `v` there (module docs): its force on the
    /// fluid and its shares of the disk's totals. `kernels/rotor_source.cu` `point_load` is
    /// the same arithmetic on the device.
    pub fn point_load(&self, p: &DiskPoint, v: [f64; 3]) -> PointLoad {
        let n = self.axis;
        let u_p = -dot(v, n);
        let (thrust, in_plane) = match self.loading {
            Loading::Uniform { thrust } => (thrust / self.area(), 0.0),
            Loading::Blades(b) => {
                let r = p.radius;
                let u_t = b.omega * r - dot(v, p.e_psi);
                let chord = b.chord_at(r, self.root, self.radius);
                let s = b.section(self.rho, chord, b.pitch_at(r, self.radius), u_t, u_p);
                let per_area = b.count as f64 / (2.0 * PI * r);
                (s.thrust * per_area, s.in_plane * per_area)
            }
        };
        let force = std::array::from_fn(|a| p.area * (-thrust * n[a] + in_plane * p.e_psi[a]));
        PointLoad {
            force,
            shares: [
                thrust * p.area,
                in_plane * p.radius * p.area,
                u_p * p.area,
                dot(force, v),
            ],
        }
    }

    /// The disk's totals from the sums of its points' [`PointLoad::shares`].
    pub fn totals(&self, sums: [f64; 4]) -> DiskLoads {
        let [thrust, torque, inflow, work] = sums;
        DiskLoads {
            thrust,
            torque,
            power: match self.loading {
                Loading::Uniform { .. } => work,
                Loading::Blades(b) => b.omega * torque,
            },
            inflow: inflow / self.area(),
        }
    }

    /// The loads of the disk sampled on `radial x azimuthal` points (module docs), the blades'
    /// from the flow velocity `velocity(x)` at each point: every point's force and the totals.
    pub fn loads(
        &self,
        radial: usize,
        azimuthal: usize,
        velocity: impl Fn([f64; 3]) -> [f64; 3],
    ) -> (Vec<Sample>, DiskLoads) {
        let mut sums = [0.0; 4];
        let mut samples = Vec::with_capacity(radial * azimuthal);
        for p in self.points(radial, azimuthal) {
            let load = self.point_load(&p, velocity(p.position));
            for (s, x) in sums.iter_mut().zip(load.shares) {
                *s += x;
            }
            samples.push(Sample {
                position: p.position,
                force: load.force,
            });
        }
        (samples, self.totals(sums))
    }

    /// Where the blades stand at time `time` (started at azimuth 0 at time 0; the loads are
    /// their time average, so this is for drawing): the azimuth `omega t` of the first blade,
    /// the others `2 pi / N_b` apart; none for a uniform disk.
    pub fn blade_azimuths(&self, time: f64) -> Vec<f64> {
        match self.loading {
            Loading::Uniform { .. } => Vec::new(),
            Loading::Blades(b) => (0..b.count)
                .map(|k| (b.omega * time + 2.0 * PI * k as f64 / b.count as f64).rem_euclid(2.0 * PI))
                .collect(),
        }
    }

    /// The point at radius `r` and azimuth `psi` of the disk (`psi` from `e_1` towards `e_2` of
    /// [`Rotor::plane`], the direction of rotation).
    pub fn at(&self, r: f64, psi: f64) -> [f64; 3] {
        let (e1, e2) = self.plane();
        let (s, c) = psi.sin_cos();
        std::array::from_fn(|a| self.centre[a] + r * (c * e1[a] + s * e2[a]))
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
