//! A process's part of a SIMPLE, SIMPLEC or SIMPLER run over several processes: process `r` of
//! `N` is strip `r` of the overlapping Schwarz decomposition of every linear solve
//! ([`crate::solver::linear::schwarz`]; `solver.linear_solver.subdomains = N` on one process),
//! and the parts together compute that one-process run bit for bit.
//!
//! Layout along the last axis (y in 2D, z in 3D), `n` cells, overlap `k`:
//! - process `r` owns the cells of the pressure system's strip `r`, `strip_rows(r, N, n, k).own`,
//!   with the faces above them (the ghosted velocity and viscosity layers; the first process
//!   also the lower boundary's, the last the upper's);
//! - it stores [`extension`]`(k) = k + 2` more cell layers on each side it shares, and runs the
//!   ordinary outer iteration on that local grid with walls on the shared sides. The rows that
//!   the local walls falsify are the first and last of the normal component's unknowns (its
//!   boundary links moved into `b`, and for SIMPLEC its `d`) and of the tangential components'
//!   (the wall rule), and through `d` and the pseudo-velocities the first two and last two
//!   pressure rows; the strips extended by `k` rows (the normal component's unknown layers are
//!   cut at `strip_rows(r, N, n - 1, k)`, at most one layer below the cells' cut) and the row
//!   each side that a strip reads stay clear of them, and TVD's reach of two faces lands on
//!   stored layers;
//! - after every update of the velocity (and of a generalized Newtonian viscosity) the layers a
//!   process stores but does not own are refreshed from their owners, so every stored value is
//!   the one-process value; the linear solves exchange their unknowns after each colour;
//! - every sum the iteration forms (the momentum norm and residuals, the pressure equation's
//!   imbalance, flux and compatibility shift, the pressure's mean, the residual norms of the
//!   solves) is a sum of row partials over the rows a process owns, added in global row order
//!   ([`Layers::sum`]; on one process the same rows in the same order), and the largest velocity
//!   is the largest over the processes.

use super::SimpleConfig;
use crate::case::{Boundary, Invalid, WallVelocity};
use crate::parallel::{Communicator, Layers};
use crate::solver::incompressible::staggered::side;
use crate::solver::linear::schwarz::strip_rows;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Cell layers a process stores beyond its own on each side it shares, for overlap `k`: the
/// extended strips (`k` layers) clear of the two rows next to the local wall that it falsifies.
pub fn extension(overlap: usize) -> usize {
    overlap + 2
}

/// The cell layers process `r` of `parts` stores of `n` along the last axis with overlap `k`:
/// its pressure strip's own and [`extension`]`(k)` more on each side it shares.
pub fn stored_layers(r: usize, parts: usize, n: usize, k: usize) -> Range<usize> {
    let o = strip_rows(r, parts, n, k).0;
    let e = extension(k);
    let lo = if r == 0 { 0 } else { o.start.saturating_sub(e) };
    let hi = if r + 1 == parts { n } else { (o.end + e).min(n) };
    lo..hi
}

/// A process's place among the processes of a SIMPLE run.
pub struct Part {
    pub comm: Arc<dyn Communicator>,
    /// Cell layers: the pressure (correction) and the rows of the pressure system and of the
    /// momentum components tangential to the cut.
    pub cells: Layers,
    /// Ghosted layers (`0..n + 2`): the velocity components and the viscosities.
    pub ghosted: Layers,
    /// Unknown layers of the velocity component normal to the cut (its faces `1..n`).
    pub faces: Layers,
    /// The whole grid's cells (the pressure's mean) and velocity scale (the health check).
    pub whole_cells: usize,
    pub velocity_scale: f64,
    /// Buffers of [`total`]'s gathers: every process's row sums, and their bytes a process.
    gathered: Mutex<(Vec<f64>, Vec<usize>)>,
}

impl Part {
    /// Process `comm.rank()`'s part of the whole grid's `cfg`; `Err` names the key of a setting
    /// the parts cannot run.
    pub fn new(cfg: &SimpleConfig, comm: Arc<dyn Communicator>) -> Result<Self, Invalid> {
        let parts = comm.size();
        let g = &cfg.flow.grid;
        let last = g.dim - 1;
        let n = g.n[last];
        let k = cfg.overlap;
        let e = extension(k);
        let cut = |r: usize, layers: usize| strip_rows(r, parts, layers, k).0;
        let stored: Vec<Range<usize>> = (0..parts).map(|r| stored_layers(r, parts, n, k)).collect();
        let owned_cells: Vec<_> = (0..parts).map(|r| cut(r, n)).collect();
        let ghosted = (0..parts)
            .map(|r| {
                let o = &owned_cells[r];
                let lo = if r == 0 { 0 } else { o.start + 1 };
                let hi = if r + 1 == parts { n + 2 } else { o.end + 1 };
                lo..hi
            })
            .collect();
        let layers = |owned, stored| {
            Layers::new(owned, stored).map_err(|why| {
                let axis = ["x", "y", "z"][last];
                Invalid::new(
                    "solver.linear_solver.overlap",
                    format!(
                        "on {parts} processes each process stores solver.linear_solver.overlap + 2 = {e} \
                         cell layers along {axis} beyond its own, which its neighbours must own ({why}); \
                         use a smaller overlap, fewer processes or more cells along {axis}"
                    ),
                )
            })
        };
        Ok(Self {
            cells: layers(owned_cells.clone(), stored.clone())?,
            ghosted: layers(ghosted, stored.iter().map(|s| s.start..s.end + 2).collect())?,
            faces: layers(
                (0..parts).map(|r| cut(r, n - 1)).collect(),
                stored.iter().map(|s| s.start..s.end - 1).collect(),
            )?,
            whole_cells: g.n[..g.dim].iter().product(),
            velocity_scale: cfg.velocity_scale(),
            gathered: Mutex::new((Vec::new(), Vec::new())),
            comm,
        })
    }

    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// The whole grid's `cfg` on this process's stored cells: walls on the sides it shares
    /// (their values are overwritten by the exchange), its linear solves one strip each
    /// ([`crate::solver::linear::Schwarz::part`]).
    pub fn local_config(&self, cfg: &SimpleConfig) -> SimpleConfig {
        let last = cfg.flow.grid.dim - 1;
        let stored = self.cells.stored(self.rank());
        let mut local = cfg.clone();
        local.flow.grid.n[last] = stored.len();
        local.flow.grid.origin[last] += stored.start as f64 * cfg.flow.grid.spacing[last];
        let shared = [stored.start > 0, stored.end < cfg.flow.grid.n[last]];
        for (s, shared) in shared.into_iter().enumerate() {
            if shared {
                local.flow.bc[last][s] = Boundary::Wall {
                    velocity: WallVelocity::default(),
                };
            }
        }
        local.subdomains = 1;
        local
    }

    /// The layers of the unknowns of momentum component `c` of a `D`-dimensional grid.
    pub fn system_layers<const D: usize>(&self, c: usize) -> &Layers {
        if c == D - 1 { &self.faces } else { &self.cells }
    }

    /// The largest `x` over the processes (a NaN anywhere makes it infinite).
    pub fn max(&self, x: f64) -> f64 {
        self.comm.all_max(if x.is_nan() { f64::INFINITY } else { x })
    }
}

/// `sum_j partial[j]` over an array's rows along x, `partial` this process's (`rows_per_layer`
/// rows a layer along the last axis, whose owners `layers` picks): on one process (`part`
/// `None`) every row in order, on a part every process's owned rows in global order.
pub fn total(
    part: Option<&Part>,
    layers: impl Fn(&Part) -> &Layers,
    partial: &[f64],
    rows_per_layer: usize,
) -> f64 {
    match part {
        None => partial.iter().fold(0.0, |s, &x| s + x),
        Some(p) => {
            let mut g = p.gathered.lock().expect("the gather buffers");
            let (all, bytes) = &mut *g;
            layers(p).sum(&*p.comm, partial, rows_per_layer, all, bytes)
        }
    }
}

/// A setting of the whole grid's `cfg` that a run over `parts` processes cannot have, as the
/// error naming its key.
pub fn unsupported(cfg: &SimpleConfig, parts: usize) -> Option<Invalid> {
    let last = cfg.flow.grid.dim - 1;
    if cfg.subdomains != 1 && cfg.subdomains != parts {
        return Some(Invalid::new(
            "solver.linear_solver.subdomains",
            format!(
                "on {parts} processes every linear solve is cut into one strip a process: 1 or {parts}, got {}",
                cfg.subdomains
            ),
        ));
    }
    if cfg.rotor.is_some() {
        return Some(Invalid::new(
            "rotor",
            format!("on {parts} processes SIMPLE runs without a rotor (it runs on one process)"),
        ));
    }
    for (a, sides) in cfg.flow.bc.iter().enumerate() {
        for (s, b) in sides.iter().enumerate() {
            let refused = match b {
                Boundary::Periodic {} if a == last => {
                    "the grid is cut along its last axis, which must not be periodic"
                }
                _ => continue,
            };
            return Some(Invalid::new(
                format!("boundary.{}", side(a, s).name()),
                format!("on {parts} processes {refused}"),
            ));
        }
    }
    None
}
