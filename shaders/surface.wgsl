// The 3D view's surfaces and lines: isosurface triangles (position and normal per vertex, from
// shaders/isosurface.wgsl) lit by a headlight with two-sided Lambert shading, and the domain's
// bounding box as lines, both through one world-to-clip matrix (src/render/camera.rs).

struct Uniforms {
    view_projection: mat4x4<f32>,
    // Towards the light (the camera), world space.
    light: vec4<f32>,
    colour: vec4<f32>,
}

@group(0) @binding(0) var<uniform> u: Uniforms;

struct Lit {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
}

@vertex
fn vs_surface(@location(0) position: vec4<f32>, @location(1) normal: vec4<f32>) -> Lit {
    return Lit(u.view_projection * vec4<f32>(position.xyz, 1.0), normal.xyz);
}

@fragment
fn fs_surface(v: Lit) -> @location(0) vec4<f32> {
    let diffuse = abs(dot(normalize(v.normal), u.light.xyz));
    return vec4<f32>(u.colour.rgb * (0.25 + 0.75 * diffuse), 1.0);
}

@vertex
fn vs_line(@location(0) position: vec3<f32>) -> @builtin(position) vec4<f32> {
    return u.view_projection * vec4<f32>(position, 1.0);
}

@fragment
fn fs_line() -> @location(0) vec4<f32> {
    return u.colour;
}
