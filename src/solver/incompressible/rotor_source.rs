//! The rotor's momentum sources in the projection method ([`crate::solver::rotor`]): the
//! disk's forces spread onto each velocity component's faces of the staggered grid, divided by
//! the density into accelerations that the predictor adds to `H(u)`. The loads are evaluated
//! each step in the velocity of the step's start, interpolated trilinearly from the faces at
//! the disk's points.
//!
//! The disk's points are fixed, so the interpolation ([`Sampling`]) and the spreading
//! ([`Spreading`]) are tables built once; the CPU applies them here and the CUDA solver
//! applies the same tables on the device (`kernels/rotor_source.cu`).

use super::staggered::{Layout, multilinear_corners};
use crate::case::{CaseSpec, Invalid};
use crate::parallel::SlabLink;
use crate::solver::Grid;
use crate::solver::real::Real;
use crate::solver::rotor::spread::{Points, Spreading, reach_bound};
use crate::solver::rotor::{Coefficients, DiskLoads, DiskPoint, Loading, Rotor};

/// A case's rotor, the width its sources are spread over (case length units: the smoothing
/// in cells times the coarsest spacing) and its points: `radial` rings of `azimuthal`, about
/// two a cell of the finest spacing along the radius and around the tip's circumference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotorSetup {
    pub rotor: Rotor,
    pub width: f64,
    pub radial: usize,
    pub azimuthal: usize,
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
        let fine = grid.spacing[..grid.dim]
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let radial = ((2.0 * (rotor.radius - rotor.root) / fine).ceil() as usize).clamp(8, 4096);
        let azimuthal =
            ((2.0 * std::f64::consts::TAU * rotor.radius / fine).ceil() as usize).clamp(16, 16384);
        let setup = RotorSetup {
            rotor,
            width,
            radial,
            azimuthal,
        };
        // The tables index the ghosted arrays and their entries with 32 bits.
        let entries = setup.table_entries(grid);
        let ghosted: u64 = grid.n[..grid.dim].iter().map(|&n| n as u64 + 3).product();
        if entries.max(ghosted) > u32::MAX as u64 {
            return Err(Invalid::new(
                "rotor.smoothing",
                format!(
                    "the rotor's source tables would hold up to {entries} entries on a grid of {ghosted} faces, past 32-bit indices: use a smaller smoothing or a coarser grid"
                ),
            ));
        }
        Ok(Some(setup))
    }

    /// The disk's points.
    pub fn points(&self) -> Vec<DiskPoint> {
        self.rotor.points(self.radial, self.azimuthal)
    }

    /// The upper bound of the spreading's entries over the three components (each disk point
    /// reaches the grid points of one index box per component).
    pub fn table_entries(&self, grid: &Grid) -> u64 {
        let spacing = std::array::from_fn(|a| {
            if a < grid.dim {
                grid.spacing[a]
            } else {
                f64::INFINITY
            }
        });
        (self.radial * self.azimuthal) as u64 * reach_bound(spacing, self.width) * grid.dim as u64
    }

    /// The bytes of the tables ([`RotorSource`]) at most, with sources of `real` bytes: the
    /// spreading's entries (a point index and a weight each), the sampling's `2^D` corners per
    /// disk point and component and one acceleration array per component of `ghosted` values.
    pub fn table_bytes(&self, grid: &Grid, ghosted: u64, real: u64) -> u64 {
        let points = (self.radial * self.azimuthal) as u64;
        let corners = points * (1 << grid.dim) * grid.dim as u64;
        self.table_entries(grid) * (4 + 8) + corners * (4 + 8) + ghosted * grid.dim as u64 * real
    }

    /// The rotor's coefficients under `loads` (a uniform disk's at unit tip speed).
    pub fn coefficients(&self, loads: &DiskLoads) -> Coefficients {
        let omega = match self.rotor.loading {
            Loading::Blades(b) => b.omega,
            Loading::Uniform { .. } => 1.0 / self.rotor.radius,
        };
        self.rotor.coefficients(loads, omega)
    }

    /// The residual-type numbers of `loads`: thrust, power, mean inflow and figure
    /// of merit.
    pub fn residuals(&self, loads: &DiskLoads) -> [(&'static str, f64); 4] {
        [
            ("rotor_thrust", loads.thrust),
            ("rotor_power", loads.power),
            ("inflow_at_disk", loads.inflow),
            ("figure_of_merit", self.coefficients(loads).figure_of_merit),
        ]
    }

    /// Thrust, torque, power, coefficients and the mean inflow of `loads`, for the summary.
    pub fn summary(&self, loads: &DiskLoads) -> serde_json::Value {
        let c = self.coefficients(loads);
        serde_json::json!({
            "thrust": loads.thrust,
            "torque": loads.torque,
            "power": loads.power,
            "thrust_coefficient": c.thrust,
            "power_coefficient": c.power,
            "figure_of_merit": c.figure_of_merit,
            "inflow_at_disk": loads.inflow,
        })
    }

    /// Whether `other` differs from this setup in its loading only (the tables stay).
    pub fn same_geometry(&self, other: &RotorSetup) -> bool {
        let strip = |s: &RotorSetup| RotorSetup {
            rotor: Rotor {
                loading: Loading::Uniform { thrust: 0.0 },
                ..s.rotor
            },
            ..*s
        };
        strip(self) == strip(other)
    }
}

/// Where one velocity component is read at each disk point: `2^D` corners per point (point
/// major), their indices into the component's ghosted array and their multilinear weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampling {
    pub index: Vec<u32>,
    pub weight: Vec<f64>,
}

/// The sources of one solver: the disk's points, the tables of each component, the
/// accelerations on each component's faces (ghosted, as the velocity) and the last
/// evaluation's loads.
pub struct RotorSource<T> {
    pub setup: RotorSetup,
    pub points: Vec<DiskPoint>,
    pub sampling: Vec<Sampling>,
    /// Scaled by `1 / rho`: accelerations.
    pub spreading: Vec<Spreading>,
    pub accel: Vec<Vec<T>>,
    pub loads: DiskLoads,
    forces: Vec<[f64; 3]>,
    /// On a part of a grid cut into slabs, which part evaluates each disk point.
    part: Option<PointOwners>,
}

/// The parts of a grid cut into slabs ([`crate::parallel`]) that evaluate the disk's points:
/// each point is evaluated by the owner of the cell layer it lies in, whose stored layers
/// (its own and [`crate::parallel::EXTENSION`] beyond) hold the point's interpolation corners.
/// The evaluations are gathered in part order, each part's points in point order.
pub(crate) struct PointOwners {
    link: SlabLink,
    /// The points this part evaluates, in order.
    pub(crate) evaluated: Vec<u32>,
    /// Where each point's evaluation lies among all parts' gathered ones (in evaluations).
    pub(crate) slot: Vec<u32>,
    /// Values each part sends: [`EVALUATION`] a point it evaluates.
    pub(crate) values: Vec<usize>,
}

/// Values a part sends for each disk point it evaluates: the force and the four load shares.
pub(crate) const EVALUATION: usize = 7;

/// An index of the tables, in 32 bits ([`RotorSetup::from_spec`] checks that they fit).
fn narrow(k: usize) -> u32 {
    u32::try_from(k).expect("RotorSetup::from_spec checks the indices")
}

/// The lattice of component `c`'s ghosted array: faces normal to axis `c` at the cell edges,
/// cell centres along the others.
fn lattice<const D: usize>(grid: &Grid, l: &Layout<D>, c: usize) -> Points {
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
}

impl<T: Real> RotorSource<T> {
    /// The sources of `setup` on `grid` (checked by [`RotorSetup::from_spec`]: the disk lies
    /// inside the grid, the tables fit 32-bit indices).
    pub fn new<const D: usize>(setup: RotorSetup, grid: &Grid, l: &Layout<D>) -> Self {
        let points = setup.points();
        let positions: Vec<[f64; 3]> = points.iter().map(|p| p.position).collect();
        let sampling = (0..D)
            .map(|c| {
                let p = lattice(grid, l, c);
                let mut s = Sampling {
                    index: Vec::with_capacity(points.len() << D),
                    weight: Vec::with_capacity(points.len() << D),
                };
                for x in &positions {
                    multilinear_corners::<D>(
                        std::array::from_fn(|a| p.n[a]),
                        std::array::from_fn(|a| p.origin[a]),
                        std::array::from_fn(|a| p.spacing[a]),
                        std::array::from_fn(|a| x[a]),
                        |idx, w| {
                            s.index.push(narrow(l.at(idx)));
                            s.weight.push(w);
                        },
                    );
                }
                s
            })
            .collect();
        let spreading = (0..D)
            .map(|c| {
                let index = |p: [usize; 3]| l.at(std::array::from_fn(|a| p[a]));
                Spreading::new(
                    &positions,
                    &lattice(grid, l, c),
                    setup.width,
                    1.0 / setup.rotor.rho,
                    index,
                )
                .expect("RotorSetup::from_spec keeps the disk inside the domain")
            })
            .collect();
        RotorSource {
            setup,
            forces: vec![[0.0; 3]; points.len()],
            points,
            sampling,
            spreading,
            accel: (0..D).map(|_| vec![T::zero(); l.len()]).collect(),
            loads: DiskLoads::default(),
            part: None,
        }
    }

    /// The sources of part `link` of the grid `grid` (layout `whole`) cut into slabs along its
    /// last axis, on the part's layout `local`: the whole grid's tables (the spreading
    /// normalised over the whole grid's points) with their indices moved into the part's stored
    /// layers and the spreading's rows beyond them dropped. Each disk point is evaluated by one
    /// part and the evaluations are gathered in point order ([`RotorSource::update`]), so every
    /// part's loads, and its sources on its stored faces, are the whole grid's bit for bit.
    pub fn part<const D: usize>(
        setup: RotorSetup,
        grid: &Grid,
        whole: &Layout<D>,
        local: &Layout<D>,
        link: &SlabLink,
    ) -> Self {
        let mut s = Self::new(setup, grid, whole);
        let last = D - 1;
        let shift = link.offset() * whole.stride[last];
        let len = local.len();
        let to_local = |k: usize| k.checked_sub(shift).filter(|&k| k < len);
        let owner: Vec<usize> = s
            .points
            .iter()
            .map(|p| {
                let at = (p.position[last] - grid.origin[last]) / grid.spacing[last];
                let layer = (at.floor().max(0.0) as usize).min(grid.n[last] - 1);
                (0..link.slabs.parts())
                    .find(|&r| link.slabs.owned(r).contains(&layer))
                    .expect("the slabs cover the grid")
            })
            .collect();
        let corners = 1 << D;
        for table in &mut s.sampling {
            for (e, index) in table.index.iter_mut().enumerate() {
                // The corners of the points evaluated elsewhere are never read.
                *index = if owner[e / corners] == link.rank() {
                    let k = to_local(*index as usize)
                        .expect("an evaluated point's corners lie in the part's layers");
                    k as u32
                } else {
                    0
                };
            }
        }
        s.spreading = s.spreading.iter().map(|t| t.restricted(to_local)).collect();
        s.accel = (0..D).map(|_| vec![T::zero(); len]).collect();
        let parts = link.slabs.parts();
        let counts: Vec<usize> = (0..parts)
            .map(|r| owner.iter().filter(|&&o| o == r).count())
            .collect();
        // Each part's next point among all parts' evaluations.
        let mut next: Vec<usize> = counts
            .iter()
            .scan(0, |start, n| {
                let s = *start;
                *start += n;
                Some(s)
            })
            .collect();
        let slot = owner
            .iter()
            .map(|&r| {
                next[r] += 1;
                narrow(next[r] - 1)
            })
            .collect();
        s.part = Some(PointOwners {
            link: link.clone(),
            evaluated: (0..owner.len())
                .filter(|&k| owner[k] == link.rank())
                .map(narrow)
                .collect(),
            slot,
            values: counts.iter().map(|n| n * EVALUATION).collect(),
        });
        s
    }

    /// On a part of a grid cut into slabs, which points it evaluates and where the evaluations
    /// are gathered ([`RotorSource::part`]); `None` on a whole grid.
    pub(crate) fn owners(&self) -> Option<&PointOwners> {
        self.part.as_ref()
    }

    /// The sources of `setup` after `current`: a new loading (collective, speed, thrust) keeps
    /// the tables; a new geometry builds them again with `build`; no setup, no sources.
    pub fn follow(
        current: Option<Self>,
        setup: Option<RotorSetup>,
        build: impl FnOnce(RotorSetup) -> Self,
    ) -> Option<Self> {
        let setup = setup?;
        match current {
            Some(mut r) if r.setup.same_geometry(&setup) => {
                r.setup = setup;
                Some(r)
            }
            _ => Some(build(setup)),
        }
    }

    /// Evaluates the loads in the velocity `vel` and spreads them into
    /// [`RotorSource::accel`]. On a part, each disk point is evaluated by its owner and the
    /// evaluations are gathered from all parts (collective).
    pub fn update<const D: usize>(&mut self, vel: &[Vec<T>; D]) {
        let corners = 1 << D;
        let (mut whole, mut own) = (
            0..self.points.len(),
            self.part
                .iter()
                .flat_map(|p| p.evaluated.iter().map(|&k| k as usize)),
        );
        let evaluated: &mut dyn Iterator<Item = usize> =
            if self.part.is_some() { &mut own } else { &mut whole };
        let mut mine = Vec::with_capacity(self.points.len() * EVALUATION);
        for k in evaluated {
            let p = &self.points[k];
            let v: [f64; 3] = std::array::from_fn(|c| {
                let Some(s) = self.sampling.get(c) else {
                    return 0.0;
                };
                (k * corners..(k + 1) * corners).fold(0.0, |acc, e| {
                    acc + s.weight[e] * vel[c][s.index[e] as usize].f64()
                })
            });
            let load = self.setup.rotor.point_load(p, v);
            mine.extend(load.force.into_iter().chain(load.shares));
        }
        let all = match &self.part {
            None => mine,
            Some(p) => p.gather(&mine),
        };
        let mut sums = [0.0; 4];
        for (force, e) in self.forces.iter_mut().zip(all.chunks_exact(EVALUATION)) {
            *force = [e[0], e[1], e[2]];
            for (s, x) in sums.iter_mut().zip(&e[3..]) {
                *s += x;
            }
        }
        self.loads = self.setup.rotor.totals(sums);
        for (c, (accel, spreading)) in self.accel.iter_mut().zip(&self.spreading).enumerate() {
            spreading.apply(|k| self.forces[k][c], |at, a| accel[at] = T::of(a));
        }
    }
}

impl PointOwners {
    /// Every part's evaluations ([`EVALUATION`] values a point, each part's points in order)
    /// gathered and put in the disk points' order.
    fn gather(&self, mine: &[f64]) -> Vec<f64> {
        let counts: Vec<usize> = self
            .values
            .iter()
            .map(|n| n * std::mem::size_of::<f64>())
            .collect();
        let mut by_part = vec![0.0f64; self.values.iter().sum()];
        self.link.comm.all_gather(
            bytemuck::cast_slice(mine),
            &counts,
            bytemuck::cast_slice_mut(&mut by_part),
        );
        let mut all = Vec::with_capacity(by_part.len());
        for &s in &self.slot {
            let at = s as usize * EVALUATION;
            all.extend_from_slice(&by_part[at..at + EVALUATION]);
        }
        all
    }
}
