//! CSV tables: residual histories and 1D profiles (samples along lines and planes: `sampling`).

use crate::solver::{Solver, StepRecord};
use std::fmt::Write as _;

/// Residual history: one row per step.
#[derive(Clone, Debug, Default)]
pub struct ResidualLog {
    names: Vec<&'static str>,
    text: String,
}

impl ResidualLog {
    /// Appends one step's number, time, dt and residuals.
    pub fn record(&mut self, step: &StepRecord) {
        if self.names.is_empty() {
            self.names = step.residuals.iter().map(|(n, _)| *n).collect();
        }
        let _ = write!(self.text, "{},{:.12e},{:.6e}", step.steps, step.time, step.dt);
        for name in &self.names {
            let v = step.residual(name).unwrap_or(f64::NAN);
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
