// Iso-lines of the contour field: N levels evenly spaced inside the contour range (ends
// excluded), drawn about one pixel wide. The line width in level units comes from the analytic
// gradient of the bilinear interpolant times the world size of a pixel (no screen-space
// derivatives, so primitive edges leave no seams).

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> QuadOut {
    return domain_quad(index);
}

@fragment
fn fs_main(in: QuadOut) -> @location(0) vec4<f32> {
    if outside(in.unit) {
        discard;
    }
    let k = corners(in.world);
    let a = contour_field[k.i.x];
    let b = contour_field[k.i.y];
    let c = contour_field[k.i.z];
    let d = contour_field[k.i.w];
    let value = mix4(a, b, c, d, k.t);
    let cell = P.domain.zw / vec2<f32>(f32(P.counts.x), f32(P.counts.y));
    let gradient = vec2<f32>(mix(b - a, d - c, k.t.y), mix(c - a, d - b, k.t.x)) / cell;
    // World length of one pixel: the view scales x by 2 s / width with s pixels per unit.
    let pixel = 2.0 / (P.view[0][0] * P.viewport.x);
    let n = f32(P.counts.z);
    let lo = P.range.z;
    let hi = P.range.w;
    // Level k (1..n) sits at lo + k (hi - lo) / (n + 1).
    let scale = (n + 1.0) / (hi - lo);
    let s = (value - lo) * scale;
    let width = max(length(gradient) * scale * pixel, 1e-6);
    let distance = abs(fract(s + 0.5) - 0.5);
    var alpha = clamp(1.0 - distance / (0.7 * width), 0.0, 1.0);
    if s < 0.5 || s > n + 0.5 {
        alpha = 0.0;
    }
    return vec4<f32>(0.05, 0.05, 0.05, 0.8 * alpha);
}
