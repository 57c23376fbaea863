// Isosurface extraction on the GPU: marching tetrahedra on the Kuhn triangulation, the same
// cases, crossings, interpolation and orientation as the CPU reference (src/render/isosurface/mod.rs),
// one invocation per lattice cube. A workgroup first counts its cubes' triangles (from the
// corners' sides of the level alone), takes its stretch of `triangles` with one atomicAdd on
// the counter `count` (one per workgroup rather than one per triangle: a single address's
// atomics serialise), then each cube writes its triangles into its part of the stretch (the
// count goes on past `capacity`, so the caller learns the size it needs);
// each vertex carries the field's unit gradient (central differences at the lattice points,
// one-sided at its sides, interpolated along the edge) as its normal, pointing towards larger
// values. Follows shaders/surface_vertex.wgsl in one module.

struct Params {
    n: vec3<u32>,
    level: f32,
    origin: vec3<f32>,
    capacity: u32,
    spacing: vec3<f32>,
    pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(2) var<storage, read_write> count: atomic<u32>;
@group(0) @binding(3) var<storage, read_write> triangles: array<Vertex>;

// The orders in which a tetrahedron steps from corner (0, 0, 0) of its cube to (1, 1, 1).
var<private> orders: array<vec3<u32>, 6> = array<vec3<u32>, 6>(
    vec3<u32>(0u, 1u, 2u), vec3<u32>(0u, 2u, 1u), vec3<u32>(1u, 0u, 2u),
    vec3<u32>(1u, 2u, 0u), vec3<u32>(2u, 0u, 1u), vec3<u32>(2u, 1u, 0u),
);

fn index_of(p: vec3<u32>) -> u32 {
    return p.x + params.n.x * (p.y + params.n.y * p.z);
}

fn position_of(p: vec3<u32>) -> vec3<f32> {
    return params.origin + params.spacing * vec3<f32>(p);
}

fn value_at(p: vec3<u32>) -> f32 {
    return values[index_of(p)];
}

fn finite(x: f32) -> bool {
    return x == x && abs(x) <= 3.4028235e38;
}

// d(field)/d(axis) at lattice point p: central, one-sided at the lattice's sides.
fn derivative(p: vec3<u32>, axis: u32) -> f32 {
    var lo = p;
    var hi = p;
    if (p[axis] > 0u) { lo[axis] = p[axis] - 1u; }
    if (p[axis] + 1u < params.n[axis]) { hi[axis] = p[axis] + 1u; }
    let steps = f32(hi[axis] - lo[axis]);
    if (steps == 0.0) { return 0.0; }
    return (value_at(hi) - value_at(lo)) / (steps * params.spacing[axis]);
}

fn gradient(p: vec3<u32>) -> vec3<f32> {
    return vec3<f32>(derivative(p, 0u), derivative(p, 1u), derivative(p, 2u));
}

// The crossing of the edge from corner `a` (below the level) to corner `b` (at or above).
fn crossing(a: vec3<u32>, b: vec3<u32>, va: f32, vb: f32) -> Vertex {
    let t = (params.level - va) / (vb - va);
    let pa = position_of(a);
    let pb = position_of(b);
    let ga = gradient(a);
    let gb = gradient(b);
    let g = ga + t * (gb - ga);
    let len = length(g);
    var normal = vec3<f32>(0.0);
    if (len > 0.0) { normal = g / len; }
    return Vertex(vec4<f32>(pa + t * (pb - pa), 1.0), vec4<f32>(normal, 0.0));
}

// Writes the triangle (v0, v1, v2), turned to face `uphill`, into `slot`.
fn emit(slot: u32, v0: Vertex, v1: Vertex, v2: Vertex, uphill: vec3<f32>) {
    if (slot >= params.capacity) { return; }
    let normal = cross(v1.position.xyz - v0.position.xyz, v2.position.xyz - v0.position.xyz);
    triangles[3u * slot] = v0;
    if (dot(normal, uphill) >= 0.0) {
        triangles[3u * slot + 1u] = v1;
        triangles[3u * slot + 2u] = v2;
    } else {
        triangles[3u * slot + 1u] = v2;
        triangles[3u * slot + 2u] = v1;
    }
}

// The triangles of the tetrahedron `corners` written from `slot` on; returns the next slot.
fn march(corners: array<vec3<u32>, 4>, slot: u32) -> u32 {
    var tet = corners;
    var v: array<f32, 4>;
    var below: array<u32, 4>;
    var above: array<u32, 4>;
    var nb = 0u;
    var na = 0u;
    for (var c = 0u; c < 4u; c++) {
        v[c] = value_at(tet[c]);
        if (!finite(v[c])) { return slot; }
        if (v[c] < params.level) {
            below[nb] = c;
            nb++;
        } else {
            above[na] = c;
            na++;
        }
    }
    if (nb == 0u || nb == 4u) { return slot; }
    // The crossed edges, each from a corner below the level to one above.
    var edge_below: array<u32, 4>;
    var edge_above: array<u32, 4>;
    var m = 3u;
    if (nb == 1u) {
        for (var k = 0u; k < 3u; k++) { edge_below[k] = below[0]; edge_above[k] = above[k]; }
    } else if (nb == 3u) {
        for (var k = 0u; k < 3u; k++) { edge_below[k] = below[k]; edge_above[k] = above[0]; }
    } else {
        // Two and two: the quad b0 a0, b0 a1, b1 a1, b1 a0.
        edge_below = array<u32, 4>(below[0], below[0], below[1], below[1]);
        edge_above = array<u32, 4>(above[0], above[1], above[1], above[0]);
        m = 4u;
    }
    var x: array<Vertex, 4>;
    for (var k = 0u; k < m; k++) {
        let a = edge_below[k];
        let b = edge_above[k];
        x[k] = crossing(tet[a], tet[b], v[a], v[b]);
    }
    let uphill = position_of(tet[edge_above[0]]) - position_of(tet[edge_below[0]]);
    emit(slot, x[0], x[1], x[2], uphill);
    if (m == 4u) {
        emit(slot + 1u, x[0], x[2], x[3], uphill);
        return slot + 2u;
    }
    return slot + 1u;
}

// The tetrahedron `o` of the cube at `id`: its corners, stepping from (0, 0, 0) to (1, 1, 1).
fn tetrahedron(id: vec3<u32>, o: u32) -> array<vec3<u32>, 4> {
    let order = orders[o];
    var corner = id;
    var tet: array<vec3<u32>, 4>;
    tet[0] = corner;
    for (var s = 0u; s < 3u; s++) {
        corner[order[s]] = corner[order[s]] + 1u;
        tet[s + 1u] = corner;
    }
    return tet;
}

// The triangles the cube at `id` yields (as `march` writes them): per tetrahedron with all
// four corners finite, one where one or three corners lie below the level, two where two do.
fn triangles_of(id: vec3<u32>) -> u32 {
    var count = 0u;
    for (var o = 0u; o < 6u; o++) {
        let tet = tetrahedron(id, o);
        var nb = 0u;
        var all_finite = true;
        for (var c = 0u; c < 4u; c++) {
            let v = value_at(tet[c]);
            all_finite = all_finite && finite(v);
            if (v < params.level) { nb++; }
        }
        if (all_finite && nb != 0u && nb != 4u) {
            count += select(1u, 2u, nb == 2u);
        }
    }
    return count;
}

var<workgroup> group_count: atomic<u32>;
var<workgroup> group_base: u32;

@compute @workgroup_size(4, 4, 4)
fn extract(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    if (local == 0u) { atomicStore(&group_count, 0u); }
    workgroupBarrier();
    // Most cubes lie on one side of the level: with all eight corners finite and on one side,
    // none of its tetrahedra is crossed.
    var crossed = all(id + vec3<u32>(1u) < params.n);
    if (crossed) {
        var lo = 3.4028235e38;
        var hi = -3.4028235e38;
        var all_finite = true;
        for (var c = 0u; c < 8u; c++) {
            let v = value_at(id + vec3<u32>(c & 1u, (c >> 1u) & 1u, c >> 2u));
            all_finite = all_finite && finite(v);
            lo = min(lo, v);
            hi = max(hi, v);
        }
        crossed = !(all_finite && (hi < params.level || lo >= params.level));
    }
    var mine = 0u;
    if (crossed) { mine = triangles_of(id); }
    let offset = atomicAdd(&group_count, mine);
    workgroupBarrier();
    if (local == 0u) {
        let total = atomicLoad(&group_count);
        if (total > 0u) { group_base = atomicAdd(&count, total); }
    }
    // (The barrier is workgroupUniformLoad's.)
    var slot = workgroupUniformLoad(&group_base) + offset;
    if (mine == 0u) { return; }
    for (var o = 0u; o < 6u; o++) {
        slot = march(tetrahedron(id, o), slot);
    }
}
