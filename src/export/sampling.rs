//! Fields sampled where the user asks, as CSV tables: along a straight line (`--line`, 2D or
//! 3D) and over a plane of a 3D case (`--plane`). Every field of the solver is interpolated from
//! where the discretisation stores it (`Solver::sample`: bilinear in 2D, trilinear in 3D).

use crate::solver::{Grid, Solver};
use std::fmt::Write as _;

/// The most points a sampling line takes.
pub const MAX_LINE_POINTS: usize = 1_000_000;

/// Axis names.
const AXES: [&str; 3] = ["x", "y", "z"];

/// A straight sampling line from `from` to `to` with `2 <= points <= MAX_LINE_POINTS` points, in
/// `dim` = 2 (`x0,y0,x1,y1,N`) or 3 (`x0,y0,z0,x1,y1,z1,N`) dimensions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub dim: usize,
    pub from: [f64; 3],
    pub to: [f64; 3],
    pub points: usize,
}

/// A finite number in `text`, with a message naming `whole` otherwise.
fn number(text: &str, whole: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("`{text}` in `{whole}` is not a finite number"))
}

impl std::str::FromStr for Line {
    type Err = String;

    /// Parses `x0,y0,x1,y1,N` or `x0,y0,z0,x1,y1,z1,N`.
    fn from_str(s: &str) -> Result<Line, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let dim = match parts.len() {
            5 => 2,
            7 => 3,
            _ => {
                return Err(format!(
                    "expected x0,y0,x1,y1,N (2D, 5 values) or x0,y0,z0,x1,y1,z1,N (3D, 7 values), got `{s}`"
                ));
            }
        };
        let (mut from, mut to) = ([0.0; 3], [0.0; 3]);
        for a in 0..dim {
            from[a] = number(parts[a], s)?;
            to[a] = number(parts[dim + a], s)?;
        }
        let count = parts[2 * dim];
        let points: usize = count
            .parse()
            .ok()
            .filter(|n: &usize| (2..=MAX_LINE_POINTS).contains(n))
            .ok_or_else(|| {
                format!("the point count `{count}` in `{s}` must be an integer from 2 to {MAX_LINE_POINTS}")
            })?;
        Ok(Line {
            dim,
            from,
            to,
            points,
        })
    }
}

impl Line {
    /// `Err` when the line's dimension is not the case's (a 1D case takes a 2D line, its `y`
    /// unchecked) or an end lies outside `grid`'s domain.
    pub fn check_inside(&self, grid: &Grid) -> Result<(), String> {
        if self.dim != grid.dim.max(2) {
            return Err(format!(
                "a {}D case takes {} lines, got a {}D line",
                grid.dim,
                if grid.dim == 3 {
                    "x0,y0,z0,x1,y1,z1,N"
                } else {
                    "x0,y0,x1,y1,N"
                },
                self.dim
            ));
        }
        for end in [self.from, self.to] {
            for a in 0..grid.dim {
                let (lo, hi) = (grid.origin[a], grid.origin[a] + grid.extent(a));
                let slack = 1e-9 * (hi - lo);
                if !(end[a] >= lo - slack && end[a] <= hi + slack) {
                    return Err(format!(
                        "the end {:?} of the line {:?} -> {:?} lies outside the domain: {} runs from {lo} to {hi}",
                        &end[..self.dim],
                        &self.from[..self.dim],
                        &self.to[..self.dim],
                        AXES[a]
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The header `coordinates,<field>...` and one row per point of `points` (each the given
/// leading columns and the point).
fn table(
    solver: &dyn Solver,
    lead: &str,
    dim: usize,
    rows: impl Iterator<Item = (String, [f64; 3])>,
) -> String {
    let names = solver.field_names();
    let mut s = String::from(lead);
    for a in AXES.iter().take(dim) {
        let _ = write!(s, "{}{a}", if s.is_empty() { "" } else { "," });
    }
    for n in names {
        let _ = write!(s, ",{n}");
    }
    s.push('\n');
    for (first, p) in rows {
        s.push_str(&first);
        for (a, x) in p.iter().take(dim).enumerate() {
            let _ = write!(s, "{}{x:.9e}", if a == 0 && first.is_empty() { "" } else { "," });
        }
        for n in names {
            let v = solver.sample(n, p).unwrap_or(f64::NAN);
            let _ = write!(s, ",{v:.9e}");
        }
        s.push('\n');
    }
    s
}

/// `s,x,y[,z],<field>...` at evenly spaced points of `line`; `s` is the distance from the start.
pub fn line_samples(solver: &dyn Solver, line: &Line) -> String {
    let len = (0..3)
        .map(|a| (line.to[a] - line.from[a]).powi(2))
        .sum::<f64>()
        .sqrt();
    let rows = (0..line.points).map(|k| {
        let t = k as f64 / (line.points - 1) as f64;
        let p = std::array::from_fn(|a| line.from[a] + t * (line.to[a] - line.from[a]));
        (format!("{:.9e}", t * len), p)
    });
    table(solver, "s", line.dim, rows)
}

/// A plane `axis = value` through a 3D case (`--plane z=0.5`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    pub axis: usize,
    pub value: f64,
}

impl std::str::FromStr for Plane {
    type Err = String;

    /// Parses `x=VALUE`, `y=VALUE` or `z=VALUE`.
    fn from_str(s: &str) -> Result<Plane, String> {
        let (axis, value) = s
            .split_once('=')
            .ok_or_else(|| format!("expected AXIS=VALUE with AXIS one of x, y, z, got `{s}`"))?;
        let axis = AXES
            .iter()
            .position(|a| *a == axis.trim())
            .ok_or_else(|| format!("the axis `{axis}` in `{s}` must be one of x, y, z"))?;
        Ok(Plane {
            axis,
            value: number(value.trim(), s)?,
        })
    }
}

impl Plane {
    /// `Err` unless the case is 3D and the plane cuts its domain.
    pub fn check_inside(&self, grid: &Grid) -> Result<(), String> {
        if grid.dim != 3 {
            return Err(format!(
                "planes cut 3D cases; this case is {}D (use --line)",
                grid.dim
            ));
        }
        let (lo, hi) = (
            grid.origin[self.axis],
            grid.origin[self.axis] + grid.extent(self.axis),
        );
        let slack = 1e-9 * (hi - lo);
        if !(self.value >= lo - slack && self.value <= hi + slack) {
            return Err(format!(
                "the plane {}={} lies outside the domain: {} runs from {lo} to {hi}",
                AXES[self.axis], self.value, AXES[self.axis]
            ));
        }
        Ok(())
    }
}

/// `x,y,z,<field>...` at the cell centres of the plane's two axes (the first varying fastest),
/// at the plane's coordinate along its own axis.
pub fn plane_samples(solver: &dyn Solver, plane: &Plane) -> String {
    let g = solver.info().grid;
    let [a, b] = match plane.axis {
        0 => [1, 2],
        1 => [0, 2],
        _ => [0, 1],
    };
    let rows = (0..g.n[b]).flat_map(move |j| {
        (0..g.n[a]).map(move |i| {
            let mut p = [0.0; 3];
            p[plane.axis] = plane.value;
            p[a] = g.centre(a, i);
            p[b] = g.centre(b, j);
            (String::new(), p)
        })
    });
    table(solver, "", 3, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_planes_parse_with_their_dimension() {
        let l: Line = "0,0.5,1,0.5,11".parse().unwrap();
        assert_eq!(
            (l.dim, l.from, l.to, l.points),
            (2, [0.0, 0.5, 0.0], [1.0, 0.5, 0.0], 11)
        );
        let l: Line = "0.5,0,0.5,0.5,1,0.5,3".parse().unwrap();
        assert_eq!((l.dim, l.from, l.to), (3, [0.5, 0.0, 0.5], [0.5, 1.0, 0.5]));
        assert!("0,0,0,1,1,2".parse::<Line>().unwrap_err().contains("7 values"));
        assert_eq!("z=0.25".parse::<Plane>().unwrap(), Plane { axis: 2, value: 0.25 });
        assert!("w=1".parse::<Plane>().unwrap_err().contains("x, y, z"));
        assert!("y=nan".parse::<Plane>().unwrap_err().contains("finite"));
        let g = Grid {
            dim: 3,
            n: [4; 3],
            origin: [0.0; 3],
            spacing: [0.25; 3],
        };
        assert!(
            "0,0,1,1,5"
                .parse::<Line>()
                .unwrap()
                .check_inside(&g)
                .unwrap_err()
                .contains("3D case")
        );
        assert!(
            Plane { axis: 0, value: 2.0 }
                .check_inside(&g)
                .unwrap_err()
                .contains("outside")
        );
        let g2 = Grid { dim: 2, ..g };
        assert!(
            Plane { axis: 0, value: 0.5 }
                .check_inside(&g2)
                .unwrap_err()
                .contains("3D cases")
        );
    }
}
