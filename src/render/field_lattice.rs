//! A cell-centred scalar field of a 3D grid as the 3D view's shaders read it
//! (`shaders/field_lattice.wgsl`, put in front of the shader that uses it): where its cells
//! lie, and the colour scale its values map to. The volume rendering marches through one; the
//! isosurfaces are coloured by one.

use super::colormap::Colormap;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// The WGSL of the lattice: `FieldLattice`, `lattice_sample`, `scale_position`.
pub const SHADER: &str = include_str!("../../shaders/field_lattice.wgsl");

/// `FieldLattice` in the shader. The `w` parts of `origin`, `spacing` and `range` are the
/// using shader's own.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct FieldLattice {
    pub origin: [f32; 4],
    pub spacing: [f32; 4],
    pub cells: [u32; 4],
    pub range: [f32; 4],
}

/// A field on the lattice and its colour scale: the cell values (`n` cells, x fastest, cell
/// `(i, j, k)` centred at `origin + spacing * (i, j, k)`) on the scale `range` of `colormap`.
pub struct ColouredField<'a> {
    pub values: &'a [f32],
    pub n: [u32; 3],
    pub origin: Vec3,
    pub spacing: Vec3,
    pub range: [f32; 2],
    pub log_scale: bool,
    pub diverging: bool,
    pub colormap: Colormap,
}

impl ColouredField<'_> {
    /// The shader's description of it (the `w` parts zero).
    pub fn lattice(&self) -> FieldLattice {
        let p = |v: Vec3| [v.x, v.y, v.z, 0.0];
        FieldLattice {
            origin: p(self.origin),
            spacing: p(self.spacing),
            cells: [self.n[0], self.n[1], self.n[2], self.log_scale as u32],
            range: [self.range[0], self.range[1], self.diverging as u32 as f32, 0.0],
        }
    }
}

/// The colormap's table as the shaders read it (`array<vec4<f32>, 256>`, RGBA from 0 to 1).
pub fn lut(colormap: Colormap) -> Vec<[f32; 4]> {
    colormap
        .lut()
        .iter()
        .map(|c| c.map(|v| v as f32 / 255.0))
        .collect()
}

/// The bytes of [`lut`].
pub const LUT_BYTES: u64 = 256 * 16;
