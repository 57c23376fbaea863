// Direct volume rendering of a scalar field (src/render/volume_render.rs): one ray per pixel of
// the canvas, in a compute shader (`march`, into an image the canvas's size), from the camera
// through the domain's box, marched front to back in steps of half a cell, the field
// sampled trilinearly between cell centres, mapped to a colour by the colormap table and to an
// opacity by a piecewise-linear curve (4 values at t = 0, 1/3, 2/3, 1 of the colour scale), the
// opacity corrected for the step length (1 - (1 - a)^(step / cell)), and composited
// (Levoy 1988; Engel et al., Real-Time Volume Graphics, 2006, ch. 7). Follows
// shaders/field_lattice.wgsl and shaders/full_screen.wgsl in one module. The ray stops at the
// opaque scene's depth; the result is premultiplied and a full-screen pass (`fs_composite`)
// blends it over the scene.

struct Uniforms {
    inverse_view_projection: mat4x4<f32>,
    box_min: vec4<f32>,
    box_max: vec4<f32>,
    // The field (shaders/field_lattice.wgsl); origin.w: the march step, world units;
    // spacing.w: the reference step of the opacity curve (the smallest cell side).
    lattice: FieldLattice,
    opacity: vec4<f32>,
    // The drawn rectangle in the target (x, y, width, height, pixels).
    canvas: vec4<f32>,
}

@group(0) @binding(0) var<uniform> u: Uniforms;
@group(0) @binding(1) var<storage, read> field: array<f32>;
@group(0) @binding(2) var<storage, read> lut: array<vec4<f32>, 256>;
@group(0) @binding(3) var scene_depth: texture_depth_2d;
// The marched image: pixel (i, j) is the target's (floor(canvas.x) + i, floor(canvas.y) + j).
@group(0) @binding(4) var marched_out: texture_storage_2d<rgba16float, write>;
@group(0) @binding(5) var marched: texture_2d<f32>;

fn opacity_at(t: f32) -> f32 {
    let x = 3.0 * t;
    let k = min(u32(x), 2u);
    return mix(u.opacity[k], u.opacity[k + 1u], x - f32(k));
}

fn world(ndc: vec2<f32>, depth: f32) -> vec3<f32> {
    let h = u.inverse_view_projection * vec4<f32>(ndc, depth, 1.0);
    return h.xyz / h.w;
}

@compute @workgroup_size(8, 8)
fn march(@builtin(global_invocation_id) id: vec3<u32>) {
    if any(id.xy >= textureDimensions(marched_out)) {
        return;
    }
    let pixel = vec2<i32>(floor(u.canvas.xy)) + vec2<i32>(id.xy);
    let centre = vec2<f32>(pixel) + 0.5;
    let ndc = vec2<f32>(
        2.0 * (centre.x - u.canvas.x) / u.canvas.z - 1.0,
        1.0 - 2.0 * (centre.y - u.canvas.y) / u.canvas.w,
    );
    let origin = world(ndc, 0.0);
    let direction = normalize(world(ndc, 1.0) - origin);
    // The ray's stretch inside the box (slab method).
    let inverse = 1.0 / direction;
    let a = (u.box_min.xyz - origin) * inverse;
    let b = (u.box_max.xyz - origin) * inverse;
    let enter = max(max(min(a.x, b.x), min(a.y, b.y)), max(min(a.z, b.z), 0.0));
    var leave = min(min(max(a.x, b.x), max(a.y, b.y)), max(a.z, b.z));
    let depth = textureLoad(scene_depth, pixel, 0);
    if depth < 1.0 {
        leave = min(leave, dot(world(ndc, depth) - origin, direction));
    }
    let step = u.lattice.origin.w;
    let correction = step / u.lattice.spacing.w;
    var colour = vec3<f32>(0.0);
    var alpha = 0.0;
    for (var s = enter + 0.5 * step; s < leave && alpha < 0.99; s += step) {
        let t = scale_position(u.lattice, lattice_sample(u.lattice, origin + s * direction));
        let a = 1.0 - pow(1.0 - clamp(opacity_at(t), 0.0, 0.999), correction);
        let c = lut[u32(round(t * 255.0))].rgb;
        colour += (1.0 - alpha) * a * c;
        alpha += (1.0 - alpha) * a;
    }
    textureStore(marched_out, id.xy, vec4<f32>(colour, alpha));
}

@fragment
fn fs_composite(@builtin(position) frag: vec4<f32>) -> @location(0) vec4<f32> {
    return textureLoad(marched, vec2<i32>(floor(frag.xy)) - vec2<i32>(floor(u.canvas.xy)), 0);
}
