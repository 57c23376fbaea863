// The opaque isosurfaces rasterised by a compute shader (src/render/surface_raster.rs), one
// invocation per triangle: on the datacenter GPUs of the GPU machines only a few
// multiprocessors run the graphics pipeline's vertex and raster work, and the surfaces of a
// 256^3 field are millions of triangles of a pixel or two, so the whole GPU rasterises them
// here (as FluidX3D draws its own graphics in compute kernels; Laine & Karras, "High-performance
// software rasterization on GPUs", HPG 2011, for why small triangles favour it).
//
// Two passes over every level's triangles, then a full-screen pass, over one buffer `drawn`
// of the canvas's pixels (one storage buffer, as the downlevel limits allow four a stage):
// each pixel's depth key first, then each pixel's colour, two words, after all the keys.
//   pass 0 keeps each pixel's nearest depth (atomicMax of the key ~bits(depth), depth in
//          [0, 1]: nearer is larger, 0 is no surface);
//   pass 1 finds for each pixel the triangle whose depth is that key and writes its shade
//          (`shade` of shaders/surface.wgsl: the same lighting and colouring as the pipeline's
//          fragments), four 16-bit channels;
//   `fs_raster_composite` writes those colours with their depth, depth-tested with the rest
//          of the 3D view.
// A pixel is covered where its centre lies inside the triangle or on an edge (both triangles
// of a shared edge cover it: each edge function is evaluated from its lower endpoint in one
// order, so the two triangles see the same value with opposite signs, and no pixel falls
// between them). Depth is interpolated linearly in the screen as the pipeline does, the
// normal and the colouring perspective-correctly. A triangle reaching in front of the near
// plane is not drawn (the pipeline would clip it). Follows shaders/field_lattice.wgsl,
// shaders/surface.wgsl, shaders/full_screen.wgsl and shaders/surface_vertex.wgsl in one module.

struct Raster {
    // The drawn rectangle in the target (x, y, width, height, pixels).
    canvas: vec4<f32>,
    // The canvas's pixels (pixel (i, j) of the buffers is the target's
    // (floor(canvas.x) + i, floor(canvas.y) + j)), the level's triangles, the pass (0 or 1).
    size: vec2<u32>,
    triangles: u32,
    stage: u32,
}

@group(0) @binding(3) var<uniform> raster: Raster;
@group(0) @binding(4) var<storage, read> vertices: array<Vertex>;
@group(0) @binding(5) var<storage, read_write> drawn: array<atomic<u32>>;
// The same buffer as the composite pass reads it.
@group(0) @binding(6) var<storage, read> drawn_read: array<u32>;

// Invocations of a workgroup (`RASTER_WORKGROUP` in src/render/surface_raster.rs).
const WORKGROUP: u32 = 64u;

// Twice the signed area of (a, b, c), evaluated from the lower of a and b (by y, then x), so
// that the edge (b, a) gives exactly the opposite value.
fn edge(a: vec2<f32>, b: vec2<f32>, c: vec2<f32>) -> f32 {
    if a.y < b.y || (a.y == b.y && a.x < b.x) {
        return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    }
    return -((a.x - b.x) * (c.y - b.y) - (a.y - b.y) * (c.x - b.x));
}

@compute @workgroup_size(64)
fn rasterise(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let triangle = (group.y * groups.x + group.x) * WORKGROUP + local;
    if triangle >= raster.triangles {
        return;
    }
    var clip: array<vec4<f32>, 3>;
    var p: array<vec3<f32>, 3>;
    for (var k = 0u; k < 3u; k++) {
        clip[k] = u.view_projection * vec4<f32>(vertices[3u * triangle + k].position.xyz, 1.0);
        if clip[k].w <= 0.0 || clip[k].z < 0.0 {
            return;
        }
        let ndc = clip[k].xyz / clip[k].w;
        p[k] = vec3<f32>(
            raster.canvas.x + (0.5 + 0.5 * ndc.x) * raster.canvas.z,
            raster.canvas.y + (0.5 - 0.5 * ndc.y) * raster.canvas.w,
            ndc.z,
        );
    }
    // The pixels whose centres the triangle's box holds, within the canvas.
    let origin = floor(raster.canvas.xy);
    let lo = max(ceil(min(min(p[0].xy, p[1].xy), p[2].xy) - 0.5), origin);
    let hi = min(floor(max(max(p[0].xy, p[1].xy), p[2].xy) - 0.5), origin + vec2<f32>(raster.size) - 1.0);
    if any(lo > hi) {
        return;
    }
    let area = edge(p[0].xy, p[1].xy, p[2].xy);
    if area == 0.0 {
        return;
    }
    var t = vec3<f32>(0.0);
    if raster.stage == 1u {
        for (var k = 0u; k < 3u; k++) {
            t[k] = colouring_at(vertices[3u * triangle + k].position.xyz);
        }
    }
    for (var y = lo.y; y <= hi.y; y += 1.0) {
        for (var x = lo.x; x <= hi.x; x += 1.0) {
            let c = vec2<f32>(x + 0.5, y + 0.5);
            let b = vec3<f32>(
                edge(p[1].xy, p[2].xy, c),
                edge(p[2].xy, p[0].xy, c),
                edge(p[0].xy, p[1].xy, c),
            ) / area;
            if any(b < vec3<f32>(0.0)) {
                continue;
            }
            let depth = b.x * p[0].z + b.y * p[1].z + b.z * p[2].z;
            if depth > 1.0 {
                continue;
            }
            // (+0 for -0, whose bits would order it behind the far plane.)
            let key = ~bitcast<u32>(select(depth, 0.0, depth <= 0.0));
            let pixel = u32(y - origin.y) * raster.size.x + u32(x - origin.x);
            if raster.stage == 0u {
                atomicMax(&drawn[pixel], key);
            } else if atomicLoad(&drawn[pixel]) == key {
                // Perspective-correct weights of the vertices.
                var q = b / vec3<f32>(clip[0].w, clip[1].w, clip[2].w);
                q /= q.x + q.y + q.z;
                let normal = q.x * vertices[3u * triangle].normal.xyz
                    + q.y * vertices[3u * triangle + 1u].normal.xyz
                    + q.z * vertices[3u * triangle + 2u].normal.xyz;
                let shaded = shade(normal, dot(q, t));
                let colour = raster.size.x * raster.size.y + 2u * pixel;
                atomicStore(&drawn[colour], pack2x16unorm(shaded.rg));
                atomicStore(&drawn[colour + 1u], pack2x16unorm(shaded.ba));
            }
        }
    }
}

struct Composited {
    @location(0) colour: vec4<f32>,
    @builtin(frag_depth) depth: f32,
}

@fragment
fn fs_raster_composite(@builtin(position) frag: vec4<f32>) -> Composited {
    let p = vec2<i32>(floor(frag.xy)) - vec2<i32>(floor(raster.canvas.xy));
    if any(p < vec2<i32>(0)) || any(vec2<u32>(p) >= raster.size) {
        discard;
    }
    let pixel = u32(p.y) * raster.size.x + u32(p.x);
    let key = drawn_read[pixel];
    if key == 0u {
        discard;
    }
    let colour = raster.size.x * raster.size.y + 2u * pixel;
    let rgba = vec4<f32>(unpack2x16unorm(drawn_read[colour]), unpack2x16unorm(drawn_read[colour + 1u]));
    return Composited(rgba, bitcast<f32>(~key));
}
