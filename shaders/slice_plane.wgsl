// The slice of the 3D view (src/render/slice_plane.rs): the field view's own rendering of a
// plane through the grid (colour map, contours, arrows, streamlines), drawn as a texture on
// that plane and depth-tested with the isosurfaces (shaders/surface.wgsl).

struct Uniforms {
    view_projection: mat4x4<f32>,
}

@group(0) @binding(0) var<uniform> u: Uniforms;
@group(0) @binding(1) var image: texture_2d<f32>;
@group(0) @binding(2) var image_sampler: sampler;

struct Textured {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@vertex
fn vs_slice(@location(0) position: vec3<f32>, @location(1) uv: vec2<f32>) -> Textured {
    return Textured(u.view_projection * vec4<f32>(position, 1.0), uv);
}

@fragment
fn fs_slice(v: Textured) -> @location(0) vec4<f32> {
    return textureSample(image, image_sampler, v.uv);
}
