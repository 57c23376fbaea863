//! Compressible flow: the Euler equations of an ideal gas (ratio of specific heats
//! `physics.gamma`) in 1D and 2D on uniform grids,
//! `U_t + F(U)_x + G(U)_y = 0`, `U = [rho, rho u, rho v, E]`,
//! solved by the finite-volume MUSCL-Hancock scheme with a choice of Riemann solvers
//! ([`muscl_hancock`], [`riemann`]) or by the CE/SE scheme ([`cese`]). The exact Riemann solver
//! is public ([`exact_riemann`]).
//!
//! Time step: `dt = cfl / max over cells of max_d (|u_d| + c) / dx_d`, recomputed every step and
//! capped by [`Solver::set_dt_cap`] (the runner lands on output times that way). A step that leaves a cell with `rho <= 0` or
//! `p <= 0` (or a non-finite value) stops the run with [`SolverError::Diverged`].

mod boundary;
pub mod cese;
pub mod config;
mod cuda;
pub mod exact_riemann;
mod initial;
mod layout;
pub mod muscl_hancock;
pub mod riemann;
pub mod state;

pub use config::Config;
pub use cuda::CudaEuler;

use crate::backend::cpu::{ordered_sum, par_max};
use crate::case::{CaseSpec, Invalid, Kind, Method, Precision};
use crate::solver::real::Real;
use crate::solver::{Snapshot, Solver, SolverError, SolverInfo, check_transfer};
use cese::Cese;
use layout::Layout;
use muscl_hancock::{MusclHancock, Settings};
use rayon::prelude::*;
use serde_json::{Map, Value, json};
use state::{Q, admissible, conserved, from_soa, primitive, sound_speed, to_soa};

/// Fields of 1D cases.
pub const FIELDS_1D: &[&str] = &["rho", "u", "p", "e", "mach"];
/// Fields of 2D cases (`schlieren` is `|grad rho|` by central differences).
pub const FIELDS_2D: &[&str] = &["rho", "u", "v", "p", "mach", "e", "schlieren"];

/// Builds the compressible solver of a case in the precision it asks for.
pub fn build(spec: &CaseSpec) -> Result<Box<dyn Solver>, Invalid> {
    let cfg = Config::from_spec(spec)?;
    Ok(match cfg.precision {
        Precision::F64 => Box::new(Euler::<f64>::new(cfg)),
        Precision::F32 => Box::new(Euler::<f32>::new(cfg)),
    })
}

/// Builds the compressible solver of a case on the CUDA device ([`CudaEuler`]); a device failure
/// is an error naming `solver.backend`.
pub fn build_cuda(spec: &CaseSpec, device: usize) -> Result<Box<dyn Solver>, Invalid> {
    let cfg = Config::from_spec(spec)?;
    if let Some(e) = cuda::unsupported(&cfg) {
        return Err(e);
    }
    let failed = |e: crate::backend::cuda::CudaError| Invalid::new("solver.backend", format!("CUDA: {e}"));
    Ok(match cfg.precision {
        Precision::F64 => Box::new(CudaEuler::<f64>::new(cfg, device).map_err(failed)?),
        Precision::F32 => Box::new(CudaEuler::<f32>::new(cfg, device).map_err(failed)?),
    })
}

/// The size of the next step, `cfl / rate` capped by `dt_cap`, from the largest wave rate
/// `max_d (|u_d| + c) / dx_d`; a rate that is not finite and positive stops the run.
fn time_step(cfg: &Config, rate: f64, dt_cap: f64, step: u64, time: f64) -> Result<f64, SolverError> {
    if !(rate.is_finite() && rate > 0.0) {
        return Err(SolverError::Diverged {
            step,
            time,
            message: format!("the wave speed is {rate}; {}", divergence_hint(cfg)),
        });
    }
    Ok((cfg.cfl / rate).min(dt_cap))
}

/// What to change when a run of `cfg`'s scheme diverges: the settings that scheme has.
fn divergence_hint(cfg: &Config) -> String {
    match cfg.method {
        Method::Cese => format!(
            "lower solver.cfl (now {}) or raise solver.alpha (now {}; a larger alpha weights the \
             smaller one-sided derivative more, damping oscillations at discontinuities)",
            cfg.cfl, cfg.alpha
        ),
        _ => format!(
            "lower solver.cfl (now {}), use a more diffusive limiter (minmod or none) or Riemann \
             solver (hll, rusanov)",
            cfg.cfl
        ),
    }
}

enum Scheme<T> {
    Muscl(MusclHancock<T>),
    Cese(Cese<T>),
}

/// A compressible solver: the conserved state on a padded cell array and one scheme.
pub struct Euler<T: Real> {
    cfg: Config,
    l: Layout,
    /// Conserved variables, padded layout ([`layout`]).
    u: Vec<Q<T>>,
    /// Solid-cell mask on the padded layout.
    solid: Vec<bool>,
    /// The scheme's work arrays, allocated at the first step (a mirror of a GPU solver never
    /// steps).
    scheme: Option<Scheme<T>>,
    time: f64,
    steps: u64,
    /// Upper bound on the next steps' size ([`Solver::set_dt_cap`]).
    dt_cap: f64,
    dt: f64,
    totals_start: [f64; 4],
    residuals: Vec<(&'static str, f64)>,
}

impl<T: Real> Euler<T> {
    pub fn new(cfg: Config) -> Self {
        let grid = cfg.grid;
        let ghosts = match cfg.method {
            Method::Cese => cese::GHOSTS,
            _ => muscl_hancock::GHOSTS,
        };
        let l = Layout::new(cfg.dim, [grid.n[0], grid.n[1]], ghosts);
        let g = T::of(cfg.gamma);
        let centre = |k: usize| {
            let c = l.ij(k);
            [
                grid.origin[0] + (c[0] as f64 + 0.5) * grid.spacing[0],
                grid.origin[1] + (c[1] as f64 + 0.5) * grid.spacing[1],
            ]
        };
        let u = (0..l.len())
            .map(|k| {
                conserved(
                    g,
                    initial::initial_state(&cfg.initial, &grid, centre(k)).map(T::of),
                )
            })
            .collect();
        let solid = (0..l.len())
            .map(|k| {
                let x = centre(k);
                cfg.solid
                    .iter()
                    .any(|b| (0..2).all(|a| x[a] >= b.min[a] && x[a] <= b.max[a]))
            })
            .collect();
        let mut s = Self {
            cfg,
            l,
            u,
            solid,
            scheme: None,
            time: 0.0,
            steps: 0,
            dt_cap: f64::INFINITY,
            dt: 0.0,
            totals_start: [0.0; 4],
            residuals: vec![
                ("max_wave_rate", 0.0),
                ("min_density", 0.0),
                ("min_pressure", 0.0),
            ],
        };
        s.totals_start = s.totals();
        s
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    fn fluid(&self, k: usize) -> bool {
        !self.solid[k]
    }

    /// Mass, x and y momentum, energy over the fluid cells (times the cell volume); summed row
    /// by row in order, so the result does not depend on the thread count.
    pub fn totals(&self) -> [f64; 4] {
        let mut partial = vec![T::zero(); self.l.n[1]];
        let vol = self.cfg.grid.spacing[..self.cfg.dim].iter().product::<f64>();
        let mut out = [0.0; 4];
        for (c, o) in out.iter_mut().enumerate() {
            let (l, u, solid) = (&self.l, &self.u, &self.solid);
            let s = ordered_sum(&mut partial, |j| {
                (0..l.n[0] as isize)
                    .map(|i| l.at(i, j as isize))
                    .filter(|&k| !solid[k])
                    .fold(T::zero(), |a, k| a + u[k][c])
            });
            *o = s.f64() * vol;
        }
        out
    }

    /// Largest `max_d (|u_d| + c) / dx_d` over the fluid cells.
    fn wave_rate(&self) -> f64 {
        let (l, u, g) = (&self.l, &self.u, T::of(self.cfg.gamma));
        let inv = [
            T::of(1.0 / self.cfg.grid.spacing[0]),
            T::of(1.0 / self.cfg.grid.spacing[1]),
        ];
        let dim = self.cfg.dim;
        par_max(l.n[1], |j| {
            (0..l.n[0] as isize).fold(T::zero(), |m, i| {
                let k = l.at(i, j as isize);
                if !self.fluid(k) {
                    return m;
                }
                let w = primitive(g, u[k]);
                let c = sound_speed(g, w[0], w[3]);
                (0..dim).fold(m, |m, d| {
                    let r = ((w[1 + d]).abs() + c) * inv[d];
                    if r > m || r.is_nan() { r } else { m }
                })
            })
        })
        .f64()
    }

    /// Primitive state of interior cell `(i, j)`.
    fn prim(&self, i: usize, j: usize) -> Q<T> {
        primitive(T::of(self.cfg.gamma), self.u[self.l.at(i as isize, j as isize)])
    }

    /// Position of interior cell `(i, j)`, for messages.
    fn describe(&self, i: usize, j: usize) -> String {
        let g = &self.cfg.grid;
        if self.cfg.dim == 1 {
            format!("cell {i} (x = {:.6})", g.centre(0, i))
        } else {
            format!(
                "cell ({i}, {j}) (x = {:.6}, y = {:.6})",
                g.centre(0, i),
                g.centre(1, j)
            )
        }
    }

    /// The first inadmissible fluid cell, row-major order.
    fn check_state(&mut self) -> Result<(), SolverError> {
        let (l, g) = (self.l, T::of(self.cfg.gamma));
        let bad = (0..l.n[0] * l.n[1]).into_par_iter().find_first(|&c| {
            let k = l.at((c % l.n[0]) as isize, (c / l.n[0]) as isize);
            self.fluid(k) && !admissible(primitive(g, self.u[k]))
        });
        let (u, solid) = (&self.u, &self.solid);
        let lowest = |c: usize| {
            -par_max(l.n[1], |j| {
                (0..l.n[0] as isize).fold(T::neg_infinity(), |m, i| {
                    let k = l.at(i, j as isize);
                    if solid[k] {
                        m
                    } else {
                        m.max(-primitive(g, u[k])[c])
                    }
                })
            })
            .f64()
        };
        self.residuals[1].1 = lowest(0);
        self.residuals[2].1 = lowest(3);
        if let Some(c) = bad {
            let (i, j) = (c % l.n[0], c / l.n[0]);
            let w = self.prim(i, j);
            let (rho, p) = (w[0].f64(), w[3].f64());
            // The minima skip NaN: a NaN in the offending cell is the value to report.
            for (r, v) in [(1, rho), (2, p)] {
                if v.is_nan() || v < self.residuals[r].1 {
                    self.residuals[r].1 = v;
                }
            }
            return Err(SolverError::Diverged {
                step: self.steps,
                time: self.time,
                message: format!(
                    "negative or non-finite density/pressure in {}: rho = {rho:e}, p = {p:e}; {}",
                    self.describe(i, j),
                    divergence_hint(&self.cfg)
                ),
            });
        }
        Ok(())
    }

    /// Value of field `name` at interior cell `(i, j)`.
    fn cell_value(&self, name: &str, i: usize, j: usize) -> Option<f64> {
        let gm = self.cfg.gamma;
        let w = self.prim(i, j).map(|x| x.f64());
        let two_d = self.cfg.dim == 2;
        Some(match name {
            "rho" => w[0],
            "u" => w[1],
            "v" if two_d => w[2],
            "p" => w[3],
            "e" => w[3] / ((gm - 1.0) * w[0]),
            "mach" => w[1].hypot(w[2]) / (gm * w[3] / w[0]).sqrt(),
            "schlieren" if two_d => {
                let [nx, ny] = self.l.n;
                let grad = |d: usize, lo: (usize, usize), hi: (usize, usize)| {
                    let span = if d == 0 { hi.0 - lo.0 } else { hi.1 - lo.1 };
                    (self.prim(hi.0, hi.1)[0] - self.prim(lo.0, lo.1)[0]).f64()
                        / (span as f64 * self.cfg.grid.spacing[d])
                };
                let gx = grad(0, (i.saturating_sub(1), j), ((i + 1).min(nx - 1), j));
                let gy = grad(1, (i, j.saturating_sub(1)), (i, (j + 1).min(ny - 1)));
                gx.hypot(gy)
            }
            _ => return None,
        })
    }

    /// Exact primitive state at interior cell `i` of a 1D case, if one exists.
    fn exact_cell(&self, i: usize) -> Option<[f64; 4]> {
        if self.cfg.dim != 1 {
            return None;
        }
        let x = [self.cfg.grid.centre(0, i), 0.0];
        initial::exact_state(&self.cfg.initial, &self.cfg.grid, x, self.time, self.cfg.gamma)
    }
}

impl<T: Real> Solver for Euler<T> {
    fn info(&self) -> SolverInfo {
        SolverInfo {
            kind: Kind::Compressible,
            method: self.cfg.method.name(),
            backend: "cpu",
            precision: T::NAME,
            grid: self.cfg.grid,
        }
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn step(&mut self) -> Result<(), SolverError> {
        let rate = self.wave_rate();
        let dt = time_step(&self.cfg, rate, self.dt_cap, self.steps, self.time)?;
        let (l, g) = (self.l, T::of(self.cfg.gamma));
        let h = [self.cfg.grid.spacing[0], self.cfg.grid.spacing[1]];
        let method = self.cfg.method;
        let scheme = self.scheme.get_or_insert_with(|| match method {
            Method::Cese => Scheme::Cese(Cese::new(&l)),
            _ => Scheme::Muscl(MusclHancock::new(&l)),
        });
        match scheme {
            Scheme::Muscl(m) => {
                boundary::fill(&l, &self.cfg.bc, g, &mut self.u, None);
                let s = Settings {
                    gamma: g,
                    riemann: self.cfg.riemann,
                    limiter: self.cfg.limiter,
                    characteristic: self.cfg.characteristic,
                };
                m.advance(&l, &s, &mut self.u, &self.solid, dt, h);
            }
            Scheme::Cese(c) => c.advance(&l, &self.cfg.bc, g, T::of(self.cfg.alpha), &mut self.u, dt, h),
        }
        self.time += dt;
        self.steps += 1;
        self.dt = dt;
        self.residuals[0].1 = rate;
        self.check_state()
    }

    fn dt(&self) -> f64 {
        self.dt
    }

    fn set_dt_cap(&mut self, cap: f64) {
        self.dt_cap = cap;
    }

    fn residuals(&self) -> &[(&'static str, f64)] {
        &self.residuals
    }

    fn field_names(&self) -> &'static [&'static str] {
        if self.cfg.dim == 1 { FIELDS_1D } else { FIELDS_2D }
    }

    fn field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        if !self.field_names().contains(&name) {
            return None;
        }
        let [nx, ny] = self.l.n;
        out.resize(nx * ny, 0.0);
        out.par_iter_mut()
            .with_min_len(256)
            .enumerate()
            .for_each(|(c, o)| {
                *o = self.cell_value(name, c % nx, c / nx).expect("a listed field");
            });
        Some(())
    }

    fn exact_field(&self, name: &str, out: &mut Vec<f64>) -> Option<()> {
        self.exact_cell(0)?;
        let gm = self.cfg.gamma;
        let nx = self.l.n[0];
        out.resize(nx, 0.0);
        for (i, o) in out.iter_mut().enumerate() {
            let w = self.exact_cell(i)?;
            *o = match name {
                "rho" => w[0],
                "u" => w[1],
                "p" => w[3],
                "e" if w[0] > 0.0 => w[3] / ((gm - 1.0) * w[0]),
                "mach" if w[0] > 0.0 => w[1].abs() / (gm * w[3] / w[0]).sqrt(),
                "e" | "mach" => 0.0,
                _ => return None,
            };
        }
        Some(())
    }

    fn sample(&self, name: &str, point: [f64; 3]) -> Option<f64> {
        let g = &self.cfg.grid;
        let mut lo = [0usize; 2];
        let mut frac = [0.0; 2];
        for d in 0..self.cfg.dim {
            let n = self.l.n[d];
            let s = ((point[d] - g.origin[d]) / g.spacing[d] - 0.5).clamp(0.0, (n - 1) as f64);
            lo[d] = (s.floor() as usize).min(n.saturating_sub(2));
            frac[d] = if n > 1 { s - lo[d] as f64 } else { 0.0 };
        }
        let hi = |d: usize| (lo[d] + 1).min(self.l.n[d] - 1);
        let v = |i, j| self.cell_value(name, i, j);
        let row = |j| -> Option<f64> { Some(v(lo[0], j)? * (1.0 - frac[0]) + v(hi(0), j)? * frac[0]) };
        Some(row(lo[1])? * (1.0 - frac[1]) + row(hi(1))? * frac[1])
    }

    fn load_state(&mut self, from: &dyn Solver) -> Result<(), Invalid> {
        check_transfer(&self.info(), &from.info())?;
        let (l, grid, g) = (self.l, self.cfg.grid, T::of(self.cfg.gamma));
        // Primitive variables and their slot in `[rho, u, v, p]`.
        let slots: &[(&str, usize)] = match self.cfg.dim {
            2 => &[("rho", 0), ("u", 1), ("v", 2), ("p", 3)],
            _ => &[("rho", 0), ("u", 1), ("p", 3)],
        };
        let mut next = self.u.clone();
        for j in 0..l.n[1] {
            for i in 0..l.n[0] {
                let x = [grid.centre(0, i), grid.centre(1, j), 0.0];
                let mut w = [T::zero(); 4];
                for &(name, slot) in slots {
                    w[slot] = T::of(from.sample(name, x).ok_or_else(|| {
                        Invalid::new("case", format!("the running solver cannot provide {name}"))
                    })?);
                }
                next[l.at(i as isize, j as isize)] = conserved(g, w);
            }
        }
        self.u = next;
        // CE/SE restarts with zero gradients (MUSCL keeps no state between steps).
        self.scheme = None;
        self.time = from.time();
        self.steps = from.steps();
        self.dt = from.dt();
        self.totals_start = self.totals();
        Ok(())
    }

    /// The conserved state as `q` ([`to_soa`] layout, ghosts included), CE/SE's centre
    /// gradients as `qx` (and `qy` in 2D), and the totals the summary compares with.
    fn snapshot(&self) -> Result<Snapshot, SolverError> {
        let mut s = Snapshot::new(&self.info(), self.time, self.steps, self.dt);
        s.put("q", &to_soa(&self.u));
        if self.cfg.method == Method::Cese {
            let zeros = vec![[T::zero(); 4]; self.u.len()];
            let [gx, gy] = match &self.scheme {
                Some(Scheme::Cese(c)) => c.gradients(),
                _ => [&zeros[..], &zeros[..]],
            };
            s.put("qx", &to_soa(gx));
            if self.cfg.dim == 2 {
                s.put("qy", &to_soa(gy));
            }
        }
        for (c, t) in self.totals_start.iter().enumerate() {
            s.put_scalar(&format!("totals_start_{c}"), *t);
        }
        Ok(s)
    }

    fn restore(&mut self, state: &Snapshot) -> Result<(), Invalid> {
        state.check(&self.info())?;
        let soa = |name: &str| -> Result<Vec<Q<T>>, Invalid> {
            let mut v = vec![T::zero(); 4 * self.u.len()];
            state.take(name, &mut v)?;
            let mut q = vec![[T::zero(); 4]; self.u.len()];
            from_soa(&v, &mut q);
            Ok(q)
        };
        let u = soa("q")?;
        let scheme = if self.cfg.method == Method::Cese {
            let mut c = Cese::new(&self.l);
            let [gx, gy] = c.gradients_mut();
            gx.copy_from_slice(&soa("qx")?);
            if self.cfg.dim == 2 {
                gy.copy_from_slice(&soa("qy")?);
            }
            Some(Scheme::Cese(c))
        } else {
            None
        };
        let mut totals = [0.0; 4];
        for (c, t) in totals.iter_mut().enumerate() {
            *t = state.scalar(&format!("totals_start_{c}"))?;
        }
        (self.u, self.scheme, self.totals_start) = (u, scheme, totals);
        (self.time, self.steps, self.dt) = (state.time, state.steps, state.dt);
        Ok(())
    }

    fn update(&mut self, spec: &CaseSpec) -> Result<(), Invalid> {
        let cfg = Config::from_spec(spec)?;
        if !cfg.same_layout(&self.cfg) {
            return Err(Invalid::new(
                "case",
                "grid, method, boundaries, initial state, solids and precision need a restart",
            ));
        }
        self.cfg = cfg;
        Ok(())
    }

    fn summary(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let nx = self.l.n[0];
        if self.exact_cell(0).is_some() {
            let dx = self.cfg.grid.spacing[0];
            let len = self.cfg.grid.extent(0);
            let mut err = [0.0; 3];
            for i in 0..nx {
                let (w, e) = (
                    self.prim(i, 0).map(|x| x.f64()),
                    self.exact_cell(i).expect("checked"),
                );
                for (k, c) in [0usize, 1, 3].into_iter().enumerate() {
                    err[k] += (e[c] - w[c]).abs() * dx / len;
                }
            }
            m.insert(
                "l1_error".into(),
                json!({"rho": err[0], "u": err[1], "p": err[2]}),
            );
        }
        let tot = |t: [f64; 4]| json!({"mass": t[0], "momentum": [t[1], t[2]], "energy": t[3]});
        m.insert("totals_start".into(), tot(self.totals_start));
        m.insert("totals_end".into(), tot(self.totals()));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Case;

    /// A sod tube (MUSCL-Hancock or CE/SE) with one cell's density made negative, as a
    /// diverging step would leave it.
    fn broken(cese: bool) -> (Euler<f64>, SolverError) {
        let text = if cese {
            include_str!("../../../cases/cese_sod.toml")
        } else {
            include_str!("../../../cases/sod.toml")
        };
        let case = Case::parse(text, "sod.toml").unwrap();
        let mut s = Euler::<f64>::new(Config::from_spec(&case.spec).unwrap());
        let k = s.l.at(7, 0);
        s.u[k][0] = -0.25;
        let e = s.check_state().expect_err("a negative density is inadmissible");
        (s, e)
    }

    #[test]
    fn a_diverged_state_reports_the_offending_density() {
        let (s, e) = broken(false);
        assert_eq!(s.residuals[1], ("min_density", -0.25), "{e}");
        assert!(e.to_string().contains("Riemann solver"), "{e}");
    }

    #[test]
    fn the_cese_divergence_hint_names_cese_settings() {
        let (s, e) = broken(true);
        assert_eq!(s.residuals[1].1, -0.25);
        let shown = e.to_string();
        assert!(
            shown.contains("solver.alpha") && shown.contains("solver.cfl"),
            "{shown}"
        );
        assert!(
            !shown.contains("limiter") && !shown.contains("Riemann"),
            "{shown}"
        );
    }
}
