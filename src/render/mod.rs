//! GPU rendering of the 2D field view (wgpu): colormapped field, contours, arrows, streamlines,
//! offscreen targets with readback, and the headless renderer used by `flowlab render`.

pub mod camera;
pub mod colormap;
pub mod gpu;
pub mod headless;
pub mod isosurface;
pub mod offscreen;
pub mod scene;
pub mod streamlines;
pub mod surface;
pub mod view;
