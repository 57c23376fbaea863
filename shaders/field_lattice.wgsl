// A cell-centred scalar field of a 3D grid as the 3D view's shaders read it (src/render/field_lattice.rs):
// trilinear samples between cell centres and positions on a colour scale. The shader that
// includes this binds the values as `field: array<f32>` (x fastest).

struct FieldLattice {
    // First cell centre (xyz); w: the including shader's.
    origin: vec4<f32>,
    // Cell size (xyz); w: the including shader's.
    spacing: vec4<f32>,
    // Cells along x, y, z; w: 1 for a logarithmic colour scale.
    cells: vec4<u32>,
    // The colour scale's range (x, y); z: 1 for a diverging scale; w: the including shader's.
    range: vec4<f32>,
}

fn lattice_value(l: FieldLattice, c: vec3<i32>) -> f32 {
    let n = vec3<i32>(l.cells.xyz);
    let k = clamp(c, vec3<i32>(0), n - vec3<i32>(1));
    return field[u32(k.x + n.x * (k.y + n.y * k.z))];
}

// Trilinear interpolation between cell centres (the nearest centre's value beyond the first or
// last centre), as the 2D view and the streamlines interpolate.
fn lattice_sample(l: FieldLattice, p: vec3<f32>) -> f32 {
    let n = vec3<f32>(l.cells.xyz);
    let x = clamp((p - l.origin.xyz) / l.spacing.xyz, vec3<f32>(0.0), n - vec3<f32>(1.0));
    let lo = vec3<i32>(floor(x));
    let t = x - floor(x);
    var s = 0.0;
    for (var corner = 0u; corner < 8u; corner++) {
        let high = vec3<u32>(corner & 1u, (corner >> 1u) & 1u, (corner >> 2u) & 1u);
        let w = select(1.0 - t, t, vec3<bool>(high));
        s += w.x * w.y * w.z * lattice_value(l, lo + vec3<i32>(high));
    }
    return s;
}

// Position of `v` on the colour scale, 0 to 1, as `normalise` in colormap.wgsl.
fn scale_position(l: FieldLattice, v: f32) -> f32 {
    let lo = l.range.x;
    let hi = l.range.y;
    if l.cells.w == 1u {
        let g = clamp((log(max(abs(v), lo)) - log(lo)) / (log(hi) - log(lo)), 0.0, 1.0);
        if l.range.z == 1.0 {
            return 0.5 + 0.5 * sign(v) * g;
        }
        return g;
    }
    return clamp((v - lo) / (hi - lo), 0.0, 1.0);
}
