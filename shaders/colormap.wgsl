// Colour mapping of the shown scalar field: bilinear sample, normalise with the linear or log
// range (symmetric about zero for diverging maps), look up the 256-entry colormap texture.

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> QuadOut {
    return domain_quad(index);
}

// Position in [0, 1] of a value on the colour scale.
fn normalise(v: f32) -> f32 {
    let lo = P.range.x;
    let hi = P.range.y;
    let log_scale = (P.counts.w & 1u) != 0u;
    let diverging = (P.counts.w & 2u) != 0u;
    if log_scale {
        let l = clamp((log(max(abs(v), lo)) - log(lo)) / (log(hi) - log(lo)), 0.0, 1.0);
        if diverging {
            return 0.5 + 0.5 * sign(v) * l;
        }
        return l;
    }
    return clamp((v - lo) / (hi - lo), 0.0, 1.0);
}

@fragment
fn fs_main(in: QuadOut) -> @location(0) vec4<f32> {
    if outside(in.unit) {
        discard;
    }
    let t = normalise(sample_field(in.world));
    // Texel centres of the 256-entry table lie at (k + 0.5) / 256.
    let u = (t * 255.0 + 0.5) / 256.0;
    let c = textureSampleLevel(lut, lut_sampler, vec2<f32>(u, 0.5), 0.0);
    return vec4<f32>(c.rgb, 1.0);
}
