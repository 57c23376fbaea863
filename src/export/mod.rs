//! Writing results: VTK image data, CSV tables and the run summary (the headless runner and
//! the app's data export use the same functions), isosurface meshes (PLY), PNG images and videos of
//! the views.

pub mod csv;
pub mod mesh;
pub mod png;
pub mod sampling;
pub mod video;
pub mod vti;
