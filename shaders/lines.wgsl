// Streamlines as screen-space quads, one instance per segment: instances [0, n) draw a dark
// outline, instances [n, 2n) the light core on top of it, so the lines read on any colormap.

struct LineOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) index: u32, @builtin(instance_index) instance: u32) -> LineOut {
    let n = P.extra.z;
    let core = instance >= n;
    let seg = segments[instance % n];
    let a = P.view * vec4<f32>(seg.xy, 0.0, 1.0);
    let b = P.view * vec4<f32>(seg.zw, 0.0, 1.0);
    let pa = a.xy * P.viewport.xy;
    let pb = b.xy * P.viewport.xy;
    var dir = pb - pa;
    if length(dir) > 0.0 {
        dir = normalize(dir);
    } else {
        dir = vec2<f32>(1.0, 0.0);
    }
    var width = P.viewport.w;
    if !core {
        width = width + 2.0;
    }
    // Half width and half-pixel end extension, in clip units (clip spans 2 per viewport).
    let normal = vec2<f32>(-dir.y, dir.x) * width / P.viewport.xy;
    let along = dir * 0.5 * width / P.viewport.xy;
    var corner = array<vec3<f32>, 6>(
        vec3<f32>(0.0, -1.0, -1.0), vec3<f32>(1.0, -1.0, 1.0), vec3<f32>(0.0, 1.0, -1.0),
        vec3<f32>(0.0, 1.0, -1.0), vec3<f32>(1.0, -1.0, 1.0), vec3<f32>(1.0, 1.0, 1.0),
    );
    let c = corner[index];
    let p = mix(a.xy, b.xy, c.x) + normal * c.y + along * c.z;
    var out: LineOut;
    out.position = vec4<f32>(p, 0.0, 1.0);
    if core {
        out.color = vec4<f32>(1.0, 1.0, 1.0, 0.95);
    } else {
        out.color = vec4<f32>(0.0, 0.0, 0.0, 0.6);
    }
    return out;
}

@fragment
fn fs_main(in: LineOut) -> @location(0) vec4<f32> {
    return in.color;
}
