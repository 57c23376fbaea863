// Shared by every field-view shader: the per-frame parameters, the field buffers and bilinear
// sampling of cell-centred data (x fastest). Prepended to each feature's shader source.

struct Params {
    // World -> clip transform.
    view: mat4x4<f32>,
    // Domain origin (xy) and extent (zw).
    domain: vec4<f32>,
    // Colour range (xy) and contour range (zw).
    range: vec4<f32>,
    // Viewport size in pixels (xy), arrow length per unit speed (z), line width in pixels (w).
    viewport: vec4<f32>,
    // Cells nx, ny; contour level count; flags (bit 0 log scale, bit 1 diverging).
    counts: vec4<u32>,
    // Arrow lattice (xy); number of streamline segments (z).
    extra: vec4<u32>,
};

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> field: array<f32>;
@group(0) @binding(2) var<storage, read> contour_field: array<f32>;
@group(0) @binding(3) var<storage, read> vel_u: array<f32>;
@group(0) @binding(4) var<storage, read> vel_v: array<f32>;
@group(0) @binding(5) var lut: texture_2d<f32>;
@group(0) @binding(6) var lut_sampler: sampler;
@group(0) @binding(7) var<storage, read> segments: array<vec4<f32>>;

// Fractional cell coordinates of a world point (cell centres at integers), clamped to the grid.
fn cell_coords(w: vec2<f32>) -> vec2<f32> {
    let n = vec2<f32>(f32(P.counts.x), f32(P.counts.y));
    let c = (w - P.domain.xy) / P.domain.zw * n - vec2<f32>(0.5);
    return clamp(c, vec2<f32>(0.0), n - vec2<f32>(1.0));
}

// Bilinear weights and corner indices of a world point.
struct Corners {
    i: vec4<u32>,
    t: vec2<f32>,
};

fn corners(w: vec2<f32>) -> Corners {
    let c = cell_coords(w);
    let nx = P.counts.x;
    let i0 = u32(floor(c.x));
    let j0 = u32(floor(c.y));
    let i1 = min(i0 + 1u, nx - 1u);
    let j1 = min(j0 + 1u, P.counts.y - 1u);
    return Corners(vec4<u32>(j0 * nx + i0, j0 * nx + i1, j1 * nx + i0, j1 * nx + i1), c - floor(c));
}

fn mix4(a: f32, b: f32, c: f32, d: f32, t: vec2<f32>) -> f32 {
    return mix(mix(a, b, t.x), mix(c, d, t.x), t.y);
}

fn sample_field(w: vec2<f32>) -> f32 {
    let k = corners(w);
    return mix4(field[k.i.x], field[k.i.y], field[k.i.z], field[k.i.w], k.t);
}

fn sample_contour(w: vec2<f32>) -> f32 {
    let k = corners(w);
    return mix4(contour_field[k.i.x], contour_field[k.i.y], contour_field[k.i.z], contour_field[k.i.w], k.t);
}

fn sample_velocity(w: vec2<f32>) -> vec2<f32> {
    let k = corners(w);
    return vec2<f32>(
        mix4(vel_u[k.i.x], vel_u[k.i.y], vel_u[k.i.z], vel_u[k.i.w], k.t),
        mix4(vel_v[k.i.x], vel_v[k.i.y], vel_v[k.i.z], vel_v[k.i.w], k.t),
    );
}

// The domain rectangle covered by one oversized triangle (so 2x2 derivative quads never straddle
// two primitives); `unit` is the position in domain units, inside the domain where in [0, 1]^2.
struct QuadOut {
    @builtin(position) position: vec4<f32>,
    @location(0) world: vec2<f32>,
    @location(1) unit: vec2<f32>,
};

fn domain_quad(index: u32) -> QuadOut {
    var corner = array<vec2<f32>, 3>(vec2<f32>(0.0, 0.0), vec2<f32>(2.0, 0.0), vec2<f32>(0.0, 2.0));
    let w = P.domain.xy + corner[index] * P.domain.zw;
    var out: QuadOut;
    out.position = P.view * vec4<f32>(w, 0.0, 1.0);
    out.world = w;
    out.unit = corner[index];
    return out;
}

// Whether a fragment lies outside the domain.
fn outside(unit: vec2<f32>) -> bool {
    return unit.x > 1.0 || unit.y > 1.0;
}
