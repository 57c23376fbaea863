//! GPU rendering (wgpu): the 2D field view (colormapped field, contours, arrows, streamlines),
//! the 3D view (bounding box, slice in place, isosurfaces), offscreen targets with readback,
//! and the headless renderer used by `flowlab render`.

pub mod camera;
pub mod colormap;
pub mod device_frame;
pub mod field_lattice;
pub mod gather;
pub mod gpu;
pub mod headless;
pub mod isosurface;
pub mod offscreen;
pub mod pipeline;
pub mod scene;
pub mod scene3d;
pub mod shared_buffer;
pub mod slice;
pub mod slice_plane;
pub mod stream_tubes;
pub mod streamlines;
pub mod surface;
pub mod surface_raster;
pub mod view;
pub mod volume_render;
