// 3D streamlines as tubes (src/render/stream_tubes.rs): per vertex a position, the outward
// normal of the tube and the colour of the field there, lit by a headlight (Lambert with a
// little specular) through the 3D view's world-to-clip matrix (src/render/camera.rs).

struct Uniforms {
    view_projection: mat4x4<f32>,
    // Towards the light (the camera), world space.
    light: vec4<f32>,
}

@group(0) @binding(0) var<uniform> u: Uniforms;

struct Lit {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) colour: vec4<f32>,
}

@vertex
fn vs_tube(
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) colour: vec4<f32>,
) -> Lit {
    return Lit(u.view_projection * vec4<f32>(position, 1.0), normal, colour);
}

@fragment
fn fs_tube(v: Lit) -> @location(0) vec4<f32> {
    let facing = abs(dot(normalize(v.normal), u.light.xyz));
    let highlight = 0.25 * pow(facing, 24.0);
    return vec4<f32>(v.colour.rgb * (0.3 + 0.7 * facing) + vec3<f32>(highlight), 1.0);
}
