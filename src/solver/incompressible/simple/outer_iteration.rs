//! One outer iteration of SIMPLE, SIMPLEC or SIMPLER (steps 1-5 of the module doc), with the
//! pseudo-velocities of SIMPLER and the health check that ends it. Every sum is formed from row
//! partial sums added in row order ([`Simple::total`]), the same additions on one process or
//! over several ([`super::part`]).

use super::coefficients::{self, Constants};
use super::part::Part;
use super::{MOMENTUM, Simple, SimpleConfig, diverged, each_unknown, pressure_correction};
use crate::parallel::Layers;
use crate::solver::incompressible::config::BLOW_UP_FACTOR;
use crate::solver::incompressible::staggered::{Layout, for_each_index};
use crate::solver::{CappedSolve, SolverError};

impl<const D: usize> Simple<D> {
    /// SIMPLER's pseudo-velocities `(sum a_nb q_nb + b) / a_P` of component `c` from the
    /// unknown vector `x[c]` (the current velocity) into `hat[c]`, whose other entries are the
    /// velocity's.
    pub(super) fn pseudo_velocity(&mut self, c: usize) {
        let (sys, x, hat) = (&self.sys[c], &self.x[c], &mut self.hat[c]);
        hat.copy_from_slice(&self.vel[c]);
        each_unknown(&self.l, c, |m, k| {
            hat[k] = (sys.neighbours(|j| x[j], sys.position(m), m) + sys.b[m]) / sys.ap[m];
        });
        // The periodic seam: face 0 is the image of face n.
        if self.l.periodic[c] {
            let (mut lo, mut hi) = ([1; D], self.l.n);
            (lo[c], hi[c]) = (0, 0);
            let seam = self.l.n[c] * self.l.stride[c];
            for_each_index(lo, hi, |idx| {
                let k = self.l.at(idx);
                hat[k] = hat[k + seam];
            });
        }
    }

    /// One outer iteration: the rotor's loads in the current velocity (Lohry's coupling, once
    /// an outer iteration), the momentum systems, the pressure (correction) and the corrections.
    pub(super) fn iterate(&mut self) -> Result<(), SolverError> {
        self.update_viscosity();
        if let Some(r) = &mut self.rotor {
            r.update(&self.vel);
        }
        let h = self.spacing;
        let mut norms = [0.0; D];
        for c in 0..D {
            let source = self.rotor.as_ref().map(|r| &r.accel[c][..]);
            let k = constants(&self.cfg, self.l, h, c, source);
            let vel = std::array::from_fn(|c| &self.vel[c][..]);
            let rows = self.sys[c].rows();
            coefficients::assemble(
                &k,
                c,
                vel,
                &self.mu_c,
                &self.mu_e,
                &mut self.sys[c],
                &mut self.d[c],
                &mut self.partial[..rows],
            );
            norms[c] = self.system_total(c, rows);
        }
        let mut pressure_iterations = 0;
        let mut pressure_residual = 0.0;
        self.capped = None;
        if self.cfg.algorithm.pseudo_velocities() {
            for c in 0..D {
                gather(&self.l, c, &self.vel[c], &mut self.x[c]);
                self.pseudo_velocity(c);
            }
            self.assemble_pressure(true);
            let st = self.solver_p.solve(
                &self.sys_p,
                &mut self.p,
                self.cfg.pressure_tolerance,
                self.cfg.pressure_iterations,
            );
            pressure_iterations += st.iterations;
            self.capped = CappedSolve::of_linear(&st, self.cfg.pressure_tolerance);
            self.remove_mean();
            pressure_residual = st.reduction();
        }
        let mut momentum = [0.0; D];
        let mut momentum_iterations = 0;
        // The relaxed system's residual at the current velocity equals the unrelaxed one; norms
        // are with the unrelaxed a_P, summed over the components.
        let norm = norms.iter().fold(0.0, |s, n| s + n);
        for c in 0..D {
            coefficients::add_pressure(&self.l, c, h, &self.p, &mut self.sys[c]);
            gather(&self.l, c, &self.vel[c], &mut self.x[c]);
            let rows = self.sys[c].rows();
            self.sys[c].residual_l1(&self.x[c], &mut self.partial[..rows]);
            let r1 = self.system_total(c, rows);
            momentum[c] = if norm > 0.0 {
                r1 / norm
            } else if r1 > 0.0 {
                1.0
            } else {
                0.0
            };
            let st = self.solvers[c].solve(
                &self.sys[c],
                &mut self.x[c],
                self.cfg.momentum_tolerance,
                self.cfg.momentum_iterations,
            );
            momentum_iterations += st.iterations;
            let (x, q) = (&self.x[c], &mut self.vel[c]);
            each_unknown(&self.l, c, |m, k| q[k] = x[m]);
        }
        self.boundaries();
        let (imbalance, flux) = self.assemble_pressure(false);
        let mass = if flux > 0.0 { imbalance / flux } else { 0.0 };
        self.pc.iter_mut().for_each(|x| *x = 0.0);
        let st = self.solver_p.solve(
            &self.sys_p,
            &mut self.pc,
            self.cfg.pressure_tolerance,
            self.cfg.pressure_iterations,
        );
        pressure_iterations += st.iterations;
        self.capped = self
            .capped
            .or(CappedSolve::of_linear(&st, self.cfg.pressure_tolerance));
        if !self.cfg.algorithm.pseudo_velocities() {
            pressure_residual = st.reduction();
        }
        let d = std::array::from_fn(|c| &self.d[c][..]);
        pressure_correction::correct_velocity(&self.l, d, &self.pc, self.vel.each_mut().map(|q| &mut q[..]));
        if !self.cfg.algorithm.pseudo_velocities() {
            let a = self.cfg.alpha_p;
            self.p.iter_mut().zip(&self.pc).for_each(|(p, pc)| *p += a * pc);
            self.remove_mean();
        }
        self.boundaries();
        self.steps += 1;
        let max_velocity = self
            .l
            .max_face_speeds(self.velocity())
            .into_iter()
            .reduce(f64::max)
            .unwrap_or(0.0);
        let max_velocity = self.part.as_ref().map_or(max_velocity, |p| p.max(max_velocity));
        let worst = momentum.into_iter().reduce(f64::max).unwrap_or(0.0).max(mass);
        self.residuals.clear();
        self.residuals.push(("steady_change", worst));
        self.residuals.extend((0..D).map(|c| (MOMENTUM[c], momentum[c])));
        self.residuals.extend_from_slice(&[
            ("mass", mass),
            ("momentum_iterations", momentum_iterations as f64),
            ("pressure_iterations", pressure_iterations as f64),
            ("pressure_residual", pressure_residual),
            ("max_velocity", max_velocity),
        ]);
        if let Some(r) = &self.rotor {
            self.residuals.extend_from_slice(&r.setup.residuals(&r.loads));
        }
        self.check_health(max_velocity, norm)
    }

    /// Fails when the largest velocity passes [`BLOW_UP_FACTOR`] times the problem's scale, or
    /// when it, the momentum norm `norm` (`sum |a_P q_P|`, NaN when any velocity is: the
    /// largest velocity skips NaNs) or a pressure is not finite.
    pub(super) fn check_health(&self, max_velocity: f64, norm: f64) -> Result<(), SolverError> {
        let p_finite = self.p.iter().all(|p| p.is_finite());
        // Every process decides alike: a pressure that is not finite anywhere fails all.
        let p_finite = match &self.part {
            None => p_finite,
            Some(part) => part.max(if p_finite { 0.0 } else { 1.0 }) == 0.0,
        };
        let finite = max_velocity.is_finite() && norm.is_finite() && p_finite;
        let scale = self.velocity_scale();
        if finite && max_velocity <= BLOW_UP_FACTOR * scale {
            return Ok(());
        }
        Err(diverged(&self.cfg, scale, self.steps, max_velocity, finite))
    }

    /// `sum_j partial[j]` over an array's rows along x, `partial` this process's (`rows_per_layer`
    /// rows a layer along the last axis, whose owners `layers` picks): on one process every row
    /// in order, on a part every process's owned rows in global order.
    fn total(&self, layers: impl Fn(&Part) -> &Layers, partial: &[f64], rows_per_layer: usize) -> f64 {
        super::part::total(self.part.as_ref(), layers, partial, rows_per_layer)
    }

    /// [`Simple::total`] of the first `rows` partial sums, those of momentum component `c`'s
    /// system rows.
    fn system_total(&self, c: usize, rows: usize) -> f64 {
        let per_layer = rows / self.sys[c].n[D - 1];
        self.total(|p| p.system_layers::<D>(c), &self.partial[..rows], per_layer)
    }

    /// Rows along x of one cell layer along the last axis.
    fn cell_rows_per_layer(&self) -> usize {
        self.l.n[1..D - 1].iter().product()
    }

    /// The pressure equation of SIMPLER (`hat`: from the pseudo-velocities) or the
    /// pressure-correction equation (from the velocity), made compatible (the mean of `b`
    /// removed); returns the mass imbalance `sum |b|` before that and the flux `sum |F|`.
    fn assemble_pressure(&mut self, hat: bool) -> (f64, f64) {
        let d = std::array::from_fn(|c| &self.d[c][..]);
        let vel = std::array::from_fn(|c| if hat { &self.hat[c][..] } else { &self.vel[c][..] });
        let rho = self.cfg.flow.density;
        let rows = self.cell_rows.each_mut().map(|r| &mut r[..]);
        pressure_correction::assemble(&self.l, self.spacing, rho, d, vel, &mut self.sys_p, rows);
        let per_layer = self.cell_rows_per_layer();
        let [imbalance, flux, sum] =
            std::array::from_fn(|s| self.total(|p| &p.cells, &self.cell_rows[s], per_layer));
        let mean = sum / self.whole_cells() as f64;
        self.sys_p.b.iter_mut().for_each(|b| *b -= mean);
        (imbalance, flux)
    }

    /// Cells of the whole grid.
    fn whole_cells(&self) -> usize {
        self.part.as_ref().map_or(self.p.len(), |p| p.whole_cells)
    }

    /// Removes the mean of the pressure (defined up to a constant), summed by rows of cells.
    fn remove_mean(&mut self) {
        let row_len = self.l.n[0];
        let partial = &mut self.cell_rows[0];
        for (j, s) in partial.iter_mut().enumerate() {
            *s = self.p[j * row_len..(j + 1) * row_len]
                .iter()
                .fold(0.0, |s, &x| s + x);
        }
        let mean = self.total(|p| &p.cells, &self.cell_rows[0], self.cell_rows_per_layer())
            / self.whole_cells() as f64;
        self.p.iter_mut().for_each(|x| *x -= mean);
    }
}

/// Copies component `c`'s unknowns from the ghosted array `q` into the system's vector `x`.
fn gather<const D: usize>(l: &Layout<D>, c: usize, q: &[f64], x: &mut [f64]) {
    each_unknown(l, c, |m, k| x[m] = q[k]);
}

/// The assembly constants of component `c`.
fn constants<'a, const D: usize>(
    cfg: &'a SimpleConfig,
    l: Layout<D>,
    spacing: [f64; D],
    c: usize,
    source: Option<&'a [f64]>,
) -> Constants<'a, D> {
    Constants {
        l,
        flow: &cfg.flow,
        spacing,
        density: cfg.flow.density,
        scheme: cfg.scheme,
        alpha: cfg.alpha_u,
        consistent: cfg.algorithm.consistent(),
        transpose: !cfg.viscosity.is_newtonian(),
        pseudo_dt: cfg.pseudo_dt,
        gradient: cfg.pressure_gradient[c],
        source,
    }
}
