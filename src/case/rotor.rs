//! `[rotor]`: a rotor that is not meshed, its loads entering the momentum equations as sources
//! ([`crate::solver::rotor`]). Either a uniformly loaded actuator disk (`thrust`) or blade
//! elements (`blades` and the keys after it). Angles in degrees in the file, lengths, speeds
//! and forces in the case's units; the fluid's density is `physics.density`.

use super::validate::{Invalid, positive};
use crate::solver::rotor::blade_element::{Airfoil, Blades};
use crate::solver::rotor::{Loading, Rotor};
use serde::{Deserialize, Serialize};

/// The keys of blade-element loading, each refused on a uniform disk.
const BLADE_KEYS: [&str; 8] = [
    "blades",
    "chord",
    "twist",
    "collective",
    "omega",
    "lift_slope",
    "zero_lift_angle",
    "drag",
];

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RotorSpec {
    /// The disk's centre.
    pub centre: Vec<f64>,
    /// The thrust's direction (normalised on reading); the blades turn right-handed about it.
    pub axis: Vec<f64>,
    pub radius: f64,
    /// Root cut-out radius (default 0).
    pub root_cutout: Option<f64>,
    /// A uniformly loaded actuator disk carrying this thrust [force].
    pub thrust: Option<f64>,
    /// Number of blades.
    pub blades: Option<u32>,
    /// Chord: one value, or `[root, tip]` for a linear taper.
    pub chord: Option<Chord>,
    /// Linear twist from axis to tip [deg] (negative: wash-out; default 0).
    pub twist: Option<f64>,
    /// Collective pitch at 3/4 radius [deg].
    pub collective: Option<f64>,
    /// Rotational speed [rad / time].
    pub omega: Option<f64>,
    /// Aerofoil lift slope [1/rad] (default 2 pi).
    pub lift_slope: Option<f64>,
    /// Zero-lift angle [deg] (default 0).
    pub zero_lift_angle: Option<f64>,
    /// Drag polar `[c_d0, c_d1, c_d2]` in the angle of attack in radians (default `[0.01, 0, 0]`).
    pub drag: Option<Vec<f64>>,
    /// Smoothing width of the sources, in cells (default 1.5; Sørensen & Shen's 1 to 2).
    pub smoothing: Option<f64>,
}

/// `rotor.chord`: constant, or `[root, tip]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Chord {
    Constant(f64),
    Taper(Vec<f64>),
}

impl RotorSpec {
    fn blade_key(&self, key: &str) -> bool {
        match key {
            "blades" => self.blades.is_some(),
            "chord" => self.chord.is_some(),
            "twist" => self.twist.is_some(),
            "collective" => self.collective.is_some(),
            "omega" => self.omega.is_some(),
            "lift_slope" => self.lift_slope.is_some(),
            "zero_lift_angle" => self.zero_lift_angle.is_some(),
            _ => self.drag.is_some(),
        }
    }

    /// The rotor of this section in a `dim`-dimensional case with fluid density `rho`, every
    /// key checked (the error names it and what it allows).
    pub fn rotor(&self, dim: usize, rho: f64) -> Result<Rotor, Invalid> {
        if dim != 3 {
            return Err(Invalid::new(
                "rotor",
                format!("a rotor needs a 3D case (case.dim = 3), got dim = {dim}"),
            ));
        }
        let vector = |key: &str, v: &[f64]| -> Result<[f64; 3], Invalid> {
            match v {
                [x, y, z] if v.iter().all(|c| c.is_finite()) => Ok([*x, *y, *z]),
                _ => Err(Invalid::new(
                    key,
                    format!("must be three finite numbers, got {v:?}"),
                )),
            }
        };
        let centre = vector("rotor.centre", &self.centre)?;
        let axis = vector("rotor.axis", &self.axis)?;
        let length = axis.iter().map(|a| a * a).sum::<f64>().sqrt();
        if length == 0.0 {
            return Err(Invalid::new("rotor.axis", "must not be zero"));
        }
        positive("rotor.radius", self.radius)?;
        let root = self.root_cutout.unwrap_or(0.0);
        if !(0.0..self.radius).contains(&root) {
            return Err(Invalid::new(
                "rotor.root_cutout",
                format!("must lie in [0, radius = {}), got {root}", self.radius),
            ));
        }
        positive("physics.density", rho)?;
        let loading = match (self.thrust, BLADE_KEYS.iter().find(|k| self.blade_key(k))) {
            (Some(_), Some(key)) => {
                return Err(Invalid::new(
                    format!("rotor.{key}"),
                    "a uniform disk (rotor.thrust) has no blades: give either thrust or the blade keys",
                ));
            }
            (Some(thrust), None) if thrust.is_finite() => Loading::Uniform { thrust },
            (Some(thrust), None) => {
                return Err(Invalid::new(
                    "rotor.thrust",
                    format!("must be finite, got {thrust}"),
                ));
            }
            (None, _) => Loading::Blades(self.blades()?),
        };
        Ok(Rotor {
            centre,
            axis: axis.map(|a| a / length),
            radius: self.radius,
            root,
            rho,
            loading,
        })
    }

    fn blades(&self) -> Result<Blades, Invalid> {
        let missing = |key: &str| {
            Invalid::new(
                format!("rotor.{key}"),
                "missing: a rotor needs either thrust (a uniform disk) or blades, chord, collective and omega",
            )
        };
        let count = self.blades.ok_or_else(|| missing("blades"))?;
        if count == 0 {
            return Err(Invalid::new("rotor.blades", "must be at least 1"));
        }
        let chord = match self.chord.as_ref().ok_or_else(|| missing("chord"))? {
            Chord::Constant(c) => [*c, *c],
            Chord::Taper(t) if t.len() == 2 => [t[0], t[1]],
            Chord::Taper(other) => {
                return Err(Invalid::new(
                    "rotor.chord",
                    format!("must be one chord or [root, tip], got {other:?}"),
                ));
            }
        };
        for c in chord {
            positive("rotor.chord", c)?;
        }
        let omega = self.omega.ok_or_else(|| missing("omega"))?;
        positive("rotor.omega", omega)?;
        let collective = self.collective.ok_or_else(|| missing("collective"))?;
        let lift_slope = self.lift_slope.unwrap_or(2.0 * std::f64::consts::PI);
        positive("rotor.lift_slope", lift_slope)?;
        let drag = match self.drag.as_deref().unwrap_or(&[0.01, 0.0, 0.0]) {
            [d0, d1, d2] if [d0, d1, d2].iter().all(|d| d.is_finite()) && *d0 >= 0.0 => [*d0, *d1, *d2],
            other => {
                return Err(Invalid::new(
                    "rotor.drag",
                    format!("must be [c_d0, c_d1, c_d2], finite, c_d0 >= 0, got {other:?}"),
                ));
            }
        };
        let degrees = |key: &str, v: f64| {
            if v.is_finite() && v.abs() < 90.0 {
                Ok(v.to_radians())
            } else {
                Err(Invalid::new(
                    key,
                    format!("must be an angle in degrees within (-90, 90), got {v}"),
                ))
            }
        };
        Ok(Blades {
            count,
            chord,
            twist: degrees("rotor.twist", self.twist.unwrap_or(0.0))?,
            collective: degrees("rotor.collective", collective)?,
            omega,
            airfoil: Airfoil {
                lift_slope,
                zero_lift_angle: degrees("rotor.zero_lift_angle", self.zero_lift_angle.unwrap_or(0.0))?,
                drag,
            },
        })
    }

    /// The smoothing width in cells.
    pub fn smoothing_cells(&self) -> Result<f64, Invalid> {
        let s = self.smoothing.unwrap_or(1.5);
        if (0.5..=4.0).contains(&s) {
            Ok(s)
        } else {
            Err(Invalid::new(
                "rotor.smoothing",
                format!("must lie in [0.5, 4] cells, got {s}"),
            ))
        }
    }
}
