//! The rotor's momentum sources in the projection method ([`crate::solver::rotor`]): the
//! disk's forces spread onto each velocity component's faces of the staggered grid, divided by
//! the density into accelerations that the predictor adds to `H(u)`. A uniform disk's sources
//! are made once; blade elements are evaluated each step in the velocity of the step's start,
//! interpolated trilinearly from the faces at the disk's sample points.

use super::staggered::{Layout, multilinear};
use crate::case::{CaseSpec, Invalid};
use crate::solver::Grid;
use crate::solver::real::Real;
use crate::solver::rotor::spread::{Points, spread};
use crate::solver::rotor::{Coefficients, DiskLoads, Loading, Rotor};

/// A case's rotor and the width its sources are spread over (case length units): the
/// smoothing in cells times the coarsest spacing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotorSetup {
    pub rotor: Rotor,
    pub width: f64,
}

impl RotorSetup {
    /// The `[rotor]` of `spec` on `grid` with fluid density `density`; the disk and the reach
    /// of its sources (three widths) must lie inside the domain.
    pub fn from_spec(spec: &CaseSpec, grid: &Grid, density: f64) -> Result<Option<RotorSetup>, Invalid> {
        let Some(r) = &spec.rotor else {
            return Ok(None);
        };
        let rotor = r.rotor(grid.dim, density)?;
        // The coarsest spacing: every sample then has grid points within its reach.
        let h = grid.spacing[..grid.dim].iter().copied().fold(0.0, f64::max);
        if rotor.radius < 2.0 * h {
            return Err(Invalid::new(
                "rotor.radius",
                format!(
                    "the disk (radius {}) must span at least 2 cells of the grid's coarsest spacing ({h:.4})",
                    rotor.radius
                ),
            ));
        }
        let width = r.smoothing_cells()? * h;
        // The disk's extent along each axis: R sqrt(1 - n_a^2) in its plane, plus the reach.
        for a in 0..3 {
            let half = rotor.radius * (1.0 - rotor.axis[a] * rotor.axis[a]).max(0.0).sqrt() + 3.0 * width;
            let (lo, hi) = (grid.origin[a], grid.origin[a] + grid.extent(a));
            if rotor.centre[a] - half < lo || rotor.centre[a] + half > hi {
                return Err(Invalid::new(
                    "rotor.centre",
                    format!(
                        "the disk and its sources (radius {} plus 3 smoothing widths, {:.4}) must lie inside the domain; along axis {a} they reach [{:.4}, {:.4}] of [{lo}, {hi}]",
                        rotor.radius,
                        3.0 * width,
                        rotor.centre[a] - half,
                        rotor.centre[a] + half
                    ),
                ));
            }
        }
        Ok(Some(RotorSetup { rotor, width }))
    }
}

/// The sources of one solver: the accelerations on each component's faces (ghosted, as the
/// velocity) and the last evaluation's loads.
pub struct RotorSource<T> {
    pub setup: RotorSetup,
    radial: usize,
    azimuthal: usize,
    /// Per component, in the layout of that component's ghosted array.
    pub accel: Vec<Vec<T>>,
    pub loads: DiskLoads,
    evaluated: bool,
}

impl<T: Real> RotorSource<T> {
    /// Sources of `setup` on `grid`: the disk sampled at about two points a cell along the
    /// radius and around the tip's circumference.
    pub fn new<const D: usize>(setup: RotorSetup, grid: &Grid, l: &Layout<D>) -> Self {
        let h = grid.spacing[..D].iter().copied().fold(f64::INFINITY, f64::min);
        let r = &setup.rotor;
        let radial = ((2.0 * (r.radius - r.root) / h).ceil() as usize).clamp(8, 4096);
        let azimuthal = ((2.0 * std::f64::consts::TAU * r.radius / h).ceil() as usize).clamp(16, 16384);
        RotorSource {
            setup,
            radial,
            azimuthal,
            accel: (0..D).map(|_| vec![T::zero(); l.len()]).collect(),
            loads: DiskLoads::default(),
            evaluated: false,
        }
    }

    /// Evaluates the loads in the velocity `vel` and spreads them into
    /// [`RotorSource::accel`] (a uniform disk's once: its loads do not depend on the flow, only
    /// its inflow is measured again).
    pub fn update<const D: usize>(&mut self, vel: &[Vec<T>; D], grid: &Grid, l: &Layout<D>) {
        let uniform = matches!(self.setup.rotor.loading, Loading::Uniform { .. });
        let lattice = |c: usize| -> Points {
            let mut p = Points {
                origin: [0.0; 3],
                spacing: [1.0; 3],
                n: [1; 3],
            };
            for a in 0..D {
                let shift = if a == c { 0.0 } else { 0.5 };
                p.origin[a] = grid.origin[a] - shift * grid.spacing[a];
                p.spacing[a] = grid.spacing[a];
                p.n[a] = l.n[a] + 2;
            }
            p
        };
        let velocity = |x: [f64; 3]| -> [f64; 3] {
            std::array::from_fn(|c| {
                if c >= D {
                    return 0.0;
                }
                let p = lattice(c);
                multilinear::<D>(
                    std::array::from_fn(|a| p.n[a]),
                    std::array::from_fn(|a| p.origin[a]),
                    std::array::from_fn(|a| p.spacing[a]),
                    |idx| vel[c][l.at(idx)].f64(),
                    std::array::from_fn(|a| x[a]),
                )
            })
        };
        self.loads = self.setup.rotor.loads(self.radial, self.azimuthal, velocity);
        if uniform && self.evaluated {
            return;
        }
        let rho = self.setup.rotor.rho;
        let mut force = Vec::new();
        for (c, accel) in self.accel.iter_mut().enumerate() {
            force.clear();
            force.resize(accel.len(), 0.0);
            spread(&self.loads.samples, &lattice(c), c, self.setup.width, &mut force)
                .expect("the case check keeps the disk inside the domain");
            for (a, f) in accel.iter_mut().zip(&force) {
                *a = T::of(f / rho);
            }
        }
        self.evaluated = true;
    }

    /// The rotor's coefficients (a uniform disk's at unit tip speed).
    pub fn coefficients(&self) -> Coefficients {
        let omega = match self.setup.rotor.loading {
            Loading::Blades(b) => b.omega,
            Loading::Uniform { .. } => 1.0 / self.setup.rotor.radius,
        };
        self.setup.rotor.coefficients(&self.loads, omega)
    }

    /// Thrust, torque, power, coefficients and the mean inflow, for the summary.
    pub fn summary(&self) -> serde_json::Value {
        let c = self.coefficients();
        serde_json::json!({
            "thrust": self.loads.thrust,
            "torque": self.loads.torque,
            "power": self.loads.power,
            "thrust_coefficient": c.thrust,
            "power_coefficient": c.power,
            "figure_of_merit": c.figure_of_merit,
            "inflow_at_disk": self.loads.inflow,
        })
    }
}
