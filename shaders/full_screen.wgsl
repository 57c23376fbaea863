// One triangle covering the viewport, for the passes that draw an image made by a compute
// shader (the volume rendering's, the isosurfaces' rasterised in compute).
@vertex
fn vs_full_screen(@builtin(vertex_index) index: u32) -> @builtin(position) vec4<f32> {
    let x = f32((index << 1u) & 2u);
    let y = f32(index & 2u);
    return vec4<f32>(2.0 * x - 1.0, 1.0 - 2.0 * y, 0.0, 1.0);
}
