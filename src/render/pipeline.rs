//! The render pipelines of the views, built from what sets them apart ([`PipelineSpec`]): one
//! WGSL module, one bind group layout, a vertex and a fragment entry point, the vertex buffer
//! layouts, the topology, the 3D view's depth test or none, and the blending.

/// The WGSL of `vs_full_screen`: one triangle covering the viewport (put in front of the
/// shader of a pass that draws an image a compute shader made).
pub const FULL_SCREEN: &str = include_str!("../../shaders/full_screen.wgsl");

/// The target's pixels the rectangle `canvas` (x, y, width, height, pixels) touches, at least
/// one each way: the size of an image a compute shader makes for it.
pub fn canvas_pixels(canvas: [f32; 4]) -> [u32; 2] {
    [
        ((canvas[0] + canvas[2]).ceil() - canvas[0].floor()).max(1.0) as u32,
        ((canvas[1] + canvas[3]).ceil() - canvas[1].floor()).max(1.0) as u32,
    ]
}

/// What a view's render pipeline consists of.
pub struct PipelineSpec<'a> {
    pub label: &'a str,
    /// WGSL source of both entry points.
    pub shader: &'a str,
    pub layout: &'a wgpu::BindGroupLayout,
    pub vertex: &'a str,
    pub fragment: &'a str,
    pub buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    pub topology: wgpu::PrimitiveTopology,
    /// How it meets the 3D view's depth buffer.
    pub depth: Depth,
    pub blend: Option<wgpu::BlendState>,
    pub format: wgpu::TextureFormat,
}

/// How a pipeline meets the 3D view's depth buffer ([`super::surface::DEPTH`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Not at all (the 2D view, the volume rendering's full-screen pass).
    None,
    /// Nearer fragments win and are written (opaque geometry).
    TestAndWrite,
    /// Hidden behind nearer opaque geometry, written to the colour only (transparent
    /// geometry drawn after the opaque).
    Test,
}

/// The pipeline `spec` describes.
pub fn render_pipeline(device: &wgpu::Device, spec: &PipelineSpec) -> wgpu::RenderPipeline {
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(spec.label),
        bind_group_layouts: &[Some(spec.layout)],
        immediate_size: 0,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(spec.label),
        source: wgpu::ShaderSource::Wgsl(spec.shader.into()),
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(spec.label),
        layout: Some(&layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some(spec.vertex),
            compilation_options: Default::default(),
            buffers: spec.buffers,
        },
        primitive: wgpu::PrimitiveState {
            topology: spec.topology,
            ..Default::default()
        },
        depth_stencil: match spec.depth {
            Depth::None => None,
            Depth::TestAndWrite => Some(super::surface::depth_test(true)),
            Depth::Test => Some(super::surface::depth_test(false)),
        },
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some(spec.fragment),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: spec.format,
                blend: spec.blend,
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// A bind group layout entry at `binding` seen by the vertex and fragment stages.
pub fn entry(binding: u32, ty: wgpu::BindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
        ty,
        count: None,
    }
}

/// A uniform buffer binding.
pub const UNIFORM: wgpu::BindingType = wgpu::BindingType::Buffer {
    ty: wgpu::BufferBindingType::Uniform,
    has_dynamic_offset: false,
    min_binding_size: None,
};

/// A read-only storage buffer binding.
pub const STORAGE: wgpu::BindingType = wgpu::BindingType::Buffer {
    ty: wgpu::BufferBindingType::Storage { read_only: true },
    has_dynamic_offset: false,
    min_binding_size: None,
};
