// The 3D view's surfaces and lines: isosurface triangles (position and normal per vertex, from
// shaders/isosurface.wgsl) lit by a headlight with two-sided Lambert shading, in a colour of
// their own or coloured by another field sampled at the vertices (shaders/field_lattice.wgsl,
// which comes first in the module), opaque or premultiplied transparent; and the domain's
// bounding box as lines, both through one world-to-clip matrix (src/render/camera.rs).

struct Uniforms {
    view_projection: mat4x4<f32>,
    // Towards the light (the camera), world space.
    light: vec4<f32>,
    // The item's colour; a: the surfaces' opacity.
    colour: vec4<f32>,
    // The field colouring the surfaces; range.w: 1 when it does.
    lattice: FieldLattice,
}

@group(0) @binding(0) var<uniform> u: Uniforms;
@group(0) @binding(1) var<storage, read> field: array<f32>;
@group(0) @binding(2) var<storage, read> lut: array<vec4<f32>, 256>;

struct Lit {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    // Position on the colouring field's scale (0 to 1), when it colours.
    @location(1) t: f32,
}

@vertex
fn vs_surface(@location(0) position: vec4<f32>, @location(1) normal: vec4<f32>) -> Lit {
    return Lit(u.view_projection * vec4<f32>(position.xyz, 1.0), normal.xyz, colouring_at(position.xyz));
}

// The colour of a surface point with `normal` (any length) at `t` on the colouring field's
// scale, premultiplied by the surfaces' opacity.
fn shade(normal: vec3<f32>, t: f32) -> vec4<f32> {
    var base = u.colour.rgb;
    if u.lattice.range.w == 1.0 {
        base = lut[u32(round(clamp(t, 0.0, 1.0) * 255.0))].rgb;
    }
    let diffuse = abs(dot(normalize(normal), u.light.xyz));
    let a = u.colour.a;
    return vec4<f32>(a * base * (0.25 + 0.75 * diffuse), a);
}

// Position of world point `p` on the colouring field's scale (0 when none colours).
fn colouring_at(p: vec3<f32>) -> f32 {
    if u.lattice.range.w == 1.0 {
        return scale_position(u.lattice, lattice_sample(u.lattice, p));
    }
    return 0.0;
}

@fragment
fn fs_surface(v: Lit) -> @location(0) vec4<f32> {
    return shade(v.normal, v.t);
}

@vertex
fn vs_line(@location(0) position: vec3<f32>) -> @builtin(position) vec4<f32> {
    return u.view_projection * vec4<f32>(position, 1.0);
}

@fragment
fn fs_line() -> @location(0) vec4<f32> {
    return u.colour;
}
