// A vertex of the isosurfaces' triangle lists, as the extraction writes them
// (shaders/isosurface.wgsl) and the compute rasteriser reads them (shaders/surface_raster.wgsl);
// `Vertex` in src/render/isosurface/gpu.rs. Position (w = 1) and unit normal (w = 0), towards
// larger field values.
struct Vertex {
    position: vec4<f32>,
    normal: vec4<f32>,
}
