//! Isosurface meshes of 3D runs (`flowlab run --iso FIELD=LEVEL`): the surface
//! `field = level` of the cell-centred field ([`crate::render::isosurface`]), written as binary
//! little-endian PLY (vertex `x, y, z` as float, faces as `uchar` count and `int` indices), which
//! ParaView, Blender and MeshLab read.

use crate::render::isosurface::{Lattice, Mesh, extract};
use crate::solver::Solver;
use glam::Vec3;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// An isosurface asked for on the command line: a field and its level.
#[derive(Clone, Debug, PartialEq)]
pub struct Iso {
    pub field: String,
    pub level: f64,
}

impl std::str::FromStr for Iso {
    type Err = String;

    /// Parses `FIELD=LEVEL`, e.g. `speed=0.5`.
    fn from_str(s: &str) -> Result<Iso, String> {
        let (field, level) = s
            .split_once('=')
            .ok_or_else(|| format!("expected FIELD=LEVEL (e.g. speed=0.5), got `{s}`"))?;
        let level: f64 = level
            .trim()
            .parse()
            .ok()
            .filter(|l: &f64| l.is_finite())
            .ok_or_else(|| format!("the level `{level}` in `{s}` must be a finite number"))?;
        Ok(Iso {
            field: field.trim().to_string(),
            level,
        })
    }
}

/// A 3D solver's cell-centred field `name` as a lattice of f32 values at the cell centres
/// (lattice points `n`, origin, spacing); `None` when the solver has no such field or is not 3D.
pub fn cell_lattice(solver: &dyn Solver, name: &str) -> Option<(Vec<f32>, [usize; 3], Vec3, Vec3)> {
    let g = solver.info().grid;
    if g.dim != 3 {
        return None;
    }
    let mut values = Vec::new();
    solver.field(name, &mut values)?;
    let values: Vec<f32> = values.iter().map(|v| *v as f32).collect();
    let h = Vec3::new(g.spacing[0] as f32, g.spacing[1] as f32, g.spacing[2] as f32);
    let origin = Vec3::new(g.origin[0] as f32, g.origin[1] as f32, g.origin[2] as f32) + 0.5 * h;
    Some((values, g.n, origin, h))
}

/// The surface `iso.field = iso.level` of a 3D solver's current state, in the case's
/// coordinates; `None` when the solver has no such field (or is not 3D).
pub fn iso_mesh(solver: &dyn Solver, iso: &Iso) -> Option<Mesh> {
    let (values, n, origin, spacing) = cell_lattice(solver, &iso.field)?;
    let lattice = Lattice {
        values: &values,
        n,
        origin,
        spacing,
    };
    Some(extract(&lattice, iso.level as f32))
}

/// Writes the surfaces `field = level` of a 3D solver's current state, one binary PLY file a
/// level, into `dir` as `STEM_FIELD_LEVEL.ply`; returns the files written. The window's "save
/// the surfaces" (the levels it shows).
pub fn save_surfaces(
    solver: &dyn Solver,
    field: &str,
    levels: &[f64],
    dir: &Path,
    stem: &str,
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut written = Vec::with_capacity(levels.len());
    for &level in levels {
        let iso = Iso {
            field: field.to_string(),
            level,
        };
        let mesh = iso_mesh(solver, &iso).ok_or_else(|| format!("the state has no 3D field `{field}`"))?;
        let path = dir.join(format!("{stem}_{field}_{level:.4e}.ply"));
        let mut out = std::fs::File::create(&path)
            .map(io::BufWriter::new)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        write_ply(&mesh, &mut out)
            .and_then(|_| out.flush())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Writes `mesh` as binary little-endian PLY.
pub fn write_ply(mesh: &Mesh, out: &mut impl Write) -> io::Result<()> {
    write!(
        out,
        "ply\nformat binary_little_endian 1.0\ncomment FlowLab isosurface\nelement vertex {}\n\
         property float x\nproperty float y\nproperty float z\nelement face {}\n\
         property list uchar int vertex_indices\nend_header\n",
        mesh.positions.len(),
        mesh.triangles.len()
    )?;
    for p in &mesh.positions {
        for c in p.to_array() {
            out.write_all(&c.to_le_bytes())?;
        }
    }
    for t in &mesh.triangles {
        out.write_all(&[3])?;
        for i in t {
            out.write_all(&(*i as i32).to_le_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Case;

    #[test]
    fn iso_options_parse_or_say_why_not() {
        assert_eq!(
            "speed=0.25".parse::<Iso>(),
            Ok(Iso {
                field: "speed".into(),
                level: 0.25
            })
        );
        assert!("speed".parse::<Iso>().unwrap_err().contains("FIELD=LEVEL"));
        assert!("speed=nan".parse::<Iso>().unwrap_err().contains("finite"));
    }

    #[test]
    fn a_cavity_speed_surface_lies_in_the_box_and_is_written_as_ply() {
        let text = include_str!("../../cases/cavity_3d_re100.toml");
        let mut case = Case::parse(text, "cavity_3d_re100.toml").unwrap();
        for s in ["grid.nx=12", "grid.ny=12", "grid.nz=12", "solver.backend=\"cpu\""] {
            case.set_assignment(s).unwrap();
        }
        let mut solver = crate::solver::build(&case.spec).unwrap();
        for _ in 0..20 {
            solver.step().unwrap();
        }
        // At t = 0.033 the speed is up to 0.074 (in the cells under the lid).
        let iso = Iso {
            field: "speed".into(),
            level: 0.03,
        };
        let mesh = iso_mesh(solver.as_ref(), &iso).expect("speed is a field");
        assert!(!mesh.triangles.is_empty());
        assert!(
            mesh.positions
                .iter()
                .all(|p| p.min_element() >= 0.0 && p.max_element() <= 1.0)
        );
        let missing = Iso {
            field: "nosuch".into(),
            level: 0.0,
        };
        assert!(iso_mesh(solver.as_ref(), &missing).is_none());
        let mut bytes = Vec::new();
        write_ply(&mesh, &mut bytes).unwrap();
        let end = b"end_header\n";
        let body = bytes.windows(end.len()).position(|w| w == end).unwrap() + end.len();
        let header = String::from_utf8_lossy(&bytes[..body]);
        assert!(header.contains(&format!("element vertex {}", mesh.positions.len())));
        assert!(header.contains(&format!("element face {}", mesh.triangles.len())));
        assert_eq!(
            bytes.len() - body,
            12 * mesh.positions.len() + 13 * mesh.triangles.len()
        );
        // The window's "save the surfaces": one PLY file a level, each that level's mesh.
        let dir = std::env::temp_dir().join(format!("flowlab_surfaces_{}", std::process::id()));
        let files = save_surfaces(solver.as_ref(), "speed", &[0.03, 0.01], &dir, "cavity").unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(std::fs::read(&files[0]).unwrap(), bytes);
        let lower = iso_mesh(
            solver.as_ref(),
            &Iso {
                field: "speed".into(),
                level: 0.01,
            },
        )
        .unwrap();
        assert!(
            lower.triangles.len() != mesh.triangles.len(),
            "the second file's level"
        );
        let mut lower_bytes = Vec::new();
        write_ply(&lower, &mut lower_bytes).unwrap();
        assert_eq!(std::fs::read(&files[1]).unwrap(), lower_bytes);
        let e = save_surfaces(solver.as_ref(), "nosuch", &[0.1], &dir, "cavity").unwrap_err();
        assert!(e.contains("nosuch"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
