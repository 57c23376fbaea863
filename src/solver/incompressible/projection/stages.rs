//! The three stages of a projection step (the module doc's equations 1-3): the predictor and the
//! boundary values of its field, the pressure Poisson equation's right-hand side, and the
//! correction of the velocity by the pressure gradient.

use super::Projection;
use crate::backend::cpu::DisjointWriter;
use crate::case::{Boundary, TimeIntegrator};
use crate::solver::incompressible::momentum::{Momentum, Node};
use crate::solver::incompressible::opening::opening_pressure;
use crate::solver::incompressible::staggered::{for_each_index, node_position};
use crate::solver::real::Real;
use rayon::prelude::*;

impl<T: Real, const D: usize> Projection<T, D> {
    /// Predictor: `F` at every advanced face of every component, from `H` and the AB2 history.
    /// Forward Euler (`F = u + dt H`) stores no history; AB2 stores `H` for the next step.
    pub(super) fn predict(&mut self, dt: f64) {
        let c = &self.cfg;
        let l = self.l;
        let h: [T; D] = std::array::from_fn(|a| T::of(c.grid.spacing[a]));
        let m = Momentum {
            scheme: c.convection,
            limiter: c.limiter,
            nu: T::of(c.nu),
            ih: h.map(|h| T::one() / h),
            ih2: h.map(|h| T::one() / (h * h)),
        };
        let ab2 = matches!(c.integrator, TimeIntegrator::Ab2);
        let (w_new, w_old) = match (c.integrator, self.has_history) {
            (TimeIntegrator::Ab2, true) => {
                let r = dt / self.dt_old;
                (T::of(1.0 + 0.5 * r), T::of(-0.5 * r))
            }
            _ => (T::one(), T::zero()),
        };
        let dt = T::of(dt);
        let half = T::of(0.5);
        let vel = &self.vel;
        let st = l.stride;
        if let Some(r) = &mut self.rotor {
            r.update(vel);
        }
        for (comp, (pred, hist)) in self.pred.iter_mut().zip(self.hist.iter_mut()).enumerate() {
            let q = &vel[comp];
            let source = self.rotor.as_ref().map(|r| &r.accel[comp][..]);
            let unknowns = l.unknowns(comp);
            let i_range = if comp == 0 { unknowns.clone() } else { 1..=l.n[0] };
            pred.par_chunks_mut(st[1])
                .zip(hist.par_chunks_mut(st[1]))
                .enumerate()
                .for_each(|(r, (frow, hrow))| {
                    let mut idx = l.row_index(r);
                    let inside = (1..D).all(|a| {
                        if a == comp {
                            unknowns.contains(&idx[a])
                        } else {
                            (1..=l.n[a]).contains(&idx[a])
                        }
                    });
                    if !inside {
                        return;
                    }
                    for i in i_range.clone() {
                        idx[0] = i;
                        let k = l.at(idx);
                        let node = Node {
                            c: q[k],
                            plus: st.map(|s| q[k + s]),
                            minus: st.map(|s| q[k - s]),
                            a_plus: std::array::from_fn(|a| {
                                if a == comp {
                                    half * (q[k] + q[k + st[a]])
                                } else {
                                    half * (vel[a][k] + vel[a][k + st[comp]])
                                }
                            }),
                            a_minus: std::array::from_fn(|a| {
                                if a == comp {
                                    half * (q[k - st[a]] + q[k])
                                } else {
                                    half * (vel[a][k - st[a]] + vel[a][k - st[a] + st[comp]])
                                }
                            }),
                        };
                        let far = |a: usize, m: isize| {
                            let mut at = idx.map(|x| x as isize);
                            at[a] += m;
                            l.component_at(q, comp, at)
                        };
                        let rhs = match source {
                            Some(f) => m.rhs(&node, far) + f[k],
                            None => m.rhs(&node, far),
                        };
                        if ab2 {
                            frow[i] = node.c + dt * (w_new * rhs + w_old * hrow[i]);
                            hrow[i] = rhs;
                        } else {
                            frow[i] = node.c + dt * rhs;
                        }
                    }
                });
        }
        self.predictor_boundaries(self.time + dt.f64());
    }

    /// `F` on faces the momentum equation does not advance: the prescribed normal velocity
    /// (an `exact` side's at the new time `time`), a zero-gradient extrapolation on outflow
    /// faces, the periodic image on seams.
    pub(super) fn predictor_boundaries(&mut self, time: f64) {
        let l = self.l;
        let g = self.cfg.grid;
        for c in 0..D {
            let (q, f) = (&self.vel[c], &mut self.pred[c]);
            let (n, st) = (l.n[c], l.stride[c]);
            for s in 0..2 {
                let (face, inner) = if s == 0 { (0, 1) } else { (n, n - 1) };
                let (mut lo, mut hi) = ([1; D], l.n);
                (lo[c], hi[c]) = (0, 0);
                let b = &self.cfg.bc[c][s];
                for_each_index(lo, hi, |idx| {
                    let base = l.at(idx);
                    f[base + face * st] = match b {
                        Boundary::Outflow {} | Boundary::Opening {} => f[base + inner * st],
                        Boundary::Periodic {} => f[base + if s == 0 { n } else { face } * st],
                        Boundary::Exact {} => {
                            let field = self.cfg.analytic.expect("exact sides have a field");
                            T::of(field.velocity(node_position(&g, c, with(idx, c, face)), time)[c])
                        }
                        _ => q[base + face * st],
                    };
                });
            }
        }
    }

    /// `rhs = div(F) / dt` at cell centres (`sum_a (F_a+ - F_a-) / h_a`, in axis order), less
    /// `2 p_b / h_a^2` by each face of an `open` side (bit `2 a + s`, [`opening_sides`]) with
    /// its held pressure `p_b` from the face's velocity ([`opening_pressure`]).
    pub(super) fn poisson_rhs(&mut self, dt: f64, open: u32) {
        let l = self.l;
        let ih: [T; D] = std::array::from_fn(|a| T::of(1.0 / self.cfg.grid.spacing[a]));
        let idt = T::of(1.0 / dt);
        let two = T::of(2.0);
        let (pred, vel) = (&self.pred, &self.vel);
        let nx = l.n[0];
        self.rhs.par_chunks_mut(nx).enumerate().for_each(|(r, row)| {
            let mut idx = [1; D];
            let mut rest = r;
            for a in 1..D {
                idx[a] = rest % l.n[a] + 1;
                rest /= l.n[a];
            }
            for (i0, out) in row.iter_mut().enumerate() {
                idx[0] = i0 + 1;
                let k = l.at(idx);
                let d = |a: usize| (pred[a][k] - pred[a][k - l.stride[a]]) * ih[a];
                *out = (1..D).fold(d(0), |s, a| s + d(a)) * idt;
                if open != 0 {
                    for a in 0..D {
                        let held =
                            |s: usize, face: usize| two * ih[a] * ih[a] * opening_pressure(vel[a][face], s);
                        if open >> (2 * a) & 1 == 1 && idx[a] == 1 {
                            *out = *out - held(0, k - l.stride[a]);
                        }
                        if open >> (2 * a + 1) & 1 == 1 && idx[a] == l.n[a] {
                            *out = *out - held(1, k);
                        }
                    }
                }
            }
        });
    }

    /// `u_c = F_c - dt dp/dx_c` on every face the projection moves; returns the sum of squared
    /// changes of the face velocities and the sum of squared new velocities over the cells'
    /// upper faces (for the steady-state measure). Both are summed per ghosted x row (the
    /// components in order within a row), then over rows in order. A boundary face's gradient
    /// is taken to its held pressure half a cell away: 0, or on an `open` side (as in
    /// [`Self::poisson_rhs`]) the pressure its velocity before the correction gives.
    pub(super) fn correct(&mut self, dt: f64, open: u32) -> (f64, f64) {
        let l = self.l;
        let n = l.n;
        let dtdh: [T; D] = std::array::from_fn(|a| T::of(dt / self.cfg.grid.spacing[a]));
        let two = T::of(2.0);
        let out = Boundary::is_open;
        // The corrected range of component c along axis c.
        let range: [(usize, usize); D] = std::array::from_fn(|c| {
            let bc = &self.cfg.bc[c];
            (
                if out(&bc[0]) { 0 } else { 1 },
                *l.unknowns(c).end() + out(&bc[1]) as usize,
            )
        });
        let p = &self.p;
        // Pressure of cell idx (1-based).
        let pc = |idx: [usize; D]| p[(0..D).rev().fold(0, |k, a| k * n[a] + idx[a] - 1)];
        let writers: [DisjointWriter<'_, T>; D] = {
            let mut it = self.vel.iter_mut();
            std::array::from_fn(|_| DisjointWriter::new(it.next().expect("D components")))
        };
        let pred = &self.pred;
        // Row r of every component belongs to one closure call only.
        let sums = self.sums.sum(|r| {
            let mut d2 = T::zero();
            let mut idx = l.row_index(r);
            for c in 0..D {
                let inside = (1..D).all(|a| {
                    if a == c {
                        (range[c].0..=range[c].1).contains(&idx[a])
                    } else {
                        (1..=n[a]).contains(&idx[a])
                    }
                });
                if !inside {
                    continue;
                }
                let (i_lo, i_hi) = if c == 0 { range[0] } else { (1, n[0]) };
                for i in i_lo..=i_hi {
                    idx[0] = i;
                    let at = idx[c];
                    let k = l.at(idx);
                    // SAFETY: index k lies in row r, owned by this closure call.
                    let old = unsafe { writers[c].get(k) };
                    let held = |s: usize| {
                        if open >> (2 * c + s) & 1 == 1 {
                            opening_pressure(old, s)
                        } else {
                            T::zero()
                        }
                    };
                    let grad = if at == 0 {
                        (pc(with(idx, c, 1)) - held(0)) * two
                    } else if at == n[c] && !l.periodic[c] {
                        (held(1) - pc(idx)) * two
                    } else {
                        pc(with(idx, c, if at == n[c] { 1 } else { at + 1 })) - pc(idx)
                    };
                    let new = pred[c][k] - dtdh[c] * grad;
                    unsafe { writers[c].set(k, new) };
                    d2 = d2 + (new - old) * (new - old);
                }
            }
            d2
        });
        let change = sums.f64();
        let vel = &self.vel;
        let norm = self.sums.sum(|r| {
            let mut n2 = T::zero();
            let mut idx = l.row_index(r);
            if (1..D).all(|a| (1..=n[a]).contains(&idx[a])) {
                for i in 1..=n[0] {
                    idx[0] = i;
                    let k = l.at(idx);
                    for q in vel {
                        n2 = n2 + q[k] * q[k];
                    }
                }
            }
            n2
        });
        (change, norm.f64())
    }
}

/// `idx` with its axis-`a` index replaced by `i`.
#[inline(always)]
fn with<const D: usize>(mut idx: [usize; D], a: usize, i: usize) -> [usize; D] {
    idx[a] = i;
    idx
}
