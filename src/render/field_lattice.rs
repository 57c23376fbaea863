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

/// A [`ColouredField`] on the GPU, as the shaders bind it: its values in a storage buffer
/// (`field`), grown as needed, and its colormap's table (`lut`), rewritten when the colormap
/// changes.
pub struct FieldBuffers {
    pub values: wgpu::Buffer,
    pub lut: wgpu::Buffer,
    colormap: Option<Colormap>,
    /// What the field is, for buffer labels and errors.
    what: &'static str,
}

impl FieldBuffers {
    /// Empty buffers for the field `what` (a placeholder until the first upload).
    pub fn new(device: &wgpu::Device, what: &'static str) -> FieldBuffers {
        FieldBuffers {
            values: storage(device, what, 16),
            lut: storage(device, what, LUT_BYTES),
            colormap: None,
            what,
        }
    }

    /// Uploads `field`; returns whether the values' buffer was remade (bind groups that hold it
    /// are stale). An error, naming the field, if it exceeds the GPU's storage buffer limit.
    pub fn upload(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        field: &ColouredField,
    ) -> Result<bool, String> {
        let bytes = std::mem::size_of_val(field.values) as u64;
        let limit = super::gpu::storage_buffer_limit(device);
        if bytes > limit {
            return Err(format!(
                "the {} is {} MiB, over the GPU's storage buffer limit of {} MiB",
                self.what,
                bytes >> 20,
                limit >> 20
            ));
        }
        let remade = self.values.size() < bytes;
        if remade {
            self.values = storage(device, self.what, bytes);
        }
        queue.write_buffer(&self.values, 0, bytemuck::cast_slice(field.values));
        if self.colormap != Some(field.colormap) {
            queue.write_buffer(&self.lut, 0, bytemuck::cast_slice(&lut(field.colormap)));
            self.colormap = Some(field.colormap);
        }
        Ok(remade)
    }
}

/// A storage buffer of `bytes`, written from the host.
fn storage(device: &wgpu::Device, label: &str, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// The colormap's table as the shaders read it (`array<vec4<f32>, 256>`, RGBA from 0 to 1).
fn lut(colormap: Colormap) -> Vec<[f32; 4]> {
    colormap
        .lut()
        .iter()
        .map(|c| c.map(|v| v as f32 / 255.0))
        .collect()
}

/// The bytes of [`lut`].
const LUT_BYTES: u64 = 256 * 16;
