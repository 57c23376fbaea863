// Velocity arrows on a regular lattice: one instance per arrow, built in the vertex shader from
// the bilinearly sampled velocity (shaft: two triangles, head: one triangle), length
// proportional to the speed.

struct ArrowOut {
    @builtin(position) position: vec4<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) index: u32, @builtin(instance_index) instance: u32) -> ArrowOut {
    let lattice = P.extra.xy;
    let ij = vec2<f32>(f32(instance % lattice.x), f32(instance / lattice.x));
    let base = P.domain.xy + (ij + vec2<f32>(0.5)) / vec2<f32>(lattice) * P.domain.zw;
    let vel = sample_velocity(base);
    let len = length(vel) * P.viewport.z;
    var dir = vec2<f32>(1.0, 0.0);
    if len > 0.0 {
        dir = normalize(vel);
    }
    let across = vec2<f32>(-dir.y, dir.x);
    // Local (along, across) coordinates in units of the arrow length, centred on the lattice point.
    var local = array<vec2<f32>, 9>(
        vec2<f32>(-0.5, -0.04), vec2<f32>(0.2, -0.04), vec2<f32>(-0.5, 0.04),
        vec2<f32>(-0.5, 0.04), vec2<f32>(0.2, -0.04), vec2<f32>(0.2, 0.04),
        vec2<f32>(0.2, -0.14), vec2<f32>(0.5, 0.0), vec2<f32>(0.2, 0.14),
    );
    let l = local[index];
    let w = base + (dir * l.x + across * l.y) * len;
    var out: ArrowOut;
    out.position = P.view * vec4<f32>(w, 0.0, 1.0);
    return out;
}

@fragment
fn fs_main() -> @location(0) vec4<f32> {
    return vec4<f32>(0.02, 0.02, 0.02, 0.85);
}
