//! CSV tables: samples along a line, residual histories and 1D profiles.

use crate::solver::{Grid, Solver};
use std::fmt::Write as _;

/// The most points a sampling line takes.
pub const MAX_LINE_POINTS: usize = 1_000_000;

/// A straight sampling line from `(x0, y0)` to `(x1, y1)` with `2 <= n <= MAX_LINE_POINTS`
/// points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub from: [f64; 2],
    pub to: [f64; 2],
    pub points: usize,
}

impl std::str::FromStr for Line {
    type Err = String;

    /// Parses `x0,y0,x1,y1,N`.
    fn from_str(s: &str) -> Result<Line, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        if parts.len() != 5 {
            return Err(format!("expected x0,y0,x1,y1,N (5 values), got `{s}`"));
        }
        let num = |k: usize| -> Result<f64, String> {
            parts[k]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("`{}` in `{s}` is not a finite number", parts[k]))
        };
        let points: usize = parts[4]
            .parse()
            .ok()
            .filter(|n: &usize| (2..=MAX_LINE_POINTS).contains(n))
            .ok_or_else(|| {
                format!(
                    "the point count `{}` in `{s}` must be an integer from 2 to {MAX_LINE_POINTS}",
                    parts[4]
                )
            })?;
        Ok(Line {
            from: [num(0)?, num(1)?],
            to: [num(2)?, num(3)?],
            points,
        })
    }
}

impl Line {
    /// `Err` naming the end of the line that lies outside `grid`'s domain (along its axes; a
    /// 1D case's `y` is not checked).
    pub fn check_inside(&self, grid: &Grid) -> Result<(), String> {
        for end in [self.from, self.to] {
            for a in 0..grid.dim.min(2) {
                let (lo, hi) = (grid.origin[a], grid.origin[a] + grid.extent(a));
                let slack = 1e-9 * (hi - lo);
                if !(end[a] >= lo - slack && end[a] <= hi + slack) {
                    return Err(format!(
                        "the end ({}, {}) of the line {:?} -> {:?} lies outside the domain: {} runs \
                         from {lo} to {hi}",
                        end[0],
                        end[1],
                        self.from,
                        self.to,
                        ["x", "y"][a]
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `s,x,y,<field>...`: every field of the solver sampled (bilinear interpolation from where the
/// discretisation stores it) at evenly spaced points; `s` is the distance from the start.
pub fn line_samples(solver: &dyn Solver, line: &Line) -> String {
    let names = solver.field_names();
    let mut s = String::from("s,x,y");
    for n in names {
        let _ = write!(s, ",{n}");
    }
    s.push('\n');
    let len = (line.to[0] - line.from[0]).hypot(line.to[1] - line.from[1]);
    for k in 0..line.points {
        let t = k as f64 / (line.points - 1) as f64;
        let x = line.from[0] + t * (line.to[0] - line.from[0]);
        let y = line.from[1] + t * (line.to[1] - line.from[1]);
        let _ = write!(s, "{:.9e},{x:.9e},{y:.9e}", t * len);
        for n in names {
            let v = solver.sample(n, [x, y, 0.0]).unwrap_or(f64::NAN);
            let _ = write!(s, ",{v:.9e}");
        }
        s.push('\n');
    }
    s
}

/// Residual history: one row per step.
#[derive(Clone, Debug, Default)]
pub struct ResidualLog {
    names: Vec<&'static str>,
    text: String,
}

impl ResidualLog {
    /// Appends the solver's current step, time, dt and residuals.
    pub fn record(&mut self, solver: &dyn Solver) {
        let res = solver.residuals();
        if self.names.is_empty() {
            self.names = res.iter().map(|(n, _)| *n).collect();
        }
        let _ = write!(
            self.text,
            "{},{:.12e},{:.6e}",
            solver.steps(),
            solver.time(),
            solver.dt()
        );
        for name in &self.names {
            let v = res.iter().find(|(n, _)| n == name).map_or(f64::NAN, |(_, v)| *v);
            let _ = write!(self.text, ",{v:.6e}");
        }
        self.text.push('\n');
    }

    /// Continues the history of `csv` (an earlier [`ResidualLog::to_csv`] of the same run) from
    /// its rows up to step `up_to` (a checkpoint's step: later rows are replaced by the resumed
    /// run's).
    pub fn resume(&mut self, csv: &str, up_to: u64) {
        self.text = csv
            .lines()
            .skip(1)
            .take_while(|row| {
                row.split(',')
                    .next()
                    .and_then(|s| s.parse::<u64>().ok())
                    .is_some_and(|step| step <= up_to)
            })
            .fold(String::new(), |mut text, row| {
                text.push_str(row);
                text.push('\n');
                text
            });
    }

    pub fn to_csv(&self) -> String {
        let mut s = String::from("step,time,dt");
        for n in &self.names {
            let _ = write!(s, ",{n}");
        }
        s.push('\n');
        s + &self.text
    }
}

/// 1D profile: `x`, every field at cell centres, then `exact_<field>` for each field with an
/// exact solution (1D Riemann problems).
pub fn profile(solver: &dyn Solver) -> String {
    let g = solver.info().grid;
    let names = solver.field_names();
    let mut cols = Vec::new();
    let mut header = String::from("x");
    for n in names {
        let mut v = Vec::new();
        if solver.field(n, &mut v).is_some() {
            let _ = write!(header, ",{n}");
            cols.push(v);
        }
    }
    for n in names {
        let mut v = Vec::new();
        if solver.exact_field(n, &mut v).is_some() {
            let _ = write!(header, ",exact_{n}");
            cols.push(v);
        }
    }
    let mut s = header + "\n";
    for i in 0..g.n[0] {
        let _ = write!(s, "{:.9e}", g.centre(0, i));
        for c in &cols {
            let _ = write!(s, ",{:.9e}", c[i]);
        }
        s.push('\n');
    }
    s
}
